"""Identity disclosure: the probability that a record is re-identified from its QIs
(``docs/identity.md``). Records sharing their published QI values form an *equivalence
class*; ``f_j`` is the size of record ``j``'s class in the data, ``F_j`` the number of people of
the population who match it, ``n`` the records, ``N`` the population, ``π = n/N``.

* **Prosecutor** (the target is known to be in the data): risk ``1/f_j`` (El Emam & Dankar,
  JAMIA 15(5), 2008); highest ``1/min f``; success rate ``#classes / n``.
* **Journalist** (the target is in a known population): risk ``1/F_j``; highest risk, share of
  records above the threshold, success rate ``(1/n) Σ_classes f/F``. **Marketer**: that rate.

With a **population table** (``population=``, as ARX takes it) every ``F_j`` is counted
exactly (:mod:`.population`). Without one the figures are **upper bounds**, never expectations:
:func:`model_bounds` — the largest of the posterior figures of ``F_j`` given ``f_j`` under the
Pitman model (at its fit and at the largest ``α`` of its 99 % likelihood region) and the SNB
model, plus three standard deviations; the highest risk of class size ``f`` the largest ``1/m``
some such class reaches with probability 1 % or more (1 as soon as the model leaves room for a
population unique among the sample uniques); never above the prosecutor's (``F ≥ f``). Classes
cut around the sample (local recoding) have no sampling model: the prosecutor's bound them.

Population uniqueness from the sample's frequencies of frequencies ``c_i`` (``K = Σ c_i``):
**Zayatz** (US Census Bureau SRD report 91/08, 1991), ``c_1 · share / π`` with ``share =
c_1 / Σ_i c_i h(i)/h(1)``, ``h`` hypergeometric, summed exactly in log space; **Pitman**
(Hoshino, J. Official Statistics 17(4), 2001), maximum likelihood by Newton's method on the
score equations, population uniques ``Γ(θ+1)/Γ(θ+α) · N^α``; **SNB** (Chen & Keller-McNulty,
J. Official Statistics 14(1), 1998), population class sizes ``1 + NegBin(α, β)``, ``α, β`` from
the expected counts of sample classes of sizes 1 and 2, the number of population classes by
``D̂_Sh3`` (Haas, Naughton, Seshadri & Stokes, VLDB 1995), uniques ``K̂ β^α``; **Dankar, El
Emam, Neisa & Roffey** (BMC Med. Inform. Decis. Mak. 12:66, 2012) choose: no sample unique → 0;
``π ≤ 0.1`` → Pitman (else Zayatz); otherwise the smaller of Zayatz and SNB. An estimator that
does not converge is reported as such (``None`` and a reason), never as a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import population as popmod

# scipy is imported by the estimators that use it (scipy.stats alone costs ~0.5 s of start-up)

#: the default threshold of "records at risk"
DEFAULT_THRESHOLD = 0.2


@dataclass
class ReidentificationResult:
    """Per-record risks and the summary (JSON-able by :meth:`to_dict`). ``journalist`` per
    record is ``1/F_j`` with a population table, else the highest risk a record of its class
    size plausibly has (module docstring); ``figures`` holds the journalist and marketer
    summary and how it was obtained."""

    class_of: np.ndarray  # class id per record
    class_size: np.ndarray  # f_j per class
    prosecutor: np.ndarray  # per record
    journalist: np.ndarray  # per record
    n: int
    population_size: float | None
    sampling_fraction: float
    threshold: float
    uniqueness: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    exact_qis_published: bool = False
    figures: dict[str, Any] | None = None

    @property
    def n_classes(self) -> int:
        return int(self.class_size.size)

    def summary(self) -> dict[str, Any]:
        n = max(self.n, 1)
        sample_uniques = int((self.class_size == 1).sum())
        figs = self.figures or {
            "journalist": {"highest_risk": float(self.journalist.max(initial=0.0)),
                           "records_at_risk": float((self.journalist > self.threshold).mean()) if self.n else 0.0,
                           "success_rate": float(self.journalist.sum() / n)},
            "risk_model": {"journalist": "per-record risks"}}
        return {
            "records": self.n, "classes": self.n_classes,
            "sample_uniques": sample_uniques, "sample_uniqueness": sample_uniques / n,
            "prosecutor": {"highest_risk": float(self.prosecutor.max(initial=0.0)),
                           "records_at_risk": float((self.prosecutor > self.threshold).mean()) if self.n else 0.0,
                           "success_rate": self.n_classes / n},
            "journalist": dict(figs["journalist"]),
            "marketer": {"success_rate": figs["journalist"]["success_rate"]},
            "threshold": self.threshold, "sampling_fraction": self.sampling_fraction,
            "population_size": self.population_size, "population_uniqueness": self.uniqueness,
            "exact_qis_published": self.exact_qis_published, "notes": list(self.notes),
            "risk_model": figs["risk_model"],
        }

    to_dict = summary


def frequencies(class_size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sample's frequencies of frequencies: class sizes ``i`` and counts ``c_i``."""
    sizes, counts = np.unique(np.asarray(class_size, dtype=np.int64), return_counts=True)
    return sizes, counts


