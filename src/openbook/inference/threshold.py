"""Is ``max_{A,t} p(t:x) <= 1/r`` for an A-group holding ``x`` once? Proven bounds first,
an exact DP when they do not decide (paper 003 §3 eq. 1-3, Def. 1; ``art-exact``).

For a group in which ``x`` occurs exactly once, with ``R_j`` the multiset permanent of the
other tuples and values,

    p(t_j : x) = 1 / (1 + Σ_{u≠j} (W[u,x] / W[j,x]) · R_u / R_j);

expanding ``R_u`` along row ``j`` and ``R_j`` along row ``u`` (the same remaining tuples)
gives ``R_u / R_j = Σ_v W[j,v] c_v / Σ_v W[u,v] c_v`` with ``c_v >= 0``, hence the mediant
bounds ``min_v W[j,v]/W[u,v] <= R_u/R_j <= max_v W[j,v]/W[u,v]`` (:func:`once_bounds`). The
ratio is 1 for two tuples of the same row type; the bounds are exact when the other tuples
hold one value. When the bounds straddle the threshold, :func:`certify_group` computes the
exact posterior by the cheaper of the DP over multiplicity vectors (:mod:`.multiset_dp`) and
the backward-only DP over row types (:mod:`.row_types`) — never a sampler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import ParameterError
from .multiset_dp import multiset_posteriors
from .row_types import colseq_first, row_type_kernel, row_types
from .states import DEFAULT_MAX_STATES


@njit(cache=True)
def once_bounds(P, types, cnt, vals, x):  # pragma: no cover - compiled
    """Lower and upper bound of ``max_j p_A(t_j : x)`` for one attribute set (module
    docstring): ``P`` the stacked knowledge, ``types``/``cnt`` the group's distinct rows of
    ``P`` and their tuple counts, ``vals`` the other (distinct) values of the group."""
    T = types.size
    lo_best = 0.0
    hi_best = 0.0
    for j in range(T):
        rj = types[j]
        wj = P[rj, x]
        if wj <= 0.0:
            continue
        acc_lo = (cnt[j] - 1) * wj  # Σ with the smallest ratios -> upper bound of p
        acc_hi = acc_lo  # Σ with the largest ratios -> lower bound of p
        for u in range(T):
            if u == j:
                continue
            ru = types[u]
            wu = P[ru, x]
            if wu <= 0.0:
                continue
            rmin = np.inf
            rmax = 0.0
            for v in vals:
                a = P[ru, v]
                b = P[rj, v]
                if a > 0.0:
                    q = b / a
                    if q < rmin:
                        rmin = q
                    if q > rmax:
                        rmax = q
                elif b > 0.0:
                    rmax = np.inf
            acc_lo += cnt[u] * wu * rmin
            acc_hi += cnt[u] * wu * rmax
        ub = wj / (wj + acc_lo) if acc_lo < np.inf else 0.0
        lb = wj / (wj + acc_hi) if acc_hi < np.inf else 0.0
        if ub > hi_best:
            hi_best = ub
        if lb > lo_best:
            lo_best = lb
    return lo_best, hi_best


@njit(cache=True)
def _decide(P, idx_rows, sa_rows, x, thr, max_states):  # pragma: no cover - compiled
    """Verdict for ``max_{A,j} p_A(t_j : x) <= thr`` (1 yes, 0 no, -1 undecided) and the
    number of attribute sets decided by the bounds and by an exact DP."""
    n_sets, N = idx_rows.shape
    K = P.shape[1]
    present = np.zeros(K, np.bool_)
    for j in range(N):
        if sa_rows[j] != x:
            present[sa_rows[j]] = True
    vals = np.flatnonzero(present)
    allv = np.empty(vals.size + 1, np.int64)
    allv[:vals.size] = vals
    allv[vals.size] = x
    allv.sort()
    mult = np.zeros(allv.size, np.int64)
    for j in range(N):
        mult[np.searchsorted(allv, sa_rows[j])] += 1
    target = np.searchsorted(allv, x)
    seq = colseq_first(mult, target)
    s_col = 1.0
    for k in range(allv.size):
        s_col *= mult[k] + 1
    n_bound = 0
    n_exact = 0
    undecided = False
    W = np.empty((N, allv.size))
    out = np.empty((N, allv.size))
    for s in range(n_sets):
        types, cnt = row_types(idx_rows[s])
        lb, ub = once_bounds(P, types, cnt, vals, x)
        if ub <= thr:
            n_bound += 1
            continue
        if lb > thr:
            return 0, n_bound + 1, n_exact
        s_row = 1.0
        for a in range(types.size):
            s_row *= cnt[a] + 1
        if min(s_row, s_col) > max_states:
            undecided = True
            continue
        n_exact += 1
        w = 0.0
        if s_row * types.size <= s_col * allv.size:
            Wt = np.empty((types.size, allv.size))
            for a in range(types.size):
                for k in range(allv.size):
                    Wt[a, k] = P[types[a], allv[k]]
            ot = np.empty((types.size, allv.size))
            if not row_type_kernel(Wt, cnt, seq, True, ot):
                undecided = True
                continue
            for a in range(types.size):
                if ot[a, target] > w:
                    w = ot[a, target]
        else:
            for j in range(N):
                for k in range(allv.size):
                    W[j, k] = P[idx_rows[s, j], allv[k]]
            if multiset_posteriors(W, mult, out) == -np.inf:
                undecided = True
                continue
            for j in range(N):
                if out[j, target] > w:
                    w = out[j, target]
        if w > thr:
            return 0, n_bound, n_exact
    if undecided:
        return -1, n_bound, n_exact
    return 1, n_bound, n_exact


def certify_group(P: np.ndarray, idx: np.ndarray, sa: np.ndarray, rows: np.ndarray, x: int, r: float,
                  max_states: int = DEFAULT_MAX_STATES) -> tuple[bool | None, str]:
    """Decide ``max_{A,t} p(t:x) <= 1/r`` (every attribute set of the stacked knowledge
    ``P, idx``, :meth:`.knowledge.Knowledge.stacked`) for the group ``rows`` holding ``x``
    exactly once.

    Per attribute set: the mediant bounds of :func:`once_bounds` first; when they straddle
    ``1/r``, the exact posterior by the cheaper DP if it fits ``max_states`` states. Returns
    ``(verdict, method)``: True (r-robust for ``x``), False (some posterior exceeds ``1/r``)
    or None (undecided: bounds straddle and both DPs are too large); ``method`` is
    ``"bound"`` when no DP was needed, else ``"exact"``."""
    rows = np.asarray(rows, dtype=np.int64)
    sr = np.ascontiguousarray(sa[rows], dtype=np.int64)
    if int((sr == x).sum()) != 1:
        raise ParameterError(f"certify_group needs x={x} exactly once in the group", parameter="x", value=x)
    verdict, _, n_exact = _decide(P, np.ascontiguousarray(idx[:, rows]), sr, int(x), 1.0 / r + 1e-12,
                                  float(max_states))
    return (None if verdict < 0 else bool(verdict)), ("exact" if n_exact else "bound")
