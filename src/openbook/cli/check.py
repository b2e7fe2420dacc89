"""``openbook check``: the levels (k, ℓ variants, α, t) a raw table or a saved release satisfies."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ..errors import OpenbookError
from ._common import (
    POSITIVE,
    config_from_args,
    emit,
    input_options,
    output_options,
    print_table,
)


def _is_release(path: str) -> bool:
    from ..release.io import sidecar_path

    p = Path(path)
    if p.suffix == ".json":
        return True
    if sidecar_path(p).is_file():
        return True
    if p.suffix.lower() in (".sqlite", ".sqlite3", ".db", ".duckdb", ".ddb") and p.is_file():
        from ..release.io import load_release

        try:
            load_release(p)
            return True
        except OpenbookError:
            return False
    return False


def check_levels(args: argparse.Namespace) -> dict[str, Any]:
    from ..data.grouping import group_ids
    from ..models.levels import compute_levels
    from ..pipeline import load_input

    t0 = time.perf_counter()
    if args.input and _is_release(args.input):
        from ..release import load_release

        rel = load_release(args.input)
        counts, domain = rel.sa_counts()
        what = {"kind": f"{rel.kind} release", "source": args.input, "declared_model": rel.meta.get("model")}
    else:
        table = load_input(config_from_args(args))
        cls, n = group_ids(table.qi_codes)
        counts, domain = table.group_sa_counts(cls, n), table.sa_domain
        what = {"kind": "raw table", "source": table.source, "qi": table.qi_names, "sa": table.sa_name}
    levels = compute_levels(counts, domain, c=args.c)
    return {**what, "levels": levels, "seconds": round(time.perf_counter() - t0, 4)}


def cmd_check(args: argparse.Namespace) -> int:
    result = check_levels(args)

    def render(r: dict[str, Any]) -> None:
        rows = [("input", f"{r['kind']}: {r['source']}")]
        rows += [(k, v) for k, v in r["levels"].items()]
        print_table("levels the data satisfies", rows)

    emit(args, result, render)
    return 0


def add_parser(sub: Any) -> None:
    c = sub.add_parser("check", help="levels (k, ℓ, α, t) a raw table or a release satisfies")
    c.add_argument("input", nargs="?", help="data file / database URL, or a release (its data file or .json sidecar)")
    input_options(c)
    c.add_argument("--c", type=POSITIVE, default=2.0, help="c of recursive (c,ℓ)-diversity (default 2)")
    output_options(c)
    c.set_defaults(func=cmd_check)
