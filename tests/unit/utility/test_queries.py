"""COUNT-query estimators against brute-force per-row probability sums (hypothesis)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.hierarchy import builders
from openbook.release import Partition, build_release
from openbook.utility.metrics import view_from_partition, view_from_release
from openbook.utility.queries import (
    answer_all,
    average_relative_error,
    correlated_subsets,
    estimate_answers,
    exact_answers,
    independence_estimates,
    make_workload,
    relative_errors,
)

CITY = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "b3": "B", "A": "*", "B": "*"}


def random_table(seed, n):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(20, 30, n),
        "city": rng.choice(["a1", "a2", "b1", "b2", "b3"], n),
        "sex": rng.choice(["M", "F"], n),
        "sa": rng.choice(list("uvwxy"), n),
    })
    schema = Schema.build(qi=["age:numeric", "city", "sex"], sa="sa")
    return encode(df, schema, {"city": builders.from_mapping(CITY, "city")})


def brute_exact(wl, t):
    qi, sa = t.qi_codes, t.sa_codes
    out = np.zeros(wl.n)
    for q in range(wl.n):
        ok = wl.sa_set[q, sa].copy()
        for j in range(qi.shape[1]):
            ok &= wl.qi_sets[j][q, qi[:, j]]
        out[q] = ok.sum()
    return out


def brute_generalized(wl, t, part):
    """Σ_rows Π_j |V_j ∩ L_j(row)| / |L_j(row)| × [row.S ∈ V_s], L over the active values."""
    out = np.zeros(wl.n)
    rows = np.flatnonzero(part.group >= 0)
    members = {g: np.flatnonzero(part.group == g) for g in range(part.n_groups)}
    for r in rows:
        g = part.group[r]
        sets = []
        for j, name in enumerate(t.qi_names):
            codes = t.columns[name].codes
            active = np.unique(codes)
            if name == "age":  # range of the group's codes
                lo, hi = codes[members[g]].min(), codes[members[g]].max()
                L = active[(active >= lo) & (active <= hi)]
            else:
                h = t.hierarchy(name)
                L = np.intersect1d(np.flatnonzero(h.leaf_mask(h.lca(codes[members[g]]))), active)
            sets.append(L)
        for q in range(wl.n):
            p = float(wl.sa_set[q, t.sa_codes[r]])
            for j, L in enumerate(sets):
                p *= wl.qi_sets[j][q, L].mean()
            out[q] += p
    return out


def brute_bucketized(wl, t, part):
    """Σ_rows [row's QIs ∈ V] × (fraction of its group's SA values in V_s)."""
    out = np.zeros(wl.n)
    qi = t.qi_codes
    for r in np.flatnonzero(part.group >= 0):
        g = part.group[r]
        sa_g = t.sa_codes[part.group == g]
        for q in range(wl.n):
            ok = all(wl.qi_sets[j][q, qi[r, j]] for j in range(qi.shape[1]))
            if ok:
                out[q] += wl.sa_set[q, sa_g].mean()
    return out


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 40), n_groups=st.integers(1, 6),
       qd=st.integers(1, 3), sel=st.sampled_from([0.05, 0.3, 0.8]),
       mode=st.sampled_from(["expected", "per-attribute"]))
def test_estimators_match_brute_force(seed, n, n_groups, qd, sel, mode):
    t = random_table(seed, n)
    rng = np.random.default_rng(seed + 1)
    labels = rng.integers(-1 if n > 10 else 0, n_groups, n)
    labels[0] = 0
    part = Partition.from_labels(labels)
    wl = make_workload(t, n=15, qd=qd, sel=sel, mode=mode, seed=seed)
    act = exact_answers(wl, t)
    np.testing.assert_allclose(act, brute_exact(wl, t))
    gview = view_from_partition(t, part)
    np.testing.assert_allclose(estimate_answers(wl, gview, t), brute_generalized(wl, t, part), atol=1e-9)
    bview = view_from_partition(t, part, kind="bucketized")
    want_b = brute_bucketized(wl, t, part)
    np.testing.assert_allclose(estimate_answers(wl, bview, t), want_b, atol=1e-9)
    # the same from the published files
    rel = build_release(t, part, model=None)
    np.testing.assert_allclose(estimate_answers(wl, view_from_release(rel, t), t),
                               brute_generalized(wl, t, part), atol=1e-9)
    brel = build_release(t, part, model=None, kind="bucketized")
    act2, (est_b,) = answer_all(wl, t, [view_from_release(brel, t)])
    np.testing.assert_allclose(act2, act)
    np.testing.assert_allclose(est_b, want_b, atol=1e-9)


def test_singleton_groups_are_exact_and_one_group_is_independence():
    t = random_table(5, 30)
    wl = make_workload(t, n=50, qd=2, sel=0.3, seed=2)
    act = exact_answers(wl, t)
    single = Partition(np.arange(30), 30)
    for kind in ("generalized", "bucketized"):
        est = estimate_answers(wl, view_from_partition(t, single, kind=kind), t)
        np.testing.assert_allclose(est, act, atol=1e-9)
    # Base (one bucketized group): QI matches × overall SA fraction
    est = estimate_answers(wl, view_from_partition(t, Partition(np.zeros(30, int), 1), kind="bucketized"), t)
    qi_match = np.array([sum(all(wl.qi_sets[j][q, t.qi_codes[r, j]] for j in range(3)) for r in range(30))
                         for q in range(wl.n)])
    sa_frac = wl.sa_set[:, t.sa_codes].mean(axis=1)
    np.testing.assert_allclose(est, qi_match * sa_frac, atol=1e-9)


def test_selectivity_expected_mode_on_average():
    # under "expected", each predicate covers sel^(1/(qd+1)) of its active domain: on a table
    # with independent uniform columns, the mean true selectivity is near sel
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"a": rng.integers(0, 20, n), "b": rng.integers(0, 20, n), "s": rng.integers(0, 20, n)})
    t = encode(df, Schema.build(qi=["a:numeric", "b:numeric"], sa="s"))
    wl = make_workload(t, n=400, qd=2, sel=0.05, seed=1)
    frac = exact_answers(wl, t) / n
    # each predicate covers round(20 * 0.05^(1/3)) = 7 of 20 values -> 0.35^3 = 0.0429
    assert frac.mean() == pytest.approx(0.35 ** 3, abs=3 * frac.std() / np.sqrt(wl.n) + 1e-3)
    assert (wl.qi_sets[0].sum(axis=1) == 7).all() and (wl.sa_set.sum(axis=1) == 7).all()


def test_relative_errors_and_subsets():
    err, zero = relative_errors(np.array([1.0, 5.0, 3.0]), np.array([2.0, 0.0, 3.0]))
    assert zero == 1 and np.allclose(err, [0.5, 0.0])
    assert average_relative_error(np.array([3.0]), np.array([2.0])) == pytest.approx(0.5)
    subs = correlated_subsets(np.array([10.0, 1.0, 5.0, 0.0]), np.array([1.0, 10.0, 5.0, 1.0]), size=1)
    assert subs["above"].tolist() == [0] and subs["below"].tolist() == [1]
    t = random_table(1, 30)
    wl = make_workload(t, n=5, qd=3, sel=1.0, seed=0)
    assert np.allclose(independence_estimates(wl, t), 30.0)  # every predicate is the whole domain


def test_bad_parameters():
    t = random_table(1, 10)
    for kw in ({"qd": 4}, {"qd": 0}, {"sel": 0}, {"sel": 1.5}, {"mode": "x"}, {"n": 0}):
        with pytest.raises(ParameterError):
            make_workload(t, **kw)
