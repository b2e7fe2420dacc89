"""Mech-(ℓ,δ), Greedy-Generalize (end-of-loop fixed), Generalize-Ind, N, p sweep,
estimation from historical data (paper 002 §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from openbook.algorithms.ldelta import (
    estimate_distribution,
    generalize_ind,
    greedy_generalize,
    mech_l_delta,
    qi_index,
    sample_size,
    sweep_p,
)
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError, VerificationError


def _printed_algorithm2(P, l, p):
    """Algorithm 2 exactly as printed (1-based i, j), to show the off-by-one."""
    nq = P.shape[0]
    classes = {1: []}
    i, j = 1, 1

    def S(c):
        return int((P[[q - 1 for q in c]].sum(axis=0) >= p).sum()) if c else 0

    while i < nq:
        while S(classes[j]) < l:
            classes[j].append(i)
            i += 1
            if i == nq + 1:
                break
        j += 1
        classes[j] = []
    if S(classes[j]) < l:
        classes[j - 1] += classes[j]
        R = j - 1
    else:
        R = j
    return [classes[k] for k in range(1, R + 1)]


def test_printed_algorithm2_drops_last_qi_and_keeps_an_inadmissible_class():
    # every QI carries one SA value only, so a class needs an 'a' and a 'b' QI for l = 2
    # 3 QIs a, b, a: class 1 closes at q_2 with i = |Q|, the loop stops, q_3 is in no class
    P3 = np.array([[1 / 3, 0], [0, 1 / 3], [1 / 3, 0]])
    printed = _printed_algorithm2(P3, 2, 0.2)
    assert sum(len(c) for c in printed) == 2
    cls, R = greedy_generalize(P3, l=2, p=0.2)
    assert R == 1 and cls.tolist() == [0, 0, 0]
    # 4 QIs a, b, a, a: the inner loop breaks with {q_3, q_4} unfinished, j is incremented anyway,
    # and the printed end test merges the empty q̄_3 into it: an inadmissible last class
    P4 = np.array([[0.25, 0], [0, 0.25], [0.25, 0], [0.25, 0]])
    printed4 = _printed_algorithm2(P4, 2, 0.2)
    assert printed4[-1] == [3, 4]
    assert int((P4[[2, 3]].sum(axis=0) >= 0.2).sum()) < 2
    cls4, R4 = greedy_generalize(P4, l=2, p=0.2)
    assert R4 == 1 and cls4.tolist() == [0, 0, 0, 0]
    # 4 QIs a, b, a, b: fine either way
    cls5, R5 = greedy_generalize(np.array([[0.25, 0], [0, 0.25], [0.25, 0], [0, 0.25]]), l=2, p=0.2)
    assert R5 == 2 and cls5.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("n_q", [31, 45, 61])
def test_algorithm2_exact_classes_against_the_printed_version(n_q):
    """Uniform P over |Q| QIs × 4 SA values, ℓ = 2, p just below 3/(4|Q|): a class is
    admissible exactly when it holds 3 QIs. As printed, Algorithm 2 closes classes
    {q1..q3}, {q4..q6}, ...; when |Q| ≡ 1 (mod 3) the outer loop (``while i < |Q|``) stops
    with i = |Q| and q_|Q| is in no class (|Q| = 31, 61); at |Q| = 45 it covers every QI.
    The fixed version puts the leftover QI into the last class."""
    P = np.full((n_q, 4), 1.0 / (n_q * 4))
    p = 3.0 / (n_q * 4) * 0.999
    printed = _printed_algorithm2(P, 2, p)
    full = n_q // 3
    assert printed == [[3 * k + 1, 3 * k + 2, 3 * k + 3] for k in range(full)]
    cls, R = greedy_generalize(P, l=2, p=p)
    ours = [(np.flatnonzero(cls == k) + 1).tolist() for k in range(R)]
    want = [[3 * k + 1, 3 * k + 2, 3 * k + 3] for k in range(full)]
    if n_q % 3:
        want[-1] += list(range(3 * full + 1, n_q + 1))
    assert ours == want and R == full
    assert (sum(len(c) for c in printed) == n_q) == (n_q == 45)


def test_infeasible_and_parameter_errors():
    P = np.full((10, 3), 1 / 30)
    with pytest.raises(InfeasibleError):
        greedy_generalize(P, l=3, p=0.5)
    with pytest.raises(ParameterError):
        mech_l_delta(P, l=4, delta=0.1, beta=0.5)
    with pytest.raises(ParameterError):
        mech_l_delta(P, l=2, delta=1.5, beta=0.5)
    with pytest.raises(ParameterError):
        mech_l_delta(P, l=2, delta=0.1, p=0.9)
    with pytest.raises(ParameterError):
        mech_l_delta(P * 2, l=2, delta=0.1, beta=0.5)


def test_generalize_ind_needs_independence():
    P = np.zeros((4, 2))
    P[:2, 0] = 0.25
    P[2:, 1] = 0.25
    with pytest.raises(InfeasibleError):
        generalize_ind(P, l=2, p=0.2)


def test_order_is_respected():
    P = np.array([[0.25, 0], [0.25, 0], [0, 0.25], [0, 0.25]])
    cls, R = greedy_generalize(P, l=2, p=0.2)
    assert R == 1
    cls2, R2 = greedy_generalize(P, l=2, p=0.2, order=[0, 2, 1, 3])
    assert R2 == 2 and cls2.tolist() == [0, 1, 0, 1]


def test_sample_size_formula():
    ps = np.array([0.5, 0.3, 0.2])
    N, m = sample_size(l=2, delta=0.05, p=0.1, n_q=100, p_sorted=ps)
    assert m == pytest.approx(min(100, 1 / 0.2, 0.5 / 0.1))
    assert N == math.ceil(math.log(m * 2 / 0.05) / math.log(1 / 0.9))
    plan = mech_l_delta(np.outer(np.full(100, 0.01), ps), l=2, delta=0.05, p=0.1)
    assert plan.N == N and plan.violation_bound <= 0.05


def test_sweep_p_tradeoff_is_monotone():
    P = np.full((500, 10), 1 / 5000)
    df = sweep_p(P, l=3, delta=0.01, betas=[1.0, 0.5, 0.1, 0.02])
    assert list(df.columns) == ["beta", "p", "n_classes", "N", "m"]
    assert df["n_classes"].is_monotonic_increasing and df["N"].is_monotonic_increasing


def test_estimation_error_and_robust_N():
    rng = np.random.default_rng(0)
    n_q, n_s = 50, 5
    P = np.full((n_q, n_s), 1 / (n_q * n_s))
    hist = rng.choice(n_q * n_s, size=200_000, p=P.ravel())
    Ph, info = estimate_distribution(hist // n_s, hist % n_s, n_q=n_q, n_s=n_s)
    tv = 0.5 * np.abs(Ph - P).sum()
    assert tv <= info["tv_bound"]
    plan = mech_l_delta(Ph, l=2, delta=0.05, beta=0.5, estimation=info)
    assert plan.estimation["p_effective"] == pytest.approx(plan.p - info["tv_bound"])
    assert plan.estimation["N_robust"] > plan.N


def test_release_through_plan_on_a_table():
    rng = np.random.default_rng(1)
    n_q1, n_q2, n_s = 4, 5, 3
    P = np.full((n_q1 * n_q2, n_s), 1 / (n_q1 * n_q2 * n_s))
    plan = mech_l_delta(P, l=2, delta=0.05, beta=0.5)
    n = plan.N
    # every class holds every SA value at least once (a QI of the class with each value), the
    # rest of the N rows drawn at random: the release's check cannot pass by luck of the draw
    first_q = [int(np.flatnonzero(plan.classes == k)[0]) for k in range(plan.n_classes)]
    cover = np.array([q0 * n_s + v for q0 in first_q for v in range(n_s)])
    assert cover.size <= n
    cell = rng.permutation(np.concatenate([cover, rng.integers(0, n_q1 * n_q2 * n_s, n - cover.size)]))
    q, s = cell // n_s, cell % n_s
    table = EncodedTable.from_codes(qi_codes=np.stack([q // n_q2, q % n_q2], axis=1).astype(np.int32),
                                    sa_codes=s.astype(np.int32), qi_names=["a", "b"],
                                    qi_categories=[np.arange(n_q1), np.arange(n_q2)], sa_categories=np.arange(n_s))
    idx, nq = qi_index(table)
    assert nq == n_q1 * n_q2 and np.array_equal(idx, q)
    rel = plan.release(table, kind="bucketized")
    assert rel.meta["check"]["holds"]
    with pytest.raises(ParameterError):
        plan.release(table.take(np.arange(n // 2)))
    # a sample that violates: everything with SA 0 -> refused, or released with the check recorded
    bad = EncodedTable.from_codes(qi_codes=np.zeros((n, 2), dtype=np.int32), sa_codes=np.zeros(n, dtype=np.int32),
                                  qi_names=["a", "b"], qi_categories=[np.arange(n_q1), np.arange(n_q2)],
                                  sa_categories=np.arange(n_s))
    with pytest.raises(VerificationError):
        plan.release(bad)
    rel2 = plan.release(bad, on_violation="release")
    assert rel2.meta["check"]["holds"] is False
