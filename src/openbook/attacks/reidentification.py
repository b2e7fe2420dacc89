"""Identity disclosure: the probability that a record is re-identified from its QIs.

The other adversaries measure what is learnt about a person's sensitive value; this one
measures whether the person can be found at all — the risk every data steward's tool leads
with (ARX, sdcMicro, μ-ARGUS). Records sharing their (published) QI values form an
*equivalence class*; ``f_j`` is the size of record ``j``'s class in the data, ``F_j`` in the
population the data is drawn from, ``n`` the number of records, ``N`` the population size,
``π = n/N`` the sampling fraction.

* **Prosecutor** (the attacker knows the target is in the data): risk ``1/f_j`` per record
  (El Emam & Dankar 2008); highest risk ``1/min f``; success rate — the expected fraction
  re-identified when every record is attacked — ``#classes / n``.
* **Journalist** (the target is in a known population, the data a sample of it): risk
  ``1/F_j``. Without a population table ``F_j`` is estimated by its expectation under
  Bernoulli sampling, ``f_j/π`` (never below ``f_j``); with ``π = 1`` it equals the prosecutor.
* **Marketer** (re-identify as many as possible): expected fraction re-identified
  ``(1/n) Σ_j f_j/F_j`` over classes (``#classes/n`` when the data is the population).

Population uniqueness — the share of the population unique on the QIs — is estimated from the
sample's *frequencies of frequencies* ``c_i`` (number of classes of size ``i``, ``K = Σ c_i``):

* **Zayatz (1991)**: the share of sample uniques that are population uniques is
  ``(c_1/K)·h(1) / Σ_i (c_i/K)·h(i)`` with ``h(i)`` the hypergeometric probability of drawing
  exactly one of ``i`` population members in a sample of ``n`` from ``N``; population uniques
  ``≈ c_1 · share / π``.
* **Pitman (Hoshino 2001)**: the Pitman sampling formula fitted by maximum likelihood
  (``θ > -α``, ``0 < α < 1``); population uniques ``Γ(θ+1)/Γ(θ+α) · N^α``.
* **SNB (Chen & Keller-McNulty 1998)**: population class sizes ``1 + NegBin(α, β)``, the sample
  a Bernoulli(π) thinning; ``α, β`` from the expected counts of sample classes of sizes 1 and 2
  (derived in ``docs/identity.md``), the number of population classes ``K̂`` by Shlosser's
  estimator (Haas et al. 1995); population uniques ``K̂ · β^α``.
* **Dankar, El Emam, Neisa & Roffey (2012)** choose among them: with no sample unique, 0; for
  ``π ≤ 0.1``, Pitman (Zayatz when Pitman does not converge); otherwise the smaller of Zayatz
  and SNB (Zayatz when SNB does not converge).

An estimator that does not converge is reported as such (``None`` and a note), never as a
silent NaN in a headline. Everything is vectorised over records (``np.bincount`` on class
ids); the estimators work on the ``c_i`` histogram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# scipy is imported by the estimators that use it (scipy.stats alone costs ~0.5 s of start-up)

#: the default threshold of "records at risk"
DEFAULT_THRESHOLD = 0.2


@dataclass
class ReidentificationResult:
    """Per-record risks and the summary (JSON-able by :meth:`to_dict`)."""

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

    @property
    def n_classes(self) -> int:
        return int(self.class_size.size)

    def summary(self) -> dict[str, Any]:
        n = max(self.n, 1)
        f = self.class_size.astype(np.float64)
        big_f = np.maximum(f, f / self.sampling_fraction)
        sample_uniques = int((self.class_size == 1).sum())
        out = {
            "records": self.n, "classes": self.n_classes,
            "sample_uniques": sample_uniques, "sample_uniqueness": sample_uniques / n,
            "prosecutor": {"highest_risk": float(self.prosecutor.max(initial=0.0)),
                           "records_at_risk": float((self.prosecutor > self.threshold).mean()) if self.n else 0.0,
                           "success_rate": self.n_classes / n},
            "journalist": {"highest_risk": float(self.journalist.max(initial=0.0)),
                           "records_at_risk": float((self.journalist > self.threshold).mean()) if self.n else 0.0,
                           "success_rate": float((f / big_f).sum() / n) if self.n else 0.0},
            "marketer": {"success_rate": float((f / big_f).sum() / n) if self.n else 0.0},
            "threshold": self.threshold, "sampling_fraction": self.sampling_fraction,
            "population_size": self.population_size, "population_uniqueness": self.uniqueness,
            "exact_qis_published": self.exact_qis_published, "notes": list(self.notes),
        }
        return out

    to_dict = summary


def frequencies(class_size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sample's frequencies of frequencies: class sizes ``i`` and counts ``c_i``."""
    sizes, counts = np.unique(np.asarray(class_size, dtype=np.int64), return_counts=True)
    return sizes, counts


