"""Paper 000 (Cormode et al. VLDB 2010) minimality-attack examples and closed forms as
regression tests of the replay adversary (attacks/replay.py, attacks/closed_forms.py)."""

from __future__ import annotations

from fractions import Fraction
from math import comb, e

import numpy as np
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.attacks import closed_forms as cf
from openbook.attacks.replay import replay_attack
from openbook.data.paper_tables import paper_table
from openbook.data.table import EncodedTable
from openbook.models.registry import make_model


def _world(pt, sa_order):
    """Encode a paper table: QI letters as ordered codes, the SA as Positive/Negative with
    the given arrangement (any world consistent with the published group)."""
    qi = pt.df["qi"].tolist()
    letters = sorted(set(qi))
    codes = np.array([[letters.index(q)] for q in qi])
    sa = np.array([0 if s == "Positive" else 1 for s in sa_order], dtype=np.int32)
    return EncodedTable.from_codes(qi_codes=codes, sa_codes=sa, sa_categories=np.array(["Positive", "Negative"]),
                                   sensitive_sets={"pos": ["Positive"]})


def test_appendix_b_a_gg():
    pt = paper_table("p000_fig6a_gg")
    # the only world GG (which drops a failing last group, §4.1) publishes as one group
    t = _world(pt, ["Positive", "Positive", "Negative", "Negative"])
    algo = make_algorithm("gg", seed=0, model=make_model("simple-l=2,set=pos"), tail="drop")
    part = algo.partition(t)
    assert part.n_groups == 1 and pt.notes["group_published_as"] == "one group of 4"
    res = replay_attack(t, part.group, algo)
    expect = [pt.notes["posterior_positive"][q] for q in pt.df["qi"]]
    np.testing.assert_allclose(res.posterior[:, 0], expect, atol=1e-12)
    assert res.summary().max_risk_multiple == pytest.approx(2.0)  # 1 = 2/ℓ: p(b1) = 2/ℓ at m = 2


@pytest.mark.parametrize("p", [0.0, 0.1, 0.2, 0.4, 0.5, 0.6, 0.65, 0.9, 1.0])
def test_appendix_b_a_rgg_closed_form_in_p(p):
    """RGG (paper 000 §4.2: GG whose line 6 also merges the next bucket with probability p)
    on Figure 6(a): buckets {a, b}, {c, d}, two positives, published as one group of 4.
    Of the 6 equally likely worlds, {a, b} both positive forces the merge (weight 1); the
    other 5 (one positive in {a, b}, or both in {c, d}, whose failing tail would otherwise be
    dropped) need the coin (weight p each). So
    p(a) = p(b) = (1 + 2p) / (1 + 5p) and p(c) = p(d) = 3p / (1 + 5p):
    GG's certainty at p = 0, the baseline 1/2 at p = 1. With tail="merge" the world with
    {c, d} positive merges without the coin (weight 1 + 4p + 1) and every posterior is 1/2."""
    pt = paper_table("p000_fig6a_gg")
    t = _world(pt, ["Positive", "Positive", "Negative", "Negative"])
    one_group = np.zeros(4, dtype=np.int64)
    rgg = make_algorithm("rgg", seed=0, model=make_model("simple-l=2,set=pos"), p=p, tail="drop")
    res = replay_attack(t, one_group, rgg)
    ab, cd = (1 + 2 * p) / (1 + 5 * p), 3 * p / (1 + 5 * p)
    np.testing.assert_allclose(res.posterior[:, 0], [ab, ab, cd, cd], rtol=0, atol=1e-12)
    merged = make_algorithm("rgg", seed=0, model=make_model("simple-l=2,set=pos"), p=p, tail="merge")
    np.testing.assert_allclose(replay_attack(t, one_group, merged).posterior[:, 0], 0.5, rtol=0, atol=1e-12)


def test_appendix_b_b_mondrian_strict_and_relaxed():
    pt = paper_table("p000_fig6b_mondrian")
    t = _world(pt, ["Positive", "Positive", "Negative", "Negative", "Negative", "Negative"])
    strict = make_algorithm("mondrian", model=make_model("simple-l=2,set=pos"), strict=True)
    part = strict.partition(t)
    assert part.n_groups == 1
    res = replay_attack(t, part.group, strict)
    expect = [pt.notes["posterior_positive"][q] for q in pt.df["qi"]]
    np.testing.assert_allclose(res.posterior[:, 0], expect, atol=1e-12)
    # relaxed (even-split) Mondrian on the same group: within Theorem 5's bound
    relaxed = make_algorithm("mondrian", model=make_model("simple-l=2,set=pos"), strict=False)
    rp = relaxed.partition(t)
    rr = replay_attack(t, rp.group, relaxed)
    assert np.nanmax(rr.posterior) <= cf.theorem5_bound(2) + 1e-12


