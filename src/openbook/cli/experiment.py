"""``openbook experiment``: reproduce a paper's figure (CSV + PNG + provenance)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import SEED, emit, output_options, print_table


def cmd_experiment(args: argparse.Namespace) -> int:
    from ..experiments.registry import list_experiments, run_experiment

    if args.name in (None, "list"):
        rows = [(e.name, f"{e.paper}: {e.description}") for e in list_experiments()]
        emit(args, dict(rows), lambda d: print_table("experiments", list(d.items())))
        return 0
    if args.name == "report":  # every experiment, then the comparison with the papers as Markdown
        from ..errors import ParameterError
        from ..experiments.report import write_report

        if not args.markdown:
            raise ParameterError("experiment report needs --markdown PATH (e.g. EXPERIMENTS.md)", parameter="markdown")
        summary = write_report(args.markdown, quick=args.quick, seed=args.seed, out=args.out, reuse=args.reuse)
        emit(args, summary, lambda s: print_table("experiment report", [
            ("markdown", s["markdown"]), ("experiments", len(s["experiments"])), ("folder", args.out),
            ("experiment seconds", s["total_s"]), ("wall seconds", s["wall_s"])]))
        return 0
    prov = run_experiment(args.name, quick=args.quick, seed=args.seed, out=args.out)
    emit(args, prov, lambda p: print_table(f"experiment {p['experiment']}", [
        ("files", ", ".join(p["files"])), ("folder", args.out), ("seconds", p["elapsed_s"])]))
    return 0


def add_parser(sub: Any) -> None:
    x = sub.add_parser("experiment", help="reproduce a paper's figure: CSV + PNG + provenance")
    x.add_argument("name", nargs="?", help="experiment name, 'list', or 'report' (every experiment, then "
                                            "the comparison with the papers: --markdown EXPERIMENTS.md)")
    x.add_argument("--quick", action="store_true", help="the small variant CI runs")
    x.add_argument("--seed", type=SEED, default=0, help="seed (default 0)")
    x.add_argument("--out", default="experiments-out", help="output folder")
    x.add_argument("--markdown", default=None, help="report: the Markdown file to write")
    x.add_argument("--reuse", action="store_true",
                   help="report: render from the outputs already in --out instead of running again")
    output_options(x)
    x.set_defaults(func=cmd_experiment)
