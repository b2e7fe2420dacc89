"""Exact and sampled posteriors ``p(t:x)`` of one A-group under a QI-based distribution
(paper 003 §3, eq. 1-3).

An A-group ``L`` holds ``N`` tuples and the multiset of their SA values. A possible world
assigns the tuples to the values of the multiset (Def. 2); its weight is ``p(w) = Π_j
p_{j,w}`` (eq. 1), where ``p_{j,w} = p(s_j : value of t_j in w)`` comes from the adversary's
QI-based distribution. ``p(t_j:x)`` is the normalised weight of the worlds giving ``x`` to
``t_j`` (eq. 2-3). With ``W[j, v] = p(s_j : v)`` over the group's *distinct* values ``v``
(multiplicity ``m_v``) this is a ratio of permanents of the ``N x N`` matrix whose columns
repeat ``W[:, v]`` ``m_v`` times.

Exact method — **DP over multiplicity vectors.** Process the tuples in order; a state is
the vector ``c`` (``0 <= c_v <= m_v``) of how many copies of each value the first ``|c|``
tuples used. ``F[c]`` (forward) sums the weights of all ways the first ``|c|`` tuples take
``c``, ``B[c]`` (backward) those of the remaining tuples taking ``m - c``. Then

    Z = F[m],   p(t_j : v) = Σ_{|c| = j, c_v < m_v} F[c] · W[j, v] · B[c + e_v] / Z.

There are ``Π_v (m_v + 1)`` states (``2^N`` when all values differ, far fewer with repeated
values: a multiset assignment, never ``2^N`` over duplicate copies) and each costs ``K``
(number of distinct values): ``O(K Π (m_v+1))`` for *all* ``N x K`` posteriors at once,
versus ``O(2^N N)`` per permanent for Ryser/Glynn (one permanent per minor). Worlds that
differ only by swapping two copies of a value are one world in paper 003's Table 5(b) (six
worlds for ``{x, x, y, y}``); counting them separately multiplies every world by the same
``Π m_v!``, so posteriors are the same either way. Rows of ``W`` are scaled to maximum 1
(a constant factor on every world) against underflow.

:func:`permanent_glynn` (Glynn's formula in Gray-code order, numba) is kept as an
independent exact cross-check.

Approximate method — **Metropolis over assignments** (for groups whose state count exceeds
a budget): the state is a full assignment, a move swaps the values of two tuples and is
accepted with probability ``min(1, W[i,a_j] W[j,a_i] / (W[i,a_i] W[j,a_j]))``, which leaves
``p(w|L)`` invariant. The chain starts at a maximum-weight assignment (Hungarian method).
``n_chains`` independent chains are run; the estimate is the mean indicator, its standard
error the spread of the chains' batch means. The stated bound of one posterior is
``z·SE + 3/n_samples`` (the second term is the "rule of three" resolution for events not
seen). Swap moves connect all positive-weight assignments when ``W > 0`` (the knowledge
mined by :mod:`openbook.attacks.background` is strictly positive for each tuple's own value
but may hold zeros elsewhere; with zeros the swap chain can in principle fail to be
irreducible — the audit reports the method used for every group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import ParameterError

#: default budget of DP states before switching to the sampler
DEFAULT_MAX_STATES = 1 << 18


def n_states(mult: np.ndarray) -> int:
    """Number of DP states ``Π (m_v + 1)`` (as a Python int, no overflow)."""
    out = 1
    for m in np.asarray(mult).tolist():
        out *= int(m) + 1
    return out


# ---------------------------------------------------------------------------------------
# exact: DP over multiplicity vectors
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _multiset_posteriors(W, mult, out):  # pragma: no cover - compiled
    """Posteriors ``out[j, v] = p(t_j : v)`` of one group (see module docstring).
    ``W`` is ``(N, K)``, ``mult`` ``(K,)`` with ``sum(mult) == N``. Returns ``log Z``
    of the row-scaled matrix plus the log of the scale (i.e. log of the permanent-like
    multiset sum), or ``-inf`` when every world has probability 0."""
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
    stride = np.empty(K, np.int64)
    S = 1
    for v in range(K):
        stride[v] = S
        S *= mult[v] + 1
    F = np.zeros(S)
    B = np.zeros(S)
    level = np.zeros(S, np.int64)
    digits = np.zeros(K, np.int64)
    # forward, in increasing index (predecessors c - e_v have smaller index)
    F[0] = 1.0
    for c in range(S):
        lv = 0
        for v in range(K):
            lv += digits[v]
        level[c] = lv
        if c > 0:
            acc = 0.0
            row = lv - 1
            for v in range(K):
                if digits[v] > 0:
                    acc += F[c - stride[v]] * Ws[row, v]
            F[c] = acc
        # increment the mixed-radix digits
        for v in range(K):
            digits[v] += 1
            if digits[v] <= mult[v]:
                break
            digits[v] = 0
    Z = F[S - 1]
    if Z <= 0.0:
        out[:, :] = np.nan
        return -np.inf
    # backward, in decreasing index; digits of c recomputed by division
    B[S - 1] = 1.0
    for v in range(K):
        out[:, v] = 0.0
    for c in range(S - 1, -1, -1):
        rem = c
        for v in range(K - 1, -1, -1):
            digits[v] = rem // stride[v]
            rem -= digits[v] * stride[v]
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


@njit(cache=True)
def _row_type_posteriors(W, cnt, mult, out):  # pragma: no cover - compiled
    """Exact posteriors by a DP over *row types* (tuples with identical probability rows,
    e.g. the same A-signature): ``W`` is ``(T, K)`` over types and the group's distinct
    values, ``cnt`` the tuples per type, ``mult`` the multiplicities; ``out[a, v]`` gets
    ``p(t : v)`` for each tuple ``t`` of type ``a``. The values' copies are assigned in a
    fixed order; a state is the vector ``k`` of used tuples per type (``Π (cnt_a + 1)``
    states, few when the group's tuples share few signatures). Forward ``F`` and backward
    ``B`` weights carry, per level, the factor ``(free tuples of a)/(free tuples)`` and the
    column's weights scaled to maximum 1 (constant per level: cancels in the ratio).
    Returns False when every world has weight 0 (or the weights underflow)."""
    T, K = W.shape
    N = 0
    for a in range(T):
        N += cnt[a]
    colseq = np.empty(N, np.int64)
    q = 0
    for v in range(K):
        for _ in range(mult[v]):
            colseq[q] = v
            q += 1
    scale = np.ones(K)
    for v in range(K):
        mx = 0.0
        for a in range(T):
            if W[a, v] > mx:
                mx = W[a, v]
        if mx > 0.0:
            scale[v] = 1.0 / mx
    stride = np.empty(T, np.int64)
    S = 1
    for a in range(T):
        stride[a] = S
        S *= cnt[a] + 1
    F = np.zeros(S)
    B = np.zeros(S)
    lvl = np.zeros(S, np.int64)
    digits = np.zeros(T, np.int64)
    F[0] = 1.0
    for c in range(S):
        lv = 0
        for a in range(T):
            lv += digits[a]
        lvl[c] = lv
        if c > 0:
            col = colseq[lv - 1]
            acc = 0.0
            for a in range(T):
                if digits[a] > 0:
                    acc += F[c - stride[a]] * (cnt[a] - digits[a] + 1) * W[a, col]
            F[c] = acc * scale[col] / (N - lv + 1)
        for a in range(T):
            digits[a] += 1
            if digits[a] <= cnt[a]:
                break
            digits[a] = 0
    Z = F[S - 1]
    out[:, :] = 0.0
    if not (Z > 0.0) or not np.isfinite(Z):
        out[:, :] = np.nan
        return False
    B[S - 1] = 1.0
    for c in range(S - 2, -1, -1):
        rem = c
        for a in range(T - 1, -1, -1):
            digits[a] = rem // stride[a]
            rem -= digits[a] * stride[a]
        lv = lvl[c]
        col = colseq[lv]
        f = scale[col] / (N - lv)
        acc = 0.0
        for a in range(T):
            free = cnt[a] - digits[a]
            if free > 0:
                term = free * W[a, col] * f * B[c + stride[a]]
                acc += term
                out[a, col] += F[c] * term
        B[c] = acc
    for a in range(T):
        for v in range(K):
            out[a, v] /= Z * cnt[a]
    return True


def row_type_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int | None = None) -> np.ndarray:
    """``(N, K)`` posteriors like :func:`exact_posteriors`, by the DP over row types
    (identical rows of ``W`` are one type): ``Π (n_a + 1)`` states for ``n_a`` tuples per
    distinct row. Exact; cheaper than the value DP when the tuples share few distinct rows."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    _check_group(W, mult)
    types, inv = np.unique(W, axis=0, return_inverse=True)
    cnt = np.bincount(inv.ravel()).astype(np.int64)
    s = n_states(cnt)
    if max_states is not None and s > max_states:
        raise ParameterError(f"group needs {s} row-type DP states, above max_states={max_states}",
                             parameter="max_states", value=max_states)
    out = np.empty((types.shape[0], W.shape[1]))
    _row_type_posteriors(np.ascontiguousarray(types), cnt, mult, out)
    return out[inv.ravel()]


def exact_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int | None = None) -> np.ndarray:
    """``(N, K)`` matrix of ``p(t_j : v)`` for a group with probability matrix ``W``
    (``W[j, v] = p(s_j : v)`` over the group's distinct values) and multiplicities ``mult``.
    Rows of the result sum to 1 and column ``v`` sums to ``mult[v]``. NaN rows when every
    world has probability 0."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    _check_group(W, mult)
    s = n_states(mult)
    if max_states is not None and s > max_states:
        raise ParameterError(f"group needs {s} DP states, above max_states={max_states}", parameter="max_states",
                             value=max_states)
    out = np.empty_like(W)
    _multiset_posteriors(W, mult, out)
    return out


def _check_group(W: np.ndarray, mult: np.ndarray) -> None:
    if W.ndim != 2 or mult.ndim != 1 or W.shape[1] != mult.size:
        raise ParameterError(f"W must be (N, K) and mult (K,): got {W.shape} and {mult.shape}", parameter="W")
    if int(mult.sum()) != W.shape[0] or (mult < 1).any():
        raise ParameterError(f"multiplicities {mult.tolist()} must be >= 1 and sum to N={W.shape[0]}",
                             parameter="mult")
    if (W < 0).any() or not np.isfinite(W).all():
        raise ParameterError("W must hold finite non-negative probabilities", parameter="W")


# ---------------------------------------------------------------------------------------
# exact cross-check: Glynn's permanent in Gray-code order
# ---------------------------------------------------------------------------------------
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
    return float(_glynn(M))


def posteriors_by_permanents(W: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """``p(t_j : v)`` as ``W[j,v] perm(minor) / perm`` with Glynn's permanent on the
    expanded ``N x N`` matrix (slow reference: ``O(N K 2^N N)``)."""
    W = np.asarray(W, dtype=np.float64)
    mult = np.asarray(mult, dtype=np.int64)
    _check_group(W, mult)
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


# ---------------------------------------------------------------------------------------
# approximate: Metropolis over assignments (swap moves)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _swap_chain(W, start, n_burn, n_batches, batch_sweeps, seed, batch_means):  # pragma: no cover
    """One swap-move Metropolis chain; writes ``batch_means[b, j, v]`` (fraction of sweeps
    in batch ``b`` with ``t_j`` assigned ``v``)."""
    np.random.seed(seed)
    N, K = W.shape
    a = start.copy()
    n_moves = N
    total_sweeps = n_burn + n_batches * batch_sweeps
    for s in range(total_sweeps):
        for _ in range(n_moves):
            i = np.random.randint(N)
            j = np.random.randint(N - 1)
            if j >= i:
                j += 1
            ai = a[i]
            aj = a[j]
            if ai == aj:
                continue
            num = W[i, aj] * W[j, ai]
            den = W[i, ai] * W[j, aj]
            if num >= den or np.random.random() * den < num:
                a[i] = aj
                a[j] = ai
        if s >= n_burn:
            b = (s - n_burn) // batch_sweeps
            for t in range(N):
                batch_means[b, t, a[t]] += 1.0
    for b in range(n_batches):
        for t in range(N):
            for v in range(K):
                batch_means[b, t, v] /= batch_sweeps


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


def _start_assignment(W: np.ndarray, mult: np.ndarray) -> np.ndarray:
    from scipy.optimize import linear_sum_assignment

    cols = np.repeat(np.arange(W.shape[1]), mult)
    with np.errstate(divide="ignore"):
        cost = -np.log(W[:, cols])
    cost[~np.isfinite(cost)] = 1e6
    rows, c = linear_sum_assignment(cost)
    start = np.empty(W.shape[0], dtype=np.int64)
    start[rows] = cols[c]
    return start


def sampled_posteriors(W: np.ndarray, mult: np.ndarray, *, seed: int | np.random.Generator | None = 0,
                       n_chains: int = 4, n_batches: int = 10, batch_sweeps: int = 2000, n_burn: int = 500,
                       z: float = 4.0) -> SampledPosteriors:
    """Metropolis (swap-move) estimate of ``p(t_j : v)`` for a large group; see the module
    docstring for the chain and the stated bound."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    _check_group(W, mult)
    rng = np.random.default_rng(seed)
    start = _start_assignment(W, mult)
    N, K = W.shape
    means = np.zeros((n_chains * n_batches, N, K))
    for c in range(n_chains):
        bm = np.zeros((n_batches, N, K))
        _swap_chain(W, start, n_burn, n_batches, batch_sweeps, int(rng.integers(2**31 - 1)), bm)
        means[c * n_batches:(c + 1) * n_batches] = bm
    est = means.mean(axis=0)
    se = means.std(axis=0, ddof=1) / np.sqrt(means.shape[0])
    return SampledPosteriors(est, se, n_chains * n_batches * batch_sweeps, float(z))


def group_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int = DEFAULT_MAX_STATES,
                     seed: int | None = 0, **sampler: float) -> tuple[np.ndarray, str, np.ndarray | None]:
    """Posteriors of one group, exact when the DP fits ``max_states`` (``method="exact"``),
    otherwise sampled (``method="mcmc"``, with the stated per-entry bound returned)."""
    mult = np.asarray(mult, dtype=np.int64)
    if n_states(mult) <= max_states:
        return exact_posteriors(W, mult), "exact", None
    res = sampled_posteriors(W, mult, seed=seed, **sampler)  # type: ignore[arg-type]
    return res.estimate, "mcmc", res.bound
