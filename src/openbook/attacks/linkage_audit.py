"""The linkage audit a new release must pass against the releases already published
(paper 002 §2.3): an adversary who knows a person's QI intersects the classes that contain
them across every release; the post-linkage diversity of a person is the number of SA values
left. :func:`audit_registry` refuses — raises :class:`RiskError` naming how many people fall
below ℓ and through which releases — or, with ``warn_only=True``, issues a
:class:`PrivacyLeakWarning`.

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
