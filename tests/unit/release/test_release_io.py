import json

import numpy as np
import pandas as pd
import pytest

from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import DataError, VerificationError
from openbook.models import make_model
from openbook.release import Partition, build_release, load_release, save_release


@pytest.fixture()
def table(small_frame):
    return encode(small_frame, Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease",
                                            sensitive_sets={"sens": ["hiv"]}, keep=["name"]))


def pairs_partition(n):
    return Partition(np.arange(n) // 4, (n + 3) // 4, provenance={})


def test_generalized_release_labels_and_counts(table):
    rel = build_release(table, pairs_partition(12), model=make_model("k=4"))
    assert rel.kind == "generalized"
    assert rel.meta["n_input"] == 12 and rel.meta["n_published"] == 12 and rel.meta["n_suppressed"] == 0
    # numeric QI without hierarchy → [min-max] of the group
    assert list(rel.data["age"][:4]) == ["[23-31]"] * 4
    # categorical with the automatic flat hierarchy → '*' when the group mixes values
    assert set(rel.data["sex"]) == {"*"}
    cls, n = rel.classes()
    assert n == 3
    assert rel.check(make_model("k=4")).holds
    # rows in canonical order; the publisher (in memory only) knows each row's input row
    assert sorted(rel.data["name"]) == sorted(f"p{i}" for i in range(12))
    assert list(rel.data["name"]) == [f"p{i}" for i in rel.source_rows]


def test_suppression_counts(table):
    g = np.arange(12) // 4
    g[[0, 5]] = -1
    part = Partition(g, 3)
    rel = build_release(table, part, model=make_model("k=3"))
    assert rel.meta["n_published"] == 10 and rel.meta["n_suppressed"] == 2
    assert rel.meta["n_published"] + rel.meta["n_suppressed"] == rel.meta["n_input"]


def test_unverified_release_is_refused(table):
    with pytest.raises(VerificationError, match="violates"):
        build_release(table, pairs_partition(12), model=make_model("k=5"))


def test_partition_must_cover_rows(table):
    with pytest.raises(VerificationError):
        build_release(table, Partition(np.zeros(11, dtype=int), 1), model=make_model("k=2"))


def test_bucketized_release(table):
    # a bucketized release publishes exact QIs: the model's k would be a promise about them, so its
    # groups are checked against an attribute model here (test_bucketized_k_is_the_qi_tables below)
    rel = build_release(table, pairs_partition(12), model=make_model("l=1"), kind="bucketized")
    assert sorted(rel.data["age"]) == sorted(table.decode("age"))  # original QI values kept
    assert list(rel.data["gid"]) == sorted(rel.data["gid"])  # sorted by group, then QI values
    assert int(rel.sa_table["count"].sum()) == 12
    counts, dom = rel.sa_counts()
    assert counts.sum() == 12 and counts.shape[0] == 3
    assert dom.sensitive_sets["sens"].sum() == 1


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".sqlite", ".duckdb"])
@pytest.mark.parametrize("kind", ["generalized", "bucketized"])
def test_round_trip_lossless(tmp_path, table, suffix, kind):
    rel = build_release(table, pairs_partition(12), model=make_model("l=2"), kind=kind)
    path = tmp_path / f"rel{suffix}"
    save_release(rel, path)
    back = load_release(path)
    assert back.kind == rel.kind and back.qi == rel.qi and back.sa == rel.sa
    pd.testing.assert_frame_equal(back.data.astype(str), rel.data.astype(str))
    if kind == "bucketized":
        pd.testing.assert_frame_equal(back.sa_table.astype(str), rel.sa_table.astype(str))
    assert back.meta["n_published"] == 12 and "n_input" not in back.meta  # no count beyond the published rows
    assert back.verify(make_model("l=2")).holds
    c1, _ = rel.sa_counts()
    c2, _ = back.sa_counts()
    assert np.array_equal(c1, c2)


def test_truncated_release_file_is_reported(tmp_path, table):
    rel = build_release(table, pairs_partition(12), model=make_model("k=4"))
    path = tmp_path / "rel.csv"
    save_release(rel, path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-3]) + "\n")
    with pytest.raises(DataError, match="digest"):
        load_release(path)


def test_sidecar_lists_model_and_counts(tmp_path, table):
    rel = build_release(table, pairs_partition(12), model=make_model("k=4"))
    save_release(rel, tmp_path / "r.csv")
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    assert meta["model"]["model"] == "k-anonymity" and meta["n_published"] == 12
    assert "n_input" not in meta and "n_suppressed" not in meta
    assert meta["check"]["holds"] is True
    assert not list(tmp_path.glob(".*"))  # no temporaries, no journal left


def test_failed_write_leaves_nothing(tmp_path, table, monkeypatch):
    rel = build_release(table, pairs_partition(12), model=make_model("l=1"), kind="bucketized")
    import openbook.release.io as io

    calls = {"n": 0}
    real = io._frame_writer

    def flaky(df, fmt):
        calls["n"] += 1
        if calls["n"] == 2:  # the SA-table
            def fail(tmp):
                raise OSError("disk full")
            return fail
        return real(df, fmt)

    monkeypatch.setattr(io, "_frame_writer", flaky)
    with pytest.raises(OSError):
        save_release(rel, tmp_path / "r.csv")
    assert list(tmp_path.iterdir()) == []


def test_seed_never_written_to_release(tmp_path, table):
    """A release states algorithm and parameters (the adversary may know them) but never
    the seed: with it, every random choice could be replayed."""
    from openbook.algorithms import FullDomainGeneralization

    algo = FullDomainGeneralization(model=make_model("k=2"), levels=[1, 1, 1], max_suppression=0.5,
                                    seed=987654321)
    rel = algo.anonymize(table)
    save_release(rel, tmp_path / "r.csv")
    text = (tmp_path / "r.csv.json").read_text()
    assert "987654321" not in text and '"seed"' not in text


def test_bucketized_k_is_the_qi_tables(table):
    """k-anonymity of a bucketized release is the k of its QI-table (exact QIs), never of its
    SA-table's groups: groups of 4 rows with distinct exact QIs do not make it 4-anonymous."""
    from openbook.errors import VerificationError

    with pytest.raises(VerificationError, match="shared by fewer than k = 4 records"):
        build_release(table, pairs_partition(12), model=make_model("k=4"), kind="bucketized")


@pytest.mark.parametrize("name", ["gg", "sg"])
def test_k_anonymity_over_exact_qis_is_refused_with_the_way_out(name):
    """A bucketized release publishes every QI exactly, so k-anonymity fails on its QI-table:
    refused, nothing built, the message naming the remedy — which works: the same groups
    published with generalized QIs are k-anonymous."""
    from openbook.algorithms.registry import make_algorithm
    from openbook.data.table import EncodedTable
    from openbook.errors import VerificationError
    from openbook.models import make_model

    rng = np.random.default_rng(0)
    t = EncodedTable.from_codes(qi_codes=rng.integers(0, 30, (300, 2)), sa_codes=rng.integers(0, 4, 300))
    algo = make_algorithm(name, model=make_model("k=5"), seed=0)
    with pytest.raises(VerificationError, match=r"fewer than k = 5 .*kind='generalized'"):
        algo.anonymize(t)
    rel = algo.anonymize(t, kind="generalized")
    assert rel.kind == "generalized" and int(np.bincount(rel.classes()[0]).min()) >= 5
