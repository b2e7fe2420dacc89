"""Who each person of the original table is to an adversary: the release's recorded algorithm,
the published class of every person (the publisher's record or a seating by QIs), their truth,
and the posterior their *absence* gives away (:mod:`.absence`) — what every adversary family of
:mod:`.families` shares, so each result is per person and the certificate sees everyone.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .awareness import algorithm_traits
from .base import AttackResult


def provenance(release: Any) -> dict[str, Any]:
    """The release's recorded algorithm, parameters and model (``{}`` when none)."""
    return dict(release.meta.get("algorithm") or {})


def algorithm_name(release: Any) -> str | None:
    return provenance(release).get("algorithm")


# ---------------------------------------------------------------------------------------
# people: the published class of every person, their truth, the absent people's posterior
# ---------------------------------------------------------------------------------------
def alignment(release: Any, original: Any) -> Any:
    """Which published class and row each person of ``original`` sits in (the publisher's
    record: kept when the release was just made, or recomputed for a deterministic
    algorithm; else matched by QI values — :func:`.replay.seating`)."""
    from .replay import seating

    return seating(release, original)


def person_classes(release: Any, original: Any) -> np.ndarray:
    """Published class of every row of ``original`` (``-1`` = absent)."""
    return np.asarray(alignment(release, original).group, dtype=np.int64)


def truth_in_targets(release: Any, original: Any, targets: Sequence[str]) -> np.ndarray | None:
    """Whether each person's true SA value is one of the targets (by value name; ``set:NAME``
    by the release schema's sensitive set), or ``None`` when the original has no SA."""
    if original is None or original.sa_name != release.sa:
        return None
    sets = (release.meta.get("schema") or {}).get("sensitive_sets") or {}
    members: set[str] = set()
    for t in targets:
        members |= {str(x) for x in sets.get(t[4:], [])} if t.startswith("set:") else {t}
    col = original.columns[original.sa_name]
    hit = np.asarray([str(v) in members for v in col.categories], dtype=bool)  # per code, once
    return hit[np.asarray(col.codes, dtype=np.int64)]


def ties_at_random(release: Any) -> bool:
    """Did the release's algorithm treat people with equal QIs alike through a secret random
    draw (the algorithm's ``interchangeable_ties`` trait: a random order of ties,
    ``ordering.tie_keys``; Anatomy's keys over a strict Mondrian base)? Then the files tell
    such people apart by nothing and their seats are independent of their values: each one's
    exact posterior is the mean of the posteriors of their set's seats
    (:func:`.replay.attack.tie_average`). Not after a skew step, which chose whom to withhold
    by their values."""
    from ..errors import OpenbookError
    from .replay.attack import algorithm_from_provenance

    prov = provenance(release)
    if not prov or release.meta.get("skew"):
        return False
    try:
        return bool(algorithm_from_provenance(prov, release.meta.get("model")).interchangeable_ties)
    except OpenbookError:
        return False


def suppression_rule(release: Any) -> str:
    """How the release's algorithm chose whom to withhold (module :mod:`.absence`)."""
    n_sup = release.meta.get("n_suppressed")  # absent from a sidecar that does not publish it
    if n_sup is not None and int(n_sup) == 0:
        return "none"
    prov = provenance(release)
    params = prov.get("params") or {}
    skew = release.meta.get("skew")
    if skew and n_sup is not None and "n_suppressed" in skew:
        own: int | None = int(n_sup) - int(skew["n_suppressed"])
    else:  # the split is not published: the anonymizer withholds nobody at a budget of 0
        own = 0 if not float(params.get("max_suppression") or 0.0) else None
    if skew and own == 0:
        return "skew"
    if skew:
        return "unknown"
    cls = algorithm_traits(release)  # the algorithm's trait, not its name
    return "unknown" if cls is None else str(cls.withholds(dict(params)))


def _target_masks(targets: Sequence[str], domain: Any, masks: np.ndarray, table_values: Sequence[str] = ()) -> np.ndarray:
    """One mask over the release's SA values per target of a result: a value (none when the
    release does not publish it: a value of the table, ``table_values``, that no published row
    holds), a sensitive set ``set:NAME``, else the given row."""
    values = [str(v) for v in domain.values]
    unpublished = set(map(str, table_values)) - set(values)
    masks = np.asarray(masks, dtype=bool)
    out = np.zeros((len(targets), len(values)), dtype=bool)
    for j, name in enumerate(targets):
        if name.startswith("set:") and name[4:] in domain.sensitive_sets:
            out[j] = np.asarray(domain.sensitive_mask(name[4:]), dtype=bool)
        elif name in values:
            out[j, values.index(name)] = True
        elif name in unpublished:  # nobody absent holds it: the prior is the published distribution
            continue
        elif j < masks.shape[0] and masks.shape[1] == len(values):
            out[j] = masks[j]
    return out


