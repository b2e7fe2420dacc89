import numpy as np
import pytest

from openbook.data.grouping import group_ids
from openbook.data.schema import Schema
from openbook.data.table import EncodedTable, encode
from openbook.errors import DataError, SchemaError


def schema(**kw):
    base = dict(qi=["age:numeric", "zip", "sex"], sa="disease")
    base.update(kw)
    return Schema.build(**base)


def test_encode_codes_and_decode(small_frame):
    t = encode(small_frame, schema(identifiers=["name"]))
    assert t.n_rows == 12
    assert t.qi_codes.dtype == np.int32 and t.qi_codes.shape == (12, 3)
    # numeric codes follow value order; decoding gives back the values positionally
    assert np.all(np.diff(t.columns["age"].codes) > 0)
    assert list(t.decode("zip")) == list(small_frame["zip"])
    assert list(t.decode("disease")) == list(small_frame["disease"])
    assert t.dropped_columns == ()


def test_undeclared_column_is_dropped(small_frame):
    t = encode(small_frame, schema())
    assert t.dropped_columns == ("name",)
    assert "name" not in t.to_frame().columns


def test_kept_column_is_carried(small_frame):
    t = encode(small_frame, schema(keep=["name"]))
    assert list(t.to_frame()["name"]) == list(small_frame["name"])


def test_index_is_ignored(small_frame):
    a = encode(small_frame, schema())
    b = encode(small_frame.sort_index(), schema())
    c = encode(small_frame.reset_index(drop=True), schema())
    assert np.array_equal(a.qi_codes, c.qi_codes)
    assert not np.array_equal(a.qi_codes, b.qi_codes)  # sort_index reorders rows: positions differ


def test_unknown_column(small_frame):
    with pytest.raises(SchemaError, match="unknown column 'zipcode'") as e:
        encode(small_frame, schema(qi=["age:numeric", "zipcode"]))
    assert e.value.column == "zipcode"


def test_sa_also_qi():
    with pytest.raises(SchemaError, match="both as the sensitive attribute and as a QI"):
        schema(qi=["age", "disease"])


def test_non_numeric_value_in_numeric_qi(small_frame):
    df = small_frame.copy()
    df["age"] = df["age"].astype(object)
    df.iloc[3, 0] = "thirty"
    with pytest.raises(SchemaError, match=r"non-numeric value 'thirty' in numeric column 'age'"):
        encode(df, schema())


def test_empty_table(small_frame):
    with pytest.raises(DataError, match="empty"):
        encode(small_frame.iloc[:0], schema())


def test_missing_values_policies(small_frame):
    df = small_frame.copy()
    df.iloc[2, df.columns.get_loc("zip")] = "?"
    df.iloc[5, df.columns.get_loc("zip")] = None
    with pytest.raises(SchemaError, match="column 'zip' has 2 missing value"):
        encode(df, schema())
    assert encode(df, schema(missing="drop")).n_rows == 10
    t = encode(df, schema(missing="value"))
    assert t.n_rows == 12 and "<missing>" in set(t.decode("zip"))


def test_sensitive_sets(small_frame):
    t = encode(small_frame, schema(sensitive_sets={"sens": ["hiv"]}))
    d = t.sa_domain
    assert d.sensitive_sets["sens"].sum() == 1
    assert d.values[d.sensitive_sets["sens"]][0] == "hiv"
    assert d.global_counts.sum() == 12
    with pytest.raises(SchemaError, match="'HIV' of set 'sens' does not occur"):
        encode(small_frame, schema(sensitive_sets={"sens": ["HIV"]})).sa_domain


def test_group_sa_counts_skips_suppressed(small_frame):
    t = encode(small_frame, schema())
    g = np.array([0, 0, 1, 1, -1, 2, 2, 2, 0, 1, -1, 2])
    c = t.group_sa_counts(g, 3)
    assert c.shape == (3, len(t.columns["disease"].categories))
    assert c.sum() == 10
    assert list(c.sum(axis=1)) == [3, 3, 4]


def test_take_and_from_codes():
    qi = np.array([[0, 1], [1, 1], [0, 0]])
    t = EncodedTable.from_codes(qi_codes=qi, sa_codes=np.array([0, 1, 1]))
    assert t.n_rows == 3 and t.qi_codes.shape == (3, 2)
    s = t.take(np.array([2, 0]))
    assert s.n_rows == 2 and list(s.sa_codes) == [1, 0]


def test_group_ids_matches_unique_rows():
    rng = np.random.default_rng(0)
    m = rng.integers(0, 5, size=(500, 4))
    ids, n = group_ids(m)
    _, ref = np.unique(m, axis=0, return_inverse=True)
    assert n == len(np.unique(m, axis=0))
    # same partition: ids and ref are bijective relabelings
    pairs = set(zip(ids.tolist(), ref.ravel().tolist()))
    assert len(pairs) == n
