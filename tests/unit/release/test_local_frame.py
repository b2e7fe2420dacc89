"""The generalized release of a local recoding is built on codes, group by group
(:mod:`openbook.release.local_frame`): the same frame, row order, class count and file bytes
as the row-by-row path through :func:`openbook.release.release.canonical_form`."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model
from openbook.release import Partition, build_release, local_frame as lf
from openbook.release.release import stable_argsort


def _table(seed: int, n: int, sa_numeric: bool = False):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "zip": rng.choice([" b", "a", "c ", "dd", "e"], n),
        "edu": rng.choice(["x1", "x2", "x10", "y"], n),
        "hours": rng.normal(40, 9, n).round(1),
        "sa": rng.integers(0, 7, n) if sa_numeric else rng.choice(["flu", "cold", "hiv", "cancer", "Z", "a"], n),
    })
    return encode(df, Schema.build(qi=["age:numeric", "zip", "edu:ordinal", "hours:numeric"], sa="sa"))


def _both(table, part, model):
    fast = build_release(table, part, model=model)
    saved = lf.local_frame
    lf.local_frame = lambda *a, **k: None  # the row-by-row path
    try:
        slow = build_release(table, part, model=model)
    finally:
        lf.local_frame = saved
    return fast, slow


def _bytes(df: pd.DataFrame) -> tuple[bytes, str]:
    b = io.BytesIO()
    df.to_parquet(b, index=False)
    return b.getvalue(), df.to_csv(index=False)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("strict", [True, False])
def test_mondrian_release_equals_the_row_by_row_path(seed, strict):
    table = _table(seed, 3000, sa_numeric=seed == 2)
    model = make_model("k=4")
    part = make_algorithm("mondrian", model=model, strict=strict, seed=seed).partition(table)
    fast, slow = _both(table, part, model)
    pd.testing.assert_frame_equal(fast.data, slow.data)
    assert list(fast.data.dtypes) == list(slow.data.dtypes)
    np.testing.assert_array_equal(fast.source_rows, slow.source_rows)
    assert fast.meta["n_groups"] == slow.meta["n_groups"] == fast.classes()[1]
    assert _bytes(fast.data) == _bytes(slow.data)
    # the classes ranked group by group are the classes of the published frame
    assert fast._classes is not None and slow._classes is None
    ids, n = fast.classes()
    fast._classes = None
    np.testing.assert_array_equal(ids, fast.classes()[0])
    assert n == fast.classes()[1]


def _random_groups(seed: int, n: int, n_groups: int) -> np.ndarray:
    """Groups in no particular order, a tenth of the rows suppressed, ids renumbered 0..G-1."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n)
    group[rng.random(n) < 0.1] = -1
    keep = group >= 0
    group[keep] = np.unique(group[keep], return_inverse=True)[1].ravel()
    return group


def test_arbitrary_groups_and_suppression():
    """Suppressed rows, groups in no particular order, groups of equal label tuples."""
    table = _table(3, 400)
    group = _random_groups(3, table.n_rows, 40)
    part = Partition(group, int(group.max()) + 1, provenance={"algorithm": "test"})
    fast, slow = _both(table, part, None)
    pd.testing.assert_frame_equal(fast.data, slow.data)
    np.testing.assert_array_equal(fast.source_rows, slow.source_rows)
    assert fast.meta["n_groups"] == slow.meta["n_groups"]
    assert _bytes(fast.data) == _bytes(slow.data)


def test_kept_columns_take_the_row_by_row_path():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"age": rng.integers(18, 90, 200), "zip": rng.choice(["a", "b"], 200),
                       "note": rng.choice(["p", "q", "r"], 200), "sa": rng.choice(["x", "y", "z"], 200)})
    table = encode(df, Schema.build(qi=["age:numeric", "zip"], sa="sa", keep=["note"]))
    assert lf.local_frame(table, np.zeros(200, np.int64), 1, np.arange(200)) is None


def test_stable_argsort_is_numpys():
    rng = np.random.default_rng(5)
    for g in (1, 7, 1 << 16, (1 << 16) + 3, 1 << 33):
        ids = rng.integers(0, g, 5000)
        np.testing.assert_array_equal(stable_argsort(ids, g), np.argsort(ids, kind="stable"))