@pytest.mark.parametrize("l,m", [(2, 2), (3, 2), (6, 2), (3, 3), (4, 3), (6, 3), (4, 4)])
def test_gg_group_replay_equals_theorem6_closed_form(l, m):
    """A GG group of m buckets of ℓ with m positives, replayed on the actual algorithm:
    the first bucket's posterior is Eq. (7)'s p(b1) (2/ℓ at m = 2), buckets are ordered
    (Theorem 8), and p(b1) < e/ℓ."""
    n = m * l
    sa = np.ones(n, dtype=np.int32)
    sa[:m] = 0  # all m positives in the first bucket: every proper prefix fails
    t = EncodedTable.from_codes(qi_codes=np.arange(n)[:, None], sa_codes=sa,
                                sa_categories=np.array(["pos", "neg"]), sensitive_sets={"pos": ["pos"]})
    algo = make_algorithm("gg", seed=0, model=make_model(f"simple-l={l},set=pos"), tail="drop")
    part = algo.partition(t)
    assert part.n_groups == 1
    res = replay_attack(t, part.group, algo)
    pb = res.posterior[:, 0].reshape(m, l)
    assert np.allclose(pb, pb[:, :1])  # rows of a bucket alike
    closed = cf.gg_bucket_posteriors(l, m)
    np.testing.assert_allclose(pb[:, 0], [float(x) for x in closed], atol=1e-12)
    assert pb[0, 0] == pytest.approx(float(cf.gg_p_b1(l, m)), abs=1e-12)
    if m == 2:
        assert cf.gg_p_b1(l, m) == Fraction(2, l)
    assert np.all(np.diff(pb[:, 0]) <= 1e-12) and pb[0, 0] < e / l


def test_theorem5_version_decision():
    """§3.2 prints 1/(ℓ - 2/ℓ), App. C.2 1/(ℓ - 2/3): brute force finds 2/(2ℓ-1), above the
    first for ℓ >= 5 and below the second for every ℓ — we use 1/(ℓ - 2/3)."""
    for l in (2, 3, 4, 5, 6, 7):
        worst, _ = cf.even_split_max_posterior(l, max_rows=10 * l)
        assert worst == Fraction(2, 2 * l - 1) <= cf.theorem5_bound(l)
    assert cf.even_split_max_posterior(5, 50)[0] > cf.theorem5_printed_s32(5)
    # replay of SG on the worst case: 4ℓ-1 rows, 2 positives in the smaller (right) half
    l = 5
    n = 4 * l - 1
    sa = np.ones(n, dtype=np.int32)
    sa[-2:] = 0
    t = EncodedTable.from_codes(qi_codes=np.arange(n)[:, None], sa_codes=sa,
                                sa_categories=np.array(["pos", "neg"]), sensitive_sets={"pos": ["pos"]})
    sg = make_algorithm("sg", seed=0, model=make_model(f"simple-l={l},set=pos"))
    part = sg.partition(t)
    assert part.n_groups == 1
    res = replay_attack(t, part.group, sg)
    assert np.nanmax(res.posterior) == pytest.approx(2 / (2 * l - 1), abs=1e-12)
    assert np.nanmax(res.posterior) > cf.theorem5_printed_s32(l)


def _gg_bucket_posteriors_dp(l: int, m: int) -> list[Fraction]:
    """p(b_i) of a GG group of m buckets of ℓ rows with m positives under binary
    ℓ-diversity, by a forward-backward count over the positives per bucket — independent of
    Eq. (7) and of ``closed_forms``: a world with ``n_i`` positives in bucket ``i`` has weight
    ``Π C(ℓ, n_i)``; GG published the group iff every proper prefix of ``j`` buckets fails
    (``Σ_{i<=j} n_i >= j + 1``) and the whole holds (``Σ n_i = m``); p(b_i) = E[n_i] / ℓ."""
    ok = [lambda c, j=j: (c >= j + 1) if j < m else (c == m) for j in range(m + 1)]
    fwd = [{0: 1}]
    for j in range(1, m + 1):
        nxt: dict[int, int] = {}
        for c, w in fwd[-1].items():
            for k in range(l + 1):
                if ok[j](c + k):
                    nxt[c + k] = nxt.get(c + k, 0) + w * comb(l, k)
        fwd.append(nxt)
    bwd = [dict() for _ in range(m + 1)]
    bwd[m] = {m: 1}
    for j in range(m - 1, -1, -1):
        bwd[j] = {c: sum(comb(l, k) * bwd[j + 1].get(c + k, 0) for k in range(l + 1)) for c in fwd[j]}
    z = fwd[m][m]
    return [Fraction(sum(w * comb(l, k) * k * bwd[i].get(c + k, 0) for c, w in fwd[i - 1].items()
                         for k in range(l + 1) if c + k in fwd[i]), z * l) for i in range(1, m + 1)]


