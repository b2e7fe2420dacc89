"""``Partition``: what an anonymizer decides — a group id per row, the suppressed rows, and
the provenance an algorithm-aware adversary is entitled to (algorithm, parameters, seed,
bucket order, split tree; paper 000 §2.4, paper 001 Assumption 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import VerificationError


@dataclass(eq=False)
class Partition:
    """Group id per row (``-1`` = suppressed), group ids ``0..n_groups-1`` all non-empty.

    ``provenance`` holds JSON-serialisable facts about how the partition was made
    (``algorithm``, ``params``, ``seed``, ...); ``extra`` holds array-valued provenance
    (sort order, split tree) that attacks replaying the algorithm may use.
    """

    group: np.ndarray
    n_groups: int
    provenance: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.group = np.asarray(self.group, dtype=np.int64)
        self.n_groups = int(self.n_groups)

    @classmethod
    def from_labels(cls, labels: np.ndarray, **kwargs: Any) -> "Partition":
        """Renumber arbitrary integer labels (negative = suppressed) to 0..G-1 in order of
        first appearance of each label's smallest row."""
        labels = np.asarray(labels, dtype=np.int64)
        out = np.full(labels.shape, -1, dtype=np.int64)
        keep = labels >= 0
        if keep.any():
            uniq, first, inv = np.unique(labels[keep], return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            out[keep] = rank[inv]
            n = len(uniq)
        else:
            n = 0
        return cls(out, n, **kwargs)

    @property
    def n_rows(self) -> int:
        return int(self.group.size)

    @property
    def suppressed(self) -> np.ndarray:
        return self.group < 0

    @property
    def n_suppressed(self) -> int:
        return int(self.suppressed.sum())

    @property
    def n_published(self) -> int:
        return self.n_rows - self.n_suppressed

    def sizes(self) -> np.ndarray:
        return np.bincount(self.group[self.group >= 0], minlength=self.n_groups)

    def members(self) -> list[np.ndarray]:
        """Row positions of each group (for tests and small tables; O(n log n))."""
        keep = np.flatnonzero(self.group >= 0)
        order = keep[np.argsort(self.group[keep], kind="stable")]
        return np.split(order, np.cumsum(self.sizes())[:-1]) if self.n_groups else []

    def check(self, n_rows: int | None = None) -> None:
        """Every row in exactly one group or suppressed; ids 0..G-1; no empty group."""
        if n_rows is not None and self.n_rows != n_rows:
            raise VerificationError(f"partition covers {self.n_rows} rows, the table has {n_rows}")
        g = self.group
        if g.size and (g.max(initial=-1) >= self.n_groups or g.min(initial=0) < -1):
            raise VerificationError("partition has group ids outside -1..n_groups-1")
        if self.n_groups and (self.sizes() == 0).any():
            raise VerificationError("partition has an empty group")
