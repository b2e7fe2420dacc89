"""Anatomization over Symmetric Grouping (paper 000 §3.2, §5.3: ``SG(Ana)``), replayed on any
number of worlds without a re-run.

SG splits a segment ``[lo, hi)`` of its QI order at ``sg_split_point`` when both halves
satisfy the model (Fig. 7); its base groups are the leaves of that even-split tree, and
Anatomy then splits each into the published groups. The tree's *shape* — every segment SG
could reach — depends on the QIs alone; which nodes are leaves depends on the SA.

The worlds are the seat worlds of :mod:`.anatomized_order` (people laid out in the order;
each seat a published group and a value, every group receiving its QI and SA multisets).
For a frontier ``F`` of the tree (the base groups), a seat world has weight
``Π_{b ∈ F} φ(b) · [SG stops exactly at F]`` (``φ``: Anatomy's factor,
:func:`.anatomized_order._anatomy_log`), and SG stops at ``F`` when

- every node strictly above ``F`` but the root is split, i.e. every node of ``F`` and every
  such node *holds* — its counts are the sum of the published groups seated in it, known
  once we know which groups those are; and
- every node of ``F`` with two rows or more is *not* split: its two halves do not both hold
  — this reads the values of its seats, summed over the seat worlds inside it
  (:func:`.seat_worlds._base_group`, the halves as its two buckets).

Which groups sit in a segment is known from its two ends: at a boundary between runs of equal
QIs every group is on one side by its QIs; at a boundary inside a run, the groups holding
only that run's value may sit on either side — a boundary's *state* is which of those are
placed left of it. So the weight is an inside–outside sum over the tree:
``I(N, a, b) = [N holds, unless N is the root] · (leaf(N, a, b) + Σ_m I(N₁, a, m) I(N₂, m, b))``
with ``a, b, m`` the states at ``N``'s ends and middle; the outside pass gives each leaf term
its probability and each seat its expected counts. Exact; ``None`` (the re-run within
``rerun_limit``, else unresolved) past the budgets of :mod:`.anatomized_order`, or when a
boundary has more than :data:`MAX_STATES` states (Adult: runs of a hundred people with equal
QIs, their one-value groups parted in too many ways).

The condition "every node above the frontier holds" never binds under distinct, entropy or
simple ℓ-diversity (a union of groups that hold holds, and every published group holds); it
is SG's rule, cheap, and kept for models without that property (recursive (c, ℓ)).

Checked against a brute force over the people (every arrangement of the values, SG re-run,
every order of Anatomy's draws, kept when the files it writes are the observed ones):
``tests/contract/test_adversary_brute_force.py``.
"""

from __future__ import annotations

from collections import Counter
from math import inf
from typing import Any

import numpy as np

from ...data.table import EncodedTable
from . import seat_worlds as sw
from .anatomized_order import _anatomy_log, _Seats, _spread, _subsets
from .seat_worlds import _base_group

_NONE: frozenset = frozenset()
#: most states of one boundary (ways to part the one-value groups of the run it cuts)
MAX_STATES = 20_000


class _Stop(Exception):
    """The replay gives up (its message says why)."""


class _Tree:
    """SG's complete even-split tree over ``n`` seats: node ``i`` is the segment
    ``[lo[i], hi[i])``; ``kids[i]`` its two halves (``None`` under two rows). Parents come
    before children."""

    def __init__(self, n: int) -> None:
        from ...algorithms.symmetric import sg_split_point

        self.lo, self.hi = [0], [n]
        self.kids: list[tuple[int, int] | None] = []
        i = 0
        while i < len(self.lo):
            a, b = self.lo[i], self.hi[i]
            if b - a >= 2:
                m = int(sg_split_point(a, b))
                self.kids.append((len(self.lo), len(self.lo) + 1))
                self.lo += [a, m]
                self.hi += [m, b]
            else:
                self.kids.append(None)
            i += 1

    def cuts(self, i: int) -> list[int]:
        """Node ``i``'s seats as a leaf's buckets: its two halves (one bucket under two rows)."""
        kids = self.kids[i]
        return [self.lo[i], self.hi[i]] if kids is None else [self.lo[i], self.hi[kids[0]], self.hi[i]]


