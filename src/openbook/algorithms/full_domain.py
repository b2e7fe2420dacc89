"""Full-domain generalization to a given level vector (Samarati 2001; the global-recoding
setting of paper 001 §4.1), with optional suppression of the classes that violate the model.

This is the QI-only baseline of the foundation: every value of QI column j is replaced by
its ancestor at ``levels[j]`` of the column's hierarchy; rows of classes that still fail the
model are suppressed when ``max_suppression`` allows it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import InfeasibleError
from ..params import Integer, ListOf, Optional, Real, fail
from ..release import Partition
from .base import Anonymizer


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
    parameter_constraints = {"levels": Optional(ListOf(of=Integer(minimum=0))), "max_suppression": Real(0.0, 1.0)}

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
        ok = self.model.holds(counts, table.sa_domain)
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
