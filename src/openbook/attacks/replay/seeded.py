"""Replaying ART and Injector: every possible world re-run under every order of its seeds
(paper 003 §4.2 and its comparator Injector, Li & Li 2008; paper 000 §5.1).

Both algorithms grow one group from each sensitive row — in a secret, uniformly random order
(:func:`openbook.algorithms.ordering.seed_order`) — out of tuples chosen *for that seed*:
ART the closest by the QI-based distributions mined from the whole table, Injector the next
compatible ones in QI order, under negative association rules mined from the whole table. So
the grouping depends on which member holds the sensitive value, and on every other person's
value through the mined knowledge: no per-group decomposition is known, and paper 003 does
not consider an adversary who knows ART. The replay is the brute force itself, on tables
small enough: a world weighs the probability that the algorithm publishes the observed groups — the
fraction of the ``m!`` orders of the world's ``m`` sensitive rows (the same ``m`` in every
world) under which the re-run writes the observed files. A world is any arrangement of the
table's published values over the *people* (not only within the published groups: the files
do not say which of several people with equal QIs sits in which group), and what is compared
is what the files show (each group's QIs and SA multiset; a generalized release's labels).
Exact when worlds × ``m!`` is within ``rerun_limit``; beyond it, or when the release withheld
rows (failed seeds: their values, and so the re-run, are unknown), the unit is unresolved,
with the reason.
``tests/soundness`` checks it against the brute force that re-runs every world and every
permutation the algorithm can draw and compares the bytes the files would hold.
"""

from __future__ import annotations

import itertools
from math import lgamma, log
from typing import Any, Iterator

import numpy as np

from ...data.table import EncodedTable
from ...errors import OpenbookError
from ...progress import silenced, track
from ...release.align import label_keys, published_classes
from .engine import Unit
from .generic import with_sa


def seeded_reason(params: dict[str, Any], over: bool) -> str:
    """How the certificate says a run of ART or Injector is replayed (module docstring)."""
    return ("re-run under every order of its seeds (the algorithm's secret permutation): exact while the worlds "
            "times the orders are within rerun_limit; beyond it, its people are left unresolved (they count as "
            "failing)")


def _file(world: EncodedTable, group: np.ndarray, generalized: bool) -> tuple:
    """What the files show of a grouping, as a hashable value: a bucketized release each group's
    members' QIs and SA multiset (canonical row order and group ids, :mod:`openbook.release`),
    a generalized one each published row's labels and SA value."""
    sa = np.asarray(world.sa_codes, dtype=np.int64)
    if generalized:
        cls = published_classes(world, group)
        keys = label_keys(world, cls, int(cls.max()) + 1).reshape(int(cls.max()) + 1, -1)
        return tuple(sorted((tuple(keys[c].tolist()), int(v)) for c, v in zip(cls.tolist(), sa.tolist())))
    qi = np.asarray(world.qi_codes, dtype=np.int64)
    out = []
    for g in np.unique(group):
        at = np.flatnonzero(group == g)
        out.append((tuple(sorted(map(tuple, qi[at].tolist()))), tuple(sorted(sa[at].tolist()))))
    return tuple(sorted(out))


def _runs(algo: Any, world: EncodedTable, seeds: np.ndarray, perms: list[np.ndarray]) -> Iterator[np.ndarray]:
    """The grouping ``algo`` publishes on ``world`` under each order ``seeds[p]`` that publishes
    everyone (a refused run, or one that withholds a seed, publishes other files)."""
    done = 0
    try:
        for part in algo.seeded_runs(world, (seeds[p] for p in perms)):
            done += 1
            if np.all(part.group >= 0):
                yield part.group
    except OpenbookError:
        if done == 0:  # refused before any order: the table itself (its knowledge, its model)
            return
        for p in perms[done + 1:]:  # refused under one order: the rest one by one
            try:
                part = algo.partition(world, seed_order=seeds[p])
            except OpenbookError:
                continue
            if np.all(part.group >= 0):
                yield part.group


def seeded_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *, levels: Any = None,
                 generalized: bool = False, rerun_limit: float | None = None) -> tuple[list[Unit] | None, str]:
    """One unit, the whole table as one cell per person over the table's SA multiset — the
    files do not say which of several people with equal QIs sits in which group, so a world
    is any arrangement of the published values over the people — each world weighed by the
    fraction of the seed orders under which ``algo`` re-run on it writes the observed files
    (module docstring); or ``(None, why)``."""
    if np.any(group < 0):
        return None, "the release withheld rows (failed seeds): their values, and so a re-run, are unknown"
    sens = np.asarray(algo.sensitive_values(table), dtype=bool)
    total = np.asarray(gcounts, dtype=np.int64).sum(axis=0)
    m = int(total[sens[: total.size]].sum())
    n = table.n_rows
    log_runs = lgamma(n + 1.0) - sum(lgamma(float(x) + 1.0) for x in total) + lgamma(m + 1.0)
    if rerun_limit is not None and log_runs > log(rerun_limit) + 1e-9:
        return None, (f"re-running {algo.name} on every world under every order of its {m} seeds "
                      f"(e^{log_runs:.1f} runs) is over rerun_limit")
    observed = _file(table, np.asarray(group, dtype=np.int64), generalized)
    perms = [np.asarray(p, dtype=np.int64) for p in itertools.permutations(range(m))]

    def lik(cells: np.ndarray) -> np.ndarray:
        out = np.zeros(cells.shape[0])
        for w in track(range(cells.shape[0]), f"replay adversary: {algo.name} re-run on each world under {m}! "
                                              "orders of its seeds"):
            world = with_sa(table, np.argmax(cells[w], axis=1).astype(np.int32))
            seeds = np.flatnonzero(sens[world.sa_codes])
            with silenced():
                hits = sum(_file(world, g, generalized) == observed for g in _runs(algo, world, seeds, perms))
            out[w] = hits / len(perms)
        return out
    rows = np.arange(n, dtype=np.int64)
    return [Unit(rows, rows.copy(), np.zeros(n, dtype=np.int64), total[None, :], lik, "rerun")], ""
