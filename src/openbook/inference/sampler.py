"""Sampled posteriors ``p(t:x)`` of one A-group: a Metropolis chain over the possible worlds
(paper 003 §3, eq. 1-3), for groups that neither exact DP (:mod:`.multiset_dp`,
:mod:`.row_types`) fits.

**Chain.** The state is a full assignment of the group's value copies to its tuples, of
positive weight ``p(w) = Π_j W[j, w_j]`` (eq. 1). Each sweep makes ``N`` swap proposals (two
random tuples exchange their values, accepted with probability ``min(1, W[i,a_j] W[j,a_i] /
(W[i,a_i] W[j,a_j]))``) and, for every tracked value ``x`` (one whose posterior is wanted)
held *once* in the group, one heat-bath move: draw another value ``v`` of the group; the
worlds that differ from the current one only by where ``x`` and the copies of ``v`` sit
form a class, in which ``x`` sits on tuple ``p`` with probability ``∝ W[p,x] / W[p,v]``
(``δ`` on the current holder when its weight for ``v`` is 0); ``x`` is moved there. Both
moves leave ``p(w | L)`` invariant. The start is a positive-weight assignment (greedy, most
constrained tuple first; the Hungarian method when greedy finds none). Each chain draws from
its own xorshift64* stream seeded from the caller's seed, so results do not depend on which
thread runs it.

**Estimates.** Tuples of one *row type* (identical rows of ``W``: the same A-signature) are
exchangeable, so their posteriors are equal; the estimate of a type pools its tuples. For a
value held more than once the estimate is the fraction of sweeps the type holds it. For a
value ``x`` held once it is Rao-Blackwellised: after every sweep, the class probabilities
above, averaged over the other values ``v`` — for each fixed ``v`` the classes partition the
worlds, so ``E[P(x on p | class_v)] = p(t_p : x)`` and the average is unbiased with a far
smaller variance than the indicator. ``n_chains`` independent chains of ``n_batches``
batches each give the batch means; the estimate is their mean and its standard error their
spread. The stated bound of one posterior is ``z·SE + 3/n_samples`` (the second term the
"rule of three" resolution for events not seen).

Swap moves connect all positive-weight assignments when ``W > 0``; the knowledge mined by
:mod:`.knowledge` is strictly positive for each tuple's own value but may hold zeros
elsewhere, where the chain can in principle fail to be irreducible — callers report the
method used for every group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit, prange

from .multiset_dp import check_group
from .row_types import row_types

_U64_MUL = np.uint64(2685821657736338717)


@njit(cache=True)
def _seed_state(seed):  # pragma: no cover - compiled
    """xorshift64* state from an integer seed (splitmix64 scrambled, never 0)."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    st = np.empty(1, np.uint64)
    st[0] = z if z != np.uint64(0) else np.uint64(1)
    return st


