"""Full-domain generalization by lattice search (Samarati 2001; LeFevre et al., Incognito,
SIGMOD 2005; Kohlmayer et al., Flash, 2012) — the global-recoding algorithm paper 001 §4.1
attacks.

The *generalization lattice* has one node per level vector ``(l_1, …, l_d)``, ``0 <= l_j <=
height_j`` of the QI hierarchies; node ``u`` generalizes node ``v`` when ``u >= v``
componentwise. A node *satisfies* the model when, after recoding every QI ``j`` to level
``l_j``, the rows of the classes that violate the model are at most ``max_suppression · n``
(those classes are suppressed).

Output: the satisfying node of least ``metric`` among **all** satisfying nodes — with a
budget it need not be minimal: a node above a satisfying one may suppress fewer rows and
lose less (ARX chooses the same way) — ties (metrics within ``TIE`` = 1e-12 relative of the
least) to the least height, then the lexicographically least levels; and the *minimal*
satisfying nodes (no satisfying node strictly below — Samarati's k-minimal
generalizations): every one with ``all_minimal``, by default those whose bound (below) does
not exceed the optimum. Metrics:

``"loss"``            mean over rows and QIs of ``(coverage(value) - 1) / (n_leaves - 1)``,
                      a suppressed row counting 1 per QI (Iyengar's LM; ARX's "Loss" with the
                      arithmetic mean).
``"discernibility"``  ``Σ |class|² + n_suppressed · n`` (Bayardo & Agrawal).
``"precision"``       Sweeney's Prec loss: mean over QIs of ``level / height``.
``"height"``          sum of levels.

Search (:mod:`.lattice_search`; proofs in ``docs/algorithms.md``):

* Each metric has a *bound* per node that only grows upwards and that the metric never
  falls below (:meth:`Lattice.node_bound`): the loss with nothing suppressed (a suppressed
  row costs 1 per QI, at least what generalizing it costs, and suppression only adds), the
  height and precision themselves, ``n² / #classes`` for discernibility. Any satisfying
  node's metric is an upper bound on the optimum, so every node whose bound exceeds the
  least metric known (plus the slack) is skipped with its up-set (ARX's "insufficient
  utility", Flash §5). Chains start in order of bound, then height (on a necessary
  condition, below, in order of height).
* *Upward closed* (:meth:`Lattice.upward_closed`: the model is monotonic and there is no
  budget or the model is *absorbing* — a satisfying class still satisfies after any rows
  join it): Flash's binary search on greedy chains with predictive tagging (a satisfying
  node tags its up-set, a failing one its down-set) and, for absorbing models with a
  budget, suppression-aware bounds from the rows kept below / suppressed above a node.
* Otherwise (entropy / recursive ℓ, (α,k), simple ℓ, ℓ-eligibility, t-closeness with a
  budget — a satisfying class that absorbs a suppressed minority can fail, fixtures in
  ``tests/unit/algorithms/test_lattice_minimal.py``): the same search on an absorbing
  *necessary* condition of the model (:mod:`.lattice_bounds`: at least ℓ distinct values,
  a minimal class size, ...), whose failing nodes fail the model with their whole down-set.
* Then (:meth:`Lattice.optimize`) every node not known to fail is visited in order of its
  bound and checked when its state or metric is unknown (a satisfying node tagged by
  prediction has an unknown loss under a budget; with no budget its loss is its bound),
  until the bound exceeds the least metric found: no node beyond can reach it, so the
  result is the optimum over all satisfying nodes, ties included. Every node whose bound
  does not exceed the optimum is decided, and so is every node below it (their bounds are
  no larger): the minimal nodes among them are exact.

Nodes are evaluated on class counts, never rows (:mod:`.lattice_counts`): the distinct QI
combinations with their SA counts, each node's classes rolled up from the cached node
below it with the fewest classes, and the model checked per class — in numba kernels
(:mod:`.lattice_kernels`) on tables large enough to repay loading them. :class:`Lattice`
takes an :class:`EncodedTable` or a :class:`LatticeData` (distinct code tuples and an SA
count matrix from any source).

``n_checked`` counts the distinct nodes whose classes were computed — by the search or to
value a candidate for the metric (ARX's "transformations checked" counts the same: nodes
checked or whose information loss was computed). A minimal node's metric is ``None`` in
``minimal_metric`` when it was not needed (its bound exceeds the optimum).

Provenance: ``levels`` (chosen node), ``chosen_minimal`` (is it one of the minimal nodes),
``minimal_nodes``, ``minimal_metric``, ``n_nodes``, ``n_checked``, ``metric`` and its value;
the decision function :func:`node_satisfies` lets an adversary re-check any node.
:func:`search_lattice` runs the search on any :class:`Lattice`; :mod:`.lattice_frequency`
on a frequency table streamed from a file.
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
from . import lattice_kernels as lk
from .base import Anonymizer
from .lattice_bounds import necessary_condition, projection_fails
from .lattice_counts import ClassEngine, LatticeData, ModelCheck, NodeClasses
from .lattice_search import FAIL, PRUNED, SAT, UNKNOWN, FlashSearch, Grid, MaskBounds, bottom_up

METRICS = ("loss", "discernibility", "precision", "height")

#: relative slack of metric comparisons: values within ``TIE · max(1, |least|)`` of the least
#: are ties, and a bound must exceed the least by more to prune
TIE = 1e-12

#: the largest lattice the search enumerates (its nodes are materialised as an array)
MAX_NODES = 2_000_000


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a · b`` without BLAS (whose threads spin on a loaded machine), the same sum
    everywhere a node's loss is computed."""
    return float(np.multiply(a, b).sum())


