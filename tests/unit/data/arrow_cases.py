"""Random CSV and Parquet tables, and the comparison of two encodings of one table — shared by
test_arrow_encoding.py and test_frequency.py (the Arrow path against the pandas reference)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from openbook.data.arrow import FileSource
from openbook.data.frame_encoding import encode_frame
from openbook.data.loaders import read_source, read_table
from openbook.data.schema import Column, Schema
from openbook.data.table import code_dtype
from openbook.errors import OpenbookError

INTS = ["0", "1", "2", "7", "10", "99", "007", "-3", "-0", "12345678901"]
FLOATS = ["1.5", ".5", "2.", "1e3", "-0.0", "3.25", "0.1", "1E-2", "123456789.125"]
ODD_NUMBERS = ["inf", "-inf", "nan", "NaN", "+4", "1_0", "5 ", "0x10", "99999999999999999999", "1.0000000000000000001"]
TEXT = ["a", "b", "A b", "é", "x y ", "\tz", "?", " ?", "<missing>", "NA", "1,5", 'say "hi"', "\xa0w", "b ", "Z"]
POOLS = {"int": INTS, "float": INTS + FLOATS, "odd": INTS + FLOATS + ODD_NUMBERS, "text": TEXT,
         "mixed": INTS[:4] + TEXT[:6]}
NAMES = ["c0", "c1", "c2", "c3"]


@st.composite
def csv_tables(draw: Any) -> dict[str, Any]:
    """A small table of text cells (some empty), how to write it, and a schema over it."""
    n_cols = draw(st.integers(2, 4))
    names = NAMES[:n_cols]
    pools = [POOLS[draw(st.sampled_from(sorted(POOLS)))] for _ in names]
    n_rows = draw(st.integers(0, 25))
    empty = draw(st.sampled_from([0.0, 0.0, 0.15]))
    rows = []
    for _ in range(n_rows):
        rows.append([("" if draw(st.floats(0, 1)) < empty else draw(st.sampled_from(p))) for p in pools])
    return {"names": names, "rows": rows, "schema": draw(schemas(names)),
            "spaces": draw(st.booleans()), "quirk": draw(st.sampled_from([None] * 6 + QUIRKS)),
            "batch_rows": draw(st.sampled_from([1, 2, 3, 7, 1 << 20]))}


QUIRKS = ["short_row", "long_row", "blank_line", "space_line", "dup_header", "empty_name", "bom", "empty_file",
          "header_only", "quote_after_space", "trailing_blank"]


@st.composite
def schemas(draw: Any, names: list[str]) -> Schema:
    sa = draw(st.sampled_from(names))
    others = [n for n in names if n != sa]
    qi = draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True))
    kinds = [draw(st.sampled_from(["categorical", "categorical", "numeric", "ordinal"])) for _ in qi]
    sa_kind = draw(st.sampled_from(["categorical", "categorical", "numeric"]))
    rest = [n for n in others if n not in qi]
    keep = draw(st.lists(st.sampled_from(rest), max_size=len(rest), unique=True)) if rest else []
    return Schema.build(qi=[Column(q, k) for q, k in zip(qi, kinds)], sa=Column(sa, sa_kind), keep=keep,
                        missing=draw(st.sampled_from(["error", "drop", "value"])))


def write_csv(path: Path, case: dict[str, Any]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = list(case["names"])
    quirk = case["quirk"]
    if quirk == "dup_header":
        names[1] = names[0]
    if quirk == "empty_name":
        names[-1] = ""
    w.writerow(names)
    for row in case["rows"]:
        w.writerow(row)
    text = buf.getvalue()
    if case["spaces"]:  # Adult's ", " between fields (quoted fields then follow a space)
        text = text.replace(",", ", ")
    lines = text.split("\n")
    if quirk == "short_row" and len(lines) > 2:
        lines.insert(2, "1")
    elif quirk == "long_row" and len(lines) > 2:
        lines.insert(2, ",".join(["1"] * (len(names) + 1)))
    elif quirk == "blank_line" and len(lines) > 2:
        lines.insert(2, "")
    elif quirk == "space_line" and len(lines) > 2:
        lines.insert(2, "   ")
    elif quirk == "quote_after_space" and len(lines) > 2:
        lines.insert(2, ", ".join(['"x,y"'] * len(names)))
    elif quirk == "trailing_blank":
        lines.append("")
    text = "\n".join(lines)
    if quirk == "header_only":
        text = text.split("\n")[0] + "\n"
    data = text.encode("utf-8")
    if quirk == "bom":
        data = b"\xef\xbb\xbf" + data
    if quirk == "empty_file":
        data = b""
    path.write_bytes(data)


def plain(case: dict[str, Any]) -> dict[str, Any]:
    """The case without what only pandas reads: no quirk, and no space before a field in a file
    with quotes (where Arrow cannot tell a skipped space from a quoted one)."""
    case = {**case, "quirk": None}
    if any('"' in v or "," in v for r in case["rows"] for v in r):
        case = {**case, "spaces": False, "rows": [[v.lstrip(" ") for v in r] for r in case["rows"]]}
    return case


def outcome(fn: Callable[[], Any]) -> tuple[Any, ...]:
    """``("ok", value)`` or ``("error", type, message)`` of an openbook error."""
    try:
        return ("ok", fn())
    except OpenbookError as exc:
        return ("error", type(exc).__name__, str(exc))


def reference(path: Path, schema: Schema) -> tuple[Any, ...]:
    """The pandas path: read_table, then encode_frame (what openbook did before Arrow)."""
    return outcome(lambda: encode_frame(read_table(path), schema, source=str(path)))


def arrow_source(path: Path, min_block: int = 1) -> Any:
    src = read_source(path)
    if isinstance(src, FileSource):
        src.min_block_bytes = min_block  # small blocks: a small file in many batches
    return src


def same_values(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert [repr(x) for x in a.tolist()] == [repr(x) for x in b.tolist()], (a, b)


def assert_same_table(got: tuple[Any, ...], want: tuple[Any, ...]) -> None:
    """Two outcomes of encoding: the same error, or tables equal in every part."""
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1:] == want[1:]
        return
    a, b = got[1], want[1]
    assert a.schema == b.schema and a.source == b.source and a.dropped_columns == b.dropped_columns
    assert list(a.columns) == list(b.columns) and set(a.hierarchies) == set(b.hierarchies)
    for name in a.columns:
        ca, cb = a.columns[name], b.columns[name]
        assert (ca.name, ca.kind) == (cb.name, cb.kind)
        assert ca.codes.dtype == cb.codes.dtype == code_dtype(ca.n_values)  # the domain's type, both paths
        np.testing.assert_array_equal(ca.codes, cb.codes)
        same_values(ca.categories, cb.categories)
        assert (ca.numeric is None) == (cb.numeric is None)
        if ca.numeric is not None:
            same_values(ca.numeric, cb.numeric)
    assert (a.kept is None) == (b.kept is None)
    if a.kept is not None:
        pd.testing.assert_frame_equal(a.kept, b.kept)


def assert_same_frequency(a: Any, b: Any) -> None:
    assert a.schema == b.schema and a.source == b.source and a.dropped_columns == b.dropped_columns
    np.testing.assert_array_equal(a.qi_codes, b.qi_codes)
    assert a.qi_codes.dtype == b.qi_codes.dtype == np.int32
    np.testing.assert_array_equal(a.sa_counts, b.sa_counts)
    assert a.sa_counts.dtype == b.sa_counts.dtype == np.int64
    for name in a.columns:
        same_values(a.columns[name].categories, b.columns[name].categories)
        assert (a.columns[name].numeric is None) == (b.columns[name].numeric is None)


@st.composite
def typed_tables(draw: Any) -> tuple[Any, Schema]:
    """An Arrow table of the types Parquet keeps (integers with and without missing values,
    floats with NaN and -0.0, unsigned beyond int64, text with nulls and empty text) and a schema."""
    import pyarrow as pa

    n = draw(st.integers(1, 30))
    cols: dict[str, Any] = {}
    for name in NAMES:
        kind = draw(st.sampled_from(["int", "int_null", "int32", "float", "text", "text_null", "big_uint"]))
        if kind in ("int", "int32"):
            vals = draw(st.lists(st.integers(-3, 5), min_size=n, max_size=n))
            cols[name] = pa.array(vals, type=pa.int64() if kind == "int" else pa.int32())
        elif kind == "int_null":
            cols[name] = pa.array(draw(st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=n, max_size=n)),
                                  type=pa.int64())
        elif kind == "float":
            pool = [0.5, 1.0, -0.0, 0.0, 2.25, float("nan"), 1e20, None]
            cols[name] = pa.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), type=pa.float64())
        elif kind == "big_uint":
            cols[name] = pa.array(draw(st.lists(st.sampled_from([1, 2, 2**63 + 5]), min_size=n, max_size=n)),
                                  type=pa.uint64())
        else:
            pool = TEXT + (["", None] if kind == "text_null" else [])
            cols[name] = pa.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), type=pa.string())
    return pa.table(cols), draw(schemas(NAMES))
