"""The eligibility attack (paper 004 §1.2, §3.1, §4.2): the fast exact posterior for
R-suppression against brute-force enumeration, and Property 1 for D-suppression."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openbook.algorithms.suppression import is_eligible, r_suppression, unsafe_d_suppression
from openbook.attacks.eligibility import (
    eligibility_attack,
    posterior_by_enumeration,
    posterior_d_suppression,
    posterior_r_suppression,
)
from openbook.errors import ParameterError


@st.composite
def released(draw):
    """A base table (5-13 rows, 3-5 values), ℓ, and one R-suppression output of it."""
    m = draw(st.integers(3, 5))
    c = np.array(draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)), dtype=np.int64)
    c[0] += draw(st.integers(2, 6))
    l = draw(st.integers(2, max(2, min(3, int((c > 0).sum())))))
    seed = draw(st.integers(0, 2**31))
    return c, l, seed


@settings(max_examples=25, deadline=None)
@given(released(), st.sampled_from(["uniform", "record"]))
def test_fast_posterior_equals_brute_force(case, prior):
    c, l, seed = case
    if is_eligible(c, l) or (c > 0).sum() < l:
        return
    plan = r_suppression(c, l, seed=seed)
    n = int(c.sum())
    if plan.n_suppressed > 7 or plan.n_published == 0:
        return  # keep the brute force small
    exact, k = posterior_by_enumeration(plan.published, n, l, prior=prior)
    fast = posterior_r_suppression(plan.published, n, l, prior=prior)
    assert fast.n_plausible == k
    assert np.allclose(fast.posterior, [float(x) for x in exact], atol=1e-12)
    assert abs(fast.posterior.sum() - 1) < 1e-12
    # the true S1 (the tie draw's) is always a candidate: the output is possible from T itself
    assert fast.posterior[plan.choices["s1"]] > 0


@settings(max_examples=20, deadline=None)
@given(released())
def test_d_suppression_posterior_is_property1_exactly(case):
    """With ties broken uniformly at random, enumeration of every base table, tie order
    and S1 gives Property 1 exactly under the uniform prior: 1/|top(T_P)| on each top value
    (the top values are exchangeable), 0 elsewhere — for both stops."""
    from fractions import Fraction

    from openbook.algorithms.suppression import safe_d_suppression

    c, l, seed = case
    if is_eligible(c, l) or (c > 0).sum() < l:
        return
    n = int(c.sum())
    for algorithm, plan in (("unsafe-d", unsafe_d_suppression(c, l, seed=seed)), ("safe-d", safe_d_suppression(c, l))):
        pub = plan.published
        if n - pub.sum() > 7:
            continue
        exact, _ = posterior_by_enumeration(pub, n, l, algorithm=algorithm)
        top = pub == pub.max()
        assert exact == [Fraction(1, int(top.sum())) if t else 0 for t in top], algorithm
        prop1 = posterior_d_suppression(pub, l)
        assert np.allclose(prop1.posterior, [float(x) for x in exact], atol=0)


def test_example1_attack_on_unsafe_d():
    # Example 1/3: T_P = {4,4,2,1,1}; only S1', S2' can be S1 -> 1/2 > 1/3 (Property 1)
    post = eligibility_attack(np.array([4, 4, 2, 1, 1]), 18, 3, algorithm="unsafe-d")
    assert post.posterior.tolist() == [0.5, 0.5, 0, 0, 0]
    assert post.risk_ratio == pytest.approx(1.5) and not post.s_ambiguous


def test_record_prior_accepts_pi_and_rejects_bad():
    c = np.array([3, 3, 2, 1, 1])
    a = posterior_r_suppression(c, 18, 3, prior="record", pi=np.full(5, 0.2))
    b = posterior_r_suppression(c, 18, 3, prior="record")
    assert np.allclose(a.posterior, b.posterior)
    skew = posterior_r_suppression(c, 18, 3, prior="record", pi=[0.6, 0.1, 0.1, 0.1, 0.1])
    assert skew.posterior[0] > b.posterior[0]  # a prior favouring value 0 raises its posterior
    with pytest.raises(ParameterError, match="prior"):
        posterior_r_suppression(c, 18, 3, prior="flat")
    with pytest.raises(ParameterError, match="n="):
        posterior_r_suppression(c, 5, 3)


def test_realistic_size_is_fast():
    # an Adult-sized sample (p = 0.5 %, 151 rows, 14 values) released by R-suppression
    c = np.array([40, 18, 16, 15, 14, 12, 10, 8, 6, 5, 3, 2, 1, 1])
    plan = r_suppression(c, 6, seed=3)
    post = posterior_r_suppression(plan.published, int(c.sum()), 6, prior="record")
    assert abs(post.posterior.sum() - 1) < 1e-9 and post.n_plausible > 0