def lattice_data(table: EncodedTable) -> tuple[LatticeData, np.ndarray]:
    """The distinct QI combinations of ``table`` with their SA counts, and each row's
    combination."""
    hier = [table.hierarchy(nm) for nm in table.qi_names]
    qi = table.qi_codes
    cards = np.array([h.n_leaves for h in hier], dtype=np.int64)
    upper = math.prod(cards.tolist())
    if lk.wanted(table.n_rows) and 0 < table.n_rows and qi.shape[1] and upper < 2**62:
        n_sa = table.columns[table.sa_name].n_values
        cls, leaf, counts, sizes, m = lk.compiled()["group_rows"](qi, cards, upper, table.sa_codes, n_sa)
        if m >= 0:  # else a code out of range: LatticeData names it below
            return LatticeData(leaf, counts, hier, table.sa_domain, table.qi_names, trusted=sizes), cls
    cls, m = group_ids(qi)
    rep = np.empty(m, dtype=np.int64)
    rep[cls] = np.arange(table.n_rows)
    counts = table.group_sa_counts(cls, m)
    return LatticeData(qi[rep], counts, hier, table.sa_domain, table.qi_names, distinct=True), cls


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
        self.grid = Grid.of(tuple(self.heights.tolist()))
        self.nodes, self.shape = self.grid.nodes, self.grid.shape
        self.combo_size = data.sizes
        self.absorbing = bool(model.monotonic) and bool(model.absorbing)
        self.condition = None if self.absorbing else necessary_condition(model, self.domain)
        size_only = isinstance(model, KAnonymity) and (self.condition is None or self.condition.size_only)
        self.engine = ClassEngine(data, with_counts=not size_only)
        self.checker = ModelCheck(model, data, self.engine, self.condition)
        self._evaluated: set[tuple[int, ...]] = set()
        self._values: dict[int, tuple[float, float]] = {}  # checked satisfying node -> (loss, discernibility)
        # loss with nothing suppressed, per node (the order of the sum is loss_lower_bound's)
        lb = np.zeros(self.grid.size)
        for j in range(self.d):
            lb = lb + data.level_mass[j][self.nodes[:, j]]
        self.lb = lb / (self.n * self.d)
        self._precision = (self.nodes / np.maximum(self.heights, 1)).mean(axis=1) if self.d else np.zeros(1)
        self._metric: str | None = None  # the metric optimised, while a search tracks its best value
        self.best = math.inf  # least metric of a satisfying node known
        self.chosen: int | None = None  # the optimum (optimize)

    @property
    def combos(self) -> np.ndarray:
        return self.data.combos

    @property
    def n_checked(self) -> int:
        """Distinct nodes whose classes were computed (checks and metric evaluations)."""
        return len(self._evaluated)

    # -- one node ----------------------------------------------------------------------
    def _classes(self, levels) -> NodeClasses:
        cls = self.engine.classes(levels)
        self._evaluated.add(cls.levels)
        return cls

    def _sums(self, cls: NodeClasses, ok: np.ndarray) -> tuple[int, float, float]:
        """Rows suppressed, the loss mass they add beyond their generalization and the
        discernibility of the node."""
        if self.engine.kernels is not None:
            supp, extra, sq = self.engine.kernels["node_sums"](cls.sizes, cls.gen, ok, float(self.d))
        else:
            fail = ~ok
            supp = int(cls.sizes[fail].sum())
            extra = _dot(cls.sizes[fail], self.d - cls.gen[fail])
            sq = int(np.multiply(cls.sizes[ok], cls.sizes[ok]).sum())
        return int(supp), float(extra), float(sq) + int(supp) * float(self.n)

    def classes(self, levels) -> tuple[np.ndarray, int]:
        """Class id of each distinct QI combination at ``levels``."""
        cls = self._classes(levels)
        return cls.combo_class, cls.n_classes

    def evaluate(self, levels) -> dict[str, Any]:
        """Classes at ``levels``, which hold, and how many rows would be suppressed."""
        cls = self._classes(levels)
        ok = self.checker.holds(cls)[0]
        return {"combo_class": cls.combo_class, "n_classes": cls.n_classes, "holds": ok, "sizes": cls.sizes,
                "suppressed": int(cls.sizes[~ok].sum())}

    def upward_closed(self) -> bool:
        """Is the set of satisfying nodes closed upwards (so predictive tagging is exact)?"""
        return bool(self.model.monotonic) and (self.budget == 0 or bool(self.model.absorbing))

    def satisfies(self, levels) -> bool:
        return self.evaluate(levels)["suppressed"] <= self.budget

    def _check(self, i: int, cond=None, masks: bool = False) -> tuple[bool, np.ndarray | None, int]:
        """Evaluate node ``i``: does the model hold within the budget, (with ``masks``) the
        model's (or ``cond``'s) holding mask per combination, and ``cond``'s suppressed
        rows. A satisfying node's loss and discernibility are recorded."""
        cls = self._classes(self.nodes[i])
        ok, c_ok = self.checker.holds(cls, with_cond=cond is not None)
        supp, extra, dm = self._sums(cls, ok)
        sat = supp <= self.budget
        if sat:
            self._values[i] = (float(self.lb[i]) + extra / (self.n * self.d), dm)
            if self._metric is not None:
                self._note(i)
        if cond is None:
            return sat, (ok[cls.combo_class] if masks else None), supp
        assert c_ok is not None  # computed with the condition
        return sat, (c_ok[cls.combo_class] if masks else None), int(cls.sizes[~c_ok].sum())

    # -- metrics -----------------------------------------------------------------------
    def value(self, i: int, name: str) -> float | None:
        """The metric of satisfying node ``i`` when known: height and precision always, the
        loss with no budget (nothing suppressed: the generalization loss), else once the
        node was checked."""
        if name == "height":
            return float(self.grid.height[i])
        if name == "precision":
            return float(self._precision[i])
        got = self._values.get(i)
        if got is not None:
            return got[0] if name == "loss" else got[1]
        if name == "loss" and self.budget == 0:
            return float(self.lb[i])
        return None

    def metric(self, levels, name: str, holds: np.ndarray | None = None) -> float:
        """The metric of the node at ``levels`` (a failing node's too: its failing classes
        suppressed) — or, given ``holds`` (per class of the node), with the classes it marks
        failing suppressed."""
        i = int(self._index(np.asarray(levels)))
        if name in ("height", "precision"):
            v = self.value(i, name)
            assert v is not None  # always known
            return v
        cls = self._classes(levels)
        supp, extra, dm = self._sums(cls, self.checker.holds(cls)[0] if holds is None else np.asarray(holds, bool))
        return dm if name == "discernibility" else float(self.lb[i]) + extra / (self.n * self.d)

    def loss_lower_bound(self, levels) -> float:
        """The loss of ``levels`` with nothing suppressed: a suppressed row costs 1 per QI,
        at least what generalizing it costs, so this never exceeds the loss."""
        return float(self.lb[int(self._index(np.asarray(levels)))])

    def node_bound(self, name: str) -> np.ndarray:
        """Per node, a lower bound on ``name`` that only grows upwards: the loss with
        nothing suppressed; the height and precision themselves; for discernibility
        ``max(n, n² / c)`` with ``c`` the classes the node can have at most (``m``, and the
        product of its levels' codes; ``Σ |C|² >= n²/#classes``, a suppressed row costing
        ``n >= |C|``)."""
        if name == "loss":
            return self.lb
        if name == "height":
            return self.grid.height.astype(np.float64)
        if name == "precision":
            return self._precision
        cap = np.ones(self.grid.size)
        for j in range(self.d):
            cap = cap * np.asarray(self.data.level_radix[j], dtype=np.float64)[self.nodes[:, j]]
        return np.maximum(float(self.n), float(self.n) ** 2 / np.minimum(cap, max(self.data.m, 1)))

    def _mask_bounds(self) -> MaskBounds:
        k = self.engine.kernels
        return MaskBounds(self.combo_size, self.budget, self.d, None if k is None else k["unkept_rows"])

    def _note(self, i: int) -> None:
        """A node decided satisfying: its metric, when known, bounds the optimum."""
        assert self._metric is not None  # noted only when a metric is searched
        v = self.value(i, self._metric)
        if v is not None and v < self.best:
            self.best = v

    def _pruner(self, bound: np.ndarray):
        def prune(i: int) -> bool:
            return bound[i] > self.best + tie_slack(self.best)
        return prune

    # -- search ------------------------------------------------------------------------
    def _index(self, v: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(np.asarray(v).T), self.shape)

    def search(self, monotonic: bool | None = None, prune: str | None = None) -> np.ndarray:
        """State of every node: +1 satisfies, -1 fails, 0 not decided (where satisfaction
        is not upward closed: a satisfying node lies below it, so it is not minimal).
        ``monotonic`` defaults to :meth:`upward_closed`; ``False`` checks every node;
        ``True`` forces predictive tagging.

        ``prune`` (a metric) searches for the optimum of that metric over all satisfying
        nodes instead (:meth:`optimize` at the end): a node whose bound (:meth:`node_bound`)
        exceeds the least metric of a satisfying node known is skipped with its up-set
        (state 2, ``PRUNED``); the nodes left undecided then lie above a satisfying node or
        have such a bound. Every node whose bound does not exceed the optimum is decided,
        so the minimal nodes among them are exact."""
        g = self.grid
        state = np.zeros(g.size, dtype=np.int8)
        self._metric, self.best, self.chosen = prune, math.inf, None
        pruner = order = on_sat = None
        if prune is not None:
            bound = self.node_bound(prune)
            pruner, on_sat = self._pruner(bound), self._note
            order = np.lexsort((np.arange(g.size), g.height, bound))  # every node after those below it
        if monotonic is False:
            for i in range(g.size):
                state[i] = SAT if self._check(i)[0] else FAIL
        elif monotonic or (monotonic is None and self.upward_closed()):
            if self.upward_closed():
                state[self._projection_fails(None)] = FAIL
            bounds = self._mask_bounds() if self.absorbing and self.budget > 0 else None

            def check(i: int) -> bool:
                sat, kept, _ = self._check(i, masks=bounds is not None)
                if bounds is not None:
                    assert kept is not None  # asked for with masks
                    bounds.add(self.nodes[i], kept)
                return sat

            FlashSearch(g, check, bounds, prune=pruner, order=order, on_sat=on_sat,
                        sorted_prune=pruner is not None).run(state)
        else:
            self._search_not_closed(state, pruner, order)
        if prune is not None:
            self.optimize(state, prune)
        return state

    def _search_not_closed(self, known: np.ndarray, pruner=None, order=None) -> None:
        """Where satisfaction is not upward closed: Flash on the necessary condition (its
        failing nodes fail the model with their down-sets); then, without ``pruner``, every
        node no satisfying node lies below is checked bottom-up (with it, :meth:`optimize`
        checks the nodes left in order of their bound)."""
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
            bounds = self._mask_bounds()

            def check_cond(i: int) -> bool:
                sat, kept, supp = self._check(i, cond, masks=True)
                mark(i, sat)
                assert kept is not None  # asked for with masks
                bounds.add(self.nodes[i], kept)
                return supp <= self.budget

            cond_state = np.zeros(g.size, dtype=np.int8)
            cond_state[self._projection_fails(cond)] = FAIL
            known[cond_state == FAIL] = FAIL
            FlashSearch(g, check_cond, bounds, prune=pruner).run(cond_state)
            known[(cond_state == FAIL) & (known == UNKNOWN)] = FAIL
            if pruner is not None:
                known[(cond_state == PRUNED) & (known == UNKNOWN)] = PRUNED
        if pruner is None:
            bottom_up(g, known, dominated, lambda i: self._check(i)[0], None, order)

    def _projection_fails(self, cond) -> np.ndarray:
        """Nodes that fail from one QI alone (:func:`.lattice_bounds.projection_fails`):
        on ``cond`` (absorbing), else on the model (absorbing, or monotonic with no budget)."""
        size_only = cond.size_only if cond is not None else not self.engine.with_counts
        if cond is not None:
            holds = lambda sizes, counts: cond.holds(sizes, counts)  # noqa: E731
        elif size_only:
            model: Any = self.model  # size only: a k-anonymity model
            holds = lambda sizes, counts: sizes >= model.k  # noqa: E731
        else:
            holds = lambda sizes, counts: np.asarray(self.model.holds(counts, self.domain), dtype=bool)  # noqa: E731
        return projection_fails(self.data, self.nodes, holds, size_only, self.budget)

    def optimize(self, state: np.ndarray, name: str) -> int:
        """The node of least ``name`` among all satisfying nodes, completing ``state``:
        the nodes not known to fail are visited in order of their bound (then height),
        each checked when its state or metric is not known, until the bound exceeds the
        least metric found — no node beyond can reach it. Ties (metrics within
        :data:`TIE` relative of the least) go to the least height, then the
        lexicographically least levels. Returns the node's index (``-1``: none satisfies)."""
        g = self.grid
        bound = self.node_bound(name)
        self._metric = name
        sat = np.flatnonzero(state == SAT)
        known = [v for v in (self.value(int(i), name) for i in sat) if v is not None]
        self.best = min(known + [self.best])
        cand = np.flatnonzero((state == SAT) | (state == UNKNOWN))
        cand = cand[np.lexsort((cand, g.height[cand], bound[cand]))]
        ties: list[tuple[int, float]] = []
        for i in cand.tolist():
            if bound[i] > self.best + tie_slack(self.best):
                break
            v = self.value(i, name) if state[i] == SAT else None
            if v is None:
                ok = self._check(i)[0]
                state[i] = SAT if ok else FAIL
                if not ok:
                    continue
                v = self.value(i, name)
                assert v is not None  # known once the node is checked satisfying
            self.best = min(self.best, v)
            ties.append((i, v))
        top = self.best + tie_slack(self.best)
        best = [i for i, v in ties if v <= top]
        self.chosen = min(best, key=lambda i: (int(g.height[i]), i)) if best else -1
        return self.chosen

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


