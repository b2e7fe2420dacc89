"""Every privacy level a partition achieves, in one vectorised pass (``openbook check``).

:func:`compute_levels` reports, for a matrix of per-group SA counts, the weakest group's
level under each model of this package — the numbers ``openbook check`` / ``audit`` print.
It shares the per-model kernels (entropy, recursive tails, EMD, frequency bounds) with the
model classes, so a reported level and the model's ``holds`` can never disagree.

Keys (Python ints / floats; ``nan`` for a partition without groups):

``n_rows``, ``n_groups``
    rows covered by the groups (sum of ``counts``) and number of groups.
``k``
    smallest group size (k-anonymity).
``distinct_l``, ``entropy_l``
    smallest number of distinct SA values / smallest ``exp(H)`` of a group.
``recursive_l``, ``recursive_c``
    largest ℓ such that every group is recursive (c,ℓ)-diverse for the given ``c``
    (0 if none), and that ``c``.
``alpha``
    largest frequency of one SA value in a group ((α,k)-anonymity; simple ℓ-diversity
    holds iff ``alpha <= 1/ℓ``).
``alpha_<set>``, ``alpha_<set>_total``
    for each named sensitive set: the largest frequency of one of its values in a group
    (``set_mode="each"``) and the largest summed frequency of the set (``"total"``).
``t_equal``
    largest equal-distance EMD of a group to the table (t-closeness).
``t_ordered``
    largest ordered-distance EMD — only when ``domain.numeric`` is given (a numeric or
    ordinal SA): an order of the codes of a nominal SA means nothing, so it is not shown.
``t_hierarchical``
    largest hierarchical-distance EMD — only when ``domain.hierarchy`` is given.
``e``
    smallest SA range ``max − min`` of a group ((k,e)-anonymity) — only for a numeric SA.
``eligible_l``
    largest integer ℓ for which the rows covered are ℓ-eligible, ``floor(n / F1)``
    (paper 004 §2); 0 for no rows.

t-closeness uses ``domain.global_counts`` as the table's distribution, as
:class:`~openbook.models.t_closeness.TCloseness` does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._checks import Ratio, as_counts, check_real
from .alpha_k import sensitive_counts
from .base import SADomain
from .k_e_anonymity import numeric_values, sa_range
from .l_diversity import entropy, recursive_level
from .t_closeness import (
    distribution_diff,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    tree_layout,
    value_order,
)

#: a reader's words for each key of :func:`compute_levels` (``openbook check`` and the studio;
#: ``--json`` keeps the keys)
LEVEL_WORDS = {
    "n_rows": "records published", "n_groups": "classes",
    "eligible_l": "l-eligible up to l (the most frequent value's share allows)",
    "k": "k-anonymity: smallest class (k)", "distinct_l": "distinct l-diversity: fewest values in a class",
    "entropy_l": "entropy l-diversity: exp(least class entropy)", "recursive_l": "recursive (c,l)-diversity: l",
    "recursive_c": "recursive (c,l)-diversity: at c", "alpha": "(alpha,k): largest share of one value in a class",
    "t_equal": "t-closeness, equal distance: largest t", "t_ordered": "t-closeness, ordered distance: largest t",
    "t_hierarchical": "t-closeness, hierarchical distance: largest t",
}


def level_words(key: str, words: dict[str, str] | None = None) -> str:
    """A reader's words for the key ``key`` of :func:`compute_levels` (``words``: the table to
    read, default :data:`LEVEL_WORDS`); a sensitive set's ``alpha_NAME[_total]`` named after
    its set; an unknown key as it is."""
    label = (LEVEL_WORDS if words is None else words).get(key)
    if label is None and key.startswith("alpha_"):
        name = key[len("alpha_"):]
        label = (f"(alpha,k): largest share of set {name[:-len('_total')]} (together) in a class"
                 if name.endswith("_total") else f"(alpha,k): largest share of one value of set {name} in a class")
    return label or key


def compute_levels(counts: Any, domain: SADomain, *, c: float = 2.0) -> dict[str, Any]:
    """The level every model achieves on the partition given by ``counts``.

    Parameters
    ----------
    counts:
        Per-group SA counts, shape ``(n_groups, domain.n_values)``.
    domain:
        The SA domain (global counts, numeric values, hierarchy, sensitive sets).
    c:
        The ``c`` of recursive (c,ℓ)-diversity (default 2).
    """
    cval = check_real("c", c, model="compute_levels", low=0.0, low_open=True)
    cnt = as_counts(counts, domain)
    n_groups = len(cnt)
    sizes = cnt.sum(axis=1)
    totals = cnt.sum(axis=0)
    n_rows = int(totals.sum())
    top_total = int(totals.max(initial=0))
    out: dict[str, Any] = {
        "n_rows": n_rows,
        "n_groups": n_groups,
        "eligible_l": n_rows // top_total if top_total else 0,
    }
    nan = math.nan

    def lo(x: np.ndarray) -> float:
        return float(x.min()) if n_groups else nan

    def hi(x: np.ndarray) -> float:
        return float(x.max()) if n_groups else nan

    nonempty = sizes > 0
    safe = np.where(nonempty, sizes, 1).astype(np.float64)

    out["k"] = int(sizes.min()) if n_groups else nan
    out["distinct_l"] = int(np.count_nonzero(cnt, axis=1).min()) if n_groups else nan
    eff = np.where(nonempty, np.exp(entropy(cnt)), 0.0)
    out["entropy_l"] = lo(eff)
    rec = recursive_level(cnt, Ratio(cval))
    out["recursive_l"] = int(rec.min()) if n_groups else nan
    out["recursive_c"] = int(cval) if cval.is_integer() else cval

    freq = np.where(nonempty, cnt.max(axis=1, initial=0) / safe, 1.0)
    out["alpha"] = hi(freq)
    for name in sorted(domain.sensitive_sets):
        for mode, key in (("each", f"alpha_{name}"), ("total", f"alpha_{name}_total")):
            top = sensitive_counts(cnt, domain, name, mode)
            out[key] = hi(np.where(nonempty, top / safe, 1.0))

    if n_rows and domain.n_rows:
        diff, empty = distribution_diff(cnt, domain)
        out["t_equal"] = hi(np.where(empty, 1.0, np.clip(emd_equal(diff), 0.0, 1.0)))
        if domain.numeric is not None:
            d = emd_ordered(diff, value_order(domain))
            out["t_ordered"] = hi(np.where(empty, 1.0, np.clip(d, 0.0, 1.0)))
        if domain.hierarchy is not None:
            d = emd_hierarchical(diff, tree_layout(domain.hierarchy, domain.n_values))
            out["t_hierarchical"] = hi(np.where(empty, 1.0, np.clip(d, 0.0, 1.0)))
    else:
        out["t_equal"] = nan
        if domain.numeric is not None:
            out["t_ordered"] = nan
        if domain.hierarchy is not None:
            out["t_hierarchical"] = nan

    if domain.numeric is not None:
        out["e"] = lo(sa_range(cnt, numeric_values(domain)))
    return out
