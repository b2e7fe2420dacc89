"""The ``openbook studio`` command without a browser: it prints a free port of 127.0.0.1, stops
cleanly on Ctrl-C (its worker ended, its session folder removed, exit code 0) even while a run
runs, and its dependencies are imported by it alone — ``openbook check`` starts as before."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Studio


def _workers(s: Studio) -> list[int]:
    return [p for p in s.children() if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]


@pytest.mark.slow
def test_ctrl_c_stops_the_studio_cleanly_even_during_a_run(tmp_path):
    session_tmp = tmp_path / "tmp"
    session_tmp.mkdir()
    s = Studio(["--dataset", "synthetic", "--out", str(tmp_path / "out")], cwd=tmp_path,
               env={"TMPDIR": str(session_tmp)})
    try:
        assert s.url.startswith("http://127.0.0.1:") and s.port > 0
        assert any(str((tmp_path / "out").resolve()) in line for line in s.lines)  # where releases go
        assert s.request("GET", "/api/state")[1]["data"]["name"] == "synthetic"
        assert len(list(session_tmp.iterdir())) == 1  # the session's folder
        status, made = s.request("POST", "/api/runs", {"models": "l=3", "algorithms": ["generalized-anatomy"]})
        assert status == 200, made
        deadline = time.time() + 30
        while not _workers(s) and time.time() < deadline:
            time.sleep(0.1)
        workers = _workers(s)
        assert len(workers) == 1
    finally:
        t0 = time.time()
        code = s.stop(signal.SIGINT)
    assert code == 0, s.errors
    assert time.time() - t0 < 15
    assert s.lines[-1] == "openbook studio: stopped"
    assert not any("Traceback" in line for line in s.errors), s.errors
    assert not Path(f"/proc/{workers[0]}").exists() or "Z" in Path(f"/proc/{workers[0]}/stat").read_text().split()[2]
    assert list(session_tmp.iterdir()) == []  # uploads and hierarchy files removed
    assert not (tmp_path / "out").exists()  # nothing published, nothing written


def test_a_bad_start_is_one_line_and_exit_code_2(tmp_path, capsys):
    from openbook.cli import main

    (tmp_path / "file").write_text("x")
    assert main(["studio", "--no-browser", "--out", str(tmp_path / "file")]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["studio", "--no-browser", "--port", "70000"]) == 2
    assert "not a port" in capsys.readouterr().err
    assert main(["studio", "--no-browser", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("openbook: error:") and "missing.csv" in err and err.count("\n") == 1


def test_check_does_not_import_the_studio(adult_dir):
    """``openbook check --dataset adult --json`` (and every parser, as ``openbook --help`` builds
    them) imports neither Starlette nor uvicorn nor the studio; importing the studio's app does
    (the probe can tell)."""
    probe = """
import json, sys
from openbook.cli import build_parser, main
build_parser(None)
code = main(["check", "--dataset", "adult", "--json"])
def studio_modules():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("starlette", "uvicorn", "playwright")
                  or m.startswith("openbook.studio"))
before = studio_modules()
import openbook.studio.app
print(json.dumps({"code": code, "before": before, "after": len(studio_modules())}))
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    assert result["before"] == []
    assert result["after"] > 0  # the probe sees them once the studio is imported