def tie_slack(best: float) -> float:
    """The float slack of metric comparisons around the least value ``best``."""
    return TIE * max(1.0, abs(best)) if math.isfinite(best) else math.inf


def search_lattice(lat: Lattice, metric: str = "loss", all_minimal: bool = False) -> dict[str, Any]:
    """Search ``lat`` for the node of least ``metric`` among all satisfying nodes, and its
    minimal nodes: every one with ``all_minimal`` (the whole lattice decided), else those
    whose bound does not exceed the optimum (the search pruned on the metric's bound)."""
    if all_minimal:
        state = lat.search()
        lat.optimize(state, metric)
    else:
        state = lat.search(prune=metric)
    if lat.chosen is None or lat.chosen < 0:
        raise InfeasibleError(
            f"full-domain-search: no generalization satisfies {lat.model.describe()} with at most "
            f"{lat.max_suppression:.1%} of rows suppressed", model=lat.model)
    mins = lat.minimal(state)
    idx = lat._index(mins) if len(mins) else np.zeros(0, dtype=np.int64)
    if not all_minimal:  # the minimal nodes whose bound does not exceed the optimum (exact, see Lattice.search)
        keep = lat.node_bound(metric)[idx] <= lat.best + tie_slack(lat.best)
        mins, idx = mins[keep], idx[keep]
    vals = [lat.value(int(i), metric) for i in idx]
    return {"lattice": lat, "minimal": mins, "values": vals, "best": lat.nodes[lat.chosen],
            "value": lat.value(lat.chosen, metric), "state": state}


