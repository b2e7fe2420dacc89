"""The eligibility attack (paper 004 §1.2, §3.1 Property 1, §4.2 Example 5 / Lemma 1).

An adversary sees the published SA counts ``c`` of ``T_P`` (the release), knows ``|T| = n``
(K2: ``|T_S|`` is reported) and the suppression algorithm with its parameter ℓ (K1). It does
not know ``T``. For each published value ``S_i'`` it computes the posterior
``Pr(S_i' = S1 | T_P, K)`` that ``S_i'`` was the most frequent value of ``T``.

* **D-suppression** (Safe or Unsafe stop): Property 1 — D-suppression preserves the rank
  order, so ``S1`` is in ``top(T_P)``: ``1/|top(T_P)|`` for each top value, 0 elsewhere
  (:func:`posterior_d_suppression`).
* **R-suppression**: exact enumeration of the plausible base tables ``B = c + d``
  (``d >= 0``, ``Σd = n - |c|``, ``B`` not ℓ-eligible) and of the random choices ``(h, F)``
  of STEP-1, replaying STEP-2 with the public decision function
  :func:`openbook.algorithms.suppression.r_suppression_outcome`::

      Pr(S_i' = S1 | c)  ∝  Σ_{B: S1(B) = S_i'}  prior(B) · Pr(c | B),
      Pr(c | B)  =  Σ_{h=1..ℓ} 1/ℓ · #{F ∈ [B_{h+1}, B_h] : R(B, h, F) = c} / (B_h - B_{h+1} + 1).

  Two priors over base tables (``prior=``):

  ``"uniform"``  every plausible count vector ``B`` equally likely — the reading of the
                 paper's Example 5 / Lemma 1 ("each eligible set is equally likely");
  ``"record"``   each of the ``n`` records draws its SA value independently from ``pi``
                 (default uniform over the values): ``prior(B) ∝ multinomial(n; B; pi)``.
                 This is also the posterior of an adversary who sees the published *rows*
                 (which rows of a value are withheld is uniform, so the extra factor
                 ``1/Π C(B_i, c_i)`` turns the count-level prior into the same multinomial).

  :func:`posterior_r_suppression` is the fast exact count (numba): STEP-2 only lowers the
  values that end at the top level ``max(c)`` or one below, and STEP-1 only lowers ``S1``,
  so ``d`` is zero outside ``U ∪ {S1(B)}`` with ``U = {i : c_i >= max(c) - 1}``; the
  enumeration runs over those few coordinates only: ``O(m · C(r+|U|, |U|) · ℓ · r)`` replays
  of an ``O(levels)`` STEP-2. :func:`posterior_by_enumeration` is the brute-force reference
  (all ``d`` over all values, exact fractions) the tests cross-check it with.

References
----------
Paper 004 §1.2 (eligibility attack), §2 (knowledge K1, K2; S-Ambiguity), §3.1 (Property 1),
§4.2 (Example 5, Theorem 3, Lemma 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
from numba import njit

from ..algorithms.suppression import descend, r_suppression_outcome
from ..errors import ParameterError

PRIORS = ("uniform", "record")
ALGORITHMS = ("r-suppression", "unsafe-d", "safe-d")


@dataclass(frozen=True)
class EligibilityPosterior:
    """``posterior[i] = Pr(value i = S1 | T_P, K)`` for each SA value (index = code)."""

    values: np.ndarray
    posterior: np.ndarray
    l: int
    algorithm: str
    prior: str
    n_plausible: int = 0

    @property
    def max_posterior(self) -> float:
        return float(np.max(self.posterior))

    @property
    def risk_ratio(self) -> float:
        """Max posterior as a multiple of the 1/ℓ bound of S-Ambiguity."""
        return self.max_posterior * self.l

    @property
    def s_ambiguous(self) -> bool:
        return self.max_posterior <= 1.0 / self.l + 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "prior": self.prior, "l": self.l,
                "posterior": {str(v): float(p) for v, p in zip(self.values, self.posterior)},
                "max_posterior": self.max_posterior, "risk_ratio": self.risk_ratio,
                "n_plausible": self.n_plausible}


def _inputs(published: Any, n: Any, l: Any) -> tuple[np.ndarray, int, int]:
    c = np.asarray(published)
    if c.ndim != 1 or c.size == 0 or not np.issubdtype(c.dtype, np.integer) or (c < 0).any():
        raise ParameterError("published counts must be a non-empty 1-D array of non-negative integers",
                             parameter="published")
    c = c.astype(np.int64)
    if int(n) < int(c.sum()):
        raise ParameterError(f"n={n} is smaller than the {int(c.sum())} published rows", parameter="n", value=n)
    if isinstance(l, bool) or not float(l).is_integer() or int(l) < 2:
        raise ParameterError(f"l={l!r} must be an integer >= 2", parameter="l", value=l)
    if c.sum() == 0:
        raise ParameterError("nothing was published: the posterior is the prior", parameter="published")
    return c, int(n), int(l)


# ---------------------------------------------------------------------------------------
# D-suppression: Property 1
# ---------------------------------------------------------------------------------------
def posterior_d_suppression(published: Any, l: Any, *, values: Sequence[Any] | np.ndarray | None = None,
                            n: int | None = None) -> EligibilityPosterior:
    """Property 1 (§3.1): ``1/|top(T_P)|`` for every value at the top level, 0 elsewhere.
    (If nothing was suppressed — ``n == |T_P|`` — ``T`` was ℓ-eligible and ``S1`` is simply
    the top value(s) too.)"""
    c, _, l = _inputs(published, n if n is not None else np.asarray(published).sum(), l)
    top = c == c.max()
    post = top / top.sum()
    vals = np.asarray(values) if values is not None else np.arange(c.size)
    return EligibilityPosterior(vals, post.astype(np.float64), l, "d-suppression", "property-1")


# ---------------------------------------------------------------------------------------
# R-suppression: fast exact count
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _logaddexp(a: float, b: float) -> float:  # pragma: no cover - numba
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True)
def _log_tie_probability(A, order_a, a, c):  # pragma: no cover - numba
    """``log Pr`` that D-suppression of ``A`` ends at ``c`` over STEP-2's uniformly random
    tie order: ``a`` is the result for the order ``order_a`` (count descending, ties by
    code). Any other tie order permutes values only within a group of equal ``A``, and the
    result pattern on a group's positions is fixed (its first ``g - s`` at ``L``, the last
    ``s`` at ``L - 1``), so the group matches ``c`` with probability ``1 / C(g, s)`` when
    ``c`` holds the same multiset there, else 0."""
    m = A.size
    logp = 0.0
    q = 0
    while q < m:
        e = q + 1
        while e < m and A[order_a[e]] == A[order_a[q]]:
            e += 1
        hi = a[q]
        lo = a[e - 1]
        s = 0
        for p in range(q, e):
            if a[p] != hi:
                s += 1
        n_hi = 0
        n_lo = 0
        for p in range(q, e):
            x = c[order_a[p]]
            if x == hi:
                n_hi += 1
            elif x == lo and lo != hi:
                n_lo += 1
            else:
                return -np.inf
        if n_lo != s or n_hi != e - q - s:
            return -np.inf
        g = e - q
        logp -= math.lgamma(g + 1.0) - math.lgamma(s + 1.0) - math.lgamma(g - s + 1.0)
        q = e
    return logp


@njit(cache=True)
def _log_like(B, v, c, n, l, fs, A, a, key, idx):  # pragma: no cover - numba
    """``log Pr(c | B, S1 = v)`` of R-suppression: every ``(h, F)`` and STEP-2 tie order."""
    m = B.size
    big = m + 1
    like = -np.inf
    for h in range(1, l + 1):
        lo = fs[h]
        hi = fs[h - 1]
        start = lo if lo > c[v] else c[v]
        for f in range(start, hi + 1):
            for i in range(m):
                A[i] = B[i]
            A[v] = f
            for i in range(m):
                key[i] = -A[i] * big + idx[i]
            order_a = np.argsort(key)
            for q in range(m):
                a[q] = A[order_a[q]]
            for q in range(m, a.size):
                a[q] = 0
            descend(a, n, l, B[v] - f)
            lp = _log_tie_probability(A, order_a, a, c)
            if lp > -np.inf:
                like = _logaddexp(like, lp - math.log(l * (hi - lo + 1.0)))
    return like


@njit(cache=True)
def _kernel(c, n, l, in_u, logpi, record):  # pragma: no cover - numba
    m = c.size
    r = n - c.sum()
    lognum = np.full(m, -np.inf)
    logden = -np.inf
    n_plaus = 0
    B = np.empty(m, np.int64)
    A = np.empty(m, np.int64)
    a = np.zeros(max(m, l), np.int64)
    fs = np.zeros(max(m, l) + 1, np.int64)
    key = np.empty(m, np.int64)
    idx = np.arange(m)
    slots = np.empty(m, np.int64)
    for v in range(m):
        k = 0
        for i in range(m):
            if in_u[i] or i == v:
                slots[k] = i
                k += 1
        d = np.zeros(k, np.int64)
        d[0] = r
        while True:
            for i in range(m):
                B[i] = c[i]
            for q in range(k):
                B[slots[q]] += d[q]
            top_ok = l * B[v] > n
            n_top = 0
            if top_ok:
                for i in range(m):
                    if B[i] > B[v]:
                        top_ok = False
                        break
                    if B[i] == B[v]:
                        n_top += 1
            if top_ok and n_top > 1:
                # B has tied most frequent values and turns up in the loop of each tied u
                # whose slots cover B - c: handle it once, in the first such loop
                for u in range(v):
                    if B[u] == B[v]:
                        covered = True
                        for i in range(m):
                            if B[i] > c[i] and not in_u[i] and i != u:
                                covered = False
                                break
                        if covered:
                            top_ok = False
                            break
            if top_ok:
                logw = 0.0
                if record:
                    for i in range(m):
                        logw -= math.lgamma(B[i] + 1.0)
                    for i in range(m):
                        logw += (B[i] - c[i]) * logpi[i]
                for i in range(m):
                    key[i] = -B[i] * (m + 1) + idx[i]
                order_t = np.argsort(key)
                for q in range(m):
                    fs[q] = B[order_t[q]]
                for q in range(m, fs.size):
                    fs[q] = 0
                any_like = False
                for u in range(m):  # S1 = u with probability 1/n_top: ties drawn at random
                    if B[u] != B[v]:
                        continue
                    like = _log_like(B, u, c, n, l, fs, A, a, key, idx)
                    if like > -np.inf:
                        any_like = True
                        lognum[u] = _logaddexp(lognum[u], logw + like - math.log(n_top))
                        logden = _logaddexp(logden, logw + like - math.log(n_top))
                if any_like:
                    n_plaus += 1
            # next weak composition of r into k parts
            if d[k - 1] == r:
                break
            t = d[k - 1]
            d[k - 1] = 0
            i = k - 2
            while d[i] == 0:
                i -= 1
            d[i] -= 1
            d[i + 1] = t + 1
    return lognum, logden, n_plaus


def _logpi(pi: Any, m: int) -> np.ndarray:
    if pi is None:
        return np.full(m, -math.log(m))
    p = np.asarray(pi, dtype=np.float64)
    if p.shape != (m,) or (p <= 0).any():
        raise ParameterError("pi must give a positive probability to every SA value", parameter="pi")
    return np.log(p / p.sum())


#: the largest enumeration :func:`posterior_r_suppression` runs (units of
#: :func:`r_suppression_work`, about 4·10^8 a second): beyond it the posterior is not computed
#: and the eligibility adversary counts every withheld person as unresolved
WORK_BUDGET = 2_000_000_000


class EnumerationTooLarge(ParameterError):
    """The exact R-suppression posterior would enumerate more than the work budget."""


def r_suppression_work(published: Any, n: Any, l: Any) -> int:
    """The size of the exact enumeration (Python int, no overflow): for each candidate
    ``S1``, the weak compositions of the ``r`` withheld records over its slots, times ℓ
    choices of ``h`` and up to ``r + 1`` levels ``F`` each (module docstring)."""
    c, n, l = _inputs(published, n, l)
    r = n - int(c.sum())
    in_u = c >= c.max() - 1
    u = int(in_u.sum())
    return sum(math.comb(r + (u if in_u[v] else u + 1) - 1, (u if in_u[v] else u + 1) - 1) * l * (r + 1)
               for v in range(c.size))


def posterior_r_suppression(published: Any, n: Any, l: Any, *, prior: str = "uniform", pi: Any = None,
                            values: Sequence[Any] | None = None,
                            budget: int | None = WORK_BUDGET) -> EligibilityPosterior:
    """Exact ``Pr(S_i' = S1 | T_P, K)`` for R-suppression by enumerating plausible base
    tables and random choices (see the module docstring; ``prior`` is ``"uniform"`` over
    count vectors or ``"record"`` with per-record SA distribution ``pi``). Raises
    :class:`EnumerationTooLarge` when :func:`r_suppression_work` exceeds ``budget`` (``None``:
    no limit) — never a guess in its place."""
    c, n, l = _inputs(published, n, l)
    if budget is not None and n != c.sum():
        work = r_suppression_work(c, n, l)
        if work > budget:
            raise EnumerationTooLarge(f"the exact R-suppression posterior would enumerate {work:.3g} base tables "
                                      f"and choices (budget {budget:.3g}): {n - int(c.sum())} withheld records",
                                      parameter="budget", value=budget)
    if prior not in PRIORS:
        raise ParameterError(f"unknown prior {prior!r} (use {' or '.join(PRIORS)})", parameter="prior", value=prior)
    vals = np.asarray(values) if values is not None else np.arange(c.size)
    if n == c.sum():  # nothing suppressed: T was ℓ-eligible, T_P = T
        return posterior_d_suppression(c, l, values=vals)
    in_u = c >= c.max() - 1
    lognum, logden, n_plaus = _kernel(c, n, l, in_u, _logpi(pi, c.size), prior == "record")
    if logden == -np.inf:
        raise ParameterError("no ℓ-ineligible base table of this size can yield these counts under "
                             f"R-suppression with l={l}", parameter="published")
    return EligibilityPosterior(vals, np.exp(lognum - logden), l, "r-suppression", prior, int(n_plaus))


# ---------------------------------------------------------------------------------------
# brute-force reference (exact fractions)
# ---------------------------------------------------------------------------------------
def _tie_orders(counts: np.ndarray):
    """Every ranking a uniformly random tie rule gives ``counts`` (count descending; every
    order within each group of equal non-zero counts), each with its probability, as
    ``(probability, tiebreak keys)``."""
    groups = [np.flatnonzero(counts == x) for x in np.unique(counts[counts > 0])]
    groups = [g for g in groups if g.size > 1]
    p = Fraction(1, math.prod(math.factorial(g.size) for g in groups))
    for perms in itertools.product(*(itertools.permutations(g.tolist()) for g in groups)):
        key = np.arange(counts.size)
        for g, perm in zip(groups, perms):
            key[list(perm)] = g
        yield p, key


def _outcomes(B: np.ndarray, l: int, algorithm: str) -> list[tuple[Fraction, int, tuple[int, ...]]]:
    """Every run of ``algorithm`` on ``B`` as ``(probability, S1, published counts)``: every
    S1 among the most frequent values, every random choice and every tie order, replayed
    with the public decision functions."""
    from ..algorithms.suppression import d_suppression_from, safe_d_suppression

    n = int(B.sum())
    out = []
    if algorithm == "safe-d":  # the published counts do not depend on the tie order
        pub = tuple(safe_d_suppression(B, l).published.tolist())
        tops = np.flatnonzero(B == B.max())
        return [(Fraction(1, tops.size), int(s1), pub) for s1 in tops]
    if algorithm == "unsafe-d":  # one ranking of T decides S1 and the descent
        for p, key in _tie_orders(B):
            s1 = int(np.lexsort((key, -B))[0])
            out.append((p, s1, tuple(d_suppression_from(B, n, l, tiebreak=key).tolist())))
        return out
    fs = np.zeros(max(B.size, l) + 1, dtype=np.int64)
    fs[: B.size] = np.sort(B)[::-1]
    tops = np.flatnonzero(B == B.max())
    for s1 in tops.tolist():
        for h in range(1, l + 1):
            lo, hi = int(fs[h]), int(fs[h - 1])
            for f in range(lo, hi + 1):
                A = B.copy()
                A[s1] = f
                for p, key in _tie_orders(A):
                    row = r_suppression_outcome(B, l, h, f, s1=int(s1), tiebreak=key)
                    out.append((Fraction(1, tops.size * l * (hi - lo + 1)) * p, int(s1), tuple(row.tolist())))
    return out


def posterior_by_enumeration(published: Any, n: Any, l: Any, *, algorithm: str = "r-suppression",
                             prior: str = "uniform") -> tuple[list[Fraction], int]:
    """Brute force: every ``d >= 0`` with ``Σd = n - |c|`` over all values, every random
    choice — including every tie order of every ranking — in exact
    :class:`~fractions.Fraction` arithmetic. ``prior="record"`` uses the uniform per-record
    distribution (``prior(B) ∝ 1/Π B_i!``). Returns the posterior per value and the number of
    plausible base tables. Exponential: for small tables only."""
    c, n, l = _inputs(published, n, l)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}", parameter="algorithm", value=algorithm)
    m, r = c.size, n - int(c.sum())
    target = tuple(c.tolist())
    num = [Fraction(0)] * m
    n_plaus = 0
    for combo in itertools.combinations_with_replacement(range(m), r):
        B = c.copy()
        for i in combo:
            B[i] += 1
        if l * int(B.max()) <= n:
            continue
        hits = [(p, s1) for p, s1, out in _outcomes(B, l, algorithm) if out == target]
        if not hits:
            continue
        n_plaus += 1
        w = Fraction(1, math.prod(math.factorial(int(b)) for b in B)) if prior == "record" else Fraction(1)
        for p, s1 in hits:
            num[s1] += w * p
    total = sum(num, Fraction(0))
    if total == 0:
        raise ParameterError("no plausible base table", parameter="published")
    return [x / total for x in num], n_plaus


def eligibility_attack(published: Any, n: Any, l: Any, *, algorithm: str = "r-suppression",
                       prior: str = "uniform", pi: Any = None, values: Sequence[Any] | None = None,
                       budget: int | None = WORK_BUDGET) -> EligibilityPosterior:
    """Posterior ``Pr(S_i' = S1 | T_P, K)`` for a release made by ``algorithm``
    (``r-suppression``, ``unsafe-d`` or ``safe-d``)."""
    if algorithm == "r-suppression":
        return posterior_r_suppression(published, n, l, prior=prior, pi=pi, values=values, budget=budget)
    if algorithm in ("unsafe-d", "safe-d"):
        return posterior_d_suppression(published, l, values=values, n=n)
    raise ParameterError(f"unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})",
                         parameter="algorithm", value=algorithm)
