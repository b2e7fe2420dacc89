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

import mmap
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..data.table import EncodedTable
from . import mondrian_kernels as mk

#: a level's open nodes are planned, decided and cut in batches of at most this many rows
#: (its records mostly stay in the shared cache between the passes) and this many nodes
_BATCH_ROWS = 1 << 21
_BATCH_NODES = 1 << 15
#: batches of fewer rows run on one thread
_PARALLEL_ROWS = 1 << 15
#: rows per block when coordinates are mapped into records
_BLOCK = 1 << 20
#: most workers the cut's scratch records have room for (:func:`.mondrian_kernels.apply`)
_MAX_WORKERS = 64
#: runs over fewer rows use one thread (measured, bench/bench_mondrian.py: a parallel region
#: waits for every thread, on a busy host a time slice per call — Adult's warm partition took
#: 91–127 ms on two threads against 16–29 ms on one)
_THREAD_ROWS = 1 << 20


def _spare_rows(n: int) -> int:
    """Scratch records after ``n`` records (:func:`.mondrian_kernels.apply`)."""
    return n // 2 + 2 * _MAX_WORKERS + 2


def _zeros(rows: int, width: int, dtype: np.dtype) -> np.ndarray:
    """``np.zeros((rows, width), dtype)``; a large one in an anonymous memory map (pages
    zeroed on first touch, huge pages asked for), so that :func:`_release_tail` can give
    the scratch records' pages back before the buffer is freed."""
    nbytes = rows * width * dtype.itemsize
    if nbytes < 1 << 24:
        return np.zeros((rows, width), dtype=dtype)
    mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # private: released pages are freed
    if hasattr(mmap, "MADV_HUGEPAGE"):
        mm.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(mm, dtype=dtype).reshape(rows, width)


