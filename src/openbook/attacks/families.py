"""The papers' adversary families behind the one :class:`~.adversary.Adversary` interface.

Each class is a thin declaration — name, paper section, knowledge needed, where it applies —
around the family's engine (``baseline``, ``credibility``, ``replay``, ``robustness``,
``eligibility``, ``linkage``). With the original table every result is per *person* (a row
of the original): published people carry their class's posterior, absent people the
posterior their absence gives away (:mod:`.absence`), so the certificate sees everyone.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .adversary import Adversary, Applies
from .base import AttackResult, model_l

#: algorithms the replay adversary re-runs (paper 000 §5.1); the Anatomy family publishes an
#: SA-only grouping (Claim 4): replaying it excludes no world, which the replay reports.
#: Full-domain *search* is left to the minimality adversary (paper 001 §4.1 is exactly its
#: global-recoding attack): re-running the lattice search on every sampled world of a table
#: the size of Adult is out of reach
REPLAYABLE = ("gg", "rgg", "sg", "mondrian", "full-domain",
              "anatomy", "base-ana", "gg-ana", "rgg-ana", "sg-ana", "set-anatomy")
#: algorithms built to resist worst-case QI-based background knowledge (paper 003; Li & Li)
BACKGROUND_ROBUST = ("art", "art-exact", "injector")


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _positive_int(v: Any) -> bool:
    return _is_int(v) and v >= 1


def _non_negative_int(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _name(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _ge1(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and np.isfinite(v) and v >= 1


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
    exact knowledge when the release was just made, else matched by QI values)."""
    from ..release.align import align

    return align(release, original)


def person_classes(release: Any, original: Any) -> np.ndarray:
    """Published class of every row of ``original`` (``-1`` = absent)."""
    return np.asarray(alignment(release, original).group, dtype=np.int64)


def truth_in_targets(release: Any, original: Any, targets: Sequence[str]) -> np.ndarray | None:
    """Whether each person's true SA value is one of the targets (by value name; ``set:NAME``
    by the release schema's sensitive set), or ``None`` when the original has no SA."""
    if original is None or original.sa_name != release.sa:
        return None
    values = np.asarray([str(v) for v in original.decode(original.sa_name)], dtype=object)
    sets = (release.meta.get("schema") or {}).get("sensitive_sets") or {}
    out = np.zeros(values.size, dtype=bool)
    for t in targets:
        members = {str(x) for x in sets.get(t[4:], [])} if t.startswith("set:") else {t}
        out |= np.isin(values, list(members))
    return out


def suppression_rule(release: Any) -> str:
    """How the release's algorithm chose whom to withhold (module :mod:`.absence`)."""
    if int(release.meta.get("n_suppressed", 0) or 0) == 0:
        return "none"
    prov = provenance(release)
    alg, params = prov.get("algorithm"), prov.get("params") or {}
    skew = release.meta.get("skew")
    own = int(release.meta.get("n_suppressed", 0)) - int((skew or {}).get("n_suppressed", 0))
    if skew and own == 0:
        return "skew"
    if skew:
        return "unknown"
    if alg in ("full-domain", "full-domain-search"):
        return "fails-model"
    if alg in ("gg", "rgg") and params.get("tail") == "drop":
        return "fails-model"
    if alg in ("art", "art-exact"):
        return "sensitive-only"
    return "unknown"


