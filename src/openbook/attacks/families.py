"""The papers' adversary families behind the one :class:`~.adversary.Adversary` interface.

Each class is a thin declaration — name, paper section, knowledge needed, parameters (declared
with :mod:`openbook.params`), where it applies — around the family's engine (``baseline``,
``credibility``, ``replay``, ``robustness``, ``eligibility``, ``linkage``). With the original
table every result is per *person* (:mod:`.people`): published people carry their class's
posterior, absent people the posterior their absence gives away (:mod:`.absence`), so the
certificate sees everyone. :data:`openbook.catalog.ADVERSARIES` lists them (one line each).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ParameterError
from ..models.promise import promised_l
from ..params import Boolean, Integer, Options, Real, Text
from .adversary import DEFAULT_RERUN_LIMIT, DEFAULT_WORLDS, Adversary, Applies
from .awareness import algorithm_traits, log_worlds, replay_method
from .base import AttackResult
from .people import (
    algorithm_name,
    alignment,
    fill_absent,
    per_person,
    person_classes,
    provenance,
    ties_at_random,
    truth_in_targets,
)

#: the parameters' declared constraints (one message form: :func:`openbook.params.fail`)
_SET = Text()
_POSITIVE = Integer(minimum=1)


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
    parameters = {"sensitive_set": (None, _SET)}
    sensitive_set: str | None

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .baseline import baseline_attack, choose_targets, release_model

        if release.kind == "bucketized" and release.qi_generalized:
            if original is not None:
                return _decoupled(release, original, self.sensitive_set, "baseline")
            from .decoupled import class_posteriors

            counts, domain = release.sa_counts()
            names, masks, _ = choose_targets(domain, release_model(release), self.sensitive_set)
            qcls, n_q = release.qi_classes()
            return AttackResult(adversary="baseline", posterior=class_posteriors(release, masks)[qcls],
                                targets=names, group=qcls, l=promised_l(release_model(release)),
                                notes={"knowledge": "release only: a record sits at any row of its QI class"})
        res = baseline_attack(release, sensitive_set=self.sensitive_set)
        if original is None:
            return res
        out = per_person(res, release, original)
        absent = out.group < 0
        if absent.any():
            counts, domain = release.sa_counts()
            _, masks, _ = choose_targets(domain, release_model(release), self.sensitive_set)
            tot = counts.sum(axis=0).astype(np.float64)
            out.set_rows(absent, (tot @ masks.T.astype(np.float64)) / max(tot.sum(), 1.0))
            out.notes["absent"] = {"n": int(absent.sum()), "rule": "ignored (the published distribution)"}
        if ties_at_random(release):
            from .replay.attack import tie_average

            out = tie_average(out, original)  # who of equal QIs sits where: the publisher's secret
        return out


def _decoupled(release: Any, original: Any, sensitive_set: str | None, name: str) -> AttackResult:
    """The exact posterior of a Generalized Anatomy release (:mod:`.decoupled`), per person."""
    from .baseline import choose_targets, release_model
    from .decoupled import decoupled_attack

    counts, domain = release.sa_counts()
    model = release_model(release)
    names, masks, _ = choose_targets(domain, model, sensitive_set)
    return decoupled_attack(release, original, names, masks, adversary=name,
                            sensitive=truth_in_targets(release, original, names), l=promised_l(model))


def _distorted(release: Any, original: Any, sensitive_set: str | None, name: str) -> AttackResult:
    """The bound on every person's posterior of a MASK release (:mod:`.distortion`)."""
    from .baseline import _find_set_model, choose_targets, release_model
    from .distortion import distortion_attack

    _, domain = release.sa_counts()
    model = release_model(release)
    names, masks, _ = choose_targets(domain, model, sensitive_set)
    declared = {k: {str(v) for v in vs} for k, vs in ((release.meta.get("schema") or {}).get("sensitive_sets")
                                                       or {}).items()}
    s_name = getattr(_find_set_model(model), "sensitive_set", None)  # MASK's set
    if s_name not in declared:
        raise ParameterError(f"the release's model names sensitive set {s_name!r}, which its schema does not declare",
                             parameter="model")
    values = [declared.get(nm[4:], set()) if nm.startswith("set:") else {nm} for nm in names]
    return distortion_attack(release, names, masks, values, declared[s_name], group=person_classes(release, original),
                             step_one=_mask_step_one(release, original), l=promised_l(model),
                             sensitive=truth_in_targets(release, original, names), adversary=name)


