"""``openbook check|anonymize --engine spark`` end to end (the session's Spark is reused), and
the refusals: one line, exit code 2, no file."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from openbook.cli import main
from openbook.spark.output import verify_folder

from .conftest import random_frame
from cli_harness import error_lines, run_cli, snapshot

QI = ["--qi", "q0:numeric,q1,q2:numeric", "--sa", "sa"]


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "in.csv"
    random_frame(4, 200, card=5).to_csv(path, index=False)
    return path


def test_cli_imports_spark_lazily():
    code = ("import sys; from openbook.cli import build_parser; build_parser(None); "
            "bad = [m for m in sys.modules if m.startswith(('pyspark', 'openbook.spark'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_check_engine_spark_equals_local(spark, capsys, data):
    assert main(["check", str(data), *QI, "--json", "--quiet"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["check", str(data), *QI, "--engine", "spark", "--spark-master", "local[2]", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["engine"] == "spark"
    assert got["levels"] == local["levels"]
    assert got["identity"]["prosecutor"] == local["identity"]["prosecutor"]


def test_anonymize_engine_spark_mondrian(spark, capsys, data, tmp_path):
    out = tmp_path / "rel.parquet"
    argv = ["anonymize", str(data), *QI, "--engine", "spark", "--algorithm", "mondrian", "--no-strict", "-m", "l=2",
            "--no-certify", "--spark-max-fragment", "40", "-o", str(out), "--json"]
    assert main(argv) == 0
    p = json.loads(capsys.readouterr().out)
    assert p["n_input"] == p["n_published"] + p["n_suppressed"] == 200 and p["n_fragments"] >= 4
    assert verify_folder(out)["files"]["rows"] == len(pq.read_table(out)) == 200
    # again without --force: refused, nothing changed
    before = snapshot(tmp_path)
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and len(error_lines(err)) == 1 and "--force" in err and snapshot(tmp_path) == before


@pytest.mark.parametrize("extra, needle", [
    (["--algorithm", "gg"], "runs --algorithm"),
    (["--algorithm", "mondrian", "--population-size", "1000"], "--population-size"),
    (["--algorithm", "mondrian", "--against-registry", "reg"], "--against-registry"),
    (["--algorithm", "mondrian", "--no-certify", "--skew", "r-suppression"], "--skew"),
    (["--algorithm", "mondrian", "--no-certify", "--spark-conf", "spark.executor.memory"], "KEY=VALUE"),
])
def test_anonymize_engine_spark_refusals(capsys, data, tmp_path, extra, needle):
    """Refused before Spark starts (no session needed)."""
    before = snapshot(tmp_path)
    code, _, err = run_cli(capsys, ["anonymize", str(data), *QI, "--engine", "spark", "-m", "k=2",
                                    "-o", str(tmp_path / "r.parquet"), *extra])
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err
    assert snapshot(tmp_path) == before


def test_missing_spark_is_one_line(capsys, data, tmp_path, monkeypatch):
    """Without PySpark or Java: one line saying how to install them, exit code 2."""
    import openbook.spark.session as session

    monkeypatch.setattr(session, "missing", lambda: "PySpark is not installed (pip install \"openbook[spark]\")")
    code, _, err = run_cli(capsys, ["check", str(data), *QI, "--engine", "spark"])
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and "openbook[spark]" in lines[0], err
