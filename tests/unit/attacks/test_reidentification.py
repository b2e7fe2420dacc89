"""Re-identification risk: known answers on tiny hand-computed tables for every measure and
estimator, a property test against a plain-Python reference on random tables, and the SNB
moment equations against direct summation."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from openbook.attacks import reidentification as rid
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError


def _table():
    # classes (by age, sex): (30,F) x3, (30,M) x2, (40,F) x1, (50,M) x1, (60,F) x1  -> n = 8
    df = pd.DataFrame({"age": [30, 30, 30, 30, 30, 40, 50, 60], "sex": list("FFFMMFMF"),
                       "d": list("abcabcab")})
    return encode(df, Schema.build(qi=["age:numeric", "sex"], sa="d"))


def test_known_answers_data_is_the_population():
    r = rid.reidentification_risk(_table(), threshold=0.4)
    s = r.summary()
    # prosecutor 1/f per record: 1/3 x3, 1/2 x2, 1 x3
    assert sorted(r.prosecutor.tolist()) == sorted([1 / 3] * 3 + [1 / 2] * 2 + [1.0] * 3)
    assert s["classes"] == 5 and s["sample_uniques"] == 3 and s["sample_uniqueness"] == 3 / 8
    assert s["prosecutor"]["highest_risk"] == 1.0
    assert s["prosecutor"]["records_at_risk"] == 5 / 8  # 1/2 and 1 exceed 0.4
    assert s["prosecutor"]["success_rate"] == 5 / 8  # classes / n
    assert s["journalist"] == s["prosecutor"]  # no population given
    assert s["marketer"]["success_rate"] == 5 / 8


def test_known_answers_sampling_fraction():
    r = rid.reidentification_risk(_table(), sampling_fraction=0.5, threshold=0.4)
    s = r.summary()
    # F̂ = f / π = 2f: journalist 1/(2f): 1/6 x3, 1/4 x2, 1/2 x3
    assert sorted(r.journalist.tolist()) == sorted([1 / 6] * 3 + [1 / 4] * 2 + [1 / 2] * 3)
    assert s["journalist"]["records_at_risk"] == 3 / 8
    # marketer: (1/n) Σ_classes f/F̂ = (1/8) * 5 * 1/2
    assert s["marketer"]["success_rate"] == pytest.approx(5 / 16)
    assert s["population_size"] == 16


def test_zayatz_by_hand():
    """c_1 = 3 of K = 5 classes (sizes 3, 2, 1, 1, 1), n = 8, N = 16:
    share = (3/5)·h(1) / [(3/5)·h(1) + (1/5)·h(2) + (1/5)·h(3)],
    h(i) = C(i,1)·C(16-i, 7)/C(16, 8); population uniques = c_1 · share / (8/16)."""
    def h(i):
        return Fraction(i * math.comb(16 - i, 7), math.comb(16, 8))

    share = Fraction(3, 5) * h(1) / (Fraction(3, 5) * h(1) + Fraction(1, 5) * h(2) + Fraction(1, 5) * h(3))
    want = 3 * share / Fraction(8, 16)
    sizes, counts = rid.frequencies(np.array([3, 2, 1, 1, 1]))
    assert rid.zayatz(sizes, counts, 8, 16) == pytest.approx(float(want), rel=1e-12)


def test_pitman_loglik_equals_the_sampling_formula_sum():
    """The closed form (gamma functions) equals the Pitman sampling formula's sums."""
    sizes, counts = np.array([1, 2, 5]), np.array([4, 2, 1])
    n, K = int((sizes * counts).sum()), int(counts.sum())
    for theta, alpha in ((1.5, 0.3), (20.0, 0.7), (-0.1, 0.5)):
        direct = (sum(math.log(theta + i * alpha) for i in range(1, K))
                  - sum(math.log(theta + i) for i in range(1, n))
                  + sum(c * sum(math.log(i - alpha) for i in range(1, j)) for j, c in zip(sizes, counts)))
        assert rid.pitman_loglik(theta, alpha, sizes, counts, n) == pytest.approx(direct, rel=1e-12)


def test_pitman_fit_is_a_maximum_and_the_estimate_is_hoshinos():
    rng = np.random.default_rng(0)
    f = rng.zipf(1.6, size=4000)
    sizes, counts = rid.frequencies(f[f < 200])
    n = int((sizes * counts).sum())
    N = 50 * n
    est, fit = rid.pitman(sizes, counts, n, N)
    assert fit["converged"] and est is not None
    t, a = fit["theta"], fit["alpha"]
    best = rid.pitman_loglik(t, a, sizes, counts, n)
    for dt, da in ((1e-3 * (abs(t) + 1), 0), (-1e-3 * (abs(t) + 1), 0), (0, 1e-4), (0, -1e-4)):
        assert rid.pitman_loglik(t + dt, a + da, sizes, counts, n) <= best + 1e-9
    assert est == pytest.approx(math.exp(special.gammaln(t + 1) - special.gammaln(t + a)) * N ** a, rel=1e-12)


