"""Mixed-radix state spaces of the exact posterior DPs (paper 003 §3, eq. 1-3).

Both exact DPs of this package walk a lattice of count vectors: the DP over multiplicity
vectors (:mod:`.multiset_dp`, one digit per distinct SA value of a group, ``0..m_v``) and
the DP over row types (:mod:`.row_types`, one digit per row type, ``0..n_a``). A state is
the mixed-radix integer ``c = Σ_i d_i · stride_i`` with ``stride_i = Π_{i' < i} (cap_i' + 1)``;
the *level* of a state is its digit sum (how many tuples, or value copies, it has placed).
Predecessors ``c - stride_i`` have smaller indices, successors larger ones, so a forward
pass runs in increasing and a backward pass in decreasing index order.

The state count ``Π (cap_i + 1)`` is computed as a Python int (:func:`n_states`) before any
array is allocated; callers compare it with their budget, so the int64 products inside the
kernels never overflow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: default budget of DP states of one exact computation (per group and attribute set);
#: above it the callers use proven bounds, the other DP, or the sampler
DEFAULT_MAX_STATES = 1 << 18


def n_states(caps: np.ndarray) -> int:
    """Number of DP states ``Π (cap_i + 1)`` as a Python int (no overflow)."""
    out = 1
    for m in np.asarray(caps).tolist():
        out *= int(m) + 1
    return out


@njit(cache=True)
def strides(caps):  # pragma: no cover - compiled
    """Mixed-radix strides of the digits ``0..caps[i]`` and the number of states ``S``
    (the caller has checked ``S`` with :func:`n_states`)."""
    n = caps.size
    stride = np.empty(n, np.int64)
    S = 1
    for i in range(n):
        stride[i] = S
        S *= caps[i] + 1
    return stride, S


@njit(cache=True)
def advance(digits, caps):  # pragma: no cover - compiled
    """Increment the mixed-radix digits in place (state ``c`` to ``c + 1``)."""
    for i in range(digits.size):
        digits[i] += 1
        if digits[i] <= caps[i]:
            return
        digits[i] = 0


@njit(cache=True)
def retreat(digits, caps):  # pragma: no cover - compiled
    """Decrement the mixed-radix digits in place (state ``c`` to ``c - 1``); returns the
    change of the level (digit sum)."""
    delta = 0
    for i in range(digits.size):
        if digits[i] > 0:
            digits[i] -= 1
            return delta - 1
        digits[i] = caps[i]
        delta += caps[i]
    return delta


@njit(cache=True)
def decode(c, stride, digits):  # pragma: no cover - compiled
    """Write the digits of state ``c`` into ``digits``; return its level (digit sum)."""
    rem = c
    level = 0
    for i in range(stride.size - 1, -1, -1):
        digits[i] = rem // stride[i]
        rem -= digits[i] * stride[i]
        level += digits[i]
    return level
