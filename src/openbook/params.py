"""Declared parameter constraints: one place per class, one message form.

Every model, anonymizer and adversary stores its keyword-only parameters unchanged and
declares what each may hold, as scikit-learn's ``_parameter_constraints`` does; one function,
:func:`validate_params`, checks them all and raises :class:`~openbook.errors.ParameterError`
with one line of the form::

    <owner>: <parameter> must be <what it may be>, got <value>

Constraints::

    Integer(minimum=1)                      an int (integral floats such as 5.0 accepted
                                            unless strict=True)
    Real(low=0, high=1, low_open=True)      a finite number in an interval
    Options("merge", "drop")                one of the strings given
    Boolean()                               True or False (numpy bools too)
    ListOf(non_empty=True, of=Integer())    a list or tuple (of elements the inner constraint allows)
    Names()                                 column names: a non-empty list, or "a,b,c"
    Text()                                  a non-empty string (a name)
    Optional(Integer(minimum=1))            None, or what the inner constraint allows

The functions ``check_int``, ``check_real`` and ``check_choice`` check one value the same way
(for functions that take a parameter directly rather than through a class).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import ParameterError


def fail(owner: str, name: str, value: Any, must: str) -> ParameterError:
    """The one message form: ``<owner>: <name> must <must>, got <value!r>``."""
    prefix = f"{owner}: " if owner else ""
    return ParameterError(f"{prefix}{name} must {must}, got {value!r}", parameter=name, value=value)


def _is_integral(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer()


class Constraint:
    """What one parameter may hold: ``check`` returns the value (normalised) or raises."""

    def describe(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def accepts(self, value: Any) -> bool:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def normalise(self, value: Any) -> Any:
        return value

    def check(self, owner: str, name: str, value: Any) -> Any:
        if not self.accepts(value):
            raise fail(owner, name, value, self.describe())
        return self.normalise(value)


@dataclass(frozen=True)
class Integer(Constraint):
    minimum: int | None = None
    maximum: int | None = None
    #: refuse integral floats such as 5.0 (for values used as they are stored, e.g. seeds)
    strict: bool = False

    def describe(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"be an integer in {self.minimum}..{self.maximum}"
        if self.minimum is not None:
            return f"be an integer >= {self.minimum}"
        if self.maximum is not None:
            return f"be an integer <= {self.maximum}"
        return "be an integer"

    def accepts(self, value: Any) -> bool:
        if not _is_integral(value) or (self.strict and not isinstance(value, numbers.Integral)):
            return False
        v = int(value)
        return (self.minimum is None or v >= self.minimum) and (self.maximum is None or v <= self.maximum)

    def normalise(self, value: Any) -> int:
        return int(value)


@dataclass(frozen=True)
class Real(Constraint):
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        if self.low is None and self.high is None:
            return "be a finite number"
        if self.high is None:
            return f"be a number {'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None:
            return f"be a number {'<' if self.high_open else '<='} {self.high:g}"
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"be in {left}{self.low:g}, {self.high:g}{right}"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        x = float(value)
        if not math.isfinite(x):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        if self.high is not None and (x >= self.high if self.high_open else x > self.high):
            return False
        return True

    def normalise(self, value: Any) -> float:
        return float(value)


class Options(Constraint):
    def __init__(self, *choices: str) -> None:
        self.choices = tuple(choices)

    def describe(self) -> str:
        return "be one of " + ", ".join(map(repr, self.choices))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.choices


class Boolean(Constraint):
    def describe(self) -> str:
        return "be true or false"

    def accepts(self, value: Any) -> bool:
        import numpy as np

        return isinstance(value, (bool, np.bool_))

    def normalise(self, value: Any) -> bool:
        return bool(value)


@dataclass(frozen=True)
class ListOf(Constraint):
    non_empty: bool = False
    #: what every element may hold (None: anything)
    of: Constraint | None = None

    def describe(self) -> str:
        what = "a non-empty list" if self.non_empty else "a list"
        if self.of is not None:
            what += " whose every element must " + self.of.describe()
        return "be " + what

    def accepts(self, value: Any) -> bool:
        import numpy as np

        if not isinstance(value, (list, tuple, np.ndarray)) or (self.non_empty and len(value) == 0):
            return False
        return self.of is None or all(self.of.accepts(v) for v in value)

    def normalise(self, value: Any) -> list:
        return [v if self.of is None else self.of.normalise(v) for v in value]


class Text(Constraint):
    """A non-empty string (a name: a sensitive value set, a column)."""

    def describe(self) -> str:
        return "be a non-empty name"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value.strip())


class Names(Constraint):
    """Column names: a non-empty list of strings, or one comma-separated string."""

    def describe(self) -> str:
        return "be a non-empty list of column names"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, str):
            return any(part.strip() for part in value.split(","))
        return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, str) for v in value)


@dataclass(frozen=True)
class Optional(Constraint):
    inner: Constraint

    def describe(self) -> str:
        return self.inner.describe() + " (or be omitted)"

    def accepts(self, value: Any) -> bool:
        return value is None or self.inner.accepts(value)

    def normalise(self, value: Any) -> Any:
        return None if value is None else self.inner.normalise(value)


def validate_params(owner: str, constraints: Mapping[str, Constraint], values: Mapping[str, Any]) -> dict[str, Any]:
    """Check every declared parameter; return the normalised values (raise on the first bad one)."""
    return {name: c.check(owner, name, values[name]) for name, c in constraints.items() if name in values}


def check_int(name: str, value: Any, *, minimum: int, model: str) -> int:
    """``value`` as a Python int ``>= minimum`` (integral floats such as ``5.0`` accepted)."""
    return Integer(minimum=minimum).check(model, name, value)


def check_real(name: str, value: Any, *, model: str, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite Python float inside the (half-)open/closed interval given."""
    return Real(low, high, low_open, high_open).check(model, name, value)


def check_choice(name: str, value: Any, choices: tuple[str, ...], *, model: str) -> str:
    """``value`` if it is one of ``choices``."""
    return Options(*choices).check(model, name, value)
