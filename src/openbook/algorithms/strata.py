"""SA strata: an SA-only grouping that meets any attribute requirement (paper 000 §3, Claim 4;
Anatomy, Xiao & Tao 2006, generalised).

The rows are laid out by sensitive value — the values in a fixed order (ordered-distance order
for a numeric or ordinal SA, depth-first order of its hierarchy when it has one, else code
order; for a model of a sensitive set, the set's values first), each value's rows in a uniformly
random order — and position ``i`` joins group ``i mod g``. Group ``j`` therefore takes every
``g``-th row of the layout starting at ``j``: from each value's block of ``n_v`` rows it takes
``⌊n_v/g⌋`` or ``⌈n_v/g⌉``, so every group's distribution follows the table's as closely as
counts allow (systematic sampling of the sorted SA). ``g`` is the largest number of groups (at
most ``n / size floor``) for which **every** group satisfies the requirement — found by a search
over ``g`` whose every step is a function of the SA counts alone.

* For an ℓ-eligible table and the requirement "each value at most ``1/ℓ``", ``g = ⌊n/ℓ⌋``: groups
  of ℓ (or ℓ + 1) rows, each value at most once — Anatomy's groups.
* For a sensitive set of frequency at most ``1/ℓ`` laid out first: at most one sensitive row per
  group of at least ℓ rows — Set Anatomy's groups.
* For t-closeness: the largest ``g`` whose groups are all within ``t`` of the table.
* For the homogeneity bound (at least two distinct values): ``g ≤ n/2`` groups, each spanning
  two blocks.

Why no adversary learns more than the class frequency (paper 000 Claim 4): the composition of
every group is a function of the SA counts, which the SA-table publishes, and which person of a
value fills which slot is uniformly random — every assignment of the published multisets to the
people is produced with the same probability. The seed is never published.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InfeasibleError, option
from ..models.base import PrivacyModel, SADomain


def value_layout(domain: SADomain, sensitive_mask: np.ndarray | None = None) -> np.ndarray:
    """The SA codes in stratum order (module docstring)."""
    m = domain.n_values
    if domain.numeric is not None:
        order = np.argsort(np.asarray(domain.numeric, dtype=np.float64), kind="stable")
    elif domain.hierarchy is not None:
        try:
            from ..models.t_closeness import tree_layout

            order = np.asarray(tree_layout(domain.hierarchy, m).order, dtype=np.int64)
        except Exception:  # noqa: BLE001 - a hierarchy that is no tree: code order
            order = np.arange(m)
    else:
        order = np.arange(m)
    if sensitive_mask is not None:
        sens = np.asarray(sensitive_mask, dtype=bool)[order]
        order = np.concatenate([order[sens], order[~sens]])
    return order.astype(np.int64)


def strata_counts(counts: np.ndarray, layout: np.ndarray, g: int) -> np.ndarray:
    """``(g, n_sa)`` SA counts of the ``g`` groups of the layout (no rows needed): value ``v``'s
    block ``[s, e)`` gives group ``j`` the positions ``x`` in it with ``x ≡ j (mod g)``."""
    c = np.asarray(counts, dtype=np.int64)[layout]
    ends = np.cumsum(c)
    starts = ends - c
    j = np.arange(g, dtype=np.int64)[:, None]
    # positions x < e with x ≡ j: ⌈(e - j) / g⌉ for e > j, else 0
    upto = lambda e: np.maximum(0, (e[None, :] - j + g - 1) // g)  # noqa: E731
    out = np.zeros((g, c.size), dtype=np.int64)
    out[:, layout] = upto(ends) - upto(starts)
    return out


def choose_groups(counts: np.ndarray, requirement: PrivacyModel, domain: SADomain, layout: np.ndarray,
                  floor: int = 1) -> int:
    """The largest ``g`` in ``[1, n // floor]`` whose strata all satisfy ``requirement``, or 0
    when not even one group (the whole table) does. A function of the SA counts alone."""
    n = int(np.asarray(counts).sum())
    if n == 0:
        return 0

    def ok(g: int) -> bool:
        return bool(np.asarray(requirement.holds(strata_counts(counts, layout, g), domain), dtype=bool).all())

    top = max(1, n // max(1, int(floor)))
    if ok(top):
        return top
    if not ok(1):
        return 0
    # geometric descent to a satisfying g, then bisection up to the boundary, then a short
    # downward scan: the result satisfies (checked) and is a function of the counts alone
    lo, hi = 1, top  # ok(lo), not ok(hi)
    g = top
    while g > 1:
        g = max(1, int(g * 0.8))
        if ok(g):
            lo = g
            break
        hi = g
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def assign_strata(sa_codes: np.ndarray, layout: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """Group of every row: rows sorted by (layout position of their value, a uniform random
    key), position ``i`` to group ``i mod g``."""
    sa = np.asarray(sa_codes, dtype=np.int64)
    rank = np.empty(layout.size, dtype=np.int64)
    rank[layout] = np.arange(layout.size)
    order = np.lexsort((rng.random(sa.size), rank[sa]))
    group = np.empty(sa.size, dtype=np.int64)
    group[order] = np.arange(sa.size) % g
    return group


def sa_strata(sa_codes: np.ndarray, domain: SADomain, requirement: PrivacyModel, rng: np.random.Generator, *,
              sensitive_mask: np.ndarray | None = None, floor: int = 1, what: str = "") -> tuple[np.ndarray, int]:
    """``(group per row, n_groups)``: the SA strata of the rows (module docstring); an
    :class:`InfeasibleError` naming the remedy when no grouping satisfies ``requirement``."""
    counts = np.bincount(np.asarray(sa_codes, dtype=np.int64), minlength=domain.n_values)
    layout = value_layout(domain, sensitive_mask)
    g = choose_groups(counts, requirement, domain, layout, floor)
    if g == 0:
        raise InfeasibleError(
            f"{what or 'the SA grouping'}: even the whole table as one group violates {requirement.describe()}; "
            "the sensitive attribute is too skewed for this model (withhold dominant records first with "
            f"{option('skew', 'r-suppression')}, paper 004, or relax the model)", model=requirement)
    return assign_strata(sa_codes, layout, g, rng), g


def describe_strata(counts: Any, g: int) -> dict[str, Any]:
    """Provenance of a grouping: the number of groups and their sizes (functions of the counts)."""
    n = int(np.asarray(counts).sum())
    return {"groups": int(g), "group_sizes": sorted({n // g, -(-n // g)}) if g else []}
