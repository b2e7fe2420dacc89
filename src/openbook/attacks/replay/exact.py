"""Exact enumeration of a unit's worlds with the decisions checked on the way (paper 000
§5.1: "reject those assignments on which the (deterministic) algorithm would not produce
the published grouping").

A unit's contingency tables (SA class counts per cell, :mod:`.engine`) are enumerated depth
first, cell by cell. A :class:`~.engine.Decisions` constraint reads the counts of its two
sides, each a set of cells plus a constant offset; once the last cell of a decision is
filled its outcome is known, and a partial table that decides differently from the
publisher is dropped with every table below it. So the search visits the tables that keep
every decision (and the partial tables cut off), never the far larger set of all tables.

Each side's outcome is looked up in a table of the model's answers over the side's possible
counts (one model call for all sides of all decisions): the side's rows are fixed, so its
counts of the first ``V - 1`` classes determine it. Each kept table is weighted by its
number of worlds (``Π_c s_c! / Π_cv x_cv!``; the constant ``Π s_c!`` omitted) and summed into
the posterior as it is found (a running log-sum-exp); optionally the kept tables are stored
for the checks that cannot be evaluated cell by cell (a region re-runs the algorithm on the
whole table).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .engine import Unit, expand, holds
from .kernels import last_cells_of_leaves, next_entry

#: largest number of table-lookup entries (every side of every decision) built for a unit
LUT_LIMIT = 4_000_000


@njit(cache=True)
def pruned_tables(sizes, cell_leaf, K, cs_ptr, cs_side, side_rad, lut_ptr, lut, end_ptr, end_dec, accepted,
                  lgam, limit, store_cap):  # pragma: no cover - compiled
    """Depth-first enumeration of the ``(C, V)`` tables (row sums ``sizes``, per leaf —
    cells with equal ``cell_leaf``, in any order — column sums ``K[leaf]``) keeping every
    decision. Cell ``c`` lies on the sides ``cs_side[cs_ptr[c]:cs_ptr[c+1]]``; side ``s``
    holds iff ``lut[lut_ptr[s] + Σ_v y_v·side_rad[s, v]]`` (``y`` its counts from cells);
    decisions ``end_dec[end_ptr[c]:end_ptr[c+1]]`` are complete after cell ``c``, and
    decision ``d`` (sides ``2d``, ``2d+1``) is kept iff both hold == ``accepted[d]``.

    Returns ``(acc (C, V), tot, ref, n_kept, visited, ok, tabs, logw, stored_ok)``: the
    weighted class counts and total weight of the kept tables, both scaled by ``exp(-ref)``;
    ``visited`` = tables and cut-off partial tables seen (``ok`` False above ``limit``); the
    kept tables and their log weights when ``store_cap > 0`` (``stored_ok`` False past it).
    The walk itself is :func:`.kernels.next_entry`, shared with :func:`.kernels.unit_tables_nb`."""
    C = sizes.size
    V = K.shape[1]
    P = C * V
    S = side_rad.shape[0]
    last_of_leaf = last_cells_of_leaves(cell_leaf, K.shape[0])  # the leaf's last cell: its remainder
    hi = np.zeros(P, np.int64)
    val = np.zeros(P, np.int64)
    lw = np.zeros(P + 1)
    y = np.zeros((S, V), np.int64)
    acc = np.zeros((C, V))
    tot = 0.0
    ref = -1e300
    n_kept = 0
    visited = 0
    cap0 = 0
    if store_cap > 0:
        cap0 = min(store_cap, 1024)
    tabs = np.zeros((cap0, C, V), np.int32)
    logw = np.zeros(cap0)
    stored_ok = True
    if P == 0:
        return acc, 1.0, 0.0, 1, 1, True, np.zeros((1, C, V), np.int32), np.zeros(1), True
    rem = K.astype(np.int64).copy()
    left = sizes.astype(np.int64).copy()
    p = 0
    fresh = True
    while True:
        p = next_entry(p, fresh, V, cell_leaf, last_of_leaf, rem, left, hi, val, cs_ptr, cs_side, y)
        if p < 0:
            break
        c = p // V
        v = p % V
        lw[p + 1] = lw[p] - lgam[val[p]]
        if v == V - 1:  # cell c complete: the decisions it completes
            keep = True
            for q in range(end_ptr[c], end_ptr[c + 1]):
                d = end_dec[q]
                both = True
                for s in (2 * d, 2 * d + 1):
                    key = 0
                    for u in range(V):
                        key += y[s, u] * side_rad[s, u]
                    if not lut[lut_ptr[s] + key]:
                        both = False
                if both != accepted[d]:
                    keep = False
                    break
            if not keep:
                visited += 1
                if visited > limit:
                    return acc, tot, ref, n_kept, visited, False, tabs[:0], logw[:0], False
                fresh = False
                continue
        if p == P - 1:  # a complete table that keeps every decision
            visited += 1
            if visited > limit:
                return acc, tot, ref, n_kept, visited, False, tabs[:0], logw[:0], False
            w_log = lw[P]
            if w_log > ref:
                scale = math.exp(ref - w_log) if ref > -1e299 else 0.0
                tot *= scale
                for a in range(C):
                    for b in range(V):
                        acc[a, b] *= scale
                ref = w_log
            w = math.exp(w_log - ref)
            tot += w
            for q in range(P):
                acc[q // V, q % V] += w * val[q]
            if store_cap > 0 and stored_ok:
                if n_kept >= store_cap:
                    stored_ok = False
                else:
                    if n_kept >= tabs.shape[0]:
                        grow = min(store_cap, 2 * tabs.shape[0] + 1)
                        t2 = np.zeros((grow, C, V), np.int32)
                        t2[:n_kept] = tabs[:n_kept]
                        l2 = np.zeros(grow)
                        l2[:n_kept] = logw[:n_kept]
                        tabs = t2
                        logw = l2
                    for q in range(P):
                        tabs[n_kept, q // V, q % V] = val[q]
                    logw[n_kept] = w_log
            n_kept += 1
            fresh = False
            continue
        p += 1
        fresh = True
    n_st = min(n_kept, tabs.shape[0]) if stored_ok else 0
    return acc, tot, ref, n_kept, visited, True, tabs[:n_st], logw[:n_st], stored_ok


class Pruned:
    """The kept tables of a unit (:func:`pruned`), in the unit's cell order."""

    def __init__(self, acc: np.ndarray, tot: float, ref: float, n_kept: int, visited: int,
                 tabs: np.ndarray | None, logw: np.ndarray | None, complete: bool = True) -> None:
        self.acc, self.tot, self.ref, self.n_kept, self.visited = acc, tot, ref, n_kept, visited
        self.tabs, self.logw = tabs, logw
        #: False: the search stopped at its limit (nothing else is valid)
        self.complete = complete


