"""Hierarchies built in the page, exactly as ``openbook hierarchy`` builds them
(:mod:`openbook.hierarchy.wizard`: intervals, quantiles, prefixes, ordinal merges, dates), and
written as the ARX CSV that command writes. The file lives in the session's own folder and
the run configuration names it (``[hierarchies] COLUMN = PATH``), so ``anonymize``'s own
reader (:func:`openbook.pipeline.load_input`) reads it back — numeric leaves for a numeric QI,
text otherwise — and the page can offer it for download to repeat a run on the command line.

The parameters are written as on the command line: ``--widths 5,10,20``, ``--quantiles 4,2``,
``--order low,mid,high``, ``--date month`` (or ``month,decade``); ``--prefix`` and
``--ordinal`` take none.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

#: the methods, as ``openbook hierarchy`` names its options
METHODS = ("widths", "quantiles", "prefix", "ordinal", "order", "date")
#: methods whose leaves are numbers (read back as floats for a numeric QI)
NUMERIC_METHODS = ("widths", "quantiles")
#: rows of the ARX table the page previews
PREVIEW_ROWS = 6


def parse_param(method: str, text: Any) -> Any:
    """The parameter of ``method`` from its text, checked as ``openbook hierarchy`` checks its
    option (one line naming the option on a bad value)."""
    from ..errors import ParameterError

    if method not in METHODS:
        raise ParameterError(f"unknown hierarchy method {method!r} (use one of {', '.join(METHODS)})",
                             parameter="method", value=method)
    text = str(text if text is not None else "").strip()
    parts = [x.strip() for x in text.split(",")]
    if method == "widths":
        try:
            nums = [float(x) for x in parts]
        except ValueError:
            nums = []
        if not nums or any(not math.isfinite(x) or x <= 0 for x in nums):
            raise ParameterError(f"--widths {text!r} is not a comma-separated list of positive numbers",
                                 parameter="widths", value=text)
        return [int(x) if x.is_integer() else x for x in nums]
    if method == "quantiles":
        if not text or any(not x.isdigit() or int(x) < 2 for x in parts):
            raise ParameterError(f"--quantiles {text!r} is not a comma-separated list of whole numbers of at least 2",
                                 parameter="quantiles", value=text)
        return [int(x) for x in parts]
    if method == "order":
        if not text or any(not x for x in parts):
            raise ParameterError(f"--order {text!r} is not a comma-separated list of values (lowest first)",
                                 parameter="order", value=text)
        return parts
    if method == "date":
        return text or "day"
    return None


def _texts(values: Any) -> list[str]:
    """The values as the table encoder compares a categorical column with its hierarchy's
    leaves (``str``, stripped unless the column is numeric) — as ``openbook hierarchy`` does."""
    import pandas as pd

    text = values.astype(str) if pd.api.types.is_numeric_dtype(values.dtype) else values.astype(str).str.strip()
    return text.tolist()


def build(values: Any, column: str, method: str, raw: Any) -> Any:
    """The hierarchy of ``column`` (``values``: its present values, a pandas Series) built by
    ``method`` with the parameter ``raw`` (:func:`parse_param`)."""
    from ..errors import HierarchyError, ParameterError
    from ..hierarchy import wizard

    if len(values) == 0:
        raise HierarchyError(f"column {column!r} has no values (every one is missing)", column=column)
    try:
        if method == "widths":
            return wizard.intervals(values.unique().tolist(), raw, column)
        if method == "quantiles":
            return wizard.quantiles(values.tolist(), raw, column)
        if method == "prefix":
            return wizard.prefix(_texts(values), column)
        if method in ("order", "ordinal"):
            return wizard.ordered(_texts(values), raw if method == "order" else None, column)
        return wizard.dates(_texts(values), raw, column)
    except ParameterError as exc:  # name the option, as the command line does
        msg, param = str(exc), exc.parameter or method
        given = ",".join(map(str, raw)) if isinstance(raw, list) else str(raw)
        msg = f"--{msg}" if msg.startswith(param) else f"--{param} {given}: {msg}"
        raise ParameterError(msg, parameter=param, value=exc.value) from None


def arx_text(h: Any) -> tuple[str, list[list[str]]]:
    """The ARX CSV of ``h`` (``leaf;level1;...;*``, one row per leaf) and its rows."""
    from ..hierarchy import arx_rows

    rows = arx_rows(h)
    buf = io.StringIO()
    csv.writer(buf, delimiter=";", lineterminator="\n").writerows(rows)
    return buf.getvalue(), rows


def file_name(column: str) -> str:
    """``COLUMN-hierarchy.csv`` with the column's name made safe for a file name (the name
    ``anonymize``'s collapse warning proposes)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", column).strip("._") or "column"
    return f"{safe}-hierarchy.csv"


def write(folder: Path, column: str, method: str, param_text: str, values: Any) -> dict[str, Any]:
    """Build, check that ``anonymize --hierarchy`` reads the file back, write it into
    ``folder`` (the session's own) and describe it for the page."""
    from ..hierarchy import parse_arx_text

    raw = parse_param(method, param_text)
    h = build(values, column, method, raw)
    text, rows = arx_text(h)
    out = folder / file_name(column)
    parse_arx_text(text, column, float if method in NUMERIC_METHODS else None, source=out)
    folder.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    option = f"--{method}" + (f" {param_text.strip()}" if method not in ("prefix", "ordinal") else "")
    if method == "date" and not param_text.strip():
        option = "--date"
    return {"mode": "built", "method": method, "param": param_text.strip(), "option": option, "path": str(out),
            "file": out.name, "values": int(h.n_leaves), "levels": int(h.height),
            "example": " → ".join(rows[len(rows) // 2]), "rows": rows[:PREVIEW_ROWS],
            "numeric": method in NUMERIC_METHODS}
