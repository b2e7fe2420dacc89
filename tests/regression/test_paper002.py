"""Paper 002 (Rameshwar & Tandon): Table 2, Proposition 3.1 / Corollary 3.3, Corollary 4.8,
Theorems 4.4 / 4.5 — the paper's numbers, brute force, and seeded simulations."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.ldelta import (
    greedy_generalize,
    mech_l_delta,
    sample_size,
    simulate_data_dependent,
    simulate_violations,
)
from openbook.attacks.linkage import linkage
from openbook.attacks.worst_case_linkage import (
    brute_force_feasible,
    brute_force_worst_case,
    paper_formula,
    worst_case_diversity,
    worst_case_releases,
)
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


def _max_contiguous_exact(W, l, k):
    """Largest number of admissible contiguous classes covering all QIs, in integers: ``P = W/D``
    and ``p = k/D``, a class is admissible when ``#{s : Σ_{q in class} W(q, s) >= k} >= ℓ``."""
    n = W.shape[0]
    cs = np.vstack([np.zeros(W.shape[1], dtype=np.int64), np.cumsum(W, axis=0)])
    best = [-1] * (n + 1)
    best[0] = 0
    for e in range(1, n + 1):
        for b in range(e):
            if best[b] >= 0 and ((cs[e] - cs[b]) >= k).sum() >= l:
                best[e] = max(best[e], best[b] + 1)
    return best[n]


#: (|Q|, |S|, weights 0..w-1 per cell): every matrix of weights, P = W / ΣW
PROP46_GRID = [(2, 2, 3), (3, 2, 3), (2, 3, 3), (4, 2, 3), (3, 3, 2), (5, 2, 2), (6, 1, 3)]


def test_greedy_is_optimal_among_contiguous_prop46_exhaustive():
    """Proposition 4.6 on every rational P of ``PROP46_GRID`` (every weight matrix), every ℓ and
    every threshold p that matters — each value ``P(q̄, s)`` of a contiguous block up to
    ``p_ℓ`` (§4.3: "it suffices to vary p over … P(q̄, s)") — in exact integer arithmetic:
    Greedy-Generalize (end-of-loop fixed) returns contiguous, admissible classes covering Q,
    as many as the best contiguous partition (69,968 cases). Worst case found: no shortfall."""
    n = 0
    for n_q, n_s, w in PROP46_GRID:
        for cells in itertools.product(range(w), repeat=n_q * n_s):
            W = np.array(cells, dtype=np.int64).reshape(n_q, n_s)
            D = int(W.sum())
            if D == 0:
                continue
            marg = np.sort(W.sum(axis=0))[::-1]
            cs = np.vstack([np.zeros(n_s, dtype=np.int64), np.cumsum(W, axis=0)])
            sums = {int(x) for b in range(n_q) for e in range(b + 1, n_q + 1) for x in cs[e] - cs[b]}
            for l in range(1, n_s + 1):
                for k in sorted(x for x in sums if 0 < x <= marg[l - 1]):
                    cls, R = greedy_generalize(W / D, l=l, p=k / D)
                    assert R == _max_contiguous_exact(W, l, k), (W.tolist(), l, k)
                    assert cls[0] == 0 and cls[-1] == R - 1 and set(np.diff(cls).tolist()) <= {0, 1}
                    assert all(((W[cls == r].sum(axis=0)) >= k).sum() >= l for r in range(R))
                    n += 1
    assert n == 69968


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


# --- Theorems 4.4 and 4.5, exactly ------------------------------------------------------------
def _support_law(w, N):
    """``Pr[the set of non-empty cells is A] · D^N`` for every bit mask ``A`` of the cells, when
    ``N`` i.i.d. records fall in cell ``i`` with probability ``w[i]/D`` (``D = Σ w``): Möbius
    inversion of ``Pr[all records in B] = (Σ_{i in B} w_i / D)^N``, in integers."""
    C = len(w)
    f = [sum(w[i] for i in range(C) if mask >> i & 1) ** N for mask in range(1 << C)]
    for i in range(C):
        for mask in range(1 << C):
            if mask >> i & 1:
                f[mask] -= f[mask ^ (1 << i)]
    return f


def exact_violation(W, plan, t=1):
    """Exact probability that one release (``t = 1``) of ``plan.N`` records drawn from
    ``P = W / ΣW`` and generalized to the plan's classes has a non-empty class with fewer than ℓ
    SA values — or, ``t >= 2``, that the linkage of ``t`` independent releases does (a class
    non-empty in all ``t`` whose SA values present in all ``t`` are fewer than ℓ), the events
    :func:`simulate_violations` samples. Fractions; a distribution over support sets."""
    R, S, l, N = plan.n_classes, W.shape[1], plan.l, plan.N
    cw = np.zeros((R, S), dtype=np.int64)
    np.add.at(cw, plan.classes, W)
    C, D = R * S, int(W.sum())
    law = _support_law(cw.ravel().tolist(), N)
    cells = [[k * S + s for s in range(S)] for k in range(R)]
    nonempty = [sum(1 << k for k in range(R) if any(a >> c & 1 for c in cells[k])) for a in range(1 << C)]
    state = {((1 << C) - 1, (1 << R) - 1): 1}  # (cells present in every release so far, classes non-empty in all)
    for _ in range(t):
        nxt: dict[tuple[int, int], int] = {}
        for (inter, ne), weight in state.items():
            for a in range(1 << C):
                if law[a]:
                    key = (inter & a, ne & nonempty[a])
                    nxt[key] = nxt.get(key, 0) + weight * law[a]
        state = nxt
    bad = sum(weight for (inter, ne), weight in state.items()
              if any(ne >> k & 1 and sum(inter >> c & 1 for c in cells[k]) < l for k in range(R)))
    return Fraction(bad, D ** (N * t))


