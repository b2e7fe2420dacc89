"""kill -9 of ``openbook anonymize`` on 10^6 rows, at random moments and aimed at the write
and commit phase; after each kill the real ``openbook check`` reads the output path and
either exits 0 on exactly the old release or exactly the new one (every file compared by
SHA-256), or — on a fresh path where nothing was committed — exits 2; no temporary file is
left behind after it (docs/release-files.md, "Crash-safe writes")."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from openbook.cli import main

RUN = "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
ARGS = ["--qi", "age:numeric,sex,race", "--sa", "occupation", "-m", "k=5", "--algorithm", "full-domain",
        "--max-suppression", "0.05", "--no-certify", "--quiet"]
OLD = ["--levels", "1,0,0"]
NEW = ["--levels", "2,0,0"]
KILLS = 20  # processes actually killed (return code -9)
OUT = "out.parquet"
#: what each attempt waits for before the kill: a temporary (the write phase), the commit
#: (journal or final sidecar in place: the roll-forward window), or a random moment; with
#: fresh/overwrite alternating in pairs every trigger meets both kinds of path
TRIGGERS = ("part", "committed", "random", "part", "random", "committed")


def _state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _anonymize(inp: Path, out: Path, levels: list[str], *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN, "anonymize", str(inp), *ARGS, *levels, "-o", str(out),
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _check(out: Path) -> tuple[int, str]:
    """The real CLI's ``check``, in this process (its recovery step included)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["check", str(out), "--json"])
    return code, err.getvalue()


def _wait_for(proc: subprocess.Popen, work: Path, out: Path, trigger: str, delay: float, fresh: bool) -> None:
    """Poll the folder until ``trigger`` happens (or the process ends), then sleep ``delay``."""
    side = out.with_name(out.name + ".json")
    ino = None if fresh else side.stat().st_ino
    journal = out.with_name("." + out.name + ".commit")
    while proc.poll() is None:
        names = os.listdir(work)
        if trigger == "part" and any(n.endswith(".part") for n in names):
            break
        if trigger == "committed" and (journal.name in names or (side.name in names and (
                fresh or _ino(side) != ino))):
            break
        time.sleep(0.002)
    time.sleep(delay)


def _ino(p: Path) -> int | None:
    try:
        return p.stat().st_ino
    except OSError:
        return None


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    from openbook.data.synthetic import synthetic_census

    folder = tmp_path_factory.mktemp("big")
    path = folder / "big.parquet"
    synthetic_census(1_000_000, seed=0)[["age", "sex", "race", "occupation"]].to_parquet(path, index=False)
    return path


@pytest.mark.slow
def test_kill_9_leaves_the_old_release_or_the_new_one(big, tmp_path):
    states, duration = {}, 0.0
    for name, levels in (("old", OLD), ("new", NEW)):
        d = tmp_path / name
        d.mkdir()
        t0 = time.perf_counter()
        assert _anonymize(big, d / OUT, levels).wait() == 0
        duration = time.perf_counter() - t0
        states[name] = _state(d)
    assert states["old"] != states["new"] and sorted(states["new"]) == [OUT, OUT + ".json"]
    rng = np.random.default_rng(20261124)
    outcomes = {"old": 0, "new": 0, "none": 0}
    aimed = killed = attempts = 0
    while killed < KILLS:
        attempts += 1
        assert attempts <= 2 * KILLS, f"only {killed} of {attempts} attempts killed a running anonymize"
        work = tmp_path / f"run{attempts}"
        fresh = attempts % 4 < 2  # half onto a fresh path, half over the old release with --force
        if fresh:
            work.mkdir()
        else:
            shutil.copytree(tmp_path / "old", work)
        out = work / OUT
        trigger = TRIGGERS[attempts % len(TRIGGERS)]
        proc = _anonymize(big, out, NEW, *([] if fresh else ["--force"]))
        if trigger == "random":
            time.sleep(float(rng.uniform(0.05, 0.95)) * duration)
        else:  # the write phase comes last: poll the folder from a third of the run on
            time.sleep(0.3 * duration)
            _wait_for(proc, work, out, trigger, float(rng.uniform(0.0, 0.03)) if trigger == "part" else 0.0, fresh)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        was_killed = proc.returncode == -signal.SIGKILL
        code, err = _check(out)
        got = _state(work)  # after the check: no temporary, no journal may remain
        if code == 0 and got == states["new"]:
            outcome = "new"
        elif code == 0 and not fresh and got == states["old"]:
            outcome = "old"
        elif code == 2 and fresh and got == {} and "no such file" in err:
            outcome = "none"
        else:
            pytest.fail(f"attempt {attempts} ({'fresh' if fresh else 'overwrite'}, {trigger}, exit "
                        f"{proc.returncode}): check exited {code} ({err.strip()}) on {sorted(got)}")
        if was_killed:
            killed += 1
            outcomes[outcome] += 1
            aimed += trigger != "random"
        shutil.rmtree(work)
    # real kills hit both sides of the commit, and a good share was aimed at the write phase
    assert outcomes["new"] >= 1 and outcomes["old"] >= 1 and outcomes["none"] >= 1, outcomes
    assert aimed >= KILLS // 3, (aimed, outcomes)


