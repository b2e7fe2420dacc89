"""D-suppression (Safe/Unsafe), R-suppression and the R*-family (paper 004 §3-§5) against a
record-by-record brute force, plus the row mapping and the pipeline step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openbook.algorithms.suppression import (
    RSTAR_MEMBERS,
    d_suppression_from,
    expected_suppression,
    is_eligible,
    l_candidate,
    p_eligible,
    r_suppression,
    r_suppression_outcome,
    r_suppression_totals,
    restore_eligibility,
    rstar_suppression,
    safe_d_suppression,
    suppress_rows,
    unsafe_d_suppression,
)
from openbook.errors import InfeasibleError, ParameterError


# -- brute force: Fig. 2 one record at a time ------------------------------------------------
def rank_of(counts, tiebreak):
    return sorted(range(len(counts)), key=lambda i: (-counts[i], tiebreak[i]))


def brute_d(counts, n, l, stop, already=0, tiebreak=None):
    """Move one record of the lowest-ranked value of top(T_P) at a time (ranks fixed at the
    start, count desc then tiebreak) until ``stop(tp, ts)`` holds."""
    tp = [int(x) for x in counts]
    tb = list(range(len(tp))) if tiebreak is None else list(tiebreak)
    rank = {v: r for r, v in enumerate(rank_of(tp, tb))}
    ts = already
    while not stop(tp, ts):
        top = max(tp)
        j = max((i for i in range(len(tp)) if tp[i] == top), key=lambda i: rank[i])
        tp[j] -= 1
        ts += 1
    return tp


def unsafe_stop(n, l):
    def stop(tp, ts):
        srt = sorted(tp, reverse=True) + [0] * l
        return l * max(tp) <= sum(tp) and l * (srt[l - 1] + ts) > n
    return stop


def safe_stop(l):
    def stop(tp, ts):
        top = max(tp)
        return l * top <= sum(tp) and sum(1 for x in tp if x == top) >= l
    return stop


tables = st.lists(st.integers(0, 25), min_size=2, max_size=7).filter(lambda c: sum(1 for x in c if x) >= 2)


@st.composite
def table_and_l(draw):
    c = draw(tables)
    m = sum(1 for x in c if x)
    return np.array(c, dtype=np.int64), draw(st.integers(2, m))


@settings(max_examples=150, deadline=None)
@given(table_and_l(), st.randoms(use_true_random=False))
def test_d_suppression_matches_brute_force(tl, rnd):
    c, l = tl
    n = int(c.sum())
    tie = list(range(c.size))
    rnd.shuffle(tie)  # any tie order: the decision function follows it record by record
    if not is_eligible(c, l):
        got = d_suppression_from(c, n, l, tiebreak=np.array(tie))
        assert got.tolist() == brute_d(c, n, l, unsafe_stop(n, l), tiebreak=tie)
    for fn, stop in ((unsafe_d_suppression, unsafe_stop(n, l)), (safe_d_suppression, safe_stop(l))):
        plan = fn(c, l)
        assert (plan.published + plan.suppressed == c).all() and (plan.suppressed >= 0).all()
        want = c.tolist() if is_eligible(c, l) else brute_d(c, n, l, stop, tiebreak=tie)
        # how many records each count level loses never depends on the tie order
        assert sorted(plan.published.tolist()) == sorted(want), fn.__name__
        assert p_eligible(plan.published, l)
    if not is_eligible(c, l):  # Theorem 2: Unsafe D is the least; Safe D stops at level F_l
        assert unsafe_d_suppression(c, l).n_suppressed <= safe_d_suppression(c, l).n_suppressed
        assert safe_d_suppression(c, l).published.max() == np.sort(c)[::-1][l - 1]


@settings(max_examples=80, deadline=None)
@given(table_and_l(), st.randoms(use_true_random=False))
def test_r_suppression_every_choice_matches_brute_force(tl, rnd):
    c, l = tl
    if is_eligible(c, l):
        return
    n = int(c.sum())
    fs = sorted(c.tolist(), reverse=True) + [0] * (l + 1)
    s1 = rnd.choice([i for i in range(c.size) if c[i] == c.max()])
    tie = list(range(c.size))
    rnd.shuffle(tie)
    hs, levels, want = [], [], []
    for h in range(1, l + 1):
        for f in range(fs[h], fs[h - 1] + 1):
            a = c.tolist()
            a[s1] = f
            tp = brute_d(a, n, l, unsafe_stop(n, l), already=int(c[s1]) - f, tiebreak=tie)
            got = r_suppression_outcome(c, l, h, f, s1=s1, tiebreak=np.array(tie))
            assert got.tolist() == tp
            assert p_eligible(got, l) and l_candidate(got, n, l)
            hs.append(h)
            levels.append(f)
            want.append(n - sum(tp))
    # the batched kernel of the experiments gives the same |T_S| for the same choices
    from openbook.algorithms.suppression import _rsup_totals

    fsa = np.array(sorted(c.tolist(), reverse=True) + [0] * (l + 1 - c.size if l + 1 > c.size else 1), dtype=np.int64)
    assert _rsup_totals(fsa, n, l, np.array(hs), np.array(levels)).tolist() == want


def test_ties_are_broken_uniformly_at_random():
    """Equally frequent values are exchangeable (paper 004, Property 1; Example 5): over
    4,000 seeds each of two tied values is S1 / keeps the top level half of the time,
    within 3 standard errors."""
    runs = 4000
    se3 = 3 * np.sqrt(0.25 / runs)
    # R-suppression: S1 is either of the two values tied at 7 (T = {7,7,1,1}, l = 3)
    c = np.array([7, 7, 1, 1])
    s1 = np.array([r_suppression(c, 3, seed=s).choices["s1"] for s in range(runs)])
    assert set(s1.tolist()) == {0, 1} and abs((s1 == 0).mean() - 0.5) < se3
    # Unsafe D on T = {9,9,4,4}, l = 3 stops at {7,6,4,4} or {6,7,4,4}: which of the tied
    # pair ends a record lower is a fair coin
    c = np.array([9, 9, 4, 4])
    outs = [tuple(unsafe_d_suppression(c, 3, seed=s).published.tolist()) for s in range(runs)]
    assert set(outs) == {(7, 6, 4, 4), (6, 7, 4, 4)}
    share = np.mean([o == (7, 6, 4, 4) for o in outs])
    assert abs(share - 0.5) < se3


@settings(max_examples=60, deadline=None)
@given(table_and_l(), st.integers(0, 2**32 - 1))
def test_seeded_runs_reproducible_and_conserve_rows(tl, seed):
    c, l = tl
    for member in RSTAR_MEMBERS:
        a = rstar_suppression(c, l, member=member, seed=seed)
        b = rstar_suppression(c, l, member=member, seed=seed)
        assert a.published.tolist() == b.published.tolist() and a.choices == b.choices
        assert (a.published + a.suppressed == c).all() and a.n_input == c.sum()
        assert p_eligible(a.published, l)
    sa = np.repeat(np.arange(c.size), c)
    np.random.default_rng(seed).shuffle(sa)
    s1 = restore_eligibility(sa, l, seed=seed, n_values=c.size)
    s2 = restore_eligibility(sa, l, seed=seed, n_values=c.size)
    assert (s1.suppressed_mask == s2.suppressed_mask).all()
    assert s1.kept_rows.size + s1.plan.n_suppressed == sa.size
    kept = np.bincount(sa[s1.kept_rows], minlength=c.size)
    assert kept.tolist() == s1.plan.published.tolist() and is_eligible(kept, l) or kept.sum() == 0


def test_examples_1_to_4():
    T = np.array([10, 4, 2, 1, 1])
    safe, unsafe = safe_d_suppression(T, 3), unsafe_d_suppression(T, 3)
    assert safe.n_suppressed == 10 and safe.published.max() == 2
    assert unsafe.n_suppressed == 6 and unsafe.published.max() == 4
    assert r_suppression_outcome(T, 3, 2, 3).tolist() == [3, 3, 2, 1, 1]


def test_suppress_rows_picks_uniformly():
    sa = np.repeat([0, 1], [10, 5])
    hits = np.zeros(15)
    for s in range(2000):
        hits += suppress_rows(sa, np.array([3, 0]), s)
    assert hits[10:].sum() == 0 and (hits[:10].sum() == 3 * 2000)
    se = np.sqrt(2000 * 0.3 * 0.7)
    assert np.all(np.abs(hits[:10] - 600) < 4 * se)


def test_r_suppression_draws_h_and_level_uniformly():
    T = np.array([10, 4, 2, 1, 1])
    rng = np.random.default_rng(5)
    runs = 3000
    draws = [r_suppression(T, 3, seed=rng).choices for _ in range(runs)]
    hs = np.bincount([d["h"] for d in draws], minlength=4)[1:]
    assert np.all(np.abs(hs - runs / 3) < 3 * np.sqrt(runs * (1 / 3) * (2 / 3)))
    f1 = np.array([d["F"] for d in draws if d["h"] == 1])  # uniform on [F2, F1] = [4, 10]
    assert f1.min() == 4 and f1.max() == 10
    assert abs(f1.mean() - 7) < 3 * np.sqrt(4.0 / f1.size)


def test_bad_parameters():
    with pytest.raises(ParameterError, match="l"):
        r_suppression(np.array([5, 1]), 2.5)
    with pytest.raises(InfeasibleError, match="distinct SA values"):
        unsafe_d_suppression(np.array([9, 1, 0]), 3)
    with pytest.raises(ParameterError, match="skew method"):
        restore_eligibility(np.array([0, 0, 1]), 2, method="bogus")


# -- Theorem 4 and the paper's comparison (§5, §6) -------------------------------------------
@settings(max_examples=40, deadline=None)
@given(table_and_l())
def test_expected_r_suppression_at_least_unsafe_bound(tl):
    c, l = tl
    if is_eligible(c, l):
        return
    ex = expected_suppression(c, l)
    assert ex >= unsafe_d_suppression(c, l).n_suppressed - 1e-9  # Theorem 2 holds per instance


@pytest.mark.parametrize("member", ["rstar-wide", "rstar-skip1", "rstar-safe2"])
@pytest.mark.parametrize("alpha,l", [(1.0, 5), (1.5, 5), (1.0, 3), (1.0, 8)])
def test_theorem4_r_suppression_least_expected(member, alpha, l):
    c = np.maximum(1, np.rint(1000 / np.arange(1, 21) ** alpha)).astype(np.int64)
    assert expected_suppression(c, l) <= expected_suppression(c, l, member=member) + 1e-9


@pytest.mark.parametrize("counts,l", [
    ([40, 18, 16, 15, 14, 12, 10, 8, 6, 5, 3, 2, 1, 1], 6),   # an Adult-like 150-row sample
    ([1000, 500, 333, 250, 200, 167, 143, 125, 111, 100, 91, 83, 77, 71, 67, 62, 59, 56, 53, 50], 5),
    ([30, 9, 8, 7, 6, 3, 2], 4),
])
def test_r_sup_average_between_unsafe_and_safe_d(counts, l):
    c = np.array(counts, dtype=np.int64)
    runs = 4000
    x = r_suppression_totals(c, l, runs, seed=11).astype(float)
    se = x.std(ddof=1) / np.sqrt(runs)
    lo, hi = unsafe_d_suppression(c, l).n_suppressed, safe_d_suppression(c, l).n_suppressed
    assert lo + 3 * se < x.mean() < hi - 3 * se
    assert abs(x.mean() - expected_suppression(c, l)) < 4 * se  # sampler agrees with the exact mean
