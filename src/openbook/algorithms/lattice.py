"""Full-domain generalization by lattice search (Samarati 2001; LeFevre et al., Incognito,
SIGMOD 2005; Kohlmayer et al., Flash, 2012) — the global-recoding, minimality-following
algorithm paper 001 §4.1 attacks.

The *generalization lattice* has one node per level vector ``(l_1, …, l_d)``, ``0 <= l_j <=
height_j`` of the QI hierarchies; node ``u`` generalizes node ``v`` when ``u >= v``
componentwise. A node *satisfies* the model when, after recoding every QI ``j`` to level
``l_j``, the rows of the classes that violate the model are at most ``max_suppression · n``
(those classes are suppressed).

Output: the *minimal* satisfying nodes (no satisfying node anywhere strictly below —
Samarati's k-minimal generalizations) and, among them, the one with the least information
loss under ``metric`` (ties: smaller height, then lexicographic). ``all_minimal`` lists
every minimal node; by default the search prunes on the metric (below) and lists the
minimal nodes whose bound does not exceed the chosen node's metric — every node that could
have been chosen — and chooses the same node. Metrics:

``"loss"``            mean over rows and QIs of ``(coverage(value) - 1) / (n_leaves - 1)``,
                      a suppressed row counting 1 per QI (Iyengar's LM; ARX's "Loss").
``"discernibility"``  ``Σ |class|² + n_suppressed · n`` (Bayardo & Agrawal).
``"precision"``       Sweeney's Prec loss: mean over QIs of ``level / height``.
``"height"``          sum of levels.

Search (:mod:`.lattice_search`; proofs in ``docs/algorithms.md``):

* *Upward closed* (:meth:`Lattice.upward_closed`: the model is monotonic and there is no
  budget or the model is *absorbing* — a satisfying class still satisfies after any rows
  join it): Flash's binary search on greedy chains with predictive tagging (a satisfying
  node tags its up-set, a failing one its down-set) and, for absorbing models,
  suppression-aware bounds from the rows kept below / suppressed above a node.
* Otherwise (entropy / recursive ℓ, (α,k), simple ℓ, ℓ-eligibility, t-closeness with a
  budget — a satisfying class that absorbs a suppressed minority can fail, fixtures in
  ``tests/unit/algorithms/test_lattice_minimal.py``): the same search on an absorbing
  *necessary* condition of the model (:mod:`.lattice_bounds`: at least ℓ distinct values,
  a minimal class size, ...), whose failing nodes fail the model with their whole
  down-set; then every node above no satisfying node is checked bottom-up, and a
  satisfying one removes its up-set (not minimal, never checked).
* Pruning on the metric (ARX's "insufficient utility", Flash §5; not for discernibility):
  each metric has a bound that only grows upwards and that no node's metric is below — the
  loss with nothing suppressed (a suppressed row costs 1 per QI, at least its
  generalization), the height and precision themselves. Once a checked node is known to
  be minimal (its direct predecessors all fail), every node whose bound exceeds its metric
  (1e-12 of float slack) is skipped with its up-set: no minimal node there can be chosen.
  A node whose bound does not exceed the least metric of the minimal nodes was never
  skipped, nor any node below it (their bounds are no larger), so those minimal nodes are
  found exactly. The chains then start from the nodes of least bound (then height).

Nodes are evaluated on class counts, never rows (:mod:`.lattice_counts`): the distinct QI
combinations with their SA counts, each node's classes rolled up from the cached node
below it with the fewest classes. :class:`Lattice` takes an :class:`EncodedTable` or a
:class:`LatticeData` (distinct code tuples and an SA count matrix from any source).

``n_checked`` counts the distinct nodes whose classes were computed — by the search or to
value a candidate for the metric (ARX's "transformations checked" counts the same: nodes
checked or whose information loss was computed). The loss of a minimal node that was not
checked is computed only when its lower bound (the generalization loss with nothing
suppressed) does not exceed the best value found; the others get ``None`` in
``minimal_metric``.

Provenance: ``levels`` (chosen node), ``minimal_nodes``, ``minimal_metric``, ``n_nodes``,
``n_checked``, ``metric`` and its value; the decision function :func:`node_satisfies` lets
an adversary re-check any node. :func:`search_lattice` runs the search on any
:class:`Lattice`; :mod:`.lattice_frequency` on a frequency table streamed from a file.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import InfeasibleError, ParameterError
from ..models.base import PrivacyModel
from ..models.k_anonymity import KAnonymity
from ..params import Boolean, Options, Real
from ..release import Partition
from .base import Anonymizer
from .lattice_bounds import necessary_condition
from .lattice_counts import ClassEngine, LatticeData, NodeClasses
from .lattice_search import FAIL, SAT, UNKNOWN, FlashSearch, Grid, MaskBounds, bottom_up

METRICS = ("loss", "discernibility", "precision", "height")

#: the largest lattice the search enumerates (its nodes are materialised as an array)
MAX_NODES = 2_000_000


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a · b`` without BLAS (whose threads spin on a loaded machine), the same sum
    everywhere a node's loss is computed."""
    return float(np.multiply(a, b).sum())