# ---------------------------------------------------------------------------------------
# population uniqueness estimators
# ---------------------------------------------------------------------------------------
def zayatz(sizes: np.ndarray, counts: np.ndarray, n: int, N: float) -> float | None:
    """Population uniques by Zayatz (1991) (module docstring)."""
    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    from scipy import stats

    K = float(counts.sum())
    Ni = int(round(N))
    h = stats.hypergeom(Ni, sizes, n).pmf(1)  # P(one of the i members is drawn)
    den = float(((counts / K) * h).sum())
    h1 = float(stats.hypergeom(Ni, 1, n).pmf(1))
    if den <= 0 or not np.isfinite(den):
        return None
    share = (c1 / K) * h1 / den
    return c1 * share / (n / N)


def pitman_loglik(theta: float, alpha: float, sizes: np.ndarray, counts: np.ndarray, n: int) -> float:
    """Log-likelihood of the Pitman sampling formula for a sample's ``c_i`` (up to a constant)."""
    from scipy import special

    K = int(counts.sum())
    lt = (K - 1) * math.log(alpha) + special.gammaln(theta / alpha + K) - special.gammaln(theta / alpha + 1)
    ln = special.gammaln(theta + n) - special.gammaln(theta + 1)
    lc = float((counts * (special.gammaln(sizes - alpha) - special.gammaln(1 - alpha))).sum())
    return float(lt - ln + lc)


def pitman(sizes: np.ndarray, counts: np.ndarray, n: int, N: float) -> tuple[float | None, dict[str, Any]]:
    """Population uniques by the Pitman model (Hoshino 2001): ``(estimate, fit)``."""
    from scipy import optimize, special

    if not (sizes == 1).any():
        return 0.0, {}
    K = int(counts.sum())
    if K <= 1 or K >= n:
        return None, {"converged": False, "reason": "needs at least two classes and a class of size 2 or more"}

    def neg(x: np.ndarray) -> float:
        try:
            a = 1.0 / (1.0 + math.exp(-x[0]))  # alpha in (0, 1)
            t = -a + math.exp(x[1])  # theta > -alpha
            v = pitman_loglik(t, a, sizes, counts, n)
        except (OverflowError, ZeroDivisionError, ValueError):
            return 1e300
        return -v if np.isfinite(v) else 1e300

    best = None
    for a0, t0 in ((0.5, 1.0), (0.2, 10.0), (0.8, 100.0), (0.05, 1000.0)):
        x0 = np.array([math.log(a0 / (1 - a0)), math.log(t0 + a0)])
        res = optimize.minimize(neg, x0, method="Nelder-Mead",
                                options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 4000})
        if best is None or res.fun < best.fun:
            best = res
    try:
        a = 1.0 / (1.0 + math.exp(-best.x[0]))
        t = -a + math.exp(best.x[1])
    except OverflowError:
        return None, {"converged": False, "reason": "the fit diverged"}
    fit = {"theta": t, "alpha": a, "converged": bool(best.success)}
    if not best.success or a < 1e-6:
        return None, {**fit, "converged": False}
    try:
        est = math.exp(special.gammaln(t + 1) - special.gammaln(t + a) + a * math.log(N))
    except OverflowError:
        return None, {**fit, "converged": False, "reason": "estimate overflows"}
    if not (0 <= est <= N):
        return None, {**fit, "converged": False, "reason": "estimate outside [0, N]"}
    return est, fit


