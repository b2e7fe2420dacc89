"""The Mondrian planner: one breadth-first level loop with a decision hook (LeFevre, DeWitt,
Ramakrishnan, ICDE 2006; paper 000 §2.3, §3.2, App. B (b); §5.1 for the replay).

:func:`mondrian_plan` runs Mondrian's top-down split over all open nodes at once. For every
node it ranks the dimensions by normalised width and offers the median cut on the widest
one to a *decision hook*; a refused cut makes the node try its next-widest dimension, and a
node whose every cut is refused is a leaf. What decides is the caller's:

* the anonymizer (:func:`.mondrian.mondrian_partition`) accepts a cut when both children
  satisfy the privacy model (:func:`.mondrian.allowable`);
* the replay adversary (:mod:`openbook.attacks.replay`) decides as the publisher did and
  records, for every cut whose decision depends on the unknown SA arrangement, a
  constraint on the possible worlds (paper 000 §5.1), and re-runs the planner on many
  worlds at once to compare the world's release with the observed one.

The hook sees a :class:`CandidateCuts` batch: per cut the node's rows, the dimension, the
median ``value`` and ``ties`` (the cut rule of :func:`.mondrian.mondrian_cut`), the children's
counts of a per-row label (the SA codes for the anonymizer), the left-child mask on demand
and the cuts the node would try next if this one were refused (:meth:`CandidateCuts.later`).

Speed: the QI coordinates are an ``(n, d)`` matrix whose rows are kept grouped by node (each
node a contiguous segment, rows inside it in increasing input order, so relaxed ties are
shared out by input order); numba kernels compute per-node ranges, plan the cut of every
node (median by counting over the node's value range, or a sort when the range is wide)
with both children's label counts, and apply the accepted cuts by a stable in-place
partition of the segments. The hook is called once per level and dimension rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numba import njit

from ..data.table import EncodedTable

_HIST_SLACK = 64


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
        left = np.empty(r, np.bool_)
        nl = 0
        seen = 0
        for q in range(a, b):
            v = X[q, j]
            go = v < m or (v == m and seen < t)
            if v == m and go:
                seen += 1
            left[q - a] = go
            nl += go
        bx = np.empty((r, d), X.dtype)
        bs = np.empty(r, sa.dtype)
        br = np.empty(r, rows.dtype)
        kl = 0
        kr = nl
        for q in range(a, b):  # left rows first, then right rows, each in their current order
            if left[q - a]:
                k = kl
                kl += 1
            else:
                k = kr
                kr += 1
            for c in range(d):
                bx[k, c] = X[q, c]
            bs[k] = sa[q]
            br[k] = rows[q]
        for q in range(r):
            for c in range(d):
                X[a + q, c] = bx[q, c]
            sa[a + q] = bs[q]
            rows[a + q] = br[q]


@njit(cache=True)
def _left_masks(X, lo, hi, dim, mval, tval):  # pragma: no cover - compiled
    """Left-child indicator of every position of the segments ``[lo[i], hi[i])`` (concatenated
    in segment order) for the cut ``(dim[i], mval[i], tval[i])``: ``v < m``, or ``v == m``
    among the first ``t`` such positions of the segment (the rule of ``_apply``)."""
    tot = 0
    for i in range(lo.size):
        tot += hi[i] - lo[i]
    out = np.zeros(tot, np.bool_)
    k = 0
    for i in range(lo.size):
        j = dim[i]
        m = mval[i]
        t = tval[i]
        seen = 0
        for q in range(lo[i], hi[i]):
            v = X[q, j]
            if v < m:
                out[k] = True
            elif v == m and seen < t:
                seen += 1
                out[k] = True
            k += 1
    return out


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


class MondrianSpace:
    """The QIs as Mondrian sees them: per QI the coordinate of each code, the span widths are
    normalised by (the whole table's), and in hierarchy mode the ancestor table in coordinate
    order. Built once per table; :meth:`matrix` gives the ``(n, d)`` coordinates."""

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
# the planner
# ---------------------------------------------------------------------------------------
@dataclass
class CandidateCuts:
    """One round of candidate cuts offered to a decision hook: one cut per node still
    undecided, on that node's ``rank``-th widest dimension (only cuts with both children
    non-empty). Arrays are per cut; ``lo``/``hi`` are the node's positions in the planner's
    working arrays (``X``, ``rows``, ``labels``: rows grouped by node — valid while the hook
    runs)."""

    level: int
    rank: int
    node: np.ndarray          # index of the node among the level's open nodes
    lo: np.ndarray
    hi: np.ndarray
    dim: np.ndarray
    value: np.ndarray
    ties: np.ndarray
    n_left: np.ndarray
    left_counts: np.ndarray   # (n_cuts, n_labels) label counts of the left child
    right_counts: np.ndarray
    X: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)
    labels: np.ndarray = field(repr=False)
    #: index of each cut in the batch the :meth:`later` call was made on (else ``arange``)
    origin: np.ndarray | None = None
    _later: Callable[..., list["CandidateCuts"]] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.lo.size)

    def left_mask(self) -> np.ndarray:
        """Left-child indicator of every row of every cut's node, concatenated cut by cut
        (positions ``lo[i]..hi[i]-1`` in order)."""
        return _left_masks(self.X, self.lo, self.hi, self.dim, self.value, self.ties)

    def segments(self) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, cut)``: every row position of every cut's node, concatenated as in
        :meth:`left_mask`, and the cut it belongs to."""
        r = self.hi - self.lo
        cut = np.repeat(np.arange(r.size), r)
        start = np.cumsum(r) - r
        return self.lo[cut] + (np.arange(int(r.sum())) - start[cut]), cut

    def take(self, which: np.ndarray) -> "CandidateCuts":
        """The cuts ``which`` (indices) as a batch of their own."""
        w = np.asarray(which, dtype=np.int64)
        sub = CandidateCuts(self.level, self.rank, self.node[w], self.lo[w], self.hi[w], self.dim[w], self.value[w],
                            self.ties[w], self.n_left[w], self.left_counts[w], self.right_counts[w], self.X,
                            self.rows, self.labels, w if self.origin is None else self.origin[w])
        if self._later is not None:
            def _sub_later(which_: np.ndarray, report: np.ndarray | None = None, f=self._later):
                which_ = np.asarray(which_, dtype=np.int64)
                return f(w[which_], which_ if report is None else report)
            sub._later = _sub_later
        return sub

    def later(self, which: np.ndarray) -> list["CandidateCuts"]:
        """The cuts the nodes of cuts ``which`` would be offered next, rank by rank, were
        every cut so far refused (``origin`` maps them back to ``which``'s cuts)."""
        if self._later is None:
            return []
        return self._later(np.asarray(which, dtype=np.int64))


