"""Identity-disclosure figures against the truth: subsamples of UCI Adult with the full 45,222-row
Adult as their population, so every ``F_j`` is known.

* with the population table, every figure equals the truth, counted here by brute force (a
  plain ``Counter`` of QI tuples, no openbook grouping);
* without it, the highest journalist risk, the share of records above the threshold and the
  marketer risk are at or above the truth — and not the prosecutor's figures in disguise;
* the estimators equal a 50-digit mpmath solution to 1e-12; Haas et al.'s ``D_Sh3`` estimates
  the number of population classes better than Shlosser's estimator.
"""

from __future__ import annotations

from collections import Counter

import mpmath as mp
import numpy as np
import pytest

from openbook.attacks import reidentification as rid

PIS = (0.01, 0.05, 0.1, 0.2, 0.5)
SEEDS = (0, 1, 2)
#: the US civilian non-institutional population aged 16+, 1994 (BLS)
US_1994 = 196_814_000


@pytest.fixture(scope="module")
def adult(adult_dir):
    from openbook.data.datasets import load_dataset

    ds = load_dataset("adult")
    table = ds.encode()
    frame = table.to_frame()[table.qi_names]
    keys = list(zip(*(frame[c].tolist() for c in table.qi_names)))
    size = Counter(keys)  # brute force: the population class of every person
    big_f = np.array([size[k] for k in keys])
    return {"ds": ds, "table": table, "frame": frame, "keys": keys, "size": size, "F": big_f, "N": table.n_rows}


def _sample(adult, pi, seed):
    rng = np.random.default_rng(seed)
    rows = rng.choice(adult["N"], int(round(pi * adult["N"])), replace=False)
    return rows, adult["table"].take(rows)


def _truth(adult, rows, threshold):
    """Brute force: ``F`` of every sampled person, and the three figures."""
    big_f = adult["F"][rows]
    f = Counter(adult["keys"][r] for r in rows)
    marketer = sum(fk / adult["size"][k] for k, fk in f.items()) / rows.size
    return {"highest_risk": 1.0 / big_f.min(), "records_at_risk": float((1.0 / big_f > threshold).mean()),
            "success_rate": marketer, "per_record": 1.0 / big_f}


@pytest.mark.parametrize("pi", PIS)
@pytest.mark.parametrize("seed", SEEDS)
def test_population_table_gives_the_truth_exactly(adult, pi, seed):
    rows, sample = _sample(adult, pi, seed)
    truth = _truth(adult, rows, 0.2)
    res = rid.reidentification_risk(sample, population=adult["frame"])
    np.testing.assert_array_equal(res.journalist, truth["per_record"])
    s = res.summary()
    assert s["journalist"]["highest_risk"] == truth["highest_risk"]
    assert s["journalist"]["records_at_risk"] == pytest.approx(truth["records_at_risk"], abs=1e-15)
    assert s["marketer"]["success_rate"] == pytest.approx(truth["success_rate"], rel=1e-13)
    assert s["population_size"] == adult["N"] and s["risk_model"]["journalist"] == "population table (exact)"
    assert s["population_uniqueness"]["exact"] == pytest.approx(9892 / 45222, rel=1e-15)


@pytest.mark.parametrize("pi", PIS)
@pytest.mark.parametrize("seed", SEEDS)
def test_bounds_are_at_or_above_the_truth(adult, pi, seed):
    rows, sample = _sample(adult, pi, seed)
    truth = _truth(adult, rows, 0.2)
    s = rid.reidentification_risk(sample, population_size=adult["N"]).summary()
    j = s["journalist"]
    assert j["highest_risk"] >= truth["highest_risk"]
    assert j["records_at_risk"] >= truth["records_at_risk"]
    assert s["marketer"]["success_rate"] >= truth["success_rate"]
    assert s["risk_model"]["journalist"].startswith("posterior bound")
    assert any("upper bounds" in n for n in s["notes"])
    if pi >= 0.05:  # informative: within 0.12 of the truth (measured: 0.06 above on average at π = 0.05)
        assert j["records_at_risk"] <= truth["records_at_risk"] + 0.12
        assert s["marketer"]["success_rate"] <= truth["success_rate"] + 0.12
        assert j["records_at_risk"] < s["prosecutor"]["records_at_risk"]
        assert s["marketer"]["success_rate"] < s["prosecutor"]["success_rate"]


