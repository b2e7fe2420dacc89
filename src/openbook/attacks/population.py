"""The population behind a sample (:mod:`.reidentification`, ``docs/identity.md``): ``F_j``,
the number of people who match record ``j``'s published QIs, counted from a population table
or bounded through fitted models.

**A table** (as ARX takes it: QI values, one row per person or a count column) gives ``F_j``
exactly (:func:`population_sizes`): exact QIs match the equal tuple; a generalized release's
labels (``[20-29]``, hierarchy nodes, ``*``) every person whose values fall under them
(:func:`openbook.release.labels.label_masks` on the original's encoding, or the population's).

**Models.** The Pitman sampling formula (J. Pitman, Probab. Theory Relat. Fields 102, 1995;
for microdata F. Hoshino, J. Official Statistics 17(4), 2001) describes the whole population's
partition, and a simple random sample of it is again Pitman: the ``M = N − n`` people not
sampled join a sample class of size ``f`` by a Pólya urn (class weight ``f − α``, the rest
``θ + n − f + α``), so ``F − f ~ BetaBinomial(M, f − α, θ + n − f + α)`` exactly
(:func:`posterior`). :func:`pitman_fit` is the maximum-likelihood fit, :func:`pitman_region`
the largest ``α`` of the 99 % likelihood region (``2 ΔlogL ≤ χ²₂(0.99) = −2 log 0.01``),
:func:`snb_posterior` the same law under the SNB model, :func:`model_bounds` the bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

#: ``2 ΔlogL`` of the likelihood region whose largest ``α`` bounds the risks (χ²₂, 99 %)
REGION_Q = -2.0 * math.log(0.01)
#: standard deviations added to the expected share at risk and success rate
MARGIN_Z = 3.0
#: highest risk: the largest ``1/m`` that some class of a size reaches with this probability
HIGHEST_DELTA = 0.01
#: terms of each posterior summed exactly (the rest bounded)
TERMS = 64

# B_2k / (2k (2k−1)) and B_2k, k = 1..7 (Stirling series, DLMF 5.11.1–2)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


# ---------------------------------------------------------------------------------------
# special functions without cancellation
# ---------------------------------------------------------------------------------------
def lgamma_ratio(x: Any, h: Any) -> Any:
    """``log Γ(x+h) − log Γ(x)`` elementwise (``x > 0``, ``x + h > 0``) to a few ulp: ``x``
    shifted to 10 or more, then the difference of the Stirling series, every term formed
    without cancellation (``log1p``, ``expm1``) — where ``lgamma(x+h) − lgamma(x)`` loses
    ``log10 lgamma(x)`` digits."""
    x, h = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(h, dtype=np.float64))
    x = x.copy()
    out = np.zeros(x.shape)
    low = np.minimum(x, x + h) < 10.0
    while low.any():  # Γ(x+h)/Γ(x) = Γ(x+1+h)/Γ(x+1) · x/(x+h)
        out -= np.where(low, np.log1p(h / np.where(low, x, 1.0)), 0.0)
        x = np.where(low, x + 1.0, x)
        low = np.minimum(x, x + h) < 10.0
    lr = np.log1p(h / x)
    out += (x - 0.5) * lr + h * np.log(x + h) - h
    for k, b in enumerate(_STIRLING, start=1):
        out += b * x ** (1 - 2 * k) * np.expm1((1 - 2 * k) * lr)
    return out if out.ndim else float(out)


def _series_tail(x: float, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`psi_diffs` of ``x ≥ 16`` and an array of ``m``, by the asymptotic series alone."""
    lr = np.log1p(m / x)
    r = m / (x * (x + m))
    d1 = lr + 0.5 * r
    d2 = r - 0.5 * np.expm1(-2 * lr) / (x * x)
    for k, b in enumerate(_BERNOULLI, start=1):
        p = x ** (-2 * k)
        d1 -= b / (2 * k) * p * np.expm1(-2 * k * lr)
        d2 -= b * p / x * np.expm1((-2 * k - 1) * lr)
    return d1, d2


