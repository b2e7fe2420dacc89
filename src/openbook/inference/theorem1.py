"""Theorem 1 of paper 003 (§4.1): the bound ``Δ_max`` on the probability deviation of an
A-group (eq. 4, Def. 4-5) and the expected minimum group size ``N'_o`` (eq. 5).

For a group of ``N`` tuples holding the sensitive value ``x`` once, with ``f_max`` the
largest ``p(s_A : x)`` among its tuples and ``Δ`` the spread of those probabilities,
Theorem 1 claims ``p(t : x) <= 1/r`` whenever ``Δ <= Δ_max(N, r, f_max)``. The claim is
false in general (``docs/background.md``; exhaustive exact search in
``tests/regression/test_paper003.py``), but ART (:mod:`openbook.algorithms.art`) grows its
groups by it and the audit (:mod:`openbook.attacks.robustness`) reports it beside the exact
posterior (§5, measure 4). The vectorised functions and the scalar numba kernel
:func:`n_o` (ART's inner loop) share one arithmetic and are tested equal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit


def delta_max(N: Any, r: float, f_max: Any) -> np.ndarray:
    """Theorem 1's bound ``Δ_max = (N - r) f / (f (r-1)/(1-f) + N - 1)`` (eq. 4, Def. 5),
    vectorised; ``f = 1`` gives the limit 0."""
    N = np.asarray(N, dtype=np.float64)
    f = np.asarray(f_max, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = f * (r - 1.0) / (1.0 - f) + (N - 1.0)
        out = (N - r) * f / den
    return np.where(f >= 1.0, 0.0, out)


def min_group_size(delta: Any, f_max: Any, r: float) -> np.ndarray:
    """``N'_o``: the smallest integer ``N >= r`` with ``Δ <= Δ_max(N)`` (eq. 5), or
    ``inf`` when no size suffices (``Δ >= f_max > 0``, or ``f_max = 1`` with ``Δ > 0``)."""
    d = np.asarray(delta, dtype=np.float64)
    f = np.asarray(f_max, dtype=np.float64)
    d, f = np.broadcast_arrays(d, f)
    out = np.full(d.shape, np.inf)
    rr = math.ceil(r - 1e-12)
    zero = d <= 0.0
    out[zero] = rr
    ok = (~zero) & (f > d) & (f < 1.0)
    if ok.any():
        fo, do = f[ok], d[ok]
        n0 = (fo * (r - 1.0) * do / (1.0 - fo) - do + r * fo) / (fo - do)
        n = np.maximum(np.ceil(n0 - 1e-9), rr)
        # guard against rounding: step up while the bound is not met
        for _ in range(3):
            bad = delta_max(n, r, fo) < do
            n = np.where(bad, n + 1, n)
        out[ok] = n
    return out


@njit(cache=True)
def n_o(d, f, r, rr):  # pragma: no cover - compiled
    """Scalar :func:`min_group_size` for one ``(Δ, f_max)``; ``rr = ceil(r)``."""
    if d <= 0.0:
        return rr
    if not (f > d and f < 1.0):
        return np.inf
    n0 = (f * (r - 1.0) * d / (1.0 - f) - d + r * f) / (f - d)
    n = max(np.ceil(n0 - 1e-9), rr)
    for _ in range(3):
        if (n - r) * f / (f * (r - 1.0) / (1.0 - f) + (n - 1.0)) < d:
            n += 1.0
    return n
