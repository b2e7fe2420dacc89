"""Counting the worlds of the minimality attack (paper 001 §4.1 "General Formula", §4.2, §5)
without enumerating them: the engines behind :func:`.credibility.minimality_attack`.

How it is counted (never by enumerating worlds). For a sensitive value set in the paper's
"total" reading (and for every model whose verdict on a class depends only on its size and
its count of ``s`` — simple/binary ℓ-diversity, (α,k)-anonymity, k-anonymity), the worlds of
``Q`` with ``x_i`` sensitive tuples in unit ``i`` number ``Π_i C(n_i, x_i)`` with
``Σ x_i = S``. Each unit is a polynomial split into its satisfying part ``A_i`` (the ``x_i``
for which ``C_i`` satisfies ``R``) and violating part ``B_i``; a running pair
``(N, V)`` = (worlds with no violation so far, with at least one) is combined unit by unit,
``(N, V)·i = (N·A_i, V·F_i + N·B_i)`` — products of binomials by polynomial convolution,
every term positive (no cancellation). Identical units are raised to their multiplicity by
repeated squaring, units that can never violate are pooled into one (Vandermonde), and
the numerator ``E[x_i · 1(some violation)]`` comes from prefix/suffix products over the unit
types. Floating point uses binomial probabilities ``C(n,x)p^x(1-p)^{n-x}`` (``p = S/|Q|``;
the common factor cancels) so nothing overflows; ``exact=True`` uses Python integers and
returns :class:`fractions.Fraction` values. For other models (recursive (c,ℓ)-diversity,
t-closeness, (k,e)-anonymity, distinct/entropy ℓ-diversity, "each"-mode sets; §5) the verdict
depends on the class's whole SA distribution: a dynamic programme over the count vectors
of the class's SA values, within a state budget (``max_states``); a class over budget is
reported unresolved (NaN) — the replay attack samples those.

Every function here is class-local: one published class, its units (the tuples it holds of
each original QID-EC) and the SA it publishes; :mod:`.credibility` builds the units from a
release and mixes the class posteriors per person.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..errors import ParameterError
from ..models.base import SADomain

# =======================================================================================
# The binary engine: one class, units with (size, satisfying-x mask)
# =======================================================================================


class _Ops:
    """Polynomial arithmetic, float (binomial probabilities) or exact (Python ints)."""

    def __init__(self, S: int, N: int, exact: bool) -> None:
        self.S, self.exact = S, exact
        self.p = S / N if N else 0.0

    def weights(self, n: int) -> np.ndarray:
        hi = min(n, self.S)
        if self.exact:
            return np.array([math.comb(n, x) for x in range(hi + 1)], dtype=object)
        x = np.arange(hi + 1)
        if self.p <= 0.0 or self.p >= 1.0:
            out = np.zeros(hi + 1)
            out[0 if self.p <= 0.0 else hi] = 1.0 if (self.p <= 0.0 or hi == n) else 0.0
            return out
        lw = (gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
              + x * math.log(self.p) + (n - x) * math.log1p(-self.p))
        return np.exp(lw)

    def zeros(self, k: int) -> np.ndarray:
        return np.zeros(k, dtype=object) * 0 if self.exact else np.zeros(k)

    def conv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.convolve(a, b)[: self.S + 1]

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if len(a) < len(b):
            a, b = b, a
        out = a.copy()
        out[: len(b)] = out[: len(b)] + b
        return out

    def one(self) -> tuple[np.ndarray, np.ndarray]:
        if self.exact:
            return np.array([1], dtype=object), np.array([0], dtype=object)
        return np.array([1.0]), np.array([0.0])

    def combine(self, a, b):
        aN, aV = a
        bN, bV = b
        return self.conv(aN, bN), self.add(self.conv(aV, self.add(bN, bV)), self.conv(aN, bV))

    def power(self, s, m: int):
        out = self.one()
        base = s
        while m:
            if m & 1:
                out = self.combine(out, base)
            m >>= 1
            if m:
                base = self.combine(base, base)
        return out

    def coef_v(self, a, b) -> Any:
        """``[z^S]`` of the violating part of ``combine(a, b)`` (no full convolution)."""
        aN, aV = a
        bN, bV = b
        S = self.S
        bF = self.add(bN, bV)
        tot = 0
        for x in range(min(len(bF), S + 1)):
            y = S - x
            if y < len(aV):
                tot = tot + aV[y] * bF[x]
            if y < len(aN) and x < len(bV):
                tot = tot + aN[y] * bV[x]
        return tot


@dataclass
class ClassCredibility:
    """Result of :func:`class_credibility`: per unit type, the probability that a tuple of a
    unit of that type (among the class's tuples) carries ``s``; whether Lemma 1 is
    satisfiable (``consistent``); the fraction of worlds excluded."""

    credibility: list
    consistent: bool
    excluded_fraction: float
    total_worlds: Any = None
    kept_worlds: Any = None


def class_credibility(sizes: Sequence[int] | np.ndarray, sat: Sequence[np.ndarray], S: int, *,
                      mult: Sequence[int] | np.ndarray | None = None, exact: bool = False) -> ClassCredibility:
    """Credibility of each unit type of one published class (binary engine).

    Parameters
    ----------
    sizes:
        ``n`` of each unit type: the number of the class's tuples from one original QID-EC.
    sat:
        For each type, a boolean array over ``x = 0..min(n, S)``: does the original QID-EC
        satisfy the requirement when ``x`` of these tuples are sensitive.
    S:
        Number of sensitive tuples published in the class.
    mult:
        Multiplicity of each type (default 1 each).
    exact:
        Python-integer world counts and :class:`Fraction` results.
    """
    sizes = [int(n) for n in sizes]
    mult = [1] * len(sizes) if mult is None else [int(m) for m in mult]
    N = sum(n * m for n, m in zip(sizes, mult))
    if not 0 <= S <= N:
        raise ParameterError(f"S={S} sensitive tuples in a class of {N}", parameter="S", value=S)
    ops = _Ops(S, N, exact)
    frac = (lambda a, b: Fraction(a, b)) if exact else (lambda a, b: a / b)
    base_cred = frac(S, N) if N else 0.0
    # pool the units that can never violate (all x satisfy) into one free unit
    types: list[tuple[int, int, np.ndarray]] = []
    free_n = 0
    free_of: list[int] = []
    for t, (n, m, s) in enumerate(zip(sizes, mult, sat)):
        s = np.asarray(s, dtype=bool)[: min(n, S) + 1]
        if len(s) != min(n, S) + 1:
            raise ParameterError(f"sat mask of unit type {t} has {len(s)} entries, expected {min(n, S) + 1}",
                                 parameter="sat")
        if s.all():
            free_n += n * m
            free_of.append(t)
        else:
            types.append((n, m, s))
    type_index = [t for t in range(len(sizes)) if t not in set(free_of)]
    if free_n:
        types.append((free_n, 1, np.ones(min(free_n, S) + 1, dtype=bool)))
    states, weighted = [], []
    for n, m, s in types:
        F = ops.weights(n)
        zero = F * 0
        Nn = np.where(s, F, zero) if not exact else np.array([f if ok else 0 for f, ok in zip(F, s)], dtype=object)
        Vv = np.where(s, zero, F) if not exact else np.array([0 if ok else f for f, ok in zip(F, s)], dtype=object)
        st = ops.power((Nn, Vv), m)
        states.append(st)
        xs = np.arange(len(st[0])) if not exact else np.array(list(range(len(st[0]))), dtype=object)
        xv = np.arange(len(st[1])) if not exact else np.array(list(range(len(st[1]))), dtype=object)
        weighted.append((st[0] * xs, st[1] * xv))
    k = len(states)
    prefix = [ops.one()]
    for st in states:
        prefix.append(ops.combine(prefix[-1], st))
    suffix = [ops.one()] * (k + 1)
    for j in range(k - 1, -1, -1):
        suffix[j] = ops.combine(states[j], suffix[j + 1])
    totN, totV = prefix[k]
    kept = totV[S] if S < len(totV) else 0
    total = (totN[S] if S < len(totN) else 0) + kept
    cred_types: list = []
    if not exact and kept == 0 and _violation_possible(types, S, N):
        cc = class_credibility(sizes, sat, S, mult=mult, exact=True)  # float underflow: recount
        return ClassCredibility([float(c) for c in cc.credibility], cc.consistent, cc.excluded_fraction,
                                cc.total_worlds, cc.kept_worlds)
    if kept == 0 or total == 0:
        return ClassCredibility([base_cred] * len(sizes), False, 0.0, total, kept)
    for j, (n, m, _) in enumerate(types):
        rest = ops.combine(prefix[j], suffix[j + 1])
        num = ops.coef_v(rest, weighted[j])
        cred_types.append(frac(num, kept * m * n) if exact else float(num) / (float(kept) * m * n))
    out: list = [None] * len(sizes)
    for j, t in enumerate(type_index):
        out[t] = cred_types[j]
    for t in free_of:
        out[t] = cred_types[-1]
    excl = 1.0 - float(Fraction(kept, total) if exact else kept / total)
    return ClassCredibility(out, True, excl, total, kept)


def _violation_possible(types, S: int, N: int) -> bool:
    """Some world has a violating unit: a unit type with a violating ``x`` whose remainder
    ``S - x`` fits in the other tuples."""
    for n, m, s in types:
        bad = np.flatnonzero(~s)
        if bad.size and np.any((S - bad >= 0) & (S - bad <= N - n)):
            return True
    return False


def simple_l_sat(n: int, S: int, l: float, *, n_u: int = 0, u_s: int = 0) -> np.ndarray:
    """Satisfying mask of simple ℓ-diversity with the paper's set reading: the original
    QID-EC (``n_u`` ungeneralized tuples, ``u_s`` of them sensitive, plus ``n`` tuples in the
    class of which ``x`` are sensitive) has ``(u_s + x)·ℓ <= n_u + n``."""
    x = np.arange(min(n, S) + 1)
    fr = Fraction(l).limit_denominator(10**6)
    return (u_s + x) * fr.numerator <= (n_u + n) * fr.denominator


def global_credibility(sizes: Sequence[int], S: int, l: float, *, exact: bool = True) -> list:
    """Paper 001 §4.1 for simple ℓ-diversity: credibility of an individual of each original
    QID-EC (``sizes``) merged into one class with ``S`` sensitive tuples."""
    sat = [simple_l_sat(n, S, l) for n in sizes]
    return class_credibility(sizes, sat, S, exact=exact).credibility


def local_credibility(n: Sequence[int], n_u: Sequence[int], u_s: Sequence[int], S_G: int, l: float,
                      *, exact: bool = True) -> list:
    """Paper 001 §4.2 for simple ℓ-diversity: original QID-ECs ``C_i`` of ``n[i]`` tuples,
    ``n_u[i]`` of them published ungeneralized with ``u_s[i]`` sensitive, the other
    ``n_{i,g} = n[i] - n_u[i]`` generalized into one class ``C_G`` holding ``S_G`` sensitive
    tuples. Returns ``Credibility(o, s)`` for ``o ∈ C_i``."""
    ng = [a - b for a, b in zip(n, n_u)]
    if min(ng) < 0:
        raise ParameterError("n_u > n for some class", parameter="n_u")
    idx = [i for i, g in enumerate(ng) if g > 0]
    sat = [simple_l_sat(ng[i], S_G, l, n_u=n_u[i], u_s=u_s[i]) for i in idx]
    cc = class_credibility([ng[i] for i in idx], sat, S_G, exact=exact)
    frac = (lambda a, b: Fraction(a, b)) if exact else (lambda a, b: a / b)
    out = []
    for i in range(len(n)):
        c: Fraction | float = 0 if exact else 0.0
        if ng[i]:
            c = c + frac(ng[i], n[i]) * cc.credibility[idx.index(i)]
        if n_u[i]:
            c = c + frac(n_u[i], n[i]) * frac(u_s[i], n_u[i])
        out.append(c)
    return out


def sensitive_tuple_distribution(sizes: Sequence[int], S: int, l: float) -> pd.DataFrame:
    """Paper 001 Table 6: the combinations ``(x_1..x_u)`` of sensitive-tuple counts over the
    QID-ECs merged into one class that Lemma 1 keeps (some ``C_i`` violates simple
    ℓ-diversity), with their number of cases ``Π C(n_i, x_i)``. Enumerates combinations (a
    display of the table, for small examples), not worlds."""
    rows = []
    for xs in itertools.product(*[range(min(n, S) + 1) for n in sizes]):
        if sum(xs) != S:
            continue
        if all(simple_l_sat(n, S, l)[x] for n, x in zip(sizes, xs)):
            continue
        rows.append((*xs, math.prod(math.comb(n, x) for n, x in zip(sizes, xs))))
    cols = [f"C{i + 1}" for i in range(len(sizes))] + ["cases"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(cols[:-1], ascending=False).reset_index(drop=True)


# =======================================================================================
# The multivariate engine (§5 models): DP over SA count vectors, within a budget
# =======================================================================================
def _compositions(n: int, caps: np.ndarray) -> np.ndarray:
    r = len(caps)
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, cur: list[int]) -> None:
        if i == r - 1:
            if left <= caps[i]:
                out.append((*cur, left))
            return
        for v in range(min(left, int(caps[i])) + 1):
            rec(i + 1, left - v, cur + [v])

    if r == 0:
        return np.zeros((1 if n == 0 else 0, 0), dtype=np.int64)
    rec(0, n, [])
    return np.array(out, dtype=np.int64).reshape(-1, r)


def class_posterior_multi(units: Sequence[tuple[int, np.ndarray]], counts: np.ndarray, model: Any,
                          domain: SADomain, *, exact: bool = False, max_states: int = 200_000
                          ) -> tuple[np.ndarray | None, bool, float]:
    """Per unit, the posterior of each SA value (``(n_units, n_sa)``) for one published class
    with SA ``counts`` (full domain), under Lemma 1 with any model.

    ``units`` are ``(n_i, u_i)``: ``n_i`` tuples of original QID-EC ``C_i`` in the class and
    the SA count vector ``u_i`` of ``C_i``'s ungeneralized tuples (zeros under global
    recoding). Returns ``(None, False, nan)`` when the state space exceeds ``max_states``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_sa = counts.size
    idx = np.flatnonzero(counts > 0)
    cv = counts[idx]
    # Π (c_v + 1) in Python ints: int64 wraps for large classes (994 people over 14 values
    # is ~10^24 states) and a wrapped, negative count would pass the guard
    n_states = math.prod(int(c) + 1 for c in cv.tolist())
    if n_states > max_states:
        return None, False, float("nan")
    r = idx.size
    radix = np.cumprod(np.r_[1, (cv + 1)[:-1]]).astype(np.int64) if r else np.zeros(0, dtype=np.int64)
    full = int(cv @ radix) if r else 0
    keys = [(int(n), tuple(int(v) for v in u)) for n, u in units]
    uniq = sorted(set(keys))
    info = {}
    for key in uniq:
        n, u = key
        K = _compositions(n, cv)
        fullK = np.zeros((len(K), n_sa), dtype=np.int64)
        fullK[:, idx] = K
        ok = np.asarray(model.holds(fullK + np.asarray(u, dtype=np.int64)[None, :], domain), dtype=bool)
        if exact:
            w = np.array([math.factorial(n) // math.prod(math.factorial(int(v)) for v in k) for k in K], dtype=object)
        else:
            w = np.exp(math.lgamma(n + 1) - np.sum([[math.lgamma(v + 1) for v in k] for k in K], axis=1)) \
                if len(K) else np.zeros(0)
        info[key] = (K, w, ok, K @ radix if r else np.zeros(len(K), dtype=np.int64))
    zero = (lambda k: np.zeros(k, dtype=object) * 0) if exact else np.zeros

    # the states as a box: value 0 is the fastest axis of the radix, so the last in C order
    box = tuple(int(c) + 1 for c in cv[::-1])

    def step(NV, key):
        """Add one unit: every state c moves to c + k for each composition k of the unit that
        stays inside the box — on the box, a shift of the sub-box ``c <= cv − k`` (views)."""
        Nc, Vc = NV
        K, w, ok, off = info[key]
        nN, nV = zero(n_states), zero(n_states)
        Nb, Vb, nNb, nVb = (a.reshape(box) for a in (Nc, Vc, nN, nV))
        for k, wk, okk in zip(K, w, ok):
            kk = [int(x) for x in k[::-1]]
            if any(x >= b for x, b in zip(kk, box)):
                continue
            src = tuple(slice(0, b - x) for x, b in zip(kk, box))
            tgt = tuple(slice(x, b) for x, b in zip(kk, box))
            if okk:
                nNb[tgt] += Nb[src] * wk
                nVb[tgt] += Vb[src] * wk
            else:
                nVb[tgt] += (Nb[src] + Vb[src]) * wk
        return nN, nV

    def run(skip: int | None):
        Nc, Vc = zero(n_states), zero(n_states)
        Nc[0] = 1
        for j, key in enumerate(keys):
            if j != skip:
                Nc, Vc = step((Nc, Vc), key)
        return Nc, Vc

    Nt, Vt = run(None)
    kept, total = Vt[full], Nt[full] + Vt[full]
    post = np.zeros((len(units), n_sa), dtype=object if exact else np.float64)
    size = int(counts.sum())
    if kept == 0:
        for j in range(len(units)):
            post[j] = [Fraction(int(c), size) for c in counts] if exact else counts / size
        return post, False, 0.0
    done: dict[tuple, np.ndarray] = {}
    for j, key in enumerate(keys):
        if key in done:
            post[j] = done[key]
            continue
        Nr, Vr = run(j)
        K, w, ok, off = info[key]
        num = zero(r)
        for k, wk, okk, o in zip(K, w, ok, off):
            rest = full - int(o)
            if np.any(k > cv):
                continue
            term = Vr[rest] + (0 if okk else Nr[rest])
            num = num + term * wk * k
        row = np.zeros(n_sa, dtype=object) * 0 if exact else np.zeros(n_sa)
        n = key[0]
        for a, i in enumerate(idx):
            row[i] = Fraction(num[a], kept * n) if exact else float(num[a]) / (float(kept) * n)
        done[key] = row
        post[j] = row
    excl = 1.0 - (float(Fraction(kept, total)) if exact else float(kept) / float(total))
    return post, True, excl


