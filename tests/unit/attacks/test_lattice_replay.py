"""Full-domain search replayed by its decisions (:mod:`openbook.attacks.replay.lattice`): when
every node the search could have preferred over the published one fails in every world, no
world is excluded and the exact posterior is the class frequency; otherwise each world is
weighed by whether the search, given which nodes satisfy, chooses the published node — both
checked against a brute force over every world re-running the search (exactly, and sampled
within 4 standard errors); with a suppression budget, the same when the absent people's
values range over everything (else unresolved), and under t-closeness no adversary knows it."""

from __future__ import annotations

import numpy as np
import pytest
from test_replay import _table, brute_force

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.replay import replay_attack
from openbook.attacks.replay.lattice import preferred_nodes_fail
from openbook.errors import OpenbookError
from openbook.models import make_model

MODELS = ["l=2", "simple-l=2,set=s", "k=2", "simple-l=3,set=s,set-mode=total", "alpha=0.6"]


@pytest.mark.parametrize("seed", range(3))
def test_decided_releases_are_the_class_frequency_of_the_brute_force(seed):
    rng = np.random.default_rng(seed)
    decided = declined = 0
    while decided < 40:
        n = int(rng.integers(4, 8))
        n_sa = int(rng.integers(2, 4))
        t = _table(rng.integers(0, 3, size=(n, 2)), rng.integers(0, n_sa, size=n), n_sa)
        algo = make_algorithm("full-domain-search", model=make_model(MODELS[int(rng.integers(len(MODELS)))]))
        try:
            part = algo.partition(t)
        except OpenbookError:
            continue
        levels = algo.release_levels()  # the published node (the brute force re-runs the search: it moves)
        ok, why = preferred_nodes_fail(algo, t, part.group, levels)
        masks = np.eye(n_sa, dtype=bool)
        bf = brute_force(algo, t, part.group, masks, "generalized")
        res = replay_attack(t, part.group, algo, targets=([str(i) for i in range(n_sa)], masks), kind="generalized",
                            levels=levels)
        np.testing.assert_allclose(res.posterior, bf, rtol=0, atol=1e-12)  # either way, the replay is exact here
        if ok:
            counts = t.group_sa_counts(part.group, part.n_groups).astype(float)
            freq = (counts / counts.sum(axis=1, keepdims=True))[part.group]
            np.testing.assert_allclose(bf, freq, rtol=0, atol=1e-12)  # no world excluded: the class frequency
            decided += 1
        else:
            declined += 1
            assert "could satisfy" in why
    assert declined > 0  # the check also meets releases it cannot decide


def _undecided(rng, n_lo=5, n_hi=8):
    """A random tiny table and its full-domain-search release (ℓ = 2) where some node the
    search could have preferred satisfies in some world: ``(table, algo, partition, levels)``."""
    for _ in range(1000):
        n = int(rng.integers(n_lo, n_hi))
        t = _table(rng.integers(0, 3, size=(n, 2)), rng.integers(0, 3, size=n), 3)
        algo = make_algorithm("full-domain-search", model=make_model("l=2"))
        try:
            part = algo.partition(t)
        except OpenbookError:
            continue
        levels = algo.release_levels()
        if not preferred_nodes_fail(algo, t, part.group, levels)[0]:
            return t, algo, part, levels
    raise AssertionError("no undecided release found")


def test_undecided_releases_are_weighed_by_the_searchs_decisions_sampled_within_four_se():
    """When a node the search could have preferred satisfies in some world, each world is
    weighed by whether the search, given which nodes satisfy, chooses the published node —
    sampled here (forced), within 4 standard errors of the brute force everywhere."""
    rng = np.random.default_rng(5)
    for _ in range(8):
        t, algo, part, levels = _undecided(rng)
        masks = np.eye(3, dtype=bool)
        bf = brute_force(algo, t, part.group, masks, "generalized")
        res = replay_attack(t, part.group, algo, targets=(["0", "1", "2"], masks), kind="generalized",
                            levels=levels, force_sample=True, worlds=4000, seed=int(rng.integers(1 << 30)))
        assert not res.unresolved_mask().any()
        assert (np.abs(res.posterior - bf) <= 4 * res.stderr + 1e-9).all()
        assert res.stderr.max() > 0  # sampled