def node_satisfies(table: EncodedTable, model: PrivacyModel, levels, max_suppression: float = 0.0) -> bool:
    """Decision function: does full-domain recoding at ``levels`` satisfy ``model`` within the
    suppression budget?"""
    return Lattice(table, model, max_suppression).satisfies(levels)


class FullDomainSearch(Anonymizer):
    """Optimal full-domain generalization over the hierarchy lattice, with suppression: the
    satisfying node of least metric (not necessarily a minimal one under a budget).

    Parameters
    ----------
    model: the privacy model every published class must satisfy.
    max_suppression: largest fraction of rows that may be suppressed (default 0).
    metric: ``"loss"`` (default), ``"discernibility"``, ``"precision"`` or ``"height"``.
    all_minimal: list every minimal node (default ``False``: skip the nodes whose bound on
        the metric exceeds the least metric of a satisfying node, as ARX's Flash does;
        ``minimal_nodes`` then lists the minimal nodes whose bound does not exceed the
        optimum). The chosen node is the same either way: the optimum over all satisfying
        nodes (ties: least height, then lexicographically least levels).
    """

    name = "full-domain-search"
    minimality = True
    replay = "rerun"
    deterministic = True

    parameter_constraints = {"max_suppression": Real(0.0, 1.0), "metric": Options(*METRICS),
                             "all_minimal": Boolean()}

    unaware = ("with a suppression budget under a model that judges every class against the table's "
               "distribution (t-closeness), that distribution holds the withheld people's values: no adversary "
               "replays the search")

    @classmethod
    def replay_method(cls, params: dict[str, Any], model: Any = None) -> str | None:
        """Without a budget, re-run or replayed by its decisions (``"rerun"``). With one: under a
        model that reads no SA (k-anonymity) every node's verdict, metric and suppressed rows
        are functions of the QIs, so the search's choice and whom it withholds are the same in
        every world — ``"qi-only"`` (no world excluded; the withheld are the classes failing the
        model); under a model that judges each class alone, replayed by its decisions
        (``"rerun"``: :mod:`openbook.attacks.replay.lattice` — exact when every node it could
        have preferred is ruled out in every world, the withheld people's values varied too;
        unresolved otherwise); under t-closeness, unknown."""
        if float(params.get("max_suppression") or 0.0) > 0:
            if model is None:
                return None
            if not getattr(model, "reads_sa", True):
                return "qi-only"
            from ..models.t_closeness import TCloseness

            parts = getattr(model, "models", None) or [model]
            return None if any(isinstance(m, TCloseness) for m in parts) else cls.replay
        return cls.replay

    @classmethod
    def withholds(cls, params: dict[str, Any]) -> str:
        """With a budget, the classes failing the model at the node the search chose — and no
        whole-table check (the search publishes wherever some node satisfies within the
        budget): ``"search-fails-model"``."""
        return "search-fails-model" if float(params.get("max_suppression") or 0.0) > 0 else "fails-model"

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
        cc = ev["combo_class"]
        labels = np.where(ev["holds"][cc], cc, -1)[lat.row_combo]
        prov = release_provenance(self, res)
        if lat.engine.kernels is None:
            return Partition.from_labels(labels, provenance=prov)
        group, n_groups = lat.engine.kernels["first_appearance"](labels)  # from_labels' numbering, O(n)
        return Partition(group, n_groups, provenance=prov)