# ---------------------------------------------------------------------------------------
# population uniqueness estimators
# ---------------------------------------------------------------------------------------
def zayatz(sizes: np.ndarray, counts: np.ndarray, n: int, N: float) -> float | None:
    """Population uniques by Zayatz (1991) (module docstring): ``c_1 · share / π`` with
    ``share = c_1 / Σ_i c_i h(i)/h(1)`` and ``log h(i)/h(1) = log i + Σ_{k<i} log1p(−(n−1)/(N−k))``
    (``N`` rounded to a whole population), summed exactly in log space."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.float64)
    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    Ni = float(round(N))
    top = int(sizes.max())
    # terms below exp(-800) vanish: stop the running sum there (log h(i)/h(1) ≤ log i + (i−1) log(1−(n−1)/N))
    step = -math.log1p(-(n - 1) / Ni) if n > 1 else 0.0
    if step > 0:
        top = min(top, int(1000 / step) + 2 + int(math.log(top + 1) / step))
    k = np.arange(1, top, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logs = np.concatenate([[0.0], np.cumsum(np.log1p(np.maximum(-(n - 1) / (Ni - k), -1.0)))])
    inside = sizes <= top
    lr = np.log(sizes[inside].astype(np.float64)) + logs[sizes[inside] - 1]
    den = float((counts[inside] * np.exp(lr)).sum())
    if den <= 0 or not np.isfinite(den):
        return None
    share = c1 / den
    return c1 * share / (n / N)


def pitman_loglik(theta: float, alpha: float, sizes: np.ndarray, counts: np.ndarray, n: int) -> float:
    """Log-likelihood of the Pitman sampling formula for a sample's ``c_i`` (up to a constant)."""
    from scipy import special

    K = int(counts.sum())
    lt = (K - 1) * math.log(alpha) + special.gammaln(theta / alpha + K) - special.gammaln(theta / alpha + 1)
    ln = special.gammaln(theta + n) - special.gammaln(theta + 1)
    lc = float((counts * (special.gammaln(sizes - alpha) - special.gammaln(1 - alpha))).sum())
    return float(lt - ln + lc)


def pitman(sizes: np.ndarray, counts: np.ndarray, n: int, N: float,
           fit: popmod.PitmanFit | None | bool = False) -> tuple[float | None, dict[str, Any]]:
    """Population uniques by the Pitman model (Hoshino 2001): ``(estimate, fit)``; the
    maximum-likelihood fit by :func:`.population.pitman_fit` (or ``fit`` when given);
    ``Γ(θ+1)/Γ(θ+α) = exp(lgamma_ratio(θ+α, 1−α))`` without cancellation."""
    if not (np.asarray(sizes) == 1).any():
        return 0.0, {}
    if fit is False:
        fit = popmod.pitman_fit(sizes, counts, n)
    if not isinstance(fit, popmod.PitmanFit):
        return None, {"converged": False, "reason": "needs at least two classes and a class of size 2 or more"}
    out = {"theta": fit.theta, "alpha": fit.alpha, "converged": fit.interior}
    if not fit.interior:
        edge = "0 (the Ewens model)" if fit.alpha < 0.5 else "1"
        return None, {**out, "reason": f"the likelihood is largest as alpha tends to {edge}"}
    try:
        est = math.exp(popmod.lgamma_ratio(fit.theta + fit.alpha, 1.0 - fit.alpha) + fit.alpha * math.log(N))
    except OverflowError:
        return None, {**out, "converged": False, "reason": "estimate overflows"}
    if not (0 <= est <= N):
        return None, {**out, "converged": False, "reason": "estimate outside [0, N]"}
    return est, out


