"""r-robustness audit (paper 003 Def. 1, §5 measures 3-4) against brute force."""

from itertools import permutations

import numpy as np
import pandas as pd
import pytest

from openbook.attacks.robustness import audit_groups, audit_release
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.inference.knowledge import mine_knowledge
from openbook.inference.theorem1 import delta_max, min_group_size


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 3, n).astype(str), "b": rng.integers(0, 2, n).astype(str)})
    p = np.where(df["a"] == "0", 0.6, 0.1)
    df["s"] = np.where(rng.random(n) < p, "x", rng.choice(["y", "z"], n))
    return encode(df, Schema.build(qi=["a", "b"], sa="s", sensitive_sets={"sx": ["x"]}))


def _brute(W, vals):
    N = len(vals)
    post = np.zeros((N, W.shape[1]))
    tot = 0.0
    for perm in set(permutations(vals)):
        w = np.prod([W[j, perm[j]] for j in range(N)])
        tot += w
        for j in range(N):
            post[j, perm[j]] += w
    return post / tot


def test_audit_equals_brute_force_worst_over_attribute_sets():
    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    rng = np.random.default_rng(1)
    group = rng.permutation(np.arange(tab.n_rows) % 20)  # 20 groups of 6
    sens = tab.sa_domain.sensitive_mask("sx")
    rep = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens)
    sa = tab.sa_codes
    for g in range(20):
        rows = np.flatnonzero(group == g)
        want = np.zeros(rows.size)
        for s in kn.sets:
            W = s.row_probs(tab.qi_codes[rows])
            post = _brute(W, tuple(sa[rows]))
            want = np.maximum(want, post[:, sens].max(axis=1) if (sens[sa[rows]]).any() else 0.0)
        np.testing.assert_allclose(rep.posterior[rows], want, atol=1e-12)
    assert rep.methods["exact"] + rep.methods["no_sensitive_value"] == 20
    assert rep.problematic_fraction == pytest.approx(rep.problematic[rep.sensitive].mean())


def test_sampled_groups_are_reported_and_close():
    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    group = np.arange(tab.n_rows) % 4  # 4 groups of 30
    sens = tab.sa_domain.sensitive_mask("sx")
    exact = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens)
    sampled = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens, max_states=10)
    assert sampled.methods["mcmc"] == 4 and exact.methods["exact"] == 4
    assert np.abs(sampled.posterior - exact.posterior).max() <= sampled.mcmc_bound


def test_bucketized_release_audit_matches_group_audit():
    from openbook.release import Partition, build_release

    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    group = np.arange(tab.n_rows) % 20
    rel = build_release(tab, Partition(group, 20), model=None, kind="bucketized")
    # the release's rows are in canonical order: row i came from input row source_rows[i]
    a = audit_release(rel, kn, r=2, sensitive=["x"], original_sa=tab.sa_codes[rel.source_rows])
    b = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=["x"])
    np.testing.assert_allclose(a.posterior, b.posterior[rel.source_rows], atol=1e-12)
    assert a.n_problematic == b.n_problematic
    assert a.to_dict()["n_problematic"] == b.n_problematic


def test_delta_max_limits_and_errors():
    assert float(delta_max(5, 5, 0.3)) == 0.0  # N = r: all equal
    assert float(delta_max(10**9, 2, 0.3)) == pytest.approx(0.3, rel=1e-6)  # N -> inf: f_max
    assert float(delta_max(10, 2, 1.0)) == 0.0
    assert np.isinf(min_group_size(0.3, 0.3, 2))
    assert min_group_size(0.0, 0.3, 2.5) == 3
    tab = _table()
    kn = mine_knowledge(tab)
    with pytest.raises(ParameterError):
        audit_groups(kn, tab.qi_codes, tab.sa_codes, np.zeros(tab.n_rows, int), r=1)
    with pytest.raises(ParameterError):
        audit_groups(kn, tab.qi_codes, tab.sa_codes, np.zeros(tab.n_rows, int), r=2, sensitive=["nope"])


def test_groups_beyond_every_method_are_unresolved_not_safe(monkeypatch):
    """A group no exact DP fits and too large for the sampler is reported unresolved: NaN
    posteriors, counted, and the release is not called robust."""
    import openbook.attacks.robustness as rob

    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    group = np.arange(tab.n_rows) % 4  # 4 groups of 30
    sens = tab.sa_domain.sensitive_mask("sx")
    monkeypatch.setattr(rob, "AUDIT_MAX_SAMPLED_ROWS", 20)
    rep = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens, max_states=10)
    assert rep.methods["unresolved"] == 4 and rep.methods["mcmc"] == 0
    assert rep.n_unresolved == tab.n_rows and np.isnan(rep.posterior).all()
    assert not rep.robust and np.isnan(rep.problematic_fraction)