def fill_absent(result: AttackResult, release: Any, original: Any, masks: np.ndarray, *,
                seed: int = 0) -> AttackResult:
    """Give the absent people of ``result`` (group ``-1``) the posterior their absence
    reveals under the release's suppression rule; unknown rules leave them unresolved."""
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
    blocks = np.zeros(int(absent.sum()), dtype=np.int64)
    if rule == "fails-model" and release.meta.get("levels") is not None:
        from ..data.grouping import group_ids

        rows = np.flatnonzero(absent)
        gen = [original.hierarchy(n).generalize(original.columns[n].codes[rows], int(lv))
               for n, lv in zip(release.qi, release.meta["levels"])]
        blocks, _ = group_ids(gen)
    from .baseline import release_model

    model = release_model(release)
    sens_mask = None
    if rule == "sensitive-only":
        from ..algorithms.ordering import sensitive_set_name

        prov = provenance(release)
        name = sensitive_set_name((prov.get("params") or {}).get("sensitive_set"), model, "art")
        sens_mask = domain.sensitive_mask(name)
    ab = absence_posterior(rule, blocks, prior, masks, model=model, domain=domain, sensitive_mask=sens_mask,
                           seed=seed)
    result.posterior[absent] = ab.posterior
    if result.stderr is None:
        result.stderr = np.zeros_like(result.posterior)
    result.stderr[absent] = ab.stderr
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
    cls_post = np.full((n_cls, result.posterior.shape[1]), np.nan)
    cls_se = None if result.stderr is None else np.zeros_like(cls_post)
    first = np.full(n_cls, -1, dtype=np.int64)
    if result.group.size:
        first[result.group[::-1]] = np.arange(result.group.size)[::-1]
    ok = first >= 0
    cls_post[ok] = result.posterior[first[ok]]
    if cls_se is not None:
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


# ---------------------------------------------------------------------------------------
# the families
# ---------------------------------------------------------------------------------------
class BaselineAdversary(Adversary):
    """Uniform possible worlds within each published class: the naive attacker every
    algorithm-aware adversary is compared with. An absent person's posterior is the
    release's overall SA distribution (this adversary ignores the algorithm)."""

    name = "baseline"
    title = "Baseline (uniform possible worlds)"
    paper = "paper 001 §4.1; paper 000 §2.4"
    _parameters = {"sensitive_set": (None, _name, "a sensitive set name")}

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .baseline import baseline_attack, choose_targets, release_model

        res = baseline_attack(release, sensitive_set=self.sensitive_set)
        if original is None:
            return res
        out = per_person(res, release, original)
        absent = out.group < 0
        if absent.any():
            counts, domain = release.sa_counts()
            _, masks, _ = choose_targets(domain, release_model(release), self.sensitive_set)
            tot = counts.sum(axis=0).astype(np.float64)
            out.posterior[absent] = (tot @ masks.T.astype(np.float64)) / max(tot.sum(), 1.0)
            out.notes["absent"] = {"n": int(absent.sum()), "rule": "ignored (the published distribution)"}
        return out


class ReplayAdversary(Adversary):
    """Re-runs the release's algorithm on possible worlds (paper 000 §5.1): worlds in which
    the algorithm would not have published this grouping are excluded (deterministic
    algorithms) or down-weighted (RGG)."""

    name = "replay"
    title = "Algorithm replay (the adversary knows the algorithm)"
    paper = "paper 000 §5.1; paper 001 Assumption 3"
    needs = frozenset({"original"})
    _parameters = {"worlds": (10_000, _positive_int, "a positive integer"),
                   "world_seed": (0, _non_negative_int, "a non-negative integer"),
                   "exact_limit": (1e6, lambda v: _ge1(v), "a number >= 1"),
                   "sensitive_set": (None, _name, "a sensitive set name")}

    def applies_to(self, release: Any) -> Applies:
        alg = algorithm_name(release)
        if alg in REPLAYABLE:
            return Applies(True, f"{alg} can be re-run on possible worlds")
        return Applies(False, f"the release's algorithm ({alg or 'unrecorded'}) is not one the replay re-runs")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .baseline import choose_targets, release_model
        from .replay import replay_release

        group = person_classes(release, original)
        kept = np.flatnonzero(group >= 0)
        skew = bool(release.meta.get("skew"))
        # after a skew step the algorithm ran on the kept people only (paper 004 first)
        knowledge = original.take(kept) if skew else original
        part = release.partition
        if part is not None and part.n_rows != original.n_rows:
            part = None
        if part is not None and skew:
            from ..release import Partition

            part = Partition(part.group[kept], part.n_groups)
        res = replay_release(release, knowledge, worlds=self.worlds, seed=self.world_seed,
                             exact_limit=float(self.exact_limit), sensitive_set=self.sensitive_set,
                             partition=part)
        if skew:
            post = np.full((original.n_rows, res.posterior.shape[1]), np.nan)
            se = np.zeros_like(post)
            g = np.full(original.n_rows, -1, dtype=np.int64)
            unres = np.zeros(original.n_rows, dtype=bool)
            post[kept], se[kept], g[kept] = res.posterior, res.stderr, res.group
            if res.unresolved is not None:
                unres[kept] = res.unresolved
            res = AttackResult(adversary=res.adversary, posterior=post, targets=res.targets, group=g, l=res.l,
                               stderr=se, sensitive=truth_in_targets(release, original, res.targets),
                               unresolved=unres, group_info=res.group_info, notes=res.notes)
        counts, domain = release.sa_counts()
        _, masks, _ = choose_targets(domain, release_model(release), self.sensitive_set)
        return fill_absent(res, release, original, masks, seed=self.world_seed)


