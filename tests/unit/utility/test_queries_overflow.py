"""The query estimators place a release's QI tuples among the original table's cells; with
cardinalities whose product passes 2^62 the placement must stay exact (a float64 mixed-radix
key cannot tell apart tuples that differ in the last column once the key passes 2^53)."""

from __future__ import annotations

import numpy as np
import pytest

from openbook.errors import ParameterError
from openbook.utility.queries import _cell_index

D, CARD = 12, 50_000  # 50000^12 ~ 2.4e56: beyond int64 and beyond float64's 53-bit mantissa


def test_cell_index_is_exact_beyond_int64():
    cards = np.full(D, CARD, dtype=np.int64)
    big = np.full(D, CARD - 1, dtype=np.int64)
    cells = np.stack([big, big.copy(), big.copy()])
    cells[1, -1] -= 1  # differs from cells[0] only in the last column
    cells[2, 0] = 0
    float_keys = [float(sum(float(v) * float(CARD) ** (D - 1 - j) for j, v in enumerate(c))) for c in cells[:2]]
    assert float_keys[0] == float_keys[1]  # a float key would merge the two cells
    tuples = cells[[1, 0, 2, 1]]
    np.testing.assert_array_equal(_cell_index(cells, tuples, cards), [1, 0, 2, 1])


def test_cell_index_refuses_an_unknown_tuple_beyond_int64():
    cards = np.full(D, CARD, dtype=np.int64)
    cells = np.full((1, D), CARD - 1, dtype=np.int64)
    other = cells.copy()
    other[0, -1] -= 1
    with pytest.raises(ParameterError, match="lacks"):
        _cell_index(cells, other, cards)
