"""Paper 004 §6: eligibility violations of small samples and the suppression rate of Safe D,
Unsafe D, R-suppression and Suppress-All (Figures 5-8).

* ``skew-fig5``  Adult (30,162 rows, SA occupation): number of ℓ-ineligible samples among
  100 simple random samples of size ``p·|Adult|``, per ``p`` and ℓ.
* ``skew-fig6``  averaged suppression rate vs ``p`` at ℓ = 6 (100 samples; R-sup averaged
  over 100 random instances per sample; an eligible sample counts as 0).
* ``skew-fig7``  the same vs ℓ at ``p = 0.5 %``.
* ``skew-thresholds``  §6.1's figures at p = 0.5 %, ℓ = 6 over R repetitions of the 100-sample
  protocol (mean ± standard error; the paper ran it once).
* ``skew-fig8``  Zipf ``F_i = round(β/i^α)``, β = 1000, m = 20: vs α at ℓ = 5 (main table)
  and vs ℓ at α = 1 (table ``l``); table ``rstar`` gives the exact expected suppression of
  the R*-family members (Theorem 4).

Only the SA counts of a sample matter, so a simple random sample without replacement is
drawn as a multivariate hypergeometric count vector. Samples with fewer than ℓ distinct
values admit no non-empty ℓ-eligible subset; every method then suppresses the whole sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..algorithms.suppression import (
    RSTAR_MEMBERS,
    expected_suppression,
    is_eligible,
    r_suppression_totals,
    safe_d_suppression,
    unsafe_d_suppression,
)
from ..errors import InfeasibleError
from .registry import ExperimentResult, experiment

METHODS = ["safe_d", "unsafe_d", "r_sup", "suppress_all"]
LABELS = {"safe_d": "Safe D", "unsafe_d": "Unsafe D", "r_sup": "R-sup", "suppress_all": "Suppress-All"}
P_FULL = [0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05]
P_QUICK = [0.002, 0.005, 0.02]


def _adult_counts() -> np.ndarray:
    from ..data.adult import load_adult

    sa = load_adult("train")["occupation"]
    return sa.value_counts().to_numpy(dtype=np.int64)


def _protocol(seed: int, quick: bool) -> tuple[np.random.Generator, np.ndarray, int, int]:
    """Figs. 6–7's setup: the seeded stream, Adult's occupation counts, the number of samples
    and of R-sup instances per sample (100 and 100 in §6.1; 20 and 20 quick)."""
    n = 20 if quick else 100
    return np.random.default_rng(seed), _adult_counts(), n, n


def _samples(counts: np.ndarray, p: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    size = int(round(p * counts.sum()))
    return rng.multivariate_hypergeometric(counts, size, size=n_samples).astype(np.int64)


def _rates(counts: np.ndarray, l: int, runs: int, rng: np.random.Generator) -> dict[str, float]:
    """Suppression rate |T_S|/|T| of each method on one table (0 when ℓ-eligible)."""
    n = int(counts.sum())
    if is_eligible(counts, l):
        return dict.fromkeys(METHODS, 0.0)
    try:
        safe = safe_d_suppression(counts, l).n_suppressed / n
        unsafe = unsafe_d_suppression(counts, l).n_suppressed / n
        rsup = float(r_suppression_totals(counts, l, runs, seed=rng).mean()) / n
    except InfeasibleError:  # fewer than ℓ distinct values: nothing can be published
        return dict.fromkeys(METHODS, 1.0)
    return {"safe_d": safe, "unsafe_d": unsafe, "r_sup": rsup, "suppress_all": 1.0}


def _averaged(samples: np.ndarray, l: int, runs: int, rng: np.random.Generator) -> dict[str, float]:
    rows = [_rates(s, l, runs, rng) for s in samples]
    out = {k: float(np.mean([r[k] for r in rows])) for k in METHODS}
    out["violating"] = int(sum(not is_eligible(s, l) for s in samples))
    return out


def _plot_rates(ax, df: pd.DataFrame, x: str, xlabel: str, percent_x: bool = False) -> None:
    xs = df[x] * (100 if percent_x else 1)
    for k, mk in zip(METHODS, "osD^"):
        ax.plot(xs, df[k] * 100, marker=mk, label=LABELS[k])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("suppression rate (%)")
    ax.grid(alpha=0.3)
    ax.legend()


def _figure(panels, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (draw, title) in zip(axes[0], panels):
        draw(ax)
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------
@experiment("skew-fig5", paper="004", description="ℓ-eligibility violations of Adult samples vs p and ℓ (Fig. 5)")
def fig5(quick: bool = False, seed: int = 0) -> ExperimentResult:
    rng = np.random.default_rng(seed)
    counts = _adult_counts()
    ps = P_QUICK if quick else P_FULL
    ls = [4, 6] if quick else [2, 3, 4, 5, 6, 7]
    n_samples = 20 if quick else 100
    rows = []
    for p in ps:
        samples = _samples(counts, p, n_samples, rng)
        for l in ls:
            bad = int(sum(not is_eligible(s, l) for s in samples))
            rows.append({"p": p, "l": l, "n_rows": int(samples[0].sum()), "n_samples": n_samples, "violating": bad})
    df = pd.DataFrame(rows)

    def draw(ax):
        for l, g in df.groupby("l"):
            ax.plot(g["p"] * 100, g["violating"], marker="o", label=f"l={l}")
        ax.set_xscale("log")
        ax.set_xlabel("sample size p (% of Adult)")
        ax.set_ylabel(f"violating samples (of {n_samples})")
        ax.grid(alpha=0.3)
        ax.legend()

    return ExperimentResult({"main": df}, lambda png: _figure([(draw, "Fig. 5: eligibility violations")], png),
                            {"adult_rows": int(counts.sum()), "adult_max_share": float(counts.max() / counts.sum())})


@experiment("skew-fig6", paper="004", description="suppression rate vs sample size p at ℓ = 6 (Fig. 6)")
def fig6(quick: bool = False, seed: int = 0) -> ExperimentResult:
    rng, counts, n_samples, runs = _protocol(seed, quick)
    l = 6
    rows = []
    for p in P_QUICK if quick else P_FULL:
        samples = _samples(counts, p, n_samples, rng)
        rows.append({"p": p, **_averaged(samples, l, runs, rng)})
    df = pd.DataFrame(rows)[["p", *METHODS, "violating"]]

    def draw(ax: Any) -> None:
        _plot_rates(ax, df, "p", "sample size p (%)", True)
        ax.set_xscale("log")

    return ExperimentResult(
        {"main": df},
        lambda png: _figure([(draw, "Fig. 6: suppression vs p (l=6)")], png),
        {"l": l, "n_samples": n_samples, "r_sup_runs": runs})


@experiment("skew-fig7", paper="004", description="suppression rate vs ℓ at p = 0.5 % (Fig. 7)")
def fig7(quick: bool = False, seed: int = 0) -> ExperimentResult:
    rng, counts, n_samples, runs = _protocol(seed, quick)
    p = 0.005
    samples = _samples(counts, p, n_samples, rng)
    rows = [{"l": l, **_averaged(samples, l, runs, rng)} for l in ([4, 6] if quick else range(2, 11))]
    df = pd.DataFrame(rows)[["l", *METHODS, "violating"]]
    return ExperimentResult(
        {"main": df},
        lambda png: _figure([(lambda ax: _plot_rates(ax, df, "l", "l"), "Fig. 7: suppression vs l (p=0.5%)")], png),
        {"p": p, "n_rows": int(samples[0].sum()), "n_samples": n_samples, "r_sup_runs": runs})


def zipf_counts(alpha: float, *, beta: float = 1000.0, m: int = 20) -> np.ndarray:
    """``F_i = round(β / i^α)`` (at least 1), ``i = 1..m`` (§6.2)."""
    return np.maximum(1, np.rint(beta / np.arange(1, m + 1) ** alpha)).astype(np.int64)


def _zipf_row(alpha: float, l: int, runs: int, rng: np.random.Generator) -> dict[str, float]:
    return _rates(zipf_counts(alpha), l, runs, rng)


@experiment("skew-fig8", paper="004", description="suppression rate under Zipf F_i = β/i^α, β=1000, m=20 (Fig. 8)")
def fig8(quick: bool = False, seed: int = 0) -> ExperimentResult:
    rng = np.random.default_rng(seed)
    runs = 20 if quick else 100
    alphas = [0.8, 1.0, 1.5] if quick else [0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    ls = [3, 5] if quick else list(range(2, 11))
    by_alpha = pd.DataFrame([{"alpha": a, **_zipf_row(a, 5, runs, rng)} for a in alphas])[["alpha", *METHODS]]
    by_l = pd.DataFrame([{"l": l, **_zipf_row(1.0, l, runs, rng)} for l in ls])[["l", *METHODS]]
    rstar = []
    for a, l in [(a, 5) for a in alphas] + [(1.0, l) for l in ls]:
        c = zipf_counts(a)
        if is_eligible(c, l):
            continue
        n = c.sum()
        rstar.append({"alpha": a, "l": l, **{m.replace("-", "_"): expected_suppression(c, l, member=m) / n
                                             for m in RSTAR_MEMBERS},
                      "unsafe_d": unsafe_d_suppression(c, l).rate, "safe_d": safe_d_suppression(c, l).rate})

    def plot(png):
        _figure([(lambda ax: _plot_rates(ax, by_alpha, "alpha", "alpha"), "Fig. 8(a): vary alpha (l=5)"),
                 (lambda ax: _plot_rates(ax, by_l, "l", "l"), "Fig. 8(b): vary l (alpha=1)")], png)

    return ExperimentResult({"main": by_alpha, "l": by_l, "rstar": pd.DataFrame(rstar)}, plot,
                            {"beta": 1000, "m": 20, "r_sup_runs": runs})


#: §6.1's statements at p = 0.5 %, ℓ = 6 (text on Figs. 5–7): (quantity, relation, value, where)
PAPER_THRESHOLDS = [("violating", "≈", 40.0, "§6.1, text on Fig. 5"),
                    ("r_sup", "<", 3.0, "§6.1, text on Figs. 6–7"),
                    ("safe_d", ">", 10.0, "§6.1, text on Figs. 6–7")]


@experiment("skew-thresholds", paper="004 §6.1",
            description="the §6.1 figures at p = 0.5 %, ℓ = 6: R repetitions of the 100-sample protocol, mean ± SE")
def thresholds(quick: bool = False, seed: int = 0) -> ExperimentResult:
    """Repeat the paper's protocol — 100 samples of ``p·|Adult|`` rows without replacement,
    R-sup averaged over 100 random instances per sample, ineligible samples only count — ``R``
    times (quick: 3) and report, per quantity, the mean over repetitions, the standard
    deviation of one 100-sample run, the standard error of the mean, how many standard errors
    the paper's figure lies from our mean, and the share of single runs on the paper's side."""
    rng = np.random.default_rng(seed)
    counts = _adult_counts()
    p, l, n_samples, runs = 0.005, 6, 100, 100
    reps = 3 if quick else 50
    rows = []
    for rep in range(reps):
        samples = _samples(counts, p, n_samples, rng)
        rows.append({"repetition": rep, **_averaged(samples, l, runs, rng)})
    df = pd.DataFrame(rows)[["repetition", *METHODS, "violating"]]
    summary = []
    for key, rel, paper, where in PAPER_THRESHOLDS + [("unsafe_d", "", float("nan"), "")]:
        x = df[key].to_numpy(dtype=np.float64) * (1 if key == "violating" else 100)
        mean, sd = float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else float("nan")
        se = sd / np.sqrt(x.size)
        side = {"<": x < paper, ">": x > paper, "≈": np.abs(x - paper) <= 0.5}.get(rel)
        summary.append({"quantity": key, "unit": "samples of 100" if key == "violating" else "% of rows",
                        "paper_relation": rel, "paper_value": paper, "printed_in": where,
                        "repetitions": int(x.size), "mean": mean, "sd_one_run": sd, "se_mean": se,
                        "paper_minus_mean_in_se": (paper - mean) / se if se > 0 else float("nan"),
                        "runs_on_paper_side": float(side.mean()) if side is not None else float("nan")})
    summ = pd.DataFrame(summary)

    def draw(ax):
        keys = ["unsafe_d", "r_sup", "safe_d"]
        ax.boxplot([df[k] * 100 for k in keys])
        ax.set_xticks(range(1, len(keys) + 1), [LABELS[k] for k in keys])
        ax.axhline(3, ls="--", c="k", lw=0.8)
        ax.axhline(10, ls=":", c="k", lw=0.8)
        ax.set_ylabel("suppression rate (%), one 100-sample run")
        ax.grid(alpha=0.3)

    return ExperimentResult({"main": df, "summary": summ},
                            lambda png: _figure([(draw, f"p = 0.5 %, l = 6: {reps} runs of 100 samples")], png),
                            {"p": p, "l": l, "n_samples": n_samples, "r_sup_runs": runs, "repetitions": reps})
