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
    ``D = 1/(m−1) Σ_{i=1..m} |Σ_{j<=i} (p_j − q_j)|`` (the paper's numerical attributes).
    m counts every value of the SA domain, present in the table or not.
``"hierarchical"``
    values are the leaves of ``domain.hierarchy`` (:class:`openbook.hierarchy.Hierarchy`:
    ``ancestor_table[j, leaf]`` = the leaf's ancestor j levels up, leaves = SA codes at
    level 0, the root at level ``height`` = H) and ``d(i, j) = height(LCA(i, j)) / H``
    (the paper's categorical attributes with a hierarchy), where the height of a node is
    its subtree height — the longest path down to a leaf; with all leaves at the same depth
    that is its level. The paper's formula: for each node N,
    ``extra(N) = Σ_{leaves under N} (p − q)``, ``pos_extra(N)`` / ``neg_extra(N)`` the sums
    of the positive / negative extras of its children,
    ``cost(N) = height(N)/H · min(pos_extra(N), neg_extra(N))`` and
    ``D = Σ_{internal N} cost(N)``.
    Since ``min(pos, neg) = (Σ_C |extra(C)| − |extra(N)|)/2``, each non-root node C enters
    once as a child, weight height(parent)/(2H), and once as a parent, weight
    −height(C)/(2H); the sum telescopes to the flow across the edges of a tree whose node C
    spans heights height(C) .. height(parent)−1:
    ``D = 1/(2H) Σ_{ℓ=0..H−1} Σ_{nodes N holding leaves at height ℓ} |extra(N)|``. It is
    computed for all groups at once from prefix sums over the leaves in depth-first order
    (every node's leaves are contiguous there). A leaf shallower than the tree may repeat
    the root (ARX-style clamping, as ``Hierarchy`` does) or itself (padding) up its
    column; only its chain of distinct ancestors matters. The unit tests check the result
    against a min-cost-flow linear program, the property tests against the paper's formula.

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

from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..errors import ParameterError
from ._checks import TOL, as_counts, check_choice, check_real
from .base import PrivacyModel, SADomain

DISTANCES = ("equal", "ordered", "hierarchical")


def distribution_diff(counts: np.ndarray, domain: SADomain) -> tuple[np.ndarray, np.ndarray]:
    """``(D, empty)``: ``D[v, g] = p_g(v) − q(v)``, each group's SA distribution minus the
    table's, laid out **values x groups** (one contiguous row per SA value, so the kernels
    below are a few whole-row operations per value), and the mask of empty groups."""
    g = np.asarray(domain.global_counts, dtype=np.float64)
    total = g.sum()
    if total <= 0:
        raise ParameterError(
            "t-closeness needs the table's SA distribution, but domain.global_counts is empty",
            parameter="global_counts",
        )
    n = counts.sum(axis=1)
    empty = n == 0
    inv = 1.0 / np.where(empty, 1, n)
    inv[empty] = 0.0
    diff = np.empty((counts.shape[1], counts.shape[0]))
    np.multiply(counts.T, inv[None, :], out=diff)
    diff -= (g / total)[:, None]
    return diff, empty


def emd_equal(diff: np.ndarray) -> np.ndarray:
    """Equal-distance EMD (total variation) of each group (column of ``diff``)."""
    return 0.5 * np.abs(diff).sum(axis=0)


def value_order(domain: SADomain) -> np.ndarray:
    """SA codes in ordered-distance order: by ``domain.numeric`` (stable) or by code."""
    if domain.numeric is None:
        return np.arange(domain.n_values)
    return np.argsort(np.asarray(domain.numeric, dtype=np.float64), kind="stable")


def emd_ordered(diff: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Ordered-distance EMD of each group (column of ``diff``), values ranked by ``order``."""
    m, n_groups = diff.shape
    total = np.zeros(n_groups)
    if m <= 1:
        return total
    running = np.zeros(n_groups)
    for v in order[:-1]:  # a loop over SA values, each step a whole-row operation
        running += diff[v]
        total += np.abs(running)
    return total / (m - 1)


class TreeLayout(NamedTuple):
    """A hierarchy ready for :func:`emd_hierarchical`: ``levels[ℓ, leaf]`` = the node that
    holds the leaf at height ℓ (the highest ancestor-or-self of height <= ℓ), the leaves in
    depth-first order (every node's leaves contiguous), the first position of each node of
    heights 0..H−1 in that order, and H."""

    levels: np.ndarray
    order: np.ndarray
    starts: tuple[np.ndarray, ...]
    height: int


def _not_a_tree(detail: str) -> ParameterError:
    return ParameterError(f"the SA hierarchy is not a tree: {detail}", parameter="hierarchy")


def tree_layout(hierarchy: Any, n_values: int) -> TreeLayout:
    """Read the SA hierarchy's ``ancestor_table`` and lay it out for :func:`emd_hierarchical`.

    Node ids are global (the same id is the same node at every level; leaves are the codes
    ``0..m−1`` at level 0), as :class:`openbook.hierarchy.Hierarchy` writes them. A leaf
    shallower than the tree repeats a node up its column — the root (ARX-style clamping)
    or itself (padding); either way only the chain of distinct nodes counts. The height of
    a node is its subtree height (the longest path down to a leaf, read off the chains);
    with uniform depth that is simply its level. Raises ParameterError when the table is
    malformed or a node has two parents.
    """
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
    if not np.array_equal(table[0], np.arange(n_values)):
        raise ParameterError(
            "the SA hierarchy's ancestor_table must list the leaves (SA codes 0..m-1) at "
            "level 0 and the root last",
            parameter="hierarchy",
        )
    # Loops over leaves x levels of a small table (computed once per model and domain).
    chains: list[list[int]] = []
    node_height: dict[int, int] = {}
    parent: dict[int, int] = {}
    for leaf in range(n_values):
        chain = [leaf]
        for j in range(1, height + 1):
            node = int(table[j, leaf])
            if node == chain[-1]:
                continue
            if node < n_values or node in chain:
                raise _not_a_tree(f"leaf {leaf} has leaf or repeated node {node} above it")
            if parent.setdefault(chain[-1], node) != node:
                raise _not_a_tree(
                    f"node {chain[-1]} has two parents ({parent[chain[-1]]} and {node}); "
                    "ancestor_table must list the leaves at level 0 and the root last"
                )
            chain.append(node)
            # subtree height: the longest path down to a leaf (its distance up this chain)
            node_height[node] = max(node_height.get(node, 0), len(chain) - 1)
        chains.append(chain)
    if n_values and np.unique(table[height]).size != 1:
        raise ParameterError(
            "the SA hierarchy must have a single root: its top level (ancestor_table[height]) "
            f"holds {np.unique(table[height]).size} nodes",
            parameter="hierarchy",
        )
    height = max(node_height.values(), default=0)  # the root's subtree height
    levels = np.empty((height + 1, n_values), dtype=np.int64)
    for leaf, chain in enumerate(chains):
        k = 0
        for lv in range(height + 1):
            while k + 1 < len(chain) and node_height[chain[k + 1]] <= lv:
                k += 1
            levels[lv, leaf] = chain[k]
    order = np.lexsort(levels) if n_values else np.arange(0)  # top level is the primary key
    starts = tuple(
        np.flatnonzero(np.r_[True, levels[j][order][1:] != levels[j][order][:-1]])
        for j in range(height)
    )
    return TreeLayout(levels=levels, order=order, starts=starts, height=height)


def emd_hierarchical(diff: np.ndarray, layout: TreeLayout) -> np.ndarray:
    """Hierarchical-distance EMD of each group (column of ``diff``): ``1/(2H)`` times the
    sum over non-root nodes N of ``|extra(N)|`` (see the module docstring)."""
    n_groups = diff.shape[1]
    if layout.height <= 0 or diff.shape[0] == 0:
        return np.zeros(n_groups)
    m = diff.shape[0]
    rows = diff[layout.order]
    prefix = np.zeros((m + 1, n_groups))  # prefix[i] = sum of the first i leaves' rows
    for i in range(m):
        np.add(prefix[i], rows[i], out=prefix[i + 1])
    total = np.zeros(n_groups)
    for starts in layout.starts:  # extra(N) of every node of one level at once
        if len(starts) == m:  # every node a single leaf
            total += np.abs(rows).sum(axis=0)
        else:
            ends = np.r_[starts[1:], m]
            total += np.abs(prefix[ends] - prefix[starts]).sum(axis=0)
    return total / (2.0 * layout.height)


def emd(
    counts: np.ndarray, domain: SADomain, distance: str, layout: TreeLayout | None = None
) -> np.ndarray:
    """EMD of each group's SA distribution to the table's (1 for empty groups).

    ``layout`` is the hierarchy's :func:`tree_layout` when already computed."""
    c = as_counts(counts, domain)
    diff, empty = distribution_diff(c, domain)
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
        if layout is None:
            layout = tree_layout(domain.hierarchy, domain.n_values)
        d = emd_hierarchical(diff, layout)
    else:  # pragma: no cover - checked in __init__
        raise ParameterError(f"unknown distance {distance!r}", parameter="distance")
    d = np.clip(d, 0.0, 1.0)
    d[empty] = 1.0
    return d


def box_terms(distance: str, domain: SADomain,
              layout: TreeLayout | None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] | None:
    """The distance as weighted sums of ``|Σ_{v in S} (p_v − q_v)|`` over sets S of values,
    each set a range ``[start, end)`` of a permutation of the values:
    ``[(order, starts, ends, weight), ...]`` (equal: single values, weight ½; ordered: the
    first i values in order for i < m, weight 1/(m−1); hierarchical: every node below the
    root at each height, weight 1/(2H), as :func:`emd_hierarchical` sums them); ``None`` for
    the hierarchical distance without a hierarchy."""
    m = domain.n_values
    if distance == "equal":
        idx = np.arange(m)
        return [(idx, idx, idx + 1, 0.5)]
    if distance == "ordered":
        if m <= 1:
            return []
        return [(value_order(domain), np.zeros(m - 1, dtype=np.int64), np.arange(1, m), 1.0 / (m - 1))]
    if layout is None:
        return None  # no hierarchy to read: no box is decided
    if layout.height <= 0 or m == 0:
        return []
    return [(layout.order, starts, np.r_[starts[1:], m], 1.0 / (2.0 * layout.height)) for starts in layout.starts]


#: group counts times the table's size must stay exact in floats (``2^52``) for the integer verdict
_EXACT_LIMIT = float(2**52)
#: count matrices with more entries than this are summed by a compiled loop (no temporaries)
_COMPILED_ENTRIES = 1 << 21


def exact_rows(n: np.ndarray, N: int, m: int, layout: TreeLayout | None) -> np.ndarray:
    """The groups (sizes ``n``) whose :func:`scaled_excess` is exact: each term ``|Σ_S e|``
    is at most ``n N``, and the terms sum to at most ``2 n N`` per value or per level of the
    tree — ``2 max(m, H) n N`` in all — which must stay below :data:`_EXACT_LIMIT`."""
    width = max(m, 1 if layout is None else layout.height, 1)
    return np.asarray(n, dtype=np.float64) * float(N) * 2.0 * width < _EXACT_LIMIT


def scaled_excess(c: np.ndarray, domain: SADomain, distance: str,
                  layout: TreeLayout | None) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(S, n, scale)`` with ``S = D · scale · n · N`` for each group (``n`` its size, ``N``
    the table's), as exact integers: ``e_v = c_v · N − n · g_v`` is ``n · N · (p_v − q_v)``, so
    the equal distance is ``Σ |e_v| / 2``, the ordered one ``Σ_{i<m} |Σ_{j<=i} e_j| / (m − 1)``
    and the hierarchical one ``Σ_nodes |Σ_{leaves} e| / (2H)`` (module docstring) — ``scale``
    = 2, m − 1 or 2H. ``S`` is exact for the groups :func:`exact_rows` names and meaningless
    for the others, which :meth:`TCloseness.holds` sends to the floating distance — group by
    group, so a group gets the same verdict in every call. ``None`` without a table
    distribution or a hierarchy to read."""
    g = np.asarray(domain.global_counts, dtype=np.int64)
    N = int(g.sum())
    m = c.shape[1]
    if N <= 0:
        return None
    if distance == "hierarchical" and (layout is None or layout.height <= 0 or m == 0):
        return None
    if distance in ("equal", "ordered") and c.size > _COMPILED_ENTRIES:
        order = np.arange(m) if distance == "equal" else value_order(domain).astype(np.int64)
        S, n = _compiled()(np.ascontiguousarray(c, dtype=np.int64), g, order, distance == "ordered")
        return S.astype(np.float64), n, (2.0 if distance == "equal" else float(max(m - 1, 1)))
    n = c.sum(axis=1)
    # rows past the exact range are zeroed first: their integers must not wrap around
    safe = np.where(exact_rows(n, N, m, layout if distance == "hierarchical" else None)[:, None], c, 0)
    ns = safe.sum(axis=1, keepdims=True)
    if distance == "equal":
        e = safe * N - ns * g[None, :]
        return np.abs(e).sum(axis=1).astype(np.float64), n, 2.0
    if distance == "ordered":
        if m <= 1:
            return np.zeros(c.shape[0]), n, 1.0
        order = value_order(domain)
        e = safe[:, order] * N - ns * g[order][None, :]
        return np.abs(np.cumsum(e, axis=1)[:, :-1]).sum(axis=1).astype(np.float64), n, float(m - 1)
    assert layout is not None
    e = safe[:, layout.order] * N - ns * g[layout.order][None, :]
    prefix = np.concatenate([np.zeros((c.shape[0], 1), dtype=np.int64), np.cumsum(e, axis=1)], axis=1)
    S = np.zeros(c.shape[0], dtype=np.int64)
    for starts in layout.starts:
        ends = np.r_[starts[1:], m]
        S += np.abs(prefix[:, ends] - prefix[:, starts]).sum(axis=1)
    return S.astype(np.float64), n, 2.0 * layout.height


def _excess_loop(c, g, order, cumulative):  # pragma: no cover - compiled by _compiled
    """``(S, n)`` of :func:`scaled_excess` row by row, in one pass: the equal distance
    (``cumulative`` False) or the ordered one over ``order`` — the same integers as the
    array expressions (rows past the exact range may wrap; the caller discards them)."""
    M, V = c.shape
    N = 0
    for v in range(V):
        N += g[v]
    out = np.zeros(M, np.int64)
    sizes = np.zeros(M, np.int64)
    for i in range(M):
        n = 0
        for v in range(V):
            n += c[i, v]
        sizes[i] = n
        s = 0
        run = 0
        for j in range(V - 1 if cumulative else V):
            v = order[j]
            e = c[i, v] * N - n * g[v]
            if cumulative:
                run += e
                s += run if run >= 0 else -run
            else:
                s += e if e >= 0 else -e
        out[i] = s
    return out, sizes


#: the range :func:`_interval_loop` iterates its sequences with: ``range`` until the kernel is
#: compiled, numba's parallel range from then on (numba is imported only when it is needed)
prange = range


def _interval_loop(P, g, order, cumulative, ts, N, first_only):  # pragma: no cover - compiled by _compiled
    """``H[w, i, j]`` of :meth:`TCloseness.holds_intervals`: the counts of buckets ``i..j``
    from the prefix sums ``P (W, B+1, V)``, their :func:`scaled_excess` in integers (equal,
    or ordered over ``order``) and the verdict ``S <= ts · n · N`` in the same floating
    operations as :meth:`TCloseness.holds` (``ts`` = (t + TOL) · scale). ``first_only``: per
    start ``i`` only the first satisfying ``j`` and ``j = B-1`` are computed (the rest stay
    False; :func:`openbook.models.base.first_and_last`)."""
    W = P.shape[0]
    B = P.shape[1] - 1
    V = P.shape[2]
    H = np.zeros((W, B, B), np.bool_)
    for w in prange(W):
        for i in range(B):
            j = i
            while j < B:
                n = 0
                for v in range(V):
                    n += P[w, j + 1, v] - P[w, i, v]
                if n <= 0:
                    j += 1
                    continue
                s = 0
                run = 0
                for k in range(V - 1 if cumulative else V):
                    v = order[k]
                    e = (P[w, j + 1, v] - P[w, i, v]) * N - n * g[v]
                    if cumulative:
                        run += e
                        s += run if run >= 0 else -run
                    else:
                        s += e if e >= 0 else -e
                h = float(s) <= ts * float(n) * float(N)
                H[w, i, j] = h
                if first_only and h and j < B - 1:
                    j = B - 1  # the first satisfying end is found: only the last one is left
                else:
                    j += 1
    return H


_KERNELS: dict[str, Any] = {}


def _compiled() -> Any:
    """The compiled :func:`_excess_loop` (numba imported on first use only: small tables
    never load it)."""
    if "loop" not in _KERNELS:
        from numba import njit

        _KERNELS["loop"] = njit(cache=True)(_excess_loop)
    return _KERNELS["loop"]


def _compiled_intervals() -> Any:
    """The compiled :func:`_interval_loop` (parallel over the sequences)."""
    if "intervals" not in _KERNELS:
        global prange
        from numba import njit, prange as parallel_range

        prange = parallel_range  # the loop's range becomes numba's parallel one when it is compiled
        _KERNELS["intervals"] = njit(cache=True, parallel=True)(_interval_loop)
    return _KERNELS["intervals"]


def distribution_distance_diff(dist: np.ndarray, domain: SADomain) -> np.ndarray:
    """``D[v, i] = P_i(v) − q(v)`` for probability rows ``dist`` (values x rows)."""
    g = np.asarray(domain.global_counts, dtype=np.float64)
    return np.asarray(dist, dtype=np.float64).T - (g / max(g.sum(), 1e-300))[:, None]


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
        self._cache: tuple[Any, int, TreeLayout] | None = None

    def _layout(self, domain: SADomain) -> TreeLayout | None:
        """The hierarchy's layout, cached for the last hierarchy seen (algorithms call
        ``holds`` many times with the same domain)."""
        if self.distance != "hierarchical" or domain.hierarchy is None:
            return None
        cached = self._cache
        if cached is None or cached[0] is not domain.hierarchy or cached[1] != domain.n_values:
            layout = tree_layout(domain.hierarchy, domain.n_values)
            self._cache = cached = (domain.hierarchy, domain.n_values, layout)
        return cached[2]

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return emd(counts, domain, self.distance, self._layout(domain))

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        """``D <= t + 1e-12`` for each non-empty group, decided in integers: with ``n`` the
        group's size and ``N`` the table's, ``D · scale · n · N`` is an integer sum
        (:func:`scaled_excess`), compared with ``(t + 1e-12) · scale · n · N`` — so every
        caller (the algorithms, the verification, the replay's re-runs) gets the same verdict
        for the same counts, however many groups it asks about at once. Counts too large for
        exact integers fall back to the floating distance."""
        c = as_counts(counts, domain)
        exact = scaled_excess(c, domain, self.distance, self._layout(domain))
        if exact is None:
            d = emd(c, domain, self.distance, self._layout(domain))
            return (d <= self.t + TOL) & (c.sum(axis=1) > 0)
        S, n, scale = exact
        total = float(np.asarray(domain.global_counts, dtype=np.int64).sum())
        nf = n.astype(np.float64)
        out = S <= (self.t + TOL) * scale * nf * total
        layout = self._layout(domain) if self.distance == "hierarchical" else None
        big = ~exact_rows(n, int(total), c.shape[1], layout)  # the floating distance there
        if big.any():
            out[big] = emd(c[big], domain, self.distance, self._layout(domain)) <= self.t + TOL
        return out & (n > 0)

    def holds_intervals(self, prefix: np.ndarray, domain: SADomain, first_only: bool = False) -> np.ndarray:
        """:meth:`PrivacyModel.holds_intervals` in one compiled pass for the equal and ordered
        distances (the verdicts :meth:`holds` gives, in the same integers and floating
        operations), when every run's counts stay in the exact range; else the generic one.
        With ``first_only`` the pass stops at each start's first satisfying run (and then
        computes the last one)."""
        g = np.asarray(domain.global_counts, dtype=np.int64)
        N = int(g.sum())
        m = prefix.shape[2]
        if self.distance not in ("equal", "ordered") or N <= 0 or prefix.shape[1] < 2 or (
                self.distance == "ordered" and m <= 1):
            return super().holds_intervals(prefix, domain, first_only)
        most = int(prefix[:, -1].sum(axis=1).max(initial=0)) if prefix.size else 0
        if not bool(exact_rows(np.array([most]), N, m, None)[0]):
            return super().holds_intervals(prefix, domain, first_only)
        if self.distance == "equal":
            order, scale = np.arange(m, dtype=np.int64), 2.0
        else:
            order, scale = value_order(domain).astype(np.int64), float(m - 1)
        return _compiled_intervals()(np.ascontiguousarray(prefix, dtype=np.int64), g, order,
                                     self.distance == "ordered", (self.t + TOL) * scale, N, bool(first_only))

    def validate(self, domain: SADomain) -> None:
        if self.distance == "hierarchical":
            if domain.hierarchy is None:
                raise ParameterError(
                    "t-closeness with distance='hierarchical' needs a hierarchy on the SA",
                    parameter="distance",
                    value=self.distance,
                )
            self._layout(domain)
        super().validate(domain)

    def box_verdict(self, lo: np.ndarray, hi: np.ndarray, total: np.ndarray, domain: SADomain) -> np.ndarray:
        """Bounds of the distance over a box of counts (``lo <= counts <= hi``, summing to
        ``total``): each distance is a weighted sum of terms ``|C_S/n − Q_S|`` over sets S of
        values (one value for the equal distance, the first i values in order for the ordered
        one, a node's leaves for the hierarchical one — see :func:`box_terms`), and the count
        ``C_S`` of a set lies in ``[max(Σ_S lo, n − Σ_{not S} hi), min(Σ_S hi, n − Σ_{not S} lo)]``;
        each term is bounded on its own, above by the farther end and below by the distance of
        ``n Q_S`` to that interval. For the equal distance the total variation is also the sum of
        the positive (or negative) parts, bounded by ``Σ max(0, hi/n − q)`` above and
        ``Σ max(0, lo/n − q)`` below. Every point holds when the upper bound is at most t, none
        when the lower bound exceeds it (or the group is empty); a margin of 1e-9 absorbs
        rounding, so the verdict never contradicts :meth:`holds`."""
        lo = np.asarray(lo, dtype=np.float64)
        hi = np.asarray(hi, dtype=np.float64)
        n = np.asarray(total, dtype=np.float64)
        out = np.full(n.shape[0], -1, dtype=np.int8)
        g = np.asarray(domain.global_counts, dtype=np.float64)
        if n.shape[0] == 0 or g.sum() <= 0:
            return out
        q = g / g.sum()
        safe_n = np.where(n > 0, n, 1.0)[:, None]
        upper = np.zeros(n.shape[0])
        lower = np.zeros(n.shape[0])
        terms = box_terms(self.distance, domain, self._layout(domain))
        if terms is None:
            return out
        for order, starts, ends, weight in terms:
            lo_c = np.concatenate([np.zeros((lo.shape[0], 1)), np.cumsum(lo[:, order], axis=1)], axis=1)
            hi_c = np.concatenate([np.zeros((hi.shape[0], 1)), np.cumsum(hi[:, order], axis=1)], axis=1)
            q_c = np.concatenate([[0.0], np.cumsum(q[order])])
            in_lo, in_hi = lo_c[:, ends] - lo_c[:, starts], hi_c[:, ends] - hi_c[:, starts]
            out_lo, out_hi = lo_c[:, -1:] - in_lo, hi_c[:, -1:] - in_hi
            c_min = np.maximum(in_lo, n[:, None] - out_hi) / safe_n
            c_max = np.minimum(in_hi, n[:, None] - out_lo) / safe_n
            q_s = (q_c[ends] - q_c[starts])[None, :]
            upper += weight * np.maximum(np.abs(c_min - q_s), np.abs(c_max - q_s)).sum(axis=1)
            lower += weight * np.maximum(0.0, np.maximum(q_s - c_max, c_min - q_s)).sum(axis=1)
        if self.distance == "equal":
            upper = np.minimum(upper, np.minimum(np.maximum(0.0, hi / safe_n - q).sum(axis=1),
                                                 np.maximum(0.0, q - lo / safe_n).sum(axis=1)))
            lower = np.maximum(lower, np.maximum(np.maximum(0.0, lo / safe_n - q).sum(axis=1),
                                                 np.maximum(0.0, q - hi / safe_n).sum(axis=1)))
        margin = 1e-9
        out[(n > 0) & (upper <= self.t - margin)] = 1
        out[(n <= 0) | (lower > self.t + TOL + margin)] = 0
        return out

    def distances(self, dist: np.ndarray, domain: SADomain) -> np.ndarray:
        """EMD of each probability row of ``dist`` (``(n, n_values)``, e.g. an adversary's
        posterior distributions) to the table's distribution, under the model's distance."""
        diff = distribution_distance_diff(dist, domain)
        if self.distance == "equal":
            return emd_equal(diff)
        if self.distance == "ordered":
            return emd_ordered(diff, value_order(domain))
        layout = self._layout(domain)
        if layout is None:
            raise ParameterError("t-closeness with distance='hierarchical' needs a hierarchy on the SA",
                                 parameter="distance", value=self.distance)
        return emd_hierarchical(diff, layout)

    def error_bound(self, err: np.ndarray, domain: SADomain) -> np.ndarray:
        """An upper bound of ``|d(P + e) − d(P)|`` for per-value errors ``|e| <= err`` (rows): by
        the triangle inequality the distance moves by at most the EMD-norm of ``e`` — ``½ Σ err``
        for the equal distance and the hierarchical one (its ground distances are at most 1),
        the cumulative sums for the ordered one."""
        err = np.abs(np.asarray(err, dtype=np.float64))
        if self.distance == "ordered" and err.shape[1] > 1:
            order = value_order(domain)
            return np.cumsum(err[:, order], axis=1)[:, :-1].sum(axis=1) / (err.shape[1] - 1)
        return 0.5 * err.sum(axis=1)

    def distance_bound(self, post: np.ndarray, err: np.ndarray, domain: SADomain) -> np.ndarray:
        """An upper bound of the distance of each true distribution within ``err`` of the rows of
        ``post`` (:meth:`error_bound`), never above the farthest any distribution can be: the
        EMD is convex in the distribution, so its largest value over the simplex is at a vertex
        (all mass on one value) — a sampled figure is not stated as a distance no posterior has."""
        k = np.asarray(post).shape[1]
        farthest = float(self.distances(np.eye(k), domain).max()) if k else 0.0
        return np.minimum(self.distances(post, domain) + self.error_bound(err, domain), farthest)

    def params(self) -> dict[str, Any]:
        return {"t": self.t, "distance": self.distance}

