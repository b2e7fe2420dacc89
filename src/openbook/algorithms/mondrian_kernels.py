"""The loops of the Mondrian planner (:mod:`.mondrian_planner`; LeFevre, DeWitt, Ramakrishnan,
ICDE 2006; paper 000 §2.3, §3.2, App. B (b)).

Records
    The planner keeps every row as a *record*: one row of an ``(n, L)`` array of one unsigned
    type ``T`` (``uint8``, ``uint16`` or ``uint32``, the narrowest that holds every lane):
    lanes ``0..d-1`` the QI coordinates, lane ``d`` the row's label (the SA code for the
    anonymizer), and the row's id in the record's last 4 bytes (8 when ids reach 2^32); a
    record is a whole number of 64-bit words and at least 8 lanes. A node is a contiguous
    segment of records, rows in input order inside it.
Levels
    One record buffer: the nodes of a level are contiguous segments of it, and a cut
    partitions its node's segment in place, stably (left child first, each child in the
    node's row order), through scratch records after the table's (half as many): the larger
    child is compacted in place (left children forward, right children backward from the
    node's end), the smaller one goes to the scratch and is copied back — every open row is
    read once and written at most twice per level. A leaf stays where its level left it
    (:func:`label_leaves` reads ids from there).
Threads
    Every kernel takes ``bounds``: worker ``w`` handles nodes ``bounds[w]..bounds[w+1]-1``
    (the caller balances rows; one worker for small batches), with its own scratch.

The kernels are plain Python functions that run unchanged in two ways:

* compiled by numba (``cache=True``) — :func:`compiled` compiles (or loads from the cache)
  on first use, each threaded kernel twice: with ``parallel=True`` for calls whose
  ``bounds`` give several workers, and without threads for one worker (a parallel region
  synchronises every thread even then, which on a busy machine costs a time slice per
  call); loading numba's compiled code costs ~0.3 s once per process (numba's lowering
  registries, which import scipy.linalg), so
* on a small problem before that cost was paid, the same functions run as plain Python
  (:func:`kernels`), which is faster than the load. Both give identical results (every
  array value is converted with ``int`` before arithmetic; the tests run both ways).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

#: ``range`` in plain Python; numba's ``prange`` once :func:`compiled` ran
prange = range

#: counting (histogram) medians for value ranges up to ``4 * rows + _HIST_SLACK``
_HIST_SLACK = 64


# ---------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------
def block_ranges(X, a, b, c, mn, mx, i):  # pragma: no cover - compiled
    """Min and max of lanes ``c..c+7`` over records ``[a, b)`` (non-empty) into ``mn[i, c:c+8]``,
    ``mx[i, c:c+8]`` — scalar accumulators, which LLVM vectorises."""
    n0 = X[a, c]
    n1 = X[a, c + 1]
    n2 = X[a, c + 2]
    n3 = X[a, c + 3]
    n4 = X[a, c + 4]
    n5 = X[a, c + 5]
    n6 = X[a, c + 6]
    n7 = X[a, c + 7]
    x0, x1, x2, x3, x4, x5, x6, x7 = n0, n1, n2, n3, n4, n5, n6, n7
    for q in range(a + 1, b):
        v = X[q, c]
        n0 = min(n0, v)
        x0 = max(x0, v)
        v = X[q, c + 1]
        n1 = min(n1, v)
        x1 = max(x1, v)
        v = X[q, c + 2]
        n2 = min(n2, v)
        x2 = max(x2, v)
        v = X[q, c + 3]
        n3 = min(n3, v)
        x3 = max(x3, v)
        v = X[q, c + 4]
        n4 = min(n4, v)
        x4 = max(x4, v)
        v = X[q, c + 5]
        n5 = min(n5, v)
        x5 = max(x5, v)
        v = X[q, c + 6]
        n6 = min(n6, v)
        x6 = max(x6, v)
        v = X[q, c + 7]
        n7 = min(n7, v)
        x7 = max(x7, v)
    mn[i, c] = n0
    mn[i, c + 1] = n1
    mn[i, c + 2] = n2
    mn[i, c + 3] = n3
    mn[i, c + 4] = n4
    mn[i, c + 5] = n5
    mn[i, c + 6] = n6
    mn[i, c + 7] = n7
    mx[i, c] = x0
    mx[i, c + 1] = x1
    mx[i, c + 2] = x2
    mx[i, c + 3] = x3
    mx[i, c + 4] = x4
    mx[i, c + 5] = x5
    mx[i, c + 6] = x6
    mx[i, c + 7] = x7


def ranges(X, lo, hi, d, mn, mx, bounds):  # pragma: no cover - compiled
    """Per node ``i`` (segment ``[lo[i], hi[i])``, non-empty): min and max of lanes
    ``0..d-1`` into ``mn[i]``, ``mx[i]`` (of ``X``'s type and width; >= 8 lanes)."""
    L = X.shape[1]
    for w in prange(bounds.size - 1):
        for i in range(bounds[w], bounds[w + 1]):
            for blk in range((d + 7) // 8):
                block_ranges(X, lo[i], hi[i], min(8 * blk, L - 8), mn, mx, i)


def distinct(X, lo, hi, dims, stamp, first_id, nd, bounds):  # pragma: no cover - compiled
    """Number of distinct values of lane ``dims[k]`` in each node into ``nd[i, dims[k]]``;
    ``stamp[w, k, v]`` holds the last node id worker ``w`` saw ``v`` in (ids ``first_id + i``,
    never reused while ``stamp`` lives, so it is never cleared)."""
    for w in prange(bounds.size - 1):
        for i in range(bounds[w], bounds[w + 1]):
            node = first_id + i
            for k in range(dims.size):
                j = dims[k]
                c = 0
                for q in range(lo[i], hi[i]):
                    v = int(X[q, j])
                    if stamp[w, k, v] != node:
                        stamp[w, k, v] = node
                        c += 1
                nd[i, j] = c


def plan(X, lab, lo, hi, dim, mn, mx, hier_level, hanc, strict, hist, hist2, cc, out, bounds):  # pragma: no cover
    """The cut of each node ``i`` on lane ``dim[i]`` (:func:`.mondrian.mondrian_cut`'s rule, or
    with ``hier_level[i] >= 1`` the best-balanced boundary between the children of the
    values' lowest common ancestor, at level ``hier_level[i]``, in ``hanc``): ``out[i]`` =
    ``(valid, m, t, n_left, e)`` (``e``: the node's rows equal to ``m``) and the children's counts of the label (lane ``lab``) in
    ``cc[i, 0]`` (left) and ``cc[i, 1]`` (right), zeroed by the caller. Scratch per worker:
    ``hist[w]`` (at least the largest value range counted) and ``hist2[w]`` (value x label
    counts, used when they fit and are cheaper than a second pass over the rows)."""
    nlab = cc.shape[2]
    for w in prange(bounds.size - 1):
        hs = hist[w]
        h2 = hist2[w]
        for i in range(bounds[w], bounds[w + 1]):
            j = dim[i]
            a = lo[i]
            b = hi[i]
            r = b - a
            vmin = mn[i]
            R = mx[i] - vmin + 1
            m = 0
            t = 0
            e = -1  # rows equal to m, when a histogram or the sort gives it
            ok = True
            two = False  # value x label counts in h2
            hl = hier_level[i]
            if hl >= 1 or R <= 4 * r + _HIST_SLACK:
                if R * nlab <= r and R * nlab <= h2.size:
                    two = True
                    for p in range(R * nlab):
                        h2[p] = 0
                    for q in range(a, b):
                        h2[(int(X[q, j]) - vmin) * nlab + int(X[q, lab])] += 1
                    for p in range(R):
                        s = 0
                        for k in range(nlab):
                            s += h2[p * nlab + k]
                        hs[p] = s
                else:
                    for p in range(R):
                        hs[p] = 0
                    for q in range(a, b):
                        hs[int(X[q, j]) - vmin] += 1
                if hl >= 1:
                    best = -1
                    bestgap = 1 << 62
                    acc = hs[0]
                    for p in range(1, R):
                        if hanc[j, hl - 1, vmin + p] != hanc[j, hl - 1, vmin + p - 1]:
                            gap = abs(2 * acc - r)
                            if gap < bestgap:
                                bestgap = gap
                                best = p
                        acc += hs[p]
                    if best < 0:
                        ok = False
                    else:
                        m = vmin + best
                elif strict:
                    target = r // 2  # index of the upper median
                    acc = 0
                    p = 0
                    while acc + hs[p] <= target:
                        acc += hs[p]
                        p += 1
                    m = vmin + p
                    if acc == 0:  # the median is the minimum: its rows go left
                        if hs[p] == r:
                            ok = False
                        t = hs[p]
                else:
                    h = (r + 1) // 2
                    acc = 0
                    p = 0
                    while acc + hs[p] < h:
                        acc += hs[p]
                        p += 1
                    m = vmin + p
                    t = h - acc
            else:
                tmp = np.empty(r, np.int64)
                for q in range(a, b):
                    tmp[q - a] = int(X[q, j])
                tmp.sort()
                if strict:
                    m = int(tmp[r // 2])
                    if int(np.searchsorted(tmp, m, "left")) == 0:
                        le = int(np.searchsorted(tmp, m, "right"))
                        if le == r:
                            ok = False
                        t = le
                else:
                    h = (r + 1) // 2
                    m = int(tmp[h - 1])
                    t = h - int(np.searchsorted(tmp, m, "left"))
                e = int(np.searchsorted(tmp, m, "right")) - int(np.searchsorted(tmp, m, "left"))
            if not ok:
                continue
            if e < 0:
                e = hs[m - vmin]
            nl = 0
            if two:  # left: the values below m, then the first t rows equal to m
                pm = m - vmin
                for p in range(pm):
                    nl += hs[p]
                    for k in range(nlab):
                        cc[i, 0, k] += h2[p * nlab + k]
                if t > 0 and t == hs[pm]:
                    nl += t
                    for k in range(nlab):
                        cc[i, 0, k] += h2[pm * nlab + k]
                elif t > 0:
                    seen = 0
                    for q in range(a, b):
                        if int(X[q, j]) == m:
                            cc[i, 0, int(X[q, lab])] += 1
                            seen += 1
                            if seen == t:
                                break
                    nl += t
                for p in range(R):
                    for k in range(nlab):
                        cc[i, 1, k] += h2[p * nlab + k]
                for k in range(nlab):
                    cc[i, 1, k] -= cc[i, 0, k]
            else:
                seen = 0
                for q in range(a, b):  # branch-free: the side is data, not control flow
                    v = int(X[q, j])
                    eq = int(v == m)
                    f = int(v < m) | (eq & int(seen < t))
                    seen += eq
                    nl += f
                    cc[i, 1 - f, int(X[q, lab])] += 1
            if nl == 0 or nl == r:
                continue
            out[i, 0] = 1
            out[i, 1] = m
            out[i, 2] = t
            out[i, 3] = nl
            out[i, 4] = e


def apply(X, S, toff, lo, hi, dim, mval, tval, neq, nleft, d, min_rows, cmn, cmx, bounds):  # pragma: no cover
    """Cut each segment ``[lo[i], hi[i])`` of records ``S`` (64-bit words; ``X`` the same
    buffer as lanes) in place: left child at ``lo[i]``, right child at ``lo[i] + nleft[i]``,
    each in the node's row order. A record goes left iff its lane ``dim[i]`` is below
    ``mval[i]``, or equal and among the first ``tval[i]`` such (of ``neq[i]``). The smaller
    child passes through the scratch records after the first ``toff`` (at least
    ``toff // 2 + 2 * workers + 2`` of them): node ``i`` of worker ``w`` uses scratch
    records ``lo[i] // 2 + 2 w + 1`` to ``lo[i] // 2 + 2 w + (hi[i] - lo[i]) // 2`` (disjoint
    across nodes and workers). Each record is stored once, at an index computed without a
    branch (in place or in the scratch). Then, while they are in cache, the lane ranges
    (``0..d-1``) of each child of at least ``min_rows`` rows into ``cmn``/``cmx`` rows ``2 i``
    (left) and ``2 i + 1`` (right)."""
    nw = S.shape[1]
    L = X.shape[1]
    for w in prange(bounds.size - 1):
        for i in range(bounds[w], bounds[w + 1]):
            a = lo[i]
            b = hi[i]
            j = dim[i]
            m = mval[i]
            t = tval[i]
            mid = a + nleft[i]
            s0 = toff + a // 2 + 2 * w + 1
            if 2 * (mid - a) >= b - a:  # right child no larger: lefts forward in place
                pl = a
                sr = s0
                seen = 0
                for q in range(a, b):
                    v = int(X[q, j])
                    eq = int(v == m)
                    f = int(v < m) | (eq & int(seen < t))
                    seen += eq
                    p = sr + f * (pl - sr)
                    if nw == 2:  # 16-byte records (up to 11 one-byte lanes): the common case
                        x0 = S[q, 0]
                        x1 = S[q, 1]
                        S[p, 0] = x0
                        S[p, 1] = x1
                    else:
                        for k in range(nw):
                            S[p, k] = S[q, k]
                    pl += f
                    sr += 1 - f
                for q in range(mid, b):
                    for k in range(nw):
                        S[q, k] = S[s0 + q - mid, k]
            else:  # left child smaller: rights backward in place (a tie's rank from the end)
                first = neq[i] - t  # ties of backward rank >= first go left
                pr = b - 1
                sl = s0 + (mid - a) - 1
                back = 0
                for q in range(b - 1, a - 1, -1):
                    v = int(X[q, j])
                    eq = int(v == m)
                    f = int(v < m) | (eq & int(back >= first))
                    back += eq
                    p = pr + f * (sl - pr)
                    if nw == 2:
                        x0 = S[q, 0]
                        x1 = S[q, 1]
                        S[p, 0] = x0
                        S[p, 1] = x1
                    else:
                        for k in range(nw):
                            S[p, k] = S[q, k]
                    pr -= 1 - f
                    sl -= f
                for q in range(a, mid):
                    for k in range(nw):
                        S[q, k] = S[s0 + q - a, k]
            if mid - a >= min_rows:
                for blk in range((d + 7) // 8):
                    block_ranges(X, a, mid, min(8 * blk, L - 8), cmn, cmx, 2 * i)
            if b - mid >= min_rows:
                for blk in range((d + 7) // 8):
                    block_ranges(X, mid, b, min(8 * blk, L - 8), cmn, cmx, 2 * i + 1)


def left_masks(X, lo, hi, dim, mval, tval):  # pragma: no cover - compiled
    """Left-child indicator of every position of the segments ``[lo[i], hi[i])`` (concatenated
    in segment order) for the cut ``(dim[i], mval[i], tval[i])`` (the rule of :func:`apply`)."""
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
            v = int(X[q, j])
            if v < m:
                out[k] = True
            elif v == m and seen < t:
                seen += 1
                out[k] = True
            k += 1
    return out


def leaf_order(ids, col, leaf_lo, leaf_hi, order):  # pragma: no cover - compiled
    """``order[q]`` = the row id at position ``q`` of leaf ``g`` (segment ``[leaf_lo[g],
    leaf_hi[g])``; ids are column ``col`` of ``ids``)."""
    for g in range(leaf_lo.size):
        for q in range(leaf_lo[g], leaf_hi[g]):
            order[q] = int(ids[q, col])


def label_leaves(order, leaf_lo, leaf_hi, group):  # pragma: no cover - compiled
    """``group[order[q]] = g`` for every position ``q`` of leaf ``g``."""
    for g in range(leaf_lo.size):
        for q in range(leaf_lo[g], leaf_hi[g]):
            group[order[q]] = g


# ---------------------------------------------------------------------------------------
# dispatch: plain Python for small problems until numba's code is loaded
# ---------------------------------------------------------------------------------------
_HELPERS = ("block_ranges",)
_PARALLEL = ("ranges", "distinct", "plan", "apply")
_SERIAL = ("left_masks", "leaf_order", "label_leaves")
_PLAIN: dict[str, Any] = {name: globals()[name] for name in _HELPERS + _PARALLEL + _SERIAL}
_PLAIN["threads"] = lambda: 1  # the workers a run may use (numba: its current thread count)
_COMPILED: dict[str, Any] | None = None
#: record-lane visits (rows x lanes x expected levels) a process runs as plain Python before
#: it loads numba's code instead (~20 ms of plain Python per 10^4; the load costs ~0.3 s)
PLAIN_BUDGET = 40_000
_plain_spent = 0
#: runs of up to this many record-lane visits before numba's code is loaded use the numpy
#: kernels (:mod:`.mondrian_numpy`): below it they take less than loading numba would
#: (measured: bench/bench_mondrian.py, "first call" rows)
NUMPY_WORK = 40_000_000
#: ``"compiled"`` or ``"plain"`` to force one way (tests), else ``None``
FORCE: str | None = None


def _dispatch(parallel: Any, serial: Any) -> Any:
    """A kernel that runs ``parallel`` when its ``bounds`` (last argument) give more than one
    worker, else ``serial`` (the same code without threads: a parallel region synchronises
    every thread even for one worker's range, which costs a time slice on a busy machine)."""
    def kernel(*args: Any) -> Any:
        return parallel(*args) if args[-1].size > 2 else serial(*args)
    kernel.parallel, kernel.serial = parallel, serial  # type: ignore[attr-defined]
    return kernel


def _renamed(f: Any, suffix: str) -> Any:
    """``f`` under another name. numba's on-disk cache keys a compiled function by its
    qualified name, line and bytecode, not by its compile options: the threaded and the
    single-thread variant of one kernel would share one cache entry, and whichever was saved
    last would be loaded for both (the threaded kernels then ran on one thread). A renamed
    copy is cached under a name of its own."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__ + suffix, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + suffix
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


def compiled() -> dict[str, Any]:
    """The kernels compiled by numba (loaded from its cache after the first run)."""
    global _COMPILED, prange
    if _COMPILED is None:
        import numba

        prange = numba.prange
        for name in _HELPERS:  # the kernels call the compiled helpers (resolved when they compile)
            globals()[name] = numba.njit(cache=True)(_PLAIN[name])
        k: dict[str, Any] = {name: _dispatch(numba.njit(cache=True, parallel=True)(_PLAIN[name]),
                                             numba.njit(cache=True)(_renamed(_PLAIN[name], "_serial")))
                             for name in _PARALLEL}
        k.update({name: numba.njit(cache=True)(_PLAIN[name]) for name in _SERIAL})
        k["threads"] = numba.get_num_threads  # read per run: a caller may have lowered it for small work
        _COMPILED = k
    return _COMPILED


def kernels(work: int) -> dict[str, Any]:
    """The kernels for a run of about ``work`` record-lane visits: compiled once numba's code
    is loaded; else plain Python within the plain-Python budget (:data:`PLAIN_BUDGET`, per
    process), numpy (:mod:`.mondrian_numpy`) up to :data:`NUMPY_WORK`, compiled beyond
    (:data:`FORCE` overrides: ``"plain"``, ``"numpy"`` or ``"compiled"``)."""
    global _plain_spent
    if FORCE == "plain":
        return _PLAIN
    if FORCE == "numpy" or (FORCE is None and _COMPILED is None and _plain_spent + work > PLAIN_BUDGET
                            and work <= NUMPY_WORK):
        from . import mondrian_numpy

        return mondrian_numpy.kernels()
    if FORCE == "compiled" or _COMPILED is not None or _plain_spent + work > PLAIN_BUDGET:
        return compiled()
    _plain_spent += work
    return _PLAIN
