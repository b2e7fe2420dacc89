"""``openbook check``: the levels (k, ℓ variants, α, t) a raw table or a saved release satisfies."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ._common import (
    POSITIVE,
    config_from_args,
    emit,
    identity_options,
    input_options,
    output_options,
    print_table,
)


def _is_release(path: str) -> bool:
    """Is ``path`` a release — its data file (a sidecar beside it), its ``.json`` sidecar, or
    a database holding a release (its metadata table)? A release is loaded and verified as
    one, never read as a raw table. A directory is neither: one line says so. An
    interrupted write at the path is settled first (rolled forward or undone, stale
    temporaries swept)."""
    from ..errors import DataError
    from ..release.io import is_release_database, settle, sidecar_path

    if "://" in path:
        return False
    p = Path(path)
    if p.is_dir() or not p.name:
        raise DataError(f"{path} is a directory, not a table or a release (give a data file, a release's data "
                        "file or sidecar, or a database file)", path=p)
    settle(p)
    if p.suffix == ".json":
        return True
    return sidecar_path(p).is_file() or is_release_database(p)


def check_levels(args: argparse.Namespace) -> dict[str, Any]:
    from ..attacks.reidentification import reidentification_risk
    from ..data.grouping import group_ids
    from ..models.levels import compute_levels
    from ..pipeline import load_input

    t0 = time.perf_counter()
    if args.input and _is_release(args.input):
        from ..release import load_release

        rel = load_release(args.input)
        counts, domain = rel.sa_counts()
        what = {"kind": f"{rel.kind} release", "source": args.input, "declared_model": rel.meta.get("model")}
        subject: Any = rel
    else:
        table = load_input(config_from_args(args))
        cls, n = group_ids(table.qi_codes)
        counts, domain = table.group_sa_counts(cls, n), table.sa_domain
        what = {"kind": "raw table", "source": table.source, "qi": table.qi_names, "sa": table.sa_name}
        subject = table
    levels = compute_levels(counts, domain, c=args.c)
    identity = reidentification_risk(subject, population_size=args.population_size,
                                     sampling_fraction=args.sampling_fraction, threshold=args.reid_threshold)
    return {**what, "levels": levels, "identity": identity.summary(), "seconds": round(time.perf_counter() - t0, 4)}


def cmd_check(args: argparse.Namespace) -> int:
    result = check_levels(args)

    def render(r: dict[str, Any]) -> None:
        idt = r["identity"]
        rows = [("input", f"{r['kind']}: {r['source']}"),
                ("unique on their QIs", f"{idt['sample_uniqueness']:.1%} of the records ({idt['sample_uniques']:,})")]
        rows += [(k, v) for k, v in r["levels"].items()]
        print_table("levels the data satisfies", rows)
        print_table("identity disclosure (re-identification risk)", identity_rows(idt))

    emit(args, result, render)
    return 0


def identity_rows(idt: dict[str, Any]) -> list[tuple[str, Any]]:
    """The re-identification figures as terminal rows (docs/identity.md)."""
    th = idt["threshold"]
    rows = [("records, classes", f"{idt['records']:,}, {idt['classes']:,}"),
            ("prosecutor: highest / at risk / success",
             f"{idt['prosecutor']['highest_risk']:.4g} / {idt['prosecutor']['records_at_risk']:.1%} above {th:g} / "
             f"{idt['prosecutor']['success_rate']:.1%}"),
            ("journalist: highest / at risk / success",
             f"{idt['journalist']['highest_risk']:.4g} / {idt['journalist']['records_at_risk']:.1%} above {th:g} / "
             f"{idt['journalist']['success_rate']:.1%}"),
            ("marketer: success", f"{idt['marketer']['success_rate']:.1%}")]
    pu = idt["population_uniqueness"]
    if idt.get("population_size"):
        est = ", ".join(f"{k} {pu[k]:.2%}" if pu.get(k) is not None else f"{k} did not converge"
                        for k in ("zayatz", "pitman", "snb") if k in pu)
        rows.append(("population uniques", f"{pu['dankar']:.2%} ({pu['dankar_model']}, Dankar's rule; {est}) "
                     f"of {pu['population_size']:,.0f}"))
    rows += [("note", n) for n in idt["notes"]]
    return rows


def add_parser(sub: Any) -> None:
    c = sub.add_parser("check", help="levels (k, ℓ, α, t) a raw table or a release satisfies")
    c.add_argument("input", nargs="?", help="data file / database URL, or a release (its data file or .json sidecar)")
    input_options(c)
    c.add_argument("--c", type=POSITIVE, default=2.0, help="c of recursive (c,ℓ)-diversity (default 2)")
    identity_options(c)
    output_options(c)
    c.set_defaults(func=cmd_check)
