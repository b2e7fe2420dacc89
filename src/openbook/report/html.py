"""``openbook report``: one self-contained HTML page per release (inline SVG and CSS, no
script, no network) that a publisher can act on:

1. **the verdict first** — publishable or not, against which adversaries, at which target:
   the release's certificate (:mod:`openbook.certificate`), computed afresh when the original
   table is given, else the one recorded in the sidecar at publication;
2. **a legend** in plain words for every figure on the page;
3. the release (counts, model, algorithm) and its model check;
4. per adversary: the histogram of every person's largest posterior with the target line,
   what it found, what it knew, the riskiest classes;
5. utility: information loss (paper 001 Def. 6), NCP, discernibility, class sizes,
   suppression, the COUNT-query error (paper 000 §5.3) when the original is given;
6. provenance, as a table.

No raw JSON reaches the page: every value is rendered as words or numbers.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import __version__
from ..data.table import EncodedTable
from ..release import Release
from . import plots
from .legend import LEGEND, VERDICT_WORDS

__all__ = ["run_adversaries", "query_error_table", "render_report", "write_report", "build_report", "gather_report",
           "report_title"]


def run_adversaries(release: Release, names: Sequence[str], table: EncodedTable | None) -> list[Any]:
    """Run the named adversaries of the registry (:mod:`openbook.attacks.adversary`)."""
    from ..attacks.registry import make_adversary

    return [make_adversary(name).run(release, original=table) for name in names]


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
td,th{border:1px solid #ccc;padding:4px 10px;text-align:left;font-variant-numeric:tabular-nums;vertical-align:top}
th{background:#eef2f8}
.ok{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}.warn{color:#9a6700;font-weight:bold}
.kpi{display:inline-block;margin:6px 18px 6px 0;padding:10px 16px;border-radius:6px;background:#f3f6fb}
.kpi b{display:block;font-size:1.6em}
.verdict{padding:16px 20px;border-radius:8px;margin:12px 0;border:2px solid}
.verdict.pass{background:#e9f7ef;border-color:#1a7f37}.verdict.fail{background:#fdecea;border-color:#b42318}
.verdict.other{background:#fff8e1;border-color:#9a6700}
.verdict .badge{font-size:1.8em;font-weight:bold;display:block}
.line{padding:10px 16px;border-radius:6px;margin:6px 0;border-left:6px solid;font-size:1.1em}
.line.ok{background:#e9f7ef;border-color:#1a7f37}.line.bad{background:#fdecea;border-color:#b42318}
dl.legend dt{font-weight:bold;margin-top:8px}dl.legend dd{margin:2px 0 0 18px}
.note{color:#666;font-size:0.9em}
"""


def _fmt(x: Any, digits: int = 4) -> str:
    """A number or value as the page writes it (thousands separators, 4 significant digits,
    ``–`` for nothing)."""
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


def _environment() -> Any:
    """The template environment: autoescaping on, the page's number format as ``fmt``."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("openbook.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=False, lstrip_blocks=False)
    env.filters["fmt"] = _fmt
    return env


def _summary(release: Release) -> list[tuple[str, Any]]:
    m = release.meta
    alg = m.get("algorithm") or {}
    n_classes = release.classes()[1]
    rows: list[tuple[str, Any]] = [
        ("kind", release.kind),
        # a sidecar publishes no input or suppressed count unless its publisher opted in
        ("rows in", m.get("n_input", "not published")), ("published", m.get("n_published", release.n_published)),
        ("suppressed", m.get("n_suppressed", "not published")),
    ]
    if release.kind == "bucketized":  # the same counts, in the same words, as anonymize and check print
        rows += [("QI combinations (the QI table)", int(release.qi_class_sizes().size)),
                 ("SA groups (the SA table)", n_classes)]
    else:
        rows.append(("classes", n_classes))
    rows += [("QI", ", ".join(release.qi)), ("SA", release.sa), ("model", _model_text(m.get("model"))),
             ("algorithm", alg.get("algorithm")), ("algorithm parameters", _words(alg.get("params") or {}))]
    if m.get("source"):
        rows.append(("source", m.get("source")))
    return rows


def _check(release: Release) -> dict[str, Any]:
    from ..attacks.baseline import release_model

    try:
        model = release_model(release)
    except Exception as exc:  # an unreadable model spec is reported, not fatal  # noqa: BLE001
        return {"error": str(exc)}
    if model is None:
        return {"error": None, "none": True}
    chk = release.check(model)
    return {"error": None, "none": False, "holds": chk.holds,
            "rows": [("model", chk.model), ("level reached", chk.level), ("groups", chk.n_groups),
                     ("failing groups", chk.failing_groups)]}


def _model_text(model: Any) -> str:
    if not model:
        return "none recorded"
    try:
        from ..models.registry import make_model

        return make_model(model).describe()
    except Exception:  # an unreadable spec is shown as words, not fatal  # noqa: BLE001
        return _words(model)


def _words(value: Any) -> str:
    """A value as words for a table cell (never JSON)."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_words(v)}" for k, v in value.items()) or "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(_words(v) for v in value) or "–"
    return _fmt(value)


