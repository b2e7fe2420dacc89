"""A Spark release read back like any other (issue 25): ``check``, ``certify``, ``report``,
``audit`` and ``registry add`` take its folder (``s.parquet``) or its sidecar
(``s.parquet.json``); ``load_release`` verifies every part's digest and row count against
the sidecar, reads the parts in their published order and returns the local engine's
release of the same table, row for row; a torn, edited, missing or extra part file, or an
edited sidecar, is refused in one line naming it (exit code 2)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from openbook.release import load_release

from .conftest import random_frame
from cli_harness import error_lines, run_cli

QI = ["--qi", "q0:numeric,q1,q2:numeric", "--sa", "sa"]
MODEL = ["--algorithm", "mondrian", "-m", "k=3", "--max-risk", "1", "--quiet"]


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory):
    """One table, its Spark release (certified, several parts and fragments) and the local
    engine's release of it."""
    from openbook.cli import main

    folder = tmp_path_factory.mktemp("read")
    data = folder / "in.csv"
    random_frame(11, 240, card=6).to_csv(data, index=False)
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    try:
        assert main(["anonymize", str(data), *QI, *MODEL, "--engine", "spark", "--spark-max-fragment", "60",
                     "-o", str(folder / "s.parquet")]) == 0
    finally:
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "true")
    assert main(["anonymize", str(data), *QI, *MODEL, "-o", str(folder / "l.parquet")]) == 0
    return folder


def test_load_release_is_the_local_release_row_for_row(written):
    side = json.loads((written / "s.parquet.json").read_text())
    assert len(side["files"]["parts"]) >= 2 and side["certificate"]["verdict"] == "pass"
    for path in (written / "s.parquet", written / "s.parquet.json"):
        rel = load_release(path)
        local = load_release(written / "l.parquet")
        assert rel.kind == local.kind == "generalized"
        pd.testing.assert_frame_equal(rel.data, local.data)  # the published order too
        assert rel.classes()[1] == local.classes()[1] == side["n_groups"]
        assert rel.meta["check"] == local.meta["check"]


def test_check_reads_the_folder_and_its_sidecar(written, capsys):
    code, out, err = run_cli(capsys, ["check", written / "l.parquet", "--json"])
    assert code == 0, err
    local = json.loads(out)
    for path in (written / "s.parquet", written / "s.parquet.json"):
        code, out, err = run_cli(capsys, ["check", path, "--json"])
        assert code == 0, err
        got = json.loads(out)
        assert got["kind"] == "generalized release" and got["levels"] == local["levels"]
        assert got["identity"] == local["identity"]


def test_certify_report_audit_registry_read_it(written, capsys, tmp_path):
    data = written / "in.csv"
    code, out, err = run_cli(capsys, ["certify", written / "s.parquet", "--original", data, "--max-risk", "1",
                                      "--json", "--quiet"])
    assert code == 0, err
    cert = json.loads(out)
    side = json.loads((written / "s.parquet.json").read_text())["certificate"]
    assert cert["verdict"] == side["verdict"] == "pass"
    assert [ln["text"] for ln in cert["lines"]] == [ln["text"] for ln in side["lines"]]
    assert [(f["adversary"], f["max_posterior"], f["method"]) for f in cert["adversaries"]] == \
        [(f["adversary"], f["max_posterior"], f["method"]) for f in side["adversaries"]]
    code, _, err = run_cli(capsys, ["report", written / "s.parquet.json", "--original", data, "-o",
                                    tmp_path / "r.html", "--quiet"])
    assert code == 0 and (tmp_path / "r.html").stat().st_size > 0, err
    code, out, err = run_cli(capsys, ["audit", written / "s.parquet", "--adversary", "baseline", "--original", data,
                                      "--max-risk", "1", "--json", "--quiet"])
    assert code == 0 and json.loads(out)["n_published"] == 240, err
    code, _, err = run_cli(capsys, ["registry", "add", tmp_path / "reg", written / "s.parquet", "--name", "spark",
                                    "--quiet"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["registry", "list", tmp_path / "reg", "--json"])
    assert code == 0 and [e["name"] for e in json.loads(out)["releases"]] == ["spark"], err


def _broken(written, tmp_path, how):
    folder = tmp_path / "s.parquet"
    shutil.copytree(written / "s.parquet", folder)
    shutil.copy(written / "s.parquet.json", tmp_path / "s.parquet.json")
    parts = sorted(folder.glob("part-*.parquet"))
    if how == "edited":
        raw = bytearray(parts[0].read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        parts[0].write_bytes(bytes(raw))
    elif how == "torn":
        parts[-1].write_bytes(parts[-1].read_bytes()[: parts[-1].stat().st_size // 2])
    elif how == "missing":
        parts[0].unlink()
    elif how == "extra":
        shutil.copy(parts[0], folder / "part-99999.parquet")
    elif how == "sidecar":
        side = json.loads((tmp_path / "s.parquet.json").read_text())
        side["n_groups"] += 1
        (tmp_path / "s.parquet.json").write_text(json.dumps(side))
    return folder, parts


@pytest.mark.parametrize("how, needle", [
    ("edited", "{first} does not match its sidecar's digest"), ("torn", "{last} does not match its sidecar's digest"),
    ("missing", "{first} is missing"), ("extra", "part-99999.parquet"), ("sidecar", "edited after it was written"),
])
def test_a_broken_release_is_refused_in_one_line(written, tmp_path, capsys, how, needle):
    folder, parts = _broken(written, tmp_path, how)
    needle = needle.format(first=parts[0].name, last=parts[-1].name)
    for path in (folder, tmp_path / "s.parquet.json"):
        for cmd in (["check", path], ["certify", path, "--original", written / "in.csv"]):
            code, _, err = run_cli(capsys, cmd)
            lines = error_lines(err)
            assert code == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in err, (cmd, err)


def test_a_folder_that_is_no_release_is_refused(tmp_path, capsys):
    (tmp_path / "x.parquet").mkdir()
    code, _, err = run_cli(capsys, ["check", tmp_path / "x.parquet"])
    assert code == 2 and "is a directory" in err and len(error_lines(err)) == 1


def test_check_engine_spark_refuses_a_release(written, capsys):
    code, _, err = run_cli(capsys, ["check", written / "s.parquet", "--engine", "spark"])
    assert code == 2 and len(error_lines(err)) == 1 and "--engine local" in err
