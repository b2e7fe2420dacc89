import math

import numpy as np
import pytest

from openbook.errors import ParameterError
from openbook.models._checks import Ratio, as_counts, check_int, check_real


def test_ratio_recovers_simple_fractions():
    r = Ratio(1 / 3)
    assert r.exact and (r.num, r.den) == (1, 3)
    assert r.le(np.array([1, 2]), np.array([3, 5])).tolist() == [True, False]
    assert r.floor_times(10) == 3 and r.floor_divide(10) == 30
    assert Ratio(0.2).lt(np.array([1, 1]), np.array([5, 6])).tolist() == [False, True]
    assert Ratio(2).times_le(np.array([3, 3]), np.array([6, 5])).tolist() == [True, False]


def test_ratio_float_fallback():
    r = Ratio(math.e / 10)
    assert not r.exact
    assert r.le(np.array([27, 28]), np.array([100, 100])).tolist() == [True, False]
    assert r.floor_times(100) == 27
    assert r.floor_divide(100) == 367  # 100 / 0.2718...


def test_check_helpers():
    assert check_int("k", np.int32(4), minimum=1, model="m") == 4
    with pytest.raises(ParameterError, match=r"m: k must be an integer >= 1, got 0"):
        check_int("k", 0, minimum=1, model="m")
    assert check_real("t", 1, model="m", low=0, high=1) == 1.0
    with pytest.raises(ParameterError, match=r"m: t must be in \(0, 1\], got 0"):
        check_real("t", 0, model="m", low=0, high=1, low_open=True)


def test_as_counts():
    assert as_counts([1, 2]).shape == (1, 2)
    with pytest.raises(ParameterError, match="non-negative"):
        as_counts([[1, -1]])
    with pytest.raises(ParameterError, match="integers"):
        as_counts([[1.5, 1]])
    with pytest.raises(ParameterError, match="2-D"):
        as_counts(np.zeros((1, 1, 1)))
