"""The algorithm-replay adversary — paper 000 §2.4 and §5.1 (the adversary re-runs the
anonymization algorithm on every possible world), paper 001 Assumption 3.

The adversary knows (1) every individual's QI values, (2) the anonymization algorithm and
its parameters, (3) the release: which individuals form each published class and each
class's SA multiset (paper 000 §2.4) — and, in a generalized release, the classes' labels:
groups whose labels coincide are one class to any reader of the file. A *possible world*
assigns each class's SA multiset to its members; without the algorithm every world is
equally likely (the baseline adversary). The replay adversary weighs each world by the
probability that the algorithm, run on it, publishes exactly the observed classes
(§5.1: "reject those assignments on which the (deterministic) algorithm would not produce
the published grouping") — 0/1 for the deterministic GG, SG, Mondrian, full-domain search;
for RGG(p) each voluntary merge has probability ``p`` and each stop ``1 - p`` (§4.3,
App. C.4).

Layout:

* :mod:`.engine` — units, cells, the worlds' contingency tables and their weights;
  :mod:`.solve` — a unit's posterior: exact enumeration, or sampling (uniform, or piece by
  piece with importance weights) with standard errors;
  :mod:`.chain` — GG/RGG groups as a Markov chain (exact forward–backward);
  :mod:`.kernels` — the numba kernels.
* Per algorithm: :mod:`.greedy` (GG/RGG, §4.1, §4.3), :mod:`.symmetric` (SG, §3.2,
  App. C.3), :mod:`.mondrian` (Mondrian, §2.3, App. B (b)) with the decision walk both tree
  algorithms share (:mod:`.splits`), :mod:`.generic` (no-information groupings, Claim 4;
  any other algorithm re-run on every world).
* :mod:`.attack` — :func:`replay_attack`, :func:`replay_release`.

Only QI-only structure — the sort order, GG's buckets, SG's split points, the cuts a
Mondrian node tries — is recomputed, with the algorithms' own public functions; a person's
class comes from the release. Rows a unit's checks treat alike form a *cell*; they are
exchangeable, so the posterior of a row is its cell's expected SA count / cell size.
"""

from .attack import (
    DECISION_REPLAYS,
    algorithm_from_provenance,
    publisher_release,
    replay_attack,
    replay_partition,
    replay_release,
    replay_units,
    seating,
)
from .engine import Decisions, Region, Unit, leaf_tables
from .generic import canonical, no_information, set_only_mask, with_sa
from .solve import UnitResult, solve_unit

__all__ = ["DECISION_REPLAYS", "Decisions", "Region", "Unit", "UnitResult",
           "algorithm_from_provenance", "canonical", "leaf_tables", "no_information", "publisher_release", "replay_attack",
           "replay_partition", "replay_release", "replay_units", "seating", "set_only_mask", "solve_unit", "with_sa"]