class _Boundaries:
    """Which published groups are left of a boundary (module docstring)."""

    def __init__(self, S: _Seats) -> None:
        self.S = S
        self._states: dict[int, list[frozenset]] = {}
        start = np.r_[0, np.flatnonzero(S.seat_q[1:] != S.seat_q[:-1]) + 1] if S.n else np.zeros(0, np.int64)
        self.run_start = {int(S.seat_q[s]): int(s) for s in start.tolist()}

    def states(self, P: int) -> list[frozenset]:
        """The states at seat ``P``: which one-value groups of the run cut there are left of
        it (each list's seats fill the run's seats left of ``P`` with the groups surely
        there); ``[]`` when no boundary can be there."""
        if P in self._states:
            return self._states[P]
        S = self.S
        q = S.crossing(P)
        out: list[frozenset] = [_NONE]
        if q >= 0:
            sides = {g: S.side(g, P, q) for g in S.groups_of_q[q]}
            if any(sd == -2 for sd in sides.values()):
                out = []
            else:
                free = [g for g, sd in sides.items() if sd == -1]
                need = P - self.run_start[q] - sum(S.gq[g][q] for g, sd in sides.items() if sd == 1)
                out = []
                for pick in _subsets(free, [S.gq[g][q] for g in free], need):
                    out.append(frozenset(pick))
                    if len(out) > MAX_STATES:
                        raise _Stop(f"a boundary inside a run of {int(S.run_end[q]) - self.run_start[q]:,} people "
                                    f"with equal QIs has more than {MAX_STATES:,} ways to part its groups")
                S.spent += len(out)
            S.spent += len(sides)
        self._states[P] = out
        return out

    def left(self, g: int, P: int, state: frozenset) -> bool:
        """Is group ``g`` left of the boundary ``P`` in ``state``?"""
        S = self.S
        if S.hi[g] <= P:
            return True
        q = S.crossing(P)
        if q >= 0 and q in S.gq[g]:
            sd = S.side(g, P, q)
            return sd == 1 or (sd == -1 and g in state)
        return False

    def content(self, lo: int, hi: int, a: frozenset, b: frozenset) -> list[int] | None:
        """The groups seated in ``[lo, hi)`` with states ``a`` and ``b`` at its ends, or
        ``None`` when no seat world has them there."""
        S = self.S
        runs = np.unique(S.seat_q[lo:hi]).tolist()
        cand = {g for q in runs for g in S.groups_of_q[q]}
        S.spent += hi - lo + len(cand)
        E = []
        for g in cand:
            in_lo, in_hi = self.left(g, lo, a), self.left(g, hi, b)
            if in_lo and not in_hi:
                return None
            if in_hi and not in_lo:
                E.append(g)
        have: Counter = Counter()
        for g in E:
            have.update(S.gq[g])
        if have != Counter(S.seat_q[lo:hi].tolist()):
            return None
        return sorted(E)


def sg_posterior(base: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                 l: int) -> tuple[np.ndarray | None, str]:
    """Each person's posterior ``(n, n_sa)`` under anatomization over SG (module docstring),
    the seat of each in SG's order (people with equal QIs by row position; with random ties
    the caller averages over their run), or ``(None, why)``."""
    S = _Seats(base, table, group, gcounts)
    if not S.ok:
        return None, "the order does not keep people with equal QIs together"
    model, domain = base.model, table.sa_domain
    tree, B = _Tree(S.n), _Boundaries(S)
    too_long = f"more than {sw.WORK_LIMIT:,} steps to list the ways the groups form SG's base groups"

    def refused(c: np.ndarray) -> np.ndarray:  # (W, 2, V): SG does not split the leaf
        h0 = np.asarray(model.holds(c[:, 0], domain), dtype=bool)
        return (~(h0 & np.asarray(model.holds(c[:, 1], domain), dtype=bool))).astype(float)

    def whole(c: np.ndarray) -> np.ndarray:  # a leaf of one row
        return np.ones(c.shape[0])

    # inside[(node, a, b)] = (log I, log leaf term, leaf's expected piece counts, [(m, log I₁, log I₂)])
    inside: dict[tuple[int, frozenset, frozenset], tuple[float, float, Any, list]] = {}

    def solve(i: int, a: frozenset, b: frozenset) -> float:
        key = (i, a, b)
        if key in inside:
            return inside[key][0]
        lo, hi = tree.lo[i], tree.hi[i]
        E = B.content(lo, hi, a, b)
        if S.spent > sw.WORK_LIMIT:
            raise _Stop(too_long)
        if E is None or (i > 0 and not bool(np.asarray(model.holds(S.gcounts[E].sum(axis=0)[None, :], domain))[0])):
            inside[key] = (-inf, -inf, None, [])
            return -inf
        leaf, e = -inf, None
        la = _anatomy_log(S.gcounts, E, l)
        if la > -inf:
            res = _base_group(S, E, tree.cuts(i), whole if tree.kids[i] is None else refused)
            if res is None:
                raise _Stop(too_long if S.spent > sw.WORK_LIMIT else
                            f"a base group of {hi - lo} people has more than {sw.MAX_CONFIGS:,} ways to seat its "
                            "groups and values")
            if res[0] > -inf:
                leaf, e = la + res[0], res[1]
        splits = []
        tot = leaf
        kids = tree.kids[i]
        if kids is not None:
            k1, k2 = kids
            for m in B.states(tree.hi[k1]):
                l1 = solve(k1, a, m)
                if l1 == -inf:
                    continue
                l2 = solve(k2, m, b)
                if l2 == -inf:
                    continue
                splits.append((m, l1, l2))
                tot = float(np.logaddexp(tot, l1 + l2))
        inside[key] = (tot, leaf, e, splits)
        return tot

    try:
        logZ = solve(0, _NONE, _NONE)
    except _Stop as stop:
        return None, str(stop)
    if logZ == -inf:
        return None, "no base grouping of SG publishes these groups"
    outside: dict[tuple[int, frozenset, frozenset], float] = {(0, _NONE, _NONE): 0.0}
    seat = np.zeros((S.n, S.n_sa))
    for key in sorted(inside, key=lambda k: k[0]):  # parents first
        o = outside.get(key)
        tot, leaf, e, splits = inside[key]
        if o is None or tot == -inf:
            continue
        i, a, b = key
        if leaf > -inf:
            _spread(S, tree.cuts(i), e * float(np.exp(o + leaf - logZ)), seat)
        kids = tree.kids[i]
        if kids is not None:
            k1, k2 = kids
            for m, l1, l2 in splits:
                outside[(k1, a, m)] = float(np.logaddexp(outside.get((k1, a, m), -inf), o + l2))
                outside[(k2, m, b)] = float(np.logaddexp(outside.get((k2, m, b), -inf), o + l1))
    post = np.empty_like(seat)
    post[S.order] = seat
    return post, ""
