"""Codes held in the narrowest type of their domain (``data.table.code_dtype``): int8 up to
127 values, int16 up to 32,767, int32 beyond — and nothing anywhere depends on it.

The equivalence tests run whole releases twice, once with narrow codes and once with every
column forced to int32 (the type codes had before), on a table whose domains are chosen so
that any arithmetic done in the codes' own type (``code * card + code``) would wrap: the
release frames, SA tables and certificates must be identical.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import openbook as ob
from openbook.data import table as table_module
from openbook.data.schema import Schema
from openbook.data.table import EncodedColumn, EncodedTable, code_dtype, encode, narrow_codes


@pytest.mark.parametrize("n_values, dtype", [(0, np.int8), (1, np.int8), (127, np.int8), (128, np.int16),
                                             (32767, np.int16), (32768, np.int32), (2**31 - 1, np.int32)])
def test_code_dtype_leaves_room_for_one_more(n_values, dtype):
    assert code_dtype(n_values) == np.dtype(dtype)
    info = np.iinfo(code_dtype(n_values))
    assert n_values <= info.max  # the largest code + 1 fits: ``code + 1`` never wraps


def test_a_column_narrows_its_codes_by_its_domain():
    cats = np.arange(200)
    col = EncodedColumn("a", "numeric", np.array([0, 199, 5], dtype=np.int64), cats)
    assert col.codes.dtype == np.int16 and col.codes.tolist() == [0, 199, 5]
    col = EncodedColumn("a", "numeric", np.array([0, 99], dtype=np.int32), cats[:100])
    assert col.codes.dtype == np.int8 and col.codes.tolist() == [0, 99]


@pytest.mark.parametrize("codes", [[0, 300], [-1, 2], [0, 2**40]])
def test_codes_outside_the_domain_are_kept_as_given_never_wrapped(codes):
    """300 in int8 would be 44, a valid-looking code: a wrong code must stay visibly wrong."""
    given = np.array(codes, dtype=np.int64)
    col = EncodedColumn("a", "numeric", given, np.arange(3))
    assert col.codes.dtype == np.int64 and col.codes.tolist() == codes
    assert narrow_codes(given, 3) is given


def test_encoding_gives_narrow_codes_on_both_paths(tmp_path):
    rng = np.random.default_rng(3)
    n = 2_000
    df = pd.DataFrame({"small": rng.integers(0, 50, n), "wide": rng.integers(0, 1_000, n),
                       "sa": rng.choice([f"v{i}" for i in range(130)], n)})
    schema = Schema.build(qi=["small:numeric", "wide:numeric"], sa="sa")
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    from openbook.data.loaders import read_source

    for t in (encode(df, schema), encode(read_source(path), schema)):
        assert [t.columns[c].codes.dtype for c in ("small", "wide", "sa")] == [np.int8, np.int16, np.int16]
        assert t.qi_codes.dtype == np.int32  # the matrix readers index with: int32 as before
        for c in ("small", "wide", "sa"):  # values round-trip
            assert t.decode(c).astype(str).tolist() == df[c].astype(str).tolist()


def _frame(seed: int = 5, n: int = 400) -> pd.DataFrame:
    """Domains of 100-120 values (int8 codes, whose products wrap at 127) and one of 300
    (int16, whose products with the others wrap at 32,767)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(0, 120, n), "b": rng.choice([f"b{i:03d}" for i in range(100)], n),
                         "c": rng.integers(0, 300, n), "d": rng.choice(list("xyz"), n),
                         "s": rng.choice([f"s{i:03d}" for i in range(110)], n)})


def _run(df: pd.DataFrame, algorithm: str, model: str, wide: bool, monkeypatch, **params):
    with monkeypatch.context() as m:
        if wide:  # every column in int32, the type codes had before they were narrowed
            m.setattr(table_module, "code_dtype", lambda n_values: np.dtype(np.int32))
        rel = ob.anonymize(df, qi=["a:numeric", "b", "c:numeric", "d"], sa="s", model=model, algorithm=algorithm,
                           seed=11, max_risk=1, max_reid_risk=1, **params)
    return rel


CASES = [("mondrian", "k=4", {"strict": True}), ("mondrian", "l=2", {"strict": False}), ("anatomy", "l=2", {}),
         ("gg", "l=2", {}), ("sg", "l=2", {}), ("full-domain-search", "k=3", {"max_suppression": 0.05}), ("generalized-anatomy", "l=2", {})]


@pytest.mark.parametrize("algorithm, model, params", CASES, ids=[f"{a}-{m}" for a, m, _ in CASES])
def test_narrow_codes_change_no_release_and_no_certificate(algorithm, model, params, monkeypatch):
    df = _frame()
    narrow = _run(df, algorithm, model, False, monkeypatch, **params)
    wide = _run(df, algorithm, model, True, monkeypatch, **params)
    pd.testing.assert_frame_equal(narrow.to_pandas(), wide.to_pandas())
    if narrow.sa_table is not None:
        pd.testing.assert_frame_equal(narrow.to_pandas("sa"), wide.to_pandas("sa"))
    assert _timeless(narrow.certificate) == _timeless(wide.certificate)


def _timeless(doc):
    """A certificate without its timings (``seconds``: the only part that may differ)."""
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if k != "seconds" and not k.endswith("_seconds")}
    if isinstance(doc, (list, tuple)):
        return [_timeless(v) for v in doc]
    return json.loads(json.dumps(doc, default=str))


def test_the_forced_wide_run_really_is_wide(monkeypatch):
    """The equivalence above compares two different code types, not one type twice."""
    df = _frame()
    schema = Schema.build(qi=["a:numeric", "b", "c:numeric", "d"], sa="s")
    assert encode(df, schema).columns["a"].codes.dtype == np.int8
    monkeypatch.setattr(table_module, "code_dtype", lambda n_values: np.dtype(np.int32))
    t = encode(df, schema)
    assert {c.codes.dtype for c in t.columns.values()} == {np.dtype(np.int32)}
    assert isinstance(t, EncodedTable)