def shlosser(sizes: np.ndarray, counts: np.ndarray, q: float) -> float:
    """Shlosser's estimate of the number of classes in the population (Haas et al. 1995):
    ``d + c_1 Σ (1-q)^i c_i / Σ i q (1-q)^(i-1) c_i``."""
    d = float(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    num = float(((1 - q) ** sizes * counts).sum())
    den = float((sizes * q * (1 - q) ** (sizes - 1) * counts).sum())
    return d + c1 * num / den if den > 0 else d


def haas_sh3(sizes: np.ndarray, counts: np.ndarray, q: float) -> float:
    """``D̂_Sh3`` of Haas, Naughton, Seshadri & Stokes (VLDB 1995), the number of classes in
    the population: ``d + c_1 · [Σ i q² (1−q²)^(i−1) c_i / Σ (1−q)^i ((1+q)^i − 1) c_i] ·
    [Σ (1−q)^i c_i / Σ i q (1−q)^(i−1) c_i]²`` (each ``c_i`` multiplies ``(1−q)^i((1+q)^i − 1)``:
    ARX's ``ModelSNB`` subtracts the 1 once per size instead)."""
    i = np.asarray(sizes, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    d = float(c.sum())
    c1 = float(c[i == 1].sum())
    num1 = float((i * q * q * (1 - q * q) ** (i - 1) * c).sum())
    # (1−q)^i ((1+q)^i − 1) = (1−q²)^i (1 − (1+q)^−i): no overflow for large i, no cancellation for small q
    den1 = float((np.exp(i * math.log1p(-q * q)) * -np.expm1(-i * math.log1p(q)) * c).sum())
    num2 = float(((1 - q) ** i * c).sum())
    den2 = float((i * q * (1 - q) ** (i - 1) * c).sum())
    if den1 <= 0 or den2 <= 0:
        return d
    return d + c1 * (num1 / den1) * (num2 / den2) ** 2


def snb_expected(K: float, f: float, a: float, b: float) -> tuple[float, float]:
    """Expected numbers of sample classes of sizes 1 and 2 when ``K`` population classes have
    sizes ``1 + NegBin(a, b)`` and each member is sampled with probability ``f``."""
    d = (1 - b) * (1 - f)
    g = (b / (1 - d)) ** a
    e1 = K * f * g * (1 + a * d / (1 - d))
    e2 = K * f * f * a * (1 - b) * b ** a * (2 + (a - 1) * d) / (2 * (1 - d) ** (a + 2))
    return e1, e2


def snb(sizes: np.ndarray, counts: np.ndarray, n: int, N: float) -> tuple[float | None, dict[str, Any]]:
    """Population uniques by the shifted negative binomial model (module docstring), ``K̂`` by
    :func:`haas_sh3`."""
    from scipy import optimize

    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0, {}
    c2 = float(counts[sizes == 2].sum())
    f = n / N
    K = haas_sh3(sizes, counts, f)
    if c2 == 0:
        return None, {"converged": False, "reason": "no sample class of size 2"}

    def eqs(x: np.ndarray) -> np.ndarray:
        try:
            a = math.exp(x[0])
            b = 1.0 / (1.0 + math.exp(-x[1]))
            e1, e2 = snb_expected(K, f, a, b)
            out = np.array([e1 / c1 - 1.0, e2 / c2 - 1.0])
        except (OverflowError, ZeroDivisionError, ValueError):
            return np.array([1e6, 1e6])
        return out if np.isfinite(out).all() else np.array([1e6, 1e6])

    best = None
    for a0, b0 in ((1.0, 0.5), (0.3, 0.1), (3.0, 0.9), (0.05, 0.01)):
        res = optimize.root(eqs, np.array([math.log(a0), math.log(b0 / (1 - b0))]), method="hybr")
        if res.success and (best is None or np.abs(res.fun).max() < np.abs(best.fun).max()):
            best = res
        if best is not None and np.abs(best.fun).max() <= 1e-10:
            break
    if best is None or np.abs(best.fun).max() > 1e-8:
        return None, {"converged": False, "K": K}
    x = _newton_polish(eqs, best.x)
    try:
        a, b = math.exp(x[0]), 1.0 / (1.0 + math.exp(-x[1]))
        est = K * b ** a
    except OverflowError:
        return None, {"converged": False, "K": K, "reason": "the fit diverged"}
    if not (0 <= est <= N):
        return None, {"converged": False, "K": K, "reason": "estimate outside [0, N]"}
    return est, {"alpha": a, "beta": b, "K": K, "K_estimator": "Haas et al. D_Sh3", "converged": True}


def _newton_polish(eqs: Any, x: np.ndarray, steps: int = 3) -> np.ndarray:
    """Newton's steps on ``eqs(x) = 0`` from a root found to about 1e-10 (MINPACK's ``hybr``
    stops at a relative step of 1.5e-8), each kept only while it lowers the residual: the root
    to the residual's rounding. The Jacobian by central differences (its 1e-9 error slows
    nothing from so close)."""
    fx = eqs(x)
    for _ in range(steps):
        h = 1e-6 * np.maximum(1.0, np.abs(x))
        jac = np.column_stack([(eqs(x + e) - eqs(x - e)) / (2.0 * e[i]) for i, e in enumerate(np.diag(h))])
        try:
            new = x - np.linalg.solve(jac, fx)
        except np.linalg.LinAlgError:
            break
        fn = eqs(new)
        if not np.abs(fn).max() < np.abs(fx).max():
            break
        x, fx = new, fn
    return x


def population_uniqueness(class_size: np.ndarray, n: int, N: float,
                          fit: popmod.PitmanFit | None | bool = False) -> dict[str, Any]:
    """Every estimator and Dankar et al.'s choice, as fractions of the population."""
    sizes, counts = frequencies(class_size)
    return _uniqueness(sizes, counts, n, N, fit)


def _uniqueness(sizes: np.ndarray, counts: np.ndarray, n: int, N: float,
                fit: popmod.PitmanFit | None | bool = False) -> dict[str, Any]:
    c1 = int(counts[sizes == 1].sum())
    out: dict[str, Any] = {"population_size": N}
    if c1 == 0:
        out.update(zayatz=0.0, pitman=0.0, snb=0.0, dankar=0.0, dankar_model="none (no sample unique)")
        return out
    z = zayatz(sizes, counts, n, N)
    p, pfit = pitman(sizes, counts, n, N, fit)
    s, sfit = snb(sizes, counts, n, N)
    frac = {k: (None if v is None else v / N) for k, v in (("zayatz", z), ("pitman", p), ("snb", s))}
    out.update(frac, pitman_fit=pfit, snb_fit=sfit)
    pi = n / N
    if pi <= 0.1:
        model = "pitman" if frac["pitman"] is not None else "zayatz"
    elif frac["snb"] is not None and frac["zayatz"] is not None:
        model = "zayatz" if frac["zayatz"] < frac["snb"] else "snb"
    else:
        model = "zayatz"
    out.update(dankar=frac[model], dankar_model=model)
    return out


# ---------------------------------------------------------------------------------------
# the figures of a class-size histogram
# ---------------------------------------------------------------------------------------
def threshold_size(threshold: float) -> int:
    """The largest ``m`` with ``1/m > threshold`` (0 if none): a record is at risk when its
    class has at most that many people."""
    m = max(int(math.floor(1.0 / threshold)), 1)
    while m > 1 and not 1.0 / m > threshold:
        m -= 1
    while 1.0 / (m + 1) > threshold:
        m += 1
    return m if 1.0 / m > threshold else 0


def posterior_figures(pmf: np.ndarray, e1: np.ndarray, sizes: np.ndarray, counts: np.ndarray, n: int,
                      at_risk_size: int, delta: float = popmod.HIGHEST_DELTA) -> dict[str, Any]:
    """From the posterior of every class size: the expected share of records at risk
    (``F ≤ at_risk_size``) and the expected success rate ``(1/n) Σ f E[1/F]``, each with its
    standard deviation (classes independent; ``Var(1/F) ≤ E[1/F]/f − E[1/F]²``), and per size
    ``U_f = 1/m_f``, ``m_f`` the largest ``m`` with ``P(some class of size f has F < m) ≤ δ``."""
    f = np.asarray(sizes, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    cdf = np.minimum(np.cumsum(pmf, axis=1), 1.0)
    width = pmf.shape[1]
    idx = (at_risk_size - f).astype(np.int64)
    p = np.where(idx >= 0, cdf[np.arange(f.size), np.clip(idx, 0, width - 1)], 0.0)
    less = np.concatenate([np.zeros((f.size, 1)), cdf], axis=1)  # P(F < f + i)
    with np.errstate(divide="ignore"):
        reach = -np.expm1(c[:, None] * np.log1p(-np.minimum(less, 1.0)))
    over = reach > delta
    m = f + np.where(over.any(axis=1), over.argmax(axis=1) - 1, width)
    var_r = np.maximum(e1 / f - e1 * e1, 0.0)
    return {"records_at_risk": float((c * f * p).sum() / n), "records_at_risk_sd": math.sqrt(float(
        (c * f * f * p * (1 - p)).sum())) / n, "success_rate": float((c * f * e1).sum() / n),
        "success_rate_sd": math.sqrt(float((c * f * f * var_r).sum())) / n, "highest_by_size": 1.0 / m}


def model_bounds(sizes: np.ndarray, counts: np.ndarray, n: int, N: float, threshold: float,
                 fit: popmod.PitmanFit | None, snb: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """The journalist and marketer bounds without a population table (``docs/identity.md``):
    the posterior of ``F`` given ``f`` under the Pitman model at its maximum-likelihood fit
    and at the largest ``α`` of its 99 % likelihood region, and under the SNB model when it
    converged (``snb = (a, b)``); each figure the largest of them plus
    :data:`.population.MARGIN_Z` standard deviations; the highest risk of a class size ``f``
    the largest ``U_f`` (:func:`posterior_figures`). ``None`` without a Pitman fit."""
    if fit is None:
        return None
    k = threshold_size(threshold)
    tu, au = popmod.pitman_region(sizes, counts, n, fit)
    terms = max(popmod.TERMS, k + 1)
    m = len(sizes)
    pmf, e1 = popmod.posterior(np.repeat([fit.theta, tu], m), np.repeat([fit.alpha, au], m), np.tile(sizes, 2),
                               n, N, terms)
    figs = {name: posterior_figures(pmf[i * m:(i + 1) * m], e1[i * m:(i + 1) * m], sizes, counts, n, k)
            for i, name in enumerate(("pitman", "pitman_region"))}
    if snb is not None:
        pmf, e1 = popmod.snb_posterior(snb[0], snb[1], n / N, sizes, terms)
        figs["snb"] = posterior_figures(pmf, e1, sizes, counts, n, k)
    out: dict[str, Any] = {}
    for key in ("records_at_risk", "success_rate"):
        vals = {name: fg[key] + popmod.MARGIN_Z * fg[key + "_sd"] for name, fg in figs.items()}
        out[key] = max(vals.values())
        out[key + "_model"] = max(vals, key=lambda name: vals[name])
    out["highest_by_size"] = np.maximum.reduce([fg["highest_by_size"] for fg in figs.values()])
    out["expected"] = {name: {key: fg[key] for key in ("records_at_risk", "success_rate")}
                       for name, fg in figs.items()}
    out["fit"] = {"theta": fit.theta, "alpha": fit.alpha, "region_theta": tu, "region_alpha": au,
                  "interior": fit.interior}
    return out


def _histogram(sizes: Any, counts: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct class sizes, the number of classes of each, and each entry's distinct size."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.ones(sizes.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    top = int(sizes.max(initial=0))
    if sizes.size and sizes.min() >= 0 and top <= 4 * sizes.size + 65536:  # by counting, no sort
        per = np.bincount(sizes, weights=counts, minlength=top + 1)
        uniq = np.flatnonzero(np.bincount(sizes, minlength=top + 1))
        pos = np.zeros(top + 1, dtype=np.int64)
        pos[uniq] = np.arange(uniq.size)
        return uniq, per[uniq].astype(np.int64), pos[sizes]
    uniq, inv = np.unique(sizes, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=counts, minlength=uniq.size).astype(np.int64), inv.ravel()


def _identity(sizes: np.ndarray, counts: np.ndarray, n: int, N: float, pi: float, threshold: float,
              notes: list[str], big_f: np.ndarray | None = None,
              population: popmod.Population | None = None, qi: list[str] | None = None,
              cut_around_sample: bool = False) -> dict[str, Any]:
    """Journalist and marketer figures, the journalist risk of each entry of ``sizes`` (class
    sizes with ``counts`` classes each; ``big_f`` their exact population sizes when a
    population table was given) and the population uniqueness (module docstring). Classes
    ``cut_around_sample`` (local recoding) have no sampling model: the prosecutor figures
    bound them."""
    f = sizes.astype(np.float64)
    c = counts.astype(np.float64)
    nn = max(n, 1)
    prosecutor = {"records_at_risk": float((c * f)[1.0 / f > threshold].sum() / nn) if n else 0.0,
                  "success_rate": float(c.sum() / nn)}
    if big_f is not None:  # exact: F counted in the population table
        risk = 1.0 / big_f.astype(np.float64)
        journalist = {"highest_risk": float(risk.max(initial=0.0)),
                      "records_at_risk": float((c * f)[risk > threshold].sum() / nn) if n else 0.0,
                      "success_rate": float((c * f * risk).sum() / nn)}
        uniq: dict[str, Any] = _uniqueness(*_collapse(sizes, counts), n, N) if n and pi < 1.0 else {"population_size": N}
        exact = popmod.population_uniqueness_of(population, qi or []) if population is not None else None
        uniq.update(exact=exact, dankar=exact, dankar_model="population table (exact)")
        return {"journalist": journalist, "risk_by_entry": risk, "uniqueness": uniq,
                "risk_model": {"journalist": "population table (exact)"}}
    if not n or pi >= 1.0:
        uniq = {"population_size": N, "dankar": float(c[sizes == 1].sum() / nn),
                "dankar_model": "the data is the population"}
        return {"journalist": {"highest_risk": float((1.0 / f).max(initial=0.0)), **prosecutor},
                "risk_by_entry": 1.0 / f, "uniqueness": uniq,
                "risk_model": {"journalist": "the data is the population (= prosecutor)" if n else "no records"}}
    hs, hc = _collapse(sizes, counts)
    fit = popmod.pitman_fit(hs, hc, n)
    uniq = _uniqueness(hs, hc, n, N, fit)
    if cut_around_sample:
        notes.append("journalist and marketer risk: the classes of a locally recoded release are cut around the "
                     "sample's records, so no sampling model of their population sizes holds; without a population "
                     "table the prosecutor figures bound them (F >= f)")
        return {"journalist": {"highest_risk": float((1.0 / f).max(initial=0.0)), **prosecutor},
                "risk_by_entry": 1.0 / f, "uniqueness": uniq,
                "risk_model": {"journalist": "prosecutor bound (classes cut around the sample)"}}
    sfit = uniq.get("snb_fit") or {}
    bound = model_bounds(hs, hc, n, float(round(N)), threshold, fit,
                         (sfit["alpha"], sfit["beta"]) if sfit.get("converged") else None)
    if bound is None:
        notes.append("journalist and marketer risk: no Pitman model to fit (fewer than two classes, or every "
                     "record unique): the prosecutor figures bound them")
        return {"journalist": {"highest_risk": float((1.0 / f).max(initial=0.0)), **prosecutor},
                "risk_by_entry": 1.0 / f, "uniqueness": uniq,
                "risk_model": {"journalist": "prosecutor bound (no model)"}}
    risk = np.minimum(bound["highest_by_size"][np.searchsorted(hs, sizes)], 1.0 / f)
    journalist = {"highest_risk": float(risk.max(initial=0.0)),
                  "records_at_risk": min(prosecutor["records_at_risk"], bound["records_at_risk"]),
                  "success_rate": min(prosecutor["success_rate"], bound["success_rate"])}
    notes.append("journalist and marketer risk without a population table: upper bounds, the largest of the "
                 "posterior figures of each class's population size under the Pitman model (at its fit and at the "
                 "largest alpha of its 99% likelihood region) and the SNB model, plus "
                 f"{popmod.MARGIN_Z:g} standard deviations; highest risk: the largest 1/F some class reaches with "
                 f"probability {popmod.HIGHEST_DELTA:.0%} or more (docs/identity.md)")
    model = {"journalist": "posterior bound (Pitman, SNB)", "expected": bound["expected"], "fit": bound["fit"],
             "records_at_risk_model": bound["records_at_risk_model"], "success_rate_model": bound["success_rate_model"],
             "likelihood_region": 0.99, "margin_sd": popmod.MARGIN_Z, "highest_probability": popmod.HIGHEST_DELTA}
    return {"journalist": journalist, "risk_by_entry": risk, "uniqueness": uniq, "risk_model": model}


def _collapse(sizes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The histogram of distinct sizes (``sizes`` may repeat, with ``counts`` classes each)."""
    hs, hc, _ = _histogram(sizes, counts)
    return hs, hc


# ---------------------------------------------------------------------------------------
# the risk of a table or a release
# ---------------------------------------------------------------------------------------
def _classes_of(data: Any) -> tuple[np.ndarray, bool, list[str]]:
    """Class id per record of a raw ``EncodedTable``, a ``Release`` or an array of ids."""
    from ..data.grouping import group_ids

    notes: list[str] = []
    if hasattr(data, "qi_codes") and hasattr(data, "n_rows"):
        return group_ids(data.qi_codes)[0], True, notes
    if hasattr(data, "classes") and hasattr(data, "kind"):
        if data.kind == "bucketized":
            import pandas as pd

            cols = [pd.factorize(data.data[c].astype(str))[0] for c in data.qi]
            if not getattr(data, "qi_generalized", False):
                notes.append("a bucketized release publishes every QI exactly in its QI-table: identity is "
                             "disclosed by design (its protection is of the sensitive value), so the risk is that of "
                             "the exact QIs")
            return (group_ids(cols)[0] if cols else np.zeros(len(data.data), dtype=np.int64)), True, notes
        return data.classes()[0], False, notes
    return np.asarray(data, dtype=np.int64), False, notes


def _cut_around_sample(data: Any) -> bool:
    """Does a release publish classes cut around its records (local recoding: Mondrian and its
    kin, Generalized Anatomy's QI-table), rather than cells of a fixed grid (raw QIs, exact QIs,
    full-domain recoding)?"""
    if not (hasattr(data, "classes") and hasattr(data, "kind")):
        return False
    meta = getattr(data, "meta", {}) or {}
    return (data.kind == "generalized" and meta.get("levels") is None) or meta.get("qi_recoding") == "local"


def class_values(data: Any, first: np.ndarray) -> tuple[dict[str, np.ndarray], bool, dict[str, str]]:
    """The published QI values of the classes whose first records are ``first`` (rows of an
    ``EncodedTable`` or of a release's data; classes of a ``FrequencyTable``), whether they
    are exact, and the QIs' kinds where known."""
    from ..errors import ParameterError

    if hasattr(data, "qi_codes") and hasattr(data, "columns") and hasattr(data, "qi_names"):
        codes = np.asarray(data.qi_codes)
        vals = {q: np.asarray(data.columns[q].categories, dtype=object)[codes[first, j]]
                for j, q in enumerate(data.qi_names)}
        return vals, True, {q: data.columns[q].kind for q in data.qi_names}
    if hasattr(data, "classes") and hasattr(data, "kind"):
        kinds = {c.get("name"): c.get("kind") for c in data.meta.get("schema", {}).get("qi", [])
                 if isinstance(c, dict)}
        vals = {q: data.data[q].to_numpy(dtype=object)[first] for q in data.qi}
        exact = not getattr(data, "qi_generalized", data.kind != "bucketized")
        return vals, exact, {q: str(kinds[q]) for q in data.qi if kinds.get(q)}
    raise ParameterError("a population table is matched on the published QI values: give a table or a release, "
                         "not class ids", parameter="population")


def population_frame(n: int, *, population_size: float | None, sampling_fraction: float | None,
                     threshold: float, notes: list[str], population_total: float | None = None) -> tuple[float, float]:
    """The population ``N`` and sampling fraction ``π`` of ``n`` records, from a population size
    or a sampling fraction (at most one; with neither the data is the population, noted in
    ``notes``) or the size of a population table, after checking them and the risk threshold
    (``ParameterError``)."""
    from ..errors import ParameterError

    if population_size is not None and sampling_fraction is not None:
        raise ParameterError("give the population size or the sampling fraction, not both",
                             parameter="population-size")
    if not (0 < threshold <= 1):
        raise ParameterError(f"threshold={threshold} must be in (0, 1]", parameter="reid-threshold", value=threshold)
    if population_total is not None:
        if population_size is not None or sampling_fraction is not None:
            raise ParameterError("a population table gives the population size: drop --population-size / "
                                 "--sampling-fraction", parameter="population")
        return float(population_total), n / float(population_total) if population_total else 1.0
    if sampling_fraction is not None:
        if not (0 < sampling_fraction <= 1):
            raise ParameterError(f"sampling fraction {sampling_fraction} must be in (0, 1]",
                                 parameter="sampling-fraction", value=sampling_fraction)
        return n / float(sampling_fraction), float(sampling_fraction)
    if population_size is not None:
        if not population_size >= max(n, 1):
            raise ParameterError(f"population size {population_size} must be at least the {n} records",
                                 parameter="population-size", value=population_size)
        return float(population_size), n / float(population_size)
    notes.append("no population size or sampling fraction given: the data is taken to be the population "
                 "(journalist risk = prosecutor risk)")
    return float(n), 1.0


def class_size_summary(sizes: Any, counts: Any = None, *, population_size: float | None = None,
                       sampling_fraction: float | None = None, threshold: float | None = None,
                       population: Any = None, classes: Any = None) -> dict[str, Any]:
    """The re-identification summary of a raw table (the keys of
    :meth:`ReidentificationResult.summary`) from its class sizes alone: ``counts[i]`` classes
    of size ``sizes[i]`` (each class once without ``counts``). Every record of a class has the
    class's risk, so no per-record array is needed: a frequency table (``check
    --batch-rows``) or a histogram aggregated on a cluster (the Spark engine) suffices.
    With a population table (``population``), ``classes`` holds the QI values of entry ``i``
    (a :class:`~openbook.data.frequency.FrequencyTable`, one class per entry)."""
    from ..errors import ParameterError

    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.ones(sizes.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    n = int((sizes * counts).sum())
    notes: list[str] = []
    pop, big_f, qi, total = None, None, [], None
    if population is not None:
        if classes is None or (counts != 1).any():
            raise ParameterError("a population table is matched on the classes' QI values: give classes "
                                 "(one per size)", parameter="population")
        pop = popmod.as_population(population)
        values, exact, kinds = class_values(classes, np.arange(sizes.size))
        qi = list(values)
        big_f = popmod.population_sizes(values, sizes, pop, exact=exact, kinds=kinds)
        total = float(pop.weights(qi).sum())
    N, pi = population_frame(n, population_size=population_size, sampling_fraction=sampling_fraction,
                             threshold=threshold, notes=notes, population_total=total)
    K = int(counts.sum())
    ident = _identity(sizes, counts, n, N, pi, threshold, notes, big_f, pop, qi)
    c1 = int(counts[sizes == 1].sum())
    nn = max(n, 1)
    prosecutor = 1.0 / sizes.astype(np.float64)
    records = sizes * counts
    return {
        "records": n, "classes": K, "sample_uniques": c1, "sample_uniqueness": c1 / nn,
        "prosecutor": {"highest_risk": float(prosecutor.max(initial=0.0)),
                       "records_at_risk": float(int(records[prosecutor > threshold].sum()) / n) if n else 0.0,
                       "success_rate": K / nn},
        "journalist": dict(ident["journalist"]),
        "marketer": {"success_rate": ident["journalist"]["success_rate"]},
        "threshold": float(threshold), "sampling_fraction": pi,
        "population_size": None if pi == 1.0 and population_size is None and pop is None else N,
        "population_uniqueness": ident["uniqueness"],
        "exact_qis_published": True, "notes": notes, "risk_model": ident["risk_model"],
    }


def reidentification_risk(data: Any, *, population_size: float | None = None,
                          sampling_fraction: float | None = None,
                          threshold: float = DEFAULT_THRESHOLD, population: Any = None,
                          population_count: str | None = None, original: Any = None) -> ReidentificationResult:
    """Prosecutor, journalist and marketer risks of ``data`` (a raw encoded table, a release,
    or class ids per record) and the population-uniqueness estimates (module docstring).
    Give the population as a table (``population``: a DataFrame of its QI values, a column
    ``population_count`` counting the people of each row, or a
    :class:`.population.Population`) for exact journalist and marketer figures, or its size
    (``population_size=N`` or ``sampling_fraction=π``) for bounds; with none the data is
    taken to be the population. A generalized release's labels are matched through
    ``original`` (the ``EncodedTable`` it was made from) when given, else through the
    population's own encoding."""
    cls, exact, notes = _classes_of(data)
    cls = np.asarray(cls, dtype=np.int64)
    n = int(cls.size)
    pop = None if population is None else popmod.as_population(population, population_count)
    sizes = np.zeros(0, dtype=np.int64)
    first = np.zeros(0, dtype=np.int64)
    if n:  # dense class ids, then the size and the first record of every class
        if cls.min() < 0 or not (np.bincount(cls) > 0).all():
            cls = np.unique(cls, return_inverse=True)[1].ravel()
        sizes = np.bincount(cls)
        first = np.full(sizes.size, -1, dtype=np.int64)
        first[cls[::-1]] = np.arange(n - 1, -1, -1)
    big_f = None
    qi: list[str] = []
    if pop is not None:
        values, exact_values, kinds = class_values(data, first)
        qi = list(values)
        big_f = popmod.population_sizes(values, sizes, pop, exact=exact_values, encoding=original, kinds=kinds)
    N, pi = population_frame(n, population_size=population_size, sampling_fraction=sampling_fraction,
                             threshold=threshold, notes=notes,
                             population_total=None if pop is None else float(pop.weights(qi).sum()))
    if big_f is None:
        hs, hc, where = _histogram(sizes)
        ident = _identity(hs, hc, n, N, pi, threshold, notes, cut_around_sample=_cut_around_sample(data))
        per_class = ident["risk_by_entry"][where]
    else:
        ident = _identity(sizes, np.ones(sizes.size, np.int64), n, N, pi, threshold, notes, big_f, pop, qi)
        per_class = ident["risk_by_entry"]
    f = sizes[cls].astype(np.float64) if n else np.zeros(0)
    prosecutor = 1.0 / f if n else np.zeros(0)
    journalist = per_class[cls] if n else np.zeros(0)
    figures = {"journalist": ident["journalist"], "risk_model": ident["risk_model"]}
    return ReidentificationResult(cls, sizes, prosecutor, journalist, n,
                                  None if pi == 1.0 and population_size is None and pop is None else N,
                                  pi, float(threshold), ident["uniqueness"], notes, exact, figures)