@pytest.mark.parametrize("threshold", [0.05, 0.5])
def test_bounds_at_other_thresholds(adult, threshold):
    rows, sample = _sample(adult, 0.2, 3)
    truth = _truth(adult, rows, threshold)
    s = rid.reidentification_risk(sample, population_size=adult["N"], threshold=threshold).summary()
    assert s["journalist"]["records_at_risk"] >= truth["records_at_risk"]
    exact = rid.reidentification_risk(sample, population=adult["frame"], threshold=threshold).summary()
    assert exact["journalist"]["records_at_risk"] == pytest.approx(truth["records_at_risk"], abs=1e-15)


def test_the_ten_percent_sample_of_the_brief(adult):
    """The figures the f/π estimate got wrong (0.1, 0 %, 6.19 %): truth 1.0, 40.05 %, 32.67 %."""
    rows, sample = _sample(adult, 0.1, 0)
    exact = rid.reidentification_risk(sample, population=adult["frame"]).summary()["journalist"]
    assert exact["highest_risk"] == 1.0
    assert round(exact["records_at_risk"], 4) == 0.4005 and round(exact["success_rate"], 4) == 0.3267
    bound = rid.reidentification_risk(sample, population_size=adult["N"]).summary()["journalist"]
    assert bound["highest_risk"] == 1.0
    assert exact["records_at_risk"] <= bound["records_at_risk"] <= 0.46
    assert exact["success_rate"] <= bound["success_rate"] <= 0.40


def test_us_population_highest_risk_is_one(adult):
    """Raw Adult as a sample of the 1994 US population: the Pitman model leaves ~1 % of the
    population unique, hence population uniques among the 9,892 sample uniques: highest risk 1."""
    s = rid.reidentification_risk(adult["table"], population_size=US_1994).summary()
    pu = s["population_uniqueness"]
    assert pu["dankar_model"] == "pitman" and round(pu["pitman"], 4) == 0.0115
    assert s["journalist"]["highest_risk"] == 1.0
    assert 0.0 < s["journalist"]["records_at_risk"] < s["prosecutor"]["records_at_risk"]
    assert s["journalist"]["success_rate"] == s["marketer"]["success_rate"] < s["prosecutor"]["success_rate"]


def test_generalized_release_against_a_brute_force_count(adult):
    """A full-domain release of a 10 % sample (hierarchy labels): ``F`` of every published class
    is the number of people whose every value lies under its labels, counted person by person
    from the hierarchies' leaf sets; the bounds are at or above the exact figures."""
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    rows, sample = _sample(adult, 0.1, 1)
    rel = make_algorithm("full-domain-search", model=make_model("k=2")).anonymize(sample)
    res = rid.reidentification_risk(rel, population=adult["frame"], original=sample)
    table = adult["table"]
    under = {}
    for q in table.qi_names:
        h = table.hierarchy(q)
        cats = [str(v) for v in table.columns[q].categories]
        under[q] = {lab: {cats[i] for i in np.flatnonzero(h.leaf_mask(int(h.nodes_of([lab])[0])))}
                    for lab in rel.data[q].astype(str).unique()}
    people = Counter(tuple(str(v) for v in key) for key in adult["keys"])  # each QI tuple and its people
    cls, n_cls = rel.classes()
    for c in np.linspace(0, n_cls - 1, 12).astype(int):
        row = int(np.flatnonzero(cls == c)[0])
        labels = rel.data.iloc[row]
        want = sum(m for p, m in people.items()
                   if all(p[j] in under[q][str(labels[q])] for j, q in enumerate(table.qi_names)))
        assert want > 0 and res.journalist[row] == 1.0 / want
    exact = res.summary()["journalist"]
    bound = rid.reidentification_risk(rel, population_size=adult["N"]).summary()["journalist"]
    for key in ("highest_risk", "records_at_risk", "success_rate"):
        assert bound[key] >= exact[key]


def test_locally_recoded_release_is_bounded_by_the_prosecutor(adult):
    """Mondrian cuts its classes around the sample: no sampling model holds (measured: the
    model bound fell to half the truth on k=2 releases), so the bound is the prosecutor's."""
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    rows, sample = _sample(adult, 0.1, 0)
    rel = make_algorithm("mondrian", model=make_model("k=2"), seed=0).anonymize(sample)
    exact = rid.reidentification_risk(rel, population=adult["frame"], original=sample).summary()
    s = rid.reidentification_risk(rel, population_size=adult["N"]).summary()
    assert s["journalist"] == {k: s["prosecutor"][k] for k in s["journalist"]}
    assert "cut around the sample" in s["risk_model"]["journalist"]
    for key in ("highest_risk", "records_at_risk", "success_rate"):
        assert s["journalist"][key] >= exact["journalist"][key]


