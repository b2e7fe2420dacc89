"""Tests of the deterministic synthetic census generator (openbook.data.synthetic)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency

from openbook.data.synthetic import (
    BLOCK_ROWS,
    iter_synthetic_census,
    iter_synthetic_codes,
    synthetic_census,
    synthetic_codes,
    synthetic_domains,
    synthetic_marginals,
    synthetic_schema,
)
from openbook.errors import ParameterError


def assert_same_frame(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Exact equality of two frames (faster than assert_frame_equal on categoricals)."""
    assert list(a.columns) == list(b.columns)
    assert a.index.equals(b.index)
    for name in a.columns:
        x, y = a[name], b[name]
        assert x.dtype == y.dtype, name
        if isinstance(x.dtype, pd.CategoricalDtype):
            np.testing.assert_array_equal(x.cat.codes.to_numpy(), y.cat.codes.to_numpy())
        else:
            np.testing.assert_array_equal(x.to_numpy(), y.to_numpy())


def test_same_parameters_same_table():
    a = synthetic_census(3_000, seed=11, correlation=0.5)
    b = synthetic_census(3_000, seed=11, correlation=0.5)
    assert_same_frame(a, b)
    c = synthetic_census(3_000, seed=12, correlation=0.5)
    assert not a.equals(c)


def test_codes_decode_to_the_frame():
    df = synthetic_census(2_000, seed=3, n_qi=11)
    qi, sa, sizes = synthetic_codes(2_000, seed=3, n_qi=11)
    domains = synthetic_domains(n_qi=11)
    assert qi.dtype == np.int32 and sa.dtype == np.int32 and qi.shape == (2_000, 11)
    assert sizes == [len(domains[name]) for name in list(domains)[:-1]]
    for j, name in enumerate(list(domains)[:-1]):
        assert list(np.asarray(domains[name], dtype=object)[qi[:, j]]) == list(df[name])
    assert list(np.asarray(domains["occupation"])[sa]) == list(df["occupation"])


@pytest.mark.parametrize("chunk_rows", [1, 333, 4_096, 1_000_000])
def test_frame_chunks_concatenate_to_the_table(chunk_rows):
    n = 200 if chunk_rows == 1 else 10_007
    whole = synthetic_census(n, seed=4)
    chunks = list(iter_synthetic_census(n, seed=4, chunk_rows=chunk_rows))
    assert all(len(c) == chunk_rows for c in chunks[:-1])
    assert_same_frame(pd.concat(chunks), whole)


def test_code_chunks_across_a_block_boundary():
    n = BLOCK_ROWS + 1_234
    qi, sa, _ = synthetic_codes(n, seed=9, n_qi=3, correlation=0.7)
    for chunk_rows in (300_007, BLOCK_ROWS + 1):
        parts = list(iter_synthetic_codes(n, seed=9, n_qi=3, correlation=0.7, chunk_rows=chunk_rows))
        np.testing.assert_array_equal(np.concatenate([q for q, _ in parts]), qi)
        np.testing.assert_array_equal(np.concatenate([s for _, s in parts]), sa)


def test_smaller_table_is_a_prefix():
    big_qi, big_sa, _ = synthetic_codes(BLOCK_ROWS + 10, seed=2, n_qi=2)
    qi, sa, _ = synthetic_codes(1_000, seed=2, n_qi=2)
    np.testing.assert_array_equal(big_qi[:1_000], qi)
    np.testing.assert_array_equal(big_sa[:1_000], sa)


def test_schema_and_columns():
    schema = synthetic_schema()
    assert schema == {
        "age": "numeric", "workclass": "categorical", "education": "ordinal",
        "marital_status": "categorical", "race": "categorical", "sex": "categorical",
        "native_country": "categorical", "sa": "occupation",
    }
    wide = synthetic_schema(14)
    assert list(wide)[7:9] == ["hours_per_week", "zip"]
    assert [k for k in wide if k.startswith("qi_")] == [f"qi_{j}" for j in range(10, 15)]
    domains = synthetic_domains(n_qi=14, sa_values=20)
    sizes = {k: len(v) for k, v in domains.items()}
    assert sizes["age"] == 74 and sizes["workclass"] == 8 and sizes["education"] == 16
    assert sizes["marital_status"] == 7 and sizes["race"] == 5 and sizes["sex"] == 2
    assert sizes["native_country"] == 41 and sizes["hours_per_week"] == 99
    assert all(10 <= sizes[f"qi_{j}"] <= 100 for j in range(10, 15))
    assert sizes["occupation"] == 20 and len(set(domains["occupation"])) == 20
    assert domains["zip"] == sorted(domains["zip"])

    df = synthetic_census(5_000, seed=1, n_qi=14, sa_values=20)
    assert list(df.columns) == [k for k in wide if k != "sa"] + ["occupation"]
    assert df["age"].between(17, 90).all() and df["hours_per_week"].between(1, 99).all()
    assert isinstance(df["workclass"].dtype, pd.CategoricalDtype)
    assert df["education"].cat.ordered and not df["workclass"].cat.ordered
    assert list(df["education"].cat.categories[:2]) == ["Preschool", "1st-4th"]
    assert (df["hours_per_week"] == 40).mean() > 0.4  # census-like spike
    assert (df["native_country"] == "United-States").mean() > 0.85  # heavy head


