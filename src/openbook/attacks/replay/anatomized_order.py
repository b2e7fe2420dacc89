"""Anatomization over GG or RGG(p) (paper 000 §4.1, §4.3, §5.3: ``GG(Ana)``, ``RGG(Ana)``),
replayed on any number of worlds without a re-run.

GG cuts its QI order into buckets and grows each base group bucket by bucket until it holds
(RGG: and past that with probability ``p`` per holding bucket); Anatomy then splits each base
group into the published groups. The adversary reads, per published group, its members' QI
values and its SA multiset — not who of the people with equal QIs is in which group.

**Seats.** Lay the people out in the order (people with equal QIs form a *run* of seats; who
sits where among them is the input position for ``ties="input"``, a secret draw for
``ties="random"``). A *seat world* gives each seat a published group and an SA value, every
group receiving its QI multiset and its SA multiset. For a base partition ``B`` the values
are a uniform arrangement and Anatomy's grouping inside each base group ``b`` has probability
``φ(b) = [Anatomy's structure on b's counts is b's groups] · Π_S mult(S)! / Π_v c_v!``
(:mod:`.anatomized`) — the same for every seat world with those groups. So a seat world's
weight is ``Π_b φ(b) · P(the base run on its values gives B)``, and the posterior of a seat
is the weighted mean over seat worlds (a person's: their seat's; with random ties the mean
over their run, trait ``interchangeable_ties``).

**Base groups.** A base group is a run of buckets ``[k, k')`` whose seats hold exactly the
QI multiset of the published groups in it. At a boundary between runs the groups left of it
are fixed by their QIs; at a boundary inside a run, the groups made only of that run's value
may sit on either side — the state of a dynamic program over boundaries is the bucket and
which of those groups are already placed. A transition is one base group: its groups ``E``,
weight ``φ(E) · Z(E)`` with ``Z(E)`` the sum over its seat worlds of the probability that
GG/RGG, starting there, closes exactly at its last bucket (:func:`.kernels.gg_run_likelihood`
on the buckets' SA counts; the last base group under ``tail="merge"`` with the merged tail).
Inside a base group GG/RGG's weight is a product of factors of its prefixes' counts, so a
forward–backward pass over its buckets (:func:`_chain_group`; state: what each group has used
of its members of each run and of its values) sums its seat worlds, weighted ``Π n! / Π y!``
(how many seats of each run in each bucket go to each group) times ``Π y! / Π x!`` (how each
group's values fall on its buckets). GG's last base group under ``tail="merge"`` — its last
closed group and the groups and tail merged back into it — is weighed the same way, the
state also holding where the current group started (each later group must start where the
rest of the base group fails, else it would have ended the table itself); RGG's is
enumerated seat world by seat world (:func:`_base_group`). Forward and backward passes give
each transition's probability; the seat posteriors are the expected counts per (bucket, run)
divided by the seats there. Exact; ``None`` (the re-run within ``rerun_limit``, else
unresolved) when a base group has more than :data:`.seat_worlds.MAX_CONFIGS` count tables, or listing the
candidate base groups takes more than :data:`.seat_worlds.WORK_LIMIT` steps. No candidate is cut off by a
length: GG's groups end by the first boundary whose seats surely hold — some groups that hold
in every world, or a prefix holding whole groups whose counts alone make every filling of its
other seats hold (``PrivacyModel.box_verdict``) — and then only the last group, into which
the tail merges back, reaches further, unless the seats from every point where GG may have
closed to the end surely hold too (no tail merges back); RGG's may reach any length. A
candidate base group met from several states of the listing is weighed once.

Checked against a brute force over the people (every arrangement of the values, the whole
algorithm re-run, every order of Anatomy's draws and of the ties, kept when the files it
writes are the observed ones): ``tests/contract/test_adversary_brute_force.py``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ...data.table import EncodedTable
from . import seat_worlds as sw
from .seat_worlds import _base_group, _chain_group, _lf, _logadd, _pieces


class _Seats:
    """The order's runs and buckets (GG/RGG's; one bucket for a base without), and the
    published groups' QI and SA multisets."""

    def __init__(self, base: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> None:
        from ...algorithms.greedy import bucket_bounds
        from ...data.grouping import group_ids
        from .greedy import order_of

        n = table.n_rows
        self.n, self.n_sa = n, gcounts.shape[1]
        self.spent = 0  # steps of the search so far (seat_worlds.WORK_LIMIT)
        self.order = order_of(base, table)
        qid, n_q = group_ids(table.qi_codes)
        seat_q = qid[self.order]
        start = np.full(n_q, n, dtype=np.int64)
        np.minimum.at(start, seat_q, np.arange(n))
        size = np.bincount(seat_q, minlength=n_q)
        # runs: contiguous (a lexicographic order sorts equal QIs together)
        first = np.r_[True, seat_q[1:] != seat_q[:-1]] if n else np.zeros(0, dtype=bool)
        self.ok = int(first.sum()) == n_q
        self.seat_q = seat_q
        self.run_end = start + size  # each run's seats end there
        self.bounds = (bucket_bounds(n, base.effective_bucket_size()) if hasattr(base, "effective_bucket_size")
                       else np.array([0, n], dtype=np.int64))
        self.nb = self.bounds.size - 1
        m = gcounts.shape[0]
        self.gcounts = np.asarray(gcounts, dtype=np.int64)
        pairs, cnt = np.unique(np.asarray(group, dtype=np.int64) * n_q + qid, return_counts=True)
        self.gq: list[dict[int, int]] = [dict() for _ in range(m)]
        for key, c in zip((pairs // n_q).tolist(), zip((pairs % n_q).tolist(), cnt.tolist())):
            self.gq[key][c[0]] = c[1]
        self.hi = np.array([max(start[q] + size[q] for q in d) for d in self.gq], dtype=np.int64)
        # the groups by their first seat, and per first seat the SA counts of the groups from it on
        lo = np.array([min(start[q] for q in d) for d in self.gq], dtype=np.int64)
        by_lo = np.argsort(lo, kind="stable")
        self.lo_sorted = lo[by_lo]
        self.after = np.zeros((m + 1, self.n_sa), dtype=np.int64)
        if m:
            self.after[:m] = np.cumsum(self.gcounts[by_lo][::-1], axis=0)[::-1]
        self.by_hi = np.argsort(self.hi, kind="stable")
        self.hi_sorted = self.hi[self.by_hi]
        self.groups_of_q: dict[int, list[int]] = {}
        for g, d in enumerate(self.gq):
            for q in d:
                self.groups_of_q.setdefault(q, []).append(g)

    def crossing(self, P: int) -> int:
        """The run a boundary at seat ``P`` cuts, or ``-1``."""
        if P <= 0 or P >= self.n or self.seat_q[P - 1] != self.seat_q[P]:
            return -1
        return int(self.seat_q[P])

    def side(self, g: int, P: int, q: int) -> int:
        """Where group ``g`` must be at a boundary ``P`` cutting run ``q``: 1 left, 0 right,
        -1 either (only run ``q``'s value), -2 nowhere (values on both sides)."""
        left = right = False
        for r in self.gq[g]:
            if r == q:
                continue
            if self.run_end[r] <= P:
                left = True
            else:
                right = True
        if left and right:
            return -2
        return 1 if left else 0 if right else -1


def _anatomy_log(gcounts: np.ndarray, groups: list[int], l: int) -> float:
    """``log φ`` of a base group made of ``groups`` (module docstring), ``-inf`` when Anatomy
    does not split those counts into those groups."""
    rows = gcounts[groups]
    counts = rows.sum(axis=0)
    structure = _structure(tuple(counts.tolist()), l)
    if structure is None:
        return 0.0 if len(groups) == 1 else float("-inf")
    published = Counter(map(tuple, rows.tolist()))  # each group's SA counts
    if structure != published:
        return float("-inf")
    return sum(_lf(c) for c in published.values()) - sum(_lf(c) for c in counts.tolist())


_STRUCTURES: dict[tuple[tuple[int, ...], int], Counter | None] = {}


def _structure(counts: tuple[int, ...], l: int) -> Counter | None:
    """The SA counts of the groups Anatomy makes from a group of SA counts ``counts``, as a
    multiset (``anatomy_value_sets``; ``None`` when it keeps the group whole) — cached: a
    search meets the same counts from many candidate base groups."""
    from ...algorithms.anatomy import anatomy_value_sets

    key = (counts, l)
    if key not in _STRUCTURES:
        sets = anatomy_value_sets(np.asarray(counts, dtype=np.int64), l)
        if len(_STRUCTURES) > 100_000:
            _STRUCTURES.clear()
        _STRUCTURES[key] = None if sets is None else Counter(
            tuple(np.bincount(np.asarray(vs, dtype=np.int64), minlength=len(counts)).tolist()) for vs in sets)
    return _STRUCTURES[key]


def _closes_nowhere(S: _Seats, E: list[int], k: int, k2: int, model: Any, domain: Any, p: float) -> bool:
    """A sure zero of ``Z(E)``, from the groups' counts alone: the base group fails the model
    (GG/RGG close a group only where it holds), or — GG, a group a bucket follows — one of its
    proper prefixes holds in every seat world (each group's members there, and so the prefix's counts, bounded in a box:
    ``PrivacyModel.box_verdict``)."""
    cnt = S.gcounts[E]
    if not bool(np.asarray(model.holds(cnt.sum(axis=0)[None, :], domain))[0]):
        return True
    if p > 0 or k2 - k < 2 or k2 == S.nb:  # the last group: a tail may merge back into it
        return False
    P, b = int(S.bounds[k]), S.bounds
    base = Counter(S.seat_q[P:int(b[k2])].tolist())
    size = cnt.sum(axis=1)
    lo_rows, hi_rows, tot = [], [], []
    for j in range(k + 1, k2):
        inside = Counter(S.seat_q[P:int(b[j])].tolist())
        mn = np.array([sum(max(0, c - (base[q] - inside.get(q, 0))) for q, c in S.gq[g].items()) for g in E])
        mx = np.array([sum(min(c, inside.get(q, 0)) for q, c in S.gq[g].items()) for g in E])
        lo_rows.append(np.maximum(0, cnt - (size - mn)[:, None]).sum(axis=0))
        hi_rows.append(np.minimum(cnt, mx[:, None]).sum(axis=0))
        tot.append(int(b[j]) - P)
    verdict = model.box_verdict(np.array(lo_rows), np.array(hi_rows), np.array(tot), domain)
    return bool(np.any(np.asarray(verdict) == 1))


def _prefix_holds(S: _Seats, inside: list[int], rows: int, model: Any, domain: Any) -> bool:
    """Does a prefix of ``rows`` seats holding the groups ``inside`` whole (their other seats
    are members of groups reaching further, of any value) satisfy the model in every seat
    world (``PrivacyModel.box_verdict``; exactly the model when the groups fill it)?"""
    lo = S.gcounts[inside].sum(axis=0) if inside else np.zeros(S.n_sa, dtype=np.int64)
    rest = rows - int(lo.sum())
    if rest < 0:
        return False
    if rest == 0:  # these seats are these groups in every world
        return bool(np.asarray(model.holds(lo[None, :], domain))[0])
    verdict = model.box_verdict(lo[None, :], (lo + rest)[None, :], np.array([rows]), domain)
    return bool(np.asarray(verdict)[0] == 1)


def _rest_holds(S: _Seats, starts: np.ndarray, model: Any, domain: Any) -> np.ndarray:
    """Per seat in ``starts``: do the seats from it to the end satisfy the model in every seat
    world (the groups starting there or later whole, the rest of those seats of any value;
    ``PrivacyModel.box_verdict``)?"""
    i = np.searchsorted(S.lo_sorted, starts, side="left")
    lo = S.after[i]
    rest = (S.n - starts) - lo.sum(axis=1)
    verdict = model.box_verdict(lo, lo + rest[:, None], S.n - starts, domain)
    return np.asarray(verdict) == 1


def greedy_posterior(base: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                     l: int) -> tuple[np.ndarray | None, str]:
    """Each person's posterior ``(n, n_sa)`` under anatomization over GG/RGG (module
    docstring), or ``(None, why)``."""
    from math import inf

    from .greedy import _single, _sub_holds
    from .kernels import gg_run_likelihood

    S = _Seats(base, table, group, gcounts)
    if not S.ok:
        return None, "the order does not keep people with equal QIs together"
    model, domain = base.model, table.sa_domain
    p = float(base._p())
    merge = base.tail == "merge"

    def lik_for(J: int, final: bool) -> Any:
        A = _single(J)
        return lambda c: gg_run_likelihood(_sub_holds(model, domain, c, p), A, p, not final, final and merge)

    # states: (bucket k, the groups of the run cut at k — only its value — already placed)
    alpha: dict[tuple[int, frozenset], float] = {(0, frozenset()): 0.0}
    trans: list[tuple[tuple[int, frozenset], tuple[int, frozenset], float, np.ndarray]] = []
    weighed: dict[tuple, tuple[float, Any]] = {}  # (log(φ(E) · Z(E)), expected piece counts or None)
    for k in range(S.nb):
        for state in [st for st in alpha if st[0] == k]:
            a, amb = alpha[state], state[1]
            P = int(S.bounds[k])
            q0 = S.crossing(P)

            def placed(g: int) -> bool:
                if S.hi[g] <= P:
                    return True
                if q0 >= 0 and q0 in S.gq[g]:
                    sd = S.side(g, P, q0)
                    return sd == 1 or (sd == -1 and g in amb)
                return False
            lo_i = int(np.searchsorted(S.hi_sorted, P, side="right"))
            seats: Counter = Counter()  # the QI multiset of the seats from P to the candidate end
            k2, closed, stop = k, False, False
            while k2 < S.nb:
                if closed and (stop or not merge):
                    break
                # GG closed by an earlier bucket in every world: only the last group, into which
                # the tail merges back, may still reach further
                k_next = S.nb if closed else k2 + 1
                seats.update(S.seat_q[int(S.bounds[k2]):int(S.bounds[k_next])].tolist())
                S.spent += int(S.bounds[k_next] - S.bounds[k2]) + 1
                if S.spent > sw.WORK_LIMIT:
                    return None, f"more than {sw.WORK_LIMIT:,} steps to list the ways the groups form base groups"
                k2 = k_next
                P2 = int(S.bounds[k2])
                q2 = S.crossing(P2)
                hi_i = int(np.searchsorted(S.hi_sorted, P2, side="right"))
                sure = [int(g) for g in S.by_hi[lo_i:hi_i] if not placed(int(g))]
                S.spent += hi_i - lo_i  # the groups looked at (and, below, weighed by Anatomy's factor)
                if S.spent > sw.WORK_LIMIT:
                    return None, f"more than {sw.WORK_LIMIT:,} steps to list the ways the groups form base groups"
                if p == 0 and not closed and k2 < S.nb and _prefix_holds(S, sure, P2 - P, model, domain):
                    closed = True  # GG closes here or earlier in every world; and when what may
                    # follow the close holds to the end, no tail merges back
                    stop = merge and bool(_rest_holds(S, S.bounds[k + 1:k2 + 1], model, domain).all())
                free: list[int] = []
                if q2 >= 0:
                    sides = {g: S.side(g, P2, q2) for g in S.groups_of_q[q2] if not placed(g)}
                    if any(sd == -2 for sd in sides.values()):
                        continue  # a group with values on both sides: no boundary here
                    sure += [g for g, sd in sides.items() if sd == 1]
                    free = [g for g, sd in sides.items() if sd == -1]
                have: Counter = Counter()
                for g in sure:
                    have.update(S.gq[g])
                need = seats.get(q2, 0) - have.get(q2, 0) if q2 >= 0 else 0
                # a pick (groups of run q2 only, ``need`` seats of it) completes the seats iff the
                # sure groups hold every other run's seats exactly — the same for every pick
                if any(have.get(r, 0) != c for r, c in seats.items() if r != q2) or any(
                        r not in seats for r in have) or need < 0:
                    continue
                for pick in _subsets(free, [S.gq[g][q2] for g in free], need):
                    S.spent += len(sure) + len(pick) + 1
                    if S.spent > sw.WORK_LIMIT:
                        return None, f"more than {sw.WORK_LIMIT:,} steps to list the ways the groups form base groups"
                    E = sorted(sure + pick)
                    if not E:
                        continue
                    key = (tuple(E), k, k2)  # met again from other states of k: weighed once
                    res = weighed.get(key)
                    if res is None:
                        la = _anatomy_log(S.gcounts, E, l)
                        if la == -inf or _closes_nowhere(S, E, k, k2, model, domain, p):
                            weighed[key] = (-inf, None)
                            continue
                        res = (_base_group(S, E, S.bounds[k:k2 + 1], lik_for(k2 - k, True))
                               if k2 == S.nb and merge and p > 0 else
                               _chain_group(S, E, k, k2, model, domain, p, k2 == S.nb, merge))
                        if res is not None:
                            res = (res[0] + la if res[0] > -inf else -inf, res[1])
                            weighed[key] = res
                    if res is None and S.spent > sw.WORK_LIMIT:
                        return None, f"more than {sw.WORK_LIMIT:,} steps to list the ways the groups form base groups"
                    if res is None:
                        return None, (f"a base group of {P2 - P} people has more than {sw.MAX_CONFIGS:,} ways to seat "
                                      "its groups and values")
                    lz, e = res  # log(φ(E) · Z(E))
                    if lz == -inf:
                        continue
                    # the run cut at k2: its one-value groups placed so far (those of k too, if the same run)
                    amb2 = frozenset(pick) | (amb if q2 >= 0 and q2 == q0 else frozenset()) if q2 >= 0 else frozenset()
                    dst = (k2, amb2)
                    alpha[dst] = _logadd(alpha.get(dst, -inf), a + lz)
                    trans.append((state, dst, lz, e))
    end: tuple[int, frozenset] = (S.nb, frozenset())
    if end not in alpha:
        return None, "no base grouping of GG publishes these groups"
    beta: dict[tuple[int, frozenset], float] = {end: 0.0}
    for src, dst, w, _ in sorted(trans, key=lambda t: -t[0][0]):
        if dst in beta:
            beta[src] = float(np.logaddexp(beta.get(src, -inf), w + beta[dst]))
    logZ = alpha[end]
    seat = np.zeros((S.n, S.n_sa))
    for src, dst, w, e in trans:
        if dst in beta:
            _spread(S, S.bounds[src[0]:dst[0] + 1], e * float(np.exp(alpha[src] + w + beta[dst] - logZ)), seat)
    post = np.empty_like(seat)
    post[S.order] = seat
    return post, ""


def _spread(S: _Seats, cuts: Any, e: np.ndarray, seat: np.ndarray) -> None:
    """Add a base group's expected piece counts ``e`` (its seats cut at ``cuts``) to its seats
    (each seat of a piece its share; the pieces lie one after the other along the order)."""
    pos = int(cuts[0])
    for pi, (_, _, n) in enumerate(_pieces(S, cuts)):
        seat[pos:pos + n] += e[pi] / n
        pos += n


def _subsets(items: list[int], sizes: list[int], need: int) -> Any:
    """Every sub-list of ``items`` whose ``sizes`` sum to ``need`` (``need`` 0 with no items:
    the empty one)."""
    if not items:
        if need == 0:
            yield []
        return
    if need < 0:
        return

    rest = np.r_[np.cumsum(sizes[::-1])[::-1], 0].tolist()  # the sizes from i on

    def rec(i: int, left: int, chosen: list[int]) -> Any:
        if left == 0:
            yield list(chosen)
            return
        if i == len(items) or left < 0 or left > rest[i]:
            return
        chosen.append(items[i])
        yield from rec(i + 1, left - sizes[i], chosen)
        chosen.pop()
        yield from rec(i + 1, left, chosen)
    yield from rec(0, need, [])
