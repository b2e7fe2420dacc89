"""Shared helpers of the privacy models: parameter checks, exact ratio comparisons,
count-matrix normalisation.

Parameter checks are :mod:`openbook.params`'s: one line naming the parameter and the value,
the same form for models, anonymizers and adversaries.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import InfeasibleError, ParameterError
from ..params import check_choice, check_int, check_real  # noqa: F401  (the models' checks)

#: Float tolerance of the comparisons that cannot be made exactly (entropy, EMD).
TOL = 1e-12


class Ratio:
    """A positive real threshold ``r`` compared exactly where it is (close to) a simple
    fraction: ``le(a, b)`` tests ``a <= r * b`` on integer arrays.

    ``1/3`` typed as ``0.3333333333333333`` or ``0.2`` typed as a float become the fractions
    the user meant (denominator at most 10**6, equal up to float rounding), so
    ``count * 3 <= size`` is decided in integer arithmetic; any other value falls back to a
    float comparison with a relative tolerance of 1e-12.
    """

    def __init__(self, value: float | Fraction) -> None:
        self.value = float(value)
        frac = Fraction(value).limit_denominator(10**6)
        if abs(float(frac) - self.value) <= 4e-16 * max(1.0, abs(self.value)):
            self.num, self.den = frac.numerator, frac.denominator
            self.exact = True
        else:
            self.num, self.den = 0, 1
            self.exact = False

    def le(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise ``a <= r * b``."""
        if self.exact:
            return _int(a) * self.den <= _int(b) * self.num
        return _flt(a) <= self.value * _flt(b) * (1.0 + TOL)

    def lt(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise ``a < r * b``."""
        if self.exact:
            return _int(a) * self.den < _int(b) * self.num
        return _flt(a) < self.value * _flt(b) * (1.0 - TOL)

    def times_le(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise ``r * a <= b``."""
        if self.exact:
            return _int(a) * self.num <= _int(b) * self.den
        return self.value * _flt(a) <= _flt(b) * (1.0 + TOL)

    def floor_times(self, n: int) -> int:
        """``floor(r * n)`` for a non-negative integer ``n`` (exact when the ratio is)."""
        if self.exact:
            return (int(n) * self.num) // self.den
        return int(math.floor(self.value * n * (1.0 + TOL)))

    def floor_divide(self, n: int) -> int:
        """``floor(n / r)`` for a non-negative integer ``n`` (exact when the ratio is)."""
        if self.exact:
            return (int(n) * self.den) // self.num
        return int(math.floor(n / self.value * (1.0 + TOL)))


def _int(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _flt(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def as_counts(counts: Any, domain: Any = None) -> np.ndarray:
    """``counts`` as a 2-D int64 matrix (one row per group), checked against ``domain``."""
    arr = np.asarray(counts)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ParameterError(
            f"counts must be a 2-D matrix (groups x SA values), got shape {arr.shape}",
            parameter="counts",
        )
    if arr.dtype.kind not in "iub":
        if arr.size and not np.all(np.floor(arr) == arr):
            raise ParameterError("counts must be integers", parameter="counts")
    arr = arr.astype(np.int64, copy=False)
    if domain is not None and arr.shape[1] != domain.n_values:
        raise ParameterError(
            f"counts has {arr.shape[1]} SA columns but the SA domain has {domain.n_values} values",
            parameter="counts",
        )
    if arr.size and arr.min() < 0:
        raise ParameterError("counts must be non-negative", parameter="counts")
    return arr


def sizes_and_top(counts: Any, domain: Any, top: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Per group of ``counts`` (checked by :func:`as_counts`): its size and the count a
    frequency bound applies to — the largest SA count ``F1`` by default, else ``top(c)`` of
    the checked matrix ``c`` (a sensitive set's count, :mod:`openbook.models.alpha_k`)."""
    c = as_counts(counts, domain)
    return c.sum(axis=1), (c.max(axis=1, initial=0) if top is None else top(c))


def ratio_or(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    """``num / den`` per group as float64, ``empty`` where ``den`` is 0 (a group's level)."""
    out = np.full(len(num), empty, dtype=np.float64)
    np.divide(num.astype(np.float64), den.astype(np.float64), out=out, where=den > 0)
    return out


def check_group_size(model: Any, k: int, domain: Any, goal: str) -> int:
    """The table's row count; raises :class:`InfeasibleError` when the table is empty or has
    fewer rows than the minimum group size ``k`` (then no partition can be ``goal``)."""
    n = domain.n_rows
    if n == 0:
        raise InfeasibleError("the table is empty", model=model)
    if k > n:
        raise InfeasibleError(
            f"k={k} is larger than the table ({n} rows): no partition can be {goal}", model=model
        )
    return n


def fmt_value(value: Any) -> str:
    """An SA value for a message (numpy scalars shown as plain Python values)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