def _verdict(cert: Any, source: str) -> dict[str, Any]:
    """The verdict, first: badge, one sentence, both lines, the target, every adversary's finding."""
    if cert is None:
        return {"kind": "none"}
    if isinstance(cert, Mapping) and cert.get("verdict") == "not certified":
        head, sentence = VERDICT_WORDS["not certified"]
        return {"kind": "not certified", "head": head, "sentence": sentence, "reason": cert.get("reason", "")}
    head, sentence = VERDICT_WORDS.get(cert.verdict, (cert.verdict.upper(), ""))
    worst = cert.worst()
    rows = []
    for f in cert.findings:
        status = ("does not apply" if not f.applies else "not run" if not f.ran
                  else "passes" if f.passes else "FAILS")
        rows.append([f"{f.title} ({f.paper})", status, "yes" if f.knows_algorithm else "no", f.max_posterior,
                     f.baseline_max_posterior if f.adversary != "baseline" else f.max_posterior, f.n_above,
                     f.n_unresolved, f.n_absent, f.n_people, f.method or (f.error or f.reason), f.seconds])
    return {
        "kind": "certificate", "head": head, "sentence": sentence,
        "cls": {"pass": "pass", "fail": "fail"}.get(cert.verdict, "other"),
        "lines": list(getattr(cert, "lines", []) or []),
        "target": "no target" if cert.target is None else f"{cert.target:.4g} ({cert.target_source})",
        "ran": ", ".join(f.adversary for f in cert.findings if f.ran) or "none", "source": source,
        "unaware": cert.unaware() or "", "why": worst.what() if worst is not None else "",
        "aware": (cert.aware or {}).get("adversary") or "", "aware_reason": (cert.aware or {}).get("reason", ""),
        "header": ["adversary", "result", "knows the algorithm", "max posterior",
                   "baseline's max posterior (same people)", "above the target", "unresolved", "absent considered",
                   "people", "method", "seconds"],
        "rows": rows,
    }


def _kpi(label: str, value: str, cls: str = "", ident: str = "") -> dict[str, str]:
    return {"label": label, "value": value, "cls": cls, "ident": ident}


def _attack(result: Any, target: float | None, reid_target: float | None = None) -> dict[str, Any]:
    from markupsafe import Markup

    if result.adversary == "reidentification":
        target = reid_target
    l = (1.0 / target) if target else (result.l if result.l is not None else 1.0)
    d = result.summary(l=l).to_dict(groups=10)
    name = d["adversary"]
    over = int((result.max_bound() > target + 1e-12).sum()) if target else 0
    cls = "bad" if over or d["n_unresolved"] else "ok"
    mx = result.max_posterior()
    considered = (result.group >= 0) | ~np.isnan(mx)
    what = ("re-identification risk per record" if result.adversary == "reidentification"
            else "largest posterior per person")
    share = (f"{d['vulnerable_fraction']:.2%} ({d['n_vulnerable']:,} vulnerable, {d['n_unresolved']:,} unresolved)"
             if target else "–")
    worst = d.get("per_group") or []
    cols = list(worst[0].keys()) if worst else []
    return {
        "name": name,
        "kpis": [_kpi("max posterior", _fmt(d["max_posterior"], 4), cls, f"max-{name}"),
                 _kpi("people above the target", f"{over:,}" if target else "no target", cls, f"above-{name}"),
                 _kpi("unresolved", f"{d['n_unresolved']:,}", "bad" if d["n_unresolved"] else "ok", f"unres-{name}"),
                 _kpi("risk × 1/ℓ", _fmt(d["max_risk_multiple"], 4) if target else "–", cls, f"risk-{name}")],
        # drawn by matplotlib from numbers, its text as paths: trusted markup
        "histogram": Markup(plots.posterior_histogram(mx[considered], l if target else None,
                                                      title=f"{name}: {what}")),
        "facts": [("people considered", int(considered.sum())), ("of them absent", d["n_absent_evaluated"]),
                  ("vulnerable or unresolved share", share),
                  ("average posterior of the vulnerable", d["avg_credibility_problematic"]),
                  ("largest Monte-Carlo standard error", d["max_stderr"]),
                  ("what it knew and did", _words(d.get("notes") or {}))],
        "worst_header": cols, "worst_rows": [[r[c] for c in cols] for r in worst],
    }


def _utility(utility: dict[str, Any] | None, queries: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    from markupsafe import Markup

    if utility is None:
        return None
    per = utility.get("information_loss_per_qi", {})
    out: dict[str, Any] = {
        "kpis": [_kpi("information loss (Def. 6)", _fmt(utility["information_loss"], 4), "", "il"),
                 _kpi("average class size", _fmt(utility["avg_class_size"], 4)),
                 _kpi("suppression rate", f"{utility['suppression_rate']:.2%}")],
        "rows": [("classes", utility["n_classes"]), ("smallest class", utility["min_class_size"]),
                 ("NCP", utility.get("ncp")), ("discernibility", utility["discernibility"])],
        "per_qi_header": list(per), "per_qi_values": list(per.values()), "queries": [], "chart": "",
    }
    if queries:
        out["queries"] = [[q["qd"], q["sel"], q["are"], q["n_queries"], q["excluded_zero"]] for q in queries]
        out["chart"] = Markup(plots.bar_chart([f"qd={q['qd']}, sel={q['sel']}" for q in queries],
                                              [q["are"] for q in queries], ylabel="ARE",
                                              title="average relative error"))
    return out


def _provenance(release: Release, extra: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        ("openbook version of the release", release.meta.get("openbook_version")),
        ("openbook version of this report", __version__),
        ("page generated", _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))]
    return rows + [(str(k), _words(v)) for k, v in (extra or {}).items()]


