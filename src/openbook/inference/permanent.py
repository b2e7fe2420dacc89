"""Glynn's permanent and the posteriors of a group as ratios of permanents (paper 003 §3,
eq. 1-3) — the slow, independent cross-check of the exact DPs (:mod:`.multiset_dp`,
:mod:`.row_types`).

``p(t_j : v) = m_v W[j, v] perm(M_{-j, -v}) / perm(M)`` where ``M`` is the ``N x N`` matrix
whose columns repeat ``W[:, v]`` ``m_v`` times and ``M_{-j,-v}`` drops row ``j`` and one
copy of column ``v``. Glynn's formula in Gray-code order costs ``O(2^(n-1) n)`` per
permanent.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import ParameterError
from .multiset_dp import check_group


@njit(cache=True)
def _glynn(M):  # pragma: no cover - compiled
    n = M.shape[0]
    if n == 0:
        return 1.0
    rowsum = np.zeros(n)
    for j in range(n):
        for i in range(n):
            rowsum[j] += M[i, j]
    total = 0.0
    sign = 1.0
    delta = np.ones(n)
    n_gray = 1 << (n - 1)
    prev = 0
    for k in range(n_gray):
        prod = 1.0
        for j in range(n):
            prod *= rowsum[j]
        total += sign * prod
        if k + 1 == n_gray:
            break
        gray = (k + 1) ^ ((k + 1) >> 1)
        diff = gray ^ prev
        prev = gray
        i = 0
        while (diff >> i) & 1 == 0:
            i += 1
        i += 1  # row 0 is never flipped
        delta[i] = -delta[i]
        for j in range(n):
            rowsum[j] += 2.0 * delta[i] * M[i, j]
        sign = -sign
    return total / n_gray


def permanent_glynn(M: np.ndarray) -> float:
    """Permanent of a square matrix by Glynn's formula with Gray-code updates,
    ``O(2^(n-1) n)``."""
    M = np.ascontiguousarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ParameterError(f"permanent needs a square matrix, got {M.shape}", parameter="M")
    if M.shape[0] > 30:
        raise ParameterError(f"Glynn's permanent of a {M.shape[0]}x{M.shape[0]} matrix needs 2^{M.shape[0] - 1} "
                             "terms; it is a cross-check for small groups", parameter="M")
    return float(_glynn(M))


def posteriors_by_permanents(W: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """``p(t_j : v)`` as ``m_v W[j,v] perm(minor) / perm`` with Glynn's permanent on the
    expanded ``N x N`` matrix (slow reference: ``O(N K 2^N N)``)."""
    W = np.asarray(W, dtype=np.float64)
    mult = np.asarray(mult, dtype=np.int64)
    check_group(W, mult)
    cols = np.repeat(np.arange(W.shape[1]), mult)
    M = W[:, cols]
    Z = permanent_glynn(M)
    N, K = W.shape
    out = np.zeros((N, K))
    first = np.searchsorted(cols, np.arange(K))
    for j in range(N):
        rows = np.delete(np.arange(N), j)
        for v in range(K):
            minor = np.delete(M[rows], first[v], axis=1)
            out[j, v] = mult[v] * W[j, v] * permanent_glynn(minor) / Z
    return out
