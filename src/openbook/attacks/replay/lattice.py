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
``Lattice.optimize``) — enumerated when the worlds are few, sampled beyond.

**With a suppression budget** (under a model that judges each class alone; t-closeness
compares every class with a distribution the withheld people are part of, and is refused) a
node satisfies when the rows of its failing classes are at most the budget, its metric
counts the classes it withholds, and a world also gives each absent person a value (the
adversary's prior: the published distribution). A world gives the release iff the search
chooses ``N*`` and withholds exactly the release's absent people — whole classes of ``N*``,
which fail there; ``N*``'s own metric is then the same in every such world. Another node's
metric is at least its value with nothing withheld (a withheld row costs at least what
generalizing it costs), so only nodes with that value at most ``N*``'s can be preferred; such
a node is ruled out in every world when the rows of its classes that fail at every point of
their box (absent people contributing anything from 0 to all of each published value; a class
of absent people of one withheld class fails outright under an ``absorbing`` model, whose
failing classes' subsets fail) exceed the budget, or — for a node not under ``N*`` — when its metric with those classes withheld
already exceeds ``N*``'s (a node under ``N*`` must fail in every world: the release publishes
whether ``N*`` is minimal, ``provenance["minimality"]``). When every candidate is ruled out
no world is excluded: the published people's posterior is their
class frequency and the absent people's that of their classes failing the model
(:mod:`openbook.attacks.absence`, with no whole-table check: the search publishes wherever a
node satisfies). Otherwise, when ``N*`` is minimal, :func:`acceptance_bound` draws
arrangements of the published classes and bounds from below the probability ``P(A)`` that one
rules every candidate out whatever the absent people hold; every figure divided by it is an
upper bound (stated as the figure plus three standard errors, at most 1). When fewer than half
of the first 200 drawn do (the figures at least double), the bound of those 200 is stated
without drawing more; when none does, the people are unresolved — a re-run would need the
absent people's values, and with nobody absent it would have to weigh the published minimality
flag too.
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
        from ..absence import compares_with_table

        self.why = ""
        self.dependent: list[int] = []
        self._bound: tuple[float, int, int, tuple[int, int]] | None = None  # acceptance_bound's, once
        self.model = model = algo.model
        self.budget = budget = float(getattr(algo, "max_suppression", 0.0) or 0.0) > 0
        if budget and getattr(model, "reads_sa", True) and compares_with_table(model):
            self.why = ("with a suppression budget every class is judged against a distribution the "
                        "withheld people are part of")
            return
        group = np.asarray(group, dtype=np.int64)
        if not budget and np.any(group < 0):
            self.why = "the release withheld people"
            return
        self.lat = lat = Lattice(table, model, float(getattr(algo, "max_suppression", 0.0) or 0.0))
        levels = algo.release_levels() if levels is None else levels
        if levels is None:
            self.why = "the published node is not known"
            return
        self.star = star = int(lat._index(np.asarray(levels)))
        ev = lat.evaluate(lat.nodes[star])
        self.at_star = at_star = np.asarray(ev["combo_class"], dtype=np.int64)[lat.row_combo]
        # a world gives the release iff the search chooses this node and withholds exactly the
        # release's absent people: whole classes of the node (the ones failing the model)
        whole = np.bincount(at_star[group < 0], minlength=int(ev["n_classes"]))
        if (not np.array_equal(canonical(np.where(group < 0, -1, at_star)), canonical(group))
                or np.any((whole > 0) & (whole != ev["sizes"]))):  # a stale or foreign node: decide nothing
            self.why = f"the classes of node {list(levels)} are not the release's"
            return
        metric = str(algo.metric)
        self.values = values = _lower_metric(lat, metric)
        # the published node's own metric is the same in every world giving the release (its
        # withheld classes are the release's); another node's is at least its value with
        # nothing withheld (a withheld row costs at least what generalizing it costs)
        self.v_star = v_star = float(values[star] if not budget else lat.metric(lat.nodes[star], metric))
        cand = np.flatnonzero(values <= v_star + tie_slack(v_star))
        self.cand = cand[cand != star]
        if not getattr(model, "reads_sa", True):
            return  # every node's verdict is the same in every world
        kept = group >= 0
        n_cls = int(group.max()) + 1 if kept.any() else 0
        K = table.group_sa_counts(group, n_cls).astype(np.int64)  # the published multisets
        csize = K.sum(axis=1)
        floor = size_floor(model)
        # an absent person may hold any value the release publishes (the adversary's prior)
        possible = K.sum(axis=0) > 0
        self.node_class: list[np.ndarray] = []
        self.top = top = v_star + tie_slack(v_star)
        self.metric = metric
        self.possible = possible
        self.below = below = np.all(lat.nodes <= lat.nodes[star], axis=1)  # under N*: satisfying, N* is not minimal
        # the boxes are read per combination of QI values (every node keeps its rows together, and
        # so does the published node): a third of Adult's rows, the same verdicts
        rc = np.asarray(lat.row_combo, dtype=np.int64)
        n_combo = int(rc.max()) + 1 if rc.size else 0
        c_group = np.full(n_combo, -2, dtype=np.int64)
        c_group[rc] = group
        combos = bool(np.array_equal(c_group[rc], group))
        c_size = np.bincount(rc, minlength=n_combo)
        c_star = np.asarray(ev["combo_class"], dtype=np.int64)
        for i in self.cand.tolist():
            cls = lat.engine.classes(lat.nodes[i])
            c_class = np.asarray(cls.combo_class, dtype=np.int64)
            node_class = c_class[rc]
            if combos:
                surely = _surely_failing(model, table, c_class, int(cls.n_classes), c_group, K, csize, floor,
                                         possible, weight=c_size)
                surely |= _inside_withheld(model, c_class, int(cls.n_classes), c_group, c_star)
            else:
                surely = _surely_failing(model, table, node_class, int(cls.n_classes), group, K, csize, floor,
                                         possible)
                surely |= _inside_withheld(model, node_class, int(cls.n_classes), group, at_star)
            if int(cls.sizes[surely].sum()) > lat.budget:
                continue  # fails in every world
            if budget and not below[i] and lat.metric(lat.nodes[i], metric, holds=~surely) > top:
                # where it satisfies it withholds at least these classes: never preferred. (A node
                # under N* must fail in every world: whether N* is minimal is published.)
                continue
            self.dependent.append(i)
            self.node_class.append(node_class)
        if budget and self.dependent:  # the worlds it weighs would need the absent people's values
            i = self.dependent[0]
            self.why = (f"node {lat.nodes[i].tolist()} (metric at least {values[i]:.6g}, the published node's "
                        f"{v_star:.6g}) could satisfy the model within the suppression budget in some world")

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


#: the last search analysed: the replay of the published people and the posterior of the absent
#: ones (:mod:`openbook.attacks.people`) ask about the same release one after the other
_LAST: list[tuple[Any, EncodedTable, _Search]] = []


def search_of(algo: Any, table: EncodedTable, group: np.ndarray, levels: Any = None) -> _Search:
    """The analysis of a search's release (:class:`_Search`), computed once per release: keyed
    by the algorithm and its parameters, the published grouping and node, and the table object
    itself (held by the cache, so no other table can take its ``id``)."""
    import hashlib

    g = canonical(np.asarray(group, dtype=np.int64))
    key = (algo.name, repr(algo.params()), repr(algo.model.to_dict()), hashlib.sha1(g.tobytes()).hexdigest(),
           None if levels is None else tuple(int(x) for x in levels))
    if _LAST and _LAST[0][0] == key and _LAST[0][1] is table:
        return _LAST[0][2]
    s = _Search(algo, table, group, levels)
    _LAST[:] = [(key, table, s)]
    return s


def preferred_nodes_fail(algo: Any, table: EncodedTable, group: np.ndarray,
                         levels: Any = None) -> tuple[bool, str]:
    """``(True, how)`` when every node the search could have preferred over the published
    one (``levels``: the release's, default the algorithm's last run) fails in every possible
    world (module docstring); ``(False, why not)`` otherwise."""
    s = search_of(algo, table, group, levels)
    if s.why:
        return False, s.why
    if s.dependent:
        i = s.dependent[0]
        return False, (f"node {s.lat.nodes[i].tolist()} (metric {s.values[i]:.6g}, the published node's "
                       f"{s.v_star:.6g}) could satisfy the model in some world")
    return True, f"each of the {s.cand.size} nodes the search could have preferred fails in every world"


def lattice_reason(params: dict[str, Any], over: bool) -> str | None:
    """How the certificate says a search's release is replayed past ``rerun_limit``
    (``over``) — by its decisions, without a re-run per world — or ``None`` (re-run)."""
    if not over:
        return None
    return ("weighed by the search's own decisions — which of the nodes it could have preferred over the published "
            "one satisfy there (exact when no world is excluded or few remain, sampled beyond)")


def lattice_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                  levels: Any = None) -> tuple[list[Unit] | None, str]:
    """The units of a full-domain search's release: the class frequency when no world is
    excluded; else one unit over the table whose world weight is 1 iff the search, given
    which of the nodes that could satisfy do satisfy, chooses the published node — exact
    when the worlds are few, sampled (with its standard error) beyond. ``(None, why)`` when
    the decisions do not tell (a suppression budget)."""
    s = search_of(algo, table, group, levels)
    if s.budget and s.dependent:
        low, accepted, drawn = acceptance_bound(s, table, group)
        if low <= 0:
            return None, f"{s.why}; {bound_why(s, accepted, drawn)}"
        units = no_information_units(group, gcounts)
        units[0].inflate = 1.0 / low
        units[0].kind = "lattice-bound"
        return units, ""
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