def _mask_step_one(release: Any, original: Any) -> np.ndarray | None:
    """Each person's class of MASK's first step (``Mask.k_partition``: strict Mondrian under
    k-anonymity on the QIs alone), re-run on the original; ``None`` when it cannot be."""
    from ..errors import OpenbookError
    from .replay.attack import algorithm_from_provenance

    try:
        algo = algorithm_from_provenance(provenance(release), release.meta.get("model"))
        return np.asarray(algo.k_partition(original).group)
    except OpenbookError:
        return None


class ReplayAdversary(Adversary):
    """Re-runs the release's algorithm on possible worlds (paper 000 §5.1): worlds in which
    the algorithm would not have published this grouping are excluded (deterministic
    algorithms) or down-weighted (RGG)."""

    name = "replay"
    title = "Algorithm replay (the adversary knows the algorithm)"
    paper = "paper 000 §5.1; paper 001 Assumption 3"
    needs = frozenset({"original"})
    parameters = {"worlds": (DEFAULT_WORLDS, _POSITIVE), "world_seed": (0, Integer(minimum=0)),
                  "exact_limit": (1e6, Real(low=1)), "rerun_limit": (DEFAULT_RERUN_LIMIT, _POSITIVE),
                  "sensitive_set": (None, _SET)}
    worlds: int
    world_seed: int
    exact_limit: float
    rerun_limit: int
    sensitive_set: str | None

    def applies_to(self, release: Any) -> Applies:
        alg = algorithm_name(release)
        method = replay_method(release)
        if method is None:
            return Applies(False, f"the release's algorithm ({alg or 'unrecorded'}) is not one the replay re-runs")
        if method == "rerun":
            # a suppression budget makes the trait unknown (decided on what the files say too,
            # the budget, not whether it was used: issue 26); a release that withheld people
            # without one is not this algorithm's
            from .replay.attack import RERUN_SHORTCUTS, SEEDED, SHORTCUT_REASONS

            params = dict(provenance(release).get("params") or {})
            budget = float(params.get("max_suppression") or 0.0) > 0
            if alg in RERUN_SHORTCUTS and budget:
                return Applies(True, f"{alg} with a suppression budget, replayed by its decisions: exact when every "
                                     "node it could have preferred over the published one fails in every world (the "
                                     "withheld people's values varied too); else bounded from above by the probability that a "
                                     "world rules them all out; unresolved when none does")
            if int(release.meta.get("n_suppressed", 0) or 0):
                return Applies(False, f"re-running {alg} needs every person's published class")
            lw = log_worlds(release)
            limit = min(float(self.rerun_limit), float(self.exact_limit))
            over = lw > np.log(limit) + 1e-9
            if alg in SEEDED:  # its worlds are every arrangement over the people, times the seed orders
                return Applies(True, f"{alg}: every possible world {SHORTCUT_REASONS[alg](params, over)}")
            own_kind = release.kind == getattr(algorithm_traits(release), "release_kind", None)
            short = SHORTCUT_REASONS[alg](params, over) if alg in SHORTCUT_REASONS and own_kind else None
            if short is not None:
                return Applies(True, f"{alg}: each of the e^{lw:.1f} possible worlds"
                                     f"{f' (above rerun_limit={limit:g} to re-run)' if over else ''} {short}")
            if over:
                return Applies(True, f"{alg}: more possible worlds (e^{lw:.1f}) than rerun_limit={limit:g} to re-run "
                                     "it on: its people are left unresolved (they count as failing)")
            return Applies(True, f"{alg} re-run on each of the e^{lw:.1f} possible worlds (exact)")
        why = {"decoupled": "its QI classes depend on the QIs alone and its SA groups on the SA alone: the exact "
                            "posterior is each QI class's average of its rows' group frequencies",
               "decisions": "its decisions are replayed on every possible world (paper 000 §5.1)",
               "sa-only": "its grouping depends on the SA alone, so every possible world is equally likely to "
                          "produce it (paper 000 Claim 4): the posterior is the class frequency",
               "qi-only": "its grouping depends on the QIs alone; the classes it withholds are those failing "
                          "the model",
               "distortion": "its classes depend on the QIs alone and it lowers the sensitive count of the classes "
                             "violating the model: each posterior is bounded from above by what that distortion "
                             "could have hidden, under any prior (a class it may have distorted may have held up to "
                             "all of its people in the sensitive set)"}[method]
        return Applies(True, f"{alg}: {why}")

    def knows_algorithm(self, release: Any) -> Applies:
        return self.applies_to(release)

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .baseline import choose_targets, release_model
        from .replay import replay_release

        prov = provenance(release)
        if replay_method(release) == "decoupled":
            return _decoupled(release, original, self.sensitive_set, "replay")
        if replay_method(release) == "distortion":
            return _distorted(release, original, self.sensitive_set, "replay")
        if prov.get("algorithm") == "anatomize" and replay_method(release) == "sa-only":
            # anatomization of no base is Anatomy (paper 000 §5.3 footnote 4): replay it as Base(Ana)
            import copy

            release = copy.copy(release)
            release.meta = {**release.meta, "algorithm": {**prov, "algorithm": "base-ana"}}
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
                             partition=part, rerun_limit=min(float(self.rerun_limit), float(self.exact_limit)))
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
        res = fill_absent(res, release, original, masks, seed=self.world_seed)
        if not skew and (replay_method(release) == "sa-only" or ties_at_random(release)):
            from .replay.attack import tie_average

            res = tie_average(res, original)  # the algorithm's coins make equal QIs interchangeable
        return res


