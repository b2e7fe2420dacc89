"""Worst-case degradation of ℓ-diversity upon linkage (paper 002 §3, Proposition 3.1,
Lemma 3.2, Corollary 3.3).

With ``L = |S| − 1`` and ``t`` ℓ-diverse releases that share a person (so every support
vector ``ι_j`` contains the person's value), the smallest possible post-linkage diversity is

    ℓ_[t] = 1                           if ℓ ≤ L(t−1)/t + 1,
    ℓ_[t] = L + 1 − (L − ℓ + 1) t       otherwise.

The paper assumes ``t | L``; the counting argument of Lemma 3.2 (each release's support
misses at most ``L − ℓ + 1`` of the other values, and the misses can be placed disjointly)
gives ``ℓ_[t] = max(1, L + 1 − t(L − ℓ + 1))`` for every ``t ≥ 1``, which is what
:func:`worst_case_diversity` returns; :func:`brute_force_worst_case` checks both by
enumerating support vectors. :func:`worst_case_supports` is the construction of eq. (3)
(ones on a cyclic window, generalised to place the zero windows disjointly), and
:func:`worst_case_releases` turns it into ``t`` genuine ℓ-diverse generalized releases whose
linkage (:func:`openbook.attacks.linkage.linkage`) reaches ``ℓ_[t]``.
"""

from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..release import Partition, Release, build_release


def _check(n_sa: int, l: int, t: int) -> None:
    if n_sa < 1:
        raise ParameterError(f"|S| = {n_sa} must be at least 1", parameter="n_sa", value=n_sa)
    if not 1 <= l <= n_sa:
        raise ParameterError(f"l = {l} must lie in 1..|S| = {n_sa}", parameter="l", value=l)
    if t < 1:
        raise ParameterError(f"t = {t} must be at least 1", parameter="t", value=t)


def worst_case_diversity(n_sa: int, l: int, t: int) -> int:
    """``ℓ_[t]``: the smallest post-linkage diversity of ``t`` ℓ-diverse releases (Prop. 3.1)."""
    _check(n_sa, l, t)
    L = n_sa - 1
    return max(1, L + 1 - t * (L - l + 1))


def paper_formula(n_sa: int, l: int, t: int) -> int:
    """Proposition 3.1 exactly as printed (requires ``t ≥ 2`` and ``t | L``)."""
    _check(n_sa, l, t)
    L = n_sa - 1
    if t < 2 or L % t:
        raise ParameterError(f"Proposition 3.1 assumes t ≥ 2 and t | L (t = {t}, L = {L})", parameter="t", value=t)
    if l <= L * (t - 1) / t + 1:
        return 1
    return L + 1 - (L - l + 1) * t


def worst_case_supports(n_sa: int, l: int, t: int) -> np.ndarray:
    """Boolean ``(t, |S|)`` support vectors ``ι_j`` of weight ``ℓ``, all containing value 0
    (the person's), whose intersection has weight :func:`worst_case_diversity`.

    Row ``j`` misses the ``z = L − ℓ + 1`` values ``1 + (jz + k) mod L``, ``k < z``: disjoint
    windows while ``tz ≤ L`` (eq. (3) of the paper when ``t | L``), all of ``1..L`` otherwise.
    """
    _check(n_sa, l, t)
    L = n_sa - 1
    z = L - l + 1
    iota = np.ones((t, n_sa), dtype=bool)
    if L == 0:
        return iota
    for j in range(t):
        iota[j, 1 + (j * z + np.arange(z)) % L] = False
    return iota


def brute_force_worst_case(n_sa: int, l: int, t: int) -> int:
    """Minimum of ``|∩_j ι_j|`` over all support vectors of weight ℓ that share value 0
    (eq. (2)) — weight exactly ℓ suffices since a larger support only enlarges the
    intersection. Exponential: at most 2·10^5 combinations."""
    _check(n_sa, l, t)
    supports = [frozenset(c) for c in combinations(range(1, n_sa), l - 1)]
    if len(supports) ** max(t - 1, 0) > 200_000:
        raise ParameterError(f"brute force over {len(supports)}^{t - 1} support combinations is too large",
                             parameter="n_sa", value=n_sa)
    best = n_sa
    # by symmetry (relabelling the values 1..L) the first support can be fixed
    for combo in product(supports[:1], *([supports] * (t - 1))):
        best = min(best, 1 + len(frozenset.intersection(*combo)))
    return best


def brute_force_feasible(n_sa: int, l: int, t: int) -> bool:
    return math.comb(n_sa - 1, l - 1) ** max(t - 1, 0) <= 200_000


def worst_case_releases(n_sa: int, l: int, t: int) -> tuple[list[Release], pd.DataFrame]:
    """``t`` generalized ℓ-diverse releases and a one-person population whose linkage has
    diversity ``ℓ_[t]``: release ``j`` is one class ``zip ∈ [0-(ℓ−1)]`` holding the ℓ values
    of ``ι_j`` once each; the person has ``zip = 0`` and SA value ``s0``."""
    from ..data.table import EncodedTable
    from ..models.registry import make_model

    iota = worst_case_supports(n_sa, l, t)
    sa_names = np.asarray([f"s{i}" for i in range(n_sa)], dtype=object)
    model = make_model(f"l={l}")
    releases = []
    for j in range(t):
        vals = np.flatnonzero(iota[j])[:l]
        table = EncodedTable.from_codes(
            qi_codes=np.arange(l, dtype=np.int32)[:, None], sa_codes=vals.astype(np.int32),
            qi_names=["zip"], sa_name="disease", qi_categories=[np.arange(l)], sa_categories=sa_names,
            qi_kinds=["numeric"])
        part = Partition(np.zeros(l, dtype=np.int64), 1, provenance={"algorithm": "worst-case-linkage", "release": j})
        releases.append(build_release(table, part, model=model, kind="generalized"))
    return releases, pd.DataFrame({"zip": [0]})
