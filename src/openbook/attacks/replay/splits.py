"""The decision walk shared by the split-tree replays — Mondrian and SG (paper 000 §5.1;
Mondrian §2.3, §3.2, App. B (b); SG §3.2, App. C.3, Fig. 7).

Both algorithms build a tree top-down and, at each node, take a cut iff both children
satisfy the privacy model. The adversary knows every QI, the algorithm and the published
classes (who is in each, paper 000 §2.4, and each class's labels and SA multiset); a
generalized release cannot show two leaves whose labels coincide — they are one class. A
world is kept iff the algorithm, re-run on it, publishes the observed classes.

:class:`SplitWalk` is the decision hook of a run of the algorithm on the table as published
(each person's SA seated in their class): it decides as the publisher did and inspects every
cut offered (a :class:`~openbook.algorithms.mondrian_planner.CandidateCuts` batch). A cut's
decision depends on the world only through the *involved* classes — those with members on
both sides, or outside the node. Per cut:

* no involved class, or a decision the same for every arrangement of the involved classes
  (checked over the box of their possible counts): nothing to record;
* else, when the other decision could not publish the observed classes — a cut refused
  here that splits a class into parts whose labels differ from the class's, or a cut taken
  here after which neither a leaf nor any later cut of the node could — the world must
  decide as observed: a :class:`~.engine.Decisions` constraint on the involved classes'
  cells (the rest of each side is a constant offset);
* else the node is a :class:`~.engine.Region`: the algorithm is re-run on the node's rows
  in each world, which is kept iff every leaf lies in one class under that class's labels.

:func:`assemble_units` joins classes coupled by a constraint or a region into units whose
cells (atoms) are the rows of a class on the same side of every constraint (a region's rows
each alone). Without label merges (a bucketized release, or no two leaves with equal labels)
no region and no taken-cut constraint arises: every refused cut that splits a group is a
constraint, as in the leaf-level replay.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...algorithms.mondrian import mondrian_would_split
from ...algorithms.mondrian_planner import CandidateCuts
from ...data.table import EncodedTable
from ...errors import VerificationError
from ...release.align import label_keys
from .engine import Decisions, Region, Unit, holds
from .generic import set_only_mask
from .kernels import box_points, class_sides, refine_atoms, segment_sum, serial_below

#: box points per side above which a decision is taken as world-dependent (conservative)
_BOX_CAP = 4096


class SplitWalk:
    """The decision hook of the replay walk (module docstring) and what it records.
    ``would_split(left, right, model, domain)`` is the algorithm's own decision on count
    matrices (``mondrian_would_split``, ``sg_would_split``: both children hold)."""

    def __init__(self, model: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                 generalized: bool, would_split: Callable[..., Any] = mondrian_would_split,
                 follow_classes: bool = False) -> None:
        self.model, self.domain = model, table.sa_domain
        self.would_split = would_split
        #: take each decision the published classes dictate (``_as_published``) rather than
        #: the seated table's: SG, whose order of people with equal QIs is random, so the
        #: seated table's arrangement of SA values inside a class is one of many
        self.follow_classes = follow_classes
        self.table = table
        self.group = group
        self.n_cls = gcounts.shape[0]
        self.csize = gcounts.sum(axis=1).astype(np.int64)
        self.n_sa = gcounts.shape[1]
        self.generalized = generalized
        self.ckeys = label_keys(table, group, self.n_cls) if generalized else None
        smask = set_only_mask(self.model, self.domain)
        # the counts a decision depends on: the set's values one by one, the rest lumped
        if smask is not None and (~smask).sum() > 1:
            self.sv: np.ndarray | None = np.flatnonzero(smask)
            self.lump = int(np.flatnonzero(~smask)[0])
            self.Kc = np.concatenate([gcounts[:, self.sv], gcounts[:, ~smask].sum(axis=1, keepdims=True)], axis=1)
        else:
            self.sv, self.lump, self.Kc = None, -1, gcounts.astype(np.int64)
        self.region_of_row = np.full(table.n_rows, -1, dtype=np.int64)
        self.region_size: list[int] = []
        self.region_rows: list[np.ndarray] = []
        #: constraints: (a row of the node, node size, rows left, rows right, offsets, taken, classes)
        self.cons: list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, np.ndarray]] = []

    # -- the hook ---------------------------------------------------------------------
    def __call__(self, cuts: CandidateCuts) -> np.ndarray:
        truth = np.asarray(self.would_split(cuts.left_counts, cuts.right_counts, self.model, self.domain),
                           dtype=bool)
        if self.follow_classes:
            truth = self._as_published(cuts, truth)
        live = np.flatnonzero(self.region_of_row[cuts.rows[cuts.lo]] < 0)
        if live.size == 0:
            return truth
        sub = cuts.take(live)
        pos, _ = sub.segments()
        left = sub.left_mask()
        rid = sub.rows[pos]
        pcls = self.group[rid]
        r = sub.hi - sub.lo
        ptr = np.concatenate([[0], np.cumsum(r)]).astype(np.int64)
        n_inv, e_cut, e_cls, e_l, e_r, sa_l, sa_r, inv_pos = class_sides(
            pcls, left, ptr, self.csize, sub.labels[pos].astype(np.int64), self.n_sa, self.n_cls)
        dep = np.flatnonzero(n_inv > 0)
        if dep.size == 0:
            return truth
        m = live.size
        off_l = sub.left_counts.astype(np.int64) - _segment_sum(sa_l, e_cut, m)
        off_r = sub.right_counts.astype(np.int64) - _segment_sum(sa_r, e_cut, m)
        varying = dep[~self._constant(dep, e_cut, e_cls, e_l, e_r, off_l, off_r, sub.n_left, r)]
        if varying.size == 0:
            return truth
        taken = truth[live]
        alt = np.zeros(m, dtype=bool)
        if self.generalized:
            alt[varying] = self._other_outcome_possible(sub, varying, taken[varying], pcls, left, ptr)
        for i in varying.tolist():
            rows = rid[ptr[i]:ptr[i + 1]]
            if alt[i]:  # the node's rows in node order (the order the algorithm reads them)
                self.region_of_row[rows] = len(self.region_rows)
                self.region_rows.append(rows.copy())
                self.region_size.append(rows.size)
                continue
            seg_inv = inv_pos[ptr[i]:ptr[i + 1]]
            seg_left = left[ptr[i]:ptr[i + 1]]
            self.cons.append((int(rows[0]), int(rows.size), rows[seg_inv & seg_left], rows[seg_inv & ~seg_left],
                              off_l[i], off_r[i], bool(taken[i]), e_cls[e_cut == i]))
        return truth

    def _as_published(self, cuts: CandidateCuts, truth: np.ndarray) -> np.ndarray:
        """The decisions under which the walk's leaves are the published classes, whatever
        order the seated table gives the SA values of people with equal QIs: a node holding
        several classes splits; a node inside one class is a leaf in a bucketized release
        (each class one leaf); in a generalized one it splits when its labels are not its
        class's, and keeps the seated decision to split only if both halves keep the class's
        labels (necessary for any deeper leaves to carry them)."""
        pos, cut = cuts.segments()
        m = len(cuts)
        if m == 0:
            return truth
        cls = self.group[cuts.rows[pos]]
        cmin = np.full(m, np.iinfo(np.int64).max)
        cmax = np.full(m, -1, dtype=np.int64)
        np.minimum.at(cmin, cut, cls)
        np.maximum.at(cmax, cut, cls)
        one = cmin == cmax
        out = np.where(one, truth, True) if self.generalized else ~one
        if not self.generalized:
            return out
        assert self.ckeys is not None
        ids = np.flatnonzero(one)
        if ids.size == 0:
            return out
        # every one-class node's labels, and its halves', in two batched calls
        sel = one[cut]
        k_of = np.cumsum(one) - 1  # node -> its index among ids
        rows = cuts.rows[pos[sel]]
        want = self.ckeys[cmin[ids]]
        whole = label_keys(self.table, k_of[cut[sel]], ids.size, rows)
        same = (whole == want).all(axis=(1, 2))
        out[ids[~same]] = True
        side = cuts.left_mask()[sel].astype(np.int64)
        halves = label_keys(self.table, 2 * k_of[cut[sel]] + side, 2 * ids.size, rows).reshape(
            (ids.size, 2) + want.shape[1:])
        both = np.bincount(k_of[cut[sel]], weights=side, minlength=ids.size)
        sizes = np.bincount(k_of[cut[sel]], minlength=ids.size)
        keep = (halves == want[:, None]).all(axis=(2, 3)).all(axis=1) & (both > 0) & (both < sizes)
        split = same & out[ids]
        out[ids[split]] = keep[split]
        return out

    # -- is the decision the same in every world? --------------------------------------
    def _constant(self, dep: np.ndarray, e_cut: np.ndarray, e_cls: np.ndarray, e_l: np.ndarray, e_r: np.ndarray,
                  off_l: np.ndarray, off_r: np.ndarray, n_left: np.ndarray, r: np.ndarray) -> np.ndarray:
        """For the cuts ``dep``: is the decision the same for every possible count of each
        side (the box of each involved class's share, summed)? Conservative: a box too
        large to list counts as world-dependent."""
        Kc = self.Kc[e_cls]                     # (E, V)
        size = self.csize[e_cls][:, None]
        boxes = []
        for a, off, tot in ((e_l, off_l, n_left), (e_r, off_r, r - n_left)):
            lo_e = np.maximum(0, a[:, None] - (size - Kc))
            hi_e = np.minimum(a[:, None], Kc)
            lo = self._lumped(off)[dep] + _segment_sum(lo_e, e_cut, off.shape[0])[dep]
            hi = self._lumped(off)[dep] + _segment_sum(hi_e, e_cut, off.shape[0])[dep]
            boxes.append((lo, hi, tot[dep]))
        m = dep.size
        lo = np.concatenate([boxes[0][0], boxes[1][0]])
        hi = np.concatenate([boxes[0][1], boxes[1][1]])
        tot = np.concatenate([boxes[0][2], boxes[1][2]]).astype(np.int64)
        pts, owner, over = box_points(lo.astype(np.int64), hi.astype(np.int64), tot, float(_BOX_CAP))
        h = holds(self.model, self.domain, self._full(pts)) if pts.shape[0] else np.zeros(0, dtype=bool)
        n_pts = np.bincount(owner, minlength=2 * m)
        n_hold = np.bincount(owner, weights=h, minlength=2 * m)
        all_h = (n_hold == n_pts) & (n_pts > 0) & ~over
        any_h = (n_hold > 0) | over
        if over.any():  # too many points to list: the model may decide the box whole
            big = np.flatnonzero(over)
            blo, bhi = self._full_box(lo[big], hi[big])
            verdict = np.asarray(self.model.box_verdict(blo, bhi, tot[big], self.domain))
            all_h[big] = verdict == 1
            any_h[big] = verdict != 0
        return (all_h[:m] & all_h[m:]) | ~any_h[:m] | ~any_h[m:]

    def _lumped(self, counts: np.ndarray) -> np.ndarray:
        if self.sv is None:
            return counts
        return np.concatenate([counts[:, self.sv], counts.sum(axis=1, keepdims=True) - counts[:, self.sv].sum(
            axis=1, keepdims=True)], axis=1)

    def _full_box(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-value bounds of boxes given over the set's values and the lump: each value
        outside the set gets ``0 .. the lump's bound`` (a larger box: any verdict on it holds
        on the true one, and a set model never reads those values)."""
        if self.sv is None:
            return lo, hi
        flo = np.zeros((lo.shape[0], self.n_sa), dtype=np.int64)
        fhi = np.repeat(hi[:, -1:], self.n_sa, axis=1).astype(np.int64)
        flo[:, self.sv] = lo[:, :-1]
        fhi[:, self.sv] = hi[:, :-1]
        return flo, fhi

    def _full(self, pts: np.ndarray) -> np.ndarray:
        if self.sv is None:
            return pts
        out = np.zeros((pts.shape[0], self.n_sa), dtype=np.int64)
        out[:, self.sv] = pts[:, :-1]
        out[:, self.lump] = pts[:, -1]
        return out

    # -- could the other decision publish the same classes? ---------------------------
    def _other_outcome_possible(self, sub: CandidateCuts, cut_ids: np.ndarray, taken: np.ndarray,
                                pcls: np.ndarray, left: np.ndarray, ptr: np.ndarray) -> np.ndarray:
        """Per cut of ``cut_ids`` (indices into ``sub``): could the world decide the other
        way and still publish the observed classes? Necessary conditions only (so a
        ``False`` is certain): a taken cut must leave the parts of every class it splits
        with the class's labels; a refused cut could be replaced by the node as one leaf
        (one class, its labels) or by a later cut of the node passing the same test."""
        out = np.zeros(cut_ids.size, dtype=bool)
        refused = np.flatnonzero(~taken)
        if refused.size:
            out[refused] = self._split_keeps_labels(cut_ids[refused], sub, pcls, left, ptr)
        took = np.flatnonzero(taken)
        if took.size:
            ids = cut_ids[took]
            # the node as one leaf: one class, with that class's labels
            leaf_ok = np.zeros(ids.size, dtype=bool)
            for k, i in enumerate(ids.tolist()):
                c = np.unique(pcls[ptr[i]:ptr[i + 1]])
                if c.size == 1:
                    rows = sub.rows[sub.lo[i]:sub.hi[i]]
                    key = label_keys(self.table, np.zeros(rows.size, dtype=np.int64), 1, rows)[0]
                    assert self.ckeys is not None  # labels are checked on a generalized release
                    leaf_ok[k] = bool(np.array_equal(key, self.ckeys[c[0]]))
            out[took] = leaf_ok
            rest = np.flatnonzero(~leaf_ok)
            if rest.size:
                # the later cuts of a few nodes: small kernel runs, on this thread alone
                with serial_below(int((sub.hi[ids[rest]] - sub.lo[ids[rest]]).sum())):
                    laters = sub.take(ids[rest]).later(np.arange(rest.size))
                for later in laters:
                    lpos, _ = later.segments()
                    lleft = later.left_mask()
                    lcls = self.group[later.rows[lpos]]
                    lptr = np.concatenate([[0], np.cumsum(later.hi - later.lo)]).astype(np.int64)
                    ok = self._split_keeps_labels(np.arange(len(later)), later, lcls, lleft, lptr)
                    assert later.origin is not None  # later cuts keep their origin
                    hit = rest[later.origin[ok]]
                    out[took[hit]] = True
        return out

    def _split_keeps_labels(self, cut_ids: np.ndarray, cuts: CandidateCuts, pcls: np.ndarray, left: np.ndarray,
                            ptr: np.ndarray) -> np.ndarray:
        """Per cut: does every class the cut splits keep its labels on both sides?"""
        segs = [np.arange(ptr[i], ptr[i + 1]) for i in cut_ids.tolist()]
        pos = np.concatenate(segs) if segs else np.zeros(0, dtype=np.int64)
        which = np.repeat(np.arange(cut_ids.size), [s.size for s in segs])
        c = pcls[pos]
        side = left[pos].astype(np.int64)
        key = (which * self.n_cls + c) * 2 + side
        uk, inv = np.unique(key, return_inverse=True)
        inv = inv.ravel()
        pair = uk // 2
        both = np.isin(pair, pair[np.flatnonzero(np.diff(pair) == 0)])  # classes on both sides
        if not both.any():
            return np.ones(cut_ids.size, dtype=bool)
        cuts_rows = np.concatenate([cuts.rows[cuts.lo[i]:cuts.hi[i]] for i in cut_ids.tolist()])
        keys = label_keys(self.table, inv, uk.size, cuts_rows)
        part_cls = (uk // 2) % self.n_cls
        assert self.ckeys is not None  # labels are checked on a generalized release
        bad = both & ~(keys == self.ckeys[part_cls]).all(axis=(1, 2))
        return np.bincount((uk // 2) // self.n_cls, weights=bad, minlength=cut_ids.size) == 0


def _segment_sum(x: np.ndarray, seg: np.ndarray, m: int) -> np.ndarray:
    return segment_sum(np.ascontiguousarray(x, dtype=np.int64), np.ascontiguousarray(seg, dtype=np.int64), int(m))


def assemble_units(walk: SplitWalk, group: np.ndarray, gcounts: np.ndarray, kind: str,
                   region_check: Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray]],
                   alike: np.ndarray | None = None, batch: Any = None) -> list[Unit]:
    """Units from a finished walk (module docstring); ``region_check(rows)`` builds the
    re-run check of the region whose rows (in node order) are ``rows``; ``alike`` (per row)
    marks rows a re-run treats alike (equal keys; ``None``: every row apart); ``batch``
    (optional) checks many regions' worlds in one re-run (``check_many``)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    model, domain = walk.model, walk.domain
    n_cls = gcounts.shape[0]
    # constraints of a node that became a region are the region's
    cons = [c for c in walk.cons if not (walk.region_of_row[c[0]] >= 0
                                          and walk.region_size[walk.region_of_row[c[0]]] >= c[1])]
    # fixed classes (one value class) couple nothing: constants of the decisions, known
    # values in the regions (see _fold_fixed)
    fixed = (walk.Kc > 0).sum(axis=1) <= 1
    cons = _fold_fixed(walk, cons, fixed)
    reg_cls = [np.unique(group[rows]) for rows in walk.region_rows]
    reg_cls = [x[~fixed[x]] for x in reg_cls]
    regs = [k for k, x in enumerate(reg_cls) if x.size]  # a region of fixed classes only always passes
    # classes coupled by a constraint or a region: connected components
    links = [c[7] for c in cons] + [reg_cls[k] for k in regs]
    src = np.concatenate([x[:-1] for x in links] + [np.zeros(0, np.int64)]).astype(np.int64)
    dst = np.concatenate([x[1:] for x in links] + [np.zeros(0, np.int64)]).astype(np.int64)
    _, comp = connected_components(coo_matrix((np.ones(src.size), (src, dst)), shape=(n_cls, n_cls)),
                                   directed=False)
    factored = np.zeros(n_cls, dtype=bool)
    for x in links:
        factored[x] = True
    factored = np.isin(comp, comp[factored])
    units: list[Unit] = []
    free = np.flatnonzero(~factored[group])
    if free.size:  # no world excluded: one constant unit, a cell per class
        free = free[np.argsort(group[free], kind="stable")]
        members, cell = np.unique(group[free], return_inverse=True)
        units.append(Unit(free, cell.ravel().astype(np.int64), np.arange(members.size), gcounts[members], None, kind))
    if not links:
        return units
    # atoms: rows of a class on the same side of every constraint; region rows apart or alike
    atom = group.astype(np.int64).copy()
    c_rows = np.concatenate([x for c in cons for x in (c[2], c[3])] + [np.zeros(0, np.int64)]).astype(np.int64)
    c_side = np.concatenate([np.zeros(c[2].size + c[3].size, np.int64) + np.repeat([0, 1], [c[2].size, c[3].size])
                             for c in cons] + [np.zeros(0, np.int64)]).astype(np.int64)
    c_ptr = np.concatenate([[0], np.cumsum([c[2].size + c[3].size for c in cons])]).astype(np.int64)
    nxt = int(refine_atoms(atom, c_rows, c_side, c_ptr, n_cls))
    for k in regs:
        rows = walk.region_rows[k]
        rows = rows[~fixed[group[rows]]]
        if alike is None:  # the algorithm reads a region's rows one by one
            atom[rows] = nxt + np.arange(rows.size)
            nxt += rows.size
        else:  # rows the algorithm treats alike (same atom and same key) share a cell
            uk, inv = np.unique(np.stack([atom[rows], alike[rows]], axis=1), axis=0, return_inverse=True)
            atom[rows] = nxt + inv.ravel()
            nxt += uk.shape[0]
    by_comp: dict[int, tuple[list, list]] = {}
    for k, c in enumerate(cons):
        by_comp.setdefault(int(comp[c[7][0]]), ([], []))[0].append(k)
    for k in regs:
        by_comp.setdefault(int(comp[reg_cls[k][0]]), ([], []))[1].append(k)
    smask = set_only_mask(model, domain)
    sa = np.asarray(walk.table.sa_codes, dtype=np.int64)
    rows_f = np.flatnonzero(factored[group])
    rows_f = rows_f[np.lexsort((atom[rows_f], group[rows_f], comp[group[rows_f]]))]
    cuts = np.flatnonzero(np.diff(comp[group[rows_f]])) + 1
    for rows in np.split(rows_f, cuts):
        ks, rs = by_comp[int(comp[group[rows[0]]])]
        members, leaf = np.unique(group[rows], return_inverse=True)
        cell_atoms, cell = np.unique(atom[rows], return_inverse=True)
        cell = cell.ravel().astype(np.int64)
        cell_leaf = np.zeros(cell_atoms.size, dtype=np.int64)
        cell_leaf[cell] = leaf.ravel()

        dec = None
        if ks:
            cs = [cons[k] for k in ks]
            sides = _side_cells(cell_atoms, atom, [x for c in cs for x in (c[2], c[3])])
            dec = Decisions(model, domain, sides[0::2], sides[1::2],
                            np.array([c[6] for c in cs], dtype=bool), np.stack([c[4] for c in cs]),
                            np.stack([c[5] for c in cs]))
        regions = [_region(cell_atoms, atom, walk.region_rows[k], fixed[group[walk.region_rows[k]]], sa,
                           region_check(walk.region_rows[k]), batch) for k in rs]
        key = None if regions else (dec.key() if dec is not None else None)
        units.append(Unit(rows, cell, cell_leaf, gcounts[members], None, kind, set_mask=smask, key=key,
                          decisions=dec, regions=regions))
    return units


def _region(cell_atoms: np.ndarray, atom: np.ndarray, rows: np.ndarray, fixed: np.ndarray, sa: np.ndarray,
            check: Callable[[np.ndarray], np.ndarray], batch: Any = None) -> Region:
    """The region over ``rows`` (node order): the cell of each row of a varying class, ``-1``
    and the seated SA code for a row of a fixed class."""
    cells = np.full(rows.size, -1, dtype=np.int64)
    cells[~fixed] = np.searchsorted(cell_atoms, atom[rows[~fixed]])
    return Region(cells, check, np.where(fixed, sa[rows], -1) if fixed.any() else None,
                  None if batch is None else (batch, rows))


def _fold_fixed(walk: SplitWalk, cons: list, fixed: np.ndarray) -> list:
    """Constraints with the rows of *fixed* classes folded into their constant offsets.

    A class whose published SA multiset holds one value class (one SA value; or, for a
    model that looks at a sensitive set, one value of the set or only values outside it)
    has the same counts in every arrangement the model can tell apart, so the weight of a
    world never depends on how its values are arranged: its rows' counts are constants of
    every decision (the seated values: one such world), and a decision couples only the
    classes that can vary. Without this, classes of one value that straddle many cuts (relaxed
    Mondrian's ties) join unrelated classes into one unit."""
    if not fixed.any():
        return cons
    sa = np.asarray(walk.table.sa_codes, dtype=np.int64)
    out = []
    for c in cons:
        keep = ~fixed[c[7]]
        if keep.all():
            out.append(c)
            continue
        if not keep.any():  # every involved class fixed: the decision is the same in every world
            continue
        fl, fr = fixed[walk.group[c[2]]], fixed[walk.group[c[3]]]
        off_l = c[4] + np.bincount(sa[c[2][fl]], minlength=walk.n_sa)
        off_r = c[5] + np.bincount(sa[c[3][fr]], minlength=walk.n_sa)
        out.append((c[0], c[1], c[2][~fl], c[3][~fr], off_l, off_r, c[6], c[7][keep]))
    return out


def _side_cells(cell_atoms: np.ndarray, atom: np.ndarray, sides: list[np.ndarray]) -> list[np.ndarray]:
    """The distinct cells (indices into the sorted ``cell_atoms``) of each side's rows."""
    if len(sides) == 1:
        return [np.unique(np.searchsorted(cell_atoms, atom[sides[0]]))]
    n = cell_atoms.size
    sid = np.repeat(np.arange(len(sides), dtype=np.int64), [x.size for x in sides])
    key = np.unique(sid * n + np.searchsorted(cell_atoms, atom[np.concatenate(sides)]))
    bounds = np.searchsorted(key, np.arange(1, len(sides), dtype=np.int64) * n)
    return [k % n for k in np.split(key, bounds)]


def verify_leaves(kind: str, leaf: np.ndarray, n_leaf: int, group: np.ndarray, n_cls: int, ckeys: np.ndarray | None,
            table: EncodedTable) -> None:
    """The leaves of the tree the algorithm built on the seated table must publish the
    observed classes: each inside one class, under its labels (``ckeys``; bucketized: each
    class exactly one leaf)."""
    cmin = np.full(n_leaf, np.iinfo(np.int64).max)
    cmax = np.full(n_leaf, -1, dtype=np.int64)
    np.minimum.at(cmin, leaf, group)
    np.maximum.at(cmax, leaf, group)
    ok = bool((cmin == cmax).all())
    if ok and ckeys is not None:
        ok = bool((label_keys(table, leaf, n_leaf) == ckeys[cmin]).all())
    elif ok:
        ok = np.unique(cmin).size == n_leaf == n_cls
    if not ok:
        raise VerificationError(f"{kind}: the published classes are not what {kind} publishes from this table "
                                "(no split tree on these people's QIs and SA multisets gives them)")
