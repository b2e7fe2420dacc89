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

from .engine import Unit, expand, leaf_tables, lgamma_table

#: largest total transition work (states × increments × values) of an exact chain (~1 s)
_CHAIN_WORK = 3e7


def chain_weight(unit: Unit, counts: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    pref = np.cumsum(counts, axis=1)
    out = np.ones(counts.shape[0])
    for j in range(counts.shape[1]):
        out *= unit.chain(j, expand(pref[:, j], rep, n_sa))
    return out


def _prefix_states(total: int, prefix: int, K: np.ndarray, limit: int) -> np.ndarray | None:
    """All count vectors ``0 <= c <= K`` with ``sum(c) == prefix``."""
    t = leaf_tables(np.array([prefix, total - prefix]), K, limit)
    return None if t is None else t[:, 0, :].astype(np.int64)


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
    layers = [np.zeros((1, K.size), dtype=np.int64)]
    P = 0
    for j in range(B):
        P += int(sizes[j])
        st = _prefix_states(total, P, K, limit)
        if st is None:
            return None
        st = st[np.argsort(st @ radix)]
        layers.append(st)
    lg = lgamma_table(int(max(sizes.max(), 1)) + 1)
    trans = []  # per bucket: (from idx, to idx, log w, d)
    fac = []
    for j in range(B):
        S0, S1 = layers[j], layers[j + 1]
        D = _prefix_states(total, int(sizes[j]), K, limit)
        if D is None or S0.shape[0] * D.shape[0] * K.size > 2e7:  # memory of one transition
            return None
        to = S0[:, None, :] + D[None, :, :]
        ok = np.all(to <= K, axis=2)
        i0, di = np.nonzero(ok)
        keys = to[i0, di] @ radix
        k1 = S1 @ radix
        i1 = np.searchsorted(k1, keys)
        logw = -lg[D].sum(axis=1)[di]
        trans.append((i0, i1, logw, D[di]))
        fac.append(np.asarray(unit.chain(j, expand(S1, rep, n_sa)), dtype=np.float64))
    # forward
    alpha = [np.ones(1)]
    for j in range(B):
        i0, i1, logw, _ = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        a = np.bincount(i1, weights=alpha[j][i0] * w, minlength=layers[j + 1].shape[0]) * fac[j]
        m = a.max(initial=0.0)
        if not m > 0:
            return np.full((unit.n_cells, K.size), np.nan), float(sum(L.shape[0] for L in layers)), 0.0, False
        alpha.append(a / m)
    beta = [None] * (B + 1)
    beta[B] = np.ones(layers[B].shape[0])
    for j in range(B - 1, -1, -1):
        i0, i1, logw, _ = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        b = np.bincount(i0, weights=w * fac[j][i1] * beta[j + 1][i1], minlength=layers[j].shape[0])
        m = b.max(initial=0.0)
        beta[j] = b / m if m > 0 else b
    post_cls = np.zeros((B, K.size))
    for j in range(B):
        i0, i1, logw, d = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        q = alpha[j][i0] * w * fac[j][i1] * beta[j + 1][i1]
        post_cls[j] = (q[:, None] * d).sum(axis=0) / q.sum() / sizes[j]
    n_states = float(sum(L.shape[0] for L in layers))
    return post_cls, n_states, 1.0, True