def test_qi_classes_of_a_bucketized_release_rank_the_text_tuples():
    """Generalized Anatomy's QI-table: the classes are the text tuples ranked (np.unique of
    the rows' text ranks, as before), found through the categories' text."""
    table = _table(6, 2000)
    rel = make_algorithm("generalized-anatomy", model=make_model("l=2"), seed=0).anonymize(table)
    keys = np.stack([pd.factorize(rel.data[c].astype(str), sort=True)[0] for c in rel.qi], axis=1)
    _, inv = np.unique(keys, axis=0, return_inverse=True)
    ids, n = rel.qi_classes()
    np.testing.assert_array_equal(ids, inv.ravel())
    assert n == int(inv.max()) + 1


def test_every_row_published_in_arbitrary_groups():
    """Nothing suppressed (the codes used as they are, no copy), groups in no particular
    order: the same frame, order and bytes as the row-by-row path."""
    table = _table(7, 500)
    group = np.random.default_rng(7).permutation(12)[np.arange(table.n_rows) % 12]
    part = Partition(group, 12, provenance={"algorithm": "test"})
    fast, slow = _both(table, part, None)
    pd.testing.assert_frame_equal(fast.data, slow.data)
    np.testing.assert_array_equal(fast.source_rows, slow.source_rows)
    assert fast.meta["n_groups"] == slow.meta["n_groups"]
    assert _bytes(fast.data) == _bytes(slow.data)


def test_group_labels_are_each_groups_lca_label():
    """``group_labels`` of a hierarchical column: the label of each group's LCA, made once per
    node and handed to every group whose LCA it is."""
    from openbook.release.labels import group_labels

    table = _table(8, 300)
    group = np.random.default_rng(8).integers(0, 25, table.n_rows)
    for name in ("zip", "edu"):
        h = table.hierarchy(name)
        codes = table.columns[name].codes
        want = [str(h.label_of([h.group_lca(codes[group == g], np.zeros((group == g).sum(), np.int64), 1)[0]])[0])
                for g in range(25)]
        assert list(group_labels(table, name, group, 25)) == want


def test_stable_argsort_of_int32_keys():
    ids = np.random.default_rng(9).integers(0, (1 << 20) + 5, 5000).astype(np.int32)
    np.testing.assert_array_equal(stable_argsort(ids, (1 << 20) + 5), np.argsort(ids, kind="stable"))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32, np.int64])
def test_stable_argsort_of_every_key_type_is_numpys_in_int32(dtype):
    rng = np.random.default_rng(10)
    top = min(np.iinfo(dtype).max, (1 << 40) + 7)
    for g in sorted({1, 100, min(top, 1 << 16), min(top, (1 << 16) + 9), top}):
        ids = rng.integers(0, g, 7000).astype(dtype)
        got = stable_argsort(ids, g)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.argsort(ids, kind="stable"))


def test_counts_labels_and_release_by_small_chunks_equal_one_pass(monkeypatch):
    """The counting and labelling passes run a chunk of rows at a time (their int64
    temporaries bounded at any size): with chunks of 7 rows, the same counts, labels, LCAs
    and release as in one pass."""
    import openbook.data.table as tbl
    import openbook.hierarchy.lca as lca
    import openbook.release.labels as labels

    table = _table(11, 1000)
    group = _random_groups(11, table.n_rows, 60)
    keep = group >= 0
    n_groups = int(group.max()) + 1
    part = Partition(group.copy(), n_groups, provenance={"algorithm": "test"})
    whole = build_release(table, part, model=None)
    counts = tbl.sa_counts(group, table.sa_codes, n_groups, table.columns["sa"].n_values)
    lab = {c: labels.group_labels(table, c, group[keep], n_groups, table.columns[c].codes[keep]) for c in table.qi_names}
    for mod in (tbl, lca, labels):
        monkeypatch.setattr(mod, "CHUNK_ROWS", 7)
    before = group.copy()
    small = tbl.sa_counts(group, table.sa_codes, n_groups, table.columns["sa"].n_values)
    np.testing.assert_array_equal(group, before)  # the keys are built in a copy, never in the caller's ids
    np.testing.assert_array_equal(small, counts)
    want = np.zeros_like(counts)
    np.add.at(want, (group[keep], table.sa_codes[keep]), 1)
    np.testing.assert_array_equal(counts, want)
    for c in table.qi_names:
        np.testing.assert_array_equal(labels.group_labels(table, c, group[keep], n_groups, table.columns[c].codes[keep]),
                                      lab[c])
    chunked = build_release(table, Partition(group.copy(), n_groups, provenance={"algorithm": "test"}), model=None)
    pd.testing.assert_frame_equal(chunked.data, whole.data)
    np.testing.assert_array_equal(chunked.source_rows, whole.source_rows)


