"""The hierarchy wizard (``openbook.hierarchy.wizard``): intervals, quantile bins, prefix
masking, ordinal merges and date truncation — each level checked by hand, every result a
uniform-depth tree that survives an ARX CSV round trip — and kind detection
(``openbook.hierarchy.detect``) with the warning thresholds."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy import arx_rows, parse_arx_text, wizard as w
from openbook.hierarchy.detect import (
    CODE_MIN_DIGITS,
    MANY_VALUES,
    NUMERIC_LOOKING_VALUES,
    collapse_warning,
    detect_kind,
)


def rows_of(h) -> dict[str, list[str]]:
    return {r[0]: r[1:] for r in arx_rows(h)}


def round_trip(h, leaf_type=None):
    """Written as ARX text and read back: the same rows."""
    text = "".join(";".join(r) + "\n" for r in arx_rows(h))
    back = parse_arx_text(text, h.column, leaf_type)
    assert [r[1:] for r in arx_rows(back)] == [r[1:] for r in arx_rows(h)]
    if leaf_type is None:
        assert list(back.leaves) == [str(v) for v in h.leaves]
    else:  # a numeric QI reads its leaves as numbers: the same values
        assert list(back.leaves) == [leaf_type(v) for v in h.leaves]
    return back


# ---- intervals and quantiles -------------------------------------------------------------------
def test_intervals_nest_and_read_text_numbers():
    h = w.intervals(["17", 23, 34.0, 90, 23], [5, 10, 20], "age")
    assert list(h.leaves) == [17, 23, 34, 90]  # text read as numbers, whole floats as ints
    assert rows_of(h)["17"] == ["[15-19]", "[10-19]", "[0-19]", "*"]
    assert rows_of(h)["34"] == ["[30-34]", "[30-39]", "[20-39]", "*"]
    back = round_trip(h, float)
    assert list(back.leaves) == [17.0, 23.0, 34.0, 90.0]


def test_intervals_of_fractions_are_half_open():
    h = w.intervals([0.25, 0.3, 1.7], [0.5, 1], "x")
    assert rows_of(h)["0.3"] == ["[0.0-0.5)", "[0.0-1.0)", "*"]
    assert rows_of(h)["1.7"] == ["[1.5-2.0)", "[1.0-2.0)", "*"]


@pytest.mark.parametrize("widths, needle", [([10, 5], "must increase"), ([5, 5], "must increase"),
                                            ([5, 12], "multiple"), ([0, 5], "positive"), ([], "at least one")])
def test_intervals_refuse_bad_widths(widths, needle):
    with pytest.raises(ParameterError, match=needle) as exc:
        w.intervals([1, 2, 3], widths, "age")
    assert exc.value.parameter == "widths"


def test_intervals_name_the_first_value_that_is_not_a_number():
    with pytest.raises(HierarchyError, match=r"column 'age': value 'old' is not a number \(2 such") as exc:
        w.intervals([20, "old", 30, "young"], [5], "age")
    assert exc.value.value == "old" and exc.value.column == "age"


def test_quantiles_cut_rows_into_equal_bins_then_merge_them():
    # 16 rows: quartiles by rows (4 each, except 30 which is never split), then halves
    vals = [17, 18, 18, 19, 20, 25, 30, 30, 30, 31, 40, 41, 50, 60, 61, 62]
    h = w.quantiles(vals, [4, 2], "age")
    r = rows_of(h)
    assert r["17"] == r["19"] == ["[17-19]", "[17-30]", "*"]
    assert r["20"] == r["30"] == ["[20-30]", "[17-30]", "*"]
    assert r["31"] == r["41"] == ["[31-41]", "[31-62]", "*"]
    assert r["50"] == r["62"] == ["[50-62]", "[31-62]", "*"]
    round_trip(h, float)


def test_quantile_bins_hold_about_equal_row_counts():
    rng = np.random.default_rng(0)
    vals = rng.integers(0, 1000, 5000)
    h = w.quantiles(vals.tolist(), [8, 4, 2], "v")
    codes = h.encode(vals)
    for level, n_bins in ((1, 8), (2, 4), (3, 2)):
        _, sizes = np.unique(h.ancestor_table[level][codes], return_counts=True)
        assert sizes.size == n_bins
        assert sizes.min() >= 0.8 * len(vals) / n_bins and sizes.max() <= 1.2 * len(vals) / n_bins


def test_quantiles_refuse_bin_counts_that_do_not_decrease():
    with pytest.raises(ParameterError, match="must decrease: 2 then 4"):
        w.quantiles([1, 2, 3], [2, 4])
    with pytest.raises(ParameterError, match="at least 2"):
        w.quantiles([1, 2, 3], [1])


# ---- prefixes ------------------------------------------------------------------------------------
def test_prefix_masks_one_character_per_level_and_pads_numbers():
    h = w.prefix([12345, 12399, 1234, "00017", 12345], "zip")
    r = rows_of(h)
    assert r["12345"] == ["1234*", "123**", "12***", "1****", "*"]
    assert r["1234"] == ["0123*", "012**", "01***", "0****", "*"]  # 01234 read as a number
    assert r["00017"] == ["0001*", "000**", "00***", "0****", "*"]
    assert list(h.leaves) == ["00017", "1234", "12345", "12399"]  # neighbours share prefixes
    assert h.uniform_depth and h.height == 5
    round_trip(h)


def test_prefix_of_whole_floats_masks_the_digits():
    h = w.prefix(["12345.0", "12399.0"], "zip")  # an integer column read with a missing value
    assert rows_of(h)["12345.0"] == ["1234*", "123**", "12***", "1****", "*"]


def test_prefix_of_text_codes_of_several_lengths():
    h = w.prefix(["SW1A", "SW1B", "N1"], "pc")
    r = rows_of(h)
    assert r["SW1A"] == ["SW1*", "SW**", "S***", "*"]
    assert r["N1"] == ["N1", "N1", "N*", "*"]  # kept unchanged while shorter than the prefix
    round_trip(h)
    assert h.label_of(h.lca(h.encode(["SW1A", "SW1B"]))) == "SW1*"


def test_prefix_refuses_the_mask_character():
    with pytest.raises(HierarchyError, match="mask character"):
        w.prefix(["12*", "123"], "zip")


# ---- ordinal -------------------------------------------------------------------------------------
def test_ordered_merges_neighbours_of_the_given_order():
    h = w.ordered(["high", "low"], ["low", "mid", "high"], "risk")
    assert list(h.leaves) == ["low", "mid", "high"]  # the order, values the data lacks included
    assert rows_of(h)["mid"] == ["[low..mid]", "*"]
    round_trip(h)


def test_ordered_without_order_sorts_naturally():
    h = w.ordered(["10", "2", "1", "3"], None, "n")
    assert list(h.leaves) == ["1", "2", "3", "10"]
    assert rows_of(h)["3"] == ["[3..10]", "*"]


def test_ordered_names_a_value_missing_from_the_order_and_a_duplicate():
    with pytest.raises(HierarchyError, match="value 'z' is not in the order"):
        w.ordered(["a", "z"], ["a", "b"], "x")
    with pytest.raises(ParameterError, match="'a' is listed twice"):
        w.ordered(["a"], ["a", "b", "a"], "x")


# ---- dates ---------------------------------------------------------------------------------------
def test_dates_truncate_day_month_year():
    h = w.dates(["2024-03-17", "2024-03-18", "2023-12-01"], "day", "d")
    assert rows_of(h)["2024-03-17"] == ["2024-03", "2024", "*"]
    assert list(h.leaves) == ["2023-12-01", "2024-03-17", "2024-03-18"]
    round_trip(h)


def test_dates_with_a_time_keep_the_day_level():
    h = w.dates(["2024-03-17 10:00", "2024-03-17T11:30:05"], "day", "d")
    assert rows_of(h)["2024-03-17 10:00"] == ["2024-03-17", "2024-03", "2024", "*"]


@pytest.mark.parametrize("levels, expect", [
    ("month", ["2024-03", "2024"]), ("year", ["2024"]), ("quarter", ["2024-Q1", "2024"]),
    ("month,decade", ["2024-03", "2020-2029"]), (["quarter", "year", "decade"], ["2024-Q1", "2024", "2020-2029"]),
])
def test_date_levels(levels, expect):
    assert rows_of(w.dates(["2024-03-17", "2019-11-02"], levels, "d"))["2024-03-17"] == [*expect, "*"]


@pytest.mark.parametrize("values, levels, error, needle", [
    (["2024-13-01"], "day", HierarchyError, "'2024-13-01' is not a date"),
    (["2024-02-30"], "day", HierarchyError, "is not a date"),
    (["17/03/2024"], "day", HierarchyError, "is not a date"),
    (["2024-03", "2024-03-01"], "day", HierarchyError, "mix precisions"),
    (["2024-03-01"], "week", ParameterError, "unknown level 'week'"),
    (["2024-03-01"], "year,month", ParameterError, "fine to coarse"),
    (["2024", "2023"], "month", ParameterError, "the values are years"),
])
def test_dates_refuse(values, levels, error, needle):
    with pytest.raises(error, match=needle):
        w.dates(values, levels, "d")


def test_parse_date():
    assert w.parse_date("2024-03-17") == (dt.date(2024, 3, 17), "day")
    assert w.parse_date("2024/3/7 8:05") == (dt.date(2024, 3, 7), "time")
    assert w.parse_date("2024-03") == (dt.date(2024, 3, 1), "month")
    assert w.parse_date(dt.datetime(2024, 3, 17, 9)) == (dt.date(2024, 3, 17), "time")
    assert w.parse_date("2024-03-17 25:00") is None and w.parse_date("March") is None


# ---- detection -----------------------------------------------------------------------------------
@pytest.mark.parametrize("values, kind", [
    (range(17, 91), "numeric"),
    ([0.5, 1.25, 3.0], "numeric"),
    (range(1, 6), "ordinal"),
    ([str(z) for z in range(10000, 99999, 71)], "code"),
    ([z for z in range(1000, 99999, 71)], "code"),  # 5-digit postcodes, those with a leading 0 read as numbers
    (["0123", "0456", "0789"], "code"),
    (range(1990, 2021), "numeric"),  # four digits: a quantity
    (["2024-01-%02d" % d for d in range(1, 29)], "date"),
    (["K1A 0B1", "M5V 3L9", "H2X 1Y4"], "code"),
    (["Private", "State-gov", "?"], "categorical"),
])
def test_detect_kind(values, kind):
    assert detect_kind(values).kind == kind


def test_collapse_warning_thresholds():
    ages = range(17, 17 + 3 * NUMERIC_LOOKING_VALUES, 3)
    msg = collapse_warning("age", list(ages), data="people.csv")
    assert "--qi age:numeric" in msg and "openbook hierarchy people.csv --column age --widths" in msg
    assert collapse_warning("age", list(ages)[:-1]) is None  # a short scale is fine categorical
    scale = collapse_warning("grade", list(range(1, 1 + NUMERIC_LOOKING_VALUES)))  # a run of whole numbers
    assert "--qi grade:numeric" in scale and "--column grade --ordinal" in scale
    assert collapse_warning("city", [f"city {i}" for i in range(MANY_VALUES)]) is None
    many = collapse_warning("city", [f"city {i}" for i in range(MANY_VALUES + 1)])
    assert f"has {MANY_VALUES + 1} values" in many and "--hierarchy city=PATH" in many
    zips = collapse_warning("zip", [str(10 ** (CODE_MIN_DIGITS - 1) + 7 * i) for i in range(60)], data="p.csv")
    assert "openbook hierarchy p.csv --column zip --prefix -o zip-hierarchy.csv" in zips
    assert "--hierarchy zip=zip-hierarchy.csv" in zips
    assert "--date" in collapse_warning("d", ["2024-01-%02d" % d for d in range(1, 12)])
    assert "\n" not in msg + many + zips
