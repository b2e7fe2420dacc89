"""Exact posteriors ``p(t:x)`` of one A-group by a DP over *row types* (paper 003 §3,
eq. 1-3).

Tuples with the same A-signature have identical probability rows ``p(s_A : ·)``; call each
distinct row a *type* ``a`` with ``n_a`` tuples. Assign the group's value copies one at a
time in a fixed column order ``colseq``; a state is the vector ``k`` of tuples used per
type (``0 <= k_a <= n_a``, :mod:`.states`), ``Π (n_a + 1)`` states — few when the group's
tuples share few signatures, whatever the number of distinct values (the DP over
multiplicity vectors, :mod:`.multiset_dp`, is the other way round). The forward weight
``F[k]`` and the backward weight ``B[k]`` carry, per level, the factor ``(free tuples of a)
/ (free tuples)`` and the column's weights scaled to maximum 1 (constant per level: cancels
in the ratio), so they stay in ``[0, 1]``. With ``s_v`` the scale of column ``v``,

    B[k] = Σ_a (n_a - k_a) / (N - |k|) · s_c W[a, c] · B[k + e_a]   (c = colseq[|k|]),
    Z = B[0] = F[n],
    p(t : v) = Σ_{k : colseq[|k|] = v} F[k] (n_a - k_a) / (N - |k|) · s_v W[a, v] · B[k + e_a] / (Z n_a)

for a tuple ``t`` of type ``a``.

When only the first column's value matters (a sensitive value of the group, put first in
``colseq``), the backward pass alone gives it: ``p(t : v) = m_v s_v W[a, v] B[e_a] / (N Z)``
— the copies of a value are exchangeable, so the chance that ``t``
takes *some* copy is ``m_v`` times the chance it takes the first one. ``art-exact``'s group
check and the r-robustness audit both use that half-cost form.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import ParameterError
from .multiset_dp import check_group
from .states import advance, decode, n_states, retreat, strides


@njit(cache=True)
def row_types(rows):  # pragma: no cover - compiled
    """Distinct row ids (e.g. rows of a stacked knowledge matrix) and how many tuples share
    each: ``types`` sorted, ``cnt[i]`` the tuples of ``types[i]``."""
    types = np.unique(rows)
    cnt = np.zeros(types.size, np.int64)
    for j in range(rows.size):
        cnt[np.searchsorted(types, rows[j])] += 1
    return types, cnt


@njit(cache=True)
def colseq_first(mult, first):  # pragma: no cover - compiled
    """Column order of the value copies: ``mult[first]`` copies of value ``first``, then
    every other value's copies in index order (``first = -1``: index order only)."""
    N = 0
    for v in range(mult.size):
        N += mult[v]
    seq = np.empty(N, np.int64)
    q = 0
    if first >= 0:
        for _ in range(mult[first]):
            seq[q] = first
            q += 1
    for v in range(mult.size):
        if v != first:
            for _ in range(mult[v]):
                seq[q] = v
                q += 1
    return seq


@njit(cache=True)
def row_type_kernel(W, cnt, colseq, first_only, out):  # pragma: no cover - compiled
    """Posteriors by the row-type DP (module docstring): ``W`` is ``(T, K)`` over types and
    the group's distinct values, ``cnt`` the tuples per type, ``colseq`` the value copies in
    assignment order (value ``v`` appears ``m_v`` times). ``out[a, v]`` gets ``p(t : v)`` for
    each tuple ``t`` of type ``a`` — every column, or with ``first_only`` only column
    ``colseq[0]`` (the others left 0) by the backward pass alone. Returns False (``out``
    NaN) when every world has weight 0 or the weights underflow."""
    T, K = W.shape
    N = colseq.size
    scale = np.ones(K)
    for v in range(K):
        mx = 0.0
        for a in range(T):
            if W[a, v] > mx:
                mx = W[a, v]
        if mx > 0.0:
            scale[v] = 1.0 / mx
    stride, S = strides(cnt)
    digits = np.zeros(T, np.int64)
    out[:, :] = 0.0
    F = np.zeros(1 if first_only else S)
    F[0] = 1.0
    if not first_only:
        for c in range(S):  # forward
            lv = 0
            for a in range(T):
                lv += digits[a]
            if c > 0:
                col = colseq[lv - 1]
                acc = 0.0
                for a in range(T):
                    if digits[a] > 0:
                        acc += F[c - stride[a]] * (cnt[a] - digits[a] + 1) * W[a, col]
                F[c] = acc * scale[col] / (N - lv + 1)
            advance(digits, cnt)
    B = np.zeros(S)
    B[S - 1] = 1.0
    lv = decode(S - 1, stride, digits)
    for c in range(S - 2, -1, -1):  # backward, digits stepped down without division
        lv += retreat(digits, cnt)
        col = colseq[lv]
        f = scale[col] / (N - lv)
        fc = F[c] if (not first_only or c == 0) else 0.0
        acc = 0.0
        for a in range(T):
            free = cnt[a] - digits[a]
            if free > 0:
                term = free * W[a, col] * f * B[c + stride[a]]
                acc += term
                if fc != 0.0:
                    out[a, col] += fc * term
        B[c] = acc
    Z = B[0] if S > 1 else 1.0
    if not (Z > 0.0) or not np.isfinite(Z):
        out[:, :] = np.nan
        return False
    if S == 1:  # an empty group
        return True
    first = colseq[0]
    m_first = 0
    for q in range(N):
        if colseq[q] == first:
            m_first += 1
    for a in range(T):
        for v in range(K):
            if first_only and v == first:
                out[a, v] *= m_first / (Z * cnt[a])
            else:
                out[a, v] /= Z * cnt[a]
    return True


def row_type_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int | None = None,
                        only: int | None = None) -> np.ndarray:
    """``(N, K)`` posteriors like :func:`.multiset_dp.exact_posteriors`, by the DP over row
    types (identical rows of ``W`` are one type): ``Π (n_a + 1)`` states for ``n_a`` tuples
    per distinct row. Exact; cheaper than the value DP when the tuples share few distinct
    rows. ``only=v``: column ``v`` alone (the others 0), by the backward pass only."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    check_group(W, mult)
    types, inv = np.unique(W, axis=0, return_inverse=True)
    cnt = np.bincount(inv.ravel()).astype(np.int64)
    s = n_states(cnt)
    if max_states is not None and s > max_states:
        raise ParameterError(f"group needs {s} row-type DP states, above max_states={max_states}",
                             parameter="max_states", value=max_states)
    if only is not None and not 0 <= only < mult.size:
        raise ParameterError(f"only={only} is not a column of W", parameter="only", value=only)
    out = np.empty((types.shape[0], W.shape[1]))
    seq = colseq_first(mult, -1 if only is None else int(only))
    row_type_kernel(np.ascontiguousarray(types), cnt, seq, only is not None, out)
    return out[inv.ravel()]
