"""kill -9 at random moments of ``openbook anonymize`` on 10^6 rows: afterwards, as every
openbook command sees the folder (after its recovery step), the old release is intact or
the new one complete — never a mix — and no temporary file is left behind."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from openbook.release.io import folder_lock, recover

RUN = "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
ARGS = ["--qi", "age:numeric,sex,race,workclass", "--sa", "occupation", "-m", "k=5", "--algorithm", "full-domain",
        "--max-suppression", "0.05", "--no-certify", "--quiet", "--identifiers",
        "education,marital_status,native_country"]
OLD = ["--levels", "1,0,0,0"]
NEW = ["--levels", "2,0,0,0"]
KILLS = 22


def _state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _anonymize(inp: Path, out: Path, levels: list[str], *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN, "anonymize", str(inp), *ARGS, *levels, "-o", str(out),
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    from openbook.data.synthetic import synthetic_census

    folder = tmp_path_factory.mktemp("big")
    path = folder / "big.parquet"
    synthetic_census(1_000_000, seed=0).to_parquet(path, index=False)
    return path


@pytest.mark.slow
def test_kill_9_leaves_the_old_release_or_the_new_one(big, tmp_path):
    states = {}
    for name, levels in (("old", OLD), ("new", NEW)):
        d = tmp_path / name
        d.mkdir()
        t0 = time.perf_counter()
        assert _anonymize(big, d / "out.csv", levels).wait() == 0
        states[name] = (_state(d), time.perf_counter() - t0)
    old, new = states["old"][0], states["new"][0]
    duration = states["new"][1]
    rng = np.random.default_rng(20261124)
    outcomes = {"old": 0, "new": 0, "none": 0}
    for i in range(KILLS):
        work = tmp_path / f"run{i}"
        fresh = i % 2 == 0  # half onto a fresh path, half over the old release with --force
        if fresh:
            work.mkdir()
        else:
            shutil.copytree(tmp_path / "old", work)
        proc = _anonymize(big, work / "out.csv", NEW, *([] if fresh else ["--force"]))
        time.sleep(float(rng.uniform(0.4, 1.05)) * duration)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with folder_lock(work):  # what every openbook command does before it reads
            recover(work / "out.csv")
        got = _state(work)
        if got == new:
            outcomes["new"] += 1
        elif not fresh and got == old:
            outcomes["old"] += 1
        elif fresh and got == {}:
            outcomes["none"] += 1
        else:
            pytest.fail(f"kill {i} ({'fresh' if fresh else 'overwrite'}) left a mixed state: {sorted(got)}")
        shutil.rmtree(work)
    # the kills must have hit both sides of the commit for the test to mean something
    assert outcomes["new"] >= 1 and outcomes["old"] + outcomes["none"] >= 1, outcomes


def test_check_refuses_a_torn_pair(tmp_path, capsys, small_frame):
    """A torn pair made by hand (new data beside the old sidecar): refused, not read."""
    from cli_harness import run_cli

    from openbook.release.io import sidecar_path

    small_frame.to_csv(tmp_path / "p.csv", index=False)
    base = ["anonymize", tmp_path / "p.csv", "--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name",
            "--algorithm", "mondrian", "--quiet"]
    assert run_cli(capsys, [*base, "-m", "k=2", "-o", tmp_path / "a.csv"])[0] == 0
    assert run_cli(capsys, [*base, "-m", "k=5", "-o", tmp_path / "b.csv"])[0] == 0
    os.replace(tmp_path / "b.csv", tmp_path / "a.csv")  # b's data, a's sidecar
    code, out, err = run_cli(capsys, ["check", tmp_path / "a.csv"])
    assert code == 2 and "digest" in err and sidecar_path(tmp_path / "a.csv").is_file()