class MinimalityAdversary(Adversary):
    """Exact credibility under the minimality principle (paper 001 §4–5): worlds in which a
    less generalized release would already satisfy the requirement are excluded."""

    name = "minimality"
    title = "Minimality attack (exact credibility)"
    paper = "paper 001 §4-§5"
    needs = frozenset({"original"})
    _parameters = {"sensitive_set": (None, _name, "a sensitive set name"),
                   "exact": (False, lambda v: isinstance(v, bool), "true or false"),
                   "max_states": (200_000, _positive_int, "a positive integer")}

    def applies_to(self, release: Any) -> Applies:
        prov = provenance(release)
        alg = prov.get("algorithm")
        if not prov:
            return Applies(True, "no algorithm recorded: the paper's adversary assumes minimality")
        if alg in REPLAYABLE:
            return Applies(False, f"the replay adversary, who knows {alg} exactly, applies instead")
        if prov.get("minimality"):
            return Applies(True, f"{alg} follows the minimality principle (paper 001 §4.1: global recoding)")
        return Applies(False, f"{alg} does not follow the minimality principle")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .baseline import choose_targets, release_model
        from .credibility import minimality_attack

        res = minimality_attack(release, original, sensitive_set=self.sensitive_set, exact=self.exact,
                                max_states=self.max_states)
        counts, domain = release.sa_counts()
        _, masks, _ = choose_targets(domain, release_model(release), self.sensitive_set)
        return fill_absent(res, release, original, masks)