def test_with_a_budget_under_t_closeness_no_adversary_knows_the_search():
    """Under t-closeness every class is judged against a distribution the withheld people's
    values are part of: the trait says no adversary knows the search with a budget, and the
    certificate fails with that reason — even when nobody was suppressed (the files show the
    budget, not whether it was used)."""
    from openbook.certificate import certify

    rng = np.random.default_rng(2)
    for _ in range(200):
        t = _table(rng.integers(0, 3, size=(7, 2)), rng.integers(0, 3, size=7), 3)
        algo = make_algorithm("full-domain-search", model=make_model("t=0.4"), max_suppression=0.2)
        try:
            rel = algo.anonymize(t)
        except OpenbookError:
            continue
        if rel.meta["n_suppressed"]:
            continue
        cert = certify(rel, original=t, max_risk=1.0, max_reid_risk=1.0)
        assert cert.aware["adversary"] is None and "suppression budget" in cert.aware["reason"]
        assert cert.verdict == "fail"
        return
    raise AssertionError("no release without suppression found")


def test_a_unit_too_large_to_weigh_at_once_is_unresolved_not_a_memory_error(monkeypatch):
    """The decisions' unit spans the whole table (one cell a row); its drawn worlds are held
    at once, so past a bound of entries it is unresolved with the reason, never an
    allocation of gigabytes."""
    from openbook.attacks.replay import solve

    monkeypatch.setattr(solve, "_LIKELIHOOD_ENTRIES", 10.0)
    t, algo, part, levels = _undecided(np.random.default_rng(5), 7, 8)
    res = replay_attack(t, part.group, algo, levels=levels, force_sample=True, worlds=100)
    assert res.unresolved_mask().all()
    assert "too many to weigh at once" in res.notes["unresolved"][0]["reason"]


def test_the_acceptance_bound_is_wilsons_lower_bound():
    """The lower bound on P(every preferred node ruled out) that scales a search's figures:
    0 with no accepted world, ``n / (n + z²)`` with every world accepted (Wilson at p = 1),
    below the observed share and rising towards it with more worlds."""
    from openbook.attacks.replay.lattice import BOUND_Z, _wilson_low

    assert _wilson_low(0, 2000, BOUND_Z) == 0.0
    assert _wilson_low(2000, 2000, BOUND_Z) == pytest.approx(2000 / (2000 + BOUND_Z**2), rel=1e-12)
    lows = [_wilson_low(n // 2, n, BOUND_Z) for n in (100, 1000, 10_000)]
    assert all(x < 0.5 for x in lows) and lows == sorted(lows)


def test_the_search_analysis_is_shared_only_for_the_same_table():
    """The replay and the absent people's posterior share one analysis of the search per
    release; another table with the same QIs and grouping (other SA values) gets its own —
    never a stale one, even were the first table freed and its id reused."""
    import gc

    from openbook.attacks.replay.lattice import search_of

    t, algo, part, levels = _undecided(np.random.default_rng(7))
    first = search_of(algo, t, part.group, levels)
    assert search_of(algo, t, part.group, levels) is first
    other = _table(np.column_stack([t.columns[n].codes for n in t.qi_names]), (t.sa_codes + 1) % 3, 3)
    second = search_of(algo, other, part.group, levels)
    assert second is not first and second.lat.data is not first.lat.data
    del t, first
    gc.collect()
    again = _table(np.column_stack([other.columns[n].codes for n in other.qi_names]), other.sa_codes, 3)
    assert search_of(algo, again, part.group, levels) is not second
