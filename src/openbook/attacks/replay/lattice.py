"""Replaying full-domain *search* by the decisions it made (paper 000 §2.4, §5.1; the lattice
search of :mod:`openbook.algorithms.lattice`).

With no suppression budget the search publishes the node of least metric among the nodes that
satisfy the model (ties: least height, then least index), and every metric it offers (loss,
discernibility, precision, height) is a function of the QIs alone there. The adversary knows
the QIs, so it knows every node's metric; a world ``W`` (an assignment of each published
class's SA multiset to its members) gives the published node ``N*`` iff ``N*`` satisfies in
``W`` — it does in every such world, its classes' counts being the published ones — and no
node the search would have preferred satisfies in ``W``. The nodes that can be preferred are
those whose metric is at most ``N*``'s (plus the search's tie slack); a node with a larger
metric never is, since the least satisfying metric of ``W`` is at most ``N*``'s.

:func:`preferred_nodes_fail` checks whether every such node fails in **every** world: some
class of it fails at every point of the box its counts range over (each published class it
meets contributes between the fewest and the most of each value that class could give it;
:meth:`~openbook.models.base.PrivacyModel.box_verdict`, or a class below the model's size
floor). Then no world is excluded and the exact posterior is the class frequency — on any
number of worlds. Otherwise :func:`lattice_units` gives one unit over the table whose world
weight is 1 iff the search, given which of the remaining nodes satisfy in the world, chooses
``N*`` (least metric, ties within the slack to the least height, then index:
``Lattice.optimize``) — enumerated when the worlds are few, sampled beyond. With a suppression
budget the metric depends on the SA and this does not apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...data.table import EncodedTable
from ...models.promise import size_floor
from .engine import Unit
from .generic import canonical, no_information_units


class _Search:
    """What the adversary knows of a full-domain search's run: every node's metric, the
    published node, the nodes that could have been preferred, and which of them could
    satisfy in some world (module docstring). ``why`` is empty when it applies."""

    def __init__(self, algo: Any, table: EncodedTable, group: np.ndarray, levels: Any) -> None:
        from ...algorithms.lattice import Lattice, tie_slack

        self.why = ""
        self.dependent: list[int] = []
        if float(getattr(algo, "max_suppression", 0.0) or 0.0) > 0:
            self.why = "a suppression budget makes the metric depend on the SA"
            return
        group = np.asarray(group, dtype=np.int64)
        if np.any(group < 0):
            self.why = "the release withheld people"
            return
        self.model = model = algo.model
        self.lat = lat = Lattice(table, model, 0.0)
        levels = algo.release_levels() if levels is None else levels
        if levels is None:
            self.why = "the published node is not known"
            return
        self.star = star = int(lat._index(np.asarray(levels)))
        at_star = np.asarray(lat.engine.classes(lat.nodes[star]).combo_class, dtype=np.int64)[lat.row_combo]
        if not np.array_equal(canonical(at_star), canonical(group)):  # a stale or foreign node: decide nothing
            self.why = f"the classes of node {list(levels)} are not the release's"
            return
        metric = str(algo.metric)
        if metric == "discernibility":
            values = np.array([float(np.square(lat.engine.classes(lat.nodes[i]).sizes.astype(np.float64)).sum())
                               for i in range(lat.grid.size)])
        else:
            got = [lat.value(i, metric) for i in range(lat.grid.size)]  # the QIs' alone at budget 0
            values = np.array([np.inf if v is None else float(v) for v in got])
        self.values, self.v_star = values, float(values[star])
        cand = np.flatnonzero(values <= self.v_star + tie_slack(self.v_star))
        self.cand = cand[cand != star]
        if not getattr(model, "reads_sa", True):
            return  # every node's verdict is the same in every world
        n_cls = int(group.max()) + 1 if group.size else 0
        K = table.group_sa_counts(group, n_cls).astype(np.int64)  # the published multisets
        csize = K.sum(axis=1)
        floor = size_floor(model)
        self.node_class: list[np.ndarray] = []
        for i in self.cand.tolist():
            cls = lat.engine.classes(lat.nodes[i])
            node_class = np.asarray(cls.combo_class, dtype=np.int64)[lat.row_combo]
            if not _fails_everywhere(model, table, node_class, int(cls.n_classes), group, K, csize, floor):
                self.dependent.append(i)
                self.node_class.append(node_class)

    def chosen_is_published(self, sat: np.ndarray) -> np.ndarray:
        """Per world (rows of ``sat``: which of :attr:`dependent` satisfy), does the search
        choose the published node: the least metric among satisfying nodes, ties within the
        slack to the least height, then the least index (``Lattice.optimize``)?"""
        from ...algorithms.lattice import TIE

        vals = self.values[self.dependent]
        best = np.minimum(np.where(sat, vals[None, :], np.inf).min(axis=1, initial=np.inf), self.v_star)
        window = best + TIE * np.maximum(1.0, np.abs(best))
        g = self.lat.grid.height
        dep = np.asarray(self.dependent, dtype=np.int64)
        before = (g[dep] < g[self.star]) | ((g[dep] == g[self.star]) & (dep < self.star))
        beats = sat & (vals[None, :] <= window[:, None]) & before[None, :]
        return (self.v_star <= window) & ~beats.any(axis=1)


def preferred_nodes_fail(algo: Any, table: EncodedTable, group: np.ndarray,
                         levels: Any = None) -> tuple[bool, str]:
    """``(True, how)`` when every node the search could have preferred over the published
    one (``levels``: the release's, default the algorithm's last run) fails in every possible
    world (module docstring); ``(False, why not)`` otherwise."""
    s = _Search(algo, table, group, levels)
    if s.why:
        return False, s.why
    if s.dependent:
        i = s.dependent[0]
        return False, (f"node {s.lat.nodes[i].tolist()} (metric {s.values[i]:.6g}, the published node's "
                       f"{s.v_star:.6g}) could satisfy the model in some world")
    return True, f"each of the {s.cand.size} nodes the search could have preferred fails in every world"


def lattice_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                  levels: Any = None) -> tuple[list[Unit] | None, str]:
    """The units of a full-domain search's release: the class frequency when no world is
    excluded; else one unit over the table whose world weight is 1 iff the search, given
    which of the nodes that could satisfy do satisfy, chooses the published node — exact
    when the worlds are few, sampled (with its standard error) beyond. ``(None, why)`` when
    the decisions do not tell (a suppression budget)."""
    s = _Search(algo, table, group, levels)
    if s.why:
        return None, s.why
    if not s.dependent:
        return no_information_units(group, gcounts), ""
    group = np.asarray(group, dtype=np.int64)
    n = group.size
    rows = np.argsort(group, kind="stable")
    leaf = group[rows]
    cls_rows = [c[rows] for c in s.node_class]  # in the unit's row order
    n_cls = [int(c.max()) + 1 for c in s.node_class]
    model, domain = s.model, table.sa_domain

    def lik(c: np.ndarray) -> np.ndarray:
        sa = np.argmax(c, axis=2).astype(np.int64)  # (W, n): each cell is one row
        w = sa.shape[0]
        n_sa = c.shape[2]
        sat = np.zeros((w, len(cls_rows)), dtype=bool)
        for j, (cr, m) in enumerate(zip(cls_rows, n_cls)):
            idx = ((np.arange(w, dtype=np.int64)[:, None] * m + cr[None, :]) * n_sa + sa).ravel()
            cnt = np.bincount(idx, minlength=w * m * n_sa).reshape(w * m, n_sa)
            sat[:, j] = np.asarray(model.holds(cnt, domain), dtype=bool).reshape(w, m).all(axis=1)
        return s.chosen_is_published(sat).astype(np.float64)

    return [Unit(rows, np.arange(n, dtype=np.int64), leaf.astype(np.int64), gcounts, lik, "lattice")], ""


def _fails_everywhere(model: Any, table: EncodedTable, node_class: np.ndarray, n_node: int, group: np.ndarray,
                      K: np.ndarray, csize: np.ndarray, floor: int) -> bool:
    """Does some class of the node fail at every point of its box of possible counts?"""
    sizes = np.bincount(node_class, minlength=n_node)
    if floor > 1 and np.any((sizes > 0) & (sizes < floor)):
        return True
    # the (node class, published class) pieces, their sizes, and each piece's box
    pair = node_class * (int(group.max()) + 1) + group
    keys, n_piece = np.unique(pair, return_counts=True)
    nc, pc = keys // (int(group.max()) + 1), keys % (int(group.max()) + 1)
    n_piece = n_piece[:, None]
    lo = np.maximum(0, n_piece - (csize[pc][:, None] - K[pc]))
    hi = np.minimum(n_piece, K[pc])
    v = K.shape[1]
    box_lo = np.zeros((n_node, v), dtype=np.int64)
    box_hi = np.zeros((n_node, v), dtype=np.int64)
    np.add.at(box_lo, nc, lo)
    np.add.at(box_hi, nc, hi)
    verdict = np.asarray(model.box_verdict(box_lo, box_hi, sizes, table.sa_domain))
    return bool(np.any(verdict == 0))