@njit(cache=True, inline="always")
def _uniform(st):  # pragma: no cover - compiled
    """Next uniform double in [0, 1) of the xorshift64* stream ``st`` (a chain-local
    generator: a chain's draws depend on its seed only, whichever thread runs it)."""
    x = st[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    st[0] = x
    return float((x * _U64_MUL) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def class_weights(W, a, x, i, v, out):  # pragma: no cover - compiled
    """Heat-bath class of value ``x`` (held once, by tuple ``i``) with value ``v`` in the
    assignment ``a``: ``out[p]`` gets the unnormalised weight of the world in which ``x``
    sits on ``p`` and the copies of ``v`` on the class's other tuples (``W[p,x] / W[p,v]``
    for ``p`` holding ``v`` or ``p = i``, 0 outside the class; only ``i`` when
    ``W[i, v] = 0``). Returns the total."""
    N = W.shape[0]
    out[:] = 0.0
    if W[i, v] <= 0.0:
        out[i] = 1.0
        return 1.0
    tot = W[i, x] / W[i, v]
    out[i] = tot
    for p in range(N):
        if a[p] == v:
            out[p] = W[p, x] / W[p, v]
            tot += out[p]
    return tot


@njit(cache=True)
def rao_blackwell(W, a, x, i, D, est):  # pragma: no cover - compiled
    """Add to ``est[p]`` the Rao-Blackwellised estimate of ``p(t_p : x)`` in the world ``a``
    (``x`` held once, by ``i``): the heat-bath class probabilities averaged over the group's
    other values (module docstring). ``D`` is scratch of length ``K``."""
    N, K = W.shape
    if K == 1:
        est[i] += 1.0
        return
    share = 1.0 / (K - 1)
    for v in range(K):
        D[v] = W[i, x] / W[i, v] if (v != x and W[i, v] > 0.0) else 0.0
    for p in range(N):
        if p != i:
            D[a[p]] += W[p, x] / W[p, a[p]]
    pi = 0.0
    for v in range(K):
        if v != x:
            pi += (W[i, x] / W[i, v]) / D[v] if W[i, v] > 0.0 else 1.0
    est[i] += pi * share
    for p in range(N):
        if p != i:
            v = a[p]
            if W[i, v] > 0.0:
                est[p] += (W[p, x] / W[p, v]) / D[v] * share


@njit(cache=True)
def chain(W, start, types, track, once, n_burn, n_batches, batch_sweeps, seed, acc):  # pragma: no cover
    """Run one chain from ``start`` (a positive-weight assignment of value indices) and add
    to ``acc[b, a, k]`` (batch ``b``, row type ``a``, tracked value ``k``) the sum over the
    type's tuples of their per-sweep estimate of holding ``k`` (module docstring); the
    caller divides by ``batch_sweeps`` and the type's size."""
    st = _seed_state(seed)
    N, K = W.shape
    a = start.copy()
    holder = np.full(K, -1, np.int64)
    for t in range(N):
        if once[a[t]]:
            holder[a[t]] = t
    D = np.empty(K)
    wts = np.empty(N)
    est = np.zeros(N)
    for s in range(n_burn + n_batches * batch_sweeps):
        for _ in range(N if N > 1 else 0):  # swap proposals: one uniform draw picks both tuples
            u = _uniform(st) * N
            i = min(int(u), N - 1)
            j = min(int((u - i) * (N - 1)), N - 2)
            if j >= i:
                j += 1
            ai = a[i]
            aj = a[j]
            if ai == aj:
                continue
            num = W[i, aj] * W[j, ai]
            den = W[i, ai] * W[j, aj]
            if num >= den or _uniform(st) * den < num:
                a[i] = aj
                a[j] = ai
                if once[ai]:
                    holder[ai] = j
                if once[aj]:
                    holder[aj] = i
        if K > 1:  # heat-bath move of each tracked value held once
            for x in range(K):
                if not (once[x] and track[x]):
                    continue
                i = holder[x]
                v = min(int(_uniform(st) * (K - 1)), K - 2)
                if v >= x:
                    v += 1
                u = _uniform(st) * class_weights(W, a, x, i, v, wts)
                cum = 0.0
                for p in range(N):
                    cum += wts[p]
                    if wts[p] > 0.0 and u < cum:
                        if p != i:
                            a[p] = x
                            a[i] = v
                            holder[x] = p
                            if once[v]:
                                holder[v] = i
                        break
        if s < n_burn:
            continue
        b = (s - n_burn) // batch_sweeps
        for t in range(N):  # indicators of tracked values held more than once
            k = a[t]
            if track[k] and not once[k]:
                acc[b, types[t], k] += 1.0
        for x in range(K):  # Rao-Blackwellised estimate of tracked values held once
            if not (track[x] and once[x]):
                continue
            est[:] = 0.0
            rao_blackwell(W, a, x, holder[x], D, est)
            for p in range(N):
                acc[b, types[p], x] += est[p]


@njit(cache=True)
def greedy_start(W, mult):  # pragma: no cover - compiled
    """A positive-weight assignment: tuples with the fewest positive entries first, each
    given the remaining value of largest weight; ``ok`` False when greedy gets stuck."""
    N, K = W.shape
    npos = np.zeros(N, np.int64)
    for j in range(N):
        for v in range(K):
            if W[j, v] > 0.0:
                npos[j] += 1
    rem = mult.copy()
    a = np.empty(N, np.int64)
    for j in np.argsort(npos, kind="mergesort"):
        best = -1
        for v in range(K):
            if rem[v] > 0 and W[j, v] > 0.0 and (best < 0 or W[j, v] > W[j, best]):
                best = v
        if best < 0:
            return a, False
        a[j] = best
        rem[best] -= 1
    return a, True


def hungarian_start(W: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """A maximum-weight assignment (Hungarian method on ``-log W``)."""
    from scipy.optimize import linear_sum_assignment

    cols = np.repeat(np.arange(W.shape[1]), mult)
    with np.errstate(divide="ignore"):
        cost = -np.log(W[:, cols])
    cost[~np.isfinite(cost)] = 1e6
    rows, c = linear_sum_assignment(cost)
    start = np.empty(W.shape[0], dtype=np.int64)
    start[rows] = cols[c]
    return start


@njit(cache=True)
def _run(W, mult, start, types, n_types, track, n_chains, n_burn, n_batches, batch_sweeps, seeds):  # pragma: no cover
    """Every chain of one group; returns per type and value the batch means
    ``(n_chains * n_batches, n_types, K)``."""
    N, K = W.shape
    once = mult == 1
    means = np.zeros((n_chains * n_batches, n_types, K))
    for c in range(n_chains):
        chain(W, start, types, track, once, n_burn, n_batches, batch_sweeps, seeds[c],
              means[c * n_batches:(c + 1) * n_batches])
    cnt = np.zeros(n_types)
    for t in range(N):
        cnt[types[t]] += 1.0
    for b in range(means.shape[0]):
        for a in range(n_types):
            for k in range(K):
                means[b, a, k] /= batch_sweeps * cnt[a]
    return means


@dataclass
class SampledPosteriors:
    """Metropolis estimate of a group's posteriors with standard errors and a bound."""

    estimate: np.ndarray  # (N, K)
    se: np.ndarray  # (N, K)
    n_samples: int
    z: float

    @property
    def bound(self) -> np.ndarray:
        """Stated error bound of each entry: ``z·SE + 3/n_samples``."""
        return self.z * self.se + 3.0 / self.n_samples


def sampled_posteriors(W: np.ndarray, mult: np.ndarray, *, seed: Any = 0, n_chains: int = 4, n_batches: int = 10,
                       batch_sweeps: int = 2000, n_burn: int = 500, z: float = 4.0,
                       track: np.ndarray | None = None) -> SampledPosteriors:
    """Metropolis estimate of ``p(t_j : v)`` for a large group (module docstring); ``track``
    (bool over the columns) limits the estimate to some values (the others read 0)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    check_group(W, mult)
    N, K = W.shape
    track = np.ones(K, dtype=bool) if track is None else np.asarray(track, dtype=bool)
    rng = np.random.default_rng(seed)
    start, ok = greedy_start(W, mult)
    if not ok:
        start = hungarian_start(W, mult)
    _, types = np.unique(W, axis=0, return_inverse=True)
    types = types.ravel().astype(np.int64)
    seeds = rng.integers(2**31 - 1, size=n_chains)
    means = _run(W, mult, start, types, int(types.max()) + 1, track, n_chains, n_burn, n_batches, batch_sweeps, seeds)
    est = means.mean(axis=0)[types]
    se = (means.std(axis=0, ddof=1) / np.sqrt(means.shape[0]))[types]
    return SampledPosteriors(est, se, n_chains * n_batches * batch_sweeps, float(z))


@njit(cache=True, parallel=True)
def sample_groups(P, idx, sa, order, starts, track_all, pair_group, pair_set, seeds, n_burn, n_batches,
                  batch_sweeps, z, offs, est_max, bound_max, est_sum, bound_sum, ok):  # pragma: no cover
    """Sample many (group, attribute set) pairs in parallel for the r-robustness audit.

    Pair ``m`` is group ``pair_group[m]`` (rows ``order[starts[g]:starts[g+1]]``) under the
    attribute set ``pair_set[m]`` of the stacked knowledge ``P, idx``; ``seeds[m]`` holds one
    seed per chain. For the group's ``j``-th row, ``est_max[offs[m] + j]`` gets the largest
    estimate over the tracked values and ``bound_max`` the largest stated bound ``estimate +
    z SE + 3 / n_samples``;
    ``est_sum`` / ``bound_sum`` the same for the sum over the tracked values (the set
    posterior). ``ok[m]`` is False when the greedy start found no positive-weight world (the
    caller retries that pair with :func:`sampled_posteriors`)."""
    K_all = P.shape[1]
    n_chains = seeds.shape[1]
    nb = n_chains * n_batches
    res = 3.0 / (nb * batch_sweeps)
    for m in prange(pair_group.size):
        g = pair_group[m]
        s = pair_set[m]
        a0 = starts[g]
        N = starts[g + 1] - a0
        local = np.full(K_all, -1, np.int64)
        vals = np.empty(N, np.int64)
        mult = np.zeros(N, np.int64)
        K = 0
        for q in range(N):
            v = sa[order[a0 + q]]
            if local[v] < 0:
                local[v] = K
                vals[K] = v
                K += 1
            mult[local[v]] += 1
        mult = mult[:K].copy()
        track = np.zeros(K, np.bool_)
        for k in range(K):
            track[k] = track_all[vals[k]]
        rows_s = np.empty(N, np.int64)
        for j in range(N):
            rows_s[j] = idx[s, order[a0 + j]]
        W = np.empty((N, K))
        for j in range(N):
            for k in range(K):
                W[j, k] = P[rows_s[j], vals[k]]
        start, good = greedy_start(W, mult)
        ok[m] = good
        if not good:
            continue
        tvals, _ = row_types(rows_s)
        types = np.empty(N, np.int64)
        for j in range(N):
            types[j] = np.searchsorted(tvals, rows_s[j])
        means = _run(W, mult, start, types, tvals.size, track, n_chains, n_burn, n_batches, batch_sweeps, seeds[m])
        for a in range(tvals.size):
            best = 0.0
            best_b = 0.0
            mu_sum = 0.0
            for k in range(K):
                if not track[k]:
                    continue
                mu = 0.0
                for b in range(nb):
                    mu += means[b, a, k]
                mu /= nb
                var = 0.0
                for b in range(nb):
                    var += (means[b, a, k] - mu) ** 2
                se = np.sqrt(var / (nb - 1) / nb) if nb > 1 else np.inf
                mu_sum += mu
                if mu > best:
                    best = mu
                if mu + z * se + res > best_b:
                    best_b = mu + z * se + res
            var = 0.0
            for b in range(nb):
                x = 0.0
                for k in range(K):
                    if track[k]:
                        x += means[b, a, k]
                var += (x - mu_sum) ** 2
            se_sum = np.sqrt(var / (nb - 1) / nb) if nb > 1 else np.inf
            for j in range(N):
                if types[j] == a:
                    est_max[offs[m] + j] = best
                    bound_max[offs[m] + j] = best_b
                    est_sum[offs[m] + j] = mu_sum
                    bound_sum[offs[m] + j] = mu_sum + z * se_sum + res
