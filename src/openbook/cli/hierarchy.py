"""``openbook hierarchy``: an ARX hierarchy CSV built from a column of a data file, as ARX's
hierarchy wizard builds one — intervals or quantile bins for numbers, prefix masking for
codes, merges of neighbours for ordinal values, truncation for dates
(:mod:`openbook.hierarchy.wizard`). ``anonymize --hierarchy COLUMN=PATH`` takes the file as
it is (docs/hierarchies.md, "Building hierarchies")."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import emit, output_options, print_table

#: the options that choose how the column is generalized (exactly one is given)
METHODS = ("widths", "quantiles", "prefix", "order", "ordinal", "date")
#: methods whose leaves are numbers (read back with ``leaf_type=float`` for a numeric QI)
NUMERIC_METHODS = ("widths", "quantiles")


def _number_list(text: str) -> list[float]:
    """``--widths 5,10,20``: positive numbers, comma separated."""
    import math

    parts = [x.strip() for x in text.split(",")]
    try:
        nums = [float(x) for x in parts]
    except ValueError:
        nums = []
    if not nums or any(not math.isfinite(x) or x <= 0 for x in nums):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of positive numbers")
    return [int(x) if x.is_integer() else x for x in nums]


def _bin_list(text: str) -> list[int]:
    """``--quantiles 4,2``: whole numbers of at least 2, comma separated."""
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x.isdigit() or int(x) < 2 for x in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of whole numbers of at least 2")
    return [int(x) for x in parts]


def _value_list(text: str) -> list[str]:
    """``--order low,mid,high``: the values from lowest to highest."""
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x for x in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of values")
    return parts


def _method(args: argparse.Namespace) -> str | None:
    for m in METHODS:
        v = getattr(args, m)
        if v not in (None, False):
            return m
    return None


def _read_column(args: argparse.Namespace) -> tuple[Any, str]:
    """The column's values (a pandas Series, missing values removed) and how its input is
    named (``people.csv``, ``--dataset adult``)."""
    from ..data.loaders import read_table
    from ..errors import HierarchyError, ParameterError, SchemaError

    tokens: tuple[str, ...] = ("?",)  # the schema's default missing tokens (Adult's '?')
    if args.dataset and args.input:
        raise ParameterError("give either an input file or --dataset, not both", parameter="dataset")
    if args.dataset:
        from ..data.datasets import load_dataset

        ds = load_dataset(args.dataset, **({"path": args.data_dir} if args.data_dir else {}))
        frame, tokens, name = ds.frame, tuple(ds.schema.missing_tokens), f"--dataset {args.dataset}"
    elif args.input:
        frame, name = read_table(args.input, format=args.format, table=args.table, query=args.query), args.input
    else:
        raise ParameterError("no input: give a data file, a database URL, or --dataset", parameter="input")
    columns = [str(c) for c in frame.columns]
    if args.column not in columns:
        shown = ", ".join(columns[:20]) + (f", ... ({len(columns)} columns)" if len(columns) > 20 else "")
        raise SchemaError(f"unknown column {args.column!r} (the data has: {shown})", column=args.column)
    s = frame[args.column]
    missing = s.isna().to_numpy().copy()
    if tokens and not _numeric_dtype(s):
        missing |= s.astype("string").str.strip().isin(tokens).fillna(False).to_numpy(dtype=bool)
    s = s[~missing]
    if len(s) == 0:
        raise HierarchyError(f"column {args.column!r} has no values (every one is missing)", column=args.column)
    return s, name


def _numeric_dtype(s: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(s.dtype))


def _texts(s: Any) -> list[str]:
    """The values as the table encoder compares a categorical column with its hierarchy's
    leaves (``openbook.data.frame_encoding``): ``str``, stripped unless the column is numeric."""
    text = s.astype(str) if _numeric_dtype(s) else s.astype(str).str.strip()
    return text.tolist()


def build(args: argparse.Namespace) -> tuple[Any, str, str]:
    """``(hierarchy, method, input name)`` the options ask for (nothing written)."""
    from ..errors import ParameterError
    from ..hierarchy import wizard
    from ..hierarchy.detect import detect_kind

    method = _method(args)
    s, name = _read_column(args)
    col = args.column
    if method is None:
        d = detect_kind(s.unique().tolist())
        raise ParameterError(f"say how to generalize column {col!r}: one of --widths, --quantiles, --prefix, "
                             f"--order, --ordinal, --date (its {d.n_values:,} values look like {d.detail}: try "
                             f"{d.option})", parameter="method")
    raw = getattr(args, method)
    try:
        if method == "widths":
            h = wizard.intervals(s.unique().tolist(), raw, col)
        elif method == "quantiles":
            h = wizard.quantiles(s.tolist(), raw, col)
        elif method == "prefix":
            h = wizard.prefix(_texts(s), col)
        elif method in ("order", "ordinal"):
            h = wizard.ordered(_texts(s), raw if method == "order" else None, col)
        else:
            h = wizard.dates(_texts(s), raw, col)
    except ParameterError as exc:
        msg, param = str(exc), exc.parameter or method
        given = ",".join(map(str, raw)) if isinstance(raw, list) else str(raw)
        msg = f"--{msg}" if msg.startswith(param) else f"--{param} {given}: {msg}"
        raise ParameterError(msg, parameter=param, value=exc.value) from None
    return h, method, name


def cmd_hierarchy(args: argparse.Namespace) -> int:
    import csv
    import io
    import os
    import shlex
    from pathlib import Path

    from ..errors import ParameterError
    from ..hierarchy import arx_rows, parse_arx_text
    from ..release.io import check_plain_output, write_plain

    if not args.output:
        raise ParameterError("no output path (-o FILE.csv)", parameter="output")
    # refuse a bad output before reading anything: never over an input, never over a file without --force
    inputs = [args.input] if args.input and "://" not in str(args.input) else []
    out = check_plain_output(args.output, force=args.force, inputs=inputs, what="output")
    h, method, name = build(args)
    rows = arx_rows(h)
    buf = io.StringIO()
    csv.writer(buf, delimiter=";", lineterminator="\n").writerows(rows)
    text = buf.getvalue()
    # what is written is what anonymize --hierarchy reads back (a numeric QI reads float leaves)
    parse_arx_text(text, args.column, float if method in NUMERIC_METHODS else None, source=out)

    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o644)

    write_plain(out, write)
    example = rows[len(rows) // 2]
    use = f"--hierarchy {shlex.quote(f'{args.column}={out}')}"
    if method in NUMERIC_METHODS:
        use += f" with --qi {shlex.quote(args.column)}:numeric"
    payload = {"hierarchy": str(out), "column": args.column, "input": name, "method": method,
               "values": int(h.n_leaves), "levels": int(h.height), "example": " -> ".join(example), "use": use}
    emit(args, payload, lambda p: print_table("hierarchy written", [
        ("file", p["hierarchy"]), ("column", f"{p['column']} of {p['input']}"), ("method", p["method"]),
        ("values (leaves)", p["values"]), ("levels above the leaves", p["levels"]), ("example", p["example"]),
        ("use it", p["use"])]))
    return 0


def add_parser(sub: Any) -> None:
    h = sub.add_parser("hierarchy", help="build an ARX hierarchy CSV from a column: intervals, quantiles, prefixes, "
                       "ordinal merges, dates",
                       description="Build a generalization hierarchy for one column of a data file and write it as "
                       "an ARX CSV (leaf;level1;...;*, one row per distinct value) that anonymize --hierarchy "
                       "COLUMN=PATH reads. Missing values (empty, '?') get no row.")
    h.add_argument("input", nargs="?", help="data file or database URL (or use --dataset)")
    g = h.add_argument_group("input")
    g.add_argument("--column", required=True, help="the column to build the hierarchy of")
    g.add_argument("--dataset", help="built-in dataset instead of a file: adult, adult-train, synthetic")
    g.add_argument("--data-dir", help="folder holding adult.data/adult.test (for --dataset adult)")
    g.add_argument("--format", choices=["csv", "parquet", "sqlite", "duckdb"], help="input format (default: from "
                   "the suffix)")
    g.add_argument("--table", help="table to read from a database source")
    g.add_argument("--query", help="SQL query to read from a database source")
    m = h.add_argument_group("how to generalize (one of)").add_mutually_exclusive_group()
    m.add_argument("--widths", type=_number_list, metavar="W,W,...", help="numbers: aligned intervals of each width, "
                   "each a multiple of the one before (5,10,20: 17 -> [15-19] -> [10-19] -> [0-19] -> *)")
    m.add_argument("--quantiles", type=_bin_list, metavar="N,N,...", help="numbers: N bins of about equal row "
                   "counts, then fewer (4,2: quartiles, then halves -> *)")
    m.add_argument("--prefix", action="store_true", help="codes such as postcodes: mask one more trailing character "
                   "per level (12345 -> 1234* -> 123** -> ... -> *); digit codes are padded with leading zeros")
    m.add_argument("--order", type=_value_list, metavar="A,B,...", help="ordinal values from lowest to highest: "
                   "neighbours merged pairwise (a -> [a..b] -> [a..d] -> *); every value of the column must be listed")
    m.add_argument("--ordinal", action="store_true", help="like --order, in the values' sorted order (numbers by "
                   "value, text naturally)")
    m.add_argument("--date", nargs="?", const="day", metavar="LEVELS", help="dates (YYYY-MM-DD, YYYY-MM, YYYY, "
                   "optionally with a time): truncate, 2024-03-17 -> 2024-03 -> 2024 -> *. One of day, month, "
                   "quarter, year, decade starts the chain day -> month -> year there (default day); a list "
                   "(month,decade) gives those levels")
    h.add_argument("-o", "--output", help="the hierarchy file to write (ARX CSV)")
    h.add_argument("--force", action="store_true", help="replace an existing file at --output (never an input)")
    output_options(h)
    h.set_defaults(func=cmd_hierarchy)
