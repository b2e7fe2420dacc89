"""Sequential importance sampling of GG/RGG groups (paper 000 §4.1, §4.3, App. C.4; §5.1).

A GG/RGG group of ``B`` buckets under a model that looks at one sensitive value (binary
ℓ-diversity, the papers' setting) is a chain: a world deals the group's ``k1`` positives and
``k0`` other values to its rows uniformly, so bucket by bucket the number of positives ``y_j``
is a hypergeometric draw from what is left, and the world's weight is a product of factors
of the prefix counts ``x_j = y_0 + … + y_j``: ``p`` (RGG's voluntary merge; 0 for GG) for a
satisfying prefix before the last, 1 for a failing one, ``stop`` if the whole group holds
(else 0) at the last.

Drawing the buckets uniformly wastes almost every world of a long GG group (every prefix
must fail). Instead each bucket is drawn from the hypergeometric *tilted by its factor*,
``q(y) = hyp(y) F_j(x + y) / Z_j(x)`` with ``Z_j(x) = Σ_y hyp(y) F_j(x + y)`` — the locally
optimal proposal — and the world carries the importance weight ``Π_j Z_j(x_{j-1})``: the
uniform law times the factors, divided by the proposal. Every drawn world is consistent
unless it reaches a state no continuation can satisfy (weight 0). The posterior is the
self-normalised weighted mean with standard error ``sqrt(Σ w²(x-x̂)²)/Σ w``, as everywhere
in the replay; the tests compare it with the exact forward–backward (:mod:`.chain`).

The tilted distributions of every reachable ``(j, x)`` are tabulated once per group when the
table is no larger than the sampling itself; otherwise they are computed on the way.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _tilted(j, x, K1, k0, S, s, B, H, hbase, p, stop, lf, out):  # pragma: no cover - compiled
    """``out[0..s]``: cumulative tilted weights of ``y`` positives in bucket ``j`` (``S`` rows
    before it, ``x`` positives among them); returns ``Z`` (0: no continuation)."""
    g = K1 - x
    b = k0 - (S - x)
    for y in range(s + 1):
        out[y] = 0.0
    if g < 0 or b < 0 or s > g + b:
        return 0.0
    ylo = max(0, s - b)
    yhi = min(s, g)
    acc = 0.0
    if ylo <= yhi:
        pm = math.exp(lf[g] - lf[ylo] - lf[g - ylo] + lf[b] - lf[s - ylo] - lf[b - s + ylo]
                      - lf[g + b] + lf[s] + lf[g + b - s])
        for y in range(ylo, yhi + 1):
            if y > ylo:
                pm *= (g - y + 1.0) * (s - y + 1.0) / (y * (b - s + y + 0.0))
            ok = H[hbase + j * (K1 + 1) + x + y]
            if j < B - 1:
                f = p if ok else 1.0
            else:
                f = stop if ok else 0.0
            acc += pm * f
            out[y] = acc
    for y in range(yhi + 1, s + 1):
        out[y] = acc
    return acc


@njit(cache=True, parallel=True)
def _tabulate(k1, k0, sizes, cell_ptr, H, h_ptr, p, stop, tab_ptr, z_ptr, lf):  # pragma: no cover - compiled
    """The tilted cumulative weights (``cum``) and normalisers (``Z``) of every
    ``(bucket, positives before it)`` of the units with ``tab_ptr[u+1] > tab_ptr[u]``."""
    U = cell_ptr.size - 1
    cum = np.zeros(tab_ptr[U])
    Z = np.zeros(z_ptr[U])
    for u in prange(U):
        if tab_ptr[u + 1] == tab_ptr[u]:
            continue
        a = cell_ptr[u]
        B = cell_ptr[u + 1] - a
        K1 = k1[u]
        smax = 0
        for j in range(B):
            smax = max(smax, sizes[a + j])
        buf = np.zeros(smax + 1)
        o = tab_ptr[u]
        S = 0
        for j in range(B):
            s = sizes[a + j]
            for x in range(K1 + 1):
                Z[z_ptr[u] + j * (K1 + 1) + x] = _tilted(j, x, K1, k0[u], S, s, B, H, h_ptr[u], p[u], stop[u], lf, buf)
                for y in range(s + 1):
                    cum[o + y] = buf[y]
                o += s + 1
            S += s
    return cum, Z


@njit(cache=True, parallel=True)
def _draw(task_unit, task_seed, task_worlds, task_ptr, k1, k0, sizes, cell_ptr, H, h_ptr, p, stop, tm,
          tab_ptr, z_ptr, cum, Z, lf):  # pragma: no cover - compiled
    """Each task draws ``task_worlds[t]`` worlds of unit ``task_unit[t]`` on its own seeded
    stream; returns its sums ``Σw, Σw²`` and per bucket ``Σwx, Σw²x, Σw²x²``, all scaled by
    ``exp(-ref)`` per power of ``w``, and ``ref``."""
    n_t = task_unit.size
    T = tm.shape[2]
    sw = np.zeros(n_t)
    sw2 = np.zeros(n_t)
    refs = np.full(n_t, -1e300)
    wx = np.zeros((task_ptr[n_t], T))
    w2x = np.zeros((task_ptr[n_t], T))
    w2x2 = np.zeros((task_ptr[n_t], T))
    for t in prange(n_t):
        u = task_unit[t]
        np.random.seed(task_seed[t])
        a = cell_ptr[u]
        B = cell_ptr[u + 1] - a
        K1 = k1[u]
        tab = tab_ptr[u + 1] > tab_ptr[u]
        smax = 0
        for j in range(B):
            smax = max(smax, sizes[a + j])
        buf = np.zeros(smax + 1)
        ys = np.zeros(B, np.int64)
        o0 = task_ptr[t]
        ref = -1e300
        for _ in range(task_worlds[t]):
            x = 0
            S = 0
            o = tab_ptr[u]
            wt = 1.0
            scale = 0  # the weight is wt · 1e-200^scale (a product of many Z's underflows)
            for j in range(B):
                s = sizes[a + j]
                if tab:
                    z = Z[z_ptr[u] + j * (K1 + 1) + x]
                    c0 = o + x * (s + 1)
                else:
                    z = _tilted(j, x, K1, k0[u], S, s, B, H, h_ptr[u], p[u], stop[u], lf, buf)
                if not z > 0.0:
                    wt = 0.0
                    break
                r = np.random.random() * z
                y = 0
                if tab:
                    while y < s and cum[c0 + y] <= r:
                        y += 1
                else:
                    while y < s and buf[y] <= r:
                        y += 1
                ys[j] = y
                wt *= z
                if wt < 1e-200:
                    wt *= 1e200
                    scale += 1
                x += y
                S += s
                o += (K1 + 1) * (s + 1)
            if wt > 0.0:
                lw = math.log(wt) - scale * 460.51701859880916  # log(1e200)
                if lw > ref:
                    f = math.exp(ref - lw) if ref > -1e299 else 0.0
                    sw[t] *= f
                    sw2[t] *= f * f
                    for j in range(B):
                        for q in range(T):
                            wx[o0 + j, q] *= f
                            w2x[o0 + j, q] *= f * f
                            w2x2[o0 + j, q] *= f * f
                    ref = lw
                wt = math.exp(lw - ref)
                sw[t] += wt
                sw2[t] += wt * wt
                for j in range(B):
                    s = sizes[a + j]
                    for q in range(T):
                        v = (ys[j] * tm[u, 0, q] + (s - ys[j]) * tm[u, 1, q]) / s
                        wx[o0 + j, q] += wt * v
                        w2x[o0 + j, q] += wt * wt * v
                        w2x2[o0 + j, q] += wt * wt * v * v
        refs[t] = ref
    return sw, sw2, refs, wx, w2x, w2x2


#: sampling steps (worlds × buckets) per task: a long group is drawn on several streams
TASK_STEPS = 2_000_000


def binary_chain_sis(k1: np.ndarray, k0: np.ndarray, sizes: np.ndarray, cell_ptr: np.ndarray, H: np.ndarray,
                     h_ptr: np.ndarray, p: np.ndarray, stop: np.ndarray, tm: np.ndarray, seeds: np.ndarray,
                     n_worlds: int, table_cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sampled posteriors of a batch of GG/RGG one-group units with two classes (module
    docstring). Unit ``u`` has ``k1[u]`` / ``k0[u]`` values of each and buckets
    ``sizes[cell_ptr[u]:cell_ptr[u+1]]``; ``H[h_ptr[u] + j*(k1[u]+1) + x]``: the first
    ``j+1`` buckets holding ``x`` values of the first class satisfy the model; ``tm[u, c]``
    the target weights of each class. A unit's worlds are drawn on ``⌈worlds·B/TASK_STEPS⌉``
    streams seeded from ``seeds[u]`` (a number fixed by the data, so results do not depend on
    the threads). Returns per cell and target the self-normalised posterior, its standard
    error, and per unit the effective sample size (0: no world kept)."""
    U = cell_ptr.size - 1
    B = np.diff(cell_ptr).astype(np.int64)
    lf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, int(sizes.sum()) + 2)))])
    n_tab = np.array([(int(k1[u]) + 1) * int((sizes[cell_ptr[u]:cell_ptr[u + 1]] + 1).sum()) for u in range(U)],
                     dtype=np.int64)
    use = (n_tab <= table_cap) & (n_tab <= n_worlds * B)
    tab_ptr = np.concatenate([[0], np.cumsum(np.where(use, n_tab, 0))]).astype(np.int64)
    z_ptr = np.concatenate([[0], np.cumsum(np.where(use, B * (k1 + 1), 0))]).astype(np.int64)
    cum, Z = _tabulate(k1, k0, sizes, cell_ptr, H, h_ptr, p, stop, tab_ptr, z_ptr, lf)
    n_task = np.maximum(1, -(-(B * n_worlds) // TASK_STEPS)).astype(np.int64)
    task_unit = np.repeat(np.arange(U, dtype=np.int64), n_task)
    k = np.concatenate([np.arange(n) for n in n_task]).astype(np.int64)
    task_seed = np.where(k == 0, seeds[task_unit], (seeds[task_unit] * 1_000_003 + 7919 * k) % (2**31 - 1))
    task_worlds = (n_worlds // n_task)[task_unit] + (k < (n_worlds % n_task)[task_unit])
    # heaviest tasks first, dealt alternately to the two halves of the loop (the threads'
    # static shares); the order changes no result (each task has its own stream)
    by_work = np.argsort(-(B[task_unit] * task_worlds), kind="stable")
    perm = np.concatenate([by_work[0::2], by_work[1::2]])
    task_unit, task_seed, task_worlds = task_unit[perm], task_seed[perm], task_worlds[perm]
    n_task_of = n_task
    task_ptr = np.concatenate([[0], np.cumsum(B[task_unit])]).astype(np.int64)
    sw, sw2, refs, wx, w2x, w2x2 = _draw(task_unit, task_seed.astype(np.int64), task_worlds.astype(np.int64),
                                         task_ptr, k1, k0, sizes, cell_ptr, H, h_ptr, p, stop, tm, tab_ptr, z_ptr,
                                         cum, Z, lf)
    T = tm.shape[2]
    post = np.zeros((int(cell_ptr[U]), T))
    se = np.zeros((int(cell_ptr[U]), T))
    ess = np.zeros(U)
    tasks_of = np.split(np.argsort(task_unit, kind="stable"), np.cumsum(n_task_of)[:-1])
    for u in range(U):
        ts = tasks_of[u]
        live = ts[sw[ts] > 0]
        if live.size == 0:
            continue
        ref = refs[live].max()
        f = np.exp(refs[live] - ref)
        SW = float((sw[live] * f).sum())
        SW2 = float((sw2[live] * f * f).sum())
        WX = sum(wx[task_ptr[t]:task_ptr[t + 1]] * f[i] for i, t in enumerate(live))
        W2X = sum(w2x[task_ptr[t]:task_ptr[t + 1]] * f[i] ** 2 for i, t in enumerate(live))
        W2X2 = sum(w2x2[task_ptr[t]:task_ptr[t + 1]] * f[i] ** 2 for i, t in enumerate(live))
        m = WX / SW
        a, b = cell_ptr[u], cell_ptr[u + 1]
        post[a:b] = m
        se[a:b] = np.sqrt(np.maximum(W2X2 - 2 * m * W2X + m * m * SW2, 0.0)) / SW
        ess[u] = SW * SW / SW2
    return post, se, ess
