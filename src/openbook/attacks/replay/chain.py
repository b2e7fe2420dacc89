"""GG/RGG groups replayed exactly as a Markov chain (paper 000 §4.1, §4.3, App. C.4; §5.1).

A GG/RGG group of ``B`` buckets is published iff every prefix before the last fails (GG) —
or, RGG, each satisfying prefix is extended with probability ``p`` — and the whole group
holds (then stops with probability ``1 - p`` when a bucket follows). Its weight is a
product of per-prefix factors of the prefix's SA counts, so the posterior per bucket is a
forward–backward pass over the prefix count vectors (the states of a layer are the count
vectors with that prefix size): exact, with no sampling, while the layers stay small.
"""

from __future__ import annotations

import math

import numpy as np

from .engine import Unit, expand, holds, leaf_tables, lgamma_table
from .kernels import feasible_pairs

#: largest total transition work (states × increments × values) of an exact chain (~1 s)
_CHAIN_WORK = 3e7


def chain_weight(unit: Unit, counts: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    """The chain's weight of each world (``counts`` ``(W, B, V)``: SA class counts per bucket)."""
    out = np.ones(counts.shape[0])
    if unit.chain_params is not None:
        # buckets in blocks, one model call per block for the worlds still alive (a world
        # whose weight is 0 — GG: an earlier prefix holds — is not looked at again)
        model, domain, p, stop = unit.chain_params
        W, B, V = counts.shape
        alive = np.arange(W)
        run = np.zeros((W, V), dtype=np.int64)
        a = 0
        while a < B and alive.size:
            blk = int(min(B - a, max(1, 200_000 // alive.size)))
            pref = run[alive][:, None, :] + np.cumsum(counts[alive, a:a + blk], axis=1, dtype=np.int64)
            h = holds(model, domain, expand(pref.reshape(-1, V), rep, n_sa)).reshape(alive.size, blk)
            f = np.where(h, p, 1.0)
            if a + blk == B:
                f[:, -1] = h[:, -1] * float(stop)
            out[alive] *= f.prod(axis=1)
            run[alive] = pref[:, -1]
            alive = alive[out[alive] > 0]
            a += blk
        return out
    assert unit.chain is not None  # a chain unit: its factor, or its parameters
    pref = np.cumsum(counts, axis=1)
    for j in range(counts.shape[1]):
        out *= unit.chain(j, expand(pref[:, j], rep, n_sa))
    return out


def _prefix_states(total: int, prefix: int, K: np.ndarray, limit: int) -> np.ndarray | None:
    """All count vectors ``0 <= c <= K`` with ``sum(c) == prefix``."""
    t = leaf_tables(np.array([prefix, total - prefix]), K, limit)
    return None if t is None else t[:, 0, :].astype(np.int64)


def _unique_keys(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``0 .. n_keys - 1`` — by marking
    a dense array when it is not much larger than ``keys`` (no sort; the same answer)."""
    if n_keys > max(1 << 16, 4 * keys.size):
        return np.unique(keys, return_inverse=True)
    seen = np.zeros(n_keys, dtype=bool)
    seen[keys] = True
    uniq = np.flatnonzero(seen)
    pos = np.zeros(n_keys, dtype=np.int64)
    pos[uniq] = np.arange(uniq.size)
    return uniq, pos[keys]


def _first(inv: np.ndarray, n: int) -> np.ndarray:
    """Index of the first occurrence of each of ``n`` codes in ``inv``."""
    out = np.full(n, inv.size, dtype=np.int64)
    np.minimum.at(out, inv.ravel(), np.arange(inv.size))
    return out


def _factors(unit: Unit, layers: list[np.ndarray], rep: np.ndarray, n_sa: int) -> list[np.ndarray]:
    """The chain's factor at every state of every layer (``layers[j]``: prefix ``j``): with
    the chain's parameters known (model, p, stop) one model call for all layers."""
    if unit.chain_params is None:
        chain = unit.chain
        assert chain is not None  # a chain unit: its factor, or its parameters
        return [np.asarray(chain(j, expand(S, rep, n_sa)), dtype=np.float64) for j, S in enumerate(layers)]
    model, domain, p, stop = unit.chain_params
    H = holds(model, domain, expand(np.concatenate(layers), rep, n_sa))
    out = []
    a = 0
    for j, S in enumerate(layers):
        h = H[a:a + S.shape[0]]
        a += S.shape[0]
        out.append(np.where(h, p, 1.0) if j < len(layers) - 1 else h * float(stop))
    return out


def chain_dp(unit: Unit, K: np.ndarray, sizes: np.ndarray, rep: np.ndarray, n_sa: int,
             limit: int) -> tuple[np.ndarray, float, float, bool] | None:
    """Exact posterior per bucket of a GG/RGG group by forward-backward over the prefix
    count vectors (the likelihood is a product of per-prefix factors); ``None`` when a
    layer has more than ``limit`` states."""
    K = np.asarray(K, dtype=np.int64)
    B = sizes.size
    total = int(K.sum())
    # number of prefix count vectors with each sum (coefficients of prod_v (1 + x + … + x^K_v)):
    # give up before building anything when a layer or a transition would be too large
    poly = np.ones(1)
    for k in K:
        poly = np.convolve(poly, np.ones(int(k) + 1))
    pref = np.cumsum(sizes)
    if poly[pref].max(initial=0.0) > limit:
        return None
    work = poly[np.concatenate([[0], pref[:-1]])] * poly[sizes] * K.size
    if np.any(work > 2e7) or work.sum() > _CHAIN_WORK:  # memory of one transition; total time
        return None
    # mixed-radix keys of the count vectors: Π (K_v + 1) must fit an int64 (Python ints)
    if math.prod(int(k) + 1 for k in K.tolist()) >= 2**62:
        return None
    radix = np.concatenate([[1], np.cumprod(K[:-1] + 1)]).astype(np.int64)
    n_keys = math.prod(int(k) + 1 for k in K.tolist())
    # layer j+1 = every count vector reachable from layer j by one bucket (all of them:
    # each vector with the prefix's sum below K splits into an earlier prefix and a bucket)
    layers = [np.zeros((1, K.size), dtype=np.int64)]
    lg = lgamma_table(int(max(sizes.max(), 1)) + 1)
    trans = []  # per bucket: (from idx, to idx, log w, d)
    buckets: dict[int, np.ndarray | None] = {}
    for j in range(B):
        S0 = layers[j]
        s = int(sizes[j])
        if s not in buckets:
            buckets[s] = _prefix_states(total, s, K, limit)
        D = buckets[s]
        if D is None or S0.shape[0] * D.shape[0] * K.size > 2e7:  # memory of one transition
            return None
        if s == 1:  # one row: one more of a value below its count (no states × D × V array)
            row_of = np.full(K.size, -1, dtype=np.int64)
            row_of[D.argmax(axis=1)] = np.arange(D.shape[0])  # D's rows: the unit vectors
            i0, v = np.nonzero(S0 < K)
            di = row_of[v]
            keys, i1 = _unique_keys((S0 @ radix)[i0] + radix[v], n_keys)
            first = _first(i1, keys.size)
            S1 = S0[i0[first]].copy()
            S1[np.arange(first.size), v[first]] += 1
        else:  # the keys are linear in the counts: a sum's key is the sum of the keys
            i0, di = feasible_pairs(S0, D, K)
            keys, i1 = _unique_keys((S0 @ radix)[i0] + (D @ radix)[di], n_keys)
            first = _first(i1, keys.size)
            S1 = S0[i0[first]] + D[di[first]]  # sorted by key, as the states of a layer
        if S1.shape[0] > limit:
            return None
        layers.append(S1)
        logw = (-lg[D].sum(axis=1))[di]  # per transition: 1 / Π_v d_v! (the multinomial's share)
        trans.append((i0, i1.ravel(), np.exp(logw - logw.max()) if logw.size else logw, di, D))
    fac = _factors(unit, layers[1:], rep, n_sa)
    # forward
    alpha = [np.ones(1)]
    for j in range(B):
        i0, i1, w, _, _ = trans[j]
        a = np.bincount(i1, weights=alpha[j][i0] * w, minlength=layers[j + 1].shape[0]) * fac[j]
        m = a.max(initial=0.0)
        if not m > 0:
            return np.full((unit.n_cells, K.size), np.nan), float(sum(L.shape[0] for L in layers)), 0.0, False
        alpha.append(a / m)
    beta: list[np.ndarray] = [np.ones(0)] * (B + 1)  # each filled below
    beta[B] = np.ones(layers[B].shape[0])
    for j in range(B - 1, -1, -1):
        i0, i1, w, _, _ = trans[j]
        b = np.bincount(i0, weights=w * fac[j][i1] * beta[j + 1][i1], minlength=layers[j].shape[0])
        m = b.max(initial=0.0)
        beta[j] = b / m if m > 0 else b
    post_cls = np.zeros((B, K.size))
    for j in range(B):
        i0, i1, w, di, D = trans[j]
        q = alpha[j][i0] * w * fac[j][i1] * beta[j + 1][i1]
        post_cls[j] = (np.bincount(di, weights=q, minlength=D.shape[0]) @ D) / q.sum() / sizes[j]
    n_states = float(sum(L.shape[0] for L in layers))
    return post_cls, n_states, 1.0, True
