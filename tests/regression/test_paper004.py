"""Paper 004 worked examples (Examples 1-5) with the paper's numbers."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from openbook.algorithms.suppression import (
    l_candidate,
    p_eligible,
    r_suppression_outcome,
    safe_d_suppression,
    unsafe_d_suppression,
)
from openbook.attacks.eligibility import posterior_by_enumeration, posterior_r_suppression
from openbook.models import explain_eligibility

T = np.array([10, 4, 2, 1, 1])  # {S1:10, S2:4, S3:2, S4:1, S5:1}, |T| = 18, l = 3


def test_example1_t_violates_3_eligibility():
    rep = explain_eligibility(T, np.array(["S1", "S2", "S3", "S4", "S5"]), 3)
    assert not rep.eligible and rep.violations[0].value == "S1" and rep.allowed == 6
    # after suppressing 6 records of S1, T_P is 3-eligible for the first time
    assert p_eligible(np.array([4, 4, 2, 1, 1]), 3) and not p_eligible(np.array([5, 4, 2, 1, 1]), 3)


def test_example2_and_3_unsafe_d():
    plan = unsafe_d_suppression(T, 3)
    assert plan.n_suppressed == 6 and plan.published.max() == 4  # stops at level 4
    assert plan.published.tolist() == [4, 4, 2, 1, 1]
    # ℓ-candidacy first holds after 5 records: F3' + |T_S| = 2 + 5 > 18/3
    assert l_candidate(np.array([5, 4, 2, 1, 1]), 18, 3) and not l_candidate(np.array([6, 4, 2, 1, 1]), 18, 3)


def test_example3_safe_d():
    plan = safe_d_suppression(T, 3)
    assert plan.n_suppressed == 10 and plan.published.max() == 2  # start of level F3 = 2
    assert plan.suppressed.tolist() == [8, 2, 0, 0, 0]


def test_example4_r_suppression_h2_f3():
    assert r_suppression_outcome(T, 3, h=2, level=3).tolist() == [3, 3, 2, 1, 1]


def test_example5_posterior_by_enumeration():
    """The paper says Pr(S_i' = S1 | T_P, K) = 1/3 for i = 1, 2, 3. Exact enumeration of all
    base tables (|B| = 18, not 3-eligible), every (h, F), every S1 among tied maxima and every
    tie order of STEP-2 — ties broken uniformly at random, as the paper's symmetric treatment
    of S1', S2' implies — gives *close to*, not exactly, 1/3 under a uniform prior over base
    tables, and far from 1/3 under the record-level (multinomial, uniform per-record) prior.
    The order of the values is S1', S2', S3', S4', S5' of T_P (S1' and S2' tie at 3 and are
    exchangeable, so their posteriors are equal). docs/skew.md gives the values under the
    former code-order tie rule for comparison (147/424, 137/424)."""
    tp = np.array([3, 3, 2, 1, 1])
    uni, k = posterior_by_enumeration(tp, 18, 3, prior="uniform")
    assert k == 16
    assert uni == [Fraction(71, 212), Fraction(71, 212), Fraction(35, 106), 0, 0]
    rec, _ = posterior_by_enumeration(tp, 18, 3, prior="record")
    assert rec == [Fraction(5231, 38182), Fraction(5231, 38182), Fraction(13860, 19091), 0, 0]
    for prior, want in (("uniform", uni), ("record", rec)):
        fast = posterior_r_suppression(tp, 18, 3, prior=prior)
        assert np.allclose(fast.posterior, [float(x) for x in want], atol=1e-12)
    assert max(uni) > Fraction(1, 3)  # S-Ambiguity is missed, by 71/212 - 1/3 = 1/318 (0.5 %)


def test_example5_d_suppression_property1_by_enumeration():
    """Property 1 says 1/|top(T_P)| on top(T_P). With ties broken uniformly at random,
    enumeration of every base table and tie order (uniform prior over base tables) gives it
    exactly: Unsafe D's T_P = {4,4,2,1,1} -> 1/2, 1/2; Safe D's {2,2,2,1,1} -> 1/3 each."""
    post, _ = posterior_by_enumeration(np.array([4, 4, 2, 1, 1]), 18, 3, algorithm="unsafe-d")
    assert post == [Fraction(1, 2), Fraction(1, 2), 0, 0, 0]
    post, _ = posterior_by_enumeration(np.array([2, 2, 2, 1, 1]), 18, 3, algorithm="safe-d")
    assert post == [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3), 0, 0]


# -- the tie rule of STEP-2: two readings of Fig. 2 inside Fig. 3 -------------------------------
def _rankings(counts):
    """Every ranking (codes, best first) by count descending with the ties in every order,
    each with its probability (ties uniformly at random)."""
    groups = [[i for i, x in enumerate(counts) if x == v] for v in sorted(set(counts), reverse=True)]
    total = math.prod(math.factorial(len(g)) for g in groups)
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield Fraction(1, total), [i for p in perms for i in p]


def _fig2_unsafe(counts, n, l, ranking, already):
    """Fig. 2 record by record: move one record of the lowest-ranked value of top(T_P) until
    P-Eligibility and ℓ-candidacy first hold."""
    tp, ts = list(counts), already
    pos = {v: r for r, v in enumerate(ranking)}
    while True:
        srt = sorted(tp, reverse=True) + [0] * l
        if l * max(tp) <= sum(tp) and l * (srt[l - 1] + ts) > n:
            return tuple(tp)
        j = max((i for i, x in enumerate(tp) if x == max(tp)), key=pos.__getitem__)
        tp[j] -= 1
        ts += 1


def _posterior_by_reading(published, n, l, reading):
    """Pr(S_i' = S1 | T_P) under the uniform prior over base tables, by brute force over every
    base table, ranking of T (S1 = its first), (h, F) and — reading "input" — every ranking of
    STEP-2's input; reading "base" keeps the ranking of T in STEP-2 (S1 stays rank 1)."""
    m, target = len(published), tuple(published)
    num = [Fraction(0)] * m
    for extra in itertools.combinations_with_replacement(range(m), n - sum(published)):
        b = list(published)
        for i in extra:
            b[i] += 1
        if l * max(b) <= n:
            continue
        fs = sorted(b, reverse=True) + [0] * (l + 1)
        for p_t, rank_t in _rankings(b):
            s1 = rank_t[0]
            for h in range(1, l + 1):
                lo, hi = fs[h], fs[h - 1]
                for f in range(lo, hi + 1):
                    a = list(b)
                    a[s1] = f
                    w = p_t * Fraction(1, l * (hi - lo + 1))
                    steps = [(Fraction(1), rank_t)] if reading == "base" else _rankings(a)
                    for p_a, rank_a in steps:
                        if _fig2_unsafe(a, n, l, rank_a, b[s1] - f) == target:
                            num[s1] += w * p_a
    return [x / sum(num) for x in num]


def test_step2_tie_rule_two_readings():
    """§3.1 ranks by "the lowest rank first" with ranks in T (Example 2: "S2 has a lower rank
    than S1 in T"); Fig. 3 STEP-2 "appl[ies] D-suppression to T_P". openbook ranks STEP-2's
    input (T_P after STEP-1) by its counts, ties uniformly at random; the other reading keeps
    the ranks of the base table T, where S1 has rank 1 and so loses records last among the
    values it meets. Example 5 does not tell them apart; T_P = {4,3,3,1,1}, |T| = 14, ℓ = 3
    does: 33/65, 16/65, 16/65 (openbook, = the library's exact posteriors) vs 9/13, 2/13,
    2/13 (base-table ranks). Both miss S-Ambiguity's 1/3. Independent brute force, fractions."""
    assert _posterior_by_reading([3, 3, 2, 1, 1], 18, 3, "input") == _posterior_by_reading([3, 3, 2, 1, 1], 18, 3, "base") \
        == [Fraction(71, 212), Fraction(71, 212), Fraction(35, 106), 0, 0]
    tp = np.array([4, 3, 3, 1, 1])
    ours = _posterior_by_reading(tp.tolist(), 14, 3, "input")
    assert ours == [Fraction(33, 65), Fraction(16, 65), Fraction(16, 65), 0, 0]
    assert posterior_by_enumeration(tp, 14, 3)[0] == ours
    assert np.allclose(posterior_r_suppression(tp, 14, 3).posterior, [float(x) for x in ours], atol=1e-12)
    assert _posterior_by_reading(tp.tolist(), 14, 3, "base") == [Fraction(9, 13), Fraction(2, 13), Fraction(2, 13), 0, 0]
