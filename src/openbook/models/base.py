"""The one predicate interface every privacy model implements.

A model answers, for a matrix ``counts`` of per-group sensitive-attribute (SA) counts
(shape ``(n_groups, n_sa_values)``, integer), which groups satisfy it (``holds``) and what
level each group achieves (``group_levels``). Group sizes are ``counts.sum(axis=1)``, so
k-anonymity fits the same interface. Everything is vectorised over groups, so every
algorithm can use every model and every check is a handful of numpy reductions
(``docs/design.md``, "One predicate interface"; ``docs/models.md``).

What a model needs to know about the SA beyond the counts (its values, the whole table's
distribution for t-closeness, numeric values for ordered distance and (k,e)-anonymity, a
hierarchy for hierarchical EMD, the named sensitive value sets for binary ℓ-diversity) is
carried by :class:`SADomain`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, overload

import numpy as np


def first_and_last(H: np.ndarray) -> np.ndarray:
    """Of ``H (W, B, B)`` (:meth:`PrivacyModel.holds_intervals`) keep, per start ``i``, only
    the first ``j`` with ``H[w, i, j]`` and ``H[w, i, B-1]``: what GG's decisions read
    (a group closes at its first satisfying bucket; the merged tail asks whether the run to
    the end holds)."""
    out = np.zeros_like(H)
    if H.size == 0:
        return out
    w, i = np.nonzero(H.any(axis=2))
    out[w, i, H.argmax(axis=2)[w, i]] = True
    out[:, :, -1] |= H[:, :, -1]
    return out


@dataclass(frozen=True, eq=False)
class SADomain:
    """What the privacy models know about the sensitive attribute.

    Attributes
    ----------
    values:
        Decoded SA value of each SA code (index = code).
    global_counts:
        Count of each SA code in the whole table the groups partition (int64); the
        reference distribution of t-closeness.
    numeric:
        Numeric value of each code (float64) when the SA is numeric or ordinal (its rank),
        else ``None``. Used by ordered-distance EMD and (k,e)-anonymity.
    hierarchy:
        The SA's :class:`openbook.hierarchy.Hierarchy` (leaves = SA codes), for
        hierarchical-distance EMD, else ``None``.
    sensitive_sets:
        Named sensitive value sets: name -> boolean mask over SA codes.
    """

    values: np.ndarray
    global_counts: np.ndarray
    numeric: np.ndarray | None = None
    hierarchy: Any = None
    sensitive_sets: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_values(self) -> int:
        return len(self.values)

    @property
    def n_rows(self) -> int:
        return int(self.global_counts.sum())

    @overload
    def sensitive_mask(self, name: str) -> np.ndarray: ...

    @overload
    def sensitive_mask(self, name: None) -> None: ...

    def sensitive_mask(self, name: str | None) -> np.ndarray | None:
        """The boolean mask of the named sensitive set (``None`` -> ``None``)."""
        if name is None:
            return None
        from ..errors import ParameterError

        try:
            return self.sensitive_sets[name]
        except KeyError:
            known = ", ".join(sorted(self.sensitive_sets)) or "none declared"
            raise ParameterError(
                f"unknown sensitive value set {name!r} (known: {known})",
                parameter="sensitive_set",
                value=name,
            ) from None

    @classmethod
    def from_codes(cls, sa_codes: np.ndarray, values: np.ndarray, **kwargs: Any) -> "SADomain":
        counts = np.bincount(np.asarray(sa_codes, dtype=np.int64), minlength=len(values))
        return cls(values=np.asarray(values), global_counts=counts.astype(np.int64), **kwargs)


class PrivacyModel(ABC):
    """A privacy criterion over the groups of a partition.

    Subclasses store their keyword-only parameters unchanged, validate them in
    ``__post_init__``/``__init__`` (raising :class:`openbook.errors.ParameterError`), and
    declare:

    ``name``          short registry name (``"k-anonymity"``, ``"distinct-l-diversity"``, ...)
    ``monotonic``     True when merging two satisfying groups always gives a satisfying
                      group (the property lattice search and top-down splitting rely on)
    ``absorbing``     True when a satisfying group still satisfies after *any* rows join it
                      (k-anonymity, distinct ℓ, (k,e)). With a suppression budget, full-domain
                      search tags predictively only for these: a coarser node's failing classes
                      are then unions of a finer node's failing classes, so it suppresses no
                      more rows. Frequency, entropy and distance models are not absorbing — a
                      satisfying class that absorbs a suppressed minority can fail, and the
                      coarser node can exceed the budget (``docs/algorithms.md``)
    ``higher_is_stronger``  direction of the level: larger k / ℓ is stronger, smaller t / α
                      is stronger.
    ``reads_sa``      False when a group's verdict depends on its size alone (k-anonymity):
                      then no algorithm's decision depends on the SA, every world is equally
                      likely to give the grouping, and the replay's posterior is the class
                      frequency (paper 000 Claim 4's argument)
    """

    name: ClassVar[str]
    monotonic: ClassVar[bool] = True
    reads_sa: ClassVar[bool] = True
    absorbing: ClassVar[bool] = False
    higher_is_stronger: ClassVar[bool] = True

    @abstractmethod
    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        """Level each group achieves (float64, shape ``(n_groups,)``)."""

    @abstractmethod
    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        """Boolean array: does each group satisfy the model?"""

    def table_level(self, counts: np.ndarray, domain: SADomain) -> float:
        """Level the whole partition achieves: the weakest group's level."""
        levels = self.group_levels(counts, domain)
        if levels.size == 0:
            return float("nan")
        return float(levels.min() if self.higher_is_stronger else levels.max())

    def holds_all(self, counts: np.ndarray, domain: SADomain) -> bool:
        return bool(np.all(self.holds(counts, domain)))

    #: count vectors checked at once by :meth:`holds_intervals`
    INTERVAL_CHUNK = 1 << 20

    def holds_intervals(self, prefix: np.ndarray, domain: SADomain, first_only: bool = False) -> np.ndarray:
        """``H (W, B, B)``: does the run of consecutive buckets ``i..j`` satisfy the model, for
        every ``i <= j`` (False below the diagonal), from the prefix sums ``prefix (W, B+1, v)``
        of ``W`` sequences of ``B`` buckets' SA counts — what the replay asks of a GG group
        (every run of its buckets). :meth:`holds` on every run, a chunk of runs at a time (the
        runs' counts are never all held at once); a model may compute it faster, with the same
        verdicts. ``first_only``: only each start's first satisfying run and its run to the
        last bucket are asked for (:func:`first_and_last` of the whole answer) — all GG (no
        voluntary merge) reads; a model may then skip the others."""
        W, B = prefix.shape[0], prefix.shape[1] - 1
        H = np.zeros((W, B, B), dtype=np.bool_)
        i, j = np.triu_indices(B)
        step = max(1, self.INTERVAL_CHUNK // max(1, W))
        for a in range(0, i.size, step):
            ii, jj = i[a:a + step], j[a:a + step]
            runs = (prefix[:, jj + 1] - prefix[:, ii]).reshape(-1, prefix.shape[2])
            H[:, ii, jj] = np.asarray(self.holds(runs, domain), dtype=bool).reshape(W, ii.size)
        return first_and_last(H) if first_only else H

    def box_verdict(self, lo: np.ndarray, hi: np.ndarray, total: np.ndarray, domain: SADomain) -> np.ndarray:
        """For groups whose SA counts are only known to lie in a box — ``lo <= counts <= hi``
        per value, summing to ``total`` (``(m, V)``, ``(m, V)``, ``(m,)``) — does the model
        hold at every point (``1``), at none (``0``), or is it undecided here (``-1``)? The
        replay asks when a box has too many points to list (paper 000 §5.1: a decision the
        same in every world records nothing). Sound answers only; the default decides none."""
        return np.full(np.asarray(total).shape[0], -1, dtype=np.int8)

    def validate(self, domain: SADomain) -> None:
        """Raise ``InfeasibleError`` when no partition of this table can satisfy the model
        (e.g. ℓ larger than the number of distinct SA values, k larger than the table,
        an ℓ-ineligible table). The default checks that the whole table as one group holds."""
        from ..errors import InfeasibleError

        whole = domain.global_counts[None, :]
        if domain.n_rows == 0:
            raise InfeasibleError("the table is empty", model=self)
        if not bool(self.holds(whole, domain)[0]):
            raise InfeasibleError(
                f"{self.describe()} cannot hold on this table: even the whole table as one "
                "group violates it",
                model=self,
            )

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The model's parameters, JSON-serialisable (for release sidecars)."""

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, **self.params()}

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params().items() if v is not None)
        return f"{self.name}({args})"

    def __repr__(self) -> str:
        return self.describe()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.params() == other.params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(map(str, self.params().items())))))
