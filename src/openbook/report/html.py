"""``openbook report``: one self-contained HTML page per release (inline SVG, inline CSS, no
script, no network) with

* the release summary (kind, rows in / published / suppressed, classes, model, algorithm);
* the model check (the release re-verified against the model its sidecar records);
* each adversary's risk (DESIGN.md "Posteriors, not verdicts"): the histogram of every
  tuple's largest posterior confidence with the ``1/ℓ`` line, the vulnerable fraction, the
  max risk as a multiple of ``1/ℓ`` (paper 000 §5.1), m-confidentiality (paper 001 Def. 4),
  and the worst groups;
* utility: information loss (paper 001 Def. 6), NCP, discernibility, class sizes,
  suppression rate, and the COUNT-query ARE (paper 000 §5.3) when the original is given;
* provenance (algorithm, parameters, seed, versions, when and how the page was made).

The page takes a list of :class:`~openbook.attacks.base.AttackResult` (any adversary of the
registry, :mod:`openbook.attacks.adversary`), so adversaries added later appear without
changes here.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import __version__
from ..data.table import EncodedTable
from ..release import Release
from . import plots

__all__ = ["run_adversaries", "query_error_table", "render_report", "write_report"]


def run_adversaries(release: Release, names: Sequence[str], table: EncodedTable | None) -> list[Any]:
    """Run the named adversaries of the registry (:mod:`openbook.attacks.adversary`)."""
    from ..attacks.adversary import make_adversary

    out = []
    for name in names:
        adv = make_adversary(name, **({"worlds": 2000} if name == "replay" else {}))
        out.append(adv.run(release, original=table))
    return out


def query_error_table(release: Release, table: EncodedTable, *, n: int = 1000, seed: int = 0,
                      settings: Sequence[tuple[int, float]] | None = None, view: Any = None) -> list[dict[str, Any]]:
    """ARE of the release on COUNT workloads (paper 000 §5.3) at a few (qd, sel) settings
    (``view``: the release's published-class view, when the caller already built it)."""
    from ..utility.metrics import view_from_release
    from ..utility.queries import answer_all, make_workload, relative_errors

    d = len(table.qi_names)
    settings = settings or sorted({(min(2, d), 0.05), (d, 0.05), (min(2, d), 0.2)})
    view = view if view is not None else view_from_release(release, table)
    rows = []
    for i, (qd, sel) in enumerate(settings):
        wl = make_workload(table, n=n, qd=qd, sel=sel, seed=[seed, i])
        act, (est,) = answer_all(wl, table, [view])
        err, zero = relative_errors(est, act)
        rows.append({"qd": qd, "sel": sel, "are": float(err.mean()) if err.size else float("nan"),
                     "n_queries": n, "excluded_zero": zero})
    return rows


# ---------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------
CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;
color:#222;background:#fff;line-height:1.4}
h1{border-bottom:3px solid #4C72B0;padding-bottom:6px}
h2{margin-top:32px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:4px 10px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#eef2f8}
.ok{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}
.kpi{display:inline-block;margin:6px 18px 6px 0;padding:10px 16px;border-radius:6px;background:#f3f6fb}
.kpi b{display:block;font-size:1.6em}
pre{background:#f6f8fa;padding:10px;overflow-x:auto;font-size:12px}
.note{color:#666;font-size:0.9em}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            return "–"
        return f"{float(x):.{digits}g}"
    return str(x)


def _kv(rows: Sequence[tuple[str, Any]], cls: str = "") -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{v if isinstance(v, _Raw) else _e(_fmt(v))}</td></tr>"
                   for k, v in rows)
    return f'<table class="{cls}">{body}</table>'


class _Raw(str):
    """Already-escaped HTML."""


def _grid(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    h = "".join(f"<th>{_e(c)}</th>" for c in header)
    b = "".join("<tr>" + "".join(f"<td>{_e(_fmt(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><tr>{h}</tr>{b}</table>'


def _kpi(label: str, value: str, cls: str = "", ident: str = "") -> str:
    i = f' id="{_e(ident)}"' if ident else ""
    return f'<div class="kpi"{i}><b class="{cls}">{_e(value)}</b>{_e(label)}</div>'


def _summary_section(release: Release) -> str:
    m = release.meta
    alg = m.get("algorithm") or {}
    model = m.get("model")
    rows = [
        ("kind", release.kind),
        ("rows in", m.get("n_input")), ("published", m.get("n_published", release.n_published)),
        ("suppressed", m.get("n_suppressed", 0)), ("groups the algorithm made", m.get("n_groups")),
        # groups whose generalized labels coincide are one class to any reader of the file
        ("classes a reader sees", release.classes()[1]),
        ("QI", ", ".join(release.qi)), ("SA", release.sa),
        ("model", (model or {}).get("spec") if isinstance(model, dict) and "spec" in model else json.dumps(model)),
        ("algorithm", alg.get("algorithm")), ("source", m.get("source")),
    ]
    return "<h2>Release</h2>" + _kv(rows, "summary")


def _check_section(release: Release) -> str:
    from ..attacks.baseline import release_model

    try:
        model = release_model(release)
    except Exception as exc:  # an unreadable model spec is reported, not fatal  # noqa: BLE001
        return f"<h2>Model check</h2><p class='bad'>cannot rebuild the model: {_e(exc)}</p>"
    if model is None:
        return "<h2>Model check</h2><p class='note'>the release records no privacy model</p>"
    chk = release.check(model)
    cls = "ok" if chk.holds else "bad"
    return ("<h2>Model check</h2>" + _kpi("model holds", "holds" if chk.holds else "FAILS", cls, "model-holds")
            + _kv([("model", chk.model), ("level reached", chk.level), ("groups", chk.n_groups),
                   ("failing groups", chk.failing_groups)], "check"))


def _attack_section(result: Any, index: int) -> str:
    s = result.summary(l=result.l if result.l is not None else 1.0)  # no ℓ: no threshold
    d = s.to_dict(groups=10)
    name = d["adversary"]
    vuln_cls = "bad" if d["n_vulnerable"] else "ok"
    kpis = (_kpi("vulnerable tuples", f"{d['vulnerable_fraction']:.2%}", vuln_cls, f"vuln-{name}")
            + _kpi("max risk × 1/ℓ", _fmt(d["max_risk_multiple"], 4), vuln_cls, f"risk-{name}")
            + _kpi("max posterior", _fmt(d["max_posterior"], 4))
            + _kpi(f"{_fmt(d['m'])}-confidential", "yes" if d["m_confidential"] else "no",
                   "ok" if d["m_confidential"] else "bad"))
    hist = plots.posterior_histogram(result.max_posterior()[result.group >= 0], d["l"],
                                     title=f"{name}: largest posterior per tuple")
    facts = _kv([("ℓ", d["l"]), ("tuples", d["n_tuples"]), ("published", d["n_published"]),
                 ("vulnerable", d["n_vulnerable"]), ("unresolved", d["n_unresolved"]),
                 ("vulnerable groups", d.get("n_vulnerable_groups")),
                 ("avg credibility of problematic tuples", d["avg_credibility_problematic"]),
                 ("largest Monte-Carlo std. error", d["max_stderr"])], "attack")
    worst = d.get("per_group") or []
    cols = list(worst[0].keys()) if worst else []
    table = _grid(cols, [[r[c] for c in cols] for r in worst], "worst") if worst else "<p class='note'>no groups</p>"
    notes = d.get("notes") or {}
    note = f"<pre>{_e(json.dumps(notes, indent=1, default=str))}</pre>" if notes else ""
    return (f'<h2 id="adversary-{index}">Adversary: {_e(name)}</h2>{kpis}<div class="fig">{hist}</div>{facts}'
            f"<h3>Worst groups</h3>{table}{note}")


def _utility_section(utility: dict[str, Any] | None, queries: list[dict[str, Any]] | None) -> str:
    if utility is None:
        return ("<h2>Utility</h2><p class='note'>give the original data (--original / --dataset) for "
                "information loss and query error</p>")
    per = utility.get("information_loss_per_qi", {})
    out = ("<h2>Utility</h2>" + _kpi("information loss (Def. 6)", _fmt(utility["information_loss"], 4), "", "il")
           + _kpi("average class size", _fmt(utility["avg_class_size"], 4))
           + _kpi("suppression rate", f"{utility['suppression_rate']:.2%}")
           + _kv([("classes", utility["n_classes"]), ("smallest class", utility["min_class_size"]),
                  ("NCP", utility.get("ncp")), ("discernibility", utility["discernibility"])], "utility")
           + "<h3>Information loss per QI (unweighted)</h3>" + _grid(list(per), [list(per.values())], "il-per-qi"))
    if queries:
        out += "<h3>COUNT-query error (paper 000 §5.3)</h3>" + _grid(
            ["qd", "sel", "ARE", "queries", "excluded (true count 0)"],
            [[q["qd"], q["sel"], q["are"], q["n_queries"], q["excluded_zero"]] for q in queries], "queries")
        out += plots.bar_chart([f"qd={q['qd']}, sel={q['sel']}" for q in queries], [q["are"] for q in queries],
                               ylabel="ARE", title="average relative error")
    return out


def _provenance_section(release: Release, extra: dict[str, Any] | None) -> str:
    prov = {"algorithm": release.meta.get("algorithm"), "openbook_version_release": release.meta.get("openbook_version"),
            "openbook_version_report": __version__,
            "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **(extra or {})}
    return f"<h2>Provenance</h2><pre>{_e(json.dumps(prov, indent=1, default=str))}</pre>"


def render_report(release: Release, *, attacks: Sequence[Any] = (), utility: dict[str, Any] | None = None,
                  queries: list[dict[str, Any]] | None = None, title: str | None = None,
                  provenance: dict[str, Any] | None = None, notes: Sequence[str] = ()) -> str:
    """The report page as one HTML string."""
    title = title or f"openbook report: {release.meta.get('source') or 'release'}"
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<style>{CSS}</style></head><body><h1>{_e(title)}</h1>"]
    for n in notes:
        parts.append(f"<p class='note'>{_e(n)}</p>")
    parts.append(_summary_section(release))
    parts.append(_check_section(release))
    if not attacks:
        parts.append("<h2>Adversaries</h2><p class='note'>no adversary was run</p>")
    for i, res in enumerate(attacks):
        parts.append(_attack_section(res, i))
    parts.append(_utility_section(utility, queries))
    parts.append(_provenance_section(release, provenance))
    parts.append("</body></html>")
    return "".join(parts)


def write_report(path: str | os.PathLike, page: str) -> Path:
    """Write atomically (temporary file, sync, rename); readable by everyone (0644)."""
    from ..release.io import write_plain

    Path(path).parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        tmp.write_text(page, encoding="utf-8")
        os.chmod(tmp, 0o644)

    return write_plain(path, write)


def build_report(release: Release, *, adversaries: Sequence[str] = ("baseline",), table: EncodedTable | None = None,
                 n_queries: int = 1000, seed: int = 0, provenance: dict[str, Any] | None = None,
                 attacks: Sequence[Any] = ()) -> str:
    """Run the adversaries, compute utility (when ``table`` is given) and render."""
    from ..utility.metrics import release_utility

    results = list(attacks) + run_adversaries(release, adversaries, table)
    utility = queries = None
    if table is not None:
        utility = release_utility(release, table)
        queries = query_error_table(release, table, n=n_queries, seed=seed)
    return render_report(release, attacks=results, utility=utility, queries=queries, provenance=provenance)
