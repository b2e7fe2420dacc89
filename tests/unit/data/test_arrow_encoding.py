"""The Arrow path (read_source / Arrow tables, encoded batch by batch) gives exactly the
EncodedTable of the pandas path (read_table + encode_frame): codes, decode maps, row order,
missing values, kept columns and errors — on every built-in dataset and on random CSV and
Parquet files."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from openbook.data import adult
from openbook.data.arrow import FileSource, NeedsPandas, TableSource
from openbook.data.batch_encoding import encode_source, infer_numeric
from openbook.data.datasets import DATASETS, load_dataset
from openbook.data.frame_encoding import encode_frame
from openbook.data.grouping import _factorize_dense, _factorize_sorting
from openbook.data.loaders import numeric_where_possible, read_source, read_table
from openbook.data.schema import Column, Schema
from openbook.data.table import encode

from arrow_cases import (
    arrow_source,
    assert_same_table,
    csv_tables,
    outcome,
    plain,
    reference,
    typed_tables,
    write_csv,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_builtin_dataset(name, adult_dir):
    ds = load_dataset(name)
    frame = ds.frame.copy()
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    want = outcome(lambda: encode_frame(frame, ds.schema, ds.hierarchies, source=ds.name))
    assert want[0] == "ok"
    for batch_rows in (997, 1 << 20):
        assert_same_table(outcome(lambda: encode(arrow, ds.schema, ds.hierarchies, source=ds.name,
                                                 batch_rows=batch_rows)), want)


@pytest.mark.parametrize("variant", ["full", "train"])
def test_adult_read_by_arrow_is_adult_read_by_pandas(variant, adult_dir):
    table = adult.load_adult_arrow(variant, path=adult_dir)
    pd.testing.assert_frame_equal(table.to_pandas(), adult.load_adult(variant, path=adult_dir))
    # and the built-in dataset is that Arrow table, encoded without pandas
    ds = load_dataset("adult" if variant == "full" else "adult-train")
    assert isinstance(ds.data, pa.Table)


def test_adult_files_with_pandas_only_features(tmp_path, adult_dir):
    """A ``|`` comment inside a line, a short row or a number only pandas parses: the Arrow
    reader hands the file to pandas, and the result is still load_adult's."""
    lines = (adult_dir / "adult.data").read_text().splitlines()[:40]
    lines[3] = lines[3] + " | a comment"
    lines[5] = lines[5].replace(lines[5].split(",")[0], "+39", 1)
    (tmp_path / "adult.data").write_text("\n".join(lines) + "\n")
    got = adult.load_adult_arrow("train", path=tmp_path).to_pandas()
    pd.testing.assert_frame_equal(got, adult.load_adult("train", path=tmp_path))
    with pytest.raises(NeedsPandas):
        adult._read_raw_arrow(tmp_path / "adult.data")


@SETTINGS
@given(case=csv_tables())
def test_random_csv(tmp_path_factory, case):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    write_csv(path, case)
    want = reference(path, case["schema"])
    got = outcome(lambda: encode(arrow_source(path), case["schema"], source=str(path),
                                 batch_rows=case["batch_rows"]))
    assert_same_table(got, want)


@SETTINGS
@given(case=csv_tables())
def test_plain_csv_needs_no_pandas(tmp_path_factory, case):
    """Without a quirk only pandas reads (QUIRKS), the Arrow path reads the file itself — so
    the equality above is the Arrow path's, not the fallback's."""
    if case["quirk"] in ("dup_header", "bom", "trailing_blank", "header_only", "blank_line", None):
        case = {**plain(case), "quirk": case["quirk"]}
        path = tmp_path_factory.mktemp("csv") / "t.csv"
        write_csv(path, case)
        if case["quirk"] == "dup_header":
            assert outcome(lambda: read_source(path))[:2] == ("error", "DataError")
            return
        src = arrow_source(path)
        assert isinstance(src, FileSource)
        got = outcome(lambda: encode_source(src, case["schema"], source=str(path), batch_rows=case["batch_rows"],
                                            fallback=False))
        assert_same_table(got, reference(path, case["schema"]))


@SETTINGS
@given(case=typed_tables(), row_group=st.sampled_from([1, 3, 64]))
def test_random_parquet(tmp_path_factory, case, row_group):
    table, schema = case
    folder = tmp_path_factory.mktemp("pq")
    plain = folder / "plain.parquet"  # written by Arrow: no pandas metadata
    pq.write_table(table, plain, row_group_size=row_group)
    by_pandas = folder / "pandas.parquet"  # written by pandas: its metadata
    pd.read_parquet(plain).to_parquet(by_pandas, row_group_size=row_group)
    for path in (plain, by_pandas):
        want = reference(path, schema)
        src = arrow_source(path)
        got = outcome(lambda: encode(src, schema, source=str(path), batch_rows=row_group))
        assert_same_table(got, want)
    # the Arrow path reads these types itself
    assert_same_table(outcome(lambda: encode_source(arrow_source(plain), schema, source=str(plain),
                                                    batch_rows=2, fallback=False)), reference(plain, schema))