def lattice_data(table: EncodedTable) -> tuple[LatticeData, np.ndarray]:
    """The distinct QI combinations of ``table`` with their SA counts, and each row's
    combination."""
    cls, m = group_ids(table.qi_codes)
    rep = np.empty(m, dtype=np.int64)
    rep[cls] = np.arange(table.n_rows)
    counts = table.group_sa_counts(cls, m)
    data = LatticeData(table.qi_codes[rep], counts, [table.hierarchy(nm) for nm in table.qi_names],
                       table.sa_domain, table.qi_names)
    return data, cls


class Lattice:
    """The generalization lattice of a table's QI hierarchies and the node checks.

    ``table`` is an :class:`EncodedTable` or a :class:`LatticeData`."""

    def __init__(self, table: EncodedTable | LatticeData, model: PrivacyModel, max_suppression: float = 0.0) -> None:
        if isinstance(table, LatticeData):
            data, self.row_combo, self.table = table, None, None
        else:
            data, self.row_combo = lattice_data(table)
            self.table = table
        self.data, self.model = data, model
        self.domain = data.domain
        self.n = data.n
        self.max_suppression = float(max_suppression)
        self.budget = int(np.floor(max_suppression * self.n + 1e-9))
        self.h = data.h
        self.heights = data.heights
        self.d = data.d
        size = math.prod(int(x) + 1 for x in self.heights.tolist())  # Python ints: no wrap
        if size > MAX_NODES:
            raise ParameterError(f"the full-domain lattice of these {self.d} QIs has {size:.3g} nodes, above the "
                                 f"{MAX_NODES:,} openbook searches; use fewer QIs or --algorithm mondrian",
                                 parameter="qi", value=size)
        self.grid = Grid(self.heights)
        self.nodes, self.shape = self.grid.nodes, self.grid.shape
        self.combos, self.combo_size = data.combos, data.sizes
        self.absorbing = bool(model.monotonic) and bool(model.absorbing)
        self.condition = None if self.absorbing else necessary_condition(model, self.domain)
        size_only = isinstance(model, KAnonymity) and (self.condition is None or self.condition.size_only)
        self.engine = ClassEngine(data, with_counts=not size_only)
        self._evaluated: set[tuple[int, ...]] = set()
        self._values: dict[int, tuple[float, float]] = {}  # node -> (loss, discernibility) when satisfying
        # loss with nothing suppressed, per node (the order of the sum is loss_lower_bound's)
        lb = np.zeros(self.grid.size)
        for j in range(self.d):
            lb = lb + data.level_mass[j][self.nodes[:, j]]
        self.lb = lb / (self.n * self.d)
        self._prune: str | None = None  # metric pruned on, during a search
        self._state: np.ndarray | None = None
        self._cands: list[tuple[int, float, np.ndarray]] = []  # checked satisfying nodes, metric, predecessors
        self._best = math.inf  # least metric of a node known to be minimal

    @property
    def n_checked(self) -> int:
        """Distinct nodes whose classes were computed (checks and metric evaluations)."""
        return len(self._evaluated)

    # -- one node ----------------------------------------------------------------------
    def _classes(self, levels) -> NodeClasses:
        cls = self.engine.classes(levels)
        self._evaluated.add(tuple(int(x) for x in levels))
        return cls

    def _holds(self, cls: NodeClasses) -> np.ndarray:
        if cls.counts is None:  # k-anonymity without SA counts
            return cls.sizes >= self.model.k
        return np.asarray(self.model.holds(cls.counts, self.domain), dtype=bool)

    def classes(self, levels) -> tuple[np.ndarray, int]:
        """Class id of each distinct QI combination at ``levels``."""
        cls = self._classes(levels)
        return cls.combo_class, cls.n_classes

    def evaluate(self, levels) -> dict[str, Any]:
        """Classes at ``levels``, which hold, and how many rows would be suppressed."""
        cls = self._classes(levels)
        ok = self._holds(cls)
        return {"combo_class": cls.combo_class, "n_classes": cls.n_classes, "holds": ok, "sizes": cls.sizes,
                "suppressed": int(cls.sizes[~ok].sum())}

    def upward_closed(self) -> bool:
        """Is the set of satisfying nodes closed upwards (so predictive tagging is exact)?"""
        return bool(self.model.monotonic) and (self.budget == 0 or bool(self.model.absorbing))

    def satisfies(self, levels) -> bool:
        return self.evaluate(levels)["suppressed"] <= self.budget

    def _check(self, i: int, cond=None) -> tuple[bool, np.ndarray, int]:
        """Evaluate node ``i``: does the model hold within the budget, the model's (or
        ``cond``'s) holding mask per combination, and ``cond``'s suppressed rows."""
        cls = self._classes(self.nodes[i])
        ok = self._holds(cls)
        supp = int(cls.sizes[~ok].sum())
        sat = supp <= self.budget
        if sat:
            self._record(i, cls, ok, supp)
            if self._prune is not None:
                value = self._values[i][0] if self._prune == "loss" else self.metric(self.nodes[i], self._prune)
                v = self.nodes[i]
                preds = np.array([i - int(self.grid.strides[j]) for j in range(self.d) if v[j] > 0], dtype=np.int64)
                self._cands.append((i, value, preds))
        if cond is None:
            return sat, ok[cls.combo_class], supp
        a_ok = cond.holds(cls.sizes, cls.counts)
        return sat, a_ok[cls.combo_class], int(cls.sizes[~a_ok].sum())

    def _record(self, i: int, cls: NodeClasses, ok: np.ndarray, supp: int) -> None:
        kept = cls.sizes * ok
        loss = (_dot(kept, self.engine.class_loss(cls)) + supp * self.d) / (self.n * self.d)
        dm = float(np.dot(kept, cls.sizes)) + supp * float(self.n)
        self._values[i] = (loss, dm)

    # -- pruning on the metric ------------------------------------------------------------
    def node_bound(self, name: str) -> np.ndarray:
        """Per node, a lower bound on ``name`` that only grows upwards: the loss with
        nothing suppressed, or the height / precision metric itself."""
        if name == "loss":
            return self.lb
        if name == "height":
            return self.grid.height.astype(np.float64)
        return (self.nodes / np.maximum(self.heights, 1)).mean(axis=1)

    def _minimal_best(self) -> float:
        """The least metric of a checked satisfying node whose direct predecessors all
        fail (so it is minimal); candidates become minimal as their predecessors fail."""
        state = self._state
        keep = []
        for cand in self._cands:
            if (state[cand[2]] == FAIL).all():
                self._best = min(self._best, cand[1])
            elif cand[1] < self._best:
                keep.append(cand)
        self._cands = keep
        return self._best

    def _prunable(self, bound: np.ndarray):
        seen = [-1]  # checks made when the candidates were last examined

        def prune(i: int) -> bool:
            if bound[i] <= self._best + 1e-12:  # the best only falls, after checks
                if not self._cands or seen[0] == len(self._evaluated):
                    return False
                seen[0] = len(self._evaluated)
                return bound[i] > self._minimal_best() + 1e-12
            return True
        return prune

    # -- metrics -----------------------------------------------------------------------
    def metric(self, levels, name: str) -> float:
        if name == "height":
            return float(np.sum(levels))
        if name == "precision":
            h = np.maximum(self.heights, 1)
            return float(np.mean(np.asarray(levels) / h))
        cls = self._classes(levels)
        ok = self._holds(cls)
        supp = int(cls.sizes[~ok].sum())
        kept = cls.sizes * ok
        if name == "discernibility":
            return float(np.dot(kept, cls.sizes)) + supp * float(self.n)
        return (_dot(kept, self.engine.class_loss(cls)) + supp * self.d) / (self.n * self.d)

    def loss_lower_bound(self, levels) -> float:
        """The loss of ``levels`` with nothing suppressed: a suppressed row costs 1 per QI,
        at least what generalizing it costs, so this never exceeds the loss."""
        return float(sum(self.data.level_mass[j][int(lv)] for j, lv in enumerate(levels))) / (self.n * self.d)

    def values(self, mins: np.ndarray, name: str) -> tuple[list[float | None], int]:
        """The metric of each minimal node where needed, and the row of the best one.

        Loss: minimal nodes already checked carry their value; the others are valued in
        order of :meth:`loss_lower_bound` while it does not exceed the best value known
        (1e-12 of float slack), the rest stay ``None`` — their loss exceeds the best."""
        idx = [int(x) for x in np.ravel_multi_index(tuple(mins.T), self.shape)] if len(mins) else []
        vals: list[float | None] = [None] * len(mins)
        if name in ("height", "precision"):
            vals = [self.metric(v, name) for v in mins]
        elif name == "discernibility":
            vals = [self._values[i][1] if i in self._values else self.metric(v, name) for i, v in zip(idx, mins)]
        else:
            for r, i in enumerate(idx):
                if i in self._values:
                    vals[r] = self._values[i][0]
            lb = self.lb[idx].tolist()
            for r in sorted(range(len(mins)), key=lambda r: lb[r]):
                if vals[r] is not None:
                    continue
                known = [v for v in vals if v is not None]
                if known and lb[r] > min(known) + 1e-12:
                    break
                vals[r] = self.metric(mins[r], "loss")
        rows = [r for r, v in enumerate(vals) if v is not None]
        sub = mins[rows]
        key = np.array([vals[r] for r in rows])
        best = rows[int(np.lexsort((*sub.T[::-1], sub.sum(axis=1), key))[0])]
        return vals, best

    # -- search ------------------------------------------------------------------------
    def _index(self, v: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(np.asarray(v).T), self.shape)

    def search(self, monotonic: bool | None = None, prune: str | None = None) -> np.ndarray:
        """State of every node: +1 satisfies, -1 fails, 0 not decided because a satisfying
        node lies below it (so it is not minimal; only where satisfaction is not upward
        closed). ``monotonic`` defaults to :meth:`upward_closed`; ``False`` checks every
        node; ``True`` forces predictive tagging.

        ``prune`` (a metric other than ``"discernibility"``) skips every node whose bound
        (:meth:`node_bound`) exceeds the metric of a node known to be minimal — state 2
        (``PRUNED``), with its up-set. Every minimal node whose bound does not exceed the
        least metric of the minimal nodes is still found, with every node below it decided
        (its down-set's bounds are no larger, so none was pruned); other nodes reported
        minimal may not be."""
        g = self.grid
        state = np.zeros(g.size, dtype=np.int8)
        self._state, self._prune, self._cands, self._best = state, prune, [], math.inf
        pruner = self._prunable(self.node_bound(prune)) if prune is not None else None
        if monotonic is False:
            for i in range(g.size):
                state[i] = SAT if self._check(i)[0] else FAIL
            return state
        if monotonic is None:
            monotonic = self.upward_closed()
        if monotonic:
            bounds = MaskBounds(self.combo_size, self.budget, self.d) if self.absorbing else None

            def check(i: int) -> bool:
                sat, kept, _ = self._check(i)
                if bounds is not None:
                    bounds.add(self.nodes[i], kept)
                return sat

            return FlashSearch(g, check, bounds, prune=pruner, order=self._order(prune)).run(state)
        return self._search_not_closed(state, pruner, self._order(prune))

    def _order(self, prune: str | None) -> np.ndarray | None:
        """Pruning: nodes by bound, then height (every node after those below it), so the
        best minimal node is met early and prunes the most."""
        if prune is None:
            return None
        g = self.grid
        return np.lexsort((np.arange(g.size), g.height, self.node_bound(prune)))

    def _search_not_closed(self, known: np.ndarray, pruner=None, order=None) -> np.ndarray:
        """Two passes where satisfaction is not upward closed: Flash on the necessary
        condition (its failing nodes fail the model with their down-sets), then bottom-up
        over every node no satisfying node lies below."""
        g = self.grid
        dominated = np.zeros(g.size, dtype=bool)
        dom_view = dominated.reshape(g.shape)

        def mark(i: int, sat: bool) -> None:
            known[i] = SAT if sat else FAIL
            if sat:
                keep = dominated[i]
                dom_view[g.up(i)] = True
                dominated[i] = keep

        cond = self.condition
        if cond is not None and not cond.trivial:
            bounds = MaskBounds(self.combo_size, self.budget, self.d)

            def check_cond(i: int) -> bool:
                sat, kept, supp = self._check(i, cond)
                mark(i, sat)
                bounds.add(self.nodes[i], kept)
                return supp <= self.budget

            cond_state = FlashSearch(g, check_cond, bounds, prune=pruner).run(np.zeros(g.size, dtype=np.int8))
            known[(cond_state == FAIL) & (known == UNKNOWN)] = FAIL

        def check(i: int) -> bool:
            return self._check(i)[0]

        bottom_up(g, known, dominated, check, pruner, order)
        return known

    def minimal(self, state: np.ndarray) -> np.ndarray:
        """Satisfying nodes with no satisfying node strictly below them (Samarati's minimal
        generalizations), in node order. "Some satisfying node at or below" is an OR
        accumulated along every axis; a node has one strictly below when a direct
        predecessor has one at or below."""
        sat = (np.asarray(state) == SAT).reshape(self.shape)
        le = sat.copy()
        for ax in range(self.d):
            le = np.logical_or.accumulate(le, axis=ax)
        strict = np.zeros_like(sat)
        for ax in range(self.d):
            src = [slice(None)] * self.d
            dst = [slice(None)] * self.d
            src[ax], dst[ax] = slice(0, -1), slice(1, None)
            strict[tuple(dst)] |= le[tuple(src)]
        return self.nodes[(sat & ~strict).ravel()]


