"""The Spark release on disk: a Parquet folder and its sidecar with a digest per part file
(taken by the executors as they write), rows sorted by published values, written atomically
from a staging folder a reader's sweep removes only once its writer is dead, never over an
existing path without ``force``; the published classes satisfy the model (checked here
without Spark) and published + suppressed = input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from openbook.data.table import encode
from openbook.errors import DataError, ParameterError
from openbook.models.registry import make_model
from openbook.spark.encoding import from_encoded
from openbook.spark.mondrian import spark_mondrian, verify
from openbook.spark.output import verify_folder, write_release

from .conftest import frame_schema, random_frame


@pytest.fixture(scope="module")
def run(spark):
    frame = random_frame(21, 400, card=8)
    table = encode(frame, frame_schema(frame))
    model = make_model("l=2")
    res = spark_mondrian(from_encoded(spark, table), model, strict=False, max_fragment=60)
    return frame, table, model, res, verify(res)


def test_release_folder_holds_the_model_and_every_row(run, tmp_path):
    frame, table, model, res, check = run
    out = tmp_path / "rel.parquet"
    files = write_release(res, check, out, publish_suppressed_count=True)
    assert files == [out, tmp_path / "rel.parquet.json"]
    side = verify_folder(out)
    assert side["n_input"] == side["n_published"] + side["n_suppressed"] == len(frame)
    assert sum(p["rows"] for p in side["files"]["parts"]) == len(frame)
    data = pq.read_table(out).to_pandas()
    assert len(data) == len(frame) and list(data.columns) == ["q0", "q1", "q2", "sa"]
    # sorted by published values, not in input order
    keys = list(zip(*(data[c].astype(str) for c in data.columns)))
    assert keys == sorted(keys)
    # the model on the published classes (equal QI labels), without Spark
    counts = pd.crosstab([data[c] for c in ["q0", "q1", "q2"]], data["sa"])
    dom = table.sa_domain
    mat = np.zeros((len(counts), dom.n_values), dtype=np.int64)
    for s, col in counts.items():
        mat[:, list(dom.values).index(s)] = col.to_numpy()
    assert model.holds(mat, dom).all()
    # the SA values published are the input's, row for row as a multiset
    assert sorted(data["sa"]) == sorted(frame["sa"])


def test_refuses_existing_path_and_force_replaces(run, tmp_path):
    _, _, _, res, check = run
    out = tmp_path / "rel.parquet"
    write_release(res, check, out)
    side = json.loads((tmp_path / "rel.parquet.json").read_text())
    assert "n_input" not in side and "n_suppressed" not in side  # not published by default
    with pytest.raises(ParameterError, match="use --force"):
        write_release(res, check, out)
    write_release(res, check, out, force=True)
    verify_folder(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel.parquet", "rel.parquet.json"]  # nothing left behind


def test_tampered_part_is_detected(run, tmp_path):
    _, _, _, res, check = run
    out = tmp_path / "rel.parquet"
    write_release(res, check, out)
    part = sorted(out.glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:-1] + b"x")
    with pytest.raises(DataError, match=f"part file {part.name} does not match its sidecar's digest"):
        verify_folder(out)


def test_parts_are_digested_by_their_writers(run, tmp_path, spark, monkeypatch):
    """Several part files, each named by its partition of the sorted rows, its digest and row
    count the file's (taken by the executor as it wrote it: the driver never opens a part);
    nothing else in the folder (no Hadoop checksum or marker files)."""
    import hashlib

    import openbook.release.sidecar as sidecar

    _, _, _, res, check = run
    out = tmp_path / "rel.parquet"
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    opened = []
    monkeypatch.setattr(sidecar, "sha256_file", lambda p: opened.append(p) or hashlib.sha256(b"").hexdigest())
    try:
        write_release(res, check, out)
    finally:
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "true")
        spark.conf.set("spark.sql.shuffle.partitions", "2")
    assert opened == []  # no digest taken on the driver
    monkeypatch.undo()
    side = json.loads((tmp_path / "rel.parquet.json").read_text())
    parts = side["files"]["parts"]
    assert len(parts) >= 2 and [p["name"] for p in parts] == sorted(p["name"] for p in parts)
    assert sorted(f.name for f in out.iterdir()) == [p["name"] for p in parts]
    for p in parts:
        assert hashlib.sha256((out / p["name"]).read_bytes()).hexdigest() == p["sha256"]
        assert pq.ParquetFile(out / p["name"]).metadata.num_rows == p["rows"]
    # the parts in their listed order are the published order: sorted by published values
    data = pd.concat([pq.read_table(out / p["name"]).to_pandas() for p in parts], ignore_index=True)
    keys = list(zip(*(data[c].astype(str) for c in data.columns)))
    assert keys == sorted(keys)


def test_a_dead_writers_stage_is_swept_a_live_ones_is_not(tmp_path):
    """The staging folder: held (shared flock) by its writer, left alone by a reader's sweep;
    once every holder is gone (a killed writer), the next reader removes it."""
    import os
    import subprocess
    import sys

    from openbook.release import commit
    from openbook.release.io import settle

    out = tmp_path / "rel.parquet"
    stage, held = commit.open_stage(out)
    (stage / "part-00000.parquet").write_text("half")
    settle(out)
    assert stage.is_dir()  # the driver holds it
    os.close(held)
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from openbook.release.commit import stage_lock\n"
        f"with stage_lock({str(stage)!r}):\n"
        "    print('writing', flush=True); time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "writing"
        settle(out)
        assert stage.is_dir()  # an executor still writes into it
    finally:
        child.kill()
        child.wait()
    settle(tmp_path / "other.parquet")
    assert stage.is_dir()  # another release's sweep never touches it
    settle(out)
    assert not stage.exists() and sorted(os.listdir(tmp_path)) == []


def test_output_name_checked(run, tmp_path):
    _, _, _, res, check = run
    with pytest.raises(ParameterError, match="NAME.parquet"):
        write_release(res, check, tmp_path / "rel.csv")


def test_published_rows_are_the_local_engines_release(run, tmp_path):
    """The same partition with the same labels: the Spark release's rows (QI labels and SA, as
    a multiset) are those of the local engine's Mondrian release of the same table — the labels
    decoded from each fragment's categorical codes are the local release's."""
    from openbook.algorithms import make_algorithm

    frame, table, model, res, check = run
    out = tmp_path / "rel.parquet"
    write_release(res, check, out)
    data = pq.read_table(out).to_pandas()
    local = make_algorithm("mondrian", model=model, strict=False).anonymize(table).data
    cols = ["q0", "q1", "q2", "sa"]

    def rows(df):
        return sorted(zip(*(df[c].astype(str) for c in cols)))

    assert rows(data) == rows(local[cols])
    assert len({r[:3] for r in rows(data)}) > 5  # several classes, not one
