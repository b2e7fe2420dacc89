"""Replaying Mondrian (LeFevre et al. 2006; paper 000 §2.3, §3.2, App. B (b); §5.1).

Mondrian's own planner (:func:`openbook.algorithms.mondrian_planner.mondrian_plan`) is run on
the table as published with the replay's decision hook (:class:`.splits.SplitWalk`): the
same cuts, in the same order, as the publisher's run — each node's dimensions ranked by
width, the median cut on each — and the constraints and regions of the walk. A region's
check re-runs the planner on the node's rows for many worlds at once (each world one root
of the planner) and compares the leaves with the observed classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...algorithms.mondrian import allowable
from ...algorithms.mondrian_planner import MondrianSpace, mondrian_plan
from ...data.grouping import group_ids
from ...data.table import EncodedTable
from ...errors import ParameterError
from ...models.promise import size_floor
from ...release.align import label_keys
from .engine import Unit
from .splits import SplitWalk, assemble_units, verify_leaves

#: concatenated rows per re-run of the planner in a region check
_RERUN_ROWS = 200_000


def _region_check(algo: Any, table: EncodedTable, space: MondrianSpace, X_all: np.ndarray, rows: np.ndarray,
                  group: np.ndarray, ckeys: np.ndarray, n_sa: int) -> Any:
    """``check(sa (W, r))``: Mondrian re-run on the node's rows in every world at once
    (each world a root of the planner) publishes every leaf inside one class, under the
    class's labels ``ckeys`` (regions arise only in generalized releases)."""
    X0 = X_all[rows]
    cls = group[rows]
    r = rows.size
    model, domain, strict = algo.model, table.sa_domain, bool(algo.strict)
    floor = size_floor(model)
    decide = allowable(model, domain)

    def check(sa: np.ndarray) -> np.ndarray:
        W = sa.shape[0]
        out = np.zeros(W, dtype=bool)
        step = max(1, _RERUN_ROWS // max(r, 1))
        for a in range(0, W, step):
            w = min(step, W - a)
            X = np.tile(X0, (w, 1))
            lab = np.ascontiguousarray(sa[a:a + w], dtype=np.int32).ravel()
            lo = np.arange(w, dtype=np.int64) * r
            tree = mondrian_plan(space, X, lab, n_sa, decide, strict=strict, floor=floor, lo=lo, hi=lo + r)
            leaf = tree.group
            c = np.tile(cls, w)
            n_leaf = tree.n_groups
            cmin = np.full(n_leaf, np.iinfo(np.int64).max)
            cmax = np.full(n_leaf, -1, dtype=np.int64)
            np.minimum.at(cmin, leaf, c)
            np.maximum.at(cmax, leaf, c)
            good = cmin == cmax
            keys = label_keys(table, leaf, n_leaf, np.tile(rows, w))
            good &= (keys == ckeys[np.where(good, cmin, 0)]).all(axis=(1, 2))
            world_of_leaf = np.zeros(n_leaf, dtype=np.int64)
            world_of_leaf[leaf] = np.repeat(np.arange(w), r)
            out[a:a + w] = np.bincount(world_of_leaf, weights=~good, minlength=w) == 0
        return out
    return check


def mondrian_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
                   generalized: bool = True) -> list[Unit]:
    """The units of a Mondrian release (module docstring). ``group``: the published class
    of every row; ``generalized``: classes are told apart by their labels (a bucketized
    release tells every leaf apart)."""
    if np.any(group < 0):
        raise ParameterError("mondrian replay: the release suppressed rows", parameter="release")
    model, domain = algo.model, table.sa_domain
    n_cls, n_sa = gcounts.shape
    space = MondrianSpace(table, algo.categorical)
    walk = SplitWalk(algo.model, table, group, gcounts, generalized)
    sa = np.array(table.sa_codes, dtype=np.int32, copy=True)
    X_all = space.matrix(table)
    tree = mondrian_plan(space, X_all.copy(), sa, n_sa, walk, strict=bool(algo.strict), floor=size_floor(model))
    verify_leaves("mondrian", tree.group, tree.n_groups, group, n_cls, walk.ckeys, table)
    # strict cuts never part rows with equal QIs: in a re-run they are alike (relaxed cuts
    # share ties out in row order, so there every row counts)
    alike = group_ids(table.qi_codes)[0] if algo.strict else None
    return assemble_units(walk, group, gcounts, "mondrian",
                          lambda rows: _region_check(algo, table, space, X_all, rows, group, walk.ckeys, n_sa),
                          alike)
