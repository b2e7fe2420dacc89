"""Paper 002 (Rameshwar & Tandon): Table 2, Proposition 3.1 / Corollary 3.3, Corollary 4.8,
Theorems 4.4 / 4.5 — the paper's numbers, brute force, and seeded simulations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.ldelta import (greedy_generalize, mech_l_delta, sample_size, simulate_data_dependent,
                                        simulate_violations, sorted_marginal)
from openbook.attacks.linkage import linkage
from openbook.attacks.worst_case_linkage import (brute_force_feasible, brute_force_worst_case, paper_formula, worst_case_diversity,
                                                 worst_case_releases)
from openbook.models.registry import make_model
from openbook.release import Release


def table2() -> tuple[list[Release], pd.DataFrame]:
    d1 = pd.DataFrame({"gender": ["Male", "Male", "Female", "Female"],
                       "zip": ["[560011-560012]", "[560011-560012]", "560010", "560010"],
                       "disease": ["Heart disease", "Lung infection", "Osteoporosis", "Cervical cancer"]})
    d2 = pd.DataFrame({"gender": ["Female"] * 4, "zip": ["560008", "560008", "560010", "560010"],
                       "disease": ["Irritable bowel syndrome", "Lung infection", "Cervical cancer", "Amoebic dysentry"]})
    rels = [Release("generalized", d, ["gender", "zip"], "disease") for d in (d1, d2)]
    return rels, pd.DataFrame({"gender": ["Female", "Male", "Female"], "zip": [560010, 560011, 560008]})


def test_table2_linkage_reveals_cervical_cancer():
    rels, people = table2()
    model = make_model("l=2")
    for r in rels:  # each release is 2-diverse
        assert r.check(model).holds
    res = linkage(rels, people)
    i = 0  # (Female, 560010)
    assert res.diversity[i] == 1
    linked = {str(res.sa_values[s]): int(res.counts[i, s]) for s in np.flatnonzero(res.counts[i])}
    assert linked == {"Cervical cancer": 1}
    assert res.per_release[i].tolist() == [2, 2]
    # (Male, 560011) is only in release 1: diversity 2; (Female, 560008) only in release 2
    assert res.diversity[1] == 2 and res.matched[1].tolist() == [True, False]
    assert res.diversity[2] == 2 and res.matched[2].tolist() == [False, True]
    s = res.summary(l=2)
    assert s["n_below_l"] == 1 and s["n_disclosed"] == 1 and s["n_below_l_in_a_single_release"] == 0


@pytest.mark.parametrize("n_sa,t", [(3, 2), (5, 2), (7, 2), (7, 3), (5, 4), (9, 2), (9, 4), (7, 6)])
def test_prop31_formula_matches_brute_force_when_t_divides_L(n_sa, t):
    L = n_sa - 1
    assert L % t == 0
    for l in range(1, n_sa + 1):
        want = paper_formula(n_sa, l, t)
        if brute_force_feasible(n_sa, l, t):
            assert brute_force_worst_case(n_sa, l, t) == want, (n_sa, l, t)
        assert worst_case_diversity(n_sa, l, t) == want
        rels, person = worst_case_releases(n_sa, l, t)
        assert all(r.check(make_model(f"l={l}")).holds for r in rels)
        assert int(linkage(rels, person).diversity[0]) == want


def test_cor33_t2():
    # Corollary 3.3: ℓ_[2] = 1 if ℓ ≤ L/2 + 1, else 2ℓ − L − 1
    for n_sa in (3, 5, 7, 9, 11):
        L = n_sa - 1
        for l in range(1, n_sa + 1):
            want = 1 if l <= L / 2 + 1 else 2 * l - L - 1
            assert worst_case_diversity(n_sa, l, 2) == want


@pytest.mark.parametrize("n_sa,t", [(4, 2), (6, 4), (5, 3), (6, 3), (8, 3)])
def test_general_t_formula_matches_brute_force(n_sa, t):
    """t ∤ L (outside the paper's assumption): max(1, L+1−t(L−ℓ+1)) is still exact."""
    for l in range(1, n_sa + 1):
        assert brute_force_feasible(n_sa, l, t)
        assert brute_force_worst_case(n_sa, l, t) == worst_case_diversity(n_sa, l, t)
        rels, person = worst_case_releases(n_sa, l, t)
        assert int(linkage(rels, person).diversity[0]) == worst_case_diversity(n_sa, l, t)


# --- Corollary 4.8: ⌊1/β⌋ classes for uniform independent P ----------------------------------
def _uniform(n_q, n_s):
    return np.full((n_q, n_s), 1.0 / (n_q * n_s))


@pytest.mark.parametrize("n_q,n_s,l,beta", [(3000, 50, 10, 0.01), (3000, 50, 30, 0.02), (1000, 20, 5, 0.1),
                                            (600, 10, 3, 0.05), (3000, 50, 10, 0.2)])
def test_cor48_greedy_class_count_is_floor_inverse_beta(n_q, n_s, l, beta):
    for method in ("greedy", "ind"):
        plan = mech_l_delta(_uniform(n_q, n_s), l=l, delta=0.01, beta=beta, method=method)
        assert plan.n_classes == math.floor(1 / beta)
        assert ((plan.class_probs >= plan.p * (1 - 1e-9)).sum(axis=1) >= l).all()


def _brute_max_contiguous(P, l, p):
    """Largest number of admissible contiguous classes, by dynamic programming over cuts."""
    n = P.shape[0]
    cs = np.vstack([np.zeros(P.shape[1]), np.cumsum(P, axis=0)])
    best = [-1] * (n + 1)
    best[0] = 0
    for e in range(1, n + 1):
        for b in range(e):
            if best[b] >= 0 and ((cs[e] - cs[b]) >= p * (1 - 1e-9)).sum() >= l:
                best[e] = max(best[e], best[b] + 1)
    return best[n]


def test_cor48_fails_when_beta_Q_is_not_an_integer():
    """|Q| = 10, β = 0.15: every class needs ≥ 1.5 → 2 QIs, so at most 5 classes, not ⌊1/β⌋ = 6."""
    P = _uniform(10, 4)
    plan = mech_l_delta(P, l=2, delta=0.1, beta=0.15)
    assert plan.n_classes == _brute_max_contiguous(P, 2, plan.p) == 5
    assert math.floor(1 / 0.15) == 6


def test_greedy_is_optimal_among_contiguous_prop46():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n_q, n_s = int(rng.integers(2, 14)), int(rng.integers(2, 5))
        P = rng.random((n_q, n_s)) ** 3
        P /= P.sum()
        l = int(rng.integers(1, n_s + 1))
        pl = sorted_marginal(P)[l - 1]
        p = pl * float(rng.uniform(0.05, 1.0))
        cls, R = greedy_generalize(P, l=l, p=p)
        assert R == _brute_max_contiguous(P, l, p)
        # every QI is in a class and every class is admissible (the off-by-one fixed)
        assert cls.min() == 0 and cls.max() == R - 1
        cp = np.vstack([P[cls == k].sum(axis=0) for k in range(R)])
        assert ((cp >= p * (1 - 1e-9)).sum(axis=1) >= l).all()


# --- Section 5 numbers --------------------------------------------------------------------
def test_section5_m_l_equals_inverse_p_uniform():
    ps = np.full(50, 1 / 50)
    for l in (10, 30):
        for beta in (0.01, 0.02):
            p = beta / 50
            N, m = sample_size(l=l, delta=0.01, p=p, n_q=3000, p_sorted=ps)
            assert m * l == pytest.approx(1 / p)
            assert N == math.ceil(math.log(1 / (p * 0.01)) / -math.log1p(-p))
    # p_1 ≈ 0.054 for geometric marginals with ρ = 0.95 (§5)
    rho = 0.95
    p1 = (1 - rho) / (1 - rho ** 50)
    assert p1 == pytest.approx(0.054, abs=5e-4)


# --- Theorems 4.4 and 4.5 by simulation ----------------------------------------------------
def test_thm44_thm45_violation_rates_within_bounds():
    """ℓ = |S| makes the union bound nearly tight, so the test can fail: the rate must be ≤ δ
    (+3 SE) but also close to it (≥ δ/2), and the linkage of t releases ≤ tδ."""
    n_q, n_s, t = 40, 4, 3
    P = _uniform(n_q, n_s)
    plan = mech_l_delta(P, l=n_s, delta=0.1, beta=0.25)
    sim = simulate_violations(plan, P, t=t, n_sims=4000, seed=11)
    se1 = math.sqrt(plan.delta * (1 - plan.delta) / 4000)
    assert sim["single_rate"] <= plan.delta + 3 * se1
    assert sim["single_rate"] >= plan.delta / 2
    set_ = math.sqrt(t * plan.delta * (1 - t * plan.delta) / 4000)
    assert sim["linked_rate"] <= t * plan.delta + 3 * set_
    # with a quarter of the samples the same classes violate far more often than δ
    short = simulate_violations(plan, P, t=1, n_sims=2000, N=plan.N // 4, seed=12)
    assert short["single_rate"] > plan.delta + 3 * math.sqrt(plan.delta * (1 - plan.delta) / 2000)


def test_thm45_nonuniform_l_below_S():
    rng = np.random.default_rng(5)
    n_q, n_s = 60, 6
    ps = 0.8 ** np.arange(n_s)
    ps /= ps.sum()
    pq = rng.dirichlet(np.ones(n_q) * 5)
    P = pq[:, None] * ps[None, :]
    plan = mech_l_delta(P, l=3, delta=0.05, beta=0.5)
    sim = simulate_violations(plan, P, t=4, n_sims=3000, seed=2)
    assert sim["single_rate"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 3000)
    assert sim["linked_rate"] <= 4 * 0.05 + 3 * math.sqrt(0.2 * 0.8 / 3000)


def test_data_dependent_releases_degrade_on_linkage():
    """§3 / item 4: per-sample ℓ-diverse generalization is exactly ℓ-diverse each time, yet its
    linkage drops a sizable share of people below ℓ; Mech-(ℓ,δ)'s fixed classes do not."""
    P = _uniform(100, 8)
    plan = mech_l_delta(P, l=3, delta=0.05, beta=0.1)
    dd = simulate_data_dependent(P, l=3, N=plan.N, t=2, n_sims=10, seed=4)
    fixed = simulate_violations(plan, P, t=2, n_sims=500, seed=4)
    assert dd["prob_some_below_l"] >= 0.9 and dd["mean_fraction_below_l"] > 0.1
    assert fixed["linked_rate"] <= 2 * plan.delta
