"""Paper 002 (Rameshwar & Tandon) §5, Figures 1 and 2: the sample size N of Mech-(ℓ,δ).

|Q| = 3000 (10 postal codes × 3 genders × 100 ages), |S| = 50 diseases, ``p = β p_ℓ``.

* ``rameshwar-fig1`` — uniform SA marginals (``p_i = 1/|S|``): (a) N vs δ for β ∈ {0.01, 0.02},
  ℓ ∈ {10, 30} (table ``main``); (b) N vs p ∈ [10⁻³, 1/|S|] for δ ∈ {0.01, 0.001}, ℓ ∈ {10, 30}
  (table ``vs_p``). Here ``mℓ = 1/p``, so the curves for ℓ = 10 and ℓ = 30 coincide.
* ``rameshwar-fig2`` — geometric marginals ``P_S(s) = p_1 ρ^{s−1}``, ρ = 0.95 (``p_1 ≈ 0.054``):
  (a) N vs δ (table ``main``); (b) N vs ℓ ∈ [5, 40] with ``p = β p_1 ρ^{ℓ−1}`` for
  δ ∈ {0.01, 0.001} (table ``vs_l``).

Every table has exactly the columns ``marginal, l, beta, delta, p, N`` (one row per setting).
The notes record the number of classes Greedy-Generalize makes for the uniform-``P_Q``
independent distribution (⌊1/β⌋, Corollary 4.8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..algorithms.ldelta import greedy_generalize, sample_size
from .registry import ExperimentResult, experiment

N_Q, N_S, RHO = 3000, 50, 0.95
BETAS = (0.01, 0.02)
LS = (10, 30)
DELTAS_FIXED = (0.01, 0.001)
COLUMNS = ["marginal", "l", "beta", "delta", "p", "N"]


def marginal(kind: str) -> np.ndarray:
    if kind == "uniform":
        return np.full(N_S, 1.0 / N_S)
    w = RHO ** np.arange(N_S)
    return w / w.sum()


def _row(kind: str, l: int, beta: float, delta: float, p: float, ps: np.ndarray) -> dict:
    N, _ = sample_size(l=l, delta=delta, p=p, n_q=N_Q, p_sorted=ps)
    return {"marginal": kind, "l": l, "beta": beta, "delta": delta, "p": p, "N": N}


def n_vs_delta(kind: str, quick: bool) -> pd.DataFrame:
    ps = marginal(kind)
    deltas = np.logspace(-4, np.log10(0.5), 8 if quick else 40)
    rows = [_row(kind, l, b, float(d), b * ps[l - 1], ps) for b in BETAS for l in LS for d in deltas]
    return pd.DataFrame(rows, columns=COLUMNS)


def n_vs_p(quick: bool) -> pd.DataFrame:
    ps = marginal("uniform")
    grid = np.linspace(1e-3, 1.0 / N_S, 8 if quick else 40)
    rows = [_row("uniform", l, float(p / ps[l - 1]), d, float(p), ps) for d in DELTAS_FIXED for l in LS for p in grid]
    return pd.DataFrame(rows, columns=COLUMNS)


def n_vs_l(quick: bool) -> pd.DataFrame:
    ps = marginal("geometric")
    ls = range(5, 41, 5 if quick else 1)
    rows = [_row("geometric", l, b, d, b * ps[0] * RHO ** (l - 1), ps) for b in BETAS for d in DELTAS_FIXED for l in ls]
    return pd.DataFrame(rows, columns=COLUMNS)


def _class_counts(kind: str) -> dict[str, int]:
    P = np.full((N_Q, 1), 1.0 / N_Q) * marginal(kind)[None, :]
    out = {}
    for b in BETAS:
        for l in LS:
            _, R = greedy_generalize(P, l=l, p=b * np.sort(marginal(kind))[::-1][l - 1])
            out[f"beta={b},l={l}"] = R
    return out


def _plot(panels: list[tuple[pd.DataFrame, str, str, list[str]]], title: str):
    def draw(path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2))
        for ax, (df, x, label, keys) in zip(np.atleast_1d(axes), panels):
            for key, g in df.groupby(keys):
                key = key if isinstance(key, tuple) else (key,)
                ax.plot(g[x], g["N"], marker=".", label=", ".join(f"{k}={v}" for k, v in zip(keys, key)))
            ax.set_xlabel(label)
            ax.set_ylabel("N (samples)")
            ax.set_yscale("log")
            if x in ("delta",):
                ax.set_xscale("log")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)

    return draw


@experiment("rameshwar-fig1", paper="002", description="Mech-(ℓ,δ) sample size N vs δ and vs p, uniform SA marginals (Fig. 1)")
def run_fig1(quick: bool = False, seed: int = 0) -> ExperimentResult:
    a, b = n_vs_delta("uniform", quick), n_vs_p(quick)
    notes = {"n_q": N_Q, "n_s": N_S, "greedy_classes": _class_counts("uniform"),
             "N_at_delta_0.01": {f"beta={r.beta},l={r.l}": int(r.N) for r in
                                 n_vs_delta_fixed("uniform").itertuples()}}
    return ExperimentResult({"main": a, "vs_p": b},
                            _plot([(a, "delta", "δ", ["beta", "l"]), (b, "p", "p", ["delta", "l"])],
                                  "Fig. 1: uniform marginals, |Q|=3000, |S|=50"), notes)


@experiment("rameshwar-fig2", paper="002", description="Mech-(ℓ,δ) sample size N vs δ and vs ℓ, geometric marginals ρ=0.95 (Fig. 2)")
def run_fig2(quick: bool = False, seed: int = 0) -> ExperimentResult:
    a, b = n_vs_delta("geometric", quick), n_vs_l(quick)
    notes = {"n_q": N_Q, "n_s": N_S, "rho": RHO, "p1": float(marginal("geometric")[0]),
             "greedy_classes": _class_counts("geometric"),
             "N_at_delta_0.01": {f"beta={r.beta},l={r.l}": int(r.N) for r in n_vs_delta_fixed("geometric").itertuples()}}
    return ExperimentResult({"main": a, "vs_l": b},
                            _plot([(a, "delta", "δ", ["beta", "l"]), (b, "l", "ℓ", ["beta", "delta"])],
                                  "Fig. 2: geometric marginals ρ=0.95, |Q|=3000, |S|=50"), notes)


def n_vs_delta_fixed(kind: str, delta: float = 0.01) -> pd.DataFrame:
    ps = marginal(kind)
    return pd.DataFrame([_row(kind, l, b, delta, b * ps[l - 1], ps) for b in BETAS for l in LS], columns=COLUMNS)