def test_check_refuses_a_torn_pair(tmp_path, capsys, small_frame):
    """A torn pair made by hand (new data beside the old sidecar): refused, not read."""
    from openbook.release.io import sidecar_path

    from cli_harness import run_cli

    small_frame.to_csv(tmp_path / "p.csv", index=False)
    base = ["anonymize", tmp_path / "p.csv", "--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name",
            "--algorithm", "mondrian", "--quiet"]
    assert run_cli(capsys, [*base, "-m", "k=2", "-o", tmp_path / "a.csv"])[0] == 0
    assert run_cli(capsys, [*base, "-m", "k=5", "-o", tmp_path / "b.csv"])[0] == 0
    os.replace(tmp_path / "b.csv", tmp_path / "a.csv")  # b's data, a's sidecar
    code, out, err = run_cli(capsys, ["check", tmp_path / "a.csv"])
    assert code == 2 and "digest" in err and sidecar_path(tmp_path / "a.csv").is_file()


# ---------------------------------------------------------------------------------------
# the Spark engine's commit: a kill at every step
# ---------------------------------------------------------------------------------------
#: ``openbook anonymize --engine spark`` that SIGKILLs itself at the k-th file-system step of
#: writing its release (every rename, removal, creation and sync the driver makes from the
#: moment it starts writing: the staging folder, the parts' clean-up, the journaled commit)
SPARK_KILL_AT = r"""
import os, shutil, signal, sys
k = int(sys.argv[1])
calls, armed = [0], [False]


def gate(f):
    def g(*a, **kw):
        if armed[0]:
            calls[0] += 1
            if calls[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **kw)
    return g


import openbook.spark.output as output
write = output.write_release


def armed_write(*a, **kw):
    armed[0] = True
    try:
        return write(*a, **kw)
    finally:
        armed[0] = False


output.write_release = armed_write
os.replace, os.rename, os.unlink, os.mkdir, os.rmdir, os.fsync = map(
    gate, (os.replace, os.rename, os.unlink, os.mkdir, os.rmdir, os.fsync))
shutil.rmtree = gate(shutil.rmtree)
from openbook.cli import main
code = main(sys.argv[2:])
print("STEPS", calls[0], flush=True)
sys.exit(code)
"""
#: kill steps drawn per mode beside the first two and last two (``OPENBOOK_KILL_ALL=1``: every step)
KILL_SAMPLE = 6
SPARK_ARGS = ["--qi", "q0:numeric,q1,q2:numeric", "--sa", "sa", "--engine", "spark", "--spark-master", "local[1]",
              "--algorithm", "mondrian", "--no-certify", "--quiet"]


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (hidden ones too) -> SHA-256 of its bytes (``dir`` for a
    folder): a leftover staging folder, temporary or journal shows here."""
    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _spark_run(inp: Path, out: Path, model: str, k: int, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SPARK_KILL_AT, str(k), "anonymize", str(inp), *SPARK_ARGS, "-m", model,
                           "-o", str(out), *extra], capture_output=True, text=True, cwd=out.parent.parent)


@pytest.mark.slow
def test_spark_commit_kill_at_every_step(tmp_path):
    """``anonymize --engine spark`` killed (SIGKILL) at every step of writing its release —
    before the staging folder exists, with the parts written, before and after the journal,
    between the renames, while the old folder is set aside and removed — onto a fresh path
    and over an old release (``--force``): the next reader (``openbook check``, which
    settles the path first) sees exactly the old release, exactly the new one, or (fresh, not
    committed) nothing; never the new folder with the old sidecar, and no journal, temporary
    or staging folder is left behind. Every step with ``OPENBOOK_KILL_ALL=1``; by default the
    first and last two of each mode and a sample drawn with a daily seed (the message names it)."""
    from openbook.spark.session import missing

    if missing():
        if os.environ.get("OPENBOOK_REQUIRE_SPARK") == "1":
            pytest.fail(f"the Spark engine cannot run here ({missing()}) but OPENBOOK_REQUIRE_SPARK=1")
        pytest.skip(f"Spark engine unavailable: {missing()}")
    import pandas as pd

    rng = np.random.default_rng(4)
    inp = tmp_path / "in.csv"
    pd.DataFrame({"q0": rng.integers(0, 5, 60) * 3 + 17, "q1": [f"v{x}" for x in rng.integers(0, 4, 60)],
                  "q2": rng.integers(0, 6, 60), "sa": [f"s{x}" for x in rng.integers(0, 3, 60)]}).to_csv(inp, index=False)
    states, steps = {}, {}
    for name, model, extra in (("old", "k=3", ()), ("new", "k=5", ())):
        (tmp_path / name).mkdir()
        done = _spark_run(inp, tmp_path / name / "out.parquet", model, 10**9, *extra)
        assert done.returncode == 0, done.stderr[-2000:]
        states[name] = _tree(tmp_path / name)
        steps["fresh"] = int(done.stdout.split("STEPS")[-1])
    assert states["old"] != states["new"] and {p.split("/")[0] for p in states["new"]} == {"out.parquet",
                                                                                            "out.parquet.json"}
    shutil.copytree(tmp_path / "old", tmp_path / "full")
    done = _spark_run(inp, tmp_path / "full" / "out.parquet", "k=5", 10**9, "--force")
    assert done.returncode == 0 and _tree(tmp_path / "full") == states["new"], done.stderr[-2000:]
    steps["overwrite"] = int(done.stdout.split("STEPS")[-1])
    assert steps["overwrite"] > steps["fresh"] >= 10  # setting the old folder aside and removing it are steps too
    # every step with OPENBOOK_KILL_ALL=1 (a JVM per kill: about 13 minutes on 2 cores); else
    # the first two and last two steps of each mode and KILL_SAMPLE more drawn with a seed that
    # changes every day (OPENBOOK_KILL_SEED to replay one), so CI covers every step over time
    seed = int(os.environ.get("OPENBOOK_KILL_SEED", datetime.date.today().toordinal()))
    jobs = []
    for mode in ("fresh", "overwrite"):
        every = list(range(1, steps[mode] + 1))
        if os.environ.get("OPENBOOK_KILL_ALL") != "1":
            rest = every[2:-2]
            pick = np.random.default_rng([seed, len(mode)]).choice(len(rest), min(KILL_SAMPLE, len(rest)),
                                                                   replace=False)
            every = sorted(every[:2] + every[-2:] + [rest[i] for i in pick])
        jobs += [(mode, k) for k in every]

    def kill(job):
        mode, k = job
        work = tmp_path / f"{mode}{k}"
        if mode == "fresh":
            work.mkdir()
        else:
            shutil.copytree(tmp_path / "old", work)
        return job, _spark_run(inp, work / "out.parquet", "k=5", k, *(["--force"] if mode == "overwrite" else []))

    from concurrent.futures import ThreadPoolExecutor

    seen: dict[str, list[str]] = {"fresh": [], "overwrite": []}
    with ThreadPoolExecutor(2) as pool:
        for (mode, k), r in sorted(pool.map(kill, jobs)):
            assert r.returncode == -signal.SIGKILL, (mode, k, r.returncode, r.stderr[-1000:])
            work = tmp_path / f"{mode}{k}"
            code, err = _check(work / "out.parquet")
            got = _tree(work)  # after the check: what it left
            if code == 0 and got == states["new"]:
                seen[mode].append("new")
            elif code == 0 and mode == "overwrite" and got == states["old"]:
                seen[mode].append("old")
            elif code == 2 and mode == "fresh" and got == {} and "no such file" in err:
                seen[mode].append("none")
            else:
                pytest.fail(f"{mode}, killed at step {k} of {steps[mode]} (OPENBOOK_KILL_SEED={seed}): check exited {code} ({err.strip()}) on "
                            f"{sorted(got)}")
            shutil.rmtree(work)
    for mode, before in (("fresh", "none"), ("overwrite", "old")):
        s = seen[mode]
        assert before in s and "new" in s and s == sorted(s, key=lambda x: x == "new"), (mode, s)
