"""Closed forms of paper 000 App. D and Theorems 5/7 (attacks/closed_forms.py) against
brute force."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb, e, factorial

import pytest

from openbook.attacks import closed_forms as cf


def _brute_nk(l: int, m: int) -> dict[int, int]:
    """Count worlds by enumerating every arrangement of m positives over m·ℓ slots."""
    out: dict[int, int] = {}
    for pos in itertools.combinations(range(m * l), m):
        n = [0] * m
        for x in pos:
            n[x // l] += 1
        if all(sum(n[: j + 1]) >= j + 2 for j in range(m - 1)):
            out[n[0]] = out.get(n[0], 0) + factorial(m) * factorial(m * l - m)
    return out


@pytest.mark.parametrize("l,m", [(2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 3), (4, 4), (5, 3), (6, 2)])
def test_lemmas_9_10_11_and_eq7_vs_enumeration(l, m):
    nk = _brute_nk(l, m)
    for k in range(0, m + 1):
        assert cf.lemma9_nk(l, m, k) == nk.get(k, 0)
    assert sum(k * v for k, v in nk.items()) == cf.lemma10(l, m)
    assert sum(l * v for v in nk.values()) == cf.lemma11(l, m)
    assert cf.gg_p_b1(l, m) == cf.gg_p_b1_eq7(l, m) == Fraction(sum(k * v for k, v in nk.items()),
                                                              l * sum(nk.values()))


@pytest.mark.parametrize("l", range(2, 9))
def test_theorem6_theorem8_and_m2(l):
    assert cf.gg_p_b1(l, 2) == Fraction(2, l)  # "for a group with m = 2 we have p(b1) = 2/ℓ"
    prev = Fraction(0)
    for m in range(2, 7):
        p = cf.gg_bucket_posteriors(l, m)
        assert p[0] == cf.gg_p_b1(l, m)
        assert all(p[i] >= p[i + 1] for i in range(m - 1))  # Theorem 8
        assert Fraction(2, l) <= p[0] < e / l  # Theorem 6, the 2/ℓ floor
        assert p[0] >= prev  # grows towards e/ℓ with m
        prev = p[0]
    # "as m increases this approaches e/ℓ in the limit": for a fixed ℓ the limit is
    # (ℓ/(ℓ-1))^(ℓ-1)/ℓ, which tends to e/ℓ only as ℓ grows too
    lim = (l / (l - 1)) ** (l - 1)
    assert float(cf.gg_p_b1(l, 2000)) * l == pytest.approx(lim, abs=2e-3) and lim < e


@pytest.mark.parametrize("l,m,P", [(3, 3, 3), (4, 3, 2), (6, 4, 4), (5, 2, 1)])
def test_theorem7_rgg(l, m, P):
    ws, wn = cf.rgg_world_split(l, m, P)
    assert ws + wn == comb(m * l, P)
    assert cf.gg_bucket_posteriors(l, m, P, p=0) is None or P == m  # GG needs m positives
    for p in (Fraction(1, 5), Fraction(1, 2), Fraction(9, 10)):
        pb = cf.gg_bucket_posteriors(l, m, P, p=p)
        assert float(pb[0]) <= cf.theorem7_bound(l, float(p), ws, wn) + 1e-12
        assert pb[0] == max(pb)  # the first bucket carries the largest risk
    # p = 1: every world equally likely — the baseline P/(mℓ)
    assert cf.gg_bucket_posteriors(l, m, P, p=1) == [Fraction(P, m * l)] * m


def test_theorem5_versions_by_brute_force():
    for l in range(2, 11):
        worst, arg = cf.even_split_max_posterior(l, max_rows=12 * l)
        assert worst == Fraction(2, 2 * l - 1) and arg["c"] == 2 and arg["n"] == 4 * l - 1
        assert worst <= cf.theorem5_bound(l)  # App. C.2's 1/(ℓ - 2/3) holds for every ℓ
        if l >= 5:
            assert worst > cf.theorem5_printed_s32(l)  # §3.2's 1/(ℓ - 2/ℓ) does not
    # without the proof's size floor (binary ℓ-diversity accepts small positive-free groups)
    assert cf.even_split_max_posterior(2, 20, min_child=1)[0] == 1
    assert cf.even_split_max_posterior(3, 30, min_child=1)[0] > cf.theorem5_bound(3)
    b = cf.bounds(6, m=3, p=0.5)
    assert b["gg_min"] == pytest.approx(2 / 6) and b["gg_max"] == pytest.approx(e / 6)
    assert b["gg_p_b1"] == pytest.approx(float(cf.gg_p_b1(6, 3)))
    assert 1 / 6 < b["rgg"] < e / 6
