"""Hierarchies built from the values of a column, as ARX's hierarchy wizard builds them:
intervals and quantile bins for numbers, prefix masking for codes (postcodes), merges of
neighbours for ordinal values, truncation for dates.

Every builder takes the column's values (one per row, or the distinct ones; missing values
already removed) and returns a uniform-depth tree, so :func:`openbook.hierarchy.write_arx_csv`
/ :func:`openbook.hierarchy.arx_rows` can write it as an ARX CSV (``leaf;level1;...;*``) that
``openbook anonymize --hierarchy COLUMN=PATH`` reads back. Leaves are sorted so that
neighbouring codes are neighbouring values (Mondrian cuts categorical columns in code order).
``openbook hierarchy`` (:mod:`openbook.cli.hierarchy`) is the command line of this module.

==================  ===============================================================================
builder             levels
==================  ===============================================================================
:func:`intervals`   ``17`` → ``[15-19]`` → ``[10-19]`` → ``[0-19]`` → ``*`` (:func:`.interval_ladder`)
:func:`quantiles`   ``17`` → ``[17-25]`` (quartile) → ``[17-37]`` (half) → ``*``
:func:`prefix`      ``12345`` → ``1234*`` → ``123**`` → ``12***`` → ``1****`` → ``*``
:func:`ordered`     ``a`` → ``[a..b]`` → ``[a..d]`` → ``*`` (:func:`.ordinal`, pairwise merges)
:func:`dates`       ``2024-03-17`` → ``2024-03`` → ``2024`` → ``*``
==================  ===============================================================================
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy._graph import as_python, context_of, is_number
from openbook.hierarchy.builders import from_levels, interval_ladder, ordinal
from openbook.hierarchy.tree import Hierarchy

__all__ = ["intervals", "quantiles", "prefix", "ordered", "dates", "date_levels", "parse_date", "as_numbers",
           "DATE_LEVELS", "DATE_CHAIN"]

TOP = "*"
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


# ---- numbers ---------------------------------------------------------------------------------
def as_numbers(values: Iterable[Any], column: str | None = None, *, option: str = "intervals") -> list[Any]:
    """The values as Python numbers: numbers stay, text that reads as a finite number is read
    (``"17"`` → 17, ``"2.5"`` → 2.5), and floats that are all whole become ints (a column of
    integers read with a missing value is a float column). Anything else raises
    :class:`HierarchyError` naming the column, the first bad value and how many there are."""
    out: list[Any] = []
    bad: list[Any] = []
    for v in values:
        v = as_python(v)
        if is_number(v):
            x = v
        elif isinstance(v, str) and _NUMBER.match(v.strip()):
            t = v.strip()
            x = int(t) if re.fullmatch(r"[+-]?\d+", t) else float(t)
        else:
            bad.append(v)
            continue
        if isinstance(x, float) and not math.isfinite(x):
            bad.append(v)
            continue
        out.append(x)
    if bad:
        raise HierarchyError(
            f"{context_of(column)}: value {bad[0]!r} is not a number ({len(bad)} such value(s)); {option} need "
            "numbers (use --prefix, --order or --date for other values)",
            column=column, value=bad[0])
    if not out:
        raise HierarchyError(f"{context_of(column)}: no values to build a hierarchy from", column=column)
    if any(isinstance(x, float) for x in out) and all(float(x).is_integer() and abs(x) < 2**53 for x in out):
        out = [int(x) for x in out]
    return out


def _check_increasing(name: str, xs: Sequence[Any], *, decreasing: bool = False) -> None:
    for a, b in zip(xs, xs[1:]):
        if (b >= a) if decreasing else (b <= a):
            word = "decrease" if decreasing else "increase"
            raise ParameterError(f"{name} must {word}: {as_python(a)!r} then {as_python(b)!r}",
                                 parameter=name, value=tuple(xs))


def intervals(values: Iterable[Any], widths: Sequence[float], column: str | None = None) -> Hierarchy:
    """Fixed-width intervals: leaves (the sorted distinct numbers) → aligned ranges of
    ``widths[0]`` → of ``widths[1]`` → ... → ``*`` (:func:`.interval_ladder`: integer values
    give ``[20-24]``, other values ``[20.0-25.0)``). ``widths`` must increase, each a
    multiple of the one before (nested ranges)."""
    ws = [as_python(w) for w in widths]
    if not ws:
        raise ParameterError("widths: give at least one interval width", parameter="widths")
    for w in ws:
        if not is_number(w) or not math.isfinite(w) or w <= 0:
            raise ParameterError(f"widths: {w!r} is not a positive number", parameter="widths", value=tuple(ws))
    _check_increasing("widths", ws)
    nums = as_numbers(values, column, option="intervals (--widths)")
    ws = [int(w) if float(w).is_integer() else float(w) for w in ws]
    return interval_ladder(nums, widths=ws, column=column, top=TOP)


def _num_text(x: Any) -> str:
    return str(int(x)) if isinstance(x, (int, np.integer)) else repr(float(x))


def quantiles(values: Iterable[Any], bins: Sequence[int], column: str | None = None) -> Hierarchy:
    """Quantile bins: level 1 cuts the rows into ``bins[0]`` groups of (about) equal size by
    value, level 2 into ``bins[1]``, ... → ``*``. ``values`` are the column's values, one per
    row (the bins count rows). ``bins`` must decrease; a level's bins are unions of the
    previous level's (bin ``b`` of ``n`` becomes bin ``b * m // n`` of ``m``: nested, and
    exact quantiles when ``m`` divides ``n``). A value is never split across bins, so many
    equal values give fewer, larger bins. A bin is labelled ``[lo-hi]``, its least and
    greatest value."""
    ns = [as_python(n) for n in bins]
    if not ns:
        raise ParameterError("quantiles: give at least one number of bins", parameter="quantiles")
    for n in ns:
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise ParameterError(f"quantiles: {n!r} is not a whole number of bins of at least 2",
                                 parameter="quantiles", value=tuple(ns))
    _check_increasing("quantiles", ns, decreasing=True)
    nums = as_numbers(values, column, option="quantile bins (--quantiles)")
    arr = np.asarray(nums)
    uniq, counts = np.unique(arr, return_counts=True)
    below = np.cumsum(counts) - counts  # rows with a smaller value
    total = int(counts.sum())
    level_bins = [np.minimum(ns[0] - 1, (below * ns[0]) // total)]
    for prev, n in zip(ns, ns[1:]):
        level_bins.append((level_bins[-1] * n) // prev)
    leaves = uniq.tolist()
    rows: list[list[Any]] = [[v] for v in leaves]
    for b in level_bins:
        lo = {int(k): uniq[b == k].min() for k in np.unique(b)}
        hi = {int(k): uniq[b == k].max() for k in np.unique(b)}
        for i, k in enumerate(b.tolist()):
            rows[i].append(f"[{_num_text(lo[k])}-{_num_text(hi[k])}]")
    for r in rows:
        r.append(TOP)
    return from_levels(rows, column)


# ---- codes -----------------------------------------------------------------------------------
def _texts(values: Iterable[Any]) -> list[str]:
    """The distinct values as text (``str``, stripped: how the table encoder compares a
    categorical column with its hierarchy's leaves), in order of first appearance."""
    return list(dict.fromkeys(str(as_python(v)).strip() for v in values))


def prefix(values: Iterable[Any], column: str | None = None) -> Hierarchy:
    """Prefix masking of codes (postcodes, area codes): ``12345`` → ``1234*`` → ``123**`` →
    ... → ``1****`` → ``*``, one character masked per level (ARX's redaction hierarchy).

    With ``L`` the longest code, level ``j`` keeps the first ``L - j`` characters of every code
    and masks the rest with ``*`` (a code keeps its length; a code shorter than ``L - j`` is
    kept unchanged at that level). Codes made of digits only are read as numbers written with
    leading zeros to the common length (``1234`` among five-digit codes masks as ``0123*``: a
    postcode ``01234`` read as the number 1234), so a prefix is always a range of numbers.
    Leaves are the values as written (``str``), sorted by their padded text.
    """
    texts = _texts(values)
    if not texts:
        raise HierarchyError(f"{context_of(column)}: no values to build a hierarchy from", column=column)
    if any(TOP in t for t in texts):
        bad = next(t for t in texts if TOP in t)
        raise HierarchyError(f"{context_of(column)}: value {bad!r} holds {TOP!r}, the mask character",
                             column=column, value=bad)
    # a column of whole numbers read with a missing value is written 12345.0: mask 12345
    code = {t: t[:-2] if re.fullmatch(r"\d+\.0", t) else t for t in texts}
    digits = all(c.isdigit() and c.isascii() for c in code.values())
    width = max(len(c) for c in code.values())
    shown = {t: code[t].zfill(width) if digits else code[t] for t in texts}
    leaves = sorted(texts, key=lambda t: (shown[t], t))
    rows: list[list[str]] = []
    for t in leaves:
        s = shown[t]
        row = [t]
        for j in range(1, width):
            keep = width - j
            row.append(s if keep >= len(s) else s[:keep] + TOP * (len(s) - keep))
        row.append(TOP)
        rows.append(row)
    return from_levels(rows, column)


# ---- ordinal values --------------------------------------------------------------------------
def _natural_key(t: str) -> tuple[Any, ...]:
    if _NUMBER.match(t):
        return (0, float(t), t)
    return (1, [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", t)], t)


def ordered(values: Iterable[Any], order: Sequence[Any] | None = None, column: str | None = None) -> Hierarchy:
    """Merges of neighbours for an ordinal column (:func:`.ordinal`): adjacent values merged
    pairwise, level by level (``[a..b]``, ``[a..d]``) up to ``*``. ``order`` lists the values
    from lowest to highest (it may hold values the data lacks, and is the leaf order); without
    it the values are sorted (numbers by value, text naturally: ``2 < 10``, ``a2 < a10``).
    A value of the data missing from ``order``, or listed twice in it, raises naming it."""
    texts = _texts(values)
    if order is None:
        if not texts:
            raise HierarchyError(f"{context_of(column)}: no values to build a hierarchy from", column=column)
        leaves = sorted(texts, key=_natural_key)
    else:
        leaves = [str(as_python(v)).strip() for v in order]
        seen: set[str] = set()
        for v in leaves:
            if not v:
                raise ParameterError("order: an empty value", parameter="order", value=tuple(leaves))
            if v in seen:
                raise ParameterError(f"order: value {v!r} is listed twice", parameter="order", value=v)
            seen.add(v)
        missing = [t for t in texts if t not in seen]
        if missing:
            raise HierarchyError(
                f"{context_of(column)}: value {missing[0]!r} is not in the order ({len(missing)} such value(s))",
                column=column, value=missing[0])
    return ordinal(leaves, column, top=TOP)


# ---- dates -----------------------------------------------------------------------------------
#: the truncation levels, finest first: a date keeps ... of itself
DATE_LEVELS: tuple[str, ...] = ("day", "month", "quarter", "year", "decade")
#: the levels a single ``--date LEVEL`` starts a chain of (up to the year)
DATE_CHAIN: tuple[str, ...] = ("day", "month", "year")
_PRECISION = ("time", "day", "month", "year")  # what a value carries, finest first
_RANK = {"time": 0, "day": 1, "month": 2, "quarter": 3, "year": 4, "decade": 5}
_DATE = re.compile(
    r"^(?P<y>\d{4})(?:(?P<s>[-/])(?P<m>\d{1,2})(?:(?P=s)(?P<d>\d{1,2})"
    r"(?:[T ](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?)?$"
)


def parse_date(value: Any) -> tuple[_dt.date, str] | None:
    """``(date, precision)`` of a value written ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` (or with
    ``/``), optionally with a time ``HH:MM[:SS[.fff]]`` and a zone; precision is ``time``,
    ``day``, ``month`` or ``year``. ``None`` when it is not such a date (or an impossible one,
    ``2024-02-30``). ``datetime``/``date`` objects are read as such."""
    v = as_python(value)
    if isinstance(v, _dt.datetime):
        return v.date(), "time"
    if isinstance(v, _dt.date):
        return v, "day"
    m = _DATE.match(str(v).strip())
    if not m:
        return None
    try:
        y, mo, d = int(m["y"]), int(m["m"] or 1), int(m["d"] or 1)
        date = _dt.date(y, mo, d)
        if m["H"] is not None:
            _dt.time(int(m["H"]), int(m["M"]), int(m["S"] or 0))
    except ValueError:
        return None
    precision = "time" if m["H"] is not None else "day" if m["d"] else "month" if m["m"] else "year"
    return date, precision


def _date_label(d: _dt.date, level: str) -> str:
    if level == "day":
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if level == "month":
        return f"{d.year:04d}-{d.month:02d}"
    if level == "quarter":
        return f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}"
    if level == "year":
        return f"{d.year:04d}"
    lo = d.year - d.year % 10
    return f"{lo:04d}-{lo + 9:04d}"


def _date_names(levels: str | Sequence[str]) -> list[str]:
    """The level names of ``levels`` (a name, ``"month,year"`` or a list), checked: known,
    and from fine to coarse."""
    raw = [levels] if isinstance(levels, str) else list(levels)
    names = [part.strip() for item in raw for part in str(item).split(",")]
    for n in names:
        if n not in DATE_LEVELS:
            raise ParameterError(f"date: unknown level {n!r} (use {', '.join(DATE_LEVELS)})", parameter="date",
                                 value=n)
    for a, b in zip(names, names[1:]):
        if _RANK[b] <= _RANK[a]:
            raise ParameterError(f"date: levels must go from fine to coarse: {a!r} then {b!r}", parameter="date",
                                 value=",".join(names))
    return names


def date_levels(levels: str | Sequence[str], precision: str) -> list[str]:
    """The truncation levels ``levels`` asks for, above the values' ``precision``: one name
    starts the chain day → month → year there (``"month"``: month, year; ``"quarter"``:
    quarter, year; ``"decade"``: decade); several names (a list, or ``"month,year"``) are
    those levels exactly, finest first. Levels not coarser than the values are dropped
    (``day`` on dates without a time changes nothing); none left raises."""
    names = _date_names(levels)
    if len(names) == 1:
        n = names[0]
        chain = [c for c in DATE_CHAIN if _RANK[c] >= _RANK[n]] if n in DATE_CHAIN else [n]
        if n == "quarter":
            chain = ["quarter", "year"]
    else:
        chain = names
    kept = [n for n in chain if _RANK[n] > _RANK[precision]]
    if not kept:
        what = "dates" if precision == "day" else f"{precision}s" if precision != "time" else "times"
        coarser = ", ".join(n for n in DATE_LEVELS if _RANK[n] > _RANK[precision])
        raise ParameterError(f"date {','.join(names)}: the values are {what}; no level asked for is coarser "
                             f"(use {coarser})", parameter="date", value=",".join(names))
    return kept


def dates(values: Iterable[Any], levels: str | Sequence[str] = "day", column: str | None = None) -> Hierarchy:
    """Date truncation: ``2024-03-17`` → ``2024-03`` → ``2024`` → ``*`` (with the default
    ``levels="day"``: the chain day → month → year, less the levels that do not generalize the
    values; see :func:`date_levels`). Also ``quarter`` (``2024-Q1``) and ``decade``
    (``2020-2029``). Every value must be a date of one precision (all with a time, all days,
    all months or all years); a value that is not a date raises naming it. Leaves are the
    values as written, sorted by date."""
    _date_names(levels)  # a bad level is named before the values are read
    texts = _texts(values)
    if not texts:
        raise HierarchyError(f"{context_of(column)}: no values to build a hierarchy from", column=column)
    parsed: dict[str, tuple[_dt.date, str]] = {}
    for t in texts:
        p = parse_date(t)
        if p is None:
            n_bad = sum(parse_date(x) is None for x in texts)
            raise HierarchyError(
                f"{context_of(column)}: value {t!r} is not a date ({n_bad} such value(s); write dates as "
                "YYYY-MM-DD, YYYY-MM or YYYY, optionally with a time HH:MM:SS)",
                column=column, value=t)
        parsed[t] = p
    precisions = {p for _, p in parsed.values()}
    if len(precisions) > 1:
        by = {p: next(t for t, (_, q) in parsed.items() if q == p) for p in precisions}
        a, b = sorted(by, key=_PRECISION.index)[:2]
        raise HierarchyError(
            f"{context_of(column)}: the dates mix precisions: {by[a]!r} ({a}) and {by[b]!r} ({b}); "
            "give every value to the same precision", column=column, value=by[b])
    kept = date_levels(levels, precisions.pop())
    leaves = sorted(texts, key=lambda t: (parsed[t][0], t))
    rows = [[t, *(_date_label(parsed[t][0], lv) for lv in kept), TOP] for t in leaves]
    return from_levels(rows, column)
