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
    prov = run_experiment(args.name, quick=args.quick, seed=args.seed, out=args.out)
    emit(args, prov, lambda p: print_table(f"experiment {p['experiment']}", [
        ("files", ", ".join(p["files"])), ("folder", args.out), ("seconds", p["elapsed_s"])]))
    return 0


def add_parser(sub: Any) -> None:
    x = sub.add_parser("experiment", help="reproduce a paper's figure: CSV + PNG + provenance")
    x.add_argument("name", nargs="?", help="experiment name, or 'list'")
    x.add_argument("--quick", action="store_true", help="the small variant CI runs")
    x.add_argument("--seed", type=SEED, default=0, help="seed (default 0)")
    x.add_argument("--out", default="experiments-out", help="output folder")
    output_options(x)
    x.set_defaults(func=cmd_experiment)
