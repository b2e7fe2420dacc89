"""Re-identification risk: known answers on tiny hand-computed tables for every measure and
estimator (exact fractions), a property test against a plain-Python reference on random tables
(with and without a population table), the population matching against a brute-force count,
the special functions and posteriors against mpmath and direct summation, and the SNB moment
equations against direct summation. The truth on Adult: ``test_reidentification_truth.py``."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import special

from openbook.attacks import population as pm, reidentification as rid
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import DataError, ParameterError


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
    """Without a population table the journalist figures are upper bounds, never above the
    prosecutor's (F ≥ f); 8 records say next to nothing of a population of 16, so they reach
    them. The old expectation f/π (risks 1/(2f), highest 0.5) is gone from the headline."""
    r = rid.reidentification_risk(_table(), sampling_fraction=0.5, threshold=0.4)
    s = r.summary()
    assert np.all(r.journalist <= r.prosecutor)
    assert s["journalist"] == s["prosecutor"] and s["marketer"]["success_rate"] == 5 / 8
    assert s["journalist"]["highest_risk"] == 1.0  # not 1/(2·1)
    assert s["population_size"] == 16 and s["risk_model"]["journalist"].startswith("posterior bound")
    expected = s["risk_model"]["expected"]  # expectations are labelled as such, below the bound
    assert all(e["success_rate"] <= s["marketer"]["success_rate"] for e in expected.values())


def _population():
    """The population of ``_table()``'s 8 records: (30,F) x5, (30,M) x2, (40,F) x4, (50,M) x1,
    (60,F) x3, (70,M) x6 — N = 21; 'count' holds the people of each row."""
    return pd.DataFrame({"age": [30, 30, 40, 50, 60, 70], "sex": list("FMFMFM"), "count": [5, 2, 4, 1, 3, 6]})


def test_population_table_known_answers():
    """Journalist risk 1/F exactly: 1/5 x3, 1/2 x2, 1/4, 1/1, 1/3; above 0.4: the 1/2s and the 1
    (3/8); marketer (1/8)(3/5 + 2/2 + 1/4 + 1/1 + 1/3) = 191/480; population uniques 1/21."""
    pop = _population()
    per_person = pop.loc[pop.index.repeat(pop["count"]), ["age", "sex"]].reset_index(drop=True)
    for kw in ({"population": pop, "population_count": "count"}, {"population": per_person},
               {"population": pm.Population(pop, "count")}):
        r = rid.reidentification_risk(_table(), threshold=0.4, **kw)
        want = [Fraction(1, 5)] * 3 + [Fraction(1, 2)] * 2 + [Fraction(1, 4), Fraction(1, 1), Fraction(1, 3)]
        assert sorted(Fraction(x).limit_denominator(100) for x in r.journalist) == sorted(want)
        s = r.summary()
        assert s["journalist"]["highest_risk"] == 1.0 and s["journalist"]["records_at_risk"] == 3 / 8
        assert Fraction(s["marketer"]["success_rate"]).limit_denominator(1000) == Fraction(191, 480)
        assert s["population_size"] == 21 and s["sampling_fraction"] == 8 / 21
        assert s["population_uniqueness"]["exact"] == 1 / 21 and s["risk_model"]["journalist"].startswith("population")
    same = rid.class_size_summary([3, 2, 1, 1, 1], threshold=0.4, population=pm.Population(pop, "count"),
                                  classes=_freq_of(_table()))
    assert same["journalist"] == s["journalist"] and same["marketer"] == s["marketer"]


def _freq_of(table):
    from openbook.data.frequency import FrequencyTable

    freq = FrequencyTable.from_table(table)
    assert freq.weights.tolist() == [3, 2, 1, 1, 1]  # (30,F), (30,M), (40,F), (50,M), (60,F)
    return freq


def test_a_population_without_the_sample_is_refused_naming_the_value():
    pop = _population()
    with pytest.raises(DataError, match=r"no one in the population has age = 60\b"):
        rid.reidentification_risk(_table(), population=pop[pop["age"] != 60], population_count="count")
    with pytest.raises(DataError, match=r"no one in the population has \(age=60, sex='F'\)"):  # each value exists
        bad = pop.copy()
        bad.loc[bad["age"] == 60, "sex"] = "M"
        rid.reidentification_risk(_table(), population=bad, population_count="count")
    with pytest.raises(DataError, match=r"only 1 person in the population has \(age=30, sex='F'\), which 3"):
        fewer = pop.copy()
        fewer.loc[fewer["age"] == 30, "count"] = [1, 2]
        rid.reidentification_risk(_table(), population=fewer, population_count="count")
    with pytest.raises(DataError, match="no column 'sex'"):
        rid.reidentification_risk(_table(), population=pop[["age"]])
    with pytest.raises(ParameterError, match="population table gives the population size"):
        rid.reidentification_risk(_table(), population=pop, population_count="count", population_size=100)


def test_generalized_labels_against_a_brute_force_count():
    """A Mondrian release publishes ranges ``[lo-hi]``, single values and ``*``; F of a class is
    every person of the population whose age lies in its range and whose sex is under its
    label — counted here by parsing the labels, person by person. The population holds ages
    the sample lacks (the range covers them) and a sex value it lacks (only ``*`` covers it)."""
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.integers(20, 60, 80) * 2, "sex": rng.choice(list("FM"), 80),
                       "d": rng.choice(list("abc"), 80)})
    sample = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="d"))
    extra = pd.DataFrame({"age": rng.integers(30, 130, 300), "sex": rng.choice(list("FMX"), 300)})
    pop = pd.concat([df[["age", "sex"]], extra], ignore_index=True)
    rel = make_algorithm("mondrian", model=make_model("k=3"), seed=0).anonymize(sample)
    res = rid.reidentification_risk(rel, population=pop, original=sample)
    res_own = rid.reidentification_risk(rel, population=pop)  # labels read through the population's encoding

    def under(label, value, numeric):
        label = str(label)
        if label == "*":
            return True
        if numeric and label.startswith("["):
            lo, hi = label[1:-1].split("-")
            return float(lo) <= value <= float(hi)
        return float(label) == value if numeric else label == str(value)

    people = list(zip(pop["age"], pop["sex"]))
    for row in range(len(rel.data)):
        a, x = rel.data["age"].iloc[row], rel.data["sex"].iloc[row]
        want = sum(under(a, age, True) and under(x, sex, False) for age, sex in people)
        assert res.journalist[row] == res_own.journalist[row] == 1.0 / want
    assert (rel.data["age"].astype(str).str.startswith("[")).any()  # ranges were exercised


def test_no_population_figures_of_class_ids():
    with pytest.raises(ParameterError, match="published QI values"):
        rid.reidentification_risk(np.array([0, 0, 1]), population=_population())


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


def _reference(keys: list[tuple], threshold: float, population: list[tuple] | None = None) -> dict:
    """Plain Python over dicts: prosecutor risks, and with a population the exact journalist ones."""
    size = Counter(keys)
    n = len(keys)
    pros = [1 / size[k] for k in keys]
    out = {"pros": pros, "classes": len(size), "uniques": sum(1 for k in keys if size[k] == 1),
           "at_risk": sum(p > threshold for p in pros) / n}
    if population is not None:
        big = Counter(population)
        out["jour"] = [1 / big[k] for k in keys]
        out["j_at_risk"] = sum(1 / big[k] > threshold for k in keys) / n
        out["marketer"] = sum(size[k] / big[k] for k in size) / n
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from("xyz")), min_size=1, max_size=60),
       st.sampled_from([1.0, 0.5, 0.1]), st.sampled_from([0.1, 0.3, 0.5]), st.randoms(use_true_random=False),
       st.lists(st.tuples(st.integers(0, 6), st.sampled_from("xyzw")), max_size=40))
def test_against_a_plain_reference(rows, pi, threshold, rnd, others):
    df = pd.DataFrame(rows, columns=["a", "b"])
    df["s"] = "v"
    df.index = rnd.sample(range(1000, 1000 + 2 * len(df)), len(df))  # shuffled, non-default index
    t = encode(df, Schema.build(qi=["a:numeric", "b"], sa="s"))
    r = rid.reidentification_risk(t, sampling_fraction=None if pi == 1.0 else pi, threshold=threshold)
    keys = list(zip(df["a"], df["b"]))
    ref = _reference(keys, threshold)
    np.testing.assert_allclose(r.prosecutor, ref["pros"])
    s = r.summary()
    assert s["classes"] == ref["classes"] and s["sample_uniques"] == ref["uniques"]
    assert s["prosecutor"]["records_at_risk"] == pytest.approx(ref["at_risk"])
    # without a population table: never above the prosecutor (F >= f), equal to it when π = 1
    assert np.all(r.journalist <= r.prosecutor)
    for key in ("highest_risk", "records_at_risk", "success_rate"):
        assert s["journalist"][key] <= s["prosecutor"][key] + 1e-15
        if pi == 1.0:
            assert s["journalist"][key] == s["prosecutor"][key]
    assert s["marketer"]["success_rate"] == s["journalist"]["success_rate"]
    # with one: exact, against a count of the population's tuples
    population = keys + others
    pop = pd.DataFrame(population, columns=["a", "b"]).sample(frac=1.0, random_state=rnd.randrange(1000))
    rp = rid.reidentification_risk(t, threshold=threshold, population=pop)
    ref = _reference(keys, threshold, population)
    np.testing.assert_allclose(rp.journalist, ref["jour"], rtol=1e-15)
    sp = rp.summary()
    assert sp["journalist"]["records_at_risk"] == pytest.approx(ref["j_at_risk"], abs=1e-15)
    assert sp["marketer"]["success_rate"] == pytest.approx(ref["marketer"], rel=1e-14)
    assert sp["population_size"] == len(population)


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


# ---------------------------------------------------------------------------------------
# special functions, posteriors, K̂, and the exact estimators
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("x,h", [(0.3, 0.7), (500.3, 0.3), (1e6, 0.5), (3.2, 0.99), (0.01, 0.5), (12.0, 1e-5),
                                 (2e8, 0.35), (7.5, -0.4)])
def test_lgamma_ratio_against_mpmath(x, h):
    with mp.workdps(40):
        ref = mp.loggamma(mp.mpf(x) + mp.mpf(h)) - mp.loggamma(mp.mpf(x))
    for got in (pm.lgamma_ratio(x, h), pm.lgamma_ratio(np.array([x, x]), h)[1], pm._lgamma_ratio1(x, h)):
        assert got == pytest.approx(float(ref), rel=2e-15, abs=0)


@pytest.mark.parametrize("x,m", [(0.3, 5), (0.3, 5000), (700.5, 3000), (1e5, 10), (1e5, 1e4), (2.5, 1e8), (15.5, 17),
                                 (0.01, 16), (0.01, 17), (16.0, 1), (17.0, 0)])
def test_psi_and_trigamma_differences_against_mpmath(x, m):
    with mp.workdps(40):
        d1 = mp.digamma(mp.mpf(x) + m) - mp.digamma(x)
        d2 = mp.psi(1, x) - mp.psi(1, mp.mpf(x) + m)
    got = pm.psi_diffs(x, m)
    assert got[0] == pytest.approx(float(d1), rel=2e-15, abs=0)
    assert got[1] == pytest.approx(float(d2), rel=2e-15, abs=0)
    if x >= 16:
        tail = pm._series_tail(x, np.array([float(m), 3.0]))
        assert tail[0][0] == pytest.approx(float(d1), rel=2e-15, abs=0)
        assert tail[1][0] == pytest.approx(float(d2), rel=2e-15, abs=0)


def test_pitman_c_sums_against_mpmath():
    """C₁ = Σ_j c_j Σ_{i<j} 1/(i−α) and C₂ (its squares): a table for sizes up to 17, the
    series beyond."""
    sizes = np.array([1, 2, 3, 5, 16, 17, 18, 40, 1000, 123456])
    counts = np.array([50, 20, 7, 3, 2, 1, 1, 1, 1, 1])
    model = pm._Pitman(sizes, counts, int((sizes * counts).sum()))
    for a in (1e-9, 0.3, 0.7, 0.999999):
        with mp.workdps(40):
            x = 1 - mp.mpf(a)
            r1 = sum(int(c) * (mp.digamma(int(j) - 1 + x) - mp.digamma(x)) for j, c in zip(sizes, counts))
            r2 = sum(int(c) * (mp.psi(1, x) - mp.psi(1, int(j) - 1 + x)) for j, c in zip(sizes, counts))
        c1, c2 = model.csums(a)
        assert c1 == pytest.approx(float(r1), rel=2e-15) and c2 == pytest.approx(float(r2), rel=2e-15)


def test_pitman_posterior_is_the_beta_binomial():
    """P(F = f + x | f) against scipy's beta-binomial, E[1/F | f] against the full sum: exact
    for f = 1, an upper bound within 1 % for f ≥ 2 (the correction's tail beyond 64 terms is
    left in); F = f when the sample is the population."""
    from scipy import stats

    theta, alpha, n, N = 37.5, 0.6, 200, 3000
    sizes = np.array([1, 2, 3, 7, 40])
    pmf, e1 = pm.posterior(theta, alpha, sizes, n, N, 64)
    x = np.arange(N - n + 1)
    for i, f in enumerate(sizes):
        law = stats.betabinom(N - n, f - alpha, theta + n - f + alpha)
        np.testing.assert_allclose(pmf[i], law.pmf(x[:64]), rtol=1e-10)
        exact = float((law.pmf(x) / (f + x)).sum())
        assert e1[i] == pytest.approx(exact, rel=1e-10) if f == 1 else exact <= e1[i] <= exact * 1.01
    pmf, e1 = pm.posterior(theta, alpha, sizes, n, n)
    assert (pmf[:, 0] == 1).all() and np.array_equal(e1, 1 / sizes)


def test_snb_posterior_by_direct_summation():
    from scipy import stats

    a, b, pi = 0.7, 0.2, 0.1
    sizes = np.array([1, 2, 5])
    pmf, e1 = pm.snb_posterior(a, b, pi, sizes, 64)
    big = np.arange(1, 20000)
    prior = stats.nbinom(a, b).pmf(big - 1)
    for i, f in enumerate(sizes):
        post = prior * stats.binom(big, pi).pmf(f)
        post /= post.sum()
        np.testing.assert_allclose(pmf[i], post[f - 1:f - 1 + 64], rtol=1e-9)
        assert e1[i] == pytest.approx(float((post / big).sum()), rel=1e-9)


def test_threshold_size():
    assert [rid.threshold_size(t) for t in (0.2, 0.1, 0.5, 1.0, 0.25, 0.3, 0.05)] == [4, 9, 1, 0, 3, 3, 19]


def test_haas_sh3_by_hand():
    """sizes 1, 2, 3 with 4, 2, 1 classes, q = 1/4, in exact fractions: d + c₁ [Σ i q²(1−q²)^(i−1) c_i
    / Σ (1−q)^i((1+q)^i − 1) c_i] [Σ (1−q)^i c_i / Σ i q(1−q)^(i−1) c_i]²."""
    q = Fraction(1, 4)
    sizes, counts = [1, 2, 3], [4, 2, 1]
    a = sum(i * q * q * (1 - q * q) ** (i - 1) * c for i, c in zip(sizes, counts))
    b = sum((1 - q) ** i * ((1 + q) ** i - 1) * c for i, c in zip(sizes, counts))
    r = (sum((1 - q) ** i * c for i, c in zip(sizes, counts))
         / sum(i * q * (1 - q) ** (i - 1) * c for i, c in zip(sizes, counts)))
    want = 7 + 4 * a / b * r * r
    got = rid.haas_sh3(np.array(sizes), np.array(counts), 0.25)
    assert got == pytest.approx(float(want), rel=1e-14)
    # ARX's ModelSNB subtracts the 1 once per size: Σ [(1−q)^i c_i (1+q)^i − 1] — another number
    arx = sum((1 - q) ** i * c * (1 + q) ** i - 1 for i, c in zip(sizes, counts))
    assert float(7 + 4 * a / arx * r * r) != pytest.approx(got, rel=1e-3)
    est, fit = rid.snb(np.array(sizes), np.array(counts), 11, 44)
    assert fit.get("K") == pytest.approx(rid.haas_sh3(np.array(sizes), np.array(counts), 0.25), rel=1e-15)


def test_zayatz_exact_on_a_large_population():
    """log-space sum against 50-digit binomials, N = 10^8 (scipy's hypergeom lost digits there)."""
    sizes, counts = np.array([1, 2, 3, 9, 250]), np.array([300, 60, 20, 5, 1])
    n, N = int((sizes * counts).sum()), 100_000_000
    with mp.workdps(50):
        h = [int(j) * mp.binomial(N - int(j), n - 1) / mp.binomial(N, n) for j in sizes]
        share = 300 * h[0] / sum(int(c) * hj for c, hj in zip(counts, h))
        ref = 300 * share / (mp.mpf(n) / N)
    assert rid.zayatz(sizes, counts, n, N) == pytest.approx(float(ref), rel=1e-13, abs=0)


def test_pitman_fit_on_small_tables_against_mpmath():
    rng = np.random.default_rng(0)
    for size in (30, 300, 3000):
        f = rng.zipf(1.7, size=size)
        sizes, counts = rid.frequencies(f[f < 500])
        n = int((sizes * counts).sum())
        fit = pm.pitman_fit(sizes, counts, n)
        assert fit is not None and fit.interior
        with mp.workdps(50):
            K = int(counts.sum())

            def score(t, a):
                a1 = (mp.digamma(t / a + K) - mp.digamma(t / a + 1)) / a
                c1 = sum(int(c) * (mp.digamma(int(j) - a) - mp.digamma(1 - a)) for j, c in zip(sizes, counts))
                return [a1 - (mp.digamma(t + n) - mp.digamma(t + 1)), ((K - 1) - t * a1) / a - c1]

            t, a = mp.findroot(score, (mp.mpf(fit.theta), mp.mpf(fit.alpha)))
        assert fit.theta == pytest.approx(float(t), rel=1e-12, abs=0)
        assert fit.alpha == pytest.approx(float(a), rel=1e-12, abs=0)


def test_highest_risk_is_one_when_the_model_leaves_room_for_population_uniques():
    """Many sample uniques, a large population: the Pitman model expects some of them to be
    population uniques, so the highest journalist risk is 1 (f/π said 1/(f/π) = π)."""
    rng = np.random.default_rng(3)
    f = np.minimum(rng.zipf(1.8, size=2000), 300)
    n = int(f.sum())
    s = rid.class_size_summary(f, population_size=50 * n)
    assert s["sample_uniques"] > 100 and s["journalist"]["highest_risk"] == 1.0
    assert 0 < s["journalist"]["records_at_risk"] < s["prosecutor"]["records_at_risk"]
    # a k-anonymous table (no class under 5) cannot have a risk above 1/5
    s5 = rid.class_size_summary(np.maximum(f, 5), population_size=50 * n)
    assert s5["journalist"]["highest_risk"] <= 0.2 and s5["journalist"]["records_at_risk"] == 0.0


def test_summary_from_class_sizes_equals_the_table_summary():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.integers(0, 30, 3000), "b": rng.choice(list("pqrs"), 3000), "s": "v"})
    t = encode(df, Schema.build(qi=["a:numeric", "b"], sa="s"))
    for kw in ({}, {"sampling_fraction": 0.1}, {"population_size": 1e6}):
        r = rid.reidentification_risk(t, **kw)
        assert rid.class_size_summary(r.class_size, **kw) == r.summary()