#: the quick Fig. 3 (first 3,000 Adult rows), derived below: (ℓ, value) -> (vulnerable rows,
#: max risk × ℓ, buckets of the worst group)
QUICK_FIG3 = {(3, "Tech-support"): (18, Fraction(2), 2), (3, "Craft-repair"): (234, Fraction(57, 26), 7),
              (6, "Tech-support"): (60, Fraction(24, 11), 3),
              (6, "Craft-repair"): (906, Fraction(8140011, 3301259), 37)}


def test_cormode2010_quick_fig3_exact(adult_frame):
    """Quick Fig. 3 (paper 000 §5.1; 3,000 Adult rows, ℓ = 3, 6) pinned exactly. The replay is
    exact there (no unit sampled); the expected values are derived here independently of it:
    from the published GG groups alone (m full buckets, which must hold m positives), each
    bucket's posterior by the forward-backward count above; vulnerable rows are those of
    buckets above 1/ℓ; the max risk is ℓ·p(b_1) of the longest group, which equals
    Theorem 6's closed form Π_{j<ℓ} (mℓ-1-j)/(mℓ-m-j). (The audit's 1862533/755368 for
    ℓ = 6, Craft-repair is a rational approximation of the float; the exact value is
    8140011/3301259, m = 37.)"""
    from openbook.experiments.cormode2010_attack import SETS, adult_table, run_fig3

    for l, m in [(3, 2), (3, 7), (6, 3), (6, 5)]:  # the count agrees with the enumeration of sequences
        assert _gg_bucket_posteriors_dp(l, m) == cf.gg_bucket_posteriors(l, m)
    table = adult_table(3000)
    derived = {}
    for (l, sv) in QUICK_FIG3:
        part = make_algorithm("gg", seed=0, model=make_model(f"simple-l={l},set={SETS[sv]}"), tail="drop",
                              ties="input").partition(table)
        code = list(table.sa_domain.values).index(sv)
        vulnerable, best, best_m = 0, Fraction(0), 0
        for g in range(part.n_groups):
            rows = np.flatnonzero(part.group == g)
            m, positives = divmod(rows.size, l)[0], int((table.sa_codes[rows] == code).sum())
            assert rows.size == m * l and (positives == m if m >= 2 else positives <= 1)
            if m < 2:
                continue  # one bucket, at most one positive: posterior <= 1/ℓ
            post = _gg_bucket_posteriors_dp(l, m)
            vulnerable += l * sum(p > Fraction(1, l) for p in post)
            if l * post[0] > best:
                best, best_m = l * post[0], m
        assert best == l * cf.gg_p_b1(l, best_m)  # Theorem 6
        derived[(l, sv)] = (vulnerable, best, best_m)
    assert derived == QUICK_FIG3
    f3 = run_fig3(quick=True, seed=0)
    main = f3.tables["main"]
    assert list(main.columns) == ["l", "sensitive_value", "vulnerable_fraction", "max_risk_multiple",
                                  "worst_group_buckets", "theorem6_multiple", "limit_multiple"]
    assert len(main) == len(derived)
    for row in main.itertuples():
        vulnerable, best, m = derived[(row.l, row.sensitive_value)]
        assert row.vulnerable_fraction == pytest.approx(vulnerable / 3000, abs=1e-15)
        assert row.max_risk_multiple == pytest.approx(float(best), abs=1e-12)
        assert row.worst_group_buckets == m and row.theorem6_multiple == pytest.approx(float(best), abs=1e-12)
        assert row.limit_multiple == pytest.approx(float(Fraction(row.l, row.l - 1) ** (row.l - 1)), abs=1e-12)
        assert best < Fraction(row.l, row.l - 1) ** (row.l - 1)  # below the fixed-ℓ limit
    oth = f3.tables["others"]
    assert (oth.loc[oth["algorithm"] == "anatomy", "vulnerable_fraction"] == 0).all()  # Claim 4


def test_cormode2010_quick_fig4(adult_frame):
    """Quick Fig. 4 (RGG(p), ℓ = 6): the max risk falls and the groups grow as p grows."""
    from openbook.experiments.cormode2010_attack import run_fig4

    f4 = run_fig4(quick=True, seed=0).tables["main"]
    assert list(f4.columns) == ["p", "sensitive_value", "vulnerable_fraction", "max_risk_multiple", "avg_group_size"]
    for _, g in f4.groupby("sensitive_value"):
        g = g.sort_values("p")
        assert g["max_risk_multiple"].iloc[-1] < g["max_risk_multiple"].iloc[0]
        assert g["avg_group_size"].iloc[-1] > g["avg_group_size"].iloc[0]