# ---------------------------------------------------------------------------------------
# the number of population classes: D_Sh3 against Shlosser
# ---------------------------------------------------------------------------------------
def test_haas_sh3_beats_shlosser_on_adult(adult):
    true_k = len(set(adult["keys"]))
    for pi in (0.05, 0.1, 0.2):
        err_sh, err_sh3 = [], []
        for seed in SEEDS:
            rows, sample = _sample(adult, pi, seed)
            f = np.array(list(Counter(adult["keys"][r] for r in rows).values()))
            sizes, counts = rid.frequencies(f)
            err_sh.append(abs(rid.shlosser(sizes, counts, pi) / true_k - 1))
            err_sh3.append(abs(rid.haas_sh3(sizes, counts, pi) / true_k - 1))
        assert max(err_sh3) < min(err_sh) and max(err_sh3) < 0.1, (pi, err_sh, err_sh3)
    rows, sample = _sample(adult, 0.1, 0)  # the brief's figure: SNB 21.40 % (Shlosser's K gave 31.44 %)
    u = rid.population_uniqueness(rid.reidentification_risk(sample).class_size, rows.size, adult["N"])
    assert round(u["snb"], 4) == 0.2140 and u["snb_fit"]["K_estimator"] == "Haas et al. D_Sh3"


# ---------------------------------------------------------------------------------------
# the estimators against a 50-digit reference
# ---------------------------------------------------------------------------------------
def _pitman_reference(sizes, counts, n, N, theta, alpha):
    with mp.workdps(50):
        K = int(counts.sum())
        pairs = [(int(j), int(c)) for j, c in zip(sizes, counts)]

        def score(t, a):
            a1 = (mp.digamma(t / a + K) - mp.digamma(t / a + 1)) / a
            b1 = mp.digamma(t + n) - mp.digamma(t + 1)
            c1 = sum(c * (mp.digamma(j - a) - mp.digamma(1 - a)) for j, c in pairs)
            return [a1 - b1, ((K - 1) - t * a1) / a - c1]

        t, a = mp.findroot(score, (mp.mpf(theta), mp.mpf(alpha)))
        assert max(abs(v) for v in score(t, a)) < mp.mpf(10) ** -40
        return t, a, mp.exp(mp.loggamma(t + 1) - mp.loggamma(t + a) + a * mp.log(N))


def _zayatz_reference(sizes, counts, n, N):
    with mp.workdps(50):
        Ni = int(round(N))
        c1 = sum(int(c) for j, c in zip(sizes, counts) if j == 1)
        h = [int(j) * mp.binomial(Ni - int(j), n - 1) / mp.binomial(Ni, n) for j in sizes]
        share = c1 * h[0] / sum(int(c) * hj for c, hj in zip(counts, h))
        return c1 * share / (mp.mpf(n) / Ni)


@pytest.mark.parametrize("pi,N", [(0.01, None), (0.1, None), (0.5, None), (1.0, US_1994)])
def test_estimators_equal_a_50_digit_reference(adult, pi, N):
    if pi < 1:
        rows, sample = _sample(adult, pi, 1)
    else:
        sample = adult["table"]
    f = rid.reidentification_risk(sample).class_size
    n, N = int(f.sum()), float(N or adult["N"])
    sizes, counts = rid.frequencies(f)
    est, fit = rid.pitman(sizes, counts, n, N)
    t, a, ref = _pitman_reference(sizes, counts, n, N, fit["theta"], fit["alpha"])
    assert fit["theta"] == pytest.approx(float(t), rel=1e-12, abs=0)
    assert fit["alpha"] == pytest.approx(float(a), rel=1e-12, abs=0)
    assert est == pytest.approx(float(ref), rel=1e-12, abs=0)
    assert rid.zayatz(sizes, counts, n, N) == pytest.approx(float(_zayatz_reference(sizes, counts, n, N)),
                                                           rel=1e-12, abs=0)


# ---------------------------------------------------------------------------------------
# the likelihood region and SNB against a 50-digit reference
# ---------------------------------------------------------------------------------------
def _loglik_mp(sizes, counts, n):
    K = int(counts.sum())
    pairs = [(int(j), int(c)) for j, c in zip(sizes, counts)]

    def loglik(t, a):
        return ((K - 1) * mp.log(a) + mp.loggamma(t / a + K) - mp.loggamma(t / a + 1)
                - (mp.loggamma(t + n) - mp.loggamma(t + 1)) + sum(c * (mp.loggamma(j - a) - mp.loggamma(1 - a))
                                                                  for j, c in pairs))

    def theta_score(t, a):
        return (mp.digamma(t / a + K) - mp.digamma(t / a + 1)) / a - (mp.digamma(t + n) - mp.digamma(t + 1))

    return loglik, theta_score


