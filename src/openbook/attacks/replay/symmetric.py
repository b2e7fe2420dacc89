"""Replaying Symmetric Grouping (SG, paper 000 §3.2, App. C.3, Fig. 7; §5.1).

SG sorts the rows by QI and splits each segment ``[lo, hi)`` of the order at
``sg_split_point`` when both halves satisfy the model (Fig. 7, line 3). The tree's shape is
QI-only; only the decisions depend on the SA. The replay walks SG's levels with the decision
walk of :mod:`.splits` — each node offers its one cut (the rows' position in the order is
the coordinate, the split point the cut) — so a refused split that splits a class is a
constraint, and in a generalized release a node whose other decision could publish the same
classes is a region. A region's check simulates SG's even-split subtree on the node's rows
for many worlds at once: every node's decision from prefix counts, then the leaves reached,
each of which must lie in one class under its labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...algorithms.mondrian_planner import CandidateCuts
from ...algorithms.symmetric import sg_split_point, sg_would_split
from ...data.table import EncodedTable
from ...errors import VerificationError
from ...release.align import label_keys
from .engine import Unit, holds
from .greedy import first_order
from .splits import SplitWalk, assemble_units, verify_leaves

#: worlds × rows per chunk of a region check
_CHECK_ROWS = 200_000


def sg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
             generalized: bool = False) -> list[Unit]:
    """The units of an SG release (module docstring): ``group`` is the published class of
    every row; ``generalized``: classes are told apart only by their labels. People with equal
    QIs are arranged as the seating needs them (:func:`.greedy.tie_orders`)."""
    if np.any(group < 0):
        raise VerificationError("sg: the release suppressed rows, which SG never does")
    return first_order(lambda order: _sg_units(algo, table, group, gcounts, generalized, order), algo, table, group)


def _sg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, generalized: bool,
              order: np.ndarray) -> list[Unit]:
    model, domain = algo.model, table.sa_domain
    n = order.size
    n_cls, n_sa = gcounts.shape
    walk = SplitWalk(model, table, group, gcounts, generalized, would_split=sg_would_split, follow_classes=True)
    X = np.arange(n, dtype=np.int32)[:, None]  # a row's coordinate: its position in the order
    labels = np.asarray(table.sa_codes, dtype=np.int32)[order]
    prefix = np.zeros((n + 1, n_sa), dtype=np.int64)
    np.add.at(prefix, (np.arange(1, n + 1), labels), 1)
    np.cumsum(prefix, axis=0, out=prefix)
    lo = np.array([0], dtype=np.int64)
    hi = np.array([n], dtype=np.int64)
    leaf_lo: list[np.ndarray] = []
    leaf_hi: list[np.ndarray] = []
    level = 0
    while lo.size:
        mid = sg_split_point(lo, hi)
        split = np.zeros(lo.size, dtype=bool)
        c = np.flatnonzero(hi - lo >= 2)
        if c.size:
            cuts = CandidateCuts(level, 0, c, lo[c], hi[c], np.zeros(c.size, np.int64), mid[c].astype(np.int64),
                                 np.zeros(c.size, np.int64), (mid[c] - lo[c]).astype(np.int64),
                                 prefix[mid[c]] - prefix[lo[c]], prefix[hi[c]] - prefix[mid[c]], X, order, labels)
            split[c] = walk(cuts)
        leaf_lo.append(lo[~split])
        leaf_hi.append(hi[~split])
        s = np.flatnonzero(split)
        lo, hi = np.stack([lo[s], mid[s]], axis=1).ravel(), np.stack([mid[s], hi[s]], axis=1).ravel()
        level += 1
    llo, lhi = np.concatenate(leaf_lo), np.concatenate(leaf_hi)
    srt = np.argsort(llo)  # the leaves tile the order
    leaf = np.empty(n, dtype=np.int64)
    leaf[order] = np.repeat(np.arange(llo.size, dtype=np.int64), (lhi - llo)[srt])
    verify_leaves("sg", leaf, llo.size, group, n_cls, walk.ckeys, table)
    return assemble_units(walk, group, gcounts, "sg",
                          lambda rows: _region_check(model, domain, table, rows, group, walk.ckeys, n_sa))


def _region_check(model: Any, domain: Any, table: EncodedTable, rows: np.ndarray, group: np.ndarray,
                  ckeys: np.ndarray | None, n_sa: int) -> Any:
    """``check(sa (W, r))``: SG's subtree on the node's rows (in order) publishes, in every
    world, leaves each inside one class under its labels."""
    assert ckeys is not None  # the classes' labels: a region is checked only against them
    r = rows.size
    # the largest even-split subtree of [0, r): every node with >= 2 rows has two children
    nlo, nhi, kids = [0], [r], []
    k = 0
    while k < len(nlo):
        a, b = nlo[k], nhi[k]
        if b - a >= 2:
            m = int(sg_split_point(a, b))
            kids.append((len(nlo), len(nlo) + 1))
            nlo += [a, m]
            nhi += [m, b]
        else:
            kids.append((-1, -1))
        k += 1
    nlo_a, nhi_a = np.asarray(nlo), np.asarray(nhi)
    n_nodes = nlo_a.size
    # each node as a leaf: in one class, under that class's labels (QI-only)
    sizes = nhi_a - nlo_a
    node_of = np.repeat(np.arange(n_nodes), sizes)
    pos = np.concatenate([np.arange(a, b) for a, b in zip(nlo, nhi)])
    cls = group[rows[pos]]
    cmin = np.full(n_nodes, np.iinfo(np.int64).max)
    cmax = np.full(n_nodes, -1, dtype=np.int64)
    np.minimum.at(cmin, node_of, cls)
    np.maximum.at(cmax, node_of, cls)
    leaf_ok = cmin == cmax
    keys = label_keys(table, node_of, n_nodes, rows[pos])
    leaf_ok &= (keys == ckeys[np.where(leaf_ok, cmin, 0)]).all(axis=(1, 2))
    inner = np.flatnonzero([kl >= 0 for kl, _ in kids])
    kl = np.array([kids[i][0] for i in inner], dtype=np.int64)

    def check(sa: np.ndarray) -> np.ndarray:
        W = sa.shape[0]
        out = np.zeros(W, dtype=bool)
        step = max(1, _CHECK_ROWS // max(1, r * n_sa))
        for a in range(0, W, step):
            w = min(step, W - a)
            P = np.zeros((w, r + 1, n_sa), dtype=np.int64)
            np.add.at(P, (np.repeat(np.arange(w), r), np.tile(np.arange(1, r + 1), w), sa[a:a + w].ravel()), 1)
            np.cumsum(P, axis=1, out=P)
            split = np.zeros((w, n_nodes), dtype=bool)
            if inner.size:
                mid = nhi_a[kl]
                left = P[:, mid] - P[:, nlo_a[inner]]
                right = P[:, nhi_a[inner]] - P[:, mid]
                split[:, inner] = holds(model, domain, left) & holds(model, domain, right)
            active = np.zeros((w, n_nodes), dtype=bool)
            active[:, 0] = True
            ok = np.ones(w, dtype=bool)
            for node in range(n_nodes):  # parents come before children
                at_leaf = active[:, node] & ~split[:, node]
                ok &= ~at_leaf | leaf_ok[node]
                c0, c1 = kids[node]
                if c0 >= 0:
                    go = active[:, node] & split[:, node]
                    active[:, c0] = go
                    active[:, c1] = go
            out[a:a + w] = ok
        return out
    return check
