"""The Mondrian planner's kernels (:mod:`.mondrian_kernels`) in vectorised numpy: the same
signatures and the same results, whole batches of nodes at once, without numba.

numba's compiled kernels are the fast way for large tables, but loading them costs a
process ~0.3–0.8 s (numba and llvmlite, and numba's lowering registries, which import
scipy) — more than a whole small table takes here. :func:`.mondrian_kernels.kernels` runs
these on problems too large for plain Python and too small to repay that load, so a small
``anonymize`` or ``check`` never imports numba. Each kernel gathers the rows of its nodes
(segments ``[lo[i], hi[i])`` of the record buffer) into flat arrays, computes per node with
sorts, cumulative sums and ``bincount``, and scatters back; ``bounds`` (the workers of the
threaded kernels) is accepted and ignored: one thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _segments(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pos, seg, start)``: every position of the non-empty segments ``[lo[i], hi[i])``
    concatenated in order, the segment of each, and where each segment starts in ``pos``."""
    lo = np.asarray(lo, dtype=np.int64)
    r = np.asarray(hi, dtype=np.int64) - lo
    seg = np.repeat(np.arange(r.size), r)
    start = np.cumsum(r) - r
    return lo[seg] + (np.arange(seg.size) - start[seg]), seg, start


def _rank_in_segment(flag: np.ndarray, seg: np.ndarray, start: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions of its segment have ``flag``."""
    c = np.cumsum(flag, dtype=np.int64)
    before = c - flag
    return before - before[start][seg]


def _per_segment(seg: np.ndarray, k: int, weights: Any = None) -> np.ndarray:
    return np.bincount(seg, weights=weights, minlength=k).astype(np.int64)


def _minmax(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, mn: np.ndarray, mx: np.ndarray, rows: np.ndarray) -> None:
    """Lane minima and maxima of segments ``[lo, hi)`` into rows ``rows`` of ``mn``, ``mx``."""
    if lo.size == 0:
        return
    pos, _, start = _segments(lo, hi)
    V = X[pos]
    mn[rows] = np.minimum.reduceat(V, start, axis=0)
    mx[rows] = np.maximum.reduceat(V, start, axis=0)


def ranges(X, lo, hi, d, mn, mx, bounds) -> None:
    """:func:`.mondrian_kernels.ranges` (every lane, not only ``0..d-1``)."""
    _minmax(X, np.asarray(lo), np.asarray(hi), mn, mx, np.arange(len(lo)))


def distinct(X, lo, hi, dims, stamp, first_id, nd, bounds) -> None:
    """:func:`.mondrian_kernels.distinct`: distinct values of lanes ``dims`` per node."""
    if len(lo) == 0:
        return
    pos, seg, _ = _segments(lo, hi)
    for j in np.asarray(dims):
        v = X[pos, j].astype(np.int64)
        width = int(v.max(initial=0)) + 1
        nd[:, j] = _per_segment(np.unique(seg * width + v) // width, len(lo))


def plan(X, lab, lo, hi, dim, mn, mx, hier_level, hanc, strict, hist, hist2, cc, out, bounds) -> None:
    """:func:`.mondrian_kernels.plan`: the cut of each node, its ``out`` row and the
    children's label counts ``cc`` (filled for the valid cuts)."""
    k = len(lo)
    if k == 0:
        return
    nlab = cc.shape[2]
    lo, hi, dim = (np.asarray(a, dtype=np.int64) for a in (lo, hi, dim))
    pos, seg, start = _segments(lo, hi)
    r = hi - lo
    v = X[pos, dim[seg]].astype(np.int64)
    vmin = np.asarray(mn, dtype=np.int64)
    width = int((np.asarray(mx, dtype=np.int64) - vmin).max(initial=0)) + 1
    sv = np.sort(seg * width + (v - vmin[seg])) - seg * width + vmin[seg]  # values sorted in each node
    ok = np.ones(k, dtype=bool)
    t = np.zeros(k, dtype=np.int64)
    if strict:
        m = sv[start + r // 2]
        lt = _per_segment(seg, k, v < m[seg])
        le = _per_segment(seg, k, v <= m[seg])
        at_min = lt == 0  # the median is the minimum: its rows go left
        ok &= ~(at_min & (le == r))
        t = np.where(at_min, le, 0)
    else:
        h = (r + 1) // 2
        m = sv[start + h - 1]
        t = h - _per_segment(seg, k, v < m[seg])
    hl = np.asarray(hier_level, dtype=np.int64)
    for i in np.flatnonzero(hl >= 1):  # the best-balanced boundary between the LCA's children
        vals = v[start[i]:start[i] + r[i]] - vmin[i]
        hs = np.bincount(vals, minlength=int(mx[i] - vmin[i]) + 1)
        anc = hanc[dim[i], hl[i] - 1, vmin[i]:vmin[i] + hs.size]
        p = np.flatnonzero(anc[1:] != anc[:-1]) + 1
        ok[i] = p.size > 0
        if p.size == 0:
            continue
        gap = np.abs(2 * np.cumsum(hs)[p - 1] - r[i])
        m[i], t[i] = vmin[i] + p[int(np.argmin(gap))], 0
    eq = v == m[seg]
    left = (v < m[seg]) | (eq & (_rank_in_segment(eq, seg, start) < t[seg]))
    nl = _per_segment(seg, k, left)
    e = _per_segment(seg, k, eq)
    labels = X[pos, lab].astype(np.int64)
    both = _per_segment(seg * nlab + labels, k * nlab).reshape(k, nlab)
    on_left = _per_segment(seg * nlab + labels, k * nlab, left).reshape(k, nlab)
    valid = ok & (nl > 0) & (nl < r)
    cc[valid, 0] += on_left[valid]
    cc[valid, 1] += both[valid] - on_left[valid]
    out[valid] = np.stack([np.ones(k, np.int64), m, t, nl, e], axis=1)[valid]


def _left(X, lo, hi, dim, mval, tval) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(left, pos, seg, start)``: the left-child rule of :func:`.mondrian_kernels.apply`."""
    pos, seg, start = _segments(lo, hi)
    v = X[pos, np.asarray(dim, dtype=np.int64)[seg]].astype(np.int64)
    m = np.asarray(mval, dtype=np.int64)[seg]
    eq = v == m
    left = (v < m) | (eq & (_rank_in_segment(eq, seg, start) < np.asarray(tval, dtype=np.int64)[seg]))
    return left, pos, seg, start


def apply(X, S, toff, lo, hi, dim, mval, tval, neq, nleft, d, min_rows, cmn, cmx, bounds) -> None:
    """:func:`.mondrian_kernels.apply`: each segment stably partitioned in place (left child
    first), then the lane ranges of the children of at least ``min_rows`` rows."""
    if len(lo) == 0:
        return
    lo, hi, nleft = (np.asarray(a, dtype=np.int64) for a in (lo, hi, nleft))
    left, pos, seg, start = _left(X, lo, hi, dim, mval, tval)
    lefts_before = _rank_in_segment(left, seg, start)
    within = np.arange(pos.size) - start[seg]
    S[np.where(left, lo[seg] + lefts_before, lo[seg] + nleft[seg] + within - lefts_before)] = S[pos]
    mid = lo + nleft
    for child, (a, b) in enumerate(((lo, mid), (mid, hi))):
        big = np.flatnonzero(b - a >= min_rows)
        _minmax(X, a[big], b[big], cmn, cmx, 2 * big + child)


def left_masks(X, lo, hi, dim, mval, tval) -> np.ndarray:
    """:func:`.mondrian_kernels.left_masks`."""
    if len(lo) == 0:
        return np.zeros(0, dtype=np.bool_)
    return _left(X, lo, hi, dim, mval, tval)[0]


def leaf_order(ids, col, leaf_lo, leaf_hi, order) -> None:
    """:func:`.mondrian_kernels.leaf_order`."""
    pos, _, _ = _segments(leaf_lo, leaf_hi)
    order[pos] = ids[pos, col]


def label_leaves(order, leaf_lo, leaf_hi, group) -> None:
    """:func:`.mondrian_kernels.label_leaves`."""
    pos, seg, _ = _segments(leaf_lo, leaf_hi)
    group[order[pos]] = seg


def kernels() -> dict[str, Any]:
    """The kernels by name, as :func:`.mondrian_kernels.kernels` hands them out."""
    return {"ranges": ranges, "distinct": distinct, "plan": plan, "apply": apply, "left_masks": left_masks,
            "leaf_order": leaf_order, "label_leaves": label_leaves, "threads": lambda: 1}