def shlosser(sizes: np.ndarray, counts: np.ndarray, q: float) -> float:
    """Shlosser's estimate of the number of classes in the population (Haas et al. 1995):
    ``d + c_1 Σ (1-q)^i c_i / Σ i q (1-q)^(i-1) c_i``."""
    d = float(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    num = float(((1 - q) ** sizes * counts).sum())
    den = float((sizes * q * (1 - q) ** (sizes - 1) * counts).sum())
    return d + c1 * num / den if den > 0 else d


def snb_expected(K: float, f: float, a: float, b: float) -> tuple[float, float]:
    """Expected numbers of sample classes of sizes 1 and 2 when ``K`` population classes have
    sizes ``1 + NegBin(a, b)`` and each member is sampled with probability ``f``."""
    d = (1 - b) * (1 - f)
    g = (b / (1 - d)) ** a
    e1 = K * f * g * (1 + a * d / (1 - d))
    e2 = K * f * f * a * (1 - b) * b ** a * (2 + (a - 1) * d) / (2 * (1 - d) ** (a + 2))
    return e1, e2


def snb(sizes: np.ndarray, counts: np.ndarray, n: int, N: float) -> tuple[float | None, dict[str, Any]]:
    """Population uniques by the shifted negative binomial model (module docstring)."""
    from scipy import optimize

    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0, {}
    c2 = float(counts[sizes == 2].sum())
    f = n / N
    K = shlosser(sizes, counts, f)
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
    if best is None or np.abs(best.fun).max() > 1e-8:
        return None, {"converged": False, "K": K}
    try:
        a, b = math.exp(best.x[0]), 1.0 / (1.0 + math.exp(-best.x[1]))
        est = K * b ** a
    except OverflowError:
        return None, {"converged": False, "K": K, "reason": "the fit diverged"}
    if not (0 <= est <= N):
        return None, {"converged": False, "K": K, "reason": "estimate outside [0, N]"}
    return est, {"alpha": a, "beta": b, "K": K, "converged": True}


def population_uniqueness(class_size: np.ndarray, n: int, N: float) -> dict[str, Any]:
    """Every estimator and Dankar et al.'s choice, as fractions of the population."""
    sizes, counts = frequencies(class_size)
    c1 = int(counts[sizes == 1].sum())
    out: dict[str, Any] = {"population_size": N}
    if c1 == 0:
        out.update(zayatz=0.0, pitman=0.0, snb=0.0, dankar=0.0, dankar_model="none (no sample unique)")
        return out
    z = zayatz(sizes, counts, n, N)
    p, pfit = pitman(sizes, counts, n, N)
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
            notes.append("a bucketized release publishes every QI exactly in its QI-table: identity is disclosed "
                         "by design (its protection is of the sensitive value), so the risk is that of the exact QIs")
            return (group_ids(cols)[0] if cols else np.zeros(len(data.data), dtype=np.int64)), True, notes
        return data.classes()[0], False, notes
    return np.asarray(data, dtype=np.int64), False, notes


def population_frame(n: int, *, population_size: float | None, sampling_fraction: float | None,
                     threshold: float, notes: list[str]) -> tuple[float, float]:
    """The population ``N`` and sampling fraction ``π`` of ``n`` records, from a population size
    or a sampling fraction (at most one; with neither the data is the population, noted in
    ``notes``), after checking them and the risk threshold (``ParameterError``)."""
    from ..errors import ParameterError

    if population_size is not None and sampling_fraction is not None:
        raise ParameterError("give the population size or the sampling fraction, not both",
                             parameter="population-size")
    if not (0 < threshold <= 1):
        raise ParameterError(f"threshold={threshold} must be in (0, 1]", parameter="reid-threshold", value=threshold)
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
                       sampling_fraction: float | None = None, threshold: float | None = None) -> dict[str, Any]:
    """The re-identification summary of a raw table (the keys of
    :meth:`ReidentificationResult.summary`) from its class sizes alone: ``counts[i]`` classes
    of size ``sizes[i]`` (each class once without ``counts``). Every record of a class has the
    class's risk, so no per-record array is needed: a frequency table (``check
    --batch-rows``) or a histogram aggregated on a cluster (the Spark engine) suffices."""
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.ones(sizes.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    n = int((sizes * counts).sum())
    notes: list[str] = []
    N, pi = population_frame(n, population_size=population_size, sampling_fraction=sampling_fraction,
                             threshold=threshold, notes=notes)
    K = int(counts.sum())
    f = sizes.astype(np.float64)
    prosecutor = 1.0 / f
    big_f = np.maximum(f, f / pi)
    journalist = 1.0 / big_f
    records = sizes * counts
    c1 = int(counts[sizes == 1].sum())
    nn = max(n, 1)
    success = float((counts * (f / big_f)).sum() / n) if n else 0.0
    if n and pi < 1.0:
        uniq = population_uniqueness(np.repeat(sizes, counts), n, N)
    else:
        uniq = {"population_size": N, "dankar": float(c1 / nn), "dankar_model": "the data is the population"}
    return {
        "records": n, "classes": K, "sample_uniques": c1, "sample_uniqueness": c1 / nn,
        "prosecutor": {"highest_risk": float(prosecutor.max(initial=0.0)),
                       "records_at_risk": float(int(records[prosecutor > threshold].sum()) / n) if n else 0.0,
                       "success_rate": K / nn},
        "journalist": {"highest_risk": float(journalist.max(initial=0.0)),
                       "records_at_risk": float(int(records[journalist > threshold].sum()) / n) if n else 0.0,
                       "success_rate": success},
        "marketer": {"success_rate": success},
        "threshold": float(threshold), "sampling_fraction": pi,
        "population_size": None if pi == 1.0 and population_size is None else N, "population_uniqueness": uniq,
        "exact_qis_published": True, "notes": notes,
    }


def reidentification_risk(data: Any, *, population_size: float | None = None,
                          sampling_fraction: float | None = None,
                          threshold: float = DEFAULT_THRESHOLD) -> ReidentificationResult:
    """Prosecutor, journalist and marketer risks of ``data`` (a raw encoded table, a release,
    or class ids per record) and the population-uniqueness estimates (module docstring).
    Give the population as ``population_size=N`` or ``sampling_fraction=π``; with neither the
    data is taken to be the population."""
    cls, exact, notes = _classes_of(data)
    cls = np.asarray(cls, dtype=np.int64)
    n = int(cls.size)
    N, pi = population_frame(n, population_size=population_size, sampling_fraction=sampling_fraction,
                             threshold=threshold, notes=notes)
    sizes = np.zeros(0, dtype=np.int64)
    if n:  # dense class ids, then the size of every class
        _, cls = np.unique(cls, return_inverse=True)
        cls = cls.ravel()
        sizes = np.bincount(cls)
    f = sizes[cls].astype(np.float64) if n else np.zeros(0)
    prosecutor = 1.0 / f if n else np.zeros(0)
    journalist = 1.0 / np.maximum(f, f / pi) if n else np.zeros(0)
    uniq = population_uniqueness(sizes, n, N) if n and pi < 1.0 else {
        "population_size": N, "dankar": float((sizes == 1).sum() / max(n, 1)), "dankar_model": "the data is the population"}
    return ReidentificationResult(cls, sizes, prosecutor, journalist, n, None if pi == 1.0 and population_size is None
                                  else N, pi, float(threshold), uniq, notes, exact)