def _same_classes(a: LatticeData, b: LatticeData) -> bool:
    """Do two class-count tables hold the same combinations with the same SA counts?"""
    if a.combos.shape != b.combos.shape or a.counts.shape != b.counts.shape:
        return False
    ia, ib = np.lexsort(a.combos.T[::-1]), np.lexsort(b.combos.T[::-1])
    return bool(np.array_equal(a.combos[ia], b.combos[ib]) and np.array_equal(a.counts[ia], b.counts[ib]))


def release_provenance(algo: Any, res: dict[str, Any]) -> dict[str, Any]:
    """The release's provenance: the algorithm's and the search's (:func:`search_provenance`).
    The minimality principle (paper 001 §3) holds of the release only when the chosen node is
    minimal: under a suppression budget the optimum may sit above a minimal node."""
    prov = algo.provenance() | search_provenance(res)
    prov["minimality"] = bool(algo.minimality and prov["chosen_minimal"])
    return prov


def search_provenance(res: dict[str, Any]) -> dict[str, Any]:
    """What a search (:func:`search_lattice`) tells: the chosen node, the minimal nodes and
    their metric, the nodes checked."""
    lat: Lattice = res["lattice"]
    levels = [int(x) for x in res["best"]]
    mins = res["minimal"].tolist()
    return {"levels": levels, "minimal_nodes": mins,
            "minimal_metric": [None if v is None else float(v) for v in res["values"]],
            "metric_value": float(res["value"]), "chosen_minimal": levels in mins,
            "n_nodes": int(lat.nodes.shape[0]), "n_checked": int(lat.n_checked),
            "qi": list(lat.data.qi_names), "heights": lat.heights.tolist()}
