"""Closed forms and bounds of paper 000 for the minimality attack, reported beside the
replay adversary's measured posteriors (:mod:`.replay`).

GG with binary ℓ-diversity (paper 000 §4.2, App. D): a group ``G_{1,m}`` of ``m`` buckets of
``ℓ`` rows with ``m`` positives (Eq. 3); GG's minimality gives Inequalities (4)
``Σ_{i<=j} n_i >= j + 1`` for ``j < m``.

* Lemma 9: ``N_k = (k-1)/(m-1) · C(ℓ,k) · C(mℓ-ℓ, m-k) · m! · (mℓ-m)!`` worlds with ``n_1 = k``;
* Lemma 10: ``Σ k N_k = ℓ(ℓ-1)/(m-1) · C(mℓ-2, m-2) · m!(mℓ-m)!``;
* Lemma 11: ``Σ ℓ N_k = ℓ/(m-1) · C(mℓ-ℓ, m) · m!(mℓ-m)!``;
* Eq. (7) / Theorem 6: ``p(b_1) = Π_{j=1}^{ℓ-1} (mℓ-1-j)/(mℓ-m-j) / ℓ < e/ℓ``; ``= 2/ℓ`` at ``m = 2``;
* Theorem 8: ``p(b_1) >= p(b_2) >= … >= p(b_m)``.

Theorem 5 (even-split algorithms, §3.2 / App. C.2). The paper prints the bound two ways:
``1/(ℓ - 2/ℓ)`` (§3.2) and ``1/(ℓ - 2/3)`` (App. C.2). Brute force over two-way even splits
with binary ℓ-diversity (:func:`even_split_max_posterior`) finds the largest posterior
``2/(2ℓ-1) = 1/(ℓ - 1/2)`` — a group of ``4ℓ-1`` rows holding 2 positives, split ``2ℓ | 2ℓ-1``,
both positives in the smaller half. ``1/(ℓ - 2/ℓ)`` is *below* it for every ``ℓ >= 5``
(ℓ = 5: 0.2174 < 0.2222), so it is not a bound; ``1/(ℓ - 2/3)`` is above it for every ℓ (the
proof's ``s/(s-1)·1/ℓ`` with ``s = rℓ``, ``r >= 2``). We use ``1/(ℓ - 2/3)``
(:func:`theorem5_bound`).

Both rest on the proof's assumption that every child considered has at least ``ℓ`` rows.
Binary ℓ-diversity (``simple-l=L,set=…``) also accepts smaller groups without positives, and
then an even split of ``ℓ+2`` rows refused only when the one positive lies in the smaller half
gives that half ``1/2`` (``min_child=1``: up to 1 at ℓ = 2, e.g. 3 rows split ``2 | 1``). SG on
Adult shows it (``cormode2010-fig3`` table ``others``); add a size floor (``k=ℓ``) to restore
the assumption.

Theorem 7 (RGG, App. C.4): ``p(b_1) <= (p|WS| + e|WN|) / (ℓ(p|WS| + |WN|))`` ∈ (1/ℓ, e/ℓ),
``WS``/``WN`` the worlds where the first bucket is / is not ℓ-diverse.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, e, factorial
from typing import Any


def _check(l: int, m: int) -> None:
    if l < 2 or m < 2:
        raise ValueError(f"need l >= 2 and m >= 2 (got l={l}, m={m})")


def lemma9_nk(l: int, m: int, k: int) -> int:
    """Lemma 9: the number of possible worlds of ``G_{1,m}`` with ``n_1 = k``."""
    _check(l, m)
    if k < 2 or k > min(m, l):
        return 0
    v = Fraction(k - 1, m - 1) * comb(l, k) * comb(m * l - l, m - k) * factorial(m) * factorial(m * l - m)
    assert v.denominator == 1
    return int(v)


def lemma10(l: int, m: int) -> int:
    """Lemma 10: ``Σ_k k N_k``."""
    _check(l, m)
    v = Fraction(l * (l - 1), m - 1) * comb(m * l - 2, m - 2) * factorial(m) * factorial(m * l - m)
    return int(v)


def lemma11(l: int, m: int) -> int:
    """Lemma 11: ``Σ_k ℓ N_k`` (as printed: ``ℓ/(m-1) · C(mℓ-ℓ, m) · m!(mℓ-m)!``)."""
    _check(l, m)
    v = Fraction(l, m - 1) * comb(m * l - l, m) * factorial(m) * factorial(m * l - m)
    return int(v)


def gg_p_b1_eq7(l: int, m: int) -> Fraction:
    """Eq. (7) from Lemma 9's ``N_k``: ``Σ k N_k / (ℓ Σ N_k)``."""
    ks = range(2, min(m, l) + 1)
    return Fraction(sum(k * lemma9_nk(l, m, k) for k in ks), l * sum(lemma9_nk(l, m, k) for k in ks))


def gg_p_b1(l: int, m: int) -> Fraction:
    """Theorem 6's closed form ``p(b_1) = Π_{j=1}^{ℓ-1} (mℓ-1-j)/(mℓ-m-j) / ℓ``."""
    _check(l, m)
    out = Fraction(1, l)
    for j in range(1, l):
        out *= Fraction(m * l - 1 - j, m * l - m - j)
    return out