def search_lattice(lat: Lattice, metric: str = "loss", all_minimal: bool = False) -> dict[str, Any]:
    """Search ``lat`` for its minimal nodes and the best one under ``metric`` (pruned on the
    metric's bound unless ``all_minimal`` or the metric is ``"discernibility"``)."""
    prune = None if all_minimal or metric == "discernibility" else metric
    state = lat.search(prune=prune)
    mins = lat.minimal(state)
    if mins.shape[0] == 0:
        raise InfeasibleError(
            f"full-domain-search: no generalization satisfies {lat.model.describe()} with at most "
            f"{lat.max_suppression:.1%} of rows suppressed", model=lat.model)
    vals, best = lat.values(mins, metric)
    chosen = mins[best]
    if prune is not None:  # keep the minimal nodes that could have been chosen (see Lattice.search)
        bound = lat.node_bound(prune)[lat._index(mins)]
        keep = np.flatnonzero(bound <= float(vals[best]) + 1e-12)
        mins, vals = mins[keep], [vals[r] for r in keep]
    return {"lattice": lat, "minimal": mins, "values": vals, "best": chosen, "state": state}


def node_satisfies(table: EncodedTable, model: PrivacyModel, levels, max_suppression: float = 0.0) -> bool:
    """Decision function: does full-domain recoding at ``levels`` satisfy ``model`` within the
    suppression budget?"""
    return Lattice(table, model, max_suppression).satisfies(levels)