def test_snb_moments_equal_direct_summation():
    """E[c_1], E[c_2] of the SNB model (sizes 1 + NegBin(a, b), Bernoulli(f) sampling) in
    closed form equal Σ_y P(Y=y) P(Binomial(1+y, f) = 1 or 2)."""
    from scipy import stats

    for K, f, a, b in ((1000, 0.3, 0.7, 0.4), (50, 0.05, 2.5, 0.8), (10, 0.9, 0.2, 0.1)):
        y = np.arange(0, 4000)
        py = stats.nbinom(a, b).pmf(y)
        e1 = K * (py * stats.binom(y + 1, f).pmf(1)).sum()
        e2 = K * (py * stats.binom(y + 1, f).pmf(2)).sum()
        got = rid.snb_expected(K, f, a, b)
        assert got[0] == pytest.approx(e1, rel=1e-9) and got[1] == pytest.approx(e2, rel=1e-9)


def test_snb_recovers_its_parameters_from_exact_moments():
    K, f, a, b = 2000.0, 0.2, 0.8, 0.3
    e1, e2 = rid.snb_expected(K, f, a, b)
    # build a histogram whose c_1, c_2 are the expected ones and whose Shlosser K is K
    sizes = np.array([1, 2, 3])
    counts = np.array([e1, e2, 50.0])
    n = int(round((sizes * counts).sum()))
    N = n / f
    est, fit = rid.snb(sizes, counts, n, N)
    assert fit["converged"]
    # with K̂ from Shlosser (not K), the fitted moments reproduce c_1 and c_2
    got = rid.snb_expected(fit["K"], f, fit["alpha"], fit["beta"])
    assert got[0] == pytest.approx(e1, rel=1e-6) and got[1] == pytest.approx(e2, rel=1e-6)
    assert est == pytest.approx(fit["K"] * fit["beta"] ** fit["alpha"], rel=1e-12)


def test_dankar_rule():
    rng = np.random.default_rng(1)
    f = rng.zipf(1.8, size=3000)
    cls = np.repeat(np.arange(f.size), np.minimum(f, 100))
    n = cls.size
    small = rid.population_uniqueness(np.bincount(cls), n, n / 0.05)
    assert small["dankar_model"] == ("pitman" if small["pitman"] is not None else "zayatz")
    big = rid.population_uniqueness(np.bincount(cls), n, n / 0.5)
    cand = {k: big[k] for k in ("zayatz", "snb") if big[k] is not None}
    assert big["dankar"] == min(cand.values()) if "snb" in cand else big["dankar_model"] == "zayatz"
    none = rid.population_uniqueness(np.array([2, 3, 4]), 9, 90)
    assert none["dankar"] == 0.0


def test_bucketized_release_says_identity_is_disclosed():
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    rel = make_algorithm("anatomy", model=make_model("l=2"), seed=0).anonymize(_table())
    r = rid.reidentification_risk(rel)
    assert r.exact_qis_published and any("identity is disclosed by design" in n for n in r.notes)
    assert r.summary()["sample_uniques"] == 3  # the exact QIs' uniques


def test_bad_population_inputs():
    with pytest.raises(ParameterError):
        rid.reidentification_risk(_table(), population_size=10, sampling_fraction=0.5)
    with pytest.raises(ParameterError):
        rid.reidentification_risk(_table(), population_size=3)
    with pytest.raises(ParameterError):
        rid.reidentification_risk(_table(), sampling_fraction=1.5)


def _reference(keys: list[tuple], pi: float, threshold: float) -> dict:
    """Plain Python over dicts."""
    size = Counter(keys)
    n = len(keys)
    pros = [1 / size[k] for k in keys]
    jour = [1 / max(size[k], size[k] / pi) for k in keys]
    return {"pros": pros, "jour": jour, "classes": len(size), "uniques": sum(1 for k in keys if size[k] == 1),
            "at_risk": sum(p > threshold for p in pros) / n,
            "marketer": sum(size[k] / max(size[k], size[k] / pi) for k in size) / n}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from("xyz")), min_size=1, max_size=60),
       st.sampled_from([1.0, 0.5, 0.1]), st.sampled_from([0.1, 0.3, 0.5]), st.randoms(use_true_random=False))
def test_against_a_plain_reference(rows, pi, threshold, rnd):
    df = pd.DataFrame(rows, columns=["a", "b"])
    df["s"] = "v"
    df.index = rnd.sample(range(1000, 1000 + 2 * len(df)), len(df))  # shuffled, non-default index
    t = encode(df, Schema.build(qi=["a:numeric", "b"], sa="s"))
    r = rid.reidentification_risk(t, sampling_fraction=None if pi == 1.0 else pi, threshold=threshold)
    ref = _reference(list(zip(df["a"], df["b"])), pi, threshold)
    np.testing.assert_allclose(r.prosecutor, ref["pros"])
    np.testing.assert_allclose(r.journalist, ref["jour"])
    s = r.summary()
    assert s["classes"] == ref["classes"] and s["sample_uniques"] == ref["uniques"]
    assert s["prosecutor"]["records_at_risk"] == pytest.approx(ref["at_risk"])
    assert s["marketer"]["success_rate"] == pytest.approx(ref["marketer"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=200), st.sampled_from([0.01, 0.1, 0.3, 0.8]))
def test_estimators_never_crash_and_stay_in_range(class_sizes, pi):
    sizes = np.asarray(class_sizes)
    n = int(sizes.sum())
    out = rid.population_uniqueness(sizes, n, n / pi)
    for k in ("zayatz", "pitman", "snb", "dankar"):
        v = out.get(k)
        assert v is None or 0.0 <= v <= 1.0, (k, v)
    assert out["dankar"] is not None or not (sizes == 1).any()
