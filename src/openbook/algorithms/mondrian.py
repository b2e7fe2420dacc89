"""Mondrian multidimensional partitioning, strict and relaxed (LeFevre, DeWitt,
Ramakrishnan, ICDE 2006; paper 000 §2.3, §3.2, App. B (b)).

Mondrian treats each row's QIs as a point and splits the space top-down: a node picks the
widest dimension (width normalised by the column's whole-table span), cuts at the median,
and keeps the cut only when it is *allowable* — both children satisfy the privacy model;
otherwise the next-widest dimension is tried, and a node with no allowable cut is a group.

Cuts (``values`` are a dimension's coordinates in the node, ``r`` rows):

strict (``strict=True``)
    ``m`` = the upper median ``sorted(values)[r // 2]``; left = ``values < m``, right =
    ``values >= m`` — every point on one side of the divider goes to one child (App. B (b):
    ``a, b, c, c, c, d`` splits ``{a, b} | {c, c, c, d}``). When ``m`` is the node's minimum,
    the minimum's points go left instead (``values <= m``). A dimension whose values are all
    equal cannot be cut.
relaxed (``strict=False``)
    the left child takes the ``⌈r/2⌉`` smallest points; points equal to the median are
    shared out in the node's current row order so the children differ in size by at most 1
    (§3.2: the even-split variant, immune to the minimality attack by Theorem 5).

Categorical columns (``categorical=``):

``"ordered"`` (default)  coordinates are the codes (hierarchy leaf order, or sorted labels);
                         a strict cut then splits the node's *value set* in two (at the row
                         median in code order), and the width is, as in anonypy, the number
                         of distinct values in the node over the domain size.
``"hierarchy"``          strict cuts only at boundaries between the children of the node's
                         lowest common ancestor in the column's hierarchy (coordinates are
                         leaf positions in depth-first order); the boundary that best
                         balances the children is taken; the width is
                         ``(coverage(LCA) - 1) / (n_leaves - 1)``. Relaxed Mondrian cuts the
                         same depth-first order at the median (children differ by <= 1).

Speed: the partitioning runs breadth-first over all open nodes at once. The QI codes are
copied once into an ``(n, d)`` matrix whose rows are kept grouped by node (each node a
contiguous segment); numba kernels compute per-node ranges, plan the cut of every node
(median by counting over the node's value range, or a sort when the range is wide) with
both children's SA counts, and apply the accepted cuts by a stable in-place partition of the
segments. The privacy model is called once per level and dimension rank, vectorised over
all nodes — never once per node.

Decision functions for replay: :func:`mondrian_cut` (the children of a node, given its
coordinates) and :func:`mondrian_would_split`. The split tree is in ``Partition.extra``:
``tree_lo``/``tree_hi``/``tree_parent``/``tree_dim``/``tree_value``/``tree_ties``/
``tree_group`` (positions refer to ``extra["row_order"]``, the rows grouped by node;
``tree_dim = -1`` for a group) and ``coord_<j>`` (code → coordinate of QI ``j``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import PrivacyModel, SADomain
from ..release import Partition
from .base import Anonymizer
from .ordering import size_floor

CATEGORICAL = ("ordered", "hierarchy")
_HIST_SLACK = 64


# ---------------------------------------------------------------------------------------
# public decision functions
# ---------------------------------------------------------------------------------------
def mondrian_cut(values: np.ndarray, strict: bool) -> tuple[int, int, np.ndarray]:
    """The cut Mondrian makes on one dimension of a node (ordered coordinates).

    Returns ``(m, t, left)``: row ``i`` goes left iff ``values[i] < m``, or
    ``values[i] == m`` and it is among the first ``t`` such rows in the given row order;
    ``left`` is that boolean mask. Raises ``ValueError`` when the node cannot be cut on
    this dimension (fewer than 2 rows, or all values equal under a strict cut).
    """
    v = np.asarray(values)
    r = v.size
    if r < 2:
        raise ValueError("a node of fewer than 2 rows cannot be cut")
    sv = np.sort(v, kind="stable")
    if strict:
        m = sv[r // 2]
        lt = int(np.searchsorted(sv, m, "left"))
        if lt > 0:
            t = 0
        else:
            le = int(np.searchsorted(sv, m, "right"))
            if le == r:
                raise ValueError("all values are equal: no strict cut")
            t = le
    else:
        h = (r + 1) // 2
        m = sv[h - 1]
        lt = int(np.searchsorted(sv, m, "left"))
        t = h - lt
    eq = v == m
    rank = np.cumsum(eq) - 1
    left = (v < m) | (eq & (rank < t))
    return int(m), int(t), left


def mondrian_would_split(left_counts: np.ndarray, right_counts: np.ndarray, model: PrivacyModel,
                         domain: SADomain) -> Any:
    """Is the cut allowable: do both children satisfy ``model``? (vector → bool,
    matrices → bool array)."""
    lc, rc = np.asarray(left_counts), np.asarray(right_counts)
    one = lc.ndim == 1
    ok = (np.asarray(model.holds(np.atleast_2d(lc), domain), dtype=bool)
          & np.asarray(model.holds(np.atleast_2d(rc), domain), dtype=bool))
    return bool(ok[0]) if one else ok


# ---------------------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _ranges(X, lo, hi, distinct_dims, cmax):  # pragma: no cover - compiled
    """Per node and dimension: min and max coordinate, and the number of distinct values
    for the dimensions flagged in ``distinct_dims`` (stamp arrays, O(rows))."""
    m = lo.size
    d = X.shape[1]
    mn = np.empty((m, d), np.int64)
    mx = np.empty((m, d), np.int64)
    nd = np.zeros((m, d), np.int64)
    stamp = np.full((d, cmax), -1, np.int64)
    for i in range(m):
        for j in range(d):
            mn[i, j] = 1 << 62
            mx[i, j] = -1
        for r in range(lo[i], hi[i]):
            for j in range(d):
                v = X[r, j]
                if v < mn[i, j]:
                    mn[i, j] = v
                if v > mx[i, j]:
                    mx[i, j] = v
                if distinct_dims[j] and stamp[j, v] != i:
                    stamp[j, v] = i
                    nd[i, j] += 1
    return mn, mx, nd


@njit(cache=True)
def _plan(X, sa, lo, hi, dim, mn, mx, hier_level, hanc, strict, n_sa):  # pragma: no cover
    """Cut of each node on its dimension: (valid, m, t, n_left, left counts, right counts).
    ``hier_level[i] >= 1``: hierarchy cut below LCA level ``hier_level[i]``."""
    c = lo.size
    valid = np.zeros(c, np.bool_)
    mval = np.zeros(c, np.int64)
    tval = np.zeros(c, np.int64)
    nleft = np.zeros(c, np.int64)
    cl = np.zeros((c, n_sa), np.int64)
    cr = np.zeros((c, n_sa), np.int64)
    for i in range(c):
        j = dim[i]
        a, b = lo[i], hi[i]
        r = b - a
        vmin, vmax = mn[i], mx[i]
        R = vmax - vmin + 1
        m = 0
        t = 0
        ok = True
        hl = hier_level[i]
        if hl >= 1 or R <= 4 * r + _HIST_SLACK:
            hist = np.zeros(R, np.int64)
            for q in range(a, b):
                hist[X[q, j] - vmin] += 1
            if hl >= 1:
                best = -1
                bestgap = 1 << 62
                acc = hist[0]
                for p in range(1, R):
                    if hanc[j, hl - 1, vmin + p] != hanc[j, hl - 1, vmin + p - 1]:
                        gap = abs(2 * acc - r)
                        if gap < bestgap:
                            bestgap = gap
                            best = p
                    acc += hist[p]
                if best < 0:
                    ok = False
                else:
                    m = vmin + best
                    t = 0
            elif strict:
                target = r // 2  # index of the upper median
                acc = 0
                p = 0
                while acc + hist[p] <= target:
                    acc += hist[p]
                    p += 1
                lt = acc
                if lt > 0:
                    m = vmin + p
                    t = 0
                else:
                    if hist[p] == r:
                        ok = False
                    m = vmin + p
                    t = hist[p]
            else:
                h = (r + 1) // 2
                acc = 0
                p = 0
                while acc + hist[p] < h:
                    acc += hist[p]
                    p += 1
                m = vmin + p
                t = h - acc
        else:
            tmp = np.empty(r, np.int64)
            for q in range(a, b):
                tmp[q - a] = X[q, j]
            tmp.sort()
            if strict:
                m = tmp[r // 2]
                lt = np.searchsorted(tmp, m, "left")
                if lt > 0:
                    t = 0
                else:
                    le = np.searchsorted(tmp, m, "right")
                    if le == r:
                        ok = False
                    t = le
            else:
                h = (r + 1) // 2
                m = tmp[h - 1]
                lt = np.searchsorted(tmp, m, "left")
                t = h - lt
        if not ok:
            continue
        seen = 0
        nl = 0
        for q in range(a, b):
            v = X[q, j]
            s = sa[q]
            if v < m or (v == m and seen < t):
                if v == m:
                    seen += 1
                cl[i, s] += 1
                nl += 1
            else:
                cr[i, s] += 1
        if nl == 0 or nl == r:
            continue
        valid[i] = True
        mval[i] = m
        tval[i] = t
        nleft[i] = nl
    return valid, mval, tval, nleft, cl, cr


@njit(cache=True)
def _apply(X, sa, rows, lo, hi, dim, mval, tval):  # pragma: no cover - compiled
    """Stable partition of each node's segment into its left then right child."""
    d = X.shape[1]
    for i in range(lo.size):
        a, b = lo[i], hi[i]
        r = b - a
        j = dim[i]
        m = mval[i]
        t = tval[i]
        bx = np.empty((r, d), X.dtype)
        bs = np.empty(r, sa.dtype)
        br = np.empty(r, rows.dtype)
        # left rows first, then right rows, each in their current order
        nl = 0
        seen = 0
        for q in range(a, b):
            v = X[q, j]
            if v < m or (v == m and seen < t):
                if v == m:
                    seen += 1
                for k in range(d):
                    bx[nl, k] = X[q, k]
                bs[nl] = sa[q]
                br[nl] = rows[q]
                nl += 1
        nr = nl
        seen = 0
        for q in range(a, b):
            v = X[q, j]
            if v < m or (v == m and seen < t):
                if v == m:
                    seen += 1
            else:
                for k in range(d):
                    bx[nr, k] = X[q, k]
                bs[nr] = sa[q]
                br[nr] = rows[q]
                nr += 1
        for q in range(r):
            for k in range(d):
                X[a + q, k] = bx[q, k]
            sa[a + q] = bs[q]
            rows[a + q] = br[q]


