"""D-suppression (Safe/Unsafe), R-suppression and the R*-family (paper 004 §3-§5) against a
record-by-record brute force, plus the row mapping and the pipeline step."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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


# -- exhaustive domain: every table up to a size ------------------------------------------------
#: (number of values m, largest count K): every count vector sorted in descending order
#: (the theorems are symmetric in the values), with at least two non-zero values, and every
#: ℓ from 2 to the number of non-zero values for which the table is not ℓ-eligible
DOMAIN = [(2, 12), (3, 10), (4, 8), (5, 6)]


def ineligible_cases(domain=DOMAIN):
    for m, k in domain:
        for c in itertools.combinations_with_replacement(range(k, -1, -1), m):
            c = np.array(c, dtype=np.int64)
            nz = int((c > 0).sum())
            for l in range(2, nz + 1):
                if not is_eligible(c, l):
                    yield c, l


def tie_orders(c):
    """Every tiebreak key vector giving a different order within groups of equal counts."""
    groups = [np.flatnonzero(c == x) for x in np.unique(c)]
    for perms in itertools.product(*(itertools.permutations(g.tolist()) for g in groups)):
        key = np.arange(c.size)
        for g, perm in zip(groups, perms):
            key[list(perm)] = g
        yield key


def least_suppression(c, n, l):
    """Theorem 2's right-hand side by exhaustion: the least ``|c| - |p|`` over every published
    vector ``p <= c`` (componentwise, any algorithm) satisfying P-Eligibility and
    ℓ-candidacy with ``|T_S| = n - |p|`` (publishing nothing counts)."""
    p = np.stack(np.meshgrid(*[np.arange(x + 1) for x in c], indexing="ij"), -1).reshape(-1, c.size)
    tp = p.sum(axis=1)
    fl = -np.sort(-p, axis=1)[:, l - 1] if l <= c.size else np.zeros(len(p), dtype=np.int64)
    ok = (l * p.max(axis=1) <= tp) & (l * (fl + n - tp) > n)
    return int((c.sum() - tp[ok]).min())


def test_theorems_1_and_2_exhaustive():
    """Paper 004 Theorems 1 and 2 on every table of ``DOMAIN`` (1,887 (table, ℓ) pairs, every
    tie order), in integers:

    * the decision function follows Fig. 2 record by record (``brute_d``) for every tie order;
    * Theorem 1: Safe D-suppression — D-suppression stopped when P-Eligibility and
      S-Ambiguity (by Property 1, ``|top(T_P)| >= ℓ``) first hold — stops at the start of
      level ``F_ℓ``, i.e. publishes ``min(F_i, F_ℓ)``;
    * Theorem 2: no published vector ``p <= T`` satisfying P-Eligibility and ℓ-candidacy
      withholds fewer records than Unsafe D-suppression. Worst case found: the bound is met
      with equality on every table (Unsafe D is such a vector), never beaten;
    * Property 1(2): the least suppression of any vector at level ``F`` is ``Σ max(0, F_i - F)``,
      which is what D-suppression stopped at the start of level ``F`` withholds.
    """
    n_cases = n_orders = 0
    for c, l in ineligible_cases():
        n = int(c.sum())
        safe = safe_d_suppression(c, l)
        fl = int(np.sort(c)[::-1][l - 1])
        assert safe.published.tolist() == np.minimum(c, fl).tolist()  # Theorem 1
        unsafe_n = unsafe_d_suppression(c, l, seed=0).n_suppressed
        for key in tie_orders(c):
            got = d_suppression_from(c, n, l, tiebreak=key)
            assert got.tolist() == brute_d(c, n, l, unsafe_stop(n, l), tiebreak=key.tolist())
            assert brute_d(c, n, l, safe_stop(l), tiebreak=key.tolist()) == safe.published.tolist()
            assert n - int(got.sum()) == unsafe_n
            n_orders += 1
        assert least_suppression(c, n, l) == unsafe_n  # Theorem 2, tight
        assert unsafe_n <= safe.n_suppressed
        for level in range(0, int(c.max()) + 1):  # Property 1(2)
            assert np.maximum(c - level, 0).sum() == n - np.minimum(c, level).sum()
        n_cases += 1
    assert n_cases == 1887 and n_orders > n_cases


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


# -- Theorems 2 and 4 for R-suppression (§4, §5), exhaustively -------------------------------
def _run_totals(c, l):
    """``|T_S|`` of R-suppression for every ``(h, F)`` with ``h`` in ``1..m`` (``m`` = number
    of non-zero values: the R*-family's range), by the public decision function."""
    n, m = int(c.sum()), int((c > 0).sum())
    fs = np.sort(c)[::-1].tolist() + [0] * (l + 2)
    s1, key = int(np.argmax(c)), np.arange(c.size)
    return {h: [n - int(r_suppression_outcome(c, l, h, f, s1=s1, tiebreak=key).sum())
                for f in range(fs[h], fs[h - 1] + 1)] for h in range(1, m + 1)}


def test_r_suppression_runs_at_least_unsafe_bound_exhaustive():
    """Theorem 2 applied to R-suppression on every table of ``DOMAIN``: every run ``(h, F)``
    publishes a P-eligible, ℓ-candidate table and withholds at least Unsafe D's ``X``; so the
    exact expectation ``E[X_R] = Σ_h 1/ℓ · mean_F X(h, F)`` (fractions) is at least ``X``, and
    :func:`expected_suppression` computes it. Worst cases found: ``E[X_R] - X`` ranges from 0
    (``T = {2,1,1,1}``, ℓ = 3: every run withholds exactly ``X``) to 11/2 (``{12,11}``, ℓ = 2)."""
    gaps = []
    for c, l in ineligible_cases():
        n = int(c.sum())
        x = unsafe_d_suppression(c, l, seed=0).n_suppressed
        fs = np.sort(c)[::-1].tolist() + [0] * (l + 2)
        for h in range(1, l + 1):
            for f in range(fs[h], fs[h - 1] + 1):
                pub = r_suppression_outcome(c, l, h, f, s1=int(np.argmax(c)), tiebreak=np.arange(c.size))
                assert p_eligible(pub, l) and l_candidate(pub, n, l)
                assert n - int(pub.sum()) >= x
        runs = _run_totals(c, l)
        ex = sum(Fraction(sum(runs[h]), l * len(runs[h])) for h in range(1, l + 1))
        assert ex >= x and expected_suppression(c, l) == pytest.approx(float(ex), rel=1e-12, abs=1e-12)
        gaps.append((ex - x, c.tolist(), l))
    assert min(gaps)[0] == 0 and min(gaps)[1:] == ([2, 1, 1, 1], 3)
    assert max(gaps) == (Fraction(11, 2), [12, 11], 2)


def test_theorem2_from_every_state_of_step1_exhaustive():
    """The step Theorem 4's proof takes (``X_i <= X_i*``): after STEP-1 has lowered ``S1`` by
    ``i``, no continuation reaching P-Eligibility and ℓ-candidacy withholds fewer records than
    STEP-2's D-suppression. Checked against every published vector below every STEP-1 state
    of the tables of a smaller domain (7,825 states)."""
    k = 0
    for c, l in ineligible_cases([(2, 10), (3, 8), (4, 6), (5, 5)]):
        n = int(c.sum())
        fs = np.sort(c)[::-1].tolist() + [0] * (l + 2)
        for h in range(1, int((c > 0).sum()) + 1):
            for f in range(fs[h], fs[h - 1] + 1):
                a = c.copy()
                a[0] = f  # c is sorted: code 0 is S1
                x = n - int(r_suppression_outcome(c, l, h, f, s1=0, tiebreak=np.arange(c.size)).sum())
                assert least_suppression(a, n, l) + int(c[0] - f) == x
                k += 1
    assert k == 7825


def test_theorem4_r_suppression_least_expected_exhaustive():
    """Theorem 4 on every table of ``DOMAIN``, over the whole R*-family: a member draws ``h``
    in ``1..m`` with probabilities ``<= 1/ℓ`` (F uniform in ``[F_{h+1}, F_h]``) and any STEP-2
    reaching ℓ-dichotomy, which withholds at least R's STEP-2 from the same state (test
    above). With ``M_h`` = R's mean total over the levels of interval ``h`` (fractions), the
    least expectation any member can reach is ``(1/ℓ)·(sum of the ℓ smallest M_h)`` (caps of
    1/ℓ), and R-suppression's is ``(1/ℓ)·Σ_{h<=ℓ} M_h``: they are equal on every table — the
    worst case found has margin 0 (R attains the family's minimum); no counterexample. The
    three members openbook implements are checked with their own exact expectation."""
    n_cases = 0
    for c, l in ineligible_cases():
        runs = _run_totals(c, l)
        mean = {h: Fraction(sum(x), len(x)) for h, x in runs.items()}
        e_r = sum(mean[h] for h in range(1, l + 1)) / l
        assert e_r == sum(sorted(mean.values())[:l]) / l
        assert expected_suppression(c, l) == pytest.approx(float(e_r), rel=1e-12, abs=1e-12)
        for member in RSTAR_MEMBERS[1:]:
            assert expected_suppression(c, l, member=member) >= float(e_r) - 1e-9
        n_cases += 1
    assert n_cases == 1887


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


# ---- R-suppression's rate is random: its exact spread -------------------------------------------
@pytest.mark.parametrize("counts,l", [([50, 10, 8, 5, 3, 2], 3), ([30, 30, 4, 2], 4), ([9, 1, 1], 2),
                                      ([12, 5, 5, 5, 1], 3)])
def test_spread_is_the_exact_distribution_of_the_rate(counts, l):
    """Mean = the exact E[|T_S|] (:func:`expected_suppression`); the spread agrees with 200,000
    seeded runs within 3 standard errors; min and max are attained."""
    from openbook.algorithms.suppression import expected_suppression, r_suppression_spread, r_suppression_totals

    c = np.asarray(counts)
    n = c.sum()
    sp = r_suppression_spread(c, l)
    assert sp["mean"] == pytest.approx(expected_suppression(c, l) / n, abs=1e-12)
    runs = r_suppression_totals(c, l, 200_000, seed=7) / n
    se = sp["sd"] / np.sqrt(runs.size)
    assert abs(runs.mean() - sp["mean"]) <= 3 * se + 1e-12
    assert runs.min() == pytest.approx(sp["min"]) and runs.max() == pytest.approx(sp["max"])
    assert runs.std() == pytest.approx(sp["sd"], rel=0.02)


def test_spread_of_an_eligible_table_is_nothing():
    from openbook.algorithms.suppression import r_suppression_spread

    assert r_suppression_spread([3, 3, 3], 3) == {"mean": 0.0, "sd": 0.0, "min": 0.0, "max": 0.0}