def _lgamma_ratio1(x: float, h: float) -> float:
    """:func:`lgamma_ratio` of plain floats."""
    out = 0.0
    while min(x, x + h) < 10.0:
        out -= math.log1p(h / x)
        x += 1.0
    lr = math.log1p(h / x)
    out += (x - 0.5) * lr + h * math.log(x + h) - h
    for k, b in enumerate(_STIRLING, start=1):
        out += b * x ** (1 - 2 * k) * math.expm1((1 - 2 * k) * lr)
    return out


def _lgamma_step(x: float, m: float, d: float) -> float:
    """``log Γ(x+m+d) − log Γ(x+m) − log Γ(x+d) + log Γ(x)`` (``x, x + d > 0``, ``m ≥ 0``), as
    the difference of two :func:`lgamma_ratio` over the shorter of the steps ``m`` and ``d``."""
    if abs(d) <= m:
        return _lgamma_ratio1(x + m, d) - _lgamma_ratio1(x, d)
    return _lgamma_ratio1(x + d, m) - _lgamma_ratio1(x, m)


def psi_diffs(x: float, m: float) -> tuple[float, float]:
    """``ψ(x+m) − ψ(x) = Σ_{i<m} 1/(x+i)`` and ``ψ₁(x) − ψ₁(x+m) = Σ_{i<m} 1/(x+i)²`` for
    ``x > 0`` and whole ``m ≥ 0``: the terms summed until ``x + i ≥ 16``, then the asymptotic
    series of the differences (DLMF 5.11.2), each formed without cancellation."""
    d1 = d2 = 0.0
    while x < 16.0 and m > 0:
        d1 += 1.0 / x
        d2 += 1.0 / (x * x)
        x, m = x + 1.0, m - 1.0
    if m <= 0:
        return d1, d2
    lr = math.log1p(m / x)
    r = m / (x * (x + m))
    d1 += lr + 0.5 * r
    d2 += r - 0.5 * math.expm1(-2 * lr) / (x * x)
    for k, b in enumerate(_BERNOULLI, start=1):
        p = x ** (-2 * k)
        d1 -= b / (2 * k) * p * math.expm1(-2 * k * lr)
        d2 -= b * p / x * math.expm1((-2 * k - 1) * lr)
    return d1, d2


# ---------------------------------------------------------------------------------------
# the Pitman model: maximum likelihood and the likelihood region
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PitmanFit:
    """``θ``, ``α`` and the log-likelihood; ``interior`` is False when the likelihood is
    largest at the edge ``α → 0`` (the Ewens model) or ``α → 1`` (then ``α`` is that edge)."""

    theta: float
    alpha: float
    loglik: float
    interior: bool


