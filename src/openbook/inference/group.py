"""Posteriors ``p(t:x)`` of one A-group, exact when one of the two DPs is cheap enough,
sampled otherwise (paper 003 §3, eq. 1-3; §5 for the audit that uses it).

The DP over multiplicity vectors (:mod:`.multiset_dp`) needs ``Π (m_v + 1)`` states of
``K`` operations, the DP over row types (:mod:`.row_types`) ``Π (n_a + 1)`` states of ``T``
operations; :func:`exact_plan` picks the cheaper of those within the state budget, and
:func:`group_posteriors` falls back to the Metropolis sampler (:mod:`.sampler`) when
neither fits.
"""

from __future__ import annotations

import numpy as np

from .multiset_dp import check_group, exact_posteriors
from .row_types import row_type_posteriors
from .sampler import sampled_posteriors
from .states import DEFAULT_MAX_STATES, n_states


def exact_plan(mult: np.ndarray, type_counts: np.ndarray, max_states: int) -> str | None:
    """``"values"`` (DP over multiplicity vectors), ``"row_types"`` or ``None`` (neither
    fits ``max_states``): the cheaper by states × digits, among those within the budget."""
    s_v, s_r = n_states(mult), n_states(type_counts)
    costs = []
    if s_v <= max_states:
        costs.append((s_v * len(mult), "values"))
    if s_r <= max_states:
        costs.append((s_r * len(type_counts), "row_types"))
    return min(costs)[1] if costs else None


def group_posteriors(W: np.ndarray, mult: np.ndarray, *, max_states: int = DEFAULT_MAX_STATES,
                     seed: int | None = 0, **sampler: float) -> tuple[np.ndarray, str, np.ndarray | None]:
    """Posteriors of one group, exact by the cheaper DP when one fits ``max_states``
    (``method="exact"``), otherwise sampled (``method="mcmc"``, with the stated per-entry
    bound returned)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.int64)
    check_group(W, mult)
    _, inv = np.unique(W, axis=0, return_inverse=True)
    plan = exact_plan(mult, np.bincount(inv.ravel()), max_states)
    if plan == "values":
        return exact_posteriors(W, mult), "exact", None
    if plan == "row_types":
        return row_type_posteriors(W, mult), "exact", None
    res = sampled_posteriors(W, mult, seed=seed, **sampler)  # type: ignore[arg-type]
    return res.estimate, "mcmc", res.bound
