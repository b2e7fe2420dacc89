"""One base group's weight, summed over its seat worlds (paper 000 §4.1, §4.3, §5.3; the
seats, buckets and groups of :mod:`.anatomized_order`).

A base group holding the published groups ``E`` over buckets ``k..k2`` has, for each *seat
world* (which group each of its seats sits in, which value each holds), Anatomy's factor (a
function of ``E``'s counts, :func:`.anatomized_order._anatomy_log`) times the probability that
the base closes the group where it ends, a function of the buckets' SA counts. This module
sums the latter over the seat worlds and gives each (bucket, run) piece its expected SA counts:

* :func:`_chain_group` — bucket by bucket, when the base's weight is a product of factors of
  its prefixes' counts (GG/RGG's groups; GG's last group with the tail merged back into it,
  the state then also holding where the current group started), a forward–backward pass over
  what each group has used of its members of each run and of its values;
* :func:`_base_group` — seat world by seat world (RGG's last group under ``tail="merge"``,
  SG's leaves): every way the runs' seats go to the groups, then every way each group's values
  fall on its buckets, weighed by a likelihood of the buckets' counts.

Both count their work in the search's steps (``_Seats.spent``): ``None`` past
:data:`MAX_CONFIGS` count tables for one group or :data:`WORK_LIMIT` steps in all.
"""

from __future__ import annotations

import math
from itertools import product
from math import lgamma
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .anatomized_order import _Seats

#: most count tables (seat groups × value splits) enumerated for one candidate base group
MAX_CONFIGS = 200_000
#: most steps of the whole search (seats looked at, candidate ends, count tables and transitions
#: of the base groups weighed)
WORK_LIMIT = 2_000_000
#: steps a seating of a bucket costs in a base group's forward pass besides its count tables
#: (its arrays are built whatever their number: ~10 µs, as a step of the listing costs ~1 µs)
SEATING_STEPS = 10


def _lf(x: Any) -> float:
    return lgamma(float(x) + 1.0)


def _pieces(S: _Seats, cuts: Any) -> list[tuple[int, int, int]]:
    """The pieces ``(bucket j, run q, seats)`` of the seats from ``cuts[0]`` to ``cuts[-1]``,
    bucket ``j`` the seats ``cuts[j]..cuts[j+1]`` — bucket by bucket, runs in order."""
    out: list[tuple[int, int, int]] = []
    b = [int(c) for c in cuts]
    for j in range(len(b) - 1):
        qs = S.seat_q[b[j]:b[j + 1]]
        cut = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1], True])
        out.extend((j, int(qs[a]), int(cut[i + 1] - a)) for i, a in enumerate(cut[:-1].tolist()))
    return out


_SPLITS: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}