class _Pitman:
    """The sampling formula's log-likelihood ``L(θ, α) = Σ_{i<K} log(θ+iα) − Σ_{i<n} log(θ+i)
    + Σ_j c_j Σ_{i<j} log(i−α)`` of a sample's ``c_j``, its scores and Hessian:
    ``∂L/∂θ = A₁ − B₁``, ``∂L/∂α = Σ_{i<K} i/(θ+iα) − C₁``, with ``A₁ = Σ_{i<K} 1/(θ+iα)``,
    ``B₁ = Σ_{i<n} 1/(θ+i)``, ``C₁ = Σ_j c_j Σ_{i<j} 1/(i−α)`` (``A₂, B₂, C₂`` the sums of
    squares), all by :func:`psi_diffs`."""

    def __init__(self, sizes: np.ndarray, counts: np.ndarray, n: int) -> None:
        self.j = np.asarray(sizes, dtype=np.float64)
        self.c = np.asarray(counts, dtype=np.float64)
        self.n, self.K = int(n), int(round(float(self.c.sum())))
        # i = 1..K−1: Σ i/(θ/α + i) summed directly ((K−1) − (θ/α) Σ 1/(θ/α+i) cancels for θ/α ≫ K)
        self.i_k = np.arange(1.0, self.K) if self.K <= 1 << 16 else None
        m = self.j - 1.0
        small = m <= 16  # C₁, C₂ at x = 1 − α < 1: the first 16 terms by table, the rest by series
        self.w_small = np.bincount(m[small].astype(np.int64), weights=self.c[small], minlength=17)
        self.m_big, self.c_big = m[~small] - 16.0, self.c[~small]

    def csums(self, alpha: float) -> tuple[float, float]:
        """``C₁`` and ``C₂`` (class docstring)."""
        h1, h2, a1, a2 = [0.0], [0.0], 0.0, 0.0
        for i in range(16):
            x = 1.0 - alpha + i
            a1 += 1.0 / x
            a2 += 1.0 / (x * x)
            h1.append(a1)
            h2.append(a2)
        w = self.w_small
        c1, c2 = float(w @ h1), float(w @ h2)
        if self.m_big.size:
            d1, d2 = _series_tail(17.0 - alpha, self.m_big)
            tot = self.c_big.sum()
            c1 += float(tot * a1 + self.c_big @ d1)
            c2 += float(tot * a2 + self.c_big @ d2)
        return c1, c2

    def parts(self, u: float, alpha: float) -> tuple[float, float, float, float]:
        """``A₁, A₂, B₁, B₂`` at ``θ = u − α`` (``u = θ + α > 0`` kept apart: ``θ/α + 1 = u/α``)."""
        a1, a2 = psi_diffs(u / alpha, self.K - 1)
        b1, b2 = psi_diffs(u + 1.0 - alpha, self.n - 1)
        return a1 / alpha, a2 / alpha ** 2, b1, b2

    def loglik(self, u: float, alpha: float) -> float:
        from scipy.special import gammaln

        lc = float((self.c * (gammaln(self.j - alpha) - gammaln(1.0 - alpha))).sum())
        return ((self.K - 1) * math.log(alpha) + _lgamma_ratio1(u / alpha, self.K - 1)
                - _lgamma_ratio1(u + 1.0 - alpha, self.n - 1) + lc)

    def drop(self, u0: float, a0: float, u: float, alpha: float) -> float:
        """``L(θ₀, α₀) − L(θ, α)`` (``u = θ + α``) term by term, each a difference over the
        step (``log Γ(x+m+δ)/Γ(x+m) − log Γ(x+δ)/Γ(x)`` by :func:`lgamma_ratio`; the classes'
        ``Σ_{i<j} log((i−α₀)/(i−α))`` by table below 17): the drop keeps its digits where the
        two likelihoods, of magnitude ``n log n``, would cancel them."""
        x, x2, da = u / alpha, u + 1.0 - alpha, alpha - a0
        d, d2 = u0 / a0 - x, (u0 - a0) - (u - alpha)
        out = (self.K - 1) * math.log1p(-da / alpha) + _lgamma_step(x, self.K - 1, d) - _lgamma_step(x2, self.n - 1, d2)
        h = np.concatenate([[0.0], np.cumsum(np.log1p(da / (np.arange(1.0, 17.0) - alpha)))])
        out += float(self.w_small @ h)
        if self.m_big.size:  # Σ_{17≤i<j}: log Γ(j−α₀)/Γ(j−α) − log Γ(17−α₀)/Γ(17−α)
            r = lgamma_ratio(np.concatenate([[17.0 - alpha], self.m_big + (17.0 - alpha)]), da)
            out += float(self.c_big.sum() * h[16] + self.c_big @ (r[1:] - r[0]))
        return out

    def u_hat(self, alpha: float, u: float) -> float:
        """``θ̂(α) + α``, ``θ̂`` maximising ``L(·, α)``: the root of ``A₁ = B₁`` (positive as
        ``θ → −α``, negative as ``θ → ∞`` when ``1 < K < n``), by Newton's method on
        ``s = log(θ+α)`` inside a bracket."""
        s = math.log(max(u, 1e-300))
        lo, hi = -math.inf, math.inf
        for _ in range(200):
            u = math.exp(s)
            a1, a2, b1, b2 = self.parts(u, alpha)
            h = a1 - b1
            if h > 0:
                lo = s
            else:
                hi = s
            if h == 0:
                return u
            slope = (b2 - a2) * u
            new = s + max(-4.0, min(4.0, -h / slope)) if slope < 0 else math.nan
            if abs(new - s) <= 1e-9 * max(1.0, abs(s)):  # quadratic convergence: lands within ulps
                return math.exp(new)
            if not lo < new < hi:
                new = hi - 4.0 if math.isinf(lo) else lo + 4.0 if math.isinf(hi) else 0.5 * (lo + hi)
            if new < -700.0 or hi - lo <= 4e-16 * max(1.0, abs(s)):
                return math.exp(max(new, -700.0))
            s = new
        return math.exp(s)

    def profile(self, alpha: float, u: float) -> tuple[float, float, float, float]:
        """At ``θ̂(α)``: ``θ̂ + α``, the profile score ``∂L/∂α``, its derivative along the
        profile ``H_αα − H_θα²/H_θθ``, and ``d(θ̂+α)/dα = 1 − H_θα/H_θθ`` (the next start)."""
        u = self.u_hat(alpha, u)
        t = u - alpha
        a1, a2, b1, b2 = self.parts(u, alpha)
        c1, c2 = self.csums(alpha)
        y = u / alpha - 1.0  # θ/α
        e = float((self.i_k / (y + self.i_k)).sum()) if self.i_k is not None else (self.K - 1) - y * a1 * alpha
        g = e / alpha - c1
        htt = b2 - a2
        hta = -(a1 - t * a2) / alpha
        haa = -((self.K - 1) - 2 * t * a1 + t * t * a2) / alpha ** 2 - c2
        if htt == 0:
            return u, g, haa, 1.0
        return u, g, haa - hta * hta / htt, 1.0 - hta / htt