class FullDomainSearch(Anonymizer):
    """Optimal full-domain generalization over the hierarchy lattice, with suppression.

    Parameters
    ----------
    model: the privacy model every published class must satisfy.
    max_suppression: largest fraction of rows that may be suppressed (default 0).
    metric: ``"loss"`` (default), ``"discernibility"``, ``"precision"`` or ``"height"``.
    all_minimal: find every minimal node (default ``False``: skip the nodes whose bound on
        the metric exceeds the best minimal node's, as ARX's Flash does; the chosen node is
        the same, ``minimal_nodes`` then lists the minimal nodes whose bound does not
        exceed the chosen node's metric — every one that could have been chosen).
    """

    name = "full-domain-search"
    minimality = True
    parameter_constraints = {"max_suppression": Real(0.0, 1.0), "metric": Options(*METRICS),
                             "all_minimal": Boolean()}

    def __init__(self, *, model: PrivacyModel, max_suppression: float = 0.0, metric: str = "loss",
                 all_minimal: bool = False, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.max_suppression = max_suppression
        self.metric = metric
        self.all_minimal = all_minimal
        self._levels: list[int] | None = None
        self._preset: dict[str, Any] | None = None

    def params(self) -> dict[str, Any]:
        return {"max_suppression": self.max_suppression, "metric": self.metric, "all_minimal": self.all_minimal}

    def _validate(self, table: EncodedTable) -> None:
        self.check_params()
        ms = float(self.max_suppression)
        try:
            super()._validate(table)
        except InfeasibleError:
            # the model's whole-table feasibility (eligibility, ...) assumes every row is
            # published; with a budget, suppressing rows can make the table feasible, and
            # the lattice decides (InfeasibleError when no node satisfies)
            if ms == 0.0:
                raise

    def release_levels(self) -> list[int] | None:
        return self._levels

    def search(self, table: EncodedTable) -> dict[str, Any]:
        """Run the lattice search; returns the minimal nodes, the chosen one and counts."""
        self._validate(table)
        lat = Lattice(table, self.model, float(self.max_suppression))
        if self._preset is not None:
            res, self._preset = self._preset, None
            if not _same_classes(lat.data, res["lattice"].data) or lat.budget != res["lattice"].budget:
                raise ParameterError("full-domain-search: the search given (use_search) was run on another "
                                     "table or budget", parameter="use_search")
            return res | {"rows": lat}
        return search_lattice(lat, self.metric, bool(self.all_minimal))

    def use_search(self, res: dict[str, Any]) -> "FullDomainSearch":
        """Take the next :meth:`partition`'s node from a search already run on the same
        table's classes — :func:`~openbook.algorithms.lattice_frequency.search_frequency`
        of its frequency table streamed from the file — instead of searching again. The
        table's classes must equal those searched (checked)."""
        self._preset = res
        return self

    def partition(self, table: EncodedTable) -> Partition:
        res = self.search(table)
        lat: Lattice = res.get("rows", res["lattice"])
        levels = [int(x) for x in res["best"]]
        self._levels = levels
        ev = lat.evaluate(levels)
        row_class = ev["combo_class"][lat.row_combo]
        labels = np.where(ev["holds"][row_class], row_class, -1)
        return Partition.from_labels(labels, provenance=self.provenance() | search_provenance(res))


def _same_classes(a: LatticeData, b: LatticeData) -> bool:
    """Do two class-count tables hold the same combinations with the same SA counts?"""
    if a.combos.shape != b.combos.shape or a.counts.shape != b.counts.shape:
        return False
    ia, ib = np.lexsort(a.combos.T[::-1]), np.lexsort(b.combos.T[::-1])
    return bool(np.array_equal(a.combos[ia], b.combos[ib]) and np.array_equal(a.counts[ia], b.counts[ib]))


def search_provenance(res: dict[str, Any]) -> dict[str, Any]:
    """What a search (:func:`search_lattice`) tells: the chosen node, the minimal nodes and
    their metric, the nodes checked."""
    lat: Lattice = res["lattice"]
    known = [v for v in res["values"] if v is not None]
    return {"levels": [int(x) for x in res["best"]], "minimal_nodes": res["minimal"].tolist(),
            "minimal_metric": [None if v is None else float(v) for v in res["values"]],
            "metric_value": float(min(known)), "n_nodes": int(lat.nodes.shape[0]), "n_checked": int(lat.n_checked),
            "qi": list(lat.data.qi_names), "heights": lat.heights.tolist()}
