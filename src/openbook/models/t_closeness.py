"""t-closeness: each group's SA distribution is within Earth Mover's Distance t of the table's.

Li, Li, Venkatasubramanian (ICDE 2007) §4: ``D[P, Q]`` is the EMD between a group's SA
distribution P and the whole table's Q (``domain.global_counts``) under a ground distance
between SA values:

``"equal"``
    every two values at distance 1: ``D = ½ Σ |p_i − q_i|`` (total variation; the form
    paper 001 §5 quotes, Table 10).
``"ordered"``
    values ranked 1..m (by ``domain.numeric`` when given — numeric or ordinal SA — else by
    code order), ``d(i, j) = |rank_i − rank_j| / (m − 1)``:
    ``D = 1/(m−1) Σ_{i=1..m} |Σ_{j<=i} (p_j − q_j)|`` (§4.2). m counts every value of the
    SA domain, present in the table or not.
``"hierarchical"``
    values are the leaves of ``domain.hierarchy`` (``ancestor_table[j, leaf]`` = node at
    level j, level 0 the leaves, level ``height`` = H the root), ``d(i, j) = level(LCA)/H``.
    The paper's formula (§4.3): for each node N, ``extra(N) = Σ_{leaves under N} (p − q)``,
    ``pos_extra(N)`` / ``neg_extra(N)`` the sums of the positive / negative extras of its
    children, ``cost(N) = height(N)/H · min(pos_extra(N), neg_extra(N))`` and
    ``D = Σ_{internal N} cost(N)``.
    Since ``min(pos, neg) = (Σ_C |extra(C)| − |extra(N)|)/2`` and a node at level j is a
    child at weight j/H and a parent at weight −j/H, this telescopes to the flow across the
    tree's edges: ``D = 1/(2H) Σ_{non-root N} |extra(N)|``, computed for all groups with one
    matrix product (groups x values) @ (values x nodes). A leaf shallower than H repeats
    itself up the ancestor table; its distance to others is still the level of the LCA.
    Nodes of the top level are treated as one root.

The level of a group is its distance D (lower is stronger; 1, the largest possible, for an
empty group, which never holds); a group holds iff ``D <= t + 1e-12``. Monotonic: EMD is
convex in P, so a merged group is no farther from Q than the farther of its parts.

References
----------
N. Li, T. Li, S. Venkatasubramanian. t-closeness: privacy beyond k-anonymity and
ℓ-diversity. ICDE 2007, §4 (EMD, ordered and hierarchical distance).
Paper 001 (Wong et al., VLDB 2007) §5 (t-closeness, Table 10).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..errors import ParameterError
from ._checks import TOL, as_counts, check_choice, check_real
from .base import PrivacyModel, SADomain

DISTANCES = ("equal", "ordered", "hierarchical")


def _distributions(counts: np.ndarray, domain: SADomain) -> tuple[np.ndarray, np.ndarray]:
    """``(P − Q, empty)``: per group, its distribution minus the table's; empty groups."""
    g = np.asarray(domain.global_counts, dtype=np.float64)
    total = g.sum()
    if total <= 0:
        raise ParameterError(
            "t-closeness needs the table's SA distribution, but domain.global_counts is empty",
            parameter="global_counts",
        )
    n = counts.sum(axis=1).astype(np.float64)
    empty = n == 0
    p = counts / np.where(empty, 1.0, n)[:, None]
    p[empty] = 0.0
    return p - g / total, empty


def emd_equal(diff: np.ndarray) -> np.ndarray:
    """Equal-distance EMD (total variation) of each row of ``P − Q``."""
    return 0.5 * np.abs(diff).sum(axis=1)


def value_order(domain: SADomain) -> np.ndarray:
    """SA codes in ordered-distance order: by ``domain.numeric`` (stable) or by code."""
    if domain.numeric is None:
        return np.arange(domain.n_values)
    return np.argsort(np.asarray(domain.numeric, dtype=np.float64), kind="stable")