def pitman_fit(sizes: np.ndarray, counts: np.ndarray, n: int) -> PitmanFit | None:
    """Maximum-likelihood ``(θ, α)`` of the Pitman sampling formula: Newton's method on the
    profile score ``∂L/∂α`` at ``θ̂(α)`` (each ``θ̂`` by Newton's method), kept inside a
    bracket of ``α`` by bisection, from ``α = c₁/K``. ``None`` without a maximum to find
    (fewer than two classes, or every record unique)."""
    model = _Pitman(sizes, counts, n)
    if model.K < 2 or model.K >= n:
        return None
    c1 = float(model.c[model.j == 1].sum())
    a = min(0.95, max(0.05, c1 / model.K))
    u = 10.0
    lo, hi = 0.0, 1.0
    for _ in range(200):
        u, g, d, du = model.profile(a, u)
        if g > 0:
            lo = a
        else:
            hi = a
        if g == 0:
            break
        new = a - g / d if d < 0 else math.nan
        if abs(new - a) <= 1e-9 * a:  # quadratic convergence: the step lands within ulps
            a = new
            break
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if hi < 1e-9 or lo > 1.0 - 1e-9:  # the likelihood grows towards an edge of α
            a = 1e-9 if hi < 1e-9 else 1.0 - 1e-9
            u = model.u_hat(a, u)
            return PitmanFit(float(u - a), a, float(model.loglik(u, a)), False)
        if hi - lo <= 4e-16 * a:
            break
        u = max(u + du * (new - a), 0.5 * u)
        a = new
    u = model.u_hat(a, u)
    return PitmanFit(float(u - a), float(a), float(model.loglik(u, a)), True)


def pitman_region(sizes: np.ndarray, counts: np.ndarray, n: int, fit: PitmanFit,
                  q: float = REGION_Q) -> tuple[float, float]:
    """``(θ̂(α_U), α_U)``: the largest ``α`` of the likelihood region ``2 (L̂ − L) ≤ q``
    along the profile (Newton's method on ``2 (L̂ − L(θ̂(α), α)) = q``, whose derivative is
    the profile score), or ``α → 1`` when the region reaches it."""
    model = _Pitman(sizes, counts, n)
    top = 1.0 - 1e-9
    lo, hi = fit.alpha, top
    u, _, d, du = model.profile(fit.alpha, fit.theta + fit.alpha)
    # the quadratic guess, at most half-way to α = 1 (where the profile falls off steeply)
    a = min(0.5 * (fit.alpha + 1.0), fit.alpha + (math.sqrt(q / -d) if d < 0 else 0.05))
    u = max(u + du * (a - fit.alpha), 0.5 * u)
    for _ in range(200):
        u, g, _, du = model.profile(a, u)
        gap = 2.0 * model.drop(fit.theta + fit.alpha, fit.alpha, u, a) - q
        if gap > 0:
            hi = a
        else:
            lo = a
            if a >= top:
                return float(u - a), float(a)
        new = a + gap / (2.0 * g) if g < 0 else math.nan
        # the gap rises steeply towards α = 1, where Newton's steps from above creep: far from
        # the root (gap > 1) a step under a quarter of the bracket bisects instead
        slow = gap > 1.0 and hi < top and abs(new - a) < 0.25 * (hi - lo)
        if not lo < new < hi or slow:
            new = 0.5 * (lo + hi) if hi < top else min(top, a + 2.0 * (a - fit.alpha) + 1e-6)
        elif abs(new - a) <= 1e-9 and abs(gap) <= 1e-3:  # lands within ulps (quadratic convergence)
            a = new
            break
        u = max(u + du * (new - a), 0.5 * u)
        a = new
    u = model.u_hat(a, u)
    return float(u - a), float(a)


