"""The linkage audit a new release must pass against the releases already published
(paper 002 §2.3): an adversary who knows a person's QI intersects the classes that contain
them across every release; the post-linkage diversity of a person is the number of SA values
left. :func:`audit_registry` refuses — raises :class:`RiskError` naming how many people fall
below ℓ and through which releases — or, with ``warn_only=True``, issues a
:class:`PrivacyLeakWarning`.

:func:`linkage_attack` is the linkage adversary's computation: the exact posterior of
every person over the possible worlds of every release (:mod:`.linkage_posterior`).

The population is the people whose QI values the adversary may know: pass it (the source
table of the new release is the natural choice). Without it, the audit uses every QI tuple
published ungeneralized in the releases (the QI-tables of bucketized releases and the rows
of generalized releases whose labels are single values), which may miss people hidden
behind ranges; the report says which population was used.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError, PrivacyLeakWarning, RiskError
from ..release.labels import RANGE, TOP
from ..release.release import Release
from .linkage import linkage, pairwise_below


@dataclass
class AuditReport:
    """Result of auditing a new release against the registry."""

    l: int
    new_release: str
    earlier: list[str]
    population: str
    n_people: int
    n_below: int
    n_already_below: int
    n_disclosed: int
    pairwise: dict[str, int]
    involved: list[str]
    summary: dict[str, Any]
    diversity: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def ok(self) -> bool:
        return self.n_below == 0

    def message(self) -> str:
        if self.ok:
            return (f"{self.new_release}: every one of {self.n_people} people keeps post-linkage diversity ≥ {self.l} "
                    f"across {len(self.earlier)} earlier release(s)")
        rel = ", ".join(self.involved) if self.involved else "(the new release alone)"
        return (f"{self.new_release}: linkage with earlier releases {rel} drops {self.n_below} of {self.n_people} "
                f"people below l={self.l} ({self.n_disclosed} to diversity 1)")

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "l": self.l, "new_release": self.new_release, "earlier": self.earlier,
                "population": self.population, "n_people": self.n_people, "n_below_l": self.n_below,
                "n_already_below_l": self.n_already_below, "n_disclosed": self.n_disclosed,
                "pairwise_below_l": self.pairwise, "releases_involved": self.involved,
                "summary": self.summary, "message": self.message()}


def audit_registry(registry: Any, new_release: Release, l: int, *, population: pd.DataFrame | None = None,
                   hierarchies: Mapping[str, Any] | None = None, warn_only: bool = False,
                   new_name: str = "new release") -> AuditReport:
    """Post-linkage diversity of every person against all earlier releases plus the new
    one; raise :class:`InfeasibleError` if someone in the new release falls below ``l``
    (or warn with ``warn_only=True``)."""
    if int(l) < 1:
        raise ParameterError(f"l = {l} must be at least 1", parameter="l", value=l)
    l = int(l)
    earlier = registry.releases()
    rels = [r for _, r in earlier] + [new_release]
    names = [n for n, _ in earlier] + [new_name]
    if population is None:
        population, pop_desc = default_population(rels, hierarchies)
    else:
        pop_desc = f"{len(population)} given people"
    cache: dict = {}
    res = linkage(rels, population, hierarchies=hierarchies, names=names, cache=cache)
    in_new = res.matched[:, -1]
    below = in_new & (res.diversity < l)
    if earlier:
        before = linkage(rels[:-1], population, hierarchies=hierarchies, names=names[:-1], cache=cache)
        already = below & before.matched.any(axis=1) & (before.diversity < l)
        pw = pairwise_below(rels, population, l, hierarchies=hierarchies, names=names, cache=cache)
    else:
        already = np.zeros_like(below)
        pw = {}
    involved = [names[j] for j in range(len(earlier)) if (res.matched[below, j]).any()]
    summary = res.summary(l)
    report = AuditReport(l=l, new_release=new_name, earlier=names[:-1], population=pop_desc,
                         n_people=int(in_new.sum()), n_below=int(below.sum()), n_already_below=int(already.sum()),
                         n_disclosed=int((in_new & (res.diversity == 1)).sum()), pairwise=pw, involved=involved,
                         summary=summary, diversity=res.diversity)
    if not report.ok:
        if warn_only:
            warnings.warn(report.message(), PrivacyLeakWarning, stacklevel=2)
        else:
            raise RiskError(report.message() + "; refusing (--no-audit records it anyway)", adversary="linkage",
                            n_people=report.n_below, worst=1.0)
    return report


def default_population(releases: Sequence[Release], hierarchies: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, str]:
    """QI tuples published ungeneralized in any of ``releases`` (see the module docstring)."""
    hierarchies = dict(hierarchies or {})
    qi = list(dict.fromkeys(c for r in releases for c in r.qi))
    frames = []
    for r in releases:
        if set(r.qi) != set(qi):
            continue
        df = r.data[qi].astype(str)
        if r.kind == "generalized":
            point = np.ones(len(df), dtype=bool)
            for c in qi:
                s = df[c].str.strip()
                point &= ~(s.eq(TOP) | s.str.match(RANGE.pattern)).to_numpy()
                h = hierarchies.get(c)
                if h is not None:
                    leaves = {str(x) for x in np.asarray(h.leaves, dtype=object)}
                    point &= s.isin(leaves).to_numpy()
            df = df[point]
        frames.append(df)
    if not frames:
        raise ParameterError("the releases publish different QI columns: give the population explicitly",
                             parameter="population")
    pop = pd.concat(frames, ignore_index=True).drop_duplicates(ignore_index=True)
    return pop, f"{len(pop)} distinct QI tuples published ungeneralized in the releases"


def linkage_attack(release: Release, *, original: Any = None, earlier: Sequence[Release] = (),
                   l: float | None = None, budget: int | None = None) -> Any:
    """The linkage adversary's result (:class:`~.families.LinkageAdversary`): per person of
    the new release, the posterior of each of its SA values over every release
    (:mod:`.linkage_posterior`). Exact people carry their posterior, bounded ones their upper
    bound — under a t-closeness model a distribution inside their proven interval with three
    standard errors covering it, so the certificate's distance bound stays sound. The notes
    count each method and keep paper 002's figures: ``1/diversity``, the people below ``l``,
    the earlier releases (by position) linked with them."""
    from ..models.promise import distance_model
    from .base import AttackResult
    from .baseline import release_model
    from .linkage import published_multiplicity
    from .linkage_posterior import DEFAULT_BUDGET, EXACT, METHODS, linkage_posterior

    rels = [*earlier, release]
    if original is not None:
        population = pd.DataFrame({c: original.decode(c) for c in dict.fromkeys(c for r in rels for c in r.qi)
                                   if c in original.columns})
        hier, weights = dict(original.hierarchies), None
        truth = original.decode(original.sa_name) if original.sa_name == release.sa else None
        pop_desc = f"{original.n_rows} people of the original table"
    else:
        population, pop_desc = default_population(rels, None)
        hier, truth = None, None
        weights = published_multiplicity(rels, population)
        pop_desc += f", standing for {int(weights.sum())} people (each as often as a release publishes it)"
    lp = linkage_posterior(rels, population, weights=weights, truth=truth, hierarchies=hier,
                           budget=DEFAULT_BUDGET if budget is None else int(budget))
    res, n = lp.linked, len(population)
    targets = [str(v) for v in release.sa_counts()[1].values]
    col = pd.Index(lp.values).get_indexer(targets)
    in_new = res.matched[:, -1]
    up, lo = lp.upper[:, col], lp.lower[:, col]
    post = np.full((n, len(targets)), np.nan)
    post[in_new] = up[in_new]
    stderr = None
    inexact = in_new & (lp.method != EXACT)
    if inexact.any() and distance_model(release_model(release)) is not None:
        lo_, hi_ = lo[inexact], up[inexact]
        room = (hi_ - lo_).sum(axis=1)
        mid = lo_ + np.where(room > 0, (1.0 - lo_.sum(axis=1)) / np.where(room > 0, room, 1.0), 0.0)[:, None] * (hi_ - lo_)
        post[inexact] = mid
        stderr = np.zeros_like(post)
        stderr[inexact] = np.maximum(hi_ - mid, mid - lo_) / 3.0
    d = res.diversity.astype(np.float64)
    below = in_new & (d < l - 1e-12) if l is not None else np.zeros(n, dtype=bool)
    inv = 1.0 / np.maximum(d[in_new], 1.0)
    notes = {"knowledge": f"{len(earlier)} earlier release(s) and every person's QI",
             "figure": "the posterior of each SA value over the possible worlds consistent with every release "
                       "(paper 002 §2.3's linkage, paper 000 §2.4's uniform prior; docs/linkage.md): exact, or a "
                       "proven upper bound where 'methods' says so",
             "methods": {m: int((lp.method[in_new] == i).sum()) for i, m in enumerate(METHODS[:3])},
             "counting": lp.notes, "population": pop_desc,
             "one_over_diversity": {"max": float(inv.max()) if inv.size else None,
                                    "meaning": "paper 002's 1/post-linkage diversity, a lower bound of the largest "
                                               "exact posterior"},
             "diversity_distribution": res.distribution(), "n_below_l": int(below.sum()),
             "earlier_involved": [j for j in range(len(earlier)) if bool(res.matched[below, j].any())],
             "n_disclosed": int((in_new & (d == 1)).sum())}
    if stderr is not None:
        notes["interval"] = "t-closeness: a bounded person's posterior ± 3 stderr covers their proven interval"
    return AttackResult(adversary="linkage", posterior=post, targets=targets, group=np.where(in_new, lp.last_class, -1),
                        l=l, stderr=stderr, unresolved=np.zeros(n, dtype=bool), notes=notes)