def emd_ordered(diff: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Ordered-distance EMD of each row of ``P − Q`` with values ranked by ``order``."""
    m = diff.shape[1]
    if m <= 1:
        return np.zeros(len(diff))
    cum = np.cumsum(diff[:, order], axis=1)
    return np.abs(cum[:, :-1]).sum(axis=1) / (m - 1)


def hierarchy_nodes(hierarchy: Any, n_values: int) -> tuple[np.ndarray, int]:
    """``(indicator, H)``: a 0/1 matrix (values x non-root nodes) over levels 0..H−1 of the
    hierarchy's ancestor table, and the height H. Checks the table is a tree on the SA codes
    (each node at level j−1 has a single parent at level j)."""
    try:
        table = np.asarray(hierarchy.ancestor_table)
        height = int(hierarchy.height)
    except AttributeError:
        raise ParameterError(
            "hierarchical t-closeness needs a hierarchy with ancestor_table and height",
            parameter="hierarchy",
        ) from None
    if table.ndim != 2 or table.shape != (height + 1, n_values):
        raise ParameterError(
            f"the SA hierarchy's ancestor_table has shape {table.shape}, expected "
            f"(height + 1, n_values) = ({height + 1}, {n_values})",
            parameter="hierarchy",
        )
    blocks = []
    for j in range(height):
        _, child = np.unique(table[j], return_inverse=True)
        pairs = np.unique(np.stack([child, np.unique(table[j + 1], return_inverse=True)[1]]), axis=1)
        if pairs.shape[1] != child.max(initial=-1) + 1:
            raise ParameterError(
                f"the SA hierarchy is not a tree: a node at level {j} has two parents at level "
                f"{j + 1} (ancestor_table must list leaves at level 0 and the root last)",
                parameter="hierarchy",
            )
        blocks.append(np.eye(child.max(initial=-1) + 1, dtype=np.float64)[child])
    if not blocks:
        return np.zeros((n_values, 0)), height
    return np.concatenate(blocks, axis=1), height


def emd_hierarchical(diff: np.ndarray, indicator: np.ndarray, height: int) -> np.ndarray:
    """Hierarchical-distance EMD of each row of ``P − Q`` (see the module docstring)."""
    if height <= 0 or indicator.shape[1] == 0:
        return np.zeros(len(diff))
    return np.abs(diff @ indicator).sum(axis=1) / (2.0 * height)


def emd(counts: np.ndarray, domain: SADomain, distance: str) -> np.ndarray:
    """EMD of each group's SA distribution to the table's (1 for empty groups)."""
    c = as_counts(counts, domain)
    diff, empty = _distributions(c, domain)
    if distance == "equal":
        d = emd_equal(diff)
    elif distance == "ordered":
        d = emd_ordered(diff, value_order(domain))
    elif distance == "hierarchical":
        if domain.hierarchy is None:
            raise ParameterError(
                "t-closeness with distance='hierarchical' needs a hierarchy on the SA",
                parameter="distance",
                value=distance,
            )
        indicator, height = hierarchy_nodes(domain.hierarchy, domain.n_values)
        d = emd_hierarchical(diff, indicator, height)
    else:  # pragma: no cover - checked in __init__
        raise ParameterError(f"unknown distance {distance!r}", parameter="distance")
    d = np.clip(d, 0.0, 1.0)
    d[empty] = 1.0
    return d


class TCloseness(PrivacyModel):
    """t-closeness: every group's SA distribution within EMD ``t`` of the table's.

    Parameters
    ----------
    t:
        t in [0, 1].
    distance:
        Ground distance between SA values: ``"equal"`` (default), ``"ordered"`` or
        ``"hierarchical"`` (see the module docstring).

    References
    ----------
    Li, Li, Venkatasubramanian, ICDE 2007, §4; paper 001 §5.
    """

    name: ClassVar[str] = "t-closeness"
    monotonic: ClassVar[bool] = True
    higher_is_stronger: ClassVar[bool] = False

    def __init__(self, *, t: float, distance: str = "equal") -> None:
        self.t = check_real("t", t, model=self.name, low=0.0, high=1.0)
        self.distance = check_choice("distance", distance, DISTANCES, model=self.name)

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return emd(counts, domain, self.distance)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        c = as_counts(counts, domain)
        return (emd(c, domain, self.distance) <= self.t + TOL) & (c.sum(axis=1) > 0)

    def validate(self, domain: SADomain) -> None:
        if self.distance == "hierarchical":
            if domain.hierarchy is None:
                raise ParameterError(
                    "t-closeness with distance='hierarchical' needs a hierarchy on the SA",
                    parameter="distance",
                    value=self.distance,
                )
            hierarchy_nodes(domain.hierarchy, domain.n_values)
        super().validate(domain)

    def params(self) -> dict[str, Any]:
        return {"t": self.t, "distance": self.distance}