def test_missing_values_and_numbers_as_text(tmp_path):
    """Hand-picked: numeric-looking categoricals ("01" is 1 to pandas), missing values of each
    policy, a number with a missing value (1.0 as text), tokens after spaces."""
    path = tmp_path / "t.csv"
    path.write_text("zip, age, sex, dis\n01, 30, M, flu\n1, , F, ?\n002, 41.5, ?, hiv\n 3, 30, F, flu\n")
    for missing in ("error", "drop", "value"):
        for kind in ("categorical", "numeric"):
            schema = Schema.build(qi=[f"zip:{kind}", "age:categorical", "sex"], sa="dis", missing=missing)
            assert_same_table(outcome(lambda: encode(read_source(path), schema, source=str(path))),
                              reference(path, schema))
    ok = encode(read_source(path), Schema.build(qi=["zip", "age", "sex"], sa="dis", missing="value"))
    assert list(ok.columns["zip"].categories) == ["1", "2", "3"]  # as pandas reads numbers
    assert list(ok.columns["age"].categories) == ["30.0", "41.5", "<missing>"]


def test_errors_are_the_pandas_errors(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n?,1,p\nx,1,p\ny,z,q\nw,zz,q\n")
    cases = [Schema.build(qi=["a", "b:numeric"], sa="c"),  # missing value ("?")
             Schema.build(qi=["a", "b:numeric"], sa="c", missing="drop"),  # non-numeric value: its row, count
             Schema.build(qi=["a", "b:numeric"], sa="c", missing="value"),
             Schema.build(qi=[Column("a", "ordinal", ("x", "y"))], sa="c", missing="drop"),  # not in the order
             Schema.build(qi=["nope"], sa="c")]  # unknown column
    for schema in cases:
        want = reference(path, schema)
        assert want[0] == "error"
        assert_same_table(outcome(lambda: encode(read_source(path), schema, source=str(path))), want)
    (tmp_path / "empty.csv").write_bytes(b"")
    p = tmp_path / "empty.csv"
    want = outcome(lambda: encode(read_source(p), cases[0]))
    assert want[0] == "error" and want == outcome(lambda: encode_frame(read_table(p), cases[0]))


def test_hierarchy_errors_are_the_pandas_errors(tmp_path):
    from openbook.hierarchy import adult_hierarchies

    h = {k: v for k, v in adult_hierarchies("paper001").items() if k in ("age", "sex")}
    path = tmp_path / "t.csv"
    path.write_text("age,sex,d\n30,Male,x\n17.5,Female,y\n200,Male,x\n200,Other,y\n")
    for qi in (["age:numeric", "sex"], ["sex", "age:numeric"]):
        schema = Schema.build(qi=qi, sa="d")
        got = outcome(lambda: encode(read_source(path), schema, h, source=str(path)))
        want = outcome(lambda: encode_frame(read_table(path), schema, h, source=str(path)))
        assert want[0] == "error"
        assert_same_table(got, want)


def test_numbers_inferred_as_pandas_does():
    for values, has_null in [(["1", "01", "-0"], False), (["1", "2"], True), (["1.5", "2"], False),
                             (["1e3", "inf"], False), (["a", "1"], False), (["99999999999999999999"], False),
                             (["+4", " 5"], True), ([], True)]:
        s = pd.Series([*values, *([None] if has_null else [])], dtype=str)
        conv = numeric_where_possible(pd.DataFrame({"x": s}))["x"]
        got = infer_numeric(values, has_null)
        if conv.dtype == object or pd.api.types.is_string_dtype(conv.dtype):
            assert got is None
        else:
            assert got is not None and got[1] == conv.iloc[: len(values)].tolist()


def test_factorize_methods_agree():
    rng = np.random.default_rng(3)
    for n, hi in [(1, 1), (50, 7), (5000, 300), (20000, 10**12)]:
        key = rng.integers(0, hi, n).astype(np.int64)
        for sort in (False, True):
            b, m2 = _factorize_sorting(key, sort)
            a, m = _factorize_dense(key, int(key.max()) + 1, sort) if hi < 10**6 else (b, m2)
            c, uniq = pd.factorize(key, sort=sort)
            m3 = len(uniq)
            assert m == m2 == m3
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)


def test_table_source_of_unsupported_types_reads_through_pandas():
    table = pa.table({"a": pa.array([True, False, True]), "b": ["x", "y", "x"]})
    schema = Schema.build(qi=["a"], sa="b")
    with pytest.raises(NeedsPandas):
        encode_source(TableSource(table), schema, fallback=False)
    assert_same_table(outcome(lambda: encode(table, schema)), outcome(lambda: encode_frame(table.to_pandas(), schema)))


def test_check_on_adult_starts_without_heavy_modules(adult_dir):
    """``openbook check --dataset adult`` imports neither pandas nor scipy, numba or matplotlib
    (start-up: bench/bench_startup.py)."""
    code = ("import sys, io, contextlib\nfrom openbook.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): rc = main(['check', '--dataset', 'adult', '--json'])\n"
            "print(rc, sorted(m for m in ('pandas', 'scipy', 'numba', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "[]"]