class BackgroundAdversary(Adversary):
    """Worst-case QI-based distribution knowledge (paper 003 §2-§3): exact ``p(t:x)`` for
    every attribute set mined from the original table; r-robustness (Def. 1)."""

    name = "background"
    title = "Worst-case background knowledge (r-robustness)"
    paper = "paper 003 §2-§5"
    needs = frozenset({"original"})
    _parameters = {"r": (None, _ge1, "a number >= 1"),
                   "min_support": (100, _positive_int, "a positive integer"),
                   "max_attrs": (None, _positive_int, "a positive integer"),
                   "sensitive_set": (None, _name, "a sensitive set name")}

    def applies_to(self, release: Any) -> Applies:
        alg = algorithm_name(release)
        if alg in BACKGROUND_ROBUST:
            return Applies(True, f"{alg} claims robustness to background knowledge")
        return Applies(False, f"{alg or 'the release'} makes no claim about background knowledge")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .background import mine_knowledge
        from .baseline import release_model
        from .robustness import audit_release

        model = release_model(release)
        params = provenance(release).get("params") or {}
        r = self.r if self.r is not None else params.get("r") or model_l(model) or 2.0
        set_name = self.sensitive_set or params.get("sensitive_set") or getattr(model, "sensitive_set", None)
        sensitive = None if not set_name else original.sa_domain.sensitive_mask(set_name)
        kn = mine_knowledge(original, max_size=self.max_attrs, min_support=self.min_support)
        al = alignment(release, original)
        group, row = al.group, al.row
        extra: dict[str, Any] = {}
        if release.kind == "generalized":  # the adversary's exact QIs of the people on each row
            person_of_row = np.full(len(release.data), -1, dtype=np.int64)
            person_of_row[row[group >= 0]] = np.flatnonzero(group >= 0)
            extra["original_qi"] = original.qi_codes[person_of_row]
        rep = audit_release(release, kn, r=float(r), sensitive=sensitive, **extra)
        post_rows = np.stack([rep.posterior, rep.set_posterior], axis=1)
        targets = ["worst sensitive value", f"set:{set_name}" if set_name else "sensitive set"]
        post = np.full((original.n_rows, 2), np.nan)
        unres = np.zeros(original.n_rows, dtype=bool)
        ok = group >= 0
        post[ok] = post_rows[row[ok]]
        if rep.unresolved is not None:
            unres[ok] = rep.unresolved[row[ok]]
        out = AttackResult(adversary="background", posterior=post, targets=targets, group=group, l=float(r),
                           sensitive=None if sensitive is None else np.asarray(sensitive, bool)[original.sa_codes],
                           unresolved=unres,
                           notes={"knowledge": "QI-based distributions of every attribute set, mined from the "
                                               "original table (worst case, paper 003 §2)",
                                  "r": float(r), "methods": rep.methods, "mcmc_bound": rep.mcmc_bound,
                                  "min_support": kn.min_support})
        if rep.mcmc_bound:
            out.stderr = np.where(np.isnan(post), 0.0, rep.mcmc_bound / 3.0)
        _, domain = release.sa_counts()
        m = domain.sensitive_mask(set_name) if set_name else None
        m = np.zeros(domain.n_values, dtype=bool) if m is None else np.asarray(m, dtype=bool)
        masks = np.stack([m, m])  # an absent person's worst single value is bounded by the set
        return fill_absent(out, release, original, masks)


class EligibilityAdversary(Adversary):
    """The eligibility attack on a skew step (paper 004 §3-§4): which published value was
    the most frequent one, hence the SA of the records the step withheld."""

    name = "eligibility"
    title = "Eligibility attack on the skew step"
    paper = "paper 004 §3-§4"
    _parameters = {"prior": ("uniform", lambda v: v in ("uniform",), "'uniform'")}

    def applies_to(self, release: Any) -> Applies:
        if release.meta.get("skew"):
            return Applies(True, f"{release.meta['skew'].get('method')} withheld records to restore ℓ-eligibility")
        return Applies(False, "the release had no skew step")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .eligibility import eligibility_attack

        skew = release.meta["skew"]
        counts, domain = release.sa_counts()
        published = counts.sum(axis=0).astype(np.int64)
        n_input = int(release.meta.get("n_input"))
        l = skew.get("l")
        method = skew.get("method")
        ep = eligibility_attack(published, n_input, l, algorithm=method,
                                values=[str(v) for v in domain.values])
        # the withheld records' SA: the posterior that each published value is S1 (the
        # most frequent value of the base table, the one the step suppresses)
        p_s1 = np.asarray([float(x) for x in ep.posterior], dtype=np.float64)
        targets = [str(v) for v in domain.values]
        # the people it reasons about are the withheld ones (published people's classes are the
        # other adversaries' business): one row per absent person
        if original is not None:
            n_abs = int((person_classes(release, original) < 0).sum())
        else:
            n_abs = n_input - int(published.sum())
        group = np.full(n_abs, -1, dtype=np.int64)
        post = np.tile(p_s1, (n_abs, 1))
        return AttackResult(adversary="eligibility", posterior=post, targets=targets, group=group,
                            l=float(l) if l else None, unresolved=np.zeros(n_abs, dtype=bool),
                            notes={"knowledge": "the release, |T| and the skew step's algorithm (paper 004 K1-K2)",
                                   "method": method, "posterior_is_most_frequent": ep.to_dict()})