def gg_bucket_posteriors(l: int, m: int, positives: int | None = None,
                         p: float | Fraction = 0) -> list[Fraction] | None:
    """Posterior ``p(b_i)`` of every bucket of a GG / RGG(p) group of ``m`` buckets of ``ℓ`` rows
    with ``positives`` positives (default ``m``, Eq. 3) under binary ℓ-diversity, by
    enumerating the count sequences ``(n_1..n_m)`` with weight ``Π C(ℓ, n_i)`` (worlds) times
    the algorithm's probability: GG keeps a sequence iff every proper prefix fails
    (``Σ_{i<=j} n_i > j``) and the whole holds; RGG(p) multiplies ``p`` per holding proper
    prefix. Independent of Lemmas 9–11 (a check of Theorem 8 and Theorem 7)."""
    _check(l, m)
    P = m if positives is None else int(positives)
    if P > m:
        raise ValueError(f"{P} positives in {m * l} rows violate binary {l}-diversity")
    p = Fraction(p) if not isinstance(p, Fraction) else p
    num = [Fraction(0)] * m
    den = Fraction(0)

    def rec(i: int, cum: int, w: Fraction, seq: list[int]) -> None:
        nonlocal den
        if i == m:
            if cum != P:
                return
            den += w
            for b in range(m):
                num[b] += w * seq[b]
            return
        for n_i in range(0, min(l, P - cum) + 1):
            c = cum + n_i
            f = Fraction(comb(l, n_i))
            if i < m - 1:
                f *= p if c <= i + 1 else 1  # prefix of i+1 buckets holds iff c <= i+1
            if f == 0:
                continue
            rec(i + 1, c, w * f, seq + [n_i])

    rec(0, 0, Fraction(1), [])
    if den == 0:
        return None
    return [x / (den * l) for x in num]


def rgg_world_split(l: int, m: int, positives: int | None = None) -> tuple[int, int]:
    """``(|WS|, |WN|)`` of App. C.4 as sequence weights: worlds of the group where the first
    bucket is / is not ℓ-diverse (binary ℓ-diversity)."""
    P = m if positives is None else int(positives)
    ws = wn = 0
    for k in range(0, min(l, P) + 1):
        w = comb(l, k) * comb(m * l - l, P - k)
        if k <= 1:
            ws += w
        else:
            wn += w
    return ws, wn


def theorem7_bound(l: int, p: float, ws: float, wn: float) -> float:
    """Theorem 7's bound ``(p|WS| + e|WN|) / (ℓ(p|WS| + |WN|))``."""
    d = p * ws + wn
    return float((p * ws + e * wn) / (l * d)) if d > 0 else 1.0 / l


def theorem5_bound(l: float) -> float:
    """Theorem 5 (App. C.2 version): an even-split algorithm leaks at most ``1/(ℓ - 2/3)``."""
    return 1.0 / (l - 2.0 / 3.0)


def theorem5_printed_s32(l: float) -> float:
    """Theorem 5 as printed in §3.2: ``1/(ℓ - 2/ℓ)`` — refuted by brute force for ℓ >= 5."""
    return 1.0 / (l - 2.0 / l)


def even_split_max_posterior(l: int, max_rows: int = 160, min_child: int | None = None
                             ) -> tuple[Fraction, dict[str, int]]:
    """Brute force: the largest posterior of a row in one half of a group (``n`` rows, ``c``
    positives, binary ℓ-diversity) whose even split (left ``⌈n/2⌉``, right ``⌊n/2⌋``) was
    refused, over ``n < max_rows`` with both halves of at least ``min_child`` rows (default
    ``ℓ``: the proof's "s - 1 >= ℓ"). Returns the value and its ``n, left, right, c``."""
    best, arg = Fraction(0), {}
    mc = l if min_child is None else int(min_child)
    for n in range(max(2, 2 * mc), max_rows):
        a = (n + 1) // 2
        b = n - a
        for c in range(1, n // l + 1):
            na = nb = den = 0
            for x in range(max(0, c - b), min(a, c) + 1):
                if x * l <= a and (c - x) * l <= b:
                    continue  # both halves diverse: the split would have been made
                w = comb(a, x) * comb(b, c - x)
                den += w
                na += w * x
                nb += w * (c - x)
            if den == 0:
                continue
            for val, side in ((Fraction(na, den * a), a), (Fraction(nb, den * b), b)):
                if val > best:
                    best, arg = val, {"n": n, "left": a, "right": b, "c": c, "half": side}
    return best, arg


def bounds(l: int, m: int | None = None, p: float | None = None) -> dict[str, Any]:
    """Every bound for ``ℓ`` (and a GG group of ``m`` buckets, RGG probability ``p``), as
    floats: ``gg_min`` ``2/ℓ`` (any vulnerable GG bucket), ``gg_max`` ``e/ℓ`` (Theorem 6),
    ``gg_p_b1`` (Theorem 6's closed form at ``m``), ``theorem5`` ``1/(ℓ-2/3)``,
    ``theorem5_s32`` (the §3.2 print), ``rgg`` (Theorem 7 at ``m``, ``p``, ``m`` positives)."""
    out: dict[str, Any] = {"l": l, "baseline": 1.0 / l, "gg_min": 2.0 / l, "gg_max": e / l,
                           "theorem5": theorem5_bound(l), "theorem5_s32": theorem5_printed_s32(l),
                           "theorem5_bruteforce": 2.0 / (2 * l - 1)}
    if m is not None and m >= 2:
        out["m"] = m
        out["gg_p_b1"] = float(gg_p_b1(l, m))
        if p is not None:
            ws, wn = rgg_world_split(l, m)
            out["p"] = p
            out["rgg"] = theorem7_bound(l, p, ws, wn)
    return out
