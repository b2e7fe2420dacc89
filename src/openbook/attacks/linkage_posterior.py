"""The exact linkage posterior over several releases (paper 002 §2.3's setting with paper 000
§2.4's random worlds) — what :mod:`.linkage`'s ``1/post-linkage diversity`` bounds from below.

**Model.** A population of people with known QI values and releases ``D̄_1..D̄_t`` (the
earlier ones and the new one). Release ``j`` publishes, per class ``c``, the multiset ``n_c``
of the SA values of its people; a bucketized release also publishes, per bucket, how many
of its records carry each exact QI tuple. A person's *candidate classes* in release ``j`` are
the classes whose labels cover their QI (:func:`.linkage.match_release`); with none, they are
not in release ``j``. A *world* gives every person an SA value and, in every release where
they have candidates, one of them — every class holding exactly its published multiset (and
QI-tuple counts): the releases are of the population's people, as paper 002 §2.3 links them
(every matched person is in the release, every record is a matched person). The prior is
**uniform over worlds**, people being distinct individuals: paper 000 §2.4 ("treat each of
these possible worlds as equally likely"; footnote 3: "a uniform prior to the possible
worlds"). Paper 002 states no posterior, only the post-linkage diversity. Person ``i``'s
posterior of ``v`` is the share of worlds giving them ``v``.

**Exact.** People with the same candidates in every release (and, where a QI-table splits
them over several buckets, the same QI tuple) are exchangeable: a *unit* of ``m``. (1)
Bounds ``lo ≤ Y_g(v) ≤ hi`` on how many of a unit have value ``v`` (and on its share of each
of several candidate classes) are tightened to a fixpoint through every class's counts and
every unit's size; each rule holds in every world, so a unit whose bounds meet has posterior
``Y_g/m`` (this peels any tree of classes — nested partitions). (2) The rest splits into
*components* (units linked by classes). (3) Each is **counted** with Python integers: a
forward-backward dynamic programme over its units in breadth- or depth-first order, the
state being what the open classes still hold; a unit of single candidates places ``y`` people
per value at once (``m!/∏ y_v!`` ways), a unit of several places its people one at a time.
``Pr(i = v) = E[Y_g(v)] / m``.

**Bound.** A component whose counting exceeds the ``budget`` (transitions of the forward
pass, over all components) or keeps more than ``max_open`` classes open is **bounded**:
``E[Y_g(v)]/m ≤ hi/m``, an expectation being at most the largest value it averages — sound
for any prior exchangeable within a unit, given that some world exists; the counting, a
fully determined component, or the auditor's true SA values fitting every release (a flow
per value; not tried across a QI-table's bucket counts) prove one. A component without a
world under the model (a class holding records of people the population lacks, a matched
person a release leaves out, counts no assignment meets), or without a proof of one, gets
the **support bound**: 1 on the values each of the person's releases offers them, 0
elsewhere — sound in every world where the person is in one of their candidate classes of
each release, whoever else is there. Nobody is unresolved.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, maximum_flow

from ..data.grouping import group_ids
from ..errors import ParameterError
from .linkage import LinkageResult, bucket_shares, linkage

#: transitions the exact counting may enumerate in its forward pass, over all components
#: (the backward pass repeats them; about a second of Python)
DEFAULT_BUDGET = 100_000
#: a component whose counting order keeps more classes open at once is bounded (efficiency)
MAX_OPEN = 20
#: rounds of bound propagation at most (the bounds are valid after any round)
MAX_ROUNDS = 500
METHODS = ("exact", "bound", "support", "none")
EXACT, BOUND, SUPPORT, NONE = range(4)


class _OverBudget(Exception):
    """The exact counting needs more than the budget left (``args[0]``: the work spent)."""


@dataclass
class Problem:
    """Every release's classes stacked (``counts``: ``(C, V)``) and the units: ``size[g]``
    exchangeable people, ``cands[g]`` one tuple of class ids per release they are matched in,
    ``shares[g]`` per tuple how many of them each class holds (a QI-table's counts) or
    ``None``, ``bad[g]`` when the releases cannot all hold them; ``truth`` (``(G, V)``, the
    auditor's true value counts; ``-1`` rows unknown) or ``None``."""

    counts: np.ndarray
    size: np.ndarray
    cands: list[list[tuple[int, ...]]]
    shares: list[list[tuple[int, ...] | None]]
    bad: np.ndarray
    truth: np.ndarray | None = None


@dataclass
class Solution:
    """Per unit: posterior bounds ``upper``/``lower`` (``(G, V)``, equal where exact), the
    ``method`` (index into :data:`METHODS`), exact ``fractions``, and ``notes``."""

    upper: np.ndarray
    lower: np.ndarray
    method: np.ndarray
    fractions: dict[int, tuple[Fraction, ...]]
    notes: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# people -> units
# ---------------------------------------------------------------------------------------
def build_problem(counts: Sequence[np.ndarray], matches: Sequence[tuple[np.ndarray, np.ndarray]], *,
                  shares: Sequence[Any] | None = None, weights: Any = None,
                  truth: Any = None) -> tuple[Problem, np.ndarray]:
    """The :class:`Problem` of people matched to each release's classes (``matches[j]``: CSR
    ``(indptr, class ids)`` as :func:`.linkage.match_release`; ``counts[j]``: ``(classes, V)``)
    and each person's unit (``-1``: in no release). ``shares[j]``: ``None`` or
    :func:`.linkage.bucket_shares` of a bucketized release; ``weights``: people per row;
    ``truth``: each row's true value code (``-1`` unknown)."""
    n, t = len(matches[0][0]) - 1, len(matches)
    shares = list(shares) if shares is not None else [None] * t
    offs = np.concatenate([[0], np.cumsum([int(c.shape[0]) for c in counts])]).astype(np.int64)
    w = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    if w.shape != (n,) or (w < 1).any():
        raise ParameterError("weights must give every person a count >= 1", parameter="weights")
    keys, bad = [], np.zeros(n, dtype=bool)
    for j, (ptr, idx) in enumerate(matches):
        lens = np.diff(ptr)
        key = np.full(n, -1, dtype=np.int64)
        key[lens == 1] = idx[ptr[:-1][lens == 1]]
        seen: dict[tuple, int] = {}
        for i in np.flatnonzero(lens > 1):  # several candidates: the set (and the QI tuple) is the key
            set_key = (tuple(sorted(set(idx[ptr[i]:ptr[i + 1]].tolist()))), -1 if shares[j] is None else int(shares[j][0][i]))
            key[i] = int(counts[j].shape[0]) + seen.setdefault(set_key, len(seen))
        keys.append(key)
        if shares[j] is not None:  # a QI-table lists each of its people once: as many as the population has
            pk, _, total = shares[j]
            bad |= (total > 0) & (np.bincount(pk, weights=w, minlength=int(pk.max(initial=0)) + 1)[pk] != total)
    rows = np.flatnonzero(np.any(np.stack(keys) >= 0, axis=0)) if n else np.zeros(0, dtype=np.int64)
    unit = np.full(n, -1, dtype=np.int64)
    G = 0
    if rows.size:
        gid, G = group_ids([k[rows] + 1 for k in keys])
        unit[rows] = gid
    size = np.bincount(unit[rows], weights=w[rows], minlength=G).astype(np.int64)
    rep = np.full(G, -1, dtype=np.int64)
    rep[unit[rows][::-1]] = rows[::-1]
    cands: list[list[tuple[int, ...]]] = []
    unit_shares: list[list[tuple[int, ...] | None]] = []
    for r in rep.tolist():
        cl: list[tuple[int, ...]] = []
        sh: list[tuple[int, ...] | None] = []
        for j, (ptr, idx) in enumerate(matches):
            if ptr[r + 1] > ptr[r]:
                seg = dict(zip((idx[ptr[r]:ptr[r + 1]] + offs[j]).tolist(),
                               shares[j][1][ptr[r]:ptr[r + 1]].tolist() if shares[j] is not None else [-1] * 99))
                tup = tuple(sorted(seg))
                cl.append(tup)
                sh.append(tuple(seg[c] for c in tup) if shares[j] is not None and len(tup) > 1 else None)
        cands.append(cl)
        unit_shares.append(sh)
    # classes of a generalized release holding exactly the same units are one class to the
    # counting: each world splits their people between them in ∏_v C(n1_v + n2_v, n1_v) ways
    holders: list[list[int]] = [[] for _ in range(int(offs[-1]))]
    for g, cl in enumerate(cands):
        for tup in cl:
            for c in tup:
                holders[c].append(g)
    release_of = np.repeat(np.arange(t), np.diff(offs))
    ids: dict[tuple, int] = {}
    new_id = np.asarray([ids.setdefault((int(release_of[c]), tuple(holders[c]))
                                        if holders[c] and shares[release_of[c]] is None else (-1, c), len(ids))
                         for c in range(int(offs[-1]))], dtype=np.int64)
    V = int(counts[0].shape[1])
    merged = np.zeros((len(ids), V), dtype=np.int64)
    np.add.at(merged, new_id, np.vstack([np.asarray(c, dtype=np.int64) for c in counts]))
    merged_cands = [[tuple(sorted({int(new_id[c]) for c in tup})) for tup in cl] for cl in cands]
    T = None
    if truth is not None:
        tr = np.asarray(truth, dtype=np.int64)[rows]
        T = np.zeros((G, V), dtype=np.int64)
        np.add.at(T, (unit[rows][tr >= 0], tr[tr >= 0]), w[rows][tr >= 0])
        T[unit[rows][tr < 0]] = -1
    ubad = np.zeros(G, dtype=bool)
    ubad[unit[rows][bad[rows]]] = True
    return Problem(merged, size, merged_cands, unit_shares, ubad, T), unit


# ---------------------------------------------------------------------------------------
# (1) bounds that hold in every world
# ---------------------------------------------------------------------------------------
@dataclass
class _Incidence:
    plain_g: np.ndarray  # unit, class of each single candidate
    plain_c: np.ndarray
    amb_g: np.ndarray  # unit, class, (unit, release) pair and known share of each of several candidates
    amb_c: np.ndarray
    amb_p: np.ndarray
    amb_w: np.ndarray
    pair_g: np.ndarray


def _incidence(P: Problem) -> _Incidence:
    out: list[list[int]] = [[] for _ in range(7)]
    for g, (cl, sh) in enumerate(zip(P.cands, P.shares)):
        for tup, ws in zip(cl, sh):
            if len(tup) == 1:
                out[0].append(g)
                out[1].append(tup[0])
                continue
            for i, c in enumerate(tup):
                out[2].append(g)
                out[3].append(c)
                out[4].append(len(out[6]))
                out[5].append(-1 if ws is None else ws[i])
            out[6].append(g)
    return _Incidence(*[np.asarray(x, dtype=np.int64) for x in out])


def _propagate(P: Problem, inc: _Incidence, var_comp: np.ndarray, misfit: np.ndarray,
               max_rounds: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Bounds on ``Y_g(v)`` (rows ``0..G-1``) and each share ``u_e(v)`` of several candidates
    (rows ``G..``): per class ``Σ Y + Σ u = n_c``, per (unit, release) ``Σ_c u = Y``, per unit
    ``Σ_v Y = m``, per share ``Σ_v u = W`` (known) or ``≤ m`` — each equation bounds every
    term by the others. A component where a lower bound passes an upper one has no world:
    it is marked in ``misfit`` and its bounds reset."""
    C, V = P.counts.shape
    G, E, Q = len(P.size), len(inc.amb_g), len(inc.pair_g)
    ue = G + np.arange(E, dtype=np.int64)
    t_con = np.concatenate([inc.plain_c, inc.amb_c, C + inc.amb_p, C + np.arange(Q, dtype=np.int64)])
    t_var = np.concatenate([inc.plain_g, ue, ue, inc.pair_g])
    pos = np.concatenate([np.ones(len(inc.plain_g) + 2 * E, dtype=bool), np.zeros(Q, dtype=bool)])[:, None]
    c_t = np.vstack([P.counts, np.zeros((Q, V), dtype=np.int64)])[t_con]
    A = csr_matrix((np.ones(len(t_con), dtype=np.int64), (t_con, np.arange(len(t_con)))), shape=(C + Q, len(t_con)))
    cap = np.concatenate([P.size, np.where(inc.amb_w >= 0, inc.amb_w, P.size[inc.amb_g])])
    exact_total = np.concatenate([np.ones(G, dtype=bool), inc.amb_w >= 0])[:, None]
    lo = np.zeros((G + E, V), dtype=np.int64)
    hi = np.repeat(cap[:, None], V, axis=1)
    order = np.argsort(t_var, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(t_var[order]) != 0]) if len(order) else np.zeros(0, dtype=np.int64)
    vars_ = t_var[order][starts]
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        tmax = np.where(pos, hi[t_var], -lo[t_var])
        tmin = np.where(pos, lo[t_var], -hi[t_var])
        omax = np.asarray(A @ tmax)[t_con] - tmax
        omin = np.asarray(A @ tmin)[t_con] - tmin
        lo2, hi2 = lo.copy(), hi.copy()
        if len(order):
            new_lo = np.where(pos, c_t - omax, omin - c_t)[order]
            new_hi = np.where(pos, c_t - omin, omax - c_t)[order]
            lo2[vars_] = np.maximum(lo2[vars_], np.maximum.reduceat(new_lo, starts, axis=0))
            hi2[vars_] = np.minimum(hi2[vars_], np.minimum.reduceat(new_hi, starts, axis=0))
        sl, sh = lo2.sum(axis=1, keepdims=True), hi2.sum(axis=1, keepdims=True)
        hi2 = np.minimum(hi2, cap[:, None] - (sl - lo2))
        lo2 = np.where(exact_total, np.maximum(lo2, cap[:, None] - (sh - hi2)), lo2)
        misfit[var_comp[(lo2 > hi2).any(axis=1)]] = True
        dead = misfit[var_comp]
        lo2[dead], hi2[dead] = 0, np.repeat(cap[dead, None], V, axis=1)
        if np.array_equal(lo2, lo) and np.array_equal(hi2, hi):
            break
        lo, hi = lo2, hi2
    return lo, hi, rounds


# ---------------------------------------------------------------------------------------
# (3) exact counting in one component
# ---------------------------------------------------------------------------------------
def _compositions(m: int, caps: list[int]):
    """Every ``y`` with ``Σ y = m`` and ``0 ≤ y_v ≤ caps[v]``."""
    k = len(caps)
    suffix = [0] * (k + 1)
    for i in range(k - 1, -1, -1):
        suffix[i] = suffix[i + 1] + caps[i]
    if suffix[0] < m:
        return
    y = [0] * k

    def rec(i: int, left: int):
        if i == k - 1:
            y[i] = left
            yield tuple(y)
            return
        for a in range(max(0, left - suffix[i + 1]), min(caps[i], left) + 1):
            y[i] = a
            yield from rec(i + 1, left - a)

    yield from rec(0, m)


def _walk(touch: list[list[int]], by_class: list[list[int]], start: int, breadth: bool) -> list[int]:
    """Units in breadth- (or depth-) first order over shared classes from ``start``."""
    order, seen, done = [], [False] * len(touch), [False] * len(by_class)
    for s0 in [start, *range(len(touch))]:
        if seen[s0]:
            continue
        seen[s0] = True
        todo = deque([s0])
        while todo:
            k = todo.popleft() if breadth else todo.pop()
            order.append(k)
            for c in touch[k]:
                if not done[c]:
                    done[c] = True
                    for k2 in by_class[c]:
                        if not seen[k2]:
                            seen[k2] = True
                            todo.append(k2)
    return order


def _width(touch: list[list[int]], order: list[int], L: int) -> int:
    """The most classes open at once (touched before and after) along ``order``."""
    first, last = np.full(L, -1), np.full(L, -1)
    for s, k in enumerate(order):
        for c in touch[k]:
            first[c] = s if first[c] < 0 else first[c]
            last[c] = s
    ev = np.zeros(len(order) + 1, dtype=np.int64)
    np.add.at(ev, first[first >= 0], 1)
    np.add.at(ev, last[first >= 0], -1)
    return int(np.cumsum(ev).max(initial=0))


def count_worlds(units: Sequence[tuple[int, Sequence[int], Sequence[Sequence[tuple[int, int]]]]],
                 red: Sequence[tuple[int, ...]], budget: int, max_open: int = MAX_OPEN) -> tuple[int, list[list[int]], int]:
    """The number of worlds of one component; per unit, the number of (world, person) pairs
    giving each value; the forward work. ``units``: ``(size, single candidate classes,
    tuples of (class, known share or -1))`` over local classes; ``red``: their counts over the
    local values. Raises :class:`_OverBudget` beyond ``budget`` or ``max_open``.

    A unit of ``m`` takes ``y_v`` people of each value (``m!/∏ y_v!`` ways) and, in each
    release where it has several candidates, splits each ``y_v`` over them
    (``∏_v y_v!/∏_a u_a(v)!`` ways: each person picks a class per release independently)."""
    L, V = len(red), len(red[0])
    touch = [sorted({*pl, *(c for t in am for c, _ in t)}) for _, pl, am in units]
    by_class: list[list[int]] = [[] for _ in range(L)]
    for k, cl in enumerate(touch):
        for c in cl:
            by_class[c].append(k)
    start = min(range(len(units)), key=lambda k: min(sum(red[c]) for c in touch[k]))
    order = min((_walk(touch, by_class, start, b) for b in (True, False)), key=lambda o: _width(touch, o, L))
    if _width(touch, order, L) > max_open:
        raise _OverBudget(0)
    S = len(order)
    last = [-1] * L
    for s, k in enumerate(order):
        for c in touch[k]:
            last[c] = s
    opened: list[list[int]] = [[] for _ in range(S + 1)]
    for s, k in enumerate(order):
        opened[s + 1] = sorted((set(opened[s]) | set(touch[k])) - {c for c in touch[k] if last[c] == s})
    # per step: where each touched class's counts are (place in the state, -1: not yet open),
    # whether it closes, the inflow still possible after the step, how the next state is built
    plan: list[tuple] = [()] * S
    acc_lo, acc_hi = [0] * L, [0] * L
    for s in range(S - 1, -1, -1):
        k = order[s]
        m, pl, am = units[k]
        where = {c: i for i, c in enumerate(opened[s])}
        ti = {c: i for i, c in enumerate(touch[k])}
        plan[s] = (m, tuple(where.get(c, -1) for c in touch[k]), tuple(red[c] for c in touch[k]),
                   tuple(last[c] == s for c in touch[k]), tuple((acc_lo[c], acc_hi[c]) for c in touch[k]),
                   tuple((c in ti, ti[c] if c in ti else where[c]) for c in opened[s + 1]), tuple(ti[c] for c in pl),
                   tuple((tuple(ti[c] for c, _ in t), None if t[0][1] < 0 else tuple(w for _, w in t)) for t in am))
        inflow = {c: (m, m) for c in pl}
        for t in am:
            inflow.update({c: (0, m) if w < 0 else (w, w) for c, w in t})
        for c, (a, b) in inflow.items():
            acc_lo[c] += a
            acc_hi[c] += b
    fact = [1]
    for i in range(1, max(u[0] for u in units) + 1):
        fact.append(fact[-1] * i)
    # a class's counts travel as one integer, digit v in base ``base`` (subtraction never borrows)
    base = max(max(r) for r in red) + 1
    place = [base**v for v in range(V)]

    def enc(vec: Sequence[int]) -> int:
        return sum(a * p for a, p in zip(vec, place))

    plan = [(m, src, tuple(enc(x) for x in fresh), closes, bounds, nxt, plain, amb)
            for m, src, fresh, closes, bounds, nxt, plain, amb in plan]
    work = [0]

    def spend() -> None:
        work[0] += 1
        if work[0] > budget:
            raise _OverBudget(work[0])

    def columns(rem: list[int], m: int, caps: list[list[int]], ranges: list[tuple[int, int]]):
        """Every way to give the classes of one release a column (people per value) each:
        ``m`` people in all, within ``rem`` per value (the unit's ``y``, or its caps), column
        ``a`` within ``caps[a]`` and its total within ``ranges[a]``."""
        k = len(caps)
        lo_s, hi_s = [0] * (k + 1), [0] * (k + 1)
        for a in range(k - 1, -1, -1):
            lo_s[a], hi_s[a] = lo_s[a + 1] + ranges[a][0], hi_s[a + 1] + ranges[a][1]
        cols: list = [()] * k

        def rec(a: int, rem: list[int], left: int):
            if a == k:
                yield tuple(cols)
                return
            for total in range(max(ranges[a][0], left - hi_s[a + 1]), min(ranges[a][1], left - lo_s[a + 1]) + 1):
                for col in _compositions(total, [min(c, r) for c, r in zip(caps[a], rem)]):
                    spend()
                    cols[a] = col
                    yield from rec(a + 1, [r - c for r, c in zip(rem, col)], left - total)

        yield from rec(0, rem, m)

    def moves(s: int, state: tuple) -> list:
        m, src, fresh, closes, bounds, nxt, plain, amb = plan[s]
        cur = [state[p] if p >= 0 else fresh[i] for i, p in enumerate(src)]
        digits = [[x // p % base for p in place] for x in cur]
        # what each touched class may give this unit: all it has left if it closes, else
        # enough to keep its total reachable by the units still to come
        give = [(t, t) if closes[i] else (max(0, t - bounds[i][1]), min(m, t - bounds[i][0]))
                for i, t in enumerate(sum(d) for d in digits)]
        out: list = []

        def ranges(cls: tuple, ws: tuple | None) -> list[tuple[int, int]]:  # a QI-table's share is exact
            return [give[i] if ws is None else (max(give[i][0], w), min(give[i][1], w)) for i, w in zip(cls, ws or cls)]

        if any(not give[i][0] <= m <= give[i][1] for i in plain):
            return out
        caps = [min([m, *(digits[i][v] for i in plain)]) for v in range(V)]
        forced = next((tuple(digits[i]) for i in plain if closes[i]), None)
        firsts: Iterator[tuple[tuple[int, ...], tuple]]
        if amb:
            cls0, ws0 = amb[0]
            firsts = ((tuple(map(sum, zip(*cols))), cols)
                      for cols in columns(caps, m, [digits[i] for i in cls0], ranges(cls0, ws0)))
        else:
            firsts = (((y, ()) for y in _compositions(m, caps)) if forced is None
                      else iter([(forced, ())] if all(a <= b for a, b in zip(forced, caps)) else []))
        for y, cols0 in firsts:
            spend()
            wy = fact[m]
            for a in y:
                wy //= fact[a]
            ey = enc(y)
            base_new = list(cur)
            for i in plain:
                base_new[i] -= ey
            # ways: m!/∏ y_v! to pick the values, ∏_v y_v!/∏_a u_a(v)! per release to split them
            parts = [[(cls0, cols0, fact_ratio(y, cols0))]] if amb else []
            for cls, ws in amb[1:]:
                parts.append([(cls, cols, fact_ratio(y, cols))
                              for cols in columns(list(y), m, [digits[i] for i in cls], ranges(cls, ws))])
            for combo in itertools.product(*parts):
                new, wgt = list(base_new), wy
                for cls, cols, ways in combo:
                    wgt *= ways
                    for i, col in zip(cls, cols):
                        new[i] -= enc(col)
                out.append((tuple(new[j] if mine else state[j] for mine, j in nxt), wgt, y))
        return out

    def fact_ratio(y: tuple, cols: tuple) -> int:
        """``∏_v y_v! / ∏_{a,v} u_a(v)!``: the ways to split ``y`` into the columns."""
        ways = 1
        for v, yv in enumerate(y):
            ways *= fact[yv]
            for col in cols:
                ways //= fact[col[v]]
        return ways

    F: list[dict] = [dict() for _ in range(S + 1)]
    F[0][()] = 1
    moved: list[list] = [[] for _ in range(S)]  # the forward transitions, kept for the backward pass
    for s in range(S):
        layer = F[s + 1]
        for st, f in F[s].items():
            mv = moves(s, st)
            moved[s].append(mv)
            for nxt, wgt, _ in mv:
                layer[nxt] = layer.get(nxt, 0) + f * wgt
        if not layer:
            return 0, [[0] * V for _ in units], work[0]
    numer = [[0] * V for _ in units]
    B: dict = {(): 1}
    for s in range(S - 1, -1, -1):
        num, layer = numer[order[s]], {}
        for (st, f), mv in zip(F[s].items(), moved[s]):
            acc = 0
            for nxt, wgt, y in mv:
                bw = B.get(nxt)
                if bw:
                    acc += wgt * bw
                    for v, a in enumerate(y):
                        num[v] += f * wgt * bw * a
            if acc:
                layer[st] = acc
        B = layer
        moved[s] = []
    return B.get((), 0), numer, work[0]


# ---------------------------------------------------------------------------------------
# proofs that a world exists, and the support bound
# ---------------------------------------------------------------------------------------
def _witness(P: Problem, inc: _Incidence, units: np.ndarray, classes: np.ndarray) -> bool:
    """Do the auditor's true values make a world of the component? Single candidates are
    counted; people of several candidates must fill what is left: a maximum flow per value
    (not attempted where a QI-table fixes how many of a unit each bucket holds)."""
    if P.truth is None or (P.truth[units] < 0).any():
        return False
    in_u = np.zeros(len(P.size), dtype=bool)
    in_u[units] = True
    need = P.counts.copy()
    pm = in_u[inc.plain_g]
    np.subtract.at(need, inc.plain_c[pm], P.truth[inc.plain_g[pm]])
    pairs = np.flatnonzero(in_u[inc.pair_g])
    am = np.flatnonzero(np.isin(inc.amb_p, pairs))
    cls = np.unique(inc.amb_c[am])
    if (need[classes] < 0).any() or need[np.setdiff1d(classes, cls)].any() or (inc.amb_w[am] >= 0).any():
        return False
    sink = len(pairs) + len(cls) + 1  # nodes: 0 source, the (unit, release) pairs, their classes, the sink
    src = np.concatenate([np.zeros(len(pairs), dtype=np.int64), 1 + np.searchsorted(pairs, inc.amb_p[am]),
                          1 + len(pairs) + np.arange(len(cls))])
    dst = np.concatenate([1 + np.arange(len(pairs)), 1 + len(pairs) + np.searchsorted(cls, inc.amb_c[am]),
                          np.full(len(cls), sink)])
    for v in range(P.counts.shape[1]):
        supply = P.truth[inc.pair_g[pairs], v]
        total = int(supply.sum())
        if total != int(need[cls, v].sum()):
            return False
        if total:
            capv = np.concatenate([supply, np.full(len(am), total), need[cls, v]]).astype(np.int32)
            g = coo_matrix((capv, (src, dst)), shape=(sink + 1, sink + 1)).tocsr()
            if maximum_flow(g, 0, sink).flow_value != total:
                return False
    return True


def _support(P: Problem, units: np.ndarray) -> np.ndarray:
    """Per unit, the values every release it is matched in offers it (all when none: then
    nothing is claimed)."""
    out = np.ones((len(units), P.counts.shape[1]), dtype=bool)
    has = P.counts > 0
    for r, g in enumerate(units):
        for tup in P.cands[g]:
            out[r] &= has[list(tup)].any(axis=0)
    out[~out.any(axis=1)] = True
    return out


# ---------------------------------------------------------------------------------------
# the whole computation
# ---------------------------------------------------------------------------------------
def solve(P: Problem, *, budget: int = DEFAULT_BUDGET, max_open: int = MAX_OPEN,
          max_rounds: int = MAX_ROUNDS) -> Solution:
    """The exact posterior (or the module docstring's bounds) of every unit of ``P``."""
    C, V = P.counts.shape
    G = len(P.size)
    inc = _incidence(P)

    def components(keep_p: np.ndarray, keep_a: np.ndarray) -> tuple[int, np.ndarray]:
        rows = np.concatenate([inc.plain_g[keep_p], inc.amb_g[keep_a]])
        cols = G + np.concatenate([inc.plain_c[keep_p], inc.amb_c[keep_a]])
        return connected_components(coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(G + C, G + C)), directed=False)

    n_comp, lab = components(np.ones(len(inc.plain_g), dtype=bool), np.ones(len(inc.amb_g), dtype=bool))
    comp_u, comp_c = lab[:G], lab[G:]
    misfit = np.zeros(n_comp, dtype=bool)
    misfit[comp_u[P.bad]] = True
    known = inc.amb_w >= 0
    sure = np.bincount(np.concatenate([inc.plain_c, inc.amb_c]), minlength=C,
                       weights=np.concatenate([P.size[inc.plain_g], np.where(known, inc.amb_w, 0)]))
    poss = sure + np.bincount(inc.amb_c, weights=np.where(known, 0, P.size[inc.amb_g]), minlength=C)
    held = np.bincount(np.concatenate([inc.plain_c, inc.amb_c]), minlength=C) > 0
    s = P.counts.sum(axis=1)
    misfit[comp_c[held & ((s < sure) | (s > poss))]] = True
    lo, hi, rounds = _propagate(P, inc, np.concatenate([comp_u, comp_u[inc.amb_g]]), misfit, max_rounds)
    yfix = (lo[:G] == hi[:G]).all(axis=1)
    removable = yfix.copy()
    removable[inc.amb_g[~(lo[G:] == hi[G:]).all(axis=1)]] = False
    removable &= ~misfit[comp_u]
    left = ~removable & ~misfit[comp_u]
    red = P.counts.copy()
    pr, ar = removable[inc.plain_g], removable[inc.amb_g]
    np.subtract.at(red, inc.plain_c[pr], lo[inc.plain_g[pr]])
    np.subtract.at(red, inc.amb_c[ar], lo[G + np.flatnonzero(ar)])
    live = np.bincount(np.concatenate([inc.plain_c[left[inc.plain_g]], inc.amb_c[left[inc.amb_g]]]), minlength=C) > 0
    misfit[comp_c[held & ((~live & (red != 0).any(axis=1)) | (red < 0).any(axis=1))]] = True
    # (2) the components of what the bounds left, (3) counted smallest first
    _, sub = components(left[inc.plain_g], left[inc.amb_g])
    groups: dict[int, list[int]] = {}
    for g in np.flatnonzero(left).tolist():
        groups.setdefault(int(sub[g]), []).append(int(g))
    fractions: dict[int, tuple[Fraction, ...]] = {}
    bounded = np.zeros(n_comp, dtype=bool)
    work, n_counted, n_over = 0, 0, 0
    for members in sorted(groups.values(), key=lambda us: int(P.size[us].sum())):
        if misfit[comp_u[members[0]]]:
            continue
        cls = sorted({c for g in members for t in P.cands[g] for c in t})
        vals = [v for v in range(V) if red[cls, v].any()]
        cmap = {c: i for i, c in enumerate(cls)}
        units = [(int(P.size[g]), [cmap[t[0]] for t in P.cands[g] if len(t) == 1],
                  [[(cmap[c], -1 if ws is None else ws[i]) for i, c in enumerate(t)]
                   for t, ws in zip(P.cands[g], P.shares[g]) if len(t) > 1]) for g in members]
        try:
            total, numer = 0, list[list[int]]()
            if vals:
                total, numer, spent = count_worlds(units, [tuple(int(x) for x in red[c, vals]) for c in cls],
                                                   budget - work, max_open)
                work += spent
        except _OverBudget as over:
            work += int(over.args[0])
            bounded[comp_u[members[0]]] = True
            n_over += 1
            continue
        if total == 0:
            misfit[comp_u[members[0]]] = True
            continue
        n_counted += 1
        for k, g in enumerate(members):
            fr = [Fraction(0)] * V
            for i, v in enumerate(vals):
                fr[v] = Fraction(numer[k][i], total * int(P.size[g]))
            fractions[g] = tuple(fr)
    unproven = [c for c in np.flatnonzero(bounded & ~misfit)
                if not _witness(P, inc, np.flatnonzero(comp_u == c), np.flatnonzero(comp_c == c))]
    misfit[np.asarray(unproven, dtype=np.int64)] = True
    upper = hi[:G].astype(np.float64) / P.size[:, None]
    lower = lo[:G].astype(np.float64) / P.size[:, None]
    method = np.where(yfix, EXACT, BOUND)
    for g in np.flatnonzero(yfix & ~misfit[comp_u]).tolist():
        fractions[int(g)] = tuple(Fraction(int(x), int(P.size[g])) for x in lo[g])
    mis = misfit[comp_u]
    for g in list(fractions):
        if mis[g]:
            del fractions[g]
        else:
            upper[g] = lower[g] = [float(x) for x in fractions[g]]
            method[g] = EXACT
    upper[mis] = _support(P, np.flatnonzero(mis)).astype(np.float64)
    lower[mis] = 0.0
    method[mis] = SUPPORT
    notes = {"budget": int(budget), "work": int(work), "propagation_rounds": int(rounds), "units": G,
             "components": int(len(np.unique(comp_u))), "components_counted": n_counted, "components_over_budget": n_over,
             "components_without_a_world": int(len(np.unique(comp_u[mis]))) - len(unproven),
             "components_without_a_proof_of_a_world": len(unproven)}
    return Solution(upper, lower, method, fractions, notes)


# ---------------------------------------------------------------------------------------
# releases and people
# ---------------------------------------------------------------------------------------
@dataclass
class LinkagePosterior:
    """Every person's posterior over ``values`` (the releases' SA vocabulary): ``upper`` and
    ``lower`` (equal where ``method`` is exact; NaN for people in no release), exact fractions
    per unit (:meth:`exact`), each person's first candidate class in the last release
    (``last_class``, ``-1`` none) and paper 002's linkage (``linked``)."""

    values: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    method: np.ndarray
    unit: np.ndarray
    fractions: dict[int, tuple[Fraction, ...]]
    last_class: np.ndarray
    linked: LinkageResult
    notes: dict[str, Any] = field(default_factory=dict)

    def exact(self, i: int) -> tuple[Fraction, ...] | None:
        """Person ``i``'s exact posterior (a ``Fraction`` per value), or ``None``."""
        return self.fractions.get(int(self.unit[i])) if self.unit[i] >= 0 else None


def linkage_posterior(releases: Sequence[Any], population: pd.DataFrame, *, weights: Any = None,
                      truth: Sequence[Any] | None = None, hierarchies: Mapping[str, Any] | None = None,
                      budget: int = DEFAULT_BUDGET, max_open: int = MAX_OPEN) -> LinkagePosterior:
    """The posterior of every person of ``population`` (raw QI values; ``weights``: people per
    row, e.g. :func:`.linkage.published_multiplicity`) over every release (module docstring).
    ``truth``: each person's true SA value — the auditor's, used only to prove that a world
    exists where the counting is over budget."""
    cache: dict = {}
    linked = linkage(releases, population, hierarchies=hierarchies, cache=cache)
    pos = pd.Index(linked.sa_values)
    counts, shares = [], []
    for r in releases:
        c, dom = r.sa_counts()
        g = np.zeros((c.shape[0], len(pos)), dtype=np.int64)
        g[:, pos.get_indexer([str(v) for v in dom.values])] = c
        counts.append(g)
        shares.append(bucket_shares(r, population, *cache[id(r)]) if r.kind == "bucketized" else None)
    matches = [cache[id(r)] for r in releases]
    codes = None if truth is None else pos.get_indexer([str(v) for v in truth])
    P, unit = build_problem(counts, matches, shares=shares, weights=weights, truth=codes)
    sol = solve(P, budget=budget, max_open=max_open)
    n, has = len(population), unit >= 0
    upper, lower = np.full((n, len(pos)), np.nan), np.full((n, len(pos)), np.nan)
    upper[has], lower[has] = sol.upper[unit[has]], sol.lower[unit[has]]
    method = np.full(n, NONE, dtype=np.int64)
    method[has] = sol.method[unit[has]]
    ptr, idx = matches[-1]
    last = np.full(n, -1, dtype=np.int64)
    last[np.diff(ptr) > 0] = idx[ptr[:-1][np.diff(ptr) > 0]]
    return LinkagePosterior(linked.sa_values, upper, lower, method, unit, sol.fractions, last, linked, sol.notes)
