"""The certificate against a brute force over possible worlds, on random tiny tables (issue 26).

For every case (:func:`.tables.random_case`: a table of at most a few people, an algorithm, a
model, a target) the release is made and certified as ``anonymize`` does, and the exact
posterior of every person is computed by re-running the algorithm on every possible world,
over every outcome of its random choices, reading every byte it publishes (:mod:`.brute`).
:func:`.judge.judge` then asserts

(a) a pass never puts anyone — published or absent — above its target;
(b) the certificate of the saved files equals the one made with the release;
(c) the replay equals the brute force wherever it claims to be exact.

The fixed-seed slice here runs in the normal test run; the slow test runs more seeds, and
``bench/bench_soundness.py`` runs thousands.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.models import make_model

from .judge import judge
from .tables import ALGOS, random_case

#: the algorithms of the normal run's slice: each on its own seeds, tables of at most 7 people
SLICE_ALGOS = ("gg", "rgg", "sg", "mondrian", "full-domain", "full-domain-search", "anatomy", "base-ana",
               "set-anatomy", "generalized-anatomy", "gg-ana", "mask", "art", "injector")
SLICE = [(a, s) for a in SLICE_ALGOS for s in range(3)]


def _check(case, budget: int) -> None:
    out = judge(case, budget=budget)
    assert out.status != "error", out.explain()
    assert not out.false_pass, out.explain()
    assert not out.disagreement, out.explain()
    assert not out.replay_wrong, out.explain()


@pytest.mark.parametrize("algorithm, seed", SLICE)
def test_certificate_is_sound_on_a_random_tiny_table(algorithm, seed):
    _check(random_case(seed, algorithm, max_n=7, ), budget=20_000)


def test_full_domain_search_with_suppression_reads_back():
    """The replay's re-run applied in memory (nothing suppressed) and from the saved files
    (which do not say how many were suppressed) differently; it is now decided on the budget."""
    _check(random_case(2, "full-domain-search", max_n=7, params={"max_suppression": 0.2}), budget=20_000)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", sorted(ALGOS))
def test_certificate_is_sound_on_more_tables(algorithm):
    for seed in range(100, 112):
        _check(random_case(seed, algorithm, max_n=8), budget=60_000)


@pytest.mark.parametrize("seed", [2, pytest.param(7, marks=pytest.mark.slow)])
def test_gg_tail_class_among_people_with_equal_qis(seed):
    """Five people with equal QIs and distinct values, GG (2-diversity, buckets of one row,
    ties at random): a group of two closes, then one of two, and the last row — a tail that
    cannot hold alone — merges back into it, a class of three. The replay arranged the run's
    classes by number and placed the class of two last: the class of three, then not the
    table's last, could only have closed at its second row — no world, so its people were
    unresolved in memory while the saved files (seated otherwise) passed. A class whose
    members share their QIs has its frequency under random ties (permuting its values and the
    secret order alike publishes the same files), whichever arrangement is taken; the brute
    force over every world and tie order agrees, and the two certificates are the same."""
    from .tables import Case

    frame = pd.DataFrame({"zip": ["z"] * 5, "disease": ["a", "b", "c", "d", "e"]})
    case = Case(frame, ["zip"], "gg", {"bucket_size": 1}, "l=2", "distinct-l", max_risk=0.5, seed=seed, trees={})
    release = make_algorithm("gg", model=make_model("l=2"), seed=seed, bucket_size=1).anonymize(case.table())
    g = release.partition.group
    assert sorted(np.bincount(g).tolist()) == [2, 3] and g[0] == np.bincount(g).argmax()  # the class of 3 first
    out = judge(case, budget=20_000)
    assert out.status == "done" and out.brute, out.explain()
    assert out.unresolved == 0 and out.verdict == "pass", out.explain()
    assert not out.false_pass and not out.disagreement and not out.replay_wrong, out.explain()


@pytest.mark.slow
def test_generalized_gg_read_back_moves_the_value_with_the_seat():
    """A generalized GG release read from its files: the seating put people with equal QIs
    into the classes GG could have made (``settle_ties``) but left each with the value of the
    published row first matched to them — a class of {flu, hiv} seated as {hiv, hiv}, and a
    person certain of hiv (1.0 from the files, 1/2 in memory and by the brute force). The
    published row now moves with the seat."""
    _check(random_case(35, "gg"), budget=60_000)


def test_a_search_that_rarely_rules_out_its_preferred_nodes_is_bounded_not_unresolved():
    """Full-domain search with a budget (seed 152: five people, l = 2): fewer than half of the
    arrangements drawn rule out the node it could have preferred, so the figures at least double.
    Their bound is stated (capped at 1) instead of leaving everyone unresolved, and it lies above
    the brute force (judge (c)); the release fails its 0.4 target."""
    case = random_case(152)
    assert case.algorithm == "full-domain-search" and case.params.get("max_suppression")
    out = judge(case, budget=20_000)
    assert out.brute and out.unresolved == 0 and out.verdict == "fail", out.explain()
    assert not out.replay_wrong and not out.false_pass and not out.disagreement, out.explain()