# ---------------------------------------------------------------------------------------
# the posterior of F given f, and the bounds
# ---------------------------------------------------------------------------------------
def posterior(theta: Any, alpha: Any, sizes: np.ndarray, n: int, N: float,
              terms: int = TERMS) -> tuple[np.ndarray, np.ndarray]:
    """Pitman model, per sample class size ``f`` (``theta``, ``alpha`` scalars or one per size):
    ``P(F = f + x | f)``, ``x < terms`` (``X ~ BetaBinomial(M, a, b)``, ``a = f − α``,
    ``b = θ + n − f + α``: ``P(0) = B(a, b+M)/B(a, b)``, then term ratios) and an upper bound of
    ``E[1/F | f]``: exact for ``f = 1``, ``(θ+n−1)/(α(M+1)) · (Γ(M+b+1)Γ(b−α)/(Γ(M+b+1−α)Γ(b)) − 1)``
    (by ``C(M,x)/(x+1) = C(M+1,x+1)/(M+1)``); for ``f ≥ 2`` ``E[1/(X+a−1)] = (θ+n−1)/((f−α−1)
    (θ+N−1))`` less ``(1+α) E[1/((f+X)(X+a−1))]`` over the first ``terms`` values."""
    f = np.asarray(sizes, dtype=np.float64)
    th = np.broadcast_to(np.asarray(theta, dtype=np.float64), f.shape)
    al = np.broadcast_to(np.asarray(alpha, dtype=np.float64), f.shape)
    M = float(N) - n
    if M < 0.5:  # the sample is the population
        pmf = np.zeros((f.size, max(terms, 1)))
        pmf[:, 0] = 1.0
        return pmf, 1.0 / f
    width = int(min(terms, M + 1))
    a, b = f - al, th + n - f + al
    one = f == 1
    b1 = b[one] - al[one]  # θ + n − 1
    # log P(0) = log Γ(a+b)/Γ(b) − log Γ(a+b+M)/Γ(b+M); f = 1: log Γ(M+b+1)/Γ(M+b+1−α) − log Γ(b)/Γ(b−α)
    lg = lgamma_ratio(np.concatenate([b, b + M, M + 1.0 + b1, b1]), np.concatenate([a, a, al[one], al[one]]))
    k, j = f.size, int(one.sum())
    lp0 = lg[:k] - lg[k:2 * k]
    x = np.arange(width - 1, dtype=np.float64)[None, :]
    ratio = (M - x) * (x + a[:, None]) / ((x + 1.0) * (M - x - 1.0 + b[:, None]))
    lp = np.concatenate([lp0[:, None], lp0[:, None] + np.cumsum(np.log(ratio), axis=1)], axis=1)
    pmf = np.exp(lp)
    e1 = np.empty(k)
    if j:
        e1[one] = b1 / (al[one] * (M + 1.0)) * np.expm1(lg[2 * k:2 * k + j] - lg[2 * k + j:])
    if j < k:
        many = ~one
        fm, am = f[many][:, None], al[many][:, None]
        xs = np.arange(width, dtype=np.float64)[None, :]
        closed = (th[many] + n - 1.0) / ((f[many] - al[many] - 1.0) * (th[many] + N - 1.0))
        e1[many] = closed - ((1.0 + am) * pmf[many] / ((fm + xs) * (xs + fm - am - 1.0))).sum(axis=1)
    return pmf, np.minimum(e1, 1.0 / f)


