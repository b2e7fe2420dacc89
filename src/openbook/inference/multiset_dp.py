"""Exact posteriors ``p(t:x)`` of one A-group by a DP over multiplicity vectors (paper 003
§3, eq. 1-3).

An A-group ``L`` holds ``N`` tuples and the multiset of their SA values. A possible world
assigns the tuples to the values of the multiset (Def. 2); its weight is ``p(w) = Π_j
p_{j,w}`` (eq. 1), where ``p_{j,w} = p(s_j : value of t_j in w)`` comes from the adversary's
QI-based distribution (:mod:`.knowledge`). ``p(t_j:x)`` is the normalised weight of the
worlds giving ``x`` to ``t_j`` (eq. 2-3). With ``W[j, v] = p(s_j : v)`` over the group's
*distinct* values ``v`` (multiplicity ``m_v``) this is a ratio of permanents of the
``N x N`` matrix whose columns repeat ``W[:, v]`` ``m_v`` times (:mod:`.permanent` computes
it that way, as a slow cross-check).

The DP processes the tuples in order; a state is the vector ``c`` (``0 <= c_v <= m_v``) of
how many copies of each value the first ``|c|`` tuples used (:mod:`.states`). ``F[c]``
(forward) sums the weights of all ways the first ``|c|`` tuples take ``c``, ``B[c]``
(backward) those of the remaining tuples taking ``m - c``. Then

    Z = F[m],   p(t_j : v) = Σ_{|c| = j, c_v < m_v} F[c] · W[j, v] · B[c + e_v] / Z.

There are ``Π_v (m_v + 1)`` states (``2^N`` when all values differ, far fewer with repeated
values: a multiset assignment, never ``2^N`` over duplicate copies) and each costs ``K``:
``O(K Π (m_v+1))`` for *all* ``N x K`` posteriors at once. Worlds that differ only by
swapping two copies of a value are one world in paper 003's Table 5(b) (six worlds for
``{x, x, y, y}``); counting them separately multiplies every world by the same ``Π m_v!``,
so posteriors are the same either way. Rows of ``W`` are scaled to maximum 1 (a constant
factor on every world) against underflow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import ParameterError
from .states import advance, decode, n_states, retreat, strides


@njit(cache=True)
def multiset_posteriors(W, mult, out):  # pragma: no cover - compiled
    """Posteriors ``out[j, v] = p(t_j : v)`` of one group (see the module docstring).
    ``W`` is ``(N, K)``, ``mult`` ``(K,)`` with ``sum(mult) == N`` and ``Π (mult + 1)``
    within the caller's budget. Returns the log of the multiset sum ``Σ_w p(w)`` (before
    dividing by ``Π m_v!``), or ``-inf`` (``out`` all NaN) when every world has weight 0."""
    N, K = W.shape
    Ws = np.empty((N, K))
    log_scale = 0.0
    for j in range(N):
        mx = 0.0
        for v in range(K):
            if W[j, v] > mx:
                mx = W[j, v]
        if mx <= 0.0:
            out[:, :] = np.nan
            return -np.inf
        for v in range(K):
            Ws[j, v] = W[j, v] / mx
        log_scale += np.log(mx)
    stride, S = strides(mult)
    F = np.zeros(S)
    B = np.zeros(S)
    level = np.zeros(S, np.int64)
    digits = np.zeros(K, np.int64)
    F[0] = 1.0
    for c in range(S):  # forward: predecessors c - e_v have smaller indices
        lv = 0
        for v in range(K):
            lv += digits[v]
        level[c] = lv
        if c > 0:
            acc = 0.0
            for v in range(K):
                if digits[v] > 0:
                    acc += F[c - stride[v]] * Ws[lv - 1, v]
            F[c] = acc
        advance(digits, mult)
    Z = F[S - 1]
    if Z <= 0.0:
        out[:, :] = np.nan
        return -np.inf
    out[:, :] = 0.0
    B[S - 1] = 1.0
    decode(S - 1, stride, digits)
    for c in range(S - 1, -1, -1):  # backward, digits stepped down without division
        if c < S - 1:
            retreat(digits, mult)
        lv = level[c]
        if c < S - 1:
            acc = 0.0
            for v in range(K):
                if digits[v] < mult[v]:
                    acc += Ws[lv, v] * B[c + stride[v]]
            B[c] = acc
        if lv < N and F[c] != 0.0:
            fc = F[c]
            for v in range(K):
                if digits[v] < mult[v]:
                    out[lv, v] += fc * Ws[lv, v] * B[c + stride[v]]
    for j in range(N):
        for v in range(K):
            out[j, v] /= Z
    return np.log(Z) + log_scale


def check_group(W: np.ndarray, mult: np.ndarray) -> None:
    """Reject a probability matrix and multiplicities that do not describe one group."""
    if W.ndim != 2 or mult.ndim != 1 or W.shape[1] != mult.size:
        raise ParameterError(f"W must be (N, K) and mult (K,): got {W.shape} and {mult.shape}", parameter="W")
    if int(mult.sum()) != W.shape[0] or (mult < 1).any():
        raise ParameterError(f"multiplicities {mult.tolist()} must be >= 1 and sum to N={W.shape[0]}",
                             parameter="mult")
    if (W < 0).any() or not np.isfinite(W).all():
        raise ParameterError("W must hold finite non-negative probabilities", parameter="W")


def exact_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int | None = None) -> np.ndarray:
    """``(N, K)`` matrix of ``p(t_j : v)`` for a group with probability matrix ``W``
    (``W[j, v] = p(s_j : v)`` over the group's distinct values) and multiplicities ``mult``.
    Rows of the result sum to 1 and column ``v`` sums to ``mult[v]``. NaN rows when every
    world has probability 0."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    check_group(W, mult)
    s = n_states(mult)
    if max_states is not None and s > max_states:
        raise ParameterError(f"group needs {s} DP states, above max_states={max_states}", parameter="max_states",
                             value=max_states)
    out = np.empty_like(W)
    multiset_posteriors(W, mult, out)
    return out
