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

:func:`preferred_nodes_fail` checks that every such node fails in **every** world: some class
of it fails at every point of the box its counts range over (each published class it meets
contributes between the fewest and the most of each value that class could give it;
:meth:`~openbook.models.base.PrivacyModel.box_verdict`, or a class below the model's size
floor). Then no world is excluded and the exact posterior is the class frequency — on any
number of worlds. Otherwise the replay re-runs the search on every world when they are few
(``rerun_limit``), and else leaves the people unresolved, with the node that could satisfy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...data.table import EncodedTable
from ...models.promise import size_floor


def preferred_nodes_fail(algo: Any, table: EncodedTable, group: np.ndarray,
                         levels: Any = None) -> tuple[bool, str]:
    """``(True, how)`` when every node the search could have preferred over the published
    one (``levels``: the release's, default the algorithm's last run) fails in every possible
    world (module docstring); ``(False, why not)`` otherwise."""
    from ...algorithms.lattice import Lattice, tie_slack

    if float(getattr(algo, "max_suppression", 0.0) or 0.0) > 0:
        return False, "a suppression budget makes the metric depend on the SA"
    group = np.asarray(group, dtype=np.int64)
    if np.any(group < 0):
        return False, "the release withheld people"
    model = algo.model
    lat = Lattice(table, model, 0.0)
    levels = algo.release_levels() if levels is None else levels
    if levels is None:
        return False, "the published node is not known"
    star = int(lat._index(np.asarray(levels)))
    at_star = np.asarray(lat.engine.classes(lat.nodes[star]).combo_class, dtype=np.int64)[lat.row_combo]
    if not _same_partition(at_star, group):  # a stale or foreign node: decide nothing
        return False, f"the classes of node {list(levels)} are not the release's"
    metric = str(algo.metric)
    if metric == "discernibility":
        values = np.array([float(np.square(lat.engine.classes(lat.nodes[i]).sizes.astype(np.float64)).sum())
                           for i in range(lat.grid.size)])
    else:
        got = [lat.value(i, metric) for i in range(lat.grid.size)]  # the QIs' alone at budget 0
        values = np.array([np.inf if v is None else float(v) for v in got])
    v_star = float(values[star])
    cand = np.flatnonzero(values <= v_star + tie_slack(v_star))
    cand = cand[cand != star]
    if not getattr(model, "reads_sa", True):
        return True, "the model reads class sizes only: every node's verdict is the same in every world"
    n_cls = int(group.max()) + 1 if group.size else 0
    K = table.group_sa_counts(group, n_cls).astype(np.int64)  # the published multisets
    csize = K.sum(axis=1)
    floor = size_floor(model)
    combo_of_row = lat.row_combo
    for i in cand.tolist():
        cls = lat.engine.classes(lat.nodes[i])
        node_class = np.asarray(cls.combo_class, dtype=np.int64)[combo_of_row]
        if not _fails_everywhere(model, table, node_class, int(cls.n_classes), group, K, csize, floor):
            return False, (f"node {lat.nodes[i].tolist()} (metric {values[i]:.6g}, the published node's "
                           f"{v_star:.6g}) could satisfy the model in some world")
    return True, f"each of the {cand.size} nodes the search could have preferred fails in every world"


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


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Do two labellings group the rows alike (label names aside)?"""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    pairs = np.unique(np.stack([ia.ravel(), ib.ravel()], axis=1), axis=0)
    return pairs.shape[0] == ia.max(initial=-1) + 1 == ib.max(initial=-1) + 1
