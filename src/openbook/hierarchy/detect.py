"""What a column's values look like — numbers, an ordinal scale, dates, codes (postcodes) or
plain categories — and the warning for a quasi-identifier whose declaration would collapse it
to ``*`` (as ARX's import wizard detects data types and proposes a hierarchy).

A QI declared (or left) ``categorical`` with no hierarchy gets a flat one: every value → ``*``
(:func:`openbook.hierarchy.builders.auto`). A generalizing anonymizer then publishes ``*`` for
every class that holds two of its values — nearly every row when the column has many
values. :func:`collapse_warning` says so, naming the fix, when

* the values are all numbers (or all dates) and there are at least
  :data:`NUMERIC_LOOKING_VALUES` of them: declare ``--qi NAME:numeric`` (ranges), or build a
  hierarchy with ``openbook hierarchy ... --widths`` / ``--prefix`` / ``--date``;
* there are more than :data:`MANY_VALUES` of them: give one with ``--hierarchy COL=PATH``
  (``openbook hierarchy ... --prefix`` builds one for codes).

``openbook anonymize`` raises it once per such QI (:class:`CollapseWarning`, printed as one
``openbook: warning: ...`` line); a QI declared numeric or ordinal, or given a hierarchy,
never gets it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Detected", "detect_kind", "collapse_warning", "CollapseWarning", "MANY_VALUES",
           "NUMERIC_LOOKING_VALUES", "ORDINAL_MAX_VALUES", "CODE_MIN_DIGITS",
           "CODE_FULL_SHARE"]

#: a categorical QI with more distinct values than this and no hierarchy is warned about
MANY_VALUES = 50
#: a categorical QI whose values are all numbers (or dates) is warned about from this many
#: distinct values (a 0/1 flag or a 1..5 scale left categorical is fine)
NUMERIC_LOOKING_VALUES = 10
#: whole numbers forming a run ``a, a+1, ..., b`` of at most this many values look ordinal
ORDINAL_MAX_VALUES = 20
#: whole non-negative numbers written with this many digits or more (or any with a leading
#: zero) look like codes (five-digit postcodes), not quantities ...
CODE_MIN_DIGITS = 5
#: ... for at least this share of the values (``01234`` read as the number 1234 has 4)
CODE_FULL_SHARE = 0.8

#: the tokens that mean "missing" and are not values (``<missing>``: ``missing="value"``)
_MISSING = {"", "?", "nan", "NaN", "None", "<NA>", "NaT", "<missing>"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_WHOLE = re.compile(r"^[+-]?\d+(\.0*)?$")


class CollapseWarning(UserWarning):
    """A quasi-identifier whose declared kind would publish it as ``*`` in almost every row
    (a numeric-looking or many-valued column declared categorical with no hierarchy)."""


@dataclass(frozen=True)
class Detected:
    """The kind a column's distinct values look like.

    ``kind``: ``numeric``, ``ordinal`` (a short run of whole numbers), ``date``, ``code``
    (same-shape identifiers such as postcodes) or ``categorical``; ``numbers``: every value
    reads as a number; ``n_values``: distinct values; ``detail``: a few words for messages;
    ``option``: the ``openbook hierarchy`` option that suits it."""

    kind: str
    n_values: int
    numbers: bool
    detail: str
    option: str


def _shape(t: str) -> str:
    return re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", t))


def _widths_for(lo: float, hi: float, whole: bool) -> str:
    """``--widths u,2u,4u`` with about four top ranges over ``[lo, hi]`` (as ``auto`` picks)."""
    from .builders import _nice_unit

    u = _nice_unit(max(hi - lo, 1e-12), whole)
    ws = [u, 2 * u, 4 * u]
    return ",".join(str(int(w)) if float(w).is_integer() else f"{w:g}" for w in ws)


def detect_kind(values: Iterable[Any]) -> Detected:
    """The kind the distinct values of a column look like (missing tokens are skipped).

    * every value a number: ``code`` when whole, non-negative and written with
      :data:`CODE_MIN_DIGITS` or more digits (the longest length, for at least
      :data:`CODE_FULL_SHARE` of the values), or some with a leading zero;
      ``ordinal`` when a run of at most :data:`ORDINAL_MAX_VALUES` consecutive whole numbers;
      else ``numeric``;
    * every value a date (``YYYY-MM-DD``, ``YYYY-MM``, with an optional time): ``date``;
    * every value of one shape (digits → 9, letters → A: ``A9A 9A9``) holding a digit:
      ``code``;
    * else ``categorical``.
    """
    from .wizard import parse_date

    texts = [t for t in dict.fromkeys(str(v).strip() for v in values) if t not in _MISSING]
    n = len(texts)
    if n == 0:
        return Detected("categorical", 0, False, "no values", "--order")
    if all(_NUMBER.match(t) for t in texts):
        nums = [float(t) for t in texts]
        whole = all(_WHOLE.match(t) for t in texts)
        lo, hi = min(nums), max(nums)
        digits = [len(t.split(".")[0].lstrip("+")) for t in texts]
        longest = max(digits)
        zero_led = any(len(t) > 1 and t[0] == "0" and t[1].isdigit() for t in texts)
        # postcodes 01234 read as numbers lose their zeros: most values still have the full length
        full = sum(d == longest for d in digits) >= CODE_FULL_SHARE * n
        if whole and lo >= 0 and (zero_led or (longest >= CODE_MIN_DIGITS and full)):
            return Detected("code", n, True, f"codes of {longest} digits", "--prefix")
        if whole and n <= ORDINAL_MAX_VALUES and hi - lo + 1 == n:
            return Detected("ordinal", n, True, f"whole numbers {lo:g} to {hi:g}", "--ordinal")
        return Detected("numeric", n, True, f"numbers from {lo:g} to {hi:g}", f"--widths {_widths_for(lo, hi, whole)}")
    if all(parse_date(t) is not None for t in texts):
        return Detected("date", n, False, "dates", "--date")
    shapes = {_shape(t) for t in texts}
    if len(shapes) == 1 and any(c.isdigit() for c in texts[0]) and len(texts[0]) >= 2:
        return Detected("code", n, False, f"codes shaped {shapes.pop()!r}", "--prefix")
    return Detected("categorical", n, False, "categories", "--order")


def collapse_warning(column: str, values: Iterable[Any], *, data: str = "DATA") -> str | None:
    """The one-line warning for a QI declared ``categorical`` with no hierarchy whose values
    ``values`` (its distinct values) would collapse to ``*``, naming the fix; ``None`` when
    the declaration is fine (module docstring). ``data`` is how ``openbook hierarchy`` is told
    the input (a file path, or ``--dataset NAME``)."""
    d = detect_kind(values)
    out = shlex.quote(f"{column}-hierarchy.csv")
    build = f"openbook hierarchy {data} --column {shlex.quote(column)} {d.option} -o {out}"
    use = f"--hierarchy {shlex.quote(column + '=' + column + '-hierarchy.csv')}"
    head = f"QI {column!r} is declared categorical with no hierarchy"
    collapse = "a generalized class holding two of its values publishes '*'"
    if d.numbers and d.n_values >= NUMERIC_LOOKING_VALUES:
        if d.kind == "code":
            return (f"{head} but its {d.n_values:,} values are {d.detail}: {collapse}; build a prefix hierarchy "
                    f"({build}) and pass {use}, or declare --qi {column}:numeric for ranges")
        return (f"{head} but its {d.n_values:,} values are {d.detail}: {collapse}; declare --qi {column}:numeric "
                f"(published as ranges) or build a hierarchy ({build}) and pass {use}")
    if d.kind == "date" and d.n_values >= NUMERIC_LOOKING_VALUES:
        return (f"{head} but its {d.n_values:,} values are dates: {collapse}; build a date hierarchy "
                f"({build}) and pass {use}")
    if d.n_values > MANY_VALUES:
        if d.kind == "code":
            return (f"{head} and has {d.n_values:,} values ({d.detail}): {collapse}, nearly every row; build a "
                    f"prefix hierarchy ({build}) and pass {use}")
        return (f"{head} and has {d.n_values:,} values (more than {MANY_VALUES}): {collapse}, nearly every row; "
                f"give one with --hierarchy {column}=PATH (an ARX CSV; openbook hierarchy {data} --column {column} "
                f"--prefix or --order a,b,... -o PATH builds one)")
    return None