def render_report(release: Release, *, certificate: Any = None, certificate_source: str = "",
                  attacks: Sequence[Any] = (), utility: dict[str, Any] | None = None,
                  queries: list[dict[str, Any]] | None = None, title: str | None = None,
                  provenance: Mapping[str, Any] | None = None, notes: Sequence[str] = ()) -> str:
    """The report page as one HTML string: verdict, legend, release, check, adversaries,
    utility, provenance (module docstring) — rendered by an autoescaping template."""
    target = getattr(certificate, "target", None)
    reid_target = (getattr(certificate, "knowledge", None) or {}).get("identity_target")
    return _environment().get_template("report.html.j2").render(
        title=title or report_title(release), css=CSS, verdict=_verdict(certificate, certificate_source),
        notes=list(notes), legend=LEGEND, summary=_summary(release), check=_check(release),
        attacks=[_attack(res, target, reid_target) for res in attacks], utility=_utility(utility, queries),
        provenance=_provenance(release, provenance))


def write_report(path: str | os.PathLike, page: str) -> Path:
    """Write atomically (temporary file, sync, rename); readable by everyone (0644)."""
    from ..release.io import write_plain

    Path(path).parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        tmp.write_text(page, encoding="utf-8")
        os.chmod(tmp, 0o644)

    return write_plain(path, write)


def report_title(release: Release, *, release_name: str | None = None, data_name: str | None = None) -> str:
    """The page's title: the release and the data it was made from (a page among many must say
    which release it judges)."""
    name = release_name or "release"
    data = data_name or release.meta.get("source")
    return f"openbook report: {name}" + (f" (from {data})" if data else "")


def build_report(release: Release, *, adversaries: Sequence[str] = (), table: EncodedTable | None = None,
                 n_queries: int = 1000, seed: int = 0, provenance: Mapping[str, Any] | None = None,
                 max_risk: float | None = None, worlds: int | None = None, max_reid_risk: float | None = None,
                 reid: Mapping[str, Any] | None = None, title: str | None = None) -> str:
    """Certify the release against ``table`` (every adversary that applies, or the named
    ones) and render; without ``table``, show the certificate recorded at publication and
    the baseline adversary's figures."""
    return render_report(release, title=title, provenance=provenance,
                         **gather_report(release, adversaries=adversaries, table=table, n_queries=n_queries,
                                         seed=seed, max_risk=max_risk, worlds=worlds, max_reid_risk=max_reid_risk,
                                         reid=reid))


def gather_report(release: Release, *, adversaries: Sequence[str] = (), table: EncodedTable | None = None,
                  n_queries: int = 1000, seed: int = 0, max_risk: float | None = None, worlds: int | None = None,
                  max_reid_risk: float | None = None, reid: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page shows, before rendering: ``certificate`` (a fresh one against
    ``table``, else the one recorded at publication), ``certificate_source``, ``attacks``,
    ``utility``, ``queries`` — the keyword arguments of :func:`render_report`."""
    from ..certificate import Certificate, certify

    utility = queries = None
    if table is not None:
        from ..utility.metrics import release_utility

        params: dict[str, Any] = {"reidentification": dict(reid or {})}
        if worlds is not None:  # else the replay adversary's own default
            params["replay"] = {"worlds": worlds}
        cert = certify(release, original=table, max_risk=max_risk, max_reid_risk=max_reid_risk,
                       adversaries=list(adversaries) or None, params=params)
        source = "Certified now, against the original table given to the report."
        attacks = list(cert.results.values())
        utility = release_utility(release, table)
        queries = query_error_table(release, table, n=n_queries, seed=seed)
    else:
        recorded = release.meta.get("certificate")
        if isinstance(recorded, Mapping) and recorded.get("verdict") not in (None, "not certified"):
            cert = Certificate.from_dict(recorded)
        else:
            cert = recorded
        source = ("As recorded in the release's sidecar at publication (give --original to certify it again "
                  "and to see every adversary's per-person figures).")
        attacks = run_adversaries(release, ["baseline"], None)
    if not any(getattr(a, "adversary", "") == "reidentification" for a in attacks):
        from ..attacks.registry import make_adversary

        # identity disclosure always has its section (its histogram of record risk)
        attacks.append(make_adversary("reidentification", **dict(reid or {})).run(release))
    return {"certificate": cert, "certificate_source": source, "attacks": attacks, "utility": utility,
            "queries": queries}