class MinimalityAdversary(Adversary):
    """Exact credibility under the minimality principle (paper 001 §4–5): worlds in which a
    less generalized release would already satisfy the requirement are excluded.

    Its exclusion is Lemma 1 — class-local minimality — so it never declares itself the
    algorithm-aware adversary of a catalog algorithm: for full-domain search (a lattice
    choice coupling every class) it is paper 001 §7.1's adversary, whose findings can fail a
    release but not pass it (docs/minimality.md)."""

    name = "minimality"
    title = "Minimality attack (exact credibility)"
    paper = "paper 001 §4-§5"
    needs = frozenset({"original"})
    parameters = {"sensitive_set": (None, _SET), "exact": (False, Boolean()), "max_states": (200_000, _POSITIVE)}
    sensitive_set: str | None
    exact: bool
    max_states: int

    def applies_to(self, release: Any) -> Applies:
        prov = provenance(release)
        alg = prov.get("algorithm")
        if not prov:
            return Applies(True, "no algorithm recorded: the paper's adversary assumes minimality")
        if replay_method(release) not in (None, "rerun"):
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
    parameters = {"r": (None, Real(low=1)), "min_support": (100, _POSITIVE), "max_attrs": (None, _POSITIVE),
                  "sensitive_set": (None, _SET)}
    r: float | None
    min_support: int
    max_attrs: int | None
    sensitive_set: str | None

    def applies_to(self, release: Any) -> Applies:
        alg = algorithm_name(release)
        cls = algorithm_traits(release)
        if cls is not None and cls.background_robust:
            return Applies(True, f"{alg} claims robustness to background knowledge")
        return Applies(False, f"{alg or 'the release'} makes no claim about background knowledge")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from ..inference.knowledge import mine_knowledge
        from .baseline import release_model
        from .robustness import audit_release

        model = release_model(release)
        params = provenance(release).get("params") or {}
        r = self.r if self.r is not None else params.get("r") or promised_l(model) or 2.0
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
        if rep.mcmc_bound:  # per person: 3 x stderr = the audit's stated bound above the estimate
            se = np.zeros_like(post)
            se[ok] = np.stack([rep.bound - rep.posterior, rep.set_bound - rep.set_posterior], axis=1)[row[ok]] / 3.0
            out.stderr = np.where(np.isnan(post), 0.0, se)
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
    #: ``budget``: the largest exact enumeration (:data:`openbook.attacks.eligibility.WORK_BUDGET`,
    #: about 5 s); beyond it every withheld person is unresolved
    parameters = {"prior": ("uniform", Options("uniform")), "budget": (2_000_000_000, _POSITIVE)}
    prior: str
    budget: int

    def applies_to(self, release: Any) -> Applies:
        if release.meta.get("skew"):
            return Applies(True, f"{release.meta['skew'].get('method')} withheld records to restore ℓ-eligibility")
        return Applies(False, "the release had no skew step")

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .eligibility import EnumerationTooLarge, eligibility_attack

        skew = release.meta["skew"]
        counts, domain = release.sa_counts()
        published = counts.sum(axis=0).astype(np.int64)
        if release.meta.get("n_input") is None and original is not None:
            release.learn_input_size(original.n_rows)
        if release.meta.get("n_input") is None:  # |T| (paper 004 K2): not in a default sidecar
            from ..errors import ParameterError

            raise ParameterError("the eligibility adversary needs |T|, the input's row count, which the release "
                                 "does not publish: give the original table (--original)", parameter="original")
        n_input = int(release.meta["n_input"])
        l = skew.get("l")
        method = skew.get("method")
        try:
            ep = eligibility_attack(published, n_input, l, algorithm=method, values=[str(v) for v in domain.values],
                                    budget=int(self.budget))
        except EnumerationTooLarge as e:  # no figure at all: every withheld person unresolved
            ep = None
            too_large = str(e)
        targets = [str(v) for v in domain.values]
        # the people it reasons about are the withheld ones (published people's classes are the
        # other adversaries' business): one row per absent person
        if original is not None:
            n_abs = int((person_classes(release, original) < 0).sum())
        else:
            n_abs = n_input - int(published.sum())
        group = np.full(n_abs, -1, dtype=np.int64)
        notes: dict[str, Any] = {"knowledge": "the release, |T| and the skew step's algorithm (paper 004 K1-K2)",
                                 "method": method}
        if ep is None:
            # the safe side: certainty is not excluded, and every withheld person counts as failing
            post = np.ones((n_abs, len(targets)))
            notes["unresolved"] = too_large + "; every withheld person counts as failing"
            return AttackResult(adversary="eligibility", posterior=post, targets=targets, group=group,
                                l=float(l) if l else None, unresolved=np.ones(n_abs, dtype=bool), notes=notes)
        # the withheld records' SA: the posterior that each published value is S1 (the
        # most frequent value of the base table, the one the step suppresses)
        p_s1 = np.asarray([float(x) for x in ep.posterior], dtype=np.float64)
        post = np.tile(p_s1, (n_abs, 1))
        notes["posterior_is_most_frequent"] = ep.to_dict()
        return AttackResult(adversary="eligibility", posterior=post, targets=targets, group=group,
                            l=float(l) if l else None, unresolved=np.zeros(n_abs, dtype=bool), notes=notes)