def test_every_value_sensitive_equals_brute_force_with_both_dps():
    """Groups holding several sensitive values (every value sensitive: the row-type DP runs
    over every column, not only the first) against enumeration, with budgets that force the
    value DP, the row-type DP, and whichever is cheaper."""
    tab = _table(n=96, seed=4)
    kn = mine_knowledge(tab, min_support=4)
    group = np.random.default_rng(5).permutation(np.arange(tab.n_rows) % 12)  # 12 groups of 8
    sa = tab.sa_codes
    want = np.zeros(tab.n_rows)
    for g in range(12):
        rows = np.flatnonzero(group == g)
        for s in kn.sets:
            post = _brute(s.row_probs(tab.qi_codes[rows]), tuple(sa[rows]))
            want[rows] = np.maximum(want[rows], post.max(axis=1))
    for max_states in (10**6, 40, 12):
        rep = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, max_states=max_states)
        done = rep.methods["pairs"]["value_dp"] + rep.methods["pairs"]["row_type_dp"]
        if rep.methods["mcmc"] == 0:
            np.testing.assert_allclose(rep.posterior, want, atol=1e-12)
            assert done == 12 * len(kn.sets) and rep.mcmc_bound == 0.0
            np.testing.assert_array_equal(rep.bound, rep.posterior)
        else:  # sampled sets: the estimate is near, the stated bound above the exact value
            assert (rep.bound >= want - 1e-12).all()
            assert np.abs(rep.posterior - want).max() <= rep.mcmc_bound


def test_sampled_audit_bounds_the_exact_posterior_and_is_seeded():
    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    group = np.arange(tab.n_rows) % 4  # 4 groups of 30
    sens = tab.sa_domain.sensitive_mask("sx")
    exact = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens)
    a = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens, max_states=10, seed=3)
    b = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, sensitive=sens, max_states=10, seed=3)
    assert a.methods["pairs"]["sampled"] > 0
    np.testing.assert_array_equal(a.posterior, b.posterior)
    assert (a.bound >= exact.posterior - 1e-12).all() and (a.set_bound >= exact.set_posterior - 1e-12).all()
    assert (a.bound >= a.posterior).all() and a.mcmc_bound == pytest.approx((a.bound - a.posterior).max())


def test_a_group_without_a_world_of_positive_weight_is_unresolved():
    """Knowledge says every tuple with a = 0 holds x; a group of two such tuples published
    with the values {y, y} has no possible world: unresolved, never 'safe'."""
    df = pd.DataFrame({"a": ["0"] * 6 + ["1"] * 6, "s": ["x"] * 6 + ["y"] * 6})
    tab = encode(df, Schema.build(qi=["a"], sa="s"))
    kn = mine_knowledge(tab, min_support=1)
    sa = tab.sa_codes.copy()
    sa[[0, 1]] = sa[6]  # rows 0, 1 (a = 0) published with y
    group = np.full(tab.n_rows, -1)
    group[[0, 1]] = 0
    group[[2, 3]] = 1
    rep = audit_groups(kn, tab.qi_codes, sa, group, r=2)
    assert rep.methods["unresolved"] == 1 and rep.n_unresolved == 2
    assert np.isnan(rep.posterior[[0, 1]]).all() and (rep.posterior[[2, 3]] == 1.0).all()
    assert not rep.robust


def test_progress_bars_on_a_terminal_change_nothing(monkeypatch):
    """The exact kernel and the sampler run in steps under a progress bar on a terminal; the
    figures are those of a run without it."""
    from openbook import progress

    tab = _table()
    kn = mine_knowledge(tab, min_support=5)
    group = np.arange(tab.n_rows) % 4
    quiet = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, max_states=10)
    monkeypatch.setattr(progress, "enabled", lambda: True)
    drawn = audit_groups(kn, tab.qi_codes, tab.sa_codes, group, r=2, max_states=10)
    np.testing.assert_array_equal(quiet.posterior, drawn.posterior)
    np.testing.assert_array_equal(quiet.bound, drawn.bound)