def log_all_tables(cell_leaf: np.ndarray, size: np.ndarray, K: np.ndarray) -> float:
    """log of ``Σ`` over every table of ``Π_cv 1/x_cv!`` — per leaf ``n!/(Π_v K_v! Π_c s_c!)``
    (the leaf's worlds, each table counted ``Π_c s_c!/Π_v x_cv!`` times)."""
    out = 0.0
    for lf in range(K.shape[0]):
        s = size[cell_leaf == lf]
        out += math.lgamma(float(s.sum()) + 1) - sum(math.lgamma(float(k) + 1) for k in K[lf]) \
            - sum(math.lgamma(float(x) + 1) for x in s)
    return out


def _cell_order(n_cells: int, dec) -> np.ndarray:
    """The order cells are filled in: decisions with the fewest cells first (each completes,
    and cuts off the partial tables it rejects, as early as possible), then the rest."""
    if dec is None or dec.k == 0:
        return np.arange(n_cells)
    cells = [dec.cells(i) for i in range(dec.k)]
    placed = np.zeros(n_cells, dtype=bool)
    out = []
    for i in np.argsort([c.size for c in cells], kind="stable"):
        new = np.unique(cells[i][~placed[cells[i]]])
        placed[new] = True
        out.append(new)
    out.append(np.flatnonzero(~placed))
    return np.concatenate(out).astype(np.int64)