class LinkageAdversary(Adversary):
    """Linkage of this release with every earlier one (paper 002 §2.3): a person's classes
    across releases intersect. The figure is the posterior of each SA value over the possible
    worlds consistent with every release, uniform (paper 000 §2.4) — exact where the worlds
    can be counted within ``budget`` transitions (default
    :data:`.linkage_posterior.DEFAULT_BUDGET`), else a proven upper bound (the notes count
    each method; :mod:`.linkage_posterior`, docs/linkage.md). Nobody is unresolved.

    ``l``: the least post-linkage diversity of paper 002 (default the release model's ℓ): the
    notes keep paper 002's figures — ``1/diversity`` (a lower bound of the exact posterior),
    the people below ℓ and the earlier releases (by position) linked with them."""

    name = "linkage"
    title = "Linkage with earlier releases"
    paper = "paper 002 §2.3"
    needs = frozenset({"earlier"})
    parameters = {"l": (None, Real(low=1)), "budget": (None, _POSITIVE)}
    l: float | None
    budget: int | None

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .linkage_audit import linkage_attack

        l = float(self.l) if self.l is not None else promised_l(_model(release))
        return linkage_attack(release, original=original, earlier=earlier, l=l, budget=self.budget)


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
    parameters = {"population_size": (None, Real(low=1)), "sampling_fraction": (None, Real(0, 1, low_open=True)),
                  "threshold": (0.2, Real(0, 1, low_open=True)), "population": (None, Text())}
    population_size: float | None
    sampling_fraction: float | None
    threshold: float
    population: str | None

    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        from .reidentification import reidentification_risk

        pop = None
        if self.population is not None:
            from .population import read_population

            pop = read_population(self.population)
        res = reidentification_risk(release, population_size=self.population_size,
                                    sampling_fraction=self.sampling_fraction, threshold=self.threshold,
                                    population=pop, original=original)
        model = ("journalist" if (self.population_size or self.sampling_fraction or pop is not None)
                 else "prosecutor")
        risk = res.journalist if model == "journalist" else res.prosecutor
        cls = np.asarray(res.class_of, dtype=np.int64)
        notes = {"model": model, **{k: v for k, v in res.summary().items() if k in (
            "sample_uniqueness", "population_uniqueness", "notes", "exact_qis_published")}}
        if original is None or release.kind == "bucketized" and len(cls) != len(release.data):
            return AttackResult(adversary=self.name, posterior=risk, targets=["re-identification"], group=cls,
                                notes=notes)
        if release.kind == "bucketized" and release.qi_generalized:  # a person's risk is their QI class's
            from .decoupled import candidate_classes, people_classes

            people = people_classes(release, original)
            qcls, n_q = release.qi_classes()
            cls_risk = np.zeros(n_q)
            cls_risk[qcls] = risk
            if people is None:  # after a skew step: the largest risk of the classes a person may sit in
                cand = candidate_classes(release, original)
                post = np.where(cand.any(axis=1), np.where(cand, cls_risk[None, :], 0.0).max(axis=1), np.nan)
                people = np.where(cand.any(axis=1), np.argmax(cand, axis=1), -1)
            else:
                post = np.where(people >= 0, cls_risk[np.maximum(people, 0)], np.nan)
            return AttackResult(adversary=self.name, posterior=post, targets=["re-identification"], group=people,
                                unresolved=np.zeros(original.n_rows, dtype=bool), notes=notes)
        al = alignment(release, original)
        post = np.full(original.n_rows, np.nan)
        placed = al.row >= 0
        post[placed] = risk[al.row[placed]]
        group = np.where(placed, cls[np.maximum(al.row, 0)], -1)
        out = AttackResult(adversary=self.name, posterior=post, targets=["re-identification"], group=group,
                           unresolved=np.zeros(original.n_rows, dtype=bool), notes=notes)
        if ties_at_random(release):
            from .replay.attack import tie_average

            # which of equal QIs sits in which class is the publisher's secret: each one's chance
            # of being picked out is the mean over their set's seats (>= any single guess's)
            out = tie_average(out, original)
        return out