def snb_posterior(a: float, b: float, pi: float, sizes: np.ndarray,
                  terms: int = TERMS) -> tuple[np.ndarray, np.ndarray]:
    """Under the SNB model (population class sizes ``1 + NegBin(a, b)``, Bernoulli(π)
    sampling; Chen & Keller-McNulty 1998), for each sample class size ``f``: ``P(F = f + u | f)
    ∝ (c)_u dᵘ/u! · (f + u)`` with ``c = a + f − 1``, ``d = (1−b)(1−π)`` (normaliser
    ``(1−d)^(−c) (f + cd/(1−d))``), for ``u < terms``, and ``E[1/F | f] = 1/(f + cd/(1−d))``
    exactly (the ``f+u`` cancels)."""
    f = np.asarray(sizes, dtype=np.float64)
    d = (1.0 - b) * (1.0 - pi)
    c = a + f - 1.0
    mean_u = c * d / (1.0 - d)
    u = np.arange(terms - 1, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore"):
        lt = np.concatenate([np.zeros((f.size, 1)), np.cumsum(np.log((c[:, None] + u) * d / (u + 1.0)), axis=1)],
                            axis=1)
    uu = np.arange(terms, dtype=np.float64)[None, :]
    lz = c * math.log1p(-d) - np.log(f + mean_u)
    return np.exp(lt + np.log(f[:, None] + uu) + lz[:, None]), 1.0 / (f + mean_u)


# ---------------------------------------------------------------------------------------
# the population as a table: exact F
# ---------------------------------------------------------------------------------------
@dataclass
class Population:
    """A population table: ``frame`` holds the QI values (one row per person, or per group of
    ``count`` people when ``count`` names a column)."""

    frame: Any
    count: str | None = None
    #: hierarchies of QIs (objects, or ``--hierarchy`` specs such as ``adult:paper001``) for
    #: matching a generalized release's node labels without its original table
    hierarchies: dict[str, Any] | None = None

    def weights(self, qi: list[str]) -> np.ndarray:
        from ..errors import DataError

        missing = [c for c in qi if c not in self.frame.columns]
        if missing:
            raise DataError(f"the population table has no column {missing[0]!r} (a QI of the data)")
        if self.count is None or self.count in qi:
            return np.ones(len(self.frame))
        import pandas as pd

        w = pd.to_numeric(self.frame[self.count], errors="coerce").to_numpy(np.float64)
        bad = ~np.isfinite(w) | (w < 0) | (w != np.round(w))
        if bad.any():
            value = self.frame[self.count].iloc[int(np.argmax(bad))]
            raise DataError(f"the population's {self.count!r} column holds {value!r}: counts are whole numbers")
        return w


def read_population(path: Any, hierarchies: Any = ()) -> Population:
    """A population table from a file or database (``openbook check --population FILE``),
    read as the data is (:func:`openbook.data.loaders.read_table`); a column named ``count``
    that is not a QI gives the number of people with each row's values. ``hierarchies``:
    ``COLUMN=SPEC`` items (``--hierarchy``) for a generalized release's node labels."""
    from ..data.loaders import read_table
    from ..errors import ParameterError

    frame = read_table(path)
    if any("=" not in str(item) for item in hierarchies or ()):
        raise ParameterError("--hierarchy: use COLUMN=PATH", parameter="hierarchy")
    hier = {k.strip(): v.strip() for k, _, v in (str(item).partition("=") for item in hierarchies or ())}
    return Population(frame, "count" if "count" in frame.columns else None, hier or None)


def as_population(population: Any, count: str | None = None) -> Population:
    if isinstance(population, Population):
        return population if count is None else Population(population.frame, count, population.hierarchies)
    if not hasattr(population, "columns"):
        from ..errors import ParameterError

        raise ParameterError("population must be a table (a pandas DataFrame) of the population's QI values",
                             parameter="population")
    return Population(population, count)


def _keys(values: Any, numeric: bool) -> Any:
    import pandas as pd

    s = pd.Series(np.asarray(values, dtype=object))
    return pd.to_numeric(s, errors="coerce").to_numpy(np.float64) if numeric else s.astype(str).str.strip().to_numpy()


def _numeric(values: np.ndarray, kind: str | None) -> bool:
    if kind is not None:
        return kind == "numeric"
    import pandas as pd

    return bool(len(values)) and bool(pd.to_numeric(pd.Series(values), errors="coerce").notna().all())


def population_sizes(values: dict[str, np.ndarray], sizes: np.ndarray, population: Population, *, exact: bool,
                     encoding: Any = None, kinds: dict[str, str] | None = None) -> np.ndarray:
    """``F`` of every published class: the people of ``population`` (weights by its count
    column) whose QIs equal (``exact``) or fall under (labels, through ``encoding``: an
    :class:`~openbook.data.table.EncodedTable` of the original, or None to encode the
    population itself) the class's published values ``values[qi][class]``. A class with
    fewer matching people than its ``sizes`` is a :class:`~openbook.errors.DataError`
    naming the column and value (or the tuple): the population does not contain the sample."""
    import pandas as pd

    from ..data.grouping import group_ids
    from ..errors import HierarchyError

    qi, kinds = list(values), dict(kinds or {})
    w = population.weights(qi)
    frame = population.frame
    n_cls = len(sizes)
    if exact:
        cls_codes, pop_codes, found = [], [], []
        for c in qi:
            num = _numeric(values[c], kinds.get(c))
            vocab, inv = np.unique(_keys(values[c], num), return_inverse=True)
            pinv, pvals = pd.factorize(frame[c], use_na_sentinel=False)
            code = pd.Index(vocab).get_indexer(_keys(np.asarray(pvals, dtype=object), num))[pinv]
            cls_codes.append(inv.ravel())
            pop_codes.append(code)
            found.append(np.isin(np.arange(vocab.size), code))
        keep = np.all([c >= 0 for c in pop_codes], axis=0) if qi else np.ones(len(frame), bool)
        ids, g = group_ids([np.concatenate([a, b[keep]]) for a, b in zip(cls_codes, pop_codes)])
        big_f = np.bincount(ids[n_cls:], weights=w[keep], minlength=g)[ids[:n_cls]]
        covered = [fd[cc] for fd, cc in zip(found, cls_codes)]
    else:
        enc = encoding if encoding is not None else _encode_population(frame, qi, kinds, population.hierarchies)
        sig_rows, tables, lab_idx, covered = [], [], [], []
        for c in qi:
            ulab, linv = np.unique(np.asarray(values[c]).astype(str), return_inverse=True)
            pinv, pvals = pd.factorize(frame[c], use_na_sentinel=False)
            try:
                cover = _cover(enc, c, ulab, np.asarray(pvals, dtype=object))
            except HierarchyError as exc:
                if encoding is not None:
                    raise
                raise HierarchyError(f"{exc}: match the release through its original table (original=) or give "
                                     f"the column's hierarchy (--hierarchy {c}=PATH)", column=c) from None
            usig, sinv = np.unique(cover.T, axis=0, return_inverse=True)
            sig_rows.append(np.asarray(sinv).ravel()[pinv])
            tables.append(usig.T)
            lab_idx.append(linv.ravel())
            present = np.bincount(pinv, weights=w, minlength=len(pvals)) > 0
            covered.append(np.asarray((cover & present[None, :]).any(axis=1))[linv.ravel()])
        ids, g = group_ids(sig_rows) if qi else (np.zeros(len(frame), np.int64), 1)
        wt = np.bincount(ids, weights=w, minlength=g)
        first = np.full(g, -1, dtype=np.int64)
        first[ids[::-1]] = np.arange(ids.size)[::-1]
        sig_of = [s[first] for s in sig_rows]
        big_f = np.zeros(n_cls)
        step = max(1, (1 << 22) // max(g, 1))
        for lo in range(0, n_cls, step):
            block = np.ones((min(step, n_cls - lo), g), dtype=bool)
            for tab, li, so in zip(tables, lab_idx, sig_of):
                block &= tab[li[lo:lo + step]][:, so]
            big_f[lo:lo + step] = block @ wt
    big_f = np.rint(big_f).astype(np.int64)
    short = np.flatnonzero(big_f < np.asarray(sizes))
    if short.size:
        _refuse(int(short[0]), values, covered, int(big_f[short[0]]), int(np.asarray(sizes)[short[0]]), exact)
    return big_f


def _refuse(c: int, values: dict[str, np.ndarray], covered: list[np.ndarray], have: int, need: int,
            exact: bool) -> None:
    from ..errors import DataError

    has = "has" if exact else "falls under"
    for name, cov in zip(values, covered):
        if not cov[c]:
            raise DataError(f"no one in the population {has} {name} = {values[name][c]!r}, which {need} record(s) "
                            "of the data have: it does not contain the sample")
    tup = ", ".join(f"{k}={v[c]!r}" for k, v in values.items())
    who = "no one" if have == 0 else f"only {have} {'person' if have == 1 else 'people'}"
    raise DataError(f"{who} in the population {has} ({tup}), which {need} record(s) of the data have: it does "
                    "not contain the sample")


def _encode_population(frame: Any, qi: list[str], kinds: dict[str, str], hierarchies: dict[str, Any] | None) -> Any:
    """The population encoded as the data would be: its own values, the given hierarchies
    (objects or ``--hierarchy`` specs), automatic ones for the other QIs."""
    from ..data.schema import Schema
    from ..data.table import encode
    from ..hierarchy.loading import load_hierarchy

    sa = "__population__"
    while sa in frame.columns:
        sa += "_"
    df = frame[qi].copy()
    df[sa] = ""
    hier = {}
    for c, spec in (hierarchies or {}).items():
        h = load_hierarchy(spec, c, kinds.get(c, "categorical")) if isinstance(spec, str) else spec
        if c in qi and h is not None:
            hier[c] = h
    return encode(df, Schema.build(qi=[f"{c}:{kinds.get(c, 'categorical')}" for c in qi], sa=sa, missing="value"),
                  hier)


def _cover(enc: Any, name: str, labels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``(n_labels, n_values)`` bool: which population values each published label covers.
    Values the encoding holds are read off :func:`~openbook.release.labels.label_masks`;
    others fall under a numeric range they lie in, or under a label that covers the whole
    domain (the root)."""
    import pandas as pd

    from ..data.table import EncodedColumn, EncodedTable
    from ..release.labels import label_masks, uses_ranges

    masks = label_masks(enc, name, labels)
    col = enc.columns[name]
    if col.kind == "numeric" and col.numeric is not None:
        num = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(np.float64)
        code = pd.Index(col.numeric).get_indexer(num)
    else:
        num = None
        code = pd.Index([str(v).strip() for v in col.categories]).get_indexer(
            pd.Series(values).astype(str).str.strip())
    out = np.zeros((labels.size, values.size), dtype=bool)
    known = code >= 0
    out[:, known] = masks[:, code[known]]
    absent = np.flatnonzero(~known)
    if absent.size:
        if uses_ranges(enc, name) and num is not None:
            ok = absent[np.isfinite(num[absent])]
            extra = EncodedColumn(name, "numeric", np.zeros(0, np.int32), num[ok].astype(object), num[ok])
            view = EncodedTable(enc.schema, {**enc.columns, name: extra}, enc.hierarchies)
            out[:, ok] = label_masks(view, name, labels)
        else:
            out[:, absent] = np.asarray(masks.all(axis=1))[:, None]
    return out


def population_uniqueness_of(population: Population, qi: list[str]) -> float:
    """The share of the population unique on the QIs (exact QI tuples), from the table."""
    import pandas as pd

    from ..data.grouping import group_ids

    w = population.weights(qi)
    cols = []
    for c in qi:
        codes, uniq = pd.factorize(population.frame[c], use_na_sentinel=False)
        cols.append(pd.factorize(pd.Series(np.asarray(uniq, dtype=object)).astype(str).str.strip())[0][codes])
    ids, g = group_ids(cols) if qi else (np.zeros(len(w), np.int64), 1)
    per = np.bincount(ids, weights=w, minlength=g)
    total = float(w.sum())
    return float((per == 1).sum() / total) if total else 0.0
