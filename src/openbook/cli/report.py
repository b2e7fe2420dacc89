"""``openbook report``: one self-contained HTML page on a release: risk, utility, provenance."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import (
    POSITIVE_INT,
    SEED,
    adversary_option,
    emit,
    identity_options,
    load_original,
    max_reid_risk_option,
    max_risk_option,
    original_options,
    output_options,
    print_table,
    reid_params,
    status,
    worlds_option,
)


def cmd_report(args: argparse.Namespace) -> int:
    from ..attacks.registry import parse_adversaries
    from ..release import load_release
    from ..release.io import check_plain_output
    from ..report.html import gather_report, render_report, report_title, write_report

    check_plain_output(args.output, force=args.force, inputs=[args.release, args.original], what="report")
    release = load_release(args.release, public_key=args.public_key)
    table = load_original(args, release)
    adversaries = parse_adversaries(args.adversary)
    with status("certifying and measuring the release", quiet=args.quiet):
        content = gather_report(release, adversaries=adversaries, table=table, n_queries=args.queries,
                                seed=args.seed, max_risk=args.max_risk, worlds=args.worlds,
                                max_reid_risk=args.max_reid_risk, reid=reid_params(args))
    data = Path(str(args.original)).name if args.original else None
    title = report_title(release, release_name=Path(str(args.release)).name, data_name=data)
    page = render_report(release, title=title, **content,
                         provenance={"command": " ".join(["openbook", *sys.argv[1:]]) if sys.argv
                                     else "openbook report", "release file": str(args.release)})
    out = write_report(args.output, page)
    cert = content["certificate"]
    d: dict[str, Any] = {"report": str(out), "title": title, **_verdict(cert),
                         "certified against": ("the original table, now" if table is not None
                                               else "the certificate recorded at publication"),
                         "adversaries": adversaries or "every one that applies"}
    emit(args, d, lambda d: print_table("report", [(k, v) for k, v in d.items()
                                                   if k != "lines" and not (k == "headline" and d.get("lines"))]
                                                  + [(ln["name"], ln["text"]) for ln in d.get("lines", [])]))
    return 0


def _verdict(cert: Any) -> dict[str, Any]:
    """The verdict the page shows, for the terminal and --json."""
    if cert is None:
        return {"verdict": "not certified", "headline": "the release records no certificate; give --original"}
    if isinstance(cert, dict):
        return {"verdict": str(cert.get("verdict", "not certified")), "headline": str(cert.get("reason", ""))}
    return {"verdict": cert.verdict, "headline": cert.headline(),
            "lines": [{"name": ln.name, "text": ln.text, "passes": ln.passes} for ln in cert.lines]}


def add_parser(sub: Any) -> None:
    rp = sub.add_parser("report", help="self-contained HTML report of a release: risk, utility, provenance")
    rp.add_argument("release", help="the release (its data file, .json sidecar or database file)")
    from ._common import public_key_option

    public_key_option(rp)
    original_options(rp, required_for="; for utility, query error and the adversaries that need it")
    adversary_option(rp, several=True)
    max_risk_option(rp, what="the verdict on the page judges every adversary against it")
    worlds_option(rp)
    max_reid_risk_option(rp, what="the target of identity disclosure (default: not judged)")
    identity_options(rp)
    rp.add_argument("--queries", type=POSITIVE_INT, default=1000, help="COUNT queries per setting (default 1000)")
    rp.add_argument("--seed", type=SEED, default=0, help="seed of the query workload (default 0)")
    rp.add_argument("-o", "--output", default="report.html", help="the HTML file (default report.html)")
    rp.add_argument("--force", action="store_true", help="replace an existing file at --output (never a release's "
                    "file or an input)")
    output_options(rp)
    rp.set_defaults(func=cmd_report)
