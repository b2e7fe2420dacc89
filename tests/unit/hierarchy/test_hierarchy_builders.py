"""Builders: flat, interval ladders (paper 001 Table 12 age ranges), mappings, level rows,
ordinal merging, auto."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy import auto, flat, from_levels, from_mapping, interval_ladder, ordinal


def test_flat():
    h = flat(["Male", "Female", "Male"], "sex")
    assert list(h.leaves) == ["Male", "Female"] and h.height == 1 and h.uniform_depth
    assert h.label_of(h.root) == "*" and h.coverage[h.root] == 2
    assert flat([3, 1], "n", top="ANY").label_of(2) == "ANY"


# ---- interval ladders -------------------------------------------------------------------------
def test_age_ladder_labels_heights_intervals():
    h = interval_ladder(range(17, 91), (5, 10, 20), column="age")
    assert h.height == 4 and h.base == 74 and h.uniform_depth and h.is_tree
    assert h.leaves.dtype == np.int64
    c = h.encode([17, 23, 90])
    assert h.label_of(h.generalize(c, 1)).tolist() == ["[15-19]", "[20-24]", "[90-94]"]
    assert h.label_of(h.generalize(c, 2)).tolist() == ["[10-19]", "[20-29]", "[90-99]"]
    assert h.label_of(h.generalize(c, 3)).tolist() == ["[0-19]", "[20-39]", "[80-99]"]
    assert h.label_of(h.generalize(c, 4)).tolist() == ["*"] * 3
    n = int(h.nodes_of("[15-19]"))
    assert h.coverage[n] == 3  # only 17, 18, 19 are leaves
    assert h.intervals[n].tolist() == [15, 19]
    assert h.intervals[c[1]].tolist() == [23, 23]
    assert h.intervals[h.root].tolist() == [0, 99]
    assert h.label_of(h.lca(h.encode([21, 38]))) == "[20-39]"


def test_float_ladder_labels():
    h = interval_ladder([20.5, 24.9, 25.0, 0.3], (5.0, 10.0), column="x")
    assert h.leaves.tolist() == [0.3, 20.5, 24.9, 25.0]
    assert h.label_of(h.generalize(h.encode([20.5, 25.0]), 1)).tolist() == ["[20.0-25.0)", "[25.0-30.0)"]
    assert h.label_of(h.generalize(h.encode([20.5]), 2)).tolist() == ["[20.0-30.0)"]
    assert h.intervals[int(h.nodes_of("[20.0-25.0)"))].tolist() == [20.0, 25.0]
    # decimal widths: 0.3 belongs to [0.3-0.4) despite binary rounding
    d = interval_ladder([0.1, 0.3, 0.35, 0.7], (0.1, 0.5), column="d")
    assert d.label_of(d.generalize(d.encode([0.3, 0.35, 0.7]), 1)).tolist() == ["[0.3-0.4)"] * 2 + ["[0.7-0.8)"]
    assert d.label_of(d.generalize(d.encode([0.3, 0.7]), 2)).tolist() == ["[0.0-0.5)", "[0.5-1.0)"]


def test_negative_values_and_no_widths():
    h = interval_ladder([-7, -1, 0, 4], (5,), column="n")
    assert h.label_of(h.generalize(h.encode([-7, -1, 0]), 1)).tolist() == ["[-10--6]", "[-5--1]", "[0-4]"]
    f = interval_ladder([3, 1, 2], (), column="n")
    assert f.height == 1 and f.intervals[f.root].tolist() == [1, 3]


@pytest.mark.parametrize(
    "widths, match",
    [((5, 12), "nested multiples"), ((10, 5), "nested multiples"), ((5, 5), "nested multiples"),
     ((0, 5), "positive"), ((-5,), "positive"), ((2.5, 5), "not an integer"), (("5",), "positive")],
)  # fmt: skip
def test_ladder_width_errors(widths, match):
    with pytest.raises(ParameterError, match=match) as e:
        interval_ladder(range(10), widths, column="age")
    assert e.value.parameter == "widths"


def test_ladder_value_errors():
    with pytest.raises(HierarchyError, match="'x'") as e:
        interval_ladder([1, "x"], (5,), column="age")
    assert e.value.column == "age" and e.value.value == "x"
    with pytest.raises(HierarchyError, match="finite"):
        interval_ladder([1.0, math.nan], (5,), column="age")
    with pytest.raises(HierarchyError, match="at least one"):
        interval_ladder([], (5,), column="age")


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.integers(-500, 500), min_size=1, max_size=40),
    unit=st.integers(1, 7),
    ratios=st.lists(st.integers(2, 4), max_size=3),
)
def test_ladder_nests_and_contains(values, unit, ratios):
    widths = [unit]
    for r in ratios:
        widths.append(widths[-1] * r)
    h = interval_ladder(values, widths, column="v")
    assert h.height == len(widths) + 1 and h.uniform_depth and h.n_leaves == len(set(values))
    for level in range(1, h.height + 1):
        nodes = h.generalize(np.arange(h.n_leaves), level)
        lo, hi = h.intervals[nodes].T
        assert ((lo <= h.leaves) & (h.leaves <= hi)).all()
        if level <= len(widths):
            assert (hi - lo == widths[level - 1] - 1).all() and (lo % widths[level - 1] == 0).all()
    assert h.coverage[h.root] == h.n_leaves


# ---- mappings and level rows --------------------------------------------------------------------
def test_from_mapping_order_and_dag():
    h = from_mapping({"b": "X", "a": "X", "c": ["Y", "X"], "X": "*", "Y": "*"}, "col")
    assert list(h.leaves) == ["b", "a", "c"] and not h.is_tree
    assert list(h.label_of(h.parents_of(2))) == ["Y", "X"]
    fixed = from_mapping({"b": "X", "a": "X", "X": "*"}, "col", leaves=["a", "b"])
    assert list(fixed.leaves) == ["a", "b"]
    with pytest.raises(HierarchyError, match="'z' is in leaves") as e:
        from_mapping({"b": "X", "a": "X", "X": "*"}, "col", leaves=["a", "b", "z"])
    assert e.value.column == "col" and e.value.value == "z"
    with pytest.raises(HierarchyError, match="'b' is a leaf"):
        from_mapping({"b": "X", "a": "X", "X": "*"}, "col", leaves=["a"])


def test_from_levels_pass_through_chain():
    h = from_levels([["Private", "Private", "Employed", "*"], ["State-gov", "Government", "Employed", "*"],
                     ["Without-pay", "Unemployed", "Not-employed", "*"]], "workclass")  # fmt: skip
    assert h.height == 3 and h.uniform_depth and h.n_nodes == 3 + 3 + 2 + 1
    priv = h.encode(["Private"])
    assert h.label_of(h.generalize(priv, 1)).tolist() == ["Private"]
    assert int(h.nodes_of("Private")) == priv[0]  # the label maps to its lowest node
    assert h.lca(priv) == priv[0]


def test_from_levels_errors():
    with pytest.raises(HierarchyError, match="inconsistent depth") as e:
        from_levels([["a", "A", "*"], ["b", "*"]], "col")
    assert e.value.column == "col" and e.value.value == "b" and "'col'" in str(e.value)
    with pytest.raises(HierarchyError, match="two parents") as e:
        from_levels([["a", "A", "P", "*"], ["b", "A", "Q", "*"]], "col")
    assert e.value.value == "A" and "'col'" in str(e.value)
    with pytest.raises(HierarchyError, match="level 1 and at level 2") as e:
        from_levels([["a", "A", "B", "*"], ["b", "C", "A", "*"]], "col")
    assert e.value.value == "A"
    with pytest.raises(HierarchyError, match="different parents or members"):
        # "a" kept on level 1 but that node also holds "b": two different sets named "a"
        from_levels([["a", "a", "*"], ["b", "a", "*"]], "col")
    with pytest.raises(HierarchyError, match="2 roots"):
        from_levels([["a", "A", "*"], ["b", "B", "ANY"]], "col")
    with pytest.raises(HierarchyError, match="empty label"):
        from_levels([["a", "", "*"]], "col")
    with pytest.raises(HierarchyError, match="no generalization"):
        from_levels([["a"]], "col")


# ---- ordinal and auto ---------------------------------------------------------------------------
def test_ordinal():
    h = ordinal(["low", "mid", "high", "top", "max"], "grade")
    assert h.height == 3 and h.uniform_depth
    assert h.labels_at(1).tolist() == ["[low..mid]", "[low..mid]", "[high..top]", "[high..top]", "max"]
    assert h.labels_at(2).tolist() == ["[low..top]"] * 4 + ["max"]
    assert ordinal(["only"], "g").height == 1


@given(n=st.integers(1, 40))
def test_ordinal_height_is_log2(n):
    h = ordinal(list(range(n)), "g")
    assert h.height == max(1, math.ceil(math.log2(n))) and h.uniform_depth
    # every internal node covers a contiguous run of values
    for v in range(h.n_leaves, h.n_nodes):
        idx = np.flatnonzero(h.leaf_mask(v))
        assert (np.diff(idx) == 1).all()


def test_auto():
    age = auto(list(range(17, 91)) * 2, "numeric", "age")
    assert age.height == 4 and age.labels_at(1)[0] == "[15-19]" and age.labels_at(3)[0] == "[0-19]"
    small = auto([1, 2, 3, 4, 5, 6], "numeric", "n")  # width-1 ranges dropped
    assert small.labels_at(1).tolist() == ["[0-1]", "[2-3]", "[2-3]", "[4-5]", "[4-5]", "[6-7]"]
    assert auto([0.5, 0.5], "numeric", "f").height == 1
    cat = auto(["b", "a", "c", "a"], "categorical", "c")
    assert cat.leaves.tolist() == ["b", "a", "c"] and cat.height == 1  # code order kept
    assert auto(["lo", "hi", "lo"], "ordinal", "o").leaves.tolist() == ["lo", "hi"]
    floats = auto(np.linspace(0, 1, 11), "numeric", "f")
    assert floats.height >= 2 and floats.uniform_depth
    with pytest.raises(ParameterError, match="kind") as e:
        auto([1], "text", "c")
    assert e.value.parameter == "kind"