def _splits(n: int, caps: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every way ``x`` (rows) to take ``n`` values from a group with ``caps`` of each left,
    and ``log(n! / Π x_v!)`` of each (cached: the same few recur throughout a search)."""
    key = (n, caps)
    hit = _SPLITS.get(key)
    if hit is None:
        xs = np.array(list(_bounded(n, list(caps))), dtype=np.int64).reshape(-1, len(caps))
        lw = np.array([_lf(n) - sum(_lf(a) for a in r) for r in xs.tolist()], dtype=np.float64)
        if len(_SPLITS) > 100_000:
            _SPLITS.clear()
        hit = _SPLITS[key] = (xs, lw)
    return hit


def _logadd(a: float, b: float) -> float:
    """``log(e^a + e^b)``."""
    if a < b:
        a, b = b, a
    return a if b == -math.inf else a + math.log1p(math.exp(b - a))


def _bounded(n: int, caps: list[int]) -> Any:
    """Every tuple ``0 <= t_i <= caps[i]`` summing to ``n``."""
    if not caps:
        if n == 0:
            yield ()
        return
    rest = sum(caps[1:])
    for a in range(max(0, n - rest), min(n, caps[0]) + 1):
        for t in _bounded(n - a, caps[1:]):
            yield (a, *t)


def _chain_group(S: _Seats, E: list[int], k: int, k2: int, model: Any, domain: Any,
                 p: float, final: bool = False, merge: bool = False) -> tuple[float, np.ndarray] | None:
    """``(log Z(E), expected counts per piece)`` of a base group, bucket by bucket: GG/RGG's
    weight is then a product of factors of the prefixes' counts (``p`` or 1 as a proper prefix
    holds or not, ``(1 - p)·[holds]`` at the last when a bucket follows, ``[holds]`` when the
    group ends the table: :func:`.greedy._one_group`), so a forward–backward pass over what each
    group has used so far — its members of each run and its values — weighs every seat world.
    The group ending the table under ``tail="merge"`` (GG only: ``final`` and ``merge``, ``p``
    0) is the last closed group and what merged back into it: its first group closes at its
    first holding prefix; if that is not the last bucket, groups follow, each closing at its
    first holding prefix and each starting where the rest of the base group fails (else it
    would have held as its own group and ended the table — :func:`.kernels.gg_run_likelihood`),
    the last of them a tail no prefix of which holds — so the state also carries the counts
    where the current group started (``None`` for the first). ``None`` past
    :data:`MAX_CONFIGS` transitions."""
    from math import inf

    tail = final and merge
    if tail and p > 0:
        raise ValueError("the merged tail is weighed bucket by bucket for GG only")
    J, V, G = k2 - k, S.n_sa, len(E)
    pieces = _pieces(S, S.bounds[k:k2 + 1])
    keys = [(gi, q) for gi, g in enumerate(E) for q in sorted(S.gq[g])]
    kpos = {kq: i for i, kq in enumerate(keys)}
    capq = [S.gq[E[gi]][q] for gi, q in keys]
    vals = S.gcounts[E]
    whole = vals.sum(axis=0)
    start = (tuple([0] * len(keys)), tuple([0] * (G * V)), None)
    alphas: list[dict] = [{start: 0.0}]
    steps: list[list[tuple[Any, Any, float, np.ndarray]]] = []
    work = 0
    for j in range(J):
        mine = [pi for pi, pc in enumerate(pieces) if pc[0] == j]
        # batches of candidates: (source state, their end states, log weights, expected piece
        # counts (W, pieces here, V), bucket totals so far (W, V), the current group's prefix (W, V))
        cand: list[tuple[Any, list, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for st, _ in alphas[-1].items():
            usedq, usedv, seg = st
            uv = np.asarray(usedv, dtype=np.int64).reshape(G, V)
            left = [tuple(r) for r in (vals - uv).tolist()]  # each group's values not yet used
            per_piece = []
            for r, pi in enumerate(mine):
                _, q, n = pieces[pi]
                gis = [gi for gi in range(G) if (gi, q) in kpos]
                ks = [kpos[(gi, q)] for gi in gis]
                caps = [capq[k_] - usedq[k_] for k_ in ks]
                per_piece.append([(r, gis, ks, t, _lf(n) - sum(_lf(a) for a in t)) for t in _bounded(n, caps)])
            for seat in product(*per_piece):
                nq = list(usedq)
                y = [[0] * G for _ in mine]
                yb = [0] * G
                lw = 0.0
                for r, gis, ks, t, lt in seat:
                    lw += lt
                    for gi, k_, a in zip(gis, ks, t):
                        y[r][gi] = a
                        yb[gi] += a
                        nq[k_] += a
                # each group's ways to take its values here, and their log weights
                opts = [_splits(yb[gi], left[gi]) for gi in range(G)]
                n_tot = 1
                for o in opts:
                    n_tot *= o[0].shape[0]
                room = min(MAX_CONFIGS - work, WORK_LIMIT - S.spent - SEATING_STEPS)
                if n_tot > room:  # the budgets, counted candidate by candidate
                    S.spent += max(room, 0) + SEATING_STEPS + 1
                    return None
                work += n_tot
                S.spent += n_tot + SEATING_STEPS
                if n_tot == 0:
                    continue
                # every combination of the groups' ways (most groups have one: taken as it is)
                x1 = np.zeros((G, V), dtype=np.int64)
                multi = []
                for gi, (ox, ol) in enumerate(opts):
                    if ox.shape[0] == 1:
                        x1[gi] = ox[0]
                        lw += float(ol[0])
                    else:
                        multi.append(gi)
                x = np.repeat(x1[None], n_tot, axis=0)  # (W, G, V)
                lx = np.full(n_tot, lw)
                if multi:
                    grid = np.indices([opts[gi][0].shape[0] for gi in multi]).reshape(len(multi), -1)
                    for m_, gi in enumerate(multi):
                        x[:, gi] = opts[gi][0][grid[m_]]
                        lx += opts[gi][1][grid[m_]]
                nv = uv[None] + x
                ya, yba = np.array(y, dtype=np.float64).reshape(len(mine), G), np.array(yb, dtype=np.float64)
                share = np.divide(ya, yba, out=np.zeros(ya.shape), where=yba > 0)
                dst = [(tuple(nq), tuple(r), seg) for r in nv.reshape(nv.shape[0], -1).tolist()]
                cum = nv.sum(axis=1)  # the bucket totals so far (W, V)
                cand.append((st, dst, lx, np.einsum("rg,wgv->wrv", share, x), cum,
                             cum if seg is None else cum - np.asarray(seg, dtype=np.int64)[None, :]))
        if not cand:
            return float("-inf"), np.zeros((len(pieces), V))
        h: np.ndarray = np.asarray(model.holds(np.concatenate([c[5] for c in cand]), domain)).astype(bool)  # the prefix
        restart = np.zeros(h.size, dtype=bool)  # the merged tail: a closed group, the next starts after it
        if not tail:
            f = np.where(h, p, 1.0) if j < J - 1 else (np.where(h, 1.0 - p, 0.0) if not final else np.where(h, 1.0, 0.0))
        elif j < J - 1:  # a group closes at its first holding prefix; the next starts where the rest fails
            cum_all = np.concatenate([c[4] for c in cand])
            rest = np.zeros(h.shape, dtype=bool)
            if h.any():
                rest[h] = np.asarray(model.holds(whole[None, :] - cum_all[h], domain), dtype=bool)
            f = np.where(h & rest, 0.0, 1.0)
            restart = h & np.logical_not(rest)
        else:  # the end: the first group closes here, or a later group never held (the tail)
            first = np.concatenate([np.full(c[2].size, c[0][2] is None) for c in cand])
            f = np.where(np.where(first, h, np.logical_not(h)), 1.0, 0.0)
        with np.errstate(divide="ignore"):
            logf = np.log(f)
        nxt: dict = {}
        step = []
        at = 0
        for src, dsts, lx, e, cum_c, _ in cand:
            a0 = alphas[-1][src]
            for i, (d, w) in enumerate(zip(dsts, (lx + logf[at:at + lx.size]).tolist())):
                if w == -inf:
                    continue
                if restart[at + i]:
                    d = (d[0], d[1], tuple(cum_c[i].tolist()))
                nxt[d] = _logadd(nxt.get(d, -inf), a0 + w)
                step.append((src, d, w, e[i]))
            at += lx.size
        if not nxt:
            return float("-inf"), np.zeros((len(pieces), V))
        alphas.append(nxt)
        steps.append(step)
    # every group has used all its members and values (the merged tail: any last group start)
    logZ = -inf
    for lz in alphas[-1].values():
        logZ = _logadd(logZ, lz)
    beta: dict = {end: 0.0 for end in alphas[-1]}
    out = np.zeros((len(pieces), V))
    for j in range(J - 1, -1, -1):
        mine = [pi for pi, pc in enumerate(pieces) if pc[0] == j]
        prev: dict = {}
        for src, dst, w, e in steps[j]:
            if dst not in beta:
                continue
            prev[src] = float(np.logaddexp(prev.get(src, -inf), w + beta[dst]))
            out[mine] += e * float(np.exp(alphas[j][src] + w + beta[dst] - logZ))
        beta = prev
    return logZ, out


def _base_group(S: _Seats, E: list[int], cuts: Any, lik: Any) -> tuple[float, np.ndarray] | None:
    """``(log Z(E), expected SA counts per (bucket, run) piece)`` of the base group of the
    seats ``cuts[0]..cuts[-1]`` holding the groups ``E`` (module docstring), its buckets cut at
    ``cuts``: ``Z(E)`` sums ``lik`` of the buckets' counts ``(W, J, V)`` over its seat worlds —
    ``(-inf, ·)`` when none has weight; ``None`` past :data:`MAX_CONFIGS`."""
    from .engine import leaf_tables

    J, V = len(cuts) - 1, S.n_sa
    pieces = _pieces(S, cuts)
    gpos = {g: i for i, g in enumerate(E)}
    # per run: its pieces' seats over the groups holding it
    per_run: list[tuple[list[int], list[int], np.ndarray, np.ndarray]] = []
    runs: dict[int, list[int]] = {}
    for pi, (_, q, _) in enumerate(pieces):
        runs.setdefault(q, []).append(pi)
    total = 1
    for q, pis in runs.items():
        gs = [g for g in E if q in S.gq[g]]
        rows = np.array([pieces[i][2] for i in pis], dtype=np.int64)
        cols = np.array([S.gq[g][q] for g in gs], dtype=np.int64)
        t = leaf_tables(rows, cols, MAX_CONFIGS)
        if t is None:
            return None
        total *= t.shape[0]
        if total > MAX_CONFIGS:
            return None
        logw = (sum(_lf(x) for x in rows.tolist()) - np.array([sum(_lf(x) for x in tab.ravel().tolist()) for tab in t]))
        per_run.append((pis, [gpos[g] for g in gs], t, logw))
    G = len(E)
    work = 0  # count tables enumerated so far
    acc_w = 0.0
    acc_e = np.zeros((len(pieces), V))
    ref = None
    for combo in product(*[range(pr[2].shape[0]) for pr in per_run]):
        y = np.zeros((len(pieces), G), dtype=np.int64)  # seats of each piece in each group
        lw = 0.0
        for (pis, cols_g, t, logw), c in zip(per_run, combo):
            y[np.ix_(pis, cols_g)] = t[c]
            lw += float(logw[c])
        piece_bucket = np.array([p[0] for p in pieces], dtype=np.int64)
        yb = np.zeros((J, G), dtype=np.int64)  # seats of each group in each bucket
        np.add.at(yb, piece_bucket, y)
        splits = []
        here = 1  # this seating's value splits
        for gi, g in enumerate(E):
            t = leaf_tables(yb[:, gi], S.gcounts[g], MAX_CONFIGS)
            if t is None:
                return None
            w = sum(_lf(x) for x in yb[:, gi].tolist()) - np.array([sum(_lf(x) for x in tab.ravel().tolist()) for tab in t])
            splits.append((t, w))
            here *= t.shape[0]
        work += here
        S.spent += here
        if work > MAX_CONFIGS or S.spent > WORK_LIMIT:
            return None
        # every combination of the groups' value splits, at once
        idx = np.stack(np.meshgrid(*[np.arange(t.shape[0]) for t, _ in splits], indexing="ij"), -1).reshape(-1, G)
        x = np.stack([splits[gi][0][idx[:, gi]] for gi in range(G)], axis=1)  # (W, G, J, V)
        logx = np.sum([splits[gi][1][idx[:, gi]] for gi in range(G)], axis=0) + lw
        c = x.sum(axis=1)  # (W, J, V): each bucket's counts
        f = lik(c)
        live = f > 0
        if not live.any():
            continue
        top = float(logx[live].max())
        if ref is None or top > ref:  # keep the sums in floating range
            if ref is not None:
                acc_w *= float(np.exp(ref - top))
                acc_e *= float(np.exp(ref - top))
            ref = top
        w = np.exp(logx[live] - ref) * f[live]
        # expected counts per piece: seats of the piece in group g × g's values in its bucket / g's seats there
        share = np.divide(y, yb[piece_bucket], out=np.zeros(y.shape), where=yb[piece_bucket] > 0)  # (pieces, G)
        xl = x[live][:, :, piece_bucket, :]  # (W', G, pieces, V)
        acc_e += np.einsum("w,pg,wgpv->pv", w, share, xl)
        acc_w += float(w.sum())
    if ref is None or acc_w <= 0:
        return float("-inf"), np.zeros((len(pieces), V))
    return ref + float(np.log(acc_w)), acc_e / acc_w
