"""The commit protocol of release writes, at every point a kill can stop it: before the
journal (old files intact, temporaries removed by the next access), after the journal with
some renames done (the next access rolls the rest forward), and a journal that is torn (it
was never committed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbook.release import io

TOKEN = "0123456789ab"  # the 12 hex digits of a temporary name


def _files(folder: Path, tag: str) -> None:
    for name in ("r.csv", "r.sa.csv", "r.csv.json"):
        (folder / name).write_text(f"{tag}:{name}")


def _content(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def _stage(folder: Path, tag: str) -> list[tuple[str, str]]:
    renames = []
    for name in ("r.csv", "r.sa.csv", "r.csv.json"):
        tmp = f".{name}.{TOKEN}{io.PART}"
        (folder / tmp).write_text(f"{tag}:{name}")
        renames.append((tmp, name))
    return renames


def test_killed_before_the_journal_keeps_the_old_release(tmp_path):
    _files(tmp_path, "old")
    _stage(tmp_path, "new")
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"old:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


@pytest.mark.parametrize("done", [0, 1, 2, 3])
def test_killed_after_the_journal_rolls_forward(tmp_path, done):
    _files(tmp_path, "old")
    renames = _stage(tmp_path, "new")
    (tmp_path / ".r.csv.commit").write_text(json.dumps({"renames": renames, "deletes": []}))
    for tmp, final in renames[:done]:
        (tmp_path / tmp).replace(tmp_path / final)
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"new:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


def test_a_torn_journal_was_never_committed(tmp_path):
    _files(tmp_path, "old")
    _stage(tmp_path, "new")
    (tmp_path / ".r.csv.commit").write_text('{"renames": [[".r.csv.0123456789ab.part", "r.c')
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"old:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


def test_commit_deletes_an_old_sa_table(tmp_path):
    _files(tmp_path, "old")
    writers = {tmp_path / "r.csv": lambda t: t.write_text("new"), tmp_path / "r.csv.json": lambda t: t.write_text("{}")}
    io.commit(tmp_path / "r.csv", writers, deletes=[tmp_path / "r.sa.csv"])
    assert _content(tmp_path) == {"r.csv": "new", "r.csv.json": "{}"}


def test_the_sweep_removes_only_our_own_temporaries(tmp_path):
    _files(tmp_path, "old")
    ours = [f".r.csv.{TOKEN}{io.PART}", f".r.csv.json.{TOKEN}{io.PART}", f".r.sa.csv.{TOKEN}{io.PART}",
            f"..r.csv.commit.{TOKEN}{io.PART}"]  # the journal's own temporary
    foreign = [".r.csv.abc.part", f".r.csv.{TOKEN}{io.PART}.bak", f".other.csv.{TOKEN}{io.PART}",
               f"r.csv.{TOKEN}{io.PART}", f".r.csv.{TOKEN.upper()}{io.PART}", f".rXcsv.{TOKEN}{io.PART}"]
    for name in ours + foreign:
        (tmp_path / name).write_text("x")
    io.recover(tmp_path / "r.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["r.csv", "r.csv.json", "r.sa.csv", *foreign])


def test_a_live_writers_temporaries_are_not_swept(tmp_path):
    """A writer holds the folder lock while its temporaries exist: a reader's settle waits
    for it, and sweeps only what a writer that died left behind."""
    import subprocess
    import sys
    import threading
    import time

    tmp = tmp_path / f".r.csv.{TOKEN}{io.PART}"
    writer = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(tmp_path)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
        f"open({str(tmp)!r}, 'w').write('half'); print('locked', flush=True); time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "locked"
        done = threading.Event()
        t = threading.Thread(target=lambda: (io.settle(tmp_path / "r.csv"), done.set()), daemon=True)
        t.start()
        time.sleep(0.5)
        assert not done.is_set() and tmp.exists()  # waiting on the live writer, its file untouched
        writer.kill()  # the writer dies without a journal: its temporary is stale now
        writer.wait()
        assert done.wait(10)
        assert not tmp.exists()
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


KILL_AT = r"""
import os, shutil, signal, sys
from pathlib import Path
from openbook.release import commit as c

folder, k = Path(sys.argv[1]), int(sys.argv[2])
calls = [0]


def gate(f):
    def g(*a, **kw):
        calls[0] += 1
        if calls[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **kw)
    return g


p, side = folder / "r.parquet", folder / "r.parquet.json"
stage = c.stage_name(p)
stage.mkdir()
for i in range(2):
    (stage / f"part-{i}.parquet").write_text(f"new{i}")
os.replace, shutil.rmtree, os.fsync = gate(os.replace), gate(shutil.rmtree), gate(os.fsync)
c.commit(p, {p: lambda tmp: os.replace(stage, tmp), side: lambda tmp: tmp.write_text("new-side")}, [p, side])
print(calls[0])
"""


def _folder_release(folder: Path) -> dict[str, str]:
    """The release a reader sees: the folder's part files and the sidecar (hidden staging
    folders, which only a killed Spark writer leaves, aside); nothing else may be there."""
    from openbook.release import commit

    with commit.folder_lock(folder):
        commit.recover(folder / "r.parquet", [folder / "r.parquet", folder / "r.parquet.json"])
    entries = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".stage"))
    assert set(entries) <= {"r.parquet", "r.parquet.json"}, entries  # no journal, temporary or set-aside folder
    out = {}
    if (folder / "r.parquet").is_dir():
        out.update({f"r.parquet/{p.name}": p.read_text() for p in sorted((folder / "r.parquet").iterdir())})
    if (folder / "r.parquet.json").exists():
        out["r.parquet.json"] = (folder / "r.parquet.json").read_text()
    return out


def test_replacing_a_release_folder_survives_a_kill_at_every_step(tmp_path):
    """An old release folder replaced (the Spark engine's --force): killed (SIGKILL) before
    every rename, removal and sync of the commit, the next reader sees exactly the old release
    or exactly the new one — the old folder is set aside inside the journaled commit."""
    import subprocess
    import sys

    old = {"r.parquet/part-0.parquet": "old0", "r.parquet/part-9.parquet": "old9", "r.parquet.json": "old-side"}
    new = {"r.parquet/part-0.parquet": "new0", "r.parquet/part-1.parquet": "new1", "r.parquet.json": "new-side"}

    def setup(folder: Path) -> None:
        folder.mkdir()
        (folder / "r.parquet").mkdir()
        (folder / "r.parquet" / "part-0.parquet").write_text("old0")
        (folder / "r.parquet" / "part-9.parquet").write_text("old9")
        (folder / "r.parquet.json").write_text("old-side")

    def run(folder: Path, k: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", KILL_AT, str(folder), str(k)], capture_output=True, text=True)

    setup(tmp_path / "full")
    done = run(tmp_path / "full", 10**9)
    assert done.returncode == 0, done.stderr
    steps = int(done.stdout.strip())
    assert steps >= 8 and _folder_release(tmp_path / "full") == new
    seen = []
    for k in range(1, steps + 1):
        folder = tmp_path / f"k{k}"
        setup(folder)
        r = run(folder, k)
        assert r.returncode == -9, (k, r.returncode, r.stderr[-500:])
        got = _folder_release(folder)
        assert got in (old, new), (k, got)
        seen.append("old" if got == old else "new")
    assert "old" in seen and "new" in seen
    assert seen == sorted(seen, key=lambda s: s == "new")  # old until the commit point, new after
