"""``openbook report``: one self-contained HTML page on a release: risk, utility, provenance."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import config_from_args, emit, input_options, output_options, print_table


def cmd_report(args: argparse.Namespace) -> int:
    from ..release import load_release
    from ..report.html import build_report, write_report

    release = load_release(args.release)
    table = None
    if args.original or args.dataset:
        from ..data.schema import Schema
        from ..pipeline import load_input

        cfg = config_from_args(args)
        cfg.set("input", "path", args.original)
        if not (args.qi or args.sa or args.dataset):
            sch = Schema.from_dict(release.meta["schema"])
            cfg.set("schema", "qi", [f"{c.name}:{c.kind}" for c in sch.qi])
            cfg.set("schema", "sa", sch.sa.name)
            cfg.set("schema", "sensitive_sets", dict(sch.sensitive_sets) or None)
        table = load_input(cfg)
    adversaries = [a.strip() for a in args.adversary.split(",") if a.strip()]
    page = build_report(release, adversaries=adversaries, table=table, n_queries=args.queries, seed=args.seed,
                        provenance={"command": " ".join(["openbook", *sys.argv[1:]]) if sys.argv else "openbook report",
                                    "release_file": str(args.release)})
    out = write_report(args.output, page)
    emit(args, {"report": str(out), "adversaries": adversaries, "original": table is not None},
          lambda d: print_table("report", list(d.items())))
    return 0


def add_parser(sub: Any) -> None:
    rp = sub.add_parser("report", help="self-contained HTML report of a release: risk, utility, provenance")
    rp.add_argument("release", help="the release (its data file, .json sidecar or database file)")
    rp.add_argument("--original", metavar="DATA", help="the original table (for utility, query error, minimality)")
    input_options(rp)
    rp.add_argument("--adversary", default="baseline", help="comma-separated adversaries (baseline, minimality, replay)")
    rp.add_argument("--queries", type=int, default=1000, help="COUNT queries per setting (default 1000)")
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("-o", "--output", default="report.html", help="the HTML file (default report.html)")
    output_options(rp)
    rp.set_defaults(func=cmd_report)
