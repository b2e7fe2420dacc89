"""Paper 001 (Wong et al., VLDB 2007) §7.2, Figures 3–6: the cost of m-confidentiality —
MASK ("m-conf") against an (α,k)-anonymity baseline ("(α,k)-A").

Setup (§7, Table 12): UCI Adult, QI = the first ``q`` of (age, workclass, marital-status,
occupation, race, sex, native-country, salary-class), SA education with the sensitive set
{Preschool, 1st-4th, 5th-6th, 7th-8th} (:func:`openbook.experiments.wong2007.paper001_table`).
m-conf = MASK (:mod:`openbook.algorithms.mask`) with simple ℓ-diversity of the set (ℓ = m,
"total" reading) and k; (α,k)-A = strict Mondrian under (α = 1/m, k)-anonymity, standing in
for the local-recoding algorithm of Wong et al. 2006 [22] the paper ran.

Measurements (§7.2): execution time; relative error of COUNT queries (10,000 per point in
the paper; ``sel`` as in Anatomy — expected selectivity ``s``, default 0.05, ``qd`` = QI
size); information loss of the QI (Def. 6, weights 1/|QID|); distortion of the SA (Def. 6 on
the SA, original vs published value). Single table (Fig. 3: m = 2, Fig. 4: m = 10; vs QI
size for k = 2, 10, 20) and two tables (Fig. 5: ARE vs m and vs k; Fig. 6: ARE vs qd and
vs s). The paper averages 100 runs per point; we run one seeded run (``--quick``: fewer
points and queries).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .registry import ExperimentResult, experiment

METHODS = ("m-conf", "(α,k)-A")


def _adult():
    from ..data.adult import load_adult

    return load_adult("full")


def _table(frame, q: int):
    from .wong2007 import paper001_table

    return paper001_table(frame, q)


def _publish(table, method: str, m: int, k: int, kind: str, seed: int) -> tuple[Any, Any, float]:
    """(view of the published classes, published SA codes, seconds)."""
    from ..algorithms import make_algorithm
    from ..models import make_model
    from ..utility.metrics import view_from_partition

    t0 = time.perf_counter()
    if method == "m-conf":
        algo = make_algorithm("mask", model=make_model(f"simple-l={m},set=low,set-mode=total"), k=k, seed=seed)
        res = algo.run(table)
        part, published = res.partition, res.table
    else:
        model = make_model(f"alpha={1.0 / m!r},k={k},set=low,set-mode=total")
        part = make_algorithm("mondrian", model=model, strict=True).partition(table)
        published = table
    secs = time.perf_counter() - t0
    return view_from_partition(published, part, kind=kind), published.sa_codes, secs


def _point(table, hier_sa, method, m, k, kind, seed, workloads, act) -> dict[str, Any]:
    from ..utility.metrics import information_loss, sa_distortion
    from ..utility.queries import answer_all, relative_errors

    view, sa_pub, secs = _publish(table, method, m, k, kind, seed)
    row = {"method": method, "m": m, "k": k, "qi_size": len(table.qi_names), "kind": kind,
           "seconds": round(secs, 3), "information_loss": information_loss(view),
           "distortion": sa_distortion(table.sa_codes, sa_pub, hier_sa)}
    for name, wl in workloads.items():
        _, (est,) = answer_all(wl, table, [view])
        err, zero = relative_errors(est, act[name])
        row[f"are{name}"] = float(err.mean()) if err.size else float("nan")
        row[f"excluded_zero{name}"] = zero
    return row


def _sweep(quick: bool, seed: int, *, kind: str, points: list[dict[str, Any]],
           query_points: list[tuple[str, int | None, float]]) -> pd.DataFrame:
    """Run every (q, m, k) point for both methods; ``query_points`` are (suffix, qd, sel)
    workloads evaluated on each release (qd None = QI size)."""
    from ..hierarchy import adult_hierarchies
    from ..utility.queries import exact_answers, make_workload

    frame = _adult()
    hier_sa = adult_hierarchies("paper001")["education"]
    n_q = 500 if quick else 10_000
    rows = []
    tables: dict[int, Any] = {}
    for i, pt in enumerate(points):
        q = pt["q"]
        if q not in tables:
            tables[q] = _table(frame, q)
        table = tables[q]
        wls, act = {}, {}
        for j, (suffix, qd, sel) in enumerate(query_points):
            wl = make_workload(table, n=n_q, qd=min(q, qd or q), sel=sel, seed=[seed, i, j])
            wls[suffix], act[suffix] = wl, exact_answers(wl, table)
        for method in METHODS:
            row = _point(table, hier_sa, method, pt["m"], pt["k"], kind, seed, wls, act)
            row.update({f"qd{s}": min(q, qd or q) for s, qd, _ in query_points})
            row.update({f"sel{s}": sel for s, _, sel in query_points})
            rows.append(row)
    return pd.DataFrame(rows)


def _save(path: Path, n_panels: int, figsize: tuple[float, float], title: str, draw) -> None:
    """One row of ``n_panels`` axes, drawn by ``draw(axes)``, titled and saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n_panels, figsize=figsize)
    draw(np.atleast_1d(axes))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _plot(df: pd.DataFrame, x: str, panels: list[tuple[str, str]], title: str, group: str = "k"):
    def draw(axes) -> None:
        for ax, (col, label) in zip(axes, panels):
            for (method, g), sub in df.groupby(["method", group]):
                sub = sub.sort_values(x)
                ax.plot(sub[x], sub[col], marker="o" if method == "m-conf" else "s",
                        linestyle="-" if method == "m-conf" else "--", label=f"{method}, {group}={g}")
            ax.set_xlabel(x)
            ax.set_title(label)
        axes[0].legend(fontsize=7)

    return lambda path: _save(path, len(panels), (4.2 * len(panels), 3.6), title, draw)


