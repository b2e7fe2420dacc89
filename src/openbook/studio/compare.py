"""A finished run as the comparison shows it, side by side with the others: the verdict on
both lines of the certificate (identity first, in the certificate's own words), the refusal
``anonymize`` would print when it fails (:func:`openbook.certificate.refusal`), every
adversary's largest posterior (re-identification risk for the identity adversary) with the
people above the target and unresolved, utility (information loss, NCP, discernibility, the
ARE of the report's COUNT workloads), the classes as ``anonymize`` counts them, the rows
suppressed, and the first rows of what would be published. Nothing is computed here that the certificate and the utility
summary have not computed: this is their presentation, as JSON."""

from __future__ import annotations

import math
from typing import Any

#: rows of the release the page previews
PREVIEW_ROWS = 8


def _n(v: Any) -> Any:
    """A JSON number (NaN and infinities as ``None``)."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _frame(df: Any) -> dict[str, Any]:
    head = df.head(PREVIEW_ROWS)
    return {"columns": [str(c) for c in head.columns],
            "rows": [["" if v is None else str(v) for v in row] for row in head.itertuples(index=False, name=None)],
            "total": int(len(df))}


def adversary_row(f: Any) -> dict[str, Any]:
    """One finding of the certificate (:class:`openbook.certificate.Finding`) for the page."""
    state = ("does not apply" if not f.applies else "could not run" if not f.ran
             else "passes" if f.passes else "fails")
    return {"name": f.adversary, "title": f.title, "paper": f.paper, "disclosure": f.disclosure, "state": state,
            "passes": bool(f.passes), "knows_algorithm": bool(f.knows_algorithm), "max": _n(f.max_posterior),
            "target": _n(f.target), "target_kind": f.target_kind, "baseline": _n(f.baseline_max_posterior),
            "above": _n(f.n_above), "unresolved": _n(f.n_unresolved), "people": _n(f.n_people),
            "method": f.method, "seconds": _n(round(float(f.seconds), 2)),
            "note": f.error or ("" if f.ran else f.reason), "line": f.line()}


def classes(release: Any) -> dict[str, Any]:
    """The release's classes as ``anonymize`` counts them: a generalized release's classes; a
    bucketized release's QI combinations (its QI table) and SA groups."""
    sizes = release.qi_class_sizes()
    out = {"kind": release.kind, "qi_generalized": bool(release.qi_generalized),
           "groups": _n(release.meta.get("n_groups")), "qi_classes": int(sizes.size),
           "smallest": int(sizes.min()) if sizes.size else 0}
    if release.kind == "bucketized":
        qi = "generalized QIs" if release.qi_generalized else "exact QIs"
        out["words"] = (f"{out['qi_classes']:,} QI combinations ({qi}), each shared by at least {out['smallest']} "
                        f"records; {out['groups']:,} SA groups")
    else:
        out["words"] = f"{out['groups']:,} classes, each shared by at least {out['smallest']} records"
    return out


def summarize(run: Any) -> dict[str, Any]:
    """The comparison's view of a finished run (module docstring)."""
    from ..certificate import PASS, refusal

    res = run.result
    release, cert, util = res["release"], res["certificate"], res["utility"]
    m = release.meta
    findings = [adversary_row(f) for f in cert.findings]
    lines = [{"name": ln.name, "passes": bool(ln.passes), "text": ln.text, "target": _n(ln.target),
              "worst": _n(ln.worst), "source": ln.source} for ln in cert.lines]
    check = m.get("check") or {}
    return {
        "verdict": cert.verdict, "publishable": cert.verdict == PASS,
        "word": "PUBLISHABLE" if cert.verdict == PASS else "REFUSED",
        "headline": cert.headline(), "lines": lines,
        "refusal": None if cert.verdict == PASS else str(refusal(cert)),
        "aware": dict(cert.aware or {}), "adversaries": findings,
        "unresolved": max((a["unresolved"] or 0 for a in findings), default=0),
        "target": _n(cert.target), "target_source": cert.target_source,
        "utility": {"information_loss": _n(util.get("information_loss")), "ncp": _n(util.get("ncp")),
                    "discernibility": _n(util.get("discernibility")), "avg_class_size": _n(util.get("avg_class_size")),
                    "suppression_rate": _n(util.get("suppression_rate")),
                    "are": [{"qd": int(q["qd"]), "sel": _n(q["sel"]), "are": _n(q["are"])}
                            for q in res.get("queries") or []],
                    "per_qi": {k: _n(v) for k, v in (util.get("information_loss_per_qi") or {}).items()}},
        "classes": classes(release),
        "rows": {"input": _n(m.get("n_input")), "published": int(release.n_published),
                 "suppressed": int(release.n_suppressed)},
        "skew": {k: _n(v) if not isinstance(v, str) else v for k, v in (m.get("skew") or {}).items()} or None,
        "model": check.get("model") or str(run.model), "verified_level": _n(check.get("level")),
        "algorithm_params": {k: v for k, v in ((m.get("algorithm") or {}).get("params") or {}).items()
                             if v is not None},
        "preview": _frame(release.data),
        "preview_sa": None if release.sa_table is None else _frame(release.sa_table),
        "certify_seconds": _n(round(float(cert.seconds), 2)),
    }