def _lower_metric(lat: Any, metric: str) -> np.ndarray:
    """Per node, its metric with nothing withheld — a function of the QIs; with a suppression
    budget a lower bound on the metric in every world (a withheld row costs 1 per QI in the
    loss, ``n >= |C|`` in the discernibility: at least what keeping it costs), without one
    the metric itself. Height and precision never read the SA."""
    if metric == "discernibility":
        return np.array([float(np.square(lat.engine.classes(lat.nodes[i]).sizes.astype(np.float64)).sum())
                         for i in range(lat.grid.size)])
    if metric == "loss":
        return np.asarray(lat.lb, dtype=np.float64)
    return np.array([float(lat.value(i, metric)) for i in range(lat.grid.size)])


def _inside_withheld(model: Any, node_class: np.ndarray, n_node: int, group: np.ndarray,
                     at_star: np.ndarray) -> np.ndarray:
    """Per class of the node: does it fail in every world giving the release because it is made
    of absent people of one withheld class of the published node (which fails there), under a
    model where a failing class's every subset fails (``absorbing``: rows joining a satisfying
    class keep it satisfying)? ``node_class``, ``group``, ``at_star``: per row, or per
    combination of QI values."""
    out = np.zeros(n_node, dtype=bool)
    if not getattr(model, "absorbing", False) or not np.any(group < 0):
        return out
    published = np.bincount(node_class[group >= 0], minlength=n_node) > 0
    a = group < 0
    pairs = np.unique(node_class[a] * (int(at_star.max()) + 1) + at_star[a])
    spans = np.bincount(pairs // (int(at_star.max()) + 1), minlength=n_node)
    return (spans == 1) & ~published


def _surely_failing(model: Any, table: EncodedTable, node_class: np.ndarray, n_node: int, group: np.ndarray,
                    K: np.ndarray, csize: np.ndarray, floor: int, possible: np.ndarray | None = None,
                    weight: np.ndarray | None = None) -> np.ndarray:
    """Per class of the node, does it fail at every point of its box of possible counts (so in
    every world)? A published class gives each node class it meets between the fewest and
    the most of each value it could; an absent person (group ``-1``) anything from 0 to all of
    the values ``possible``. ``node_class`` and ``group`` are per row, or per combination of QI
    values holding ``weight`` rows (one published class and one node class each)."""
    w = np.ones(node_class.size, dtype=np.int64) if weight is None else np.asarray(weight, dtype=np.int64)
    sizes = np.bincount(node_class, weights=w, minlength=n_node).astype(np.int64)
    surely = np.zeros(n_node, dtype=bool)
    if floor > 1:
        surely |= (sizes > 0) & (sizes < floor)
    v = K.shape[1]
    box_lo = np.zeros((n_node, v), dtype=np.int64)
    box_hi = np.zeros((n_node, v), dtype=np.int64)
    kept = group >= 0
    if kept.any():  # the (node class, published class) pieces, their sizes, and each piece's box
        m = int(group.max()) + 1
        pair = node_class[kept] * m + group[kept]
        keys, inv = np.unique(pair, return_inverse=True)
        n_piece = np.bincount(inv.ravel(), weights=w[kept], minlength=keys.size).astype(np.int64)[:, None]
        nc, pc = keys // m, keys % m
        starts = np.flatnonzero(np.r_[True, nc[1:] != nc[:-1]])  # keys sorted: each node class's pieces in a run
        box_lo[nc[starts]] = np.add.reduceat(np.maximum(0, n_piece - (csize[pc][:, None] - K[pc])), starts, axis=0)
        box_hi[nc[starts]] = np.add.reduceat(np.minimum(n_piece, K[pc]), starts, axis=0)
    if not kept.all():
        absent = np.bincount(node_class[~kept], weights=w[~kept], minlength=n_node).astype(np.int64)
        reach = np.ones(v, dtype=bool) if possible is None else np.asarray(possible, dtype=bool)
        box_hi += absent[:, None] * reach[None, :]
    used = sizes > 0
    verdict = np.asarray(model.box_verdict(box_lo[used], box_hi[used], sizes[used], table.sa_domain))
    surely[np.flatnonzero(used)[verdict == 0]] = True
    return surely


#: worlds drawn to bound from below the probability that the search's decisions exclude no world
BOUND_WORLDS = 2000
#: one-sided standard errors of that bound (Wilson's interval)
BOUND_Z = 3.0
#: worlds weighed at once
_CHUNK = 32


def acceptance_bound(s: _Search, table: EncodedTable, group: np.ndarray, worlds: int = BOUND_WORLDS,
                     seed: int = 0) -> tuple[float, int, int]:
    """With a suppression budget, when some node the search could have preferred is not ruled
    out in every world: a lower bound on the probability ``P(A)`` that a world rules every such
    node out **whatever the absent people hold** — ``(bound, worlds accepted, worlds drawn)``.

    A world here is an arrangement of each published class's multiset among its members
    (uniform); a node is ruled out in it when the rows of its classes that fail — exactly for a
    class of published people, at every point of its box for one with absent people — exceed
    the budget, or (a node not under the published one) its metric with them withheld exceeds
    the published node's. ``A`` does not depend on the absent people's values, and it implies
    that the search chooses the published node; so for every person and value
    ``P(x = v | release) <= P(x = v | no search decision) / P(A)``: the class frequency (the
    absent people's posterior given their classes fail) divided by this bound is a sound upper
    bound. Wilson's lower bound at ``BOUND_Z`` standard errors; 0 when no world is accepted, or
    when the published node is not minimal (a node under it satisfies: every world of ``A``
    publishes the opposite flag). When fewer than :data:`MIN_SHARE` of the first 200 drawn are
    accepted, their bound is returned without drawing the rest (the figures at least double;
    the certificate caps them at 1). Computed once per search (:func:`search_of`)."""
    done = s._bound
    if done is not None and done[3] == (worlds, seed):
        return done[0], done[1], done[2]
    out = _acceptance_bound(s, table, group, worlds, seed)
    s._bound = (*out, (worlds, seed))
    return out


def bound_why(s: _Search, accepted: int, drawn: int) -> str:
    """Why :func:`acceptance_bound` gave no bound."""
    if drawn == 0:
        return "the published node is not minimal, which no world ruling every such node out publishes"
    return f"none of the {drawn:,} arrangements drawn rules every such node out whatever the absent people hold"


#: below this share of arrangements ruling every node out (the figures at least double) the
#: bound of the first 200 drawn is stated: drawing to the end is not worth its time
MIN_SHARE = 0.5


def _acceptance_bound(s: _Search, table: EncodedTable, group: np.ndarray, worlds: int,
                      seed: int) -> tuple[float, int, int]:
    lat, model, domain = s.lat, s.model, table.sa_domain
    group = np.asarray(group, dtype=np.int64)
    under = np.flatnonzero(s.below)
    if any(lat.satisfies(lat.nodes[j]) for j in under[under != s.star]):
        # the release says its node is not minimal (a node under it satisfies: the published flag
        # ``minimality``, a function of the table); every world of A says it is — A misses them all
        return 0.0, 0, 0
    kept = np.flatnonzero(group >= 0)
    ko = kept[np.argsort(group[kept], kind="stable")]
    blocks = group[ko].astype(np.float64)
    sa_sorted = np.asarray(table.sa_codes, dtype=np.int64)[ko]
    V = int(domain.n_values)
    rng = np.random.default_rng(seed)
    nodes = []
    floor = size_floor(model)
    for i, nc in zip(s.dependent, s.node_class):
        cls = lat.engine.classes(lat.nodes[i])
        C = int(cls.n_classes)
        sizes = np.bincount(nc, minlength=C).astype(np.int64)
        # the same in every world: absent people of one withheld class, or below the size floor
        sure = _inside_withheld(model, nc, C, group, s.at_star)
        if floor > 1:
            sure |= (sizes > 0) & (sizes < floor)
        absent = np.where(sure, 0, np.bincount(nc[group < 0], minlength=C))
        gen = np.asarray(cls.gen, dtype=np.float64)
        nodes.append((i, nc[ko], C, absent, sizes, gen, sure))
    reach = np.asarray(s.possible, dtype=np.int64)
    accepted = drawn = 0
    while drawn < worlds:
        w = min(_CHUNK, worlds - drawn)
        perm = np.argsort(blocks[None, :] + rng.random((w, ko.size)), axis=1)  # within each class
        sa = sa_sorted[perm]  # (w, people): the values in the people's order ko
        ok = np.ones(w, dtype=bool)
        for i, nck, C, absent, sizes, gen, sure in nodes:
            idx = (np.arange(w, dtype=np.int64)[:, None] * C + nck[None, :]) * V + sa
            cnt = np.bincount(idx.ravel(), minlength=w * C * V).reshape(w * C, V)
            has = np.tile(absent > 0, w)
            fails = ~np.asarray(model.holds(cnt, domain), dtype=bool)
            if has.any():  # classes with absent people: failing at every point of their box
                lo = cnt[has]
                hi = lo + np.tile(absent, w)[has][:, None] * reach[None, :]
                fails[has] = np.asarray(model.box_verdict(lo, hi, np.tile(sizes, w)[has], domain)) == 0
            fails = fails.reshape(w, C) | sure[None, :]
            rows = fails @ sizes
            ruled = rows > lat.budget
            if not s.below[i] and not ruled.all():
                ruled |= _metric_withheld(lat, s.metric, i, fails, sizes, gen) > s.top
            ok &= ruled
        accepted += int(ok.sum())
        drawn += w
        if drawn >= 200 and accepted < MIN_SHARE * drawn:
            break  # the figures at least double: the bound of these draws is stated, more are not worth their time
    return _wilson_low(accepted, drawn, BOUND_Z), accepted, drawn


def _metric_withheld(lat: Any, metric: str, i: int, fails: np.ndarray, sizes: np.ndarray,
                     gen: np.ndarray) -> np.ndarray:
    """Per world (rows of ``fails``), node ``i``'s metric with the failing classes withheld —
    :meth:`~openbook.algorithms.lattice.Lattice.metric` on many worlds at once."""
    if metric == "loss":
        return float(lat.lb[i]) + (fails @ (sizes * (lat.d - gen))) / (lat.n * lat.d)
    if metric == "discernibility":
        sq = sizes.astype(np.float64) ** 2
        return (~fails) @ sq + (fails @ sizes.astype(np.float64)) * float(lat.n)
    return np.full(fails.shape[0], float(lat.value(i, metric)))  # height, precision: no SA


def _wilson_low(k: int, n: int, z: float) -> float:
    """Wilson's lower confidence bound on a proportion from ``k`` of ``n``."""
    if n <= 0 or k <= 0:
        return 0.0
    p = k / n
    denom = 1.0 + z * z / n
    centre = p + z * z / (2 * n)
    adj = z * np.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n))
    return float(max(0.0, (centre - adj) / denom))