def test_empty_table():
    df = synthetic_census(0)
    assert len(df) == 0 and list(df.columns)[-1] == "occupation"
    chunks = list(iter_synthetic_census(0))
    assert len(chunks) == 1
    assert_same_frame(chunks[0], df)
    qi, sa, _ = synthetic_codes(0)
    assert qi.shape == (0, 7) and sa.shape == (0,)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.0])
def test_zipf_marginal_of_the_top_value(alpha):
    n, v = 200_000, 14
    _, sa, _ = synthetic_codes(n, seed=5, sa_values=v, zipf_alpha=alpha, correlation=0.0)
    weights = np.arange(1, v + 1, dtype=float) ** -alpha
    p1 = weights[0] / weights.sum()
    freq = np.mean(sa == 0)
    assert abs(freq - p1) < 4 * math.sqrt(p1 * (1 - p1) / n)


def test_mixture_marginal_matches_synthetic_marginals():
    n = 200_000
    _, sa, _ = synthetic_codes(n, seed=6, correlation=0.4, zipf_alpha=0.5)
    p = synthetic_marginals(seed=6, correlation=0.4, zipf_alpha=0.5)["occupation"]
    assert p.sum() == pytest.approx(1.0)
    freq = np.bincount(sa, minlength=14) / n
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / n))


def _chi2_with_common_cells(cell, sa, n_values, min_expected=5.0):
    """Chi-square test of independence on the cells whose expected counts are all >= 5."""
    table = np.zeros((cell.max() + 1, n_values))
    np.add.at(table, (cell, sa), 1)
    table = table[table.sum(axis=1) > 0]
    col = table.sum(axis=0) / table.sum()
    table = table[table.sum(axis=1) * col.min() >= min_expected]
    stat, p, dof, _ = chi2_contingency(table)
    cramers_v = math.sqrt(stat / (table.sum() * (min(table.shape) - 1)))
    return p, cramers_v


def test_correlation_zero_is_independent_of_the_qis():
    n, v = 200_000, 6
    qi, sa, sizes = synthetic_codes(n, seed=8, n_qi=4, sa_values=v, correlation=0.0)
    for j in range(4):
        p, _ = _chi2_with_common_cells(qi[:, j], sa, v)
        assert p > 0.001, f"QI {j}"
    cell = qi[:, 0].astype(np.int64) * sizes[1] + qi[:, 1]
    p, _ = _chi2_with_common_cells(cell, sa, v)
    assert p > 0.001


def test_correlation_one_is_strongly_dependent():
    n, v = 200_000, 6
    qi, sa, sizes = synthetic_codes(n, seed=8, n_qi=2, sa_values=v, correlation=1.0,
                                    zipf_alpha=0.0)
    cell = qi[:, 0].astype(np.int64) * sizes[1] + qi[:, 1]
    p, cramers_v = _chi2_with_common_cells(cell, sa, v)
    assert p < 1e-12 and cramers_v > 0.3
    # the SA marginal over the whole table still covers every value
    assert set(np.unique(sa)) == set(range(v))


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"n_rows": -1}, "n_rows"),
        ({"n_rows": 10.5}, "n_rows"),
        ({"n_rows": True}, "n_rows"),
        ({"zipf_alpha": -0.1}, "zipf_alpha"),
        ({"zipf_alpha": float("inf")}, "zipf_alpha"),
        ({"correlation": 1.5}, "correlation"),
        ({"correlation": -0.01}, "correlation"),
        ({"correlation": float("nan")}, "correlation"),
        ({"n_qi": 0}, "n_qi"),
        ({"sa_values": 0}, "sa_values"),
        ({"seed": -1}, "seed"),
        ({"chunk_rows": 0}, "chunk_rows"),
    ],
)
def test_parameter_errors_name_the_parameter(kwargs, parameter):
    n_rows = kwargs.get("n_rows", 10)
    rest = {k: v for k, v in kwargs.items() if k != "n_rows"}
    calls = [synthetic_census, iter_synthetic_census, iter_synthetic_codes]
    if parameter != "chunk_rows":
        calls.append(synthetic_codes)
    for fn in calls:
        with pytest.raises(ParameterError) as err:
            fn(n_rows, **rest)
        assert err.value.parameter == parameter, fn.__name__


def test_schema_parameter_errors():
    with pytest.raises(ParameterError) as err:
        synthetic_schema(0)
    assert err.value.parameter == "n_qi"
    with pytest.raises(ParameterError) as err:
        synthetic_domains(sa_values=0)
    assert err.value.parameter == "sa_values"
