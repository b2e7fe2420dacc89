"""The eligibility attack (paper 004 §1.2, §3.1, §4.2): the fast exact posterior for
R-suppression against brute-force enumeration, and Property 1 for D-suppression."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from openbook.algorithms.suppression import is_eligible, r_suppression
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


def _compositions(n, m):
    """Every vector of ``m`` non-negative integers summing to ``n``."""
    for cut in itertools.combinations(range(n + m - 1), m - 1):
        yield np.diff((-1, *cut, n + m - 1)) - 1


def _tie_keys(b):
    groups = [np.flatnonzero(b == x) for x in np.unique(b)]
    total = math.prod(math.factorial(g.size) for g in groups)
    for perms in itertools.product(*(itertools.permutations(g.tolist()) for g in groups)):
        key = np.arange(b.size)
        for g, perm in zip(groups, perms):
            key[list(perm)] = g
        yield Fraction(1, total), key


#: (m values, largest |T|): every base table of every size up to it
PROPERTY1_DOMAIN = [(3, 13), (4, 10), (5, 8)]


def test_d_suppression_posterior_is_property1_exhaustive():
    """Property 1 (paper 004 §3.1) by forward enumeration: for every ``(m, |T|, ℓ)`` of
    ``PROPERTY1_DOMAIN``, every base table ``T`` of ``|T|`` rows over ``m`` values that is not
    ℓ-eligible (uniform prior over count vectors, K2: ``|T|`` known), every S1 among its most
    frequent values and every tie order of its ranking (ties uniformly at random), run Unsafe
    and Safe D-suppression and collect ``Pr(T_P, S1 = v)`` in fractions. Every release that
    occurs then has the posterior ``1/|top(T_P)|`` on each top value and 0 elsewhere — exactly,
    for both stops (worst case: no deviation) — which is what
    :func:`posterior_d_suppression` returns; :func:`posterior_by_enumeration` (backward, one
    release at a time) agrees on every release of ``|T| <= 9``. 1,980 (algorithm, ℓ, |T|,
    release) cases, 1,484 of them also backward."""
    from collections import defaultdict

    from openbook.algorithms.suppression import d_suppression_from, safe_d_suppression

    n_releases = n_backward = 0
    for m, n_max in PROPERTY1_DOMAIN:
        for n in range(2, n_max + 1):
            for l in range(2, m + 1):
                joint = {"unsafe-d": defaultdict(lambda: [Fraction(0)] * m),
                         "safe-d": defaultdict(lambda: [Fraction(0)] * m)}
                for b in _compositions(n, m):
                    if l * int(b.max()) <= n or int((b > 0).sum()) < l:
                        continue  # T is l-eligible (nothing withheld) or the algorithm cannot run
                    safe = tuple(safe_d_suppression(b, l).published.tolist())
                    tops = np.flatnonzero(b == b.max())
                    for p, key in _tie_keys(b):
                        s1 = int(np.lexsort((key, -b))[0])  # S1: the first of the ranking
                        joint["unsafe-d"][tuple(d_suppression_from(b, n, l, tiebreak=key).tolist())][s1] += p
                    for s1 in tops:
                        joint["safe-d"][safe][int(s1)] += Fraction(1, tops.size)
                for algorithm, by_release in joint.items():
                    for pub, num in by_release.items():
                        post = [x / sum(num) for x in num]
                        c = np.array(pub)
                        top = c == c.max()
                        assert post == [Fraction(1, int(top.sum())) if t else 0 for t in top], (algorithm, pub, n, l)
                        assert posterior_d_suppression(c, l).posterior.tolist() == [float(x) for x in post]
                        if n <= 9:
                            assert posterior_by_enumeration(c, n, l, algorithm=algorithm)[0] == post
                            n_backward += 1
                        n_releases += 1
    assert (n_releases, n_backward) == (1980, 1484)


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


# ---- the enumeration budget: no guess in place of the exact posterior ---------------------------
def test_work_is_counted_in_python_ints_and_the_budget_refuses():
    from openbook.attacks.eligibility import EnumerationTooLarge, r_suppression_work

    c, n, l = [20, 20, 19, 15, 10], 110, 3
    work = r_suppression_work(c, n, l)
    assert isinstance(work, int) and work > 0
    exact = posterior_r_suppression(c, n, l)  # within the default budget
    with pytest.raises(EnumerationTooLarge, match="budget"):
        posterior_r_suppression(c, n, l, budget=work - 1)
    again = posterior_r_suppression(c, n, l, budget=work)
    assert np.array_equal(again.posterior, exact.posterior)
    # a real table's worth of withheld records: astronomically many, no overflow, no hang
    assert r_suppression_work([900, 899, 899, 898, 898, 897, 50], 12_000, 4) > 10**15


def test_beyond_the_budget_every_withheld_person_is_unresolved(tmp_path):
    """A skew release whose exact posterior is beyond the budget: the eligibility adversary
    counts every withheld person as failing, and the certificate cannot pass."""
    import pandas as pd

    from openbook.algorithms.registry import make_algorithm
    from openbook.algorithms.skewed import Skewed
    from openbook.attacks.registry import make_adversary
    from openbook.certificate import certify
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.models import make_model

    rng = np.random.default_rng(3)
    n = 2400
    sa = rng.choice(["a", "b", "c", "d", "e", "f", "g"], n, p=[0.55, 0.15, 0.1, 0.08, 0.06, 0.04, 0.02])
    df = pd.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["F", "M"], n), "dis": sa})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="dis"))
    model = make_model("l=4")
    rel = Skewed(make_algorithm("anatomy", model=model, seed=1), skew="r-suppression", seed=1).anonymize(t)
    assert rel.meta["n_suppressed"] > 500
    exact = make_adversary("eligibility").run(rel, original=t)  # within the default budget: exact
    assert not exact.unresolved.any() and exact.posterior.max() < 1
    res = make_adversary("eligibility", budget=1000).run(rel, original=t)
    assert res.unresolved.all() and res.unresolved.size == rel.meta["n_suppressed"]
    assert "budget" in res.notes["unresolved"]
    cert = certify(rel, original=t, max_reid_risk=1.0, params={"eligibility": {"budget": 1000}})
    assert cert.verdict != "pass"