SINGLE_PANELS = [("seconds", "(a) execution time (s)"), ("are", "(b) average relative error"),
                 ("information_loss", "(c) information loss"), ("distortion", "(d) distortion")]


def _single(m: int, quick: bool, seed: int, fig: str) -> ExperimentResult:
    qs = [3, 8] if quick else [3, 4, 5, 6, 7, 8]
    ks = [2, 10] if quick else [2, 10, 20]
    df = _sweep(quick, seed, kind="generalized", points=[{"q": q, "m": m, "k": k} for k in ks for q in qs],
                query_points=[("", None, 0.05)])
    return ExperimentResult({"main": df}, _plot(df, "qi_size", SINGLE_PANELS,
                                                f"paper 001 {fig}: single table, m = {m}"),
                            notes={"runs_per_point": 1, "queries_per_point": int(df["excluded_zero"].size and
                                                                                  (500 if quick else 10_000))})


@experiment("wong2007-fig3", paper="001 §7.2 Fig. 3",
            description="MASK vs (α,k)-A, single table, m=2: time, ARE, information loss, distortion vs QI size")
def fig3(quick: bool = False, seed: int = 0) -> ExperimentResult:
    return _single(2, quick, seed, "Fig. 3")


@experiment("wong2007-fig4", paper="001 §7.2 Fig. 4",
            description="MASK vs (α,k)-A, single table, m=10: time, ARE, information loss, distortion vs QI size")
def fig4(quick: bool = False, seed: int = 0) -> ExperimentResult:
    return _single(10, quick, seed, "Fig. 4")


@experiment("wong2007-fig5", paper="001 §7.2 Fig. 5",
            description="MASK vs (α,k)-A, two tables: ARE vs m and vs k (QI size 8, s = 0.05)")
def fig5(quick: bool = False, seed: int = 0) -> ExperimentResult:
    ms = [2, 10] if quick else [2, 4, 6, 8, 10]
    ks = [2, 10] if quick else [2, 5, 10, 15, 20]
    pts = [{"q": 8, "m": m, "k": 10, "sweep": "m"} for m in ms] + [{"q": 8, "m": 2, "k": k, "sweep": "k"} for k in ks]
    df = _sweep(quick, seed, kind="bucketized", points=pts, query_points=[("", None, 0.05)])
    df["sweep"] = [p["sweep"] for p in pts for _ in METHODS]

    def draw(axes) -> None:
        for ax, x in zip(axes, ["m", "k"]):
            for method, sub in df[df["sweep"] == x].groupby("method"):
                ax.plot(sub[x], sub["are"], marker="o", label=method)
            ax.set_xlabel(x)
            ax.set_ylabel("average relative error")
            ax.legend(fontsize=8)

    title = "paper 001 Fig. 5: two tables, ARE vs m (k=10) and vs k (m=2)"
    return ExperimentResult({"main": df}, lambda path: _save(path, 2, (9, 3.6), title, draw),
                            notes={"runs_per_point": 1})


@experiment("wong2007-fig6", paper="001 §7.2 Fig. 6",
            description="MASK vs (α,k)-A, two tables: ARE vs query dimensionality qd and selectivity s")
def fig6(quick: bool = False, seed: int = 0) -> ExperimentResult:
    ks = [2, 10] if quick else [2, 10, 20]
    qds = [2, 8] if quick else [2, 3, 4, 5, 6, 7, 8]
    sels = [0.02, 0.1] if quick else [0.01, 0.02, 0.05, 0.1, 0.2]
    qpoints: list[tuple[str, int | None, float]] = [(f"_qd{qd}", qd, 0.05) for qd in qds]
    qpoints += [(f"_s{s}", None, s) for s in sels]
    df = _sweep(quick, seed, kind="bucketized", points=[{"q": 8, "m": 2, "k": k} for k in ks], query_points=qpoints)
    long = []
    for _, r in df.iterrows():
        for suffix, qd, sel in qpoints:
            long.append({"method": r["method"], "k": r["k"], "m": r["m"], "sweep": "qd" if suffix.startswith("_qd") else "s",
                         "qd": min(8, qd or 8), "s": sel, "are": r[f"are{suffix}"],
                         "excluded_zero": r[f"excluded_zero{suffix}"]})
    out = pd.DataFrame(long)

    def draw(axes) -> None:
        for ax, x in zip(axes, ["qd", "s"]):
            for (method, k), sub in out[out["sweep"] == x].groupby(["method", "k"]):
                ax.plot(sub[x], sub["are"], marker="o", linestyle="-" if method == "m-conf" else "--",
                        label=f"{method}, k={k}")
            ax.set_xlabel(x)
            ax.set_ylabel("average relative error")
            ax.legend(fontsize=7)

    title = "paper 001 Fig. 6: two tables, m = 2"
    return ExperimentResult({"main": out, "releases": df}, lambda path: _save(path, 2, (9, 3.6), title, draw),
                            notes={"runs_per_point": 1})
