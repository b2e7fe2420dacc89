"""The portable locks under the release writer (:mod:`openbook.release.locks`): the writer
imports where ``fcntl`` does not exist (Windows), a folder locked through its lock file
(the Windows form, exercised here on POSIX) excludes a second holder, and a staged write
without shared locks is a one-line error while the sweep leaves staging folders alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from openbook.errors import DataError
from openbook.release import commit, locks

NO_FCNTL = textwrap.dedent("""
    import sys
    sys.modules["fcntl"] = None  # as on Windows: `import fcntl` raises ImportError
    from pathlib import Path
    import openbook.release.io, openbook.release.commit as c, openbook.release.locks as locks
    assert locks.HAS_SHARED is False
    folder = Path(sys.argv[1])
    stage = folder / ".r.parquet.0123456789ab.held.stage"
    stage.mkdir()
    assert c.sweep(folder, ["r.parquet"]) == [] and stage.is_dir()  # liveness unknown: left alone
    try:
        c.open_stage(folder / "r.parquet")
    except Exception as exc:
        print(type(exc).__name__, exc)
""")


def test_the_release_writer_imports_without_fcntl(tmp_path):
    out = subprocess.run([sys.executable, "-c", NO_FCNTL, str(tmp_path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("DataError") and "POSIX shared file locks" in out.stdout, out.stdout


@pytest.mark.parametrize("descriptors", [True, False])
def test_a_held_folder_lock_excludes_another_holder(tmp_path, monkeypatch, descriptors):
    monkeypatch.setattr(locks, "FOLDER_DESCRIPTORS", descriptors)
    with commit.folder_lock(tmp_path):
        assert (tmp_path / locks.LOCK_FILE).exists() != descriptors
        fd = locks.open_lock(tmp_path)  # a second open file: contends like another process
        try:
            assert locks.lock_exclusive(fd, blocking=False) is False
        finally:
            os.close(fd)
    fd = locks.open_lock(tmp_path)
    try:
        assert locks.lock_exclusive(fd, blocking=False) is True
        locks.unlock(fd)
    finally:
        os.close(fd)


def test_a_folder_lock_times_out_with_a_one_line_error(tmp_path):
    fd = locks.open_lock(tmp_path)
    try:
        assert locks.lock_exclusive(fd)
        with pytest.raises(DataError, match="is busy"):
            with commit.path_lock(tmp_path, timeout=0.1):
                pass
    finally:
        os.close(fd)


def test_a_shared_stage_lock_keeps_the_sweep_out(tmp_path):
    """Two shared holders at once (a driver and an executor); the sweep removes the stage
    only once neither holds it."""
    final = tmp_path / "r.parquet"
    stage, held = commit.open_stage(final)
    with commit.stage_lock(stage):  # a second shared holder does not wait for the first
        os.close(held)
        with commit.folder_lock(tmp_path):
            assert commit.sweep(tmp_path, [final.name]) == [] and stage.is_dir()
    with commit.folder_lock(tmp_path):
        assert commit.sweep(tmp_path, [final.name]) == [stage] and not stage.exists()