#: (|Q|, |S|): every weight matrix with entries 0..2, P = W / ΣW
THM44_GRID = [(1, 2), (1, 3), (2, 2), (2, 3), (3, 2)]


def test_thm44_thm45_exact_on_every_small_distribution():
    """Theorems 4.4 and 4.5 computed exactly (no simulation): for every P of ``THM44_GRID``,
    every ℓ, p ∈ {p_ℓ, p_ℓ/2} (exact grid fractions) and δ ∈ {0.5, 0.1}, Mech-(ℓ,δ)'s plan
    (classes, N) gives one release a violation probability ≤ ℓ|Q̄|(1-p)^N (the proof's union
    bound) ≤ δ (Theorem 4.4), and the linkage of t = 2 releases ≤ 2δ (Theorem 4.5; plans of at
    most 6 cells). Worst case found: equality, Pr = δ = 1/2 — P uniform on 2 × 2 or 3 × 2
    (e.g. every weight 2), ℓ = 2, p = 1/2, one class, N = 2: both records share one SA value
    with probability exactly 1/2; Theorem 4.5's worst ratio Pr/(2δ) is below it."""
    worst_single = worst_linked = Fraction(0)
    argmax = None
    n = 0
    for n_q, n_s in THM44_GRID:
        for cells in itertools.product(range(3), repeat=n_q * n_s):
            W = np.array(cells, dtype=np.int64).reshape(n_q, n_s)
            D = int(W.sum())
            if D == 0:
                continue
            marg = sorted(W.sum(axis=0).tolist(), reverse=True)
            for l in range(1, n_s + 1):
                for p in {Fraction(marg[l - 1], D), Fraction(marg[l - 1], 2 * D)}:
                    if not 0 < p < 1:
                        continue
                    for delta in (0.5, 0.1):
                        plan = mech_l_delta(W / D, l=l, delta=delta, p=float(p))
                        single = exact_violation(W, plan)
                        union = l * plan.n_classes * (1 - p) ** plan.N
                        assert single <= union <= Fraction(delta), (W.tolist(), l, p, delta)
                        ratio = single / Fraction(delta)
                        if ratio > worst_single:
                            worst_single, argmax = ratio, (W.tolist(), l, p, delta, plan.N)
                        if plan.n_classes * n_s <= 6:
                            linked = exact_violation(W, plan, t=2)
                            assert linked <= 2 * Fraction(delta), (W.tolist(), l, p, delta)
                            worst_linked = max(worst_linked, linked / (2 * Fraction(delta)))
                        n += 1
    assert worst_single == 1 and argmax[1:] == (2, Fraction(1, 2), 0.5, 2)
    assert 0 < worst_linked < 1
    assert n > 10_000


def test_thm44_short_samples_violate_more_than_delta():
    """The sample size matters: with a quarter of N the same classes violate far more often than
    δ (exact probability on a 3 × 2 uniform P), and with N they do not."""
    W = np.full((3, 2), 1, dtype=np.int64)
    plan = mech_l_delta(W / W.sum(), l=2, delta=0.1, p=1 / 6)
    assert exact_violation(W, plan) <= Fraction(0.1)
    short = dataclasses.replace(plan, N=plan.N // 4)
    assert exact_violation(W, short) > 2 * Fraction(0.1)


def test_data_dependent_releases_degrade_on_linkage():
    """§3 / item 4: per-sample ℓ-diverse generalization is exactly ℓ-diverse each time, yet its
    linkage drops a sizable share of people below ℓ; Mech-(ℓ,δ)'s fixed classes do not."""
    P = _uniform(100, 8)
    plan = mech_l_delta(P, l=3, delta=0.05, beta=0.1)
    dd = simulate_data_dependent(P, l=3, N=plan.N, t=2, n_sims=10, seed=4)
    assert dd["prob_some_below_l"] >= 0.9 and dd["mean_fraction_below_l"] > 0.1
    # Mech-(ℓ,δ)'s fixed classes: Theorem 4.5's 2δ is checked exactly above


@pytest.mark.parametrize("cells,l,p,delta", [((1, 1, 1, 1, 1, 1), 2, Fraction(1, 6), 0.3),
                                             ((2, 1, 0, 1, 2, 2), 2, Fraction(1, 8), 0.5)])
def test_simulate_violations_agrees_with_exact(cells, l, p, delta):
    """The simulator against the exact law (3 × 2 tables): single and linked rates within 4
    standard errors (a reference check of the sampler, seeded)."""
    W = np.array(cells, dtype=np.int64).reshape(3, 2)
    plan = mech_l_delta(W / W.sum(), l=l, delta=delta, p=float(p))
    sim = simulate_violations(plan, W / W.sum(), t=2, n_sims=20_000, seed=1)
    for key, t in (("single_rate", 1), ("linked_rate", 2)):
        exact = float(exact_violation(W, plan, t=t))
        se = math.sqrt(max(exact * (1 - exact), 1e-12) / 20_000)
        assert abs(sim[key] - exact) < 4 * se, (key, sim[key], exact)
