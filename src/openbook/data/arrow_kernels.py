"""The few Arrow compute kernels openbook's readers use, called directly.

``import pyarrow.compute`` writes a Python wrapper, with its docstring, for each of Arrow's
~300 kernels (about 25 ms, a tenth of ``openbook check``'s start-up budget); these functions
call the kernels by name through ``pyarrow``'s function registry instead. They take and give
Arrow arrays only: no Python value is made an Arrow scalar here, because pyarrow imports pandas
to inspect one (``pa.scalar("?")`` costs the ~0.3 s of a pandas import).
"""

from __future__ import annotations

from typing import Any


def _call(name: str, args: list[Any], options: Any = None) -> Any:
    from pyarrow import _compute

    return _compute.call_function(name, args, options)


def _options(cls: str, *args: Any) -> Any:
    from pyarrow import _compute

    return getattr(_compute, cls)(*args)


def dictionary_encode(arr: Any) -> Any:
    """Indices into the distinct values, in order of first appearance; a null is a value."""
    return _call("dictionary_encode", [arr], _options("DictionaryEncodeOptions", "encode"))


def trim_whitespace(arr: Any) -> Any:
    """Unicode whitespace trimmed at both ends (what pandas' ``str.strip()`` does on text)."""
    return _call("utf8_trim_whitespace", [arr])


def ltrim(arr: Any, characters: str) -> Any:
    return _call("utf8_ltrim", [arr], _options("TrimOptions", characters))


def rtrim(arr: Any, characters: str) -> Any:
    return _call("utf8_rtrim", [arr], _options("TrimOptions", characters))


def matches(arr: Any, regex: str) -> Any:
    """Does each value contain a match of the RE2 ``regex``?"""
    return _call("match_substring_regex", [arr], _options("MatchSubstringOptions", regex))


def starts_with(arr: Any, prefix: str) -> Any:
    return _call("starts_with", [arr], _options("MatchSubstringOptions", prefix))


def equal(a: Any, b: Any) -> Any:
    return _call("equal", [a, b])


def or_(a: Any, b: Any) -> Any:
    return _call("or", [a, b])


def invert(a: Any) -> Any:
    return _call("invert", [a])


def all_true(a: Any) -> bool:
    """Every value true (an empty array: True)."""
    return bool(_call("all", [a]).as_py() is not False)


def any_true(a: Any) -> bool:
    return bool(_call("any", [a]).as_py())


def cast(arr: Any, target: Any) -> Any:
    """A safe cast (a value the type cannot hold raises ``ArrowInvalid``)."""
    from pyarrow import _compute

    return _call("cast", [arr], _compute.CastOptions.safe(target))


def filter_rows(table: Any, mask: Any) -> Any:
    """The rows of a table (or an array) where ``mask`` is true."""
    return _call("filter", [table, mask])