def _release_tail(B: np.ndarray, rows: int) -> None:
    """Give the pages of ``B`` after its first ``rows`` rows back to the system, when ``B``
    lives in a memory map of :func:`_zeros` (else nothing: the pages go when ``B`` does)."""
    base: Any = B
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):  # np.frombuffer's base
        base = base.obj
    if not isinstance(base, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = -(-rows * B.shape[1] * B.dtype.itemsize // mmap.PAGESIZE) * mmap.PAGESIZE
    if start < len(base):
        base.madvise(mmap.MADV_DONTNEED, start, len(base) - start)


def _with_spare(R: np.ndarray) -> np.ndarray:
    """The buffer whose first rows ``R`` is, with its scratch records after them (as
    :meth:`MondrianSpace.empty_record` allocates), else ``R`` copied into such a buffer."""
    n, width = R.shape
    b = R.base  # numpy keeps the array owning the memory (for a memory map, a flat one)
    if (isinstance(b, np.ndarray) and b.dtype == R.dtype and b.flags.c_contiguous and R.flags.c_contiguous
            and width and b.size % width == 0 and b.size // width >= n + _spare_rows(n)
            and b.ctypes.data == R.ctypes.data):
        return b.reshape(-1, width)
    B = _zeros(n + _spare_rows(n), R.shape[1], R.dtype)
    B[:n] = R
    return B


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
        """The ``(n, d)`` int32 coordinates of ``table``'s rows."""
        n = table.n_rows
        X = np.empty((n, self.d), dtype=np.int32)
        for j, name in enumerate(table.qi_names):
            codes = table.columns[name].codes
            if self.hier[j]:
                X[:, j] = self.coord[j][codes]
            else:
                X[:, j] = codes
        return X

    # -- records (:mod:`.mondrian_kernels`) ----------------------------------------------
    def empty_record(self, n: int, n_labels: int) -> np.ndarray:
        """An ``(n, L)`` record array (:mod:`.mondrian_kernels`): lanes ``0..d-1`` for the
        coordinates, lane ``d`` for the label, the row id in the last 4 bytes (8 when
        ``n >= 2^32``), of the narrowest unsigned type holding every lane; it is the first
        rows of a buffer with the planner's scratch records after them."""
        top = max(int(self.card.max(initial=1)) - 1, int(n_labels) - 1, 0)
        dtype = np.dtype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.uint32)
        idb = 4 if n < 1 << 32 else 8
        width = max(-(-((self.d + 1) * dtype.itemsize + idb) // 8) * 8, 8 * dtype.itemsize)
        return _zeros(n + _spare_rows(n), width // dtype.itemsize, dtype)[:n]

    @staticmethod
    def record_ids(R: np.ndarray) -> tuple[np.ndarray, int]:
        """``(V, col)``: the records' row ids are ``V[:, col]`` (a view)."""
        V = R.view(np.uint32 if R.shape[0] < 1 << 32 else np.uint64)
        return V, V.shape[1] - 1

    def record(self, X: np.ndarray, labels: np.ndarray, n_labels: int, rows: np.ndarray | None = None) -> np.ndarray:
        """The records of coordinates ``X`` (``(n, d)``, as :meth:`matrix`), ``labels`` and
        row ids ``rows`` (default ``arange(n)``; below 2^32 unless ``n`` is not)."""
        X = np.asarray(X)
        labels = np.asarray(labels)
        n = X.shape[0]
        if X.ndim != 2 or X.shape[1] != self.d or labels.shape != (n,) or (rows is not None and rows.shape != (n,)):
            raise ValueError("mondrian: X must be (n, d) coordinates, labels and rows (n,)")
        if n and (int(X.min()) < 0 or np.any(X.max(axis=0) >= np.array([c.size for c in self.coord]))
                  or int(labels.min()) < 0 or int(labels.max()) >= n_labels
                  or (rows is not None and (int(rows.min()) < 0 or (n < 1 << 32 and int(rows.max()) >= 1 << 32)))):
            raise ValueError("mondrian: a coordinate, label or row id is out of its range")
        R = self.empty_record(n, n_labels)
        V, col = self.record_ids(R)
        for a in range(0, n, _BLOCK):
            R[a:a + _BLOCK, :self.d] = X[a:a + _BLOCK]
            R[a:a + _BLOCK, self.d] = labels[a:a + _BLOCK]
            V[a:a + _BLOCK, col] = np.arange(a, min(a + _BLOCK, n)) if rows is None else rows[a:a + _BLOCK]
        return R

    def table_record(self, table: EncodedTable, labels: np.ndarray, n_labels: int) -> np.ndarray:
        """The records of ``table``'s rows (its codes must be those this space was built
        on: same columns, same encoding) with ``labels``, block by block (no ``(n, d)``
        intermediate)."""
        n = table.n_rows
        R = self.empty_record(n, n_labels)
        V, col = self.record_ids(R)
        for j, name in enumerate(table.qi_names):
            codes = table.columns[name].codes
            if int(codes.max(initial=0)) >= self.coord[j].size:
                raise ValueError(f"mondrian: column {name!r} has codes beyond this space's encoding")
            for a in range(0, n, _BLOCK):
                c = codes[a:a + _BLOCK]
                R[a:a + _BLOCK, j] = self.coord[j][c] if self.hier[j] else c
        for a in range(0, n, _BLOCK):
            R[a:a + _BLOCK, self.d] = labels[a:a + _BLOCK]
            V[a:a + _BLOCK, col] = np.arange(a, min(a + _BLOCK, n))
        return R

    def widths(self, mn: np.ndarray, mx: np.ndarray, nd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalised widths ``(m, d)`` and, for hierarchy dims, the LCA level (else 0)."""
        m = mn.shape[0]
        w = np.zeros((m, self.d))
        lvl = np.zeros((m, self.d), dtype=np.int64)
        for j in range(self.d):
            if self.hier[j]:
                a, cov = self.anc[j], self.cov[j]
                assert a is not None and cov is not None  # a hierarchy dimension has its tables
                eq = a[:, mn[:, j]] == a[:, mx[:, j]]
                L = np.argmax(eq, axis=0)
                node = a[L, mn[:, j]]
                nl = a.shape[1]
                w[:, j] = (cov[node] - 1) / max(nl - 1, 1)
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
    _kernels: dict[str, Any] | None = field(default=None, repr=False)
    #: per cut, the node's rows equal to ``value`` (the planner's, for the in-place cut)
    _eq: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.lo.size)

    def left_mask(self) -> np.ndarray:
        """Left-child indicator of every row of every cut's node, concatenated cut by cut
        (positions ``lo[i]..hi[i]-1`` in order)."""
        k = self._kernels if self._kernels is not None else mk.kernels(int((self.hi - self.lo).sum()))
        return k["left_masks"](self.X, self.lo, self.hi, self.dim, self.value, self.ties)

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
                            self.rows, self.labels, w if self.origin is None else self.origin[w],
                            _kernels=self._kernels)
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
    one root: every row) over coordinates ``X`` (``(n, d)``, as ``space.matrix``) and
    ``labels`` (``n_labels`` values), which are copied into records and left unchanged;
    ``rows`` (default ``arange``) is the row id of each position, and is overwritten with
    the final order (``tree.rows``). A node of fewer than ``max(2, 2 * floor)`` rows is never
    cut (``floor``: the model's smallest group). ``decide(cuts)`` returns which of the
    offered cuts are taken."""
    tree = plan_records(space, space.record(X, labels, n_labels, rows), n_labels, decide, strict=strict,
                        floor=floor, lo=lo, hi=hi)
    if rows is not None:
        rows[:] = tree.rows
    return tree


def plan_records(space: MondrianSpace, R: np.ndarray, n_labels: int, decide: Decide, *, strict: bool,
                 floor: int = 1, lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> MondrianTree:
    """:func:`mondrian_plan` on records ``R`` (:meth:`MondrianSpace.record`), which it
    overwrites; positions outside the roots get group ``-1`` and row id ``-1``. A caller
    that passes its only reference to ``R`` lets the planner free the records before it
    labels the rows."""
    n, d = R.shape[0], space.d
    lo = np.array([0], dtype=np.int64) if lo is None else np.asarray(lo, dtype=np.int64)
    hi = np.array([n], dtype=np.int64) if hi is None else np.asarray(hi, dtype=np.int64)
    par = np.full(lo.size, -1, dtype=np.int64)
    use_hier = bool(space.hier.any() and strict)
    min_split = max(2, 2 * max(1, int(floor)))
    # plain Python or compiled kernels, by the work ahead (rows x lanes x levels)
    rows_open = int((hi - lo).sum())
    levels = max(1, int(np.log2(max(rows_open, 2) / min_split)) + 2)
    K = mk.kernels(rows_open * R.shape[1] * levels)
    nthreads = useful_threads(int(K["threads"]()), rows_open)
    B = _with_spare(R)  # the records, every level's nodes in place, then the scratch records
    del R
    nthreads = min(nthreads, _MAX_WORKERS)
    words = B.view(np.uint64)
    X = B[:n]
    card = max(int(space.card.max(initial=1)), 1)
    hist = np.zeros((nthreads, card), dtype=np.int64)
    hist2 = np.zeros((nthreads, min(card * n_labels, 1 << 16)), dtype=np.int64)
    ddims = np.flatnonzero(space.distinct).astype(np.int64)
    stamp = np.full((nthreads, ddims.size, space.cmax_distinct), -1, dtype=np.int64)
    stamp_id = 0
    # the tree, level by level, in the narrowest types (widened once the records are freed)
    pos_t = np.int32 if n < 1 << 31 else np.int64
    val_t = np.int32 if int(space.card.max(initial=1)) < 1 << 31 else np.int64
    t_lo, t_hi, t_par, t_dim, t_val, t_tie = [], [], [], [], [], []
    kid_mn = kid_mx = None
    next_id = 0
    level = 0
    # lane ranges of the level's nodes (rows of splittable nodes only): the roots' here, the
    # children's from the cut that made them
    L = X.shape[1]
    V, vcol = MondrianSpace.record_ids(X)
    rows, labels = V[:, vcol], X[:, d]
    node_mn = np.empty((lo.size, L), dtype=X.dtype)
    node_mx = np.empty_like(node_mn)
    roots = np.flatnonzero(hi - lo >= min_split)
    if roots.size:
        rmn, rmx = np.empty((roots.size, L), dtype=node_mn.dtype), np.empty((roots.size, L), dtype=node_mn.dtype)
        K["ranges"](X, lo[roots], hi[roots], d, rmn, rmx, _workers(lo[roots], hi[roots], nthreads))
        node_mn[roots], node_mx[roots] = rmn, rmx
    while lo.size:
        n_splittable = int(np.count_nonzero(hi - lo >= min_split))
        kid_mn = np.empty((2 * n_splittable, L), dtype=X.dtype)
        kid_mx = np.empty_like(kid_mn)
        n_cut = 0
        m_nodes = lo.size
        ids = np.arange(next_id, next_id + m_nodes, dtype=np.int64)
        next_id += m_nodes
        chosen = np.full(m_nodes, -1, dtype=np.int64)
        mv = np.zeros(m_nodes, dtype=np.int64)
        tv = np.zeros(m_nodes, dtype=np.int64)
        nlv = np.zeros(m_nodes, dtype=np.int64)
        eqv = np.zeros(m_nodes, dtype=np.int64)
        for splittable in _batches(lo, hi, np.flatnonzero(hi - lo >= min_split)):
            s_lo, s_hi = lo[splittable], hi[splittable]
            c = splittable.size
            bounds = _workers(s_lo, s_hi, nthreads)
            mn = node_mn[splittable, :d].astype(np.int64)
            mx = node_mx[splittable, :d].astype(np.int64)
            nd = np.zeros((c, d), dtype=np.int64)
            if ddims.size:
                K["distinct"](X, s_lo, s_hi, ddims, stamp, stamp_id, nd, bounds)
                stamp_id += c
            w, lvl = space.widths(mn, mx, nd)
            rank = np.argsort(-w, axis=1, kind="stable")

            def offer(loc: np.ndarray, a: int, origin: np.ndarray | None, splittable=splittable, s_lo=s_lo,
                      s_hi=s_hi, mn=mn, mx=mx, w=w, lvl=lvl, rank=rank, X=X, rows=rows,
                      labels=labels) -> CandidateCuts | None:
                """The rank-``a`` cut of the batch's nodes ``loc`` (those with width > 0)."""
                dsel = rank[loc, a]
                keep = w[loc, dsel] > 0
                loc, dsel = loc[keep], dsel[keep]
                if loc.size == 0:
                    return None
                hl = np.where(space.hier[dsel], lvl[loc, dsel], 0) if use_hier else np.zeros(loc.size, np.int64)
                out = np.zeros((loc.size, 5), dtype=np.int64)
                cc = np.zeros((loc.size, 2, n_labels), dtype=np.int64)
                K["plan"](X, d, s_lo[loc], s_hi[loc], dsel, mn[loc, dsel], mx[loc, dsel], hl, space.hanc, strict,
                          hist, hist2, cc, out, _workers(s_lo[loc], s_hi[loc], nthreads))  # noqa: F821 (deleted after the loop)
                v = np.flatnonzero(out[:, 0])
                org = None if origin is None else origin[keep][v]
                cuts = CandidateCuts(level, a, splittable[loc[v]], s_lo[loc[v]], s_hi[loc[v]], dsel[v], out[v, 1],
                                     out[v, 2], out[v, 3], cc[v, 0], cc[v, 1], X, rows, labels, org, _kernels=K,
                                     _eq=out[v, 4])
                cuts._later = lambda which, report=None, loc=loc[v], a=a: later(
                    loc[which], a, which if report is None else report)
                return cuts

            def later(loc: np.ndarray, a: int, origin: np.ndarray, offer=offer) -> list[CandidateCuts]:
                out = []
                for b in range(a + 1, d):
                    c = offer(loc, b, origin)
                    if c is not None and len(c):
                        out.append(c)
                return out

            undecided = np.ones(c, dtype=bool)
            for a in range(d):
                cuts = offer(np.flatnonzero(undecided), a, None)
                if cuts is None:
                    break
                if len(cuts):
                    ok = np.asarray(decide(cuts), dtype=bool)
                    acc = cuts.node[ok]
                    chosen[acc] = cuts.dim[ok]
                    mv[acc], tv[acc], nlv[acc] = cuts.value[ok], cuts.ties[ok], cuts.n_left[ok]
                    assert cuts._eq is not None  # offered cuts carry their tie flags
                    eqv[acc] = cuts._eq[ok]
                    undecided[np.searchsorted(splittable, acc)] = False
                if not undecided.any():
                    break
            cut = splittable[~undecided]
            if cut.size:  # cut this batch's nodes now, while their records are in cache
                K["apply"](B, words, n, lo[cut], hi[cut], chosen[cut], mv[cut], tv[cut], eqv[cut], nlv[cut],
                           d, min_split, kid_mn[2 * n_cut:], kid_mx[2 * n_cut:], _workers(lo[cut], hi[cut], nthreads))
                n_cut += cut.size
            cuts = offer = later = None  # type: ignore[assignment]  # noqa: F811  (unbound: their closures hold the records)
        t_lo.append(lo.astype(pos_t))
        t_hi.append(hi.astype(pos_t))
        t_par.append(par.astype(np.int64 if next_id >= 1 << 31 else np.int32))
        t_dim.append(chosen.astype(np.int16 if d < 1 << 15 else np.int64))
        t_val.append(mv.astype(val_t))
        t_tie.append(tv.astype(pos_t))
        cut = np.flatnonzero(chosen >= 0)
        if cut.size == 0:
            break
        mid = lo[cut] + nlv[cut]
        lo = np.stack([lo[cut], mid], axis=1).ravel()
        hi = np.stack([mid, hi[cut]], axis=1).ravel()
        par = np.repeat(ids[cut], 2)
        node_mn, node_mx = kid_mn[:2 * n_cut, :d].copy(), kid_mx[:2 * n_cut, :d].copy()  # (lanes 0..d-1 are read)
        kid_mn = kid_mx = None
        level += 1
    del rows, labels, words, hist, hist2, stamp, node_mn, node_mx, kid_mn, kid_mx
    _release_tail(B, n)
    all_lo, all_hi, all_dim = np.concatenate(t_lo), np.concatenate(t_hi), np.concatenate(t_dim)
    del t_lo, t_hi, t_dim
    leaf = np.flatnonzero(all_dim < 0)
    leaf = leaf[np.argsort(all_lo[leaf], kind="stable")]
    leaf_lo, leaf_hi = all_lo[leaf].astype(np.int64), all_hi[leaf].astype(np.int64)
    # the row order, from the ids the leaves hold; then every row's group
    order = np.full(n, -1, dtype=np.int32 if n < 1 << 31 else np.int64)
    K["leaf_order"](V, vcol, leaf_lo, leaf_hi, order)
    del V, X, B
    group = np.full(n, -1, dtype=np.int64)
    K["label_leaves"](order, leaf_lo, leaf_hi, group)
    wide = np.int64
    T = {"lo": all_lo.astype(wide), "hi": all_hi.astype(wide), "parent": np.concatenate(t_par).astype(wide),
         "dim": all_dim.astype(wide), "value": np.concatenate(t_val).astype(wide),
         "ties": np.concatenate(t_tie).astype(wide)}
    del all_lo, all_hi, t_par, all_dim, t_val, t_tie
    tree_group = np.full(T["lo"].size, -1, dtype=np.int64)
    tree_group[leaf] = np.arange(leaf.size)
    return MondrianTree(T["lo"], T["hi"], T["parent"], T["dim"], T["value"], T["ties"], order, group,
                        int(leaf.size), tree_group)


def useful_threads(n: int, rows: int) -> int:
    """The workers worth starting for a run over ``rows`` rows, of the ``n`` numba has: one
    below :data:`_THREAD_ROWS` rows; else as many as the host's processors leave idle by its
    load average (this run counted in), at least one — a thread that waits for a processor
    makes every parallel region wait for it, slower than one thread."""
    if n <= 1 or rows < _THREAD_ROWS:
        return 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return n
    return max(1, min(n, int((os.cpu_count() or 1) - load + 1.0)))


def _workers(lo: np.ndarray, hi: np.ndarray, nthreads: int) -> np.ndarray:
    """``bounds`` for the kernels: the nodes ``[lo, hi)`` in ``nthreads`` consecutive runs of
    about equal rows (one run below ``_PARALLEL_ROWS`` rows)."""
    if nthreads <= 1 or lo.size < 2:
        return np.array([0, lo.size], dtype=np.int64)
    ends = np.cumsum(hi - lo)
    if int(ends[-1]) < _PARALLEL_ROWS:
        return np.array([0, lo.size], dtype=np.int64)
    cuts = np.searchsorted(ends, ends[-1] * np.arange(1, nthreads) / nthreads, "left") + 1
    return np.concatenate([[0], np.minimum(cuts, lo.size), [lo.size]]).astype(np.int64)


def _batches(lo: np.ndarray, hi: np.ndarray, nodes: np.ndarray):
    """Consecutive runs of ``nodes`` of at most ``_BATCH_ROWS`` rows (or one node) and at
    most ``_BATCH_NODES`` nodes."""
    if nodes.size == 0:
        return
    ends = np.cumsum(hi[nodes] - lo[nodes])
    a = 0
    while a < nodes.size:
        base = int(ends[a - 1]) if a else 0
        b = max(a + 1, int(np.searchsorted(ends, base + _BATCH_ROWS, "right")))
        b = min(b, a + _BATCH_NODES, nodes.size)
        yield nodes[a:b]
        a = b
