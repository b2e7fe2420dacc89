"""Replaying Mondrian (LeFevre et al. 2006; paper 000 §2.3, §3.2, App. B (b); §5.1).

Mondrian's own planner (:func:`openbook.algorithms.mondrian_planner.mondrian_plan`) is run on
the table as published with the replay's decision hook (:class:`.splits.SplitWalk`): the
same cuts, in the same order, as the publisher's run — each node's dimensions ranked by
width, the median cut on each — and the constraints and regions of the walk. A region's
check re-runs the planner on the node's rows for many worlds at once (each world one root
of the planner) and compares the leaves with the observed classes; :class:`Rerun` does so
for many regions in one run.
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
from .kernels import serial_below
from .splits import SplitWalk, assemble_units, verify_leaves

#: concatenated rows per re-run of the planner in a region check
_RERUN_ROWS = 200_000
#: rows re-run in one call from which the compiled kernels are loaded for it
_COMPILE_ROWS = 1_000_000


class Rerun:
    """Mondrian re-run on the nodes of regions (module docstring): for each request — a
    region's rows (node order) and ``(W, r)`` SA codes, one world per row of codes — does
    the re-run publish every leaf inside one class, under the class's labels ``ckeys``
    (regions arise only in generalized releases)? Every world of every request is a root
    of one planner run (chunks of :data:`_RERUN_ROWS` rows)."""

    def __init__(self, algo: Any, table: EncodedTable, space: MondrianSpace, X_all: np.ndarray, group: np.ndarray,
                 ckeys: np.ndarray | None, n_sa: int) -> None:
        self.table, self.space, self.X_all, self.group, self.ckeys, self.n_sa = table, space, X_all, group, ckeys, n_sa
        self.strict = bool(algo.strict)
        self.floor = size_floor(algo.model)
        self.decide = allowable(algo.model, table.sa_domain)

    def region(self, rows: np.ndarray) -> Any:
        """``check(sa (W, r)) -> (W,)`` of one region."""
        return lambda sa: self.check_many([(rows, sa)])[0]

    def check_many(self, reqs: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        out = [np.zeros(sa.shape[0], dtype=bool) for _, sa in reqs]
        if sum(rows.size * sa.shape[0] for rows, sa in reqs) >= _COMPILE_ROWS:
            from ...algorithms.mondrian_kernels import compiled

            compiled()  # many small roots: numba's kernels (loaded from its cache) run them 2x faster
        # (request, first world, worlds) chunks of at most _RERUN_ROWS rows (a world whole)
        jobs, cur, rows_in = [], list[tuple[int, int, int]](), 0
        for k, (rows, sa) in enumerate(reqs):
            r = rows.size
            a = 0
            while a < sa.shape[0]:
                w = max(1, min(sa.shape[0] - a, (_RERUN_ROWS - rows_in) // max(r, 1)))
                if rows_in and rows_in + w * r > _RERUN_ROWS:
                    jobs.append(cur)
                    cur, rows_in = [], 0
                    continue
                cur.append((k, a, w))
                rows_in += w * r
                a += w
        if cur:
            jobs.append(cur)
        for job in jobs:
            self._run(job, reqs, out)
        return out

    def _run(self, job: list[tuple[int, int, int]], reqs: list, out: list[np.ndarray]) -> None:
        rows_all = np.concatenate([np.tile(reqs[k][0], w) for k, _, w in job])
        lab = np.concatenate([np.ascontiguousarray(reqs[k][1][a:a + w], dtype=np.int32).ravel() for k, a, w in job])
        r_of = np.repeat([reqs[k][0].size for k, _, w in job], [w for _, _, w in job]).astype(np.int64)
        lo = np.concatenate([[0], np.cumsum(r_of)[:-1]]).astype(np.int64)
        with serial_below(rows_all.size):
            tree = mondrian_plan(self.space, self.X_all[rows_all], lab, self.n_sa, self.decide, strict=self.strict,
                                 floor=self.floor, lo=lo, hi=lo + r_of)
        leaf, n_leaf = tree.group, tree.n_groups
        c = self.group[rows_all]
        cmin = np.full(n_leaf, np.iinfo(np.int64).max)
        cmax = np.full(n_leaf, -1, dtype=np.int64)
        np.minimum.at(cmin, leaf, c)
        np.maximum.at(cmax, leaf, c)
        good = cmin == cmax
        keys = label_keys(self.table, leaf, n_leaf, rows_all)
        assert self.ckeys is not None  # leaves are checked under the classes' labels
        good &= (keys == self.ckeys[np.where(good, cmin, 0)]).all(axis=(1, 2))
        root_of_leaf = np.zeros(n_leaf, dtype=np.int64)
        root_of_leaf[leaf] = np.repeat(np.arange(r_of.size), r_of)
        ok = np.bincount(root_of_leaf, weights=~good, minlength=r_of.size) == 0
        i = 0
        for k, a, w in job:
            out[k][a:a + w] = ok[i:i + w]
            i += w


def mondrian_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
                   generalized: bool = True) -> list[Unit]:
    """The units of a Mondrian release (module docstring). ``group``: the published class
    of every row; ``generalized``: classes are told apart by their labels (a bucketized
    release tells every leaf apart)."""
    if np.any(group < 0):
        raise ParameterError("mondrian replay: the release suppressed rows", parameter="release")
    model = algo.model
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
    rerun = Rerun(algo, table, space, X_all, group, walk.ckeys, n_sa)
    return assemble_units(walk, group, gcounts, "mondrian", rerun.region, alike, batch=rerun)
