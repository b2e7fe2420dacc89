"""``openbook demo``: the end-to-end story on the built-in data, no download needed.

Loads Adult when its files are found (else the synthetic census table) and anonymizes it
with the algorithms of paper 000 — GG, RGG, SG, Mondrian strict and relaxed, Anatomy and
full-domain (lattice search, 2 % suppression budget) — under one ℓ-type model. Each release
is verified, written and read back, audited by every adversary that is available (the
algorithm-replay adversary of paper 000 §5.1 where it applies, the exact-credibility
minimality adversary of paper 001 §4, the baseline, plus any added to
:data:`DEMO_ADVERSARIES`; an adversary whose module cannot be imported is skipped *and
said so*), and measured for utility (information loss, paper 001 Def. 6; COUNT-query ARE,
paper 000 §5.3). One table shows how much an adversary learns beside how much an analyst
loses, and one HTML report per release is written.

Model on Adult: simple 6-diversity of the sensitive value "Tech-support" (paper 000 §5.1
uses Tech-support and Craft-repair "in turn"; one value keeps the exact minimality count on
its fast binary path).
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .algorithms import make_algorithm
from .data.datasets import default_dataset
from .models import make_model
from .release import load_release, save_release

DEMO_MODEL_ADULT = "simple-l=6,set=tech-support"
DEMO_MODEL_OTHER = "l=3"
DEMO_SUPPRESSION = 0.02
DEMO_QUERIES = {"n": 1000, "qd": 3, "sel": 0.05}

#: (label, registered algorithm, parameters)
DEMO_ALGORITHMS: list[tuple[str, str, dict[str, Any]]] = [
    ("GG", "gg", {}),
    ("RGG", "rgg", {"p": 0.65, "seed": 1}),
    ("SG", "sg", {}),
    ("Mondrian strict", "mondrian", {"strict": True}),
    ("Mondrian relaxed", "mondrian", {"strict": False}),
    ("Anatomy", "anatomy", {"seed": 1}),
    ("full-domain", "full-domain-search", {"max_suppression": DEMO_SUPPRESSION}),
]


def _minimality(release, table):
    """Exact credibility (paper 001 §4) for the releases the replay adversary leaves out."""
    from .attacks.credibility import minimality_attack

    if (release.meta.get("algorithm") or {}).get("algorithm") in REPLAY_ALGORITHMS:
        return None
    return minimality_attack(release, table)


def _baseline(release, table):
    from .attacks.baseline import baseline_attack

    return baseline_attack(release)


#: algorithms whose bucketized groups the replay adversary re-runs in seconds on Adult (paper
#: 000 §5.1); Mondrian's published classes can merge groups (equal labels) and full-domain
#: search needs the generic world-by-world re-run, so the demo leaves them to the
#: exact-credibility adversary of paper 001
REPLAY_ALGORITHMS = {"gg", "rgg", "sg", "anatomy"}


def _replay(release, table):
    from .attacks.replay import replay_release

    if (release.meta.get("algorithm") or {}).get("algorithm") not in REPLAY_ALGORITHMS:
        return None
    return replay_release(release, table, worlds=2000, seed=0)


#: adversary label → (module that must import, function (release, table) -> AttackResult or
#: None when it does not apply to this release)
DEMO_ADVERSARIES: dict[str, tuple[str, Callable]] = {
    "replay": ("openbook.attacks.replay", _replay),
    "minimality": ("openbook.attacks.credibility", _minimality),
    "baseline": ("openbook.attacks.baseline", _baseline),
}


def available_adversaries() -> tuple[dict[str, Callable], dict[str, str]]:
    """Adversaries whose module imports, and the skipped ones with the import error."""
    ok, skipped = {}, {}
    for name, (module, fn) in DEMO_ADVERSARIES.items():
        try:
            importlib.import_module(module)
        except ImportError as exc:  # only a missing module is skipped; any other error surfaces
            skipped[name] = f"{type(exc).__name__}: {exc}"
            continue
        ok[name] = fn
    return ok, skipped


def run_demo(*, out_dir: Path, quiet: bool = False) -> dict[str, Any]:
    from .report.html import query_error_table, render_report, write_report
    from .utility.metrics import utility_summary, view_from_release
    from .utility.queries import answer_all, make_workload, relative_errors

    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    ds = default_dataset()
    table = ds.encode()
    spec = DEMO_MODEL_ADULT if "tech-support" in ds.schema.sensitive_sets else DEMO_MODEL_OTHER
    model = make_model(spec)
    adversaries, skipped = available_adversaries()
    if skipped and not quiet:
        for name, why in skipped.items():
            print(f"openbook demo: adversary {name!r} skipped (module not importable: {why})")
    wl = make_workload(table, seed=0, **DEMO_QUERIES)
    rows, releases = [], []
    for label, algo_name, params in DEMO_ALGORITHMS:
        t1 = time.perf_counter()
        algo = make_algorithm(algo_name, model=model, **params)
        release = algo.anonymize(table)
        slug = label.lower().replace(" ", "-")
        files = save_release(release, out_dir / f"{ds.name}-{slug}.csv")
        back = load_release(files[0])
        check = back.verify(model)
        # the publisher audits what it made (its own record of who is where); the reload checks the files
        results = {name: fn(release, table) for name, fn in adversaries.items()}
        applied = {name: res for name, res in results.items() if res is not None}
        view = view_from_release(back, table)  # built once: utility, ARE and the report share it
        util = utility_summary(view, table)
        act, (est,) = answer_all(wl, table, [view])
        err, _ = relative_errors(est, act)
        row: dict[str, Any] = {"algorithm": label, "kind": release.kind, "classes": util["n_classes"],
                               "suppressed": release.n_suppressed,
                               "verified on reload": f"{check.model} holds" if check.holds else "FAILS"}
        # one column pair for the algorithm-aware adversary (replay where it applies, exact
        # credibility elsewhere), one for the baseline that ignores the algorithm
        for label_, names in (("aware", ("replay", "minimality")), ("baseline", ("baseline",))):
            res = next((applied[n] for n in names if n in applied), None)
            s = None if res is None else res.summary()
            if label_ == "aware":
                row["aware adversary"] = "–" if res is None else res.adversary
            row[f"{label_} max risk x 1/l"] = float("nan") if s is None else round(float(s.max_risk_multiple), 3)
            row[f"{label_} vulnerable %"] = float("nan") if s is None else round(100 * float(s.vulnerable_fraction), 2)
        row["information loss"] = round(float(util["information_loss"]), 4)
        row["ARE"] = round(float(err.mean()), 4)
        page = render_report(back, attacks=list(applied.values()), utility=util,
                             queries=query_error_table(back, table, n=500, view=view),
                             title=f"openbook demo: {label} on {ds.name}",
                             provenance={"command": "openbook demo", "dataset": ds.description})
        report = write_report(out_dir / "reports" / f"{slug}.html", page)
        row["report"] = str(report)
        row["seconds"] = round(time.perf_counter() - t1, 2)
        rows.append(row)
        releases.append(files)
    summary = {
        "dataset": ds.description,
        "model": model.describe(),
        "queries": f"{DEMO_QUERIES['n']} COUNT queries, qd={DEMO_QUERIES['qd']}, sel={DEMO_QUERIES['sel']}",
        "adversaries": list(adversaries),
        "skipped adversaries": skipped,
        "verified on reload": "model holds for every release" if all("holds" in r["verified on reload"] for r in rows)
        else "some releases FAIL",
        "results": rows,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if not quiet:
        _print(summary)
    return summary


def _print(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    rows = summary["results"]
    cols = [c for c in rows[0] if c not in ("report", "verified on reload")]
    t = Table(title=f"openbook demo — {summary['dataset']}\nmodel {summary['model']}; {summary['queries']}")
    for c in cols:
        t.add_column(_SHORT.get(c, c.replace(" max risk x 1/l", " risk×1/ℓ").replace(" vulnerable %", " vuln %")),
                     justify="left" if c in ("algorithm", "kind") else "right")
    for r in rows:
        t.add_row(*[_cell(r[c]) for c in cols])
    con = Console(width=max(Console().width, 150))
    con.print(t)
    con.print(f"verified on reload: {summary['verified on reload']}; reports in "
              f"{Path(rows[0]['report']).parent}; {summary['seconds']} s")


_SHORT = {"information loss": "info loss", "suppressed": "supp.", "seconds": "s", "aware adversary": "aware adv."}


def _cell(v: Any) -> str:
    if isinstance(v, float) and not np.isfinite(v):
        return "–"
    return str(v)
