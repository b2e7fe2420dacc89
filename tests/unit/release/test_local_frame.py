"""The generalized release of a local recoding is built on codes, group by group
(:mod:`openbook.release.local_frame`): the same frame, row order, class count and file bytes
as the row-by-row path through :func:`openbook.release.release.canonical_form`."""

from __future__ import annotations

import io

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


def test_arbitrary_groups_and_suppression():
    """Suppressed rows, groups in no particular order, groups of equal label tuples."""
    table = _table(3, 400)
    rng = np.random.default_rng(3)
    group = rng.integers(0, 40, table.n_rows)
    group[rng.random(table.n_rows) < 0.1] = -1
    keep = group >= 0
    group[keep] = np.unique(group[keep], return_inverse=True)[1].ravel()
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
    from openbook.release.release import group_labels

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
