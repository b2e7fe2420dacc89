"""``openbook demo``: the end-to-end story on the built-in data, no download needed.

Loads Adult when its files are found (else the synthetic census table, whose occupations are
Adult's) and anonymizes it with the algorithms of paper 000 — GG, RGG, SG, Mondrian strict and
relaxed, full-domain search (2 % suppression) — and with Set Anatomy, under simple 6-diversity of the sensitive value "Tech-support" (paper 000 §5.1 uses
Tech-support and Craft-repair in turn), and with Generalized Anatomy, the default: QI classes of
at least 5 records formed from the QIs alone and SA groups formed from the SA alone, the one whose
certificate passes both lines — identity and sensitive value. Each release is verified and **certified**
(:mod:`openbook.certificate`: every adversary that applies — the replay adversary of paper 000
§5.1, exact credibility of paper 001 §4, the baseline, and the absent people's posterior);
a release that passes is written and read back, one that fails is *not* written — the demo
shows what ``anonymize`` would refuse, and why — and every algorithm gets its HTML report.
One table shows the verdict, what the best-informed adversary learns beside the baseline,
and what an analyst loses (information loss, paper 001 Def. 6; COUNT-query ARE, paper 000
§5.3); a legend under it says what each column means.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from .data.datasets import Dataset, default_dataset
from .engines import publish
from .models import make_model
from .release import load_release, save_release
from .run import Certification, RunSpec

DEMO_MODEL = "simple-l=6,set=tech-support"
DEMO_QUERIES: dict[str, Any] = {"n": 1000, "qd": 3, "sel": 0.05}

#: (label, registered algorithm, parameters)
DEMO_ALGORITHMS: list[tuple[str, str, dict[str, Any]]] = [
    ("GG", "gg", {"seed": 1}),
    ("RGG", "rgg", {"p": 0.65, "seed": 1}),
    ("SG", "sg", {"seed": 1}),
    ("Mondrian strict", "mondrian", {"strict": True}),
    ("Mondrian relaxed", "mondrian", {"strict": False}),
    ("full-domain search", "full-domain-search", {"max_suppression": 0.02}),
    ("Set Anatomy", "set-anatomy", {"seed": 1}),
    ("Generalized Anatomy (default)", "generalized-anatomy", {"seed": 1}),
]

#: what each column of the demo's table means (printed under it)
DEMO_LEGEND = [
    ("verdict", "publishable: both lines pass — nobody's re-identification risk is above 0.2 (identity) and no "
                "adversary that applies learns anyone's value above the target 1/ℓ (sensitive value); refused: "
                "anonymize would exit 3 and write nothing (the demo writes only its report)"),
    ("reid max", "highest re-identification risk of a record (prosecutor): 1 means someone is identified by their "
                 "published QIs"),
    ("aware max", "largest posterior of the best-informed adversary that applies (it knows the algorithm): "
                  "1 means someone's value is known for certain"),
    ("baseline max", "largest posterior of an adversary who sees the release only"),
    ("above", "people whose posterior exceeds the target, by the worst adversary"),
    ("unres.", "people no adversary could evaluate: they count as failing"),
    ("info loss", "how much the published values are generalized, 0 (exact) to 1 (fully suppressed)"),
    ("ARE", "average relative error of 1000 COUNT queries answered from the release"),
]


def _row(label: str, release: Any, cert: Any, util: dict[str, Any], are: float) -> dict[str, Any]:
    ran = [f for f in cert.findings if f.ran]
    aware = [f for f in ran if f.adversary not in ("baseline", "reidentification") and f.disclosure == "attribute"]
    base = next((f for f in ran if f.adversary == "baseline"), None)
    reid = next((f for f in ran if f.disclosure == "identity"), None)
    if cert.verdict == "pass":
        verdict = "publishable"
    else:
        why = []
        for ln in cert.lines:
            if ln.passes:
                continue
            if ln.name == "identity":
                why.append(f"identity: {ln.n_above} above {ln.target:.2g}")
            else:
                bad = [f for f in cert.findings if f.disclosure == "attribute" and not f.passes]
                w = max(bad, key=lambda f: (f.ran, f.max_posterior or -1.0), default=None)
                why.append("value: " + ((f"{w.adversary} {w.n_above or w.n_unresolved} "
                                         f"{'above' if w.n_above else 'unresolved'}") if w is not None and w.ran
                                        else (f"{w.adversary} could not run" if w is not None else
                                              "no adversary knows the algorithm")))
        verdict = f"refused ({'; '.join(why)})"
    mx = [f.max_posterior for f in aware if f.max_posterior is not None]
    return {"algorithm": label, "kind": release.kind, "classes": int(util["n_classes"]),
            "suppressed": release.n_suppressed, "verdict": verdict,
            "aware adversaries": ", ".join(f.adversary for f in aware) or "–",
            "aware max": round(max(mx), 3) if mx else float("nan"),
            "baseline max": round(base.max_posterior, 3) if base and base.max_posterior is not None else float("nan"),
            "reid max": round(reid.max_posterior, 3) if reid and reid.max_posterior is not None else float("nan"),
            "above": max((f.n_above for f in ran if f.disclosure == "attribute"), default=0),
            "unres.": max((f.n_unresolved for f in cert.findings), default=0),
            "info loss": round(float(util["information_loss"]), 4), "ARE": round(are, 4)}


def run_demo(*, out_dir: Path, quiet: bool = False, dataset: Dataset | None = None) -> dict[str, Any]:
    """Run the demo into ``out_dir`` (a new or empty folder) and return its summary."""
    from .report.html import query_error_table, render_report, write_report
    from .utility.metrics import utility_summary, view_from_release
    from .utility.queries import answer_all, make_workload, relative_errors

    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    ds = dataset or default_dataset()
    table = ds.encode()
    model = make_model(DEMO_MODEL)
    wl = make_workload(table, seed=0, **DEMO_QUERIES)
    rows = []
    for label, algo_name, params in DEMO_ALGORITHMS:
        t1 = time.perf_counter()
        # what anonymize runs (the adversaries' own defaults), but a refused release comes back
        # with its certificate instead of raising; nothing is written by publish itself
        done = publish(RunSpec.for_table(table, model, algo_name, params,
                                         certify=Certification(enforce=False)))
        release, cert = done.release, done.certificate
        view = view_from_release(release, table)  # built once: utility, ARE and the report share it
        util = utility_summary(view, table)
        act, (est,) = answer_all(wl, table, [view])
        err, _ = relative_errors(est, act)
        row = _row(label, release, cert, util, float(err.mean()))
        slug = label.lower().split(" (")[0].replace(" ", "-")
        if cert.verdict == "pass":  # what anonymize would write; read back and verified
            files = save_release(release, out_dir / f"{ds.name}-{slug}.csv")
            back = load_release(files[0])
            row["release"] = str(files[0]) if back.verify(model).holds else "FAILS on reload"
        else:
            row["release"] = "not written (refused)"
        page = render_report(release, certificate=cert, certificate_source="Certified by the demo before writing.",
                             attacks=list(cert.results.values()), utility=util,
                             queries=query_error_table(release, table, n=500, view=view),
                             title=f"openbook demo: {label} on {ds.name}",
                             provenance={"command": "openbook demo", "dataset": ds.description})
        row["report"] = str(write_report(out_dir / "reports" / f"{slug}.html", page))
        row["seconds"] = round(time.perf_counter() - t1, 2)
        rows.append(row)
    summary = {
        "dataset": ds.description, "model": model.describe(), "target": cert.target,
        "queries": f"{DEMO_QUERIES['n']} COUNT queries, qd={DEMO_QUERIES['qd']}, sel={DEMO_QUERIES['sel']}",
        "results": rows, "legend": dict(DEMO_LEGEND), "folder": str(out_dir),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if not quiet:
        _print(summary)
    return summary


_COLUMNS = ["algorithm", "kind", "classes", "suppressed", "verdict", "reid max", "aware max", "baseline max", "above",
            "unres.", "info loss", "ARE", "seconds"]


def _print(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"openbook demo — {summary['dataset']}\nmodel {summary['model']}, target "
                    f"{summary['target']:.4g}; {summary['queries']}")
    for c in _COLUMNS:
        t.add_column(c, justify="left" if c in ("algorithm", "kind", "verdict") else "right")
    for r in summary["results"]:
        style = "green" if r["verdict"] == "publishable" else "red"
        t.add_row(*[_cell(r[c]) for c in _COLUMNS], style=style)
    con = Console(width=max(Console().width, 150))
    con.print(t)
    for term, text in DEMO_LEGEND:
        con.print(f"  [bold]{term}[/bold]: {text}")
    con.print(f"releases and reports in {summary['folder']}; {summary['seconds']} s")


def _cell(v: Any) -> str:
    if isinstance(v, float) and not np.isfinite(v):
        return "–"
    return str(v)