# ---------------------------------------------------------------------------------------
# coordinates
# ---------------------------------------------------------------------------------------
def _dfs_positions(h) -> np.ndarray:
    """Position of each leaf in the depth-first order of ``h`` (leaves under any node are
    then contiguous in a tree)."""
    order = np.lexsort(h.ancestor_table)  # last row (top level) is the primary key
    pos = np.empty(h.n_leaves, dtype=np.int64)
    pos[order] = np.arange(h.n_leaves)
    return pos


class _Dims:
    """Per-QI coordinates, spans and (hierarchy mode) ancestor tables in coordinate order."""

    def __init__(self, table: EncodedTable, categorical: str) -> None:
        d = len(table.qi_names)
        self.d = d
        self.coord: list[np.ndarray] = []
        self.value: list[np.ndarray] = []  # coordinate -> numeric value used for widths
        self.span = np.ones(d)
        self.hier = np.zeros(d, dtype=bool)
        #: categorical dims cut in code order: width = distinct values / domain (anonypy's span)
        self.distinct = np.zeros(d, dtype=np.bool_)
        self.card = np.array([table.columns[nm].n_values for nm in table.qi_names], dtype=np.int64)
        self.anc: list[np.ndarray | None] = []
        self.cov: list[np.ndarray | None] = []
        for j, name in enumerate(table.qi_names):
            col = table.columns[name]
            card = col.n_values
            numeric = col.kind in ("numeric", "ordinal")
            if not numeric and categorical == "hierarchy":
                h = table.hierarchy(name)
                pos = _dfs_positions(h)
                inv = np.argsort(pos)
                self.coord.append(pos)
                self.hier[j] = True
                self.anc.append(np.ascontiguousarray(h.ancestor_table[:, inv]))
                self.cov.append(np.asarray(h.coverage, dtype=np.float64))
                self.value.append(np.arange(card, dtype=np.float64))
            else:
                self.coord.append(np.arange(card, dtype=np.int64))
                vals = (np.asarray(col.numeric, dtype=np.float64) if numeric and col.numeric is not None
                        else np.arange(card, dtype=np.float64))
                self.value.append(vals)
                self.anc.append(None)
                self.cov.append(None)
                self.distinct[j] = not numeric
            v = self.value[-1]
            span = float(v.max() - v.min()) if v.size else 0.0
            if self.hier[j]:
                span = float(max(card - 1, 1))
            self.span[j] = span if span > 0 else 1.0
        self.cmax_distinct = int(max(self.card[self.distinct].max(initial=1), 1))
        hmax = max((a.shape[0] for a in self.anc if a is not None), default=1)
        cmax = max((c.size for c in self.coord), default=1)
        self.hanc = np.zeros((d, hmax, cmax), dtype=np.int64)
        for j, a in enumerate(self.anc):
            if a is not None:
                self.hanc[j, : a.shape[0], : a.shape[1]] = a
                self.hanc[j, a.shape[0]:, : a.shape[1]] = a[-1]

    def matrix(self, table: EncodedTable) -> np.ndarray:
        n = table.n_rows
        X = np.empty((n, self.d), dtype=np.int32)
        for j, name in enumerate(table.qi_names):
            codes = table.columns[name].codes
            if self.hier[j]:
                X[:, j] = self.coord[j][codes]
            else:
                X[:, j] = codes
        return X

    def widths(self, mn: np.ndarray, mx: np.ndarray, nd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalised widths ``(m, d)`` and, for hierarchy dims, the LCA level (else 0)."""
        m = mn.shape[0]
        w = np.zeros((m, self.d))
        lvl = np.zeros((m, self.d), dtype=np.int64)
        for j in range(self.d):
            if self.hier[j]:
                a = self.anc[j]
                eq = a[:, mn[:, j]] == a[:, mx[:, j]]
                L = np.argmax(eq, axis=0)
                node = a[L, mn[:, j]]
                nl = a.shape[1]
                w[:, j] = (self.cov[j][node] - 1) / max(nl - 1, 1)
                lvl[:, j] = L
            elif self.distinct[j]:
                w[:, j] = np.where(nd[:, j] > 1, nd[:, j] / self.card[j], 0.0)
            else:
                v = self.value[j]
                w[:, j] = (v[mx[:, j]] - v[mn[:, j]]) / self.span[j]
        return w, lvl


# ---------------------------------------------------------------------------------------
class Mondrian(Anonymizer):
    """Mondrian (LeFevre et al. 2006), strict or relaxed.

    Parameters
    ----------
    model: the privacy model every group must satisfy (any model of :mod:`openbook.models`).
    strict: ``True`` (default) for strict partitioning, ``False`` for relaxed (even-split).
    categorical: ``"ordered"`` (value-set cuts in code order, default) or ``"hierarchy"``.
    """

    name = "mondrian"
    release_kind = "generalized"
    minimality = True

    def __init__(self, *, model: PrivacyModel, strict: bool = True, categorical: str = "ordered",
                 seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.strict = strict
        self.categorical = categorical
        #: strict Mondrian follows minimality (App. B (b)); relaxed is even-split (§3.2)
        self.minimality = bool(strict)

    def params(self) -> dict[str, Any]:
        return {"strict": self.strict, "categorical": self.categorical}

    def _validate(self, table: EncodedTable) -> None:
        super()._validate(table)
        if not isinstance(self.strict, (bool, np.bool_)):
            raise ParameterError(f"mondrian: strict={self.strict!r} must be true or false", parameter="strict",
                                 value=self.strict)
        if self.categorical not in CATEGORICAL:
            raise ParameterError(f"mondrian: categorical={self.categorical!r} must be one of "
                                 f"{', '.join(CATEGORICAL)}", parameter="categorical", value=self.categorical)
        if not table.qi_names:
            raise ParameterError("mondrian: the table has no QI column to split on", parameter="qi")

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        res = mondrian_partition(table, self.model, strict=bool(self.strict), categorical=self.categorical)
        prov = self.provenance() | {"n_tree_nodes": int(res["tree_lo"].size)}
        group = res.pop("group")
        n_groups = res.pop("n_groups")
        return Partition(group, n_groups, provenance=prov, extra=res)


def mondrian_partition(table: EncodedTable, model: PrivacyModel, *, strict: bool = True,
                       categorical: str = "ordered") -> dict[str, Any]:
    """Breadth-first Mondrian over all open nodes at once; returns group labels and the tree."""
    n = table.n_rows
    dims = _Dims(table, categorical)
    d = dims.d
    X = dims.matrix(table)
    sa = np.array(table.sa_codes, dtype=np.int32, copy=True)  # permuted in place below
    rows = np.arange(n, dtype=np.int64)
    n_sa = table.columns[table.sa_name].n_values
    domain = table.sa_domain
    floor = max(1, size_floor(model))
    use_hier = dims.hier.any() and strict

    lo = np.array([0], dtype=np.int64)
    hi = np.array([n], dtype=np.int64)
    par = np.array([-1], dtype=np.int64)
    t_lo, t_hi, t_par, t_dim, t_val, t_tie = [], [], [], [], [], []
    next_id = 0
    while lo.size:
        m_nodes = lo.size
        ids = np.arange(next_id, next_id + m_nodes, dtype=np.int64)
        next_id += m_nodes
        r = hi - lo
        chosen = np.full(m_nodes, -1, dtype=np.int64)
        mv = np.zeros(m_nodes, dtype=np.int64)
        tv = np.zeros(m_nodes, dtype=np.int64)
        nlv = np.zeros(m_nodes, dtype=np.int64)
        splittable = np.flatnonzero(r >= max(2, 2 * floor))
        if splittable.size:
            mn, mx, nd = _ranges(X, lo[splittable], hi[splittable], dims.distinct, dims.cmax_distinct)
            w, lvl = dims.widths(mn, mx, nd)
            rank = np.argsort(-w, axis=1, kind="stable")
            undecided = np.ones(splittable.size, dtype=bool)
            for a in range(d):
                dj = rank[:, a]
                idx = np.flatnonzero(undecided & (w[np.arange(w.shape[0]), dj] > 0))
                if idx.size == 0:
                    break
                dsel = dj[idx]
                hl = lvl[idx, dsel] if use_hier else np.zeros(idx.size, dtype=np.int64)
                hl = np.where(dims.hier[dsel], hl, 0) if use_hier else hl
                valid, mval, tval, nleft, cl, cr = _plan(
                    X, sa, lo[splittable[idx]], hi[splittable[idx]], dsel,
                    mn[idx, dsel], mx[idx, dsel], hl, dims.hanc, strict, n_sa)
                ok = valid.copy()
                if valid.any():
                    vi = np.flatnonzero(valid)
                    ok[vi] = mondrian_would_split(cl[vi], cr[vi], model, domain)
                acc = idx[ok]
                nodes = splittable[acc]
                chosen[nodes] = dsel[ok]
                mv[nodes], tv[nodes], nlv[nodes] = mval[ok], tval[ok], nleft[ok]
                undecided[acc] = False
                if not undecided.any():
                    break
        t_lo.append(lo)
        t_hi.append(hi)
        t_par.append(par)
        t_dim.append(chosen)
        t_val.append(mv)
        t_tie.append(tv)
        cut = np.flatnonzero(chosen >= 0)
        if cut.size == 0:
            break
        _apply(X, sa, rows, lo[cut], hi[cut], chosen[cut], mv[cut], tv[cut])
        mid = lo[cut] + nlv[cut]
        lo = np.stack([lo[cut], mid], axis=1).ravel()
        hi = np.stack([mid, hi[cut]], axis=1).ravel()
        par = np.repeat(ids[cut], 2)
    tree = {"tree_lo": np.concatenate(t_lo), "tree_hi": np.concatenate(t_hi),
            "tree_parent": np.concatenate(t_par), "tree_dim": np.concatenate(t_dim),
            "tree_value": np.concatenate(t_val), "tree_ties": np.concatenate(t_tie)}
    leaf = np.flatnonzero(tree["tree_dim"] < 0)
    leaf = leaf[np.argsort(tree["tree_lo"][leaf], kind="stable")]
    tree_group = np.full(tree["tree_lo"].size, -1, dtype=np.int64)
    tree_group[leaf] = np.arange(leaf.size)
    sizes = tree["tree_hi"][leaf] - tree["tree_lo"][leaf]
    group = np.empty(n, dtype=np.int64)
    group[rows] = np.repeat(np.arange(leaf.size, dtype=np.int64), sizes)
    out: dict[str, Any] = {"group": group, "n_groups": int(leaf.size), "row_order": rows, **tree,
                           "tree_group": tree_group}
    for j in range(d):
        out[f"coord_{j}"] = dims.coord[j]
    return out