class LinkageAdversary(Adversary):
    """Linkage of this release with every earlier one (paper 002 §2.3): a person's classes
    across releases intersect; the posterior bound is 1 / post-linkage diversity."""

    name = "linkage"
    title = "Linkage with earlier releases"
    paper = "paper 002 §2.3"
    needs = frozenset({"earlier"})
    _parameters = {}

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .linkage import linkage

        rels = list(earlier) + [release]
        if original is not None:
            population = pd.DataFrame({c: original.decode(c) for c in release.qi})
            hier = dict(original.hierarchies)
            pop_desc = f"{original.n_rows} people of the original table"
        else:
            from .linkage_audit import default_population

            population, pop_desc = default_population(rels, None)
            hier = None
        res = linkage(rels, population, hierarchies=hier)
        d = res.diversity.astype(np.float64)
        in_new = res.matched[:, -1]
        post = np.full((len(population), 1), np.nan)
        with np.errstate(divide="ignore"):
            post[in_new, 0] = np.where(d[in_new] > 0, 1.0 / d[in_new], 1.0)
        group = np.where(in_new, res.class_ids[:, -1], -1)
        group = np.where(group < -1, 0, group)
        return AttackResult(adversary="linkage", posterior=post, targets=["1/diversity"], group=group,
                            l=model_l(_model(release)), unresolved=np.zeros(len(population), dtype=bool),
                            notes={"knowledge": f"{len(earlier)} earlier release(s) and every person's QI",
                                   "population": pop_desc, "diversity_distribution": res.distribution()})


def _model(release: Any) -> Any:
    from .baseline import release_model

    return release_model(release)


class ReidentificationAdversary(Adversary):
    """Identity disclosure (El Emam & Dankar 2008; ARX): the probability that a record is
    re-identified from its published QIs — prosecutor risk 1/f per record, or journalist risk
    1/F when the population is given (:mod:`.reidentification`)."""

    name = "reidentification"
    title = "Re-identification (identity disclosure)"
    paper = "El Emam & Dankar 2008; Dankar et al. 2012"
    disclosure = "identity"
    _parameters = {"population_size": (None, lambda v: _ge1(v), "a number >= 1"),
                   "sampling_fraction": (None, lambda v: isinstance(v, (int, float)) and 0 < v <= 1,
                                         "a fraction in (0, 1]"),
                   "threshold": (0.2, lambda v: isinstance(v, (int, float)) and 0 < v <= 1, "a fraction in (0, 1]")}

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .reidentification import reidentification_risk

        res = reidentification_risk(release, population_size=self.population_size,
                                    sampling_fraction=self.sampling_fraction, threshold=self.threshold)
        model = "journalist" if (self.population_size or self.sampling_fraction) else "prosecutor"
        risk = res.journalist if model == "journalist" else res.prosecutor
        cls = np.asarray(res.class_of, dtype=np.int64)
        notes = {"model": model, **{k: v for k, v in res.summary().items() if k in (
            "sample_uniqueness", "population_uniqueness", "notes", "exact_qis_published")}}
        if original is None or release.kind == "bucketized" and len(cls) != len(release.data):
            return AttackResult(adversary=self.name, posterior=risk, targets=["re-identification"], group=cls,
                                notes=notes)
        al = alignment(release, original)
        post = np.full(original.n_rows, np.nan)
        placed = al.row >= 0
        post[placed] = risk[al.row[placed]]
        group = np.where(placed, cls[np.maximum(al.row, 0)], -1)
        return AttackResult(adversary=self.name, posterior=post, targets=["re-identification"], group=group,
                            unresolved=np.zeros(original.n_rows, dtype=bool), notes=notes)