def _absence_problem(rule: str, release: Any, original: Any, group: np.ndarray, model: Any, counts: np.ndarray,
                     domain: Any, prior: np.ndarray) -> tuple[Any, str]:
    """The :class:`.absence.Problem` of ``rule`` for the absent rows of ``original`` (group
    ``-1``; ``None`` and why, when the rule cannot be stated)."""
    from . import absence

    absent = group < 0
    rows = np.flatnonzero(absent)
    if rule in ("fails-model", "search-fails-model"):
        if release.meta.get("levels") is None:
            return None, "the release does not record its levels"
        from ..data.grouping import group_ids

        inflate = 1.0
        if rule == "search-fails-model":  # the search's choice must exclude no absent world
            from .replay import algorithm_from_provenance
            from .replay.lattice import acceptance_bound, bound_why, search_of

            algo = algorithm_from_provenance(provenance(release), release.meta.get("model"))
            s = search_of(algo, original, group, release.meta["levels"])
            if s.dependent and s.budget:  # bounded: divided by P(every such node ruled out)
                low, accepted, drawn = acceptance_bound(s, original, group)
                if low <= 0:
                    return None, f"{s.why}; {bound_why(s, accepted, drawn)}"
                inflate = 1.0 / low
            elif s.why or s.dependent:
                return None, s.why or "a node the search could have preferred could satisfy in some world"

        gen = [original.hierarchy(n).generalize(original.columns[n].codes[rows], int(lv))
               for n, lv in zip(release.qi, release.meta["levels"])]
        blocks, _ = group_ids(gen)
        problem = absence.full_domain_problem(model, domain, counts, blocks, prior, validated=rule == "fails-model")
        problem.inflate = inflate
        return problem, ""
    if rule == "gg-tail":
        prov = provenance(release)
        if float((prov.get("params") or {}).get("p") or 0.0) > 0:
            return None, "RGG's last group may have grown into the dropped tail"
        if absence.compares_with_table(model):
            return None, "every group was judged against a distribution the dropped tail is part of"
        from .replay import algorithm_from_provenance
        from .replay.greedy import tail_buckets

        group = np.where(absent, -1, 0)  # the published people's classes do not matter here
        bucket = tail_buckets(algorithm_from_provenance(prov, release.meta.get("model")), original, group)
        if bucket is None:
            return None, "the absent people are not the buckets ending GG's order"
        return absence.gg_tail_problem(model, domain, counts.sum(axis=0), bucket, prior), ""
    return None, "unknown suppression rule"


def fill_absent(result: AttackResult, release: Any, original: Any, masks: np.ndarray, *,
                seed: int = 0) -> AttackResult:
    """Give the absent people of ``result`` (group ``-1``) the posterior their absence
    reveals under the release's suppression rule — every refusal the algorithm could have
    made included (:mod:`.absence`); unknown rules leave them unresolved."""
    from .absence import absence_posterior

    absent = result.group < 0
    if not absent.any():
        return result
    rule = suppression_rule(release)
    if rule == "skew":  # the eligibility adversary's (paper 004); not this adversary's
        result.notes["absent"] = {"n": int(absent.sum()), "rule": "skew step: see the eligibility adversary"}
        return result
    counts, domain = release.sa_counts()
    prior = counts.sum(axis=0).astype(np.float64)
    from .baseline import release_model

    model = release_model(release)
    tmasks = _target_masks(result.targets, domain, masks, [str(v) for v in original.sa_domain.values])
    sens_mask = None
    problem, why = None, "unknown suppression rule"
    if rule == "sensitive-only":
        from ..algorithms.ordering import sensitive_set_name

        prov = provenance(release)
        name = sensitive_set_name((prov.get("params") or {}).get("sensitive_set"), model, "art")
        sens_mask = domain.sensitive_mask(name)
    elif rule in ("fails-model", "search-fails-model", "gg-tail"):
        problem, why = _absence_problem(rule, release, original, result.group, model, counts, domain, prior)
    ab = absence_posterior(problem, prior, tmasks, rule=rule, sensitive_mask=sens_mask, n_absent=int(absent.sum()),
                           seed=seed, why=why)
    result.set_rows(absent, ab.posterior, ab.stderr)
    unres = np.zeros(result.n_tuples, dtype=bool) if result.unresolved is None else result.unresolved.copy()
    unres[np.flatnonzero(absent)[ab.unresolved]] = True
    result.unresolved = unres
    result.notes["absent"] = {"n": int(absent.sum()), "rule": rule, "method": ab.method,
                              "prior": "the release's published SA distribution"}
    return result


def per_person(result: AttackResult, release: Any, original: Any) -> AttackResult:
    """A per-published-row result (class posteriors) placed on the people of ``original``."""
    group = person_classes(release, original)
    n_cls = int(result.group.max()) + 1 if result.group.size else 0
    if result.compact:  # each person points at their class's row: no per-person matrix
        shared, shared_se, own = result.compact_parts()
        cls_row = np.full(n_cls, -1, dtype=np.int64)
        if result.group.size:
            cls_row[result.group[::-1]] = own[::-1]
        rows = np.where(group >= 0, cls_row[np.maximum(group, 0)], -1) if n_cls else np.full(group.size, -1)
        return AttackResult(adversary=result.adversary, posterior=shared, stderr=shared_se, rows=rows,
                            targets=list(result.targets), group=group, l=result.l,
                            sensitive=truth_in_targets(release, original, result.targets),
                            unresolved=np.zeros(group.size, dtype=bool), group_info=result.group_info,
                            notes=dict(result.notes))
    cls_post = np.full((n_cls, result.posterior.shape[1]), np.nan)
    cls_se = None if result.stderr is None else np.zeros_like(cls_post)
    first = np.full(n_cls, -1, dtype=np.int64)
    if result.group.size:
        first[result.group[::-1]] = np.arange(result.group.size)[::-1]
    ok = first >= 0
    cls_post[ok] = result.posterior[first[ok]]
    if cls_se is not None and result.stderr is not None:
        cls_se[ok] = result.stderr[first[ok]]
    post = np.full((group.size, result.posterior.shape[1]), np.nan)
    pub = group >= 0
    post[pub] = cls_post[group[pub]]
    se = None
    if cls_se is not None:
        se = np.zeros_like(post)
        se[pub] = cls_se[group[pub]]
    unres = np.zeros(group.size, dtype=bool)
    return AttackResult(adversary=result.adversary, posterior=post, targets=list(result.targets), group=group,
                        l=result.l, stderr=se, sensitive=truth_in_targets(release, original, result.targets),
                        unresolved=unres, group_info=result.group_info, notes=dict(result.notes))
