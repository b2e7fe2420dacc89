"""Exact enumeration of a unit's worlds with the decisions checked on the way (paper 000
§5.1: "reject those assignments on which the (deterministic) algorithm would not produce
the published grouping").

A unit's contingency tables (SA class counts per cell, :mod:`.engine`) are enumerated depth
first, cell by cell (the kernel :func:`.kernels.pruned_tables`, which also lists every table of
a unit for :func:`.kernels.unit_tables_nb`). A :class:`~.engine.Decisions` constraint reads the counts of its two
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
from dataclasses import dataclass

import numpy as np

from .engine import Unit, expand, holds
from .kernels import pruned_tables

#: largest number of table-lookup entries (every side of every decision) built for a unit
LUT_LIMIT = 4_000_000


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


def cell_order(n_cells: int, dec) -> np.ndarray:
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


def count_tables(cell_leaf: np.ndarray, size: np.ndarray, K: np.ndarray, limit: float) -> int | None:
    """The number of a unit's contingency tables (row sums ``size``, each leaf's column sums
    ``K``), counted by the enumeration kernel without storing or weighing them; ``None`` past
    ``limit``. ~7x faster than listing them: a unit too large to list is found out cheaply."""
    C, V = size.size, K.shape[1]
    z = np.zeros(0, dtype=np.int64)
    out = pruned_tables(np.asarray(size, dtype=np.int64), np.asarray(cell_leaf, dtype=np.int64),
                        np.ascontiguousarray(K, dtype=np.int64), np.zeros(C + 1, dtype=np.int64), z,
                        np.zeros((0, V), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.bool_),
                        np.zeros(C + 1, dtype=np.int64), z, np.zeros(0, dtype=np.bool_), np.zeros(2),
                        int(min(limit, 2**62)), 0, False)
    return int(out[4]) if out[5] else None


@dataclass
class Lookup:
    """A unit's decisions as the enumeration kernels read them (:func:`lookup`)."""

    order: np.ndarray     # the cells in fill order
    back: np.ndarray      # its inverse
    size: np.ndarray      # cell sizes, fill order
    leaf: np.ndarray      # cell leaves, fill order
    cs_ptr: np.ndarray    # CSR: the sides of each cell
    cs_side: np.ndarray
    rad: np.ndarray       # per side: radix of its class counts into its answers
    lut_ptr: np.ndarray   # per side: where its answers start
    lut: np.ndarray       # the model's answers
    end_ptr: np.ndarray   # CSR: the decisions completed at each cell
    end_dec: np.ndarray
    accepted: np.ndarray  # per decision: its observed outcome
    lgam: np.ndarray      # log i! up to the largest leaf


def lookup(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, order: np.ndarray | None = None
           ) -> Lookup | None:
    """The unit's decisions prepared for :func:`.kernels.pruned_tables` and the sequential
    sampler (:mod:`.sequential`), cells filled in ``order`` (default :func:`cell_order`);
    ``None`` when the lookup tables would pass :data:`LUT_LIMIT`."""
    size = unit.cell_size.astype(np.int64)
    dec = unit.decisions
    k = 0 if dec is None else dec.k
    sides = [] if dec is None else [s for i in range(k) for s in (dec.left[i], dec.right[i])]
    order = cell_order(unit.n_cells, dec) if order is None else np.asarray(order, dtype=np.int64)
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
        # class v in the side: at most min(K_lv, the side's rows of leaf l), summed over the leaves
        side_rows = np.bincount(leaf_of[cells], weights=size[cells], minlength=K.shape[0]).astype(np.int64)
        hi_v = np.minimum(K, side_rows[:, None]).sum(axis=0) if cells.size else np.zeros(V, np.int64)
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
        assert dec is not None  # sides come from decisions
        lr = None if dec.off_left is None or dec.off_right is None else (dec.off_left, dec.off_right)
        pts, fulls = [], []
        for s, (dims, rows) in enumerate(boxes):
            idx = np.arange(math.prod(int(x) for x in dims.tolist()), dtype=np.int64)
            y = np.zeros((idx.size, V), dtype=np.int64)
            r_ = idx
            for v in range(V - 1):
                if dims[v] > 1:  # a class the side cannot hold stays 0: no pass over the box
                    y[:, v] = r_ % dims[v]
                    r_ = r_ // dims[v]
            y[:, V - 1] = rows - y[:, :V - 1].sum(axis=1)
            feas = y[:, V - 1] >= 0
            pts.append(feas)
            full = expand(y[feas], rep, n_sa)
            if lr is not None:
                full += lr[s % 2][s // 2][None, :]  # the side's rows outside the unit
            fulls.append(full)
        feas = np.concatenate(pts)
        full = np.concatenate(fulls)
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
    top = int(max(size.max(initial=0), K.sum(axis=1).max(initial=0)))
    lgam = np.array([math.lgamma(i + 1.0) for i in range(top + 2)])  # to the largest leaf: hypergeometric terms
    return Lookup(order=order, back=back, size=size[order], leaf=leaf_of[order].astype(np.int64), cs_ptr=cs_ptr,
                  cs_side=cs_side, rad=rad, lut_ptr=lut_ptr, lut=lut, end_ptr=end_ptr, end_dec=oe.astype(np.int64),
                  accepted=accepted, lgam=lgam)


def pruned(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, limit: float, store_cap: int = 0
           ) -> Pruned | None:
    """The tables of ``unit`` that keep its decisions (module docstring): ``None`` when the
    lookup tables would be too large; ``complete`` False when more than ``limit`` tables and
    cut-off partial tables would be visited; ``tabs`` / ``logw`` ``None`` when more than
    ``store_cap`` are kept."""
    lk = lookup(unit, K, rep, n_sa)
    if lk is None:
        return None
    back = lk.back
    acc, tot, ref, n_kept, visited, ok, tabs, logw, stored = pruned_tables(
        lk.size, lk.leaf, np.ascontiguousarray(K, dtype=np.int64), lk.cs_ptr, lk.cs_side, lk.rad, lk.lut_ptr, lk.lut,
        lk.end_ptr, lk.end_dec, lk.accepted, lk.lgam, int(min(limit, 2**62)), int(store_cap))
    if not ok:
        return Pruned(acc, 0.0, 0.0, 0, int(visited), None, None, complete=False)
    keep_tabs = tabs[:, back, :] if (store_cap > 0 and stored) else None
    return Pruned(acc[back], float(tot), float(ref), int(n_kept), int(visited), keep_tabs,
                  logw if keep_tabs is not None else None)
