"""Full-domain generalization to a given level vector (Samarati 2001; the global-recoding
setting of paper 001 §4.1), with optional suppression of the classes that violate the model.

This is the QI-only baseline of the foundation: every value of QI column j is replaced by
its ancestor at ``levels[j]`` of the column's hierarchy; rows of classes that still fail the
model are suppressed when ``max_suppression`` allows it (:func:`suppressed_classes`, the
decision an adversary who knows the algorithm replays on the absent people's possible SA
values: :mod:`openbook.attacks.absence`).

**t-closeness with suppression** (issue 26). A class is judged against the table's SA
distribution; every reader checks the release against the *published* rows' distribution. A
class that holds against the first may fail against the second, so the release would fail its
own verification, and which classes fail depends on the suppressed rows' values. The decision
therefore suppresses the classes failing against the input's distribution, then, while a kept
class fails against the distribution of the kept classes, those too: every published class
holds against both, and the adversary replays the same decision (the suppressed rows' values
enter it only through the input's distribution, which it sums over).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import InfeasibleError
from ..params import Integer, ListOf, Optional, Real, fail
from ..release import Partition
from .base import Anonymizer


def _compares_with_table(model: Any) -> bool:
    from ..models.t_closeness import TCloseness

    return any(isinstance(m, TCloseness) for m in (getattr(model, "models", None) or [model]))


def suppressed_classes(counts: np.ndarray, domain: Any, model: Any) -> np.ndarray:
    """Which classes full-domain recoding suppresses (bool per row of ``counts``, the classes'
    SA counts; ``domain.global_counts``: the input's distribution): those failing ``model``;
    for a model that compares a class with the table's distribution, then also every kept class
    failing it against the kept classes' distribution, until none does (module docstring)."""
    counts = np.asarray(counts, dtype=np.int64)
    bad = ~np.asarray(model.holds(counts, domain), dtype=bool)
    if not _compares_with_table(model):
        return bad
    while (~bad).any():
        kept = counts[~bad].sum(axis=0)
        more = ~bad & ~np.asarray(model.holds(counts, dataclasses.replace(domain, global_counts=kept)), dtype=bool)
        if not more.any():
            break
        bad |= more
    return bad


class FullDomainGeneralization(Anonymizer):
    """Generalize every QI to a fixed hierarchy level; suppress classes that still fail.

    Parameters
    ----------
    model: the privacy model every published class must satisfy.
    levels: one hierarchy level per QI (0 = original values); ``None`` = all zeros.
    max_suppression: largest fraction of rows that may be suppressed (0 = none).
    """

    name = "full-domain"
    minimality = False
    replay = "qi-only"
    deterministic = True

    parameter_constraints = {"levels": Optional(ListOf(of=Integer(minimum=0))), "max_suppression": Real(0.0, 1.0)}

    @classmethod
    def withholds(cls, params: dict[str, Any]) -> str:
        return "fails-model"

    def __init__(self, *, model, levels: Sequence[int] | None = None, max_suppression: float = 0.0,
                 seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.levels = None if levels is None else list(levels)
        self.max_suppression = max_suppression

    def params(self) -> dict[str, Any]:
        return {"levels": self.levels, "max_suppression": self.max_suppression}

    def _validate(self, table: EncodedTable) -> None:
        super()._validate(table)
        levels = self.release_levels_for(table)
        for name, lv in zip(table.qi_names, levels):
            h = table.hierarchy(name)
            if not 0 <= lv <= h.height:
                raise fail(self.name, f"the level of {name!r}", lv, f"be in 0..{h.height}")

    def release_levels_for(self, table: EncodedTable) -> list[int]:
        self.check_params()
        levels = [int(x) for x in self.levels] if self.levels is not None else [0] * len(table.qi_names)
        if len(levels) != len(table.qi_names):
            raise fail(self.name, "levels", self.levels, f"give one level for each of the {len(table.qi_names)} QIs")
        return levels

    def release_levels(self) -> list[int] | None:
        return self._levels

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        levels = self.release_levels_for(table)
        self._levels = levels
        gen = [table.hierarchy(n).generalize(table.columns[n].codes, lv) for n, lv in zip(table.qi_names, levels)]
        cls, n_cls = group_ids(gen)
        counts = table.group_sa_counts(cls, n_cls)
        ok = ~suppressed_classes(counts, table.sa_domain, self.model)
        bad_rows = ~ok[cls]
        n_bad = int(bad_rows.sum())
        if n_bad > float(self.max_suppression) * table.n_rows:
            raise InfeasibleError(
                f"full-domain generalization at levels {levels} leaves {n_bad} rows "
                f"({n_bad / table.n_rows:.1%}) in classes violating {self.model.describe()}; "
                f"max_suppression={float(self.max_suppression):.1%} allows "
                f"{int(float(self.max_suppression) * table.n_rows)}",
                model=self.model,
            )
        labels = np.where(bad_rows, -1, cls)
        prov = self.provenance() | {"levels": levels, "suppressed_classes": int((~ok).sum())}
        return Partition.from_labels(labels, provenance=prov)

    _levels: list[int] | None = None