def pruned(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, limit: float, store_cap: int = 0
           ) -> Pruned | None:
    """The tables of ``unit`` that keep its decisions (module docstring): ``None`` when the
    lookup tables would be too large; ``complete`` False when more than ``limit`` tables and
    cut-off partial tables would be visited; ``tabs`` / ``logw`` ``None`` when more than
    ``store_cap`` are kept."""
    size = unit.cell_size.astype(np.int64)
    dec = unit.decisions
    k = 0 if dec is None else dec.k
    sides = [] if dec is None else [s for i in range(k) for s in (dec.left[i], dec.right[i])]
    order = _cell_order(unit.n_cells, dec)
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    C, V = order.size, K.shape[1]
    leaf_of = unit.cell_leaf
    # per side: the box of its class counts from cells (the first V - 1 classes; the last
    # follows from the side's rows), its radix and its model answers
    rad = np.zeros((len(sides), V), dtype=np.int64)
    lut_ptr = np.zeros(len(sides) + 1, dtype=np.int64)
    boxes = []
    for si, cells in enumerate(sides):
        hi_v = np.minimum(size[cells][:, None], K[leaf_of[cells]]).sum(axis=0) if cells.size else np.zeros(V, np.int64)
        dims = hi_v[:-1] + 1
        n = math.prod(int(x) for x in dims.tolist())  # a Python int: the product can pass 2^63
        if int(lut_ptr[si]) + n > LUT_LIMIT:
            return None
        lut_ptr[si + 1] = int(lut_ptr[si]) + n
        if V > 1:
            rad[si, :-1] = np.concatenate([[1], np.cumprod(dims[:-1])]) if dims.size else []
        boxes.append((dims, int(size[cells].sum())))
    lut = np.zeros(int(lut_ptr[-1]), dtype=np.bool_)
    if sides:
        pts = []
        for (dims, rows) in boxes:
            idx = np.arange(math.prod(int(x) for x in dims.tolist()), dtype=np.int64)
            y = np.zeros((idx.size, V), dtype=np.int64)
            r_ = idx.copy()
            for v in range(V - 1):
                y[:, v] = r_ % dims[v]
                r_ //= dims[v]
            y[:, V - 1] = rows - y[:, :V - 1].sum(axis=1)
            pts.append(y)
        assert dec is not None  # sides come from decisions
        allp = np.concatenate(pts)
        lr = None if dec.off_left is None or dec.off_right is None else (dec.off_left, dec.off_right)
        off = np.concatenate([np.repeat(lr[s % 2][s // 2][None, :], p.shape[0], 0)
                              if lr is not None else np.zeros((p.shape[0], n_sa), np.int64)
                              for s, p in enumerate(pts)])
        feas = allp[:, V - 1] >= 0
        full = expand(allp[feas], rep, n_sa) + off[feas]
        lut[np.flatnonzero(feas)] = holds(dec.model, dec.domain, full) if full.shape[0] else np.zeros(0, bool)
    # CSR: sides of each cell (enumeration order), decisions completed at each cell
    cs_cell = np.concatenate([back[c] for c in sides] + [np.zeros(0, np.int64)]).astype(np.int64)
    cs_sid = np.concatenate([np.full(c.size, si, np.int64) for si, c in enumerate(sides)] + [np.zeros(0, np.int64)])
    o = np.argsort(cs_cell, kind="stable")
    cs_ptr = np.concatenate([[0], np.cumsum(np.bincount(cs_cell, minlength=C))]).astype(np.int64)
    cs_side = cs_sid[o].astype(np.int64)
    end = np.array([] if dec is None else
                   [max(int(back[dec.left[i]].max(initial=-1)), int(back[dec.right[i]].max(initial=-1)), 0)
                    for i in range(k)], dtype=np.int64)
    oe = np.argsort(end, kind="stable")
    end_ptr = np.concatenate([[0], np.cumsum(np.bincount(end, minlength=C))]).astype(np.int64)
    accepted = np.zeros(0, np.bool_) if dec is None else dec.accepted.astype(np.bool_)
    lgam = np.array([math.lgamma(i + 1.0) for i in range(int(size.max(initial=0)) + 2)])
    acc, tot, ref, n_kept, visited, ok, tabs, logw, stored = pruned_tables(
        size[order], leaf_of[order].astype(np.int64), np.ascontiguousarray(K, dtype=np.int64), cs_ptr, cs_side, rad,
        lut_ptr, lut, end_ptr, oe.astype(np.int64), accepted, lgam, int(min(limit, 2**62)), int(store_cap))
    if not ok:
        return Pruned(acc, 0.0, 0.0, 0, int(visited), None, None, complete=False)
    keep_tabs = tabs[:, back, :] if (store_cap > 0 and stored) else None
    return Pruned(acc[back], float(tot), float(ref), int(n_kept), int(visited), keep_tabs,
                  logw if keep_tabs is not None else None)