Decide = Callable[[CandidateCuts], np.ndarray]


@dataclass
class MondrianTree:
    """The split tree a planner run built. Per node (ids in breadth-first order): its rows
    ``rows[lo:hi]``, parent, cut dimension (``-1`` for a leaf), cut ``value`` and ``ties``;
    ``group`` numbers the leaves by position and labels every row."""

    lo: np.ndarray
    hi: np.ndarray
    parent: np.ndarray
    dim: np.ndarray
    value: np.ndarray
    ties: np.ndarray
    rows: np.ndarray
    group: np.ndarray
    n_groups: int
    tree_group: np.ndarray

    def extra(self) -> dict[str, Any]:
        """The ``Partition.extra`` record: ``row_order`` and ``tree_*`` arrays."""
        return {"row_order": self.rows, "tree_lo": self.lo, "tree_hi": self.hi, "tree_parent": self.parent,
                "tree_dim": self.dim, "tree_value": self.value, "tree_ties": self.ties,
                "tree_group": self.tree_group}


def mondrian_plan(space: MondrianSpace, X: np.ndarray, labels: np.ndarray, n_labels: int, decide: Decide, *,
                  strict: bool, floor: int = 1, lo: np.ndarray | None = None, hi: np.ndarray | None = None,
                  rows: np.ndarray | None = None) -> MondrianTree:
    """Mondrian's level loop (module docstring) from the root segments ``[lo, hi)`` (default
    one root: every row). ``X`` (``space.matrix``), ``labels`` (int32, ``n_labels`` values)
    and ``rows`` (default ``arange``) are permuted in place; a node of fewer than
    ``max(2, 2 * floor)`` rows is never cut (``floor``: the model's smallest group).
    ``decide(cuts)`` returns which of the offered cuts are taken."""
    n, d = X.shape
    rows = np.arange(n, dtype=np.int64) if rows is None else rows
    lo = np.array([0], dtype=np.int64) if lo is None else np.asarray(lo, dtype=np.int64)
    hi = np.array([n], dtype=np.int64) if hi is None else np.asarray(hi, dtype=np.int64)
    par = np.full(lo.size, -1, dtype=np.int64)
    use_hier = bool(space.hier.any() and strict)
    min_split = max(2, 2 * max(1, int(floor)))
    t_lo, t_hi, t_par, t_dim, t_val, t_tie = [], [], [], [], [], []
    next_id = 0
    level = 0
    while lo.size:
        m_nodes = lo.size
        ids = np.arange(next_id, next_id + m_nodes, dtype=np.int64)
        next_id += m_nodes
        chosen = np.full(m_nodes, -1, dtype=np.int64)
        mv = np.zeros(m_nodes, dtype=np.int64)
        tv = np.zeros(m_nodes, dtype=np.int64)
        nlv = np.zeros(m_nodes, dtype=np.int64)
        splittable = np.flatnonzero(hi - lo >= min_split)
        if splittable.size:
            s_lo, s_hi = lo[splittable], hi[splittable]
            mn, mx, nd = _ranges(X, s_lo, s_hi, space.distinct, space.cmax_distinct)
            w, lvl = space.widths(mn, mx, nd)
            rank = np.argsort(-w, axis=1, kind="stable")

            def offer(loc: np.ndarray, a: int, origin: np.ndarray | None) -> CandidateCuts | None:
                """The rank-``a`` cut of splittable nodes ``loc`` (those with width > 0)."""
                dsel = rank[loc, a]
                keep = w[loc, dsel] > 0
                loc, dsel = loc[keep], dsel[keep]
                if loc.size == 0:
                    return None
                hl = np.where(space.hier[dsel], lvl[loc, dsel], 0) if use_hier else np.zeros(loc.size, np.int64)
                valid, mval, tval, nleft, cl, cr = _plan(X, labels, s_lo[loc], s_hi[loc], dsel, mn[loc, dsel],
                                                         mx[loc, dsel], hl, space.hanc, strict, n_labels)
                v = np.flatnonzero(valid)
                org = None if origin is None else origin[keep][v]
                cuts = CandidateCuts(level, a, splittable[loc[v]], s_lo[loc[v]], s_hi[loc[v]], dsel[v], mval[v],
                                     tval[v], nleft[v], cl[v], cr[v], X, rows, labels, org)
                cuts._later = lambda which, report=None, loc=loc[v], a=a: _later(
                    loc[which], a, which if report is None else report)
                return cuts

            def _later(loc: np.ndarray, a: int, origin: np.ndarray) -> list[CandidateCuts]:
                out = []
                for b in range(a + 1, d):
                    c = offer(loc, b, origin)
                    if c is not None and len(c):
                        out.append(c)
                return out

            undecided = np.ones(splittable.size, dtype=bool)
            for a in range(d):
                loc = np.flatnonzero(undecided)
                cuts = offer(loc, a, None)
                if cuts is None:
                    break
                if len(cuts):
                    ok = np.asarray(decide(cuts), dtype=bool)
                    acc = cuts.node[ok]
                    chosen[acc] = cuts.dim[ok]
                    mv[acc], tv[acc], nlv[acc] = cuts.value[ok], cuts.ties[ok], cuts.n_left[ok]
                    undecided[np.searchsorted(splittable, acc)] = False
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
        _apply(X, labels, rows, lo[cut], hi[cut], chosen[cut], mv[cut], tv[cut])
        mid = lo[cut] + nlv[cut]
        lo = np.stack([lo[cut], mid], axis=1).ravel()
        hi = np.stack([mid, hi[cut]], axis=1).ravel()
        par = np.repeat(ids[cut], 2)
        level += 1
    T = {"lo": np.concatenate(t_lo), "hi": np.concatenate(t_hi), "parent": np.concatenate(t_par),
         "dim": np.concatenate(t_dim), "value": np.concatenate(t_val), "ties": np.concatenate(t_tie)}
    leaf = np.flatnonzero(T["dim"] < 0)
    leaf = leaf[np.argsort(T["lo"][leaf], kind="stable")]
    tree_group = np.full(T["lo"].size, -1, dtype=np.int64)
    tree_group[leaf] = np.arange(leaf.size)
    sizes = T["hi"][leaf] - T["lo"][leaf]
    start = np.cumsum(sizes) - sizes
    pos = np.repeat(T["lo"][leaf] - start, sizes) + np.arange(int(sizes.sum()))
    group = np.full(n, -1, dtype=np.int64)
    group[rows[pos]] = np.repeat(np.arange(leaf.size, dtype=np.int64), sizes)
    return MondrianTree(T["lo"], T["hi"], T["parent"], T["dim"], T["value"], T["ties"], rows, group,
                        int(leaf.size), tree_group)