def _snb_reference(sizes, counts, n, N, a0, b0):
    """``D_Sh3`` and the SNB moment equations at 50 digits, solved from the fit."""
    with mp.workdps(50):
        q = mp.mpf(n) / mp.mpf(N)
        pairs = [(mp.mpf(int(i)), mp.mpf(int(c))) for i, c in zip(sizes, counts)]
        c1 = sum(c for i, c in pairs if i == 1)
        c2 = sum(c for i, c in pairs if i == 2)
        num1 = sum(i * q * q * (1 - q * q) ** (i - 1) * c for i, c in pairs)
        den1 = sum((1 - q) ** i * ((1 + q) ** i - 1) * c for i, c in pairs)
        num2 = sum((1 - q) ** i * c for i, c in pairs)
        den2 = sum(i * q * (1 - q) ** (i - 1) * c for i, c in pairs)
        K = sum(c for _, c in pairs) + c1 * (num1 / den1) * (num2 / den2) ** 2

        def moments(a, b):
            d = (1 - b) * (1 - q)
            e1 = K * q * (b / (1 - d)) ** a * (1 + a * d / (1 - d))
            e2 = K * q * q * a * (1 - b) * b ** a * (2 + (a - 1) * d) / (2 * (1 - d) ** (a + 2))
            return [e1 / c1 - 1, e2 / c2 - 1]

        a, b = mp.findroot(moments, (mp.mpf(a0), mp.mpf(b0)))
        return K, a, b, K * b ** a


#: (sampling fraction, seed, QIs by position): small and large samples, few and many QIs; the
#: region's edge at α → 1 is far for each (the first once stopped at α = 1 − 2e-8, the fourth
#: lost digits to likelihoods of magnitude 6.6e4 subtracted)
REGION_CASES = [(0.01, 1, (0, 1, 2, 3, 4, 5, 6)), (0.1, 2, (0, 3, 5)), (0.5, 1, (1, 2, 6)), (0.9, 3, (0, 2, 4))]


@pytest.mark.parametrize("pi,seed,qi", REGION_CASES)
def test_region_and_snb_equal_a_50_digit_reference(adult, pi, seed, qi):
    from openbook.attacks import population as pm
    from openbook.data.grouping import group_ids

    rows, _ = _sample(adult, pi, seed)
    f = np.bincount(group_ids(adult["table"].qi_codes[rows][:, list(qi)])[0])
    sizes, counts = rid.frequencies(f)
    n, N = int(f.sum()), float(adult["N"])
    fit = pm.pitman_fit(sizes, counts, n)
    assert fit is not None and fit.interior
    tu, au = pm.pitman_region(sizes, counts, n, fit)
    loglik, theta_score = _loglik_mp(sizes, counts, n)
    with mp.workdps(50):
        K = int(counts.sum())

        def score(t, a):
            c1 = sum(int(c) * (mp.digamma(int(j) - a) - mp.digamma(1 - a)) for j, c in zip(sizes, counts))
            return [theta_score(t, a), ((K - 1) - t * (mp.digamma(t / a + K) - mp.digamma(t / a + 1)) / a) / a - c1]

        top = loglik(*mp.findroot(score, (mp.mpf(fit.theta), mp.mpf(fit.alpha))))
        t, a = mp.findroot(lambda t, a: [theta_score(t, a), 2 * (top - loglik(t, a)) - pm.REGION_Q],
                           (mp.mpf(tu), mp.mpf(au)))
    assert au == pytest.approx(float(a), rel=1e-12, abs=0)
    assert tu == pytest.approx(float(t), rel=1e-12, abs=0)
    est, sfit = rid.snb(sizes, counts, n, N)
    assert sfit["converged"]
    big_k, sa, sb, ref = _snb_reference(sizes, counts, n, N, sfit["alpha"], sfit["beta"])
    assert sfit["K"] == pytest.approx(float(big_k), rel=1e-12, abs=0)
    assert sfit["alpha"] == pytest.approx(float(sa), rel=1e-12, abs=0)
    assert sfit["beta"] == pytest.approx(float(sb), rel=1e-12, abs=0)
    assert est == pytest.approx(float(ref), rel=1e-12, abs=0)