def test_an_sa_value_only_suppressed_rows_hold_is_in_no_published_byte(tmp_path):
    """The SA column is a categorical of the values its rows hold: a value held only by
    suppressed rows is no category, so neither the frame nor the Parquet (whose dictionary
    would list it) nor the CSV names it."""
    from openbook.release import save_release

    rng = np.random.default_rng(12)
    n = 300
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "zip": rng.choice(["a", "b", "c"], n),
                       "sa": rng.choice(["flu", "cold", "hiv"], n)})
    df.loc[[5, 77], "sa"] = "zzsecretzz"
    table = encode(df, Schema.build(qi=["age:numeric", "zip"], sa="sa"))
    group = (np.arange(n) % 10).astype(np.int64)
    group[[5, 77]] = -1
    group[group >= 0] = np.unique(group[group >= 0], return_inverse=True)[1].ravel()
    # a real algorithm's record for the sidecar (the groups are ours: only the bytes are read)
    provenance = make_algorithm("mondrian", model=make_model("k=2")).partition(table).provenance
    for fast in (True, False):
        saved = lf.local_frame
        if not fast:
            lf.local_frame = lambda *a, **k: None
        try:
            rel = build_release(table, Partition(group, int(group.max()) + 1, provenance=dict(provenance)), model=None)
        finally:
            lf.local_frame = saved
        col = rel.data["sa"]
        assert isinstance(col.dtype, pd.CategoricalDtype)
        assert list(col.cat.categories) == ["cold", "flu", "hiv"]
        for suffix in (".parquet", ".csv"):
            out = tmp_path / f"r{fast}{suffix}"
            save_release(rel, out)
            assert b"zzsecretzz" not in out.read_bytes()
            assert b"zzsecretzz" not in Path(f"{out}.json").read_bytes()


def test_the_counts_of_a_categorical_sa_are_those_of_its_text():
    """``Release.sa_counts`` reads a categorical SA through its codes; an unused category is
    no value of the domain, and the counts equal those of the same column as text."""
    from openbook.release import Release

    rng = np.random.default_rng(13)
    qi = rng.choice(["x", "y", "z"], 400)
    sa = rng.choice(["b", "a", "c"], 400)
    cat = pd.Categorical(sa, categories=["c", "unused", "a", "b"])
    meta = {"schema": {"sensitive_sets": {"s": ["a", "unused"]}}}
    as_text = Release("generalized", pd.DataFrame({"q": qi, "sa": sa}), ["q"], "sa", meta=dict(meta))
    as_cat = Release("generalized", pd.DataFrame({"q": qi, "sa": cat}), ["q"], "sa", meta=dict(meta))
    (c1, d1), (c2, d2) = as_text.sa_counts(), as_cat.sa_counts()
    np.testing.assert_array_equal(c1, c2)
    assert list(d1.values) == list(d2.values) == ["a", "b", "c"]
    np.testing.assert_array_equal(d1.global_counts, d2.global_counts)
    np.testing.assert_array_equal(d1.sensitive_sets["s"], d2.sensitive_sets["s"])


def test_two_sa_values_of_one_text_are_one_value():
    """A frame holding 1 and "1" publishes one text, so one value of the domain: counted together."""
    from openbook.release import Release

    rel = Release("generalized", pd.DataFrame({"q": ["x"] * 4, "sa": pd.Series([1, "1", "a", 1], dtype=object)}),
                  ["q"], "sa", meta={})
    counts, dom = rel.sa_counts()
    assert list(dom.values) == ["1", "a"]
    np.testing.assert_array_equal(counts, [[3, 1]])