# ---------------------------------------------------------------------------------------
# openbook check --population FILE
# ---------------------------------------------------------------------------------------
def test_check_population_file(tmp_path, capsys):
    import json

    from openbook.cli import main

    df = pd.DataFrame({"age": [30, 30, 30, 30, 30, 40, 50, 60], "sex": list("FFFMMFMF"), "d": list("abcabcab")})
    df.to_csv(tmp_path / "people.csv", index=False)
    _population().to_csv(tmp_path / "pop.csv", index=False)
    base = ["check", str(tmp_path / "people.csv"), "--qi", "age:numeric,sex", "--sa", "d", "--json",
            "--reid-threshold", "0.4"]
    outs = []
    for extra in ([], ["--batch-rows", "3"]):
        assert main([*base, "--population", str(tmp_path / "pop.csv"), *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out)["identity"])
    assert outs[0] == outs[1]
    ident = outs[0]
    assert ident["journalist"]["records_at_risk"] == 3 / 8 and ident["population_size"] == 21
    assert Fraction(ident["marketer"]["success_rate"]).limit_denominator(1000) == Fraction(191, 480)
    assert ident["risk_model"]["journalist"] == "population table (exact)"
    pd.DataFrame({"age": [30, 40, 50, 60], "sex": ["F"] * 4, "count": [9, 9, 9, 9]}).to_csv(tmp_path / "small.csv",
                                                                                         index=False)
    assert main([*base, "--population", str(tmp_path / "small.csv")]) == 2
    err = capsys.readouterr().err
    assert len([ln for ln in err.splitlines() if ln.startswith("openbook: error")]) == 1 and "sex = 'M'" in err
    assert main([*base, "--population", str(tmp_path / "pop.csv"), "--sampling-fraction", "0.5"]) == 2
    assert "population table gives the population size" in capsys.readouterr().err
