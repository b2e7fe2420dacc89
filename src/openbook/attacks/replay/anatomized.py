"""The replay of anatomization over a base algorithm (paper 000 §3.1, §5.3: ``SG(Ana)``,
``GG(Ana)``, ``anatomize`` over any deterministic base): the probability that the algorithm,
re-run on a possible world, publishes the observed groups.

A world ``W`` assigns each published group's SA multiset to its members. The base algorithm
re-run on ``W`` (deterministic: the same groups every time) gives its groups ``β(W)``; Anatomy
then splits each base group ``b`` with a uniformly random order of each SA value's rows
(:mod:`openbook.algorithms.anatomy`). Which *values* each of Anatomy's groups receives —
the top-ℓ rounds, the residue rows, a group kept whole — is a function of ``b``'s SA counts
``c`` alone; which *rows* of value ``v`` go to which of its slots is one of ``c_v!`` equally
likely orders. So the published groups (unordered: the files number groups by content) come
out of ``b`` with probability

    [every published group inside ``b`` has a group of Anatomy's structure with its values,
     one to one]  ·  Π_S mult(S)!  /  Π_v c_v!

(``mult(S)``: how many of the structure's groups hold the value set ``S`` — they may be
matched with the published ones in any order), and ``1`` when Anatomy keeps ``b`` whole and
``b`` is one published group. The world's weight is the product over ``β(W)``'s groups, ``0``
when a published group straddles two base groups.

The worlds are enumerated exactly within the replay's ``rerun_limit`` (the base algorithm is
re-run on each); past it — or when people with equal QIs make the seating unknowable — the unit
is unresolved. ``tests/contract/test_adversary_brute_force.py``
checks the posteriors against a brute force that re-runs the whole algorithm on every world
over every order of Anatomy's draws.
"""

from __future__ import annotations

from collections import Counter
from math import lgamma
from typing import Any

import numpy as np

from ...algorithms.anatomy import anatomy_value_sets
from ...data.table import EncodedTable
from ...errors import OpenbookError
from .generic import with_sa


def anatomy_log_probability(sa: np.ndarray, base_group: np.ndarray, group: np.ndarray, l: int,
                            n_sa: int) -> float:
    """Natural log of the probability that Anatomy inside each group of ``base_group``
    publishes the (unordered) groups ``group``, the rows' SA codes being ``sa`` (module
    docstring); ``-inf`` when it cannot."""
    sa = np.asarray(sa, dtype=np.int64)
    base_group = np.asarray(base_group, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    if np.any((base_group < 0) != (group < 0)):
        return float("-inf")
    out = 0.0
    keep = base_group >= 0
    order = np.lexsort((group[keep], base_group[keep]))
    rows = np.flatnonzero(keep)[order]
    bg = base_group[rows]
    starts = np.flatnonzero(np.r_[True, bg[1:] != bg[:-1]]) if rows.size else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], rows.size]
    owner: dict[int, int] = {}
    for a, b in zip(starts.tolist(), ends.tolist()):
        r = rows[a:b]
        gids = group[r]
        for g in np.unique(gids).tolist():  # a published group in two base groups: impossible
            if owner.setdefault(int(g), int(bg[a])) != int(bg[a]):
                return float("-inf")
        counts = np.bincount(sa[r], minlength=n_sa)
        structure = anatomy_value_sets(counts, l)
        published = Counter(tuple(sorted(sa[r][gids == g].tolist())) for g in np.unique(gids).tolist())
        if structure is None:  # kept whole: the base group is one published group
            if len(published) != 1 or sum(published.values()) != 1:
                return float("-inf")
            continue
        if Counter(structure) != published:
            return float("-inf")
        out += sum(lgamma(m + 1.0) for m in published.values()) - sum(lgamma(float(c) + 1.0) for c in counts)
    return out


def anatomized_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                     levels: Any = None) -> tuple[list | None, str]:
    """One unit, the whole table, one cell per row (as :func:`.generic.rerun_units`), each
    world weighed by the probability that the base algorithm re-run on it and Anatomy inside
    its groups publish the observed groups — relative to the true world's, a constant of the
    unit (the posterior does not depend on it; it keeps the weights in floating range).
    ``(None, why)`` when the base cannot be re-run as it ran (people with equal QIs, whom
    nothing published tells apart; withheld rows)."""
    from ...algorithms.anatomy import anatomy_l
    from ...algorithms.registry import make_algorithm
    from ...data.grouping import group_ids
    from .engine import Unit
    from .generic import canonical

    if np.any(group < 0):
        return None, "the release withheld rows (their values, and so the base's groups, are unknown)"
    base = make_algorithm(algo.base, model=algo.model, seed=algo.seed, **algo.base_params)
    if group_ids(table.qi_codes)[1] < table.n_rows:
        # which of the people with equal QIs sits in which published group is Anatomy's secret draw
        # (the files tell them apart by nothing), and the base orders them by position or at
        # random: the seating — in memory the publisher's, from the files one of many — would
        # decide the posterior; not replayed (found by tests/soundness: a pass in memory, a
        # failure from the files)
        return None, "people with equal QIs: which of them sits in which group is not known"
    l = anatomy_l(algo.name, algo.l, algo.model, table)
    n, n_sa = table.n_rows, table.sa_domain.n_values
    rows = np.argsort(group, kind="stable")
    leaf = group[rows]
    ref_group = canonical(group)

    def log_weight(sa: np.ndarray) -> float:
        try:
            bg = base.partition(with_sa(table, sa)).group
        except OpenbookError:  # the base refuses this world: no release
            return float("-inf")
        return anatomy_log_probability(sa, bg, ref_group, l, n_sa)

    ref = log_weight(np.asarray(table.sa_codes, dtype=np.int64))
    if not np.isfinite(ref):
        return None, "re-run on the true values, the base algorithm and Anatomy do not publish these groups"

    def lik(c: np.ndarray) -> np.ndarray:
        out = np.zeros(c.shape[0])
        sa = np.empty(n, dtype=np.int64)
        for w in range(c.shape[0]):
            sa[rows] = np.argmax(c[w], axis=1)
            lw = log_weight(sa)
            out[w] = np.exp(lw - ref) if np.isfinite(lw) else 0.0
        return out
    return [Unit(rows, np.arange(n, dtype=np.int64), leaf.astype(np.int64), gcounts, lik, "anatomized")], ""
