"""Crash-safe writes of several files as one unit, and the folder lock every release read
and write takes (docs/release-files.md, "Crash-safe writes").

**Protocol** (:func:`commit`): every new file is written under a temporary name
(``.NAME.<12 hex>.part``) and synced; then a small *journal* (``.DATA.commit``) listing the
renames is written atomically — the commit point — and the renames are performed; the
journal is removed last. Everything happens under an exclusive lock on the folder
(``flock`` on POSIX; the locks are :mod:`.locks`).

A final path that is a folder (the Spark engine's partitioned Parquet release) cannot be
renamed over: the journal also lists it as *set aside* — renamed to a temporary name just
before its replacement is renamed into place, and removed after — so that step, too, is
rolled forward from the journal.

**Staging folders** (:func:`open_stage`): a writer that works for minutes *outside* the
folder lock (the Spark engine's executors writing the part files) writes into a hidden
``.NAME.<12 hex>.held.stage`` folder, created under the folder lock and held with a *shared*
``flock`` for as long as anyone writes into it — the driver from its creation until
:func:`commit` moves it under a temporary name, each executor while it writes its part
(:func:`stage_lock`). A stage nobody holds belongs to a dead writer: the sweep removes it
(it takes the lock exclusively first, so never while a writer lives).

**Recovery** (:func:`recover`, run under the same lock by every openbook read or write of a
release path): a journal present means the write committed, so the remaining renames are
rolled forward (an old folder is set aside only while its replacement still waits under its
temporary name); no journal means it never committed, so the old files are intact. Either
way the release's stale temporaries are then swept: only names of exactly our own pattern
(``.NAME.<12 hex>.part`` for a file ``NAME`` of that release) and only while holding the
lock — a live writer holds it for as long as its temporaries exist, so a sweep never removes
a concurrent writer's files. A kill at any moment therefore leaves, as every openbook command
sees it, the old release intact or the new one complete, and no temporary behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..errors import DataError
from .locks import HAS_SHARED, lock_exclusive, lock_shared, open_lock, unlock

JOURNAL = ".commit"
PART = ".part"
STAGE = ".stage"
#: the infix of a staging folder :func:`open_stage` holds (the sweep removes it once unheld)
HELD = ".held"
#: hex digits of a temporary name's random part
_TOKEN_BYTES = 6

#: locks this process holds: real path -> [descriptor, depth]
_HELD: dict[str, list[int]] = {}


@contextlib.contextmanager
def path_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Exclusive lock (:mod:`.locks`) on a folder or file for a read-modify-write; re-entrant within a
    process (a registry holding its folder may write releases into it). ``timeout``
    seconds without the lock is a one-line :class:`DataError`."""
    key = os.path.realpath(path)
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    fd = open_lock(path)
    try:
        if timeout is None:
            lock_exclusive(fd)
        else:
            deadline = time.monotonic() + timeout
            while not lock_exclusive(fd, blocking=False):
                if time.monotonic() > deadline:
                    raise DataError(f"{path} is busy: another process has held it for over {timeout:.0f} s",
                                    path=path) from None
                time.sleep(0.02)
        _HELD[key] = [fd, 1]
        try:
            yield
        finally:
            del _HELD[key]
            unlock(fd)
    finally:
        os.close(fd)


def folder_lock(folder: Path) -> contextlib.AbstractContextManager:
    """Exclusive lock on a folder for a read-modify-write of a release in it."""
    return path_lock(folder)


def journal_path(path: Path) -> Path:
    """The commit journal of the release whose data (or database) file is ``path``."""
    return path.with_name("." + path.name + JOURNAL)


def temp_name(final: Path) -> Path:
    """A fresh temporary name beside ``final`` (the pattern :func:`sweep` recognises)."""
    return final.with_name(f".{final.name}.{secrets.token_hex(_TOKEN_BYTES)}{PART}")


def stage_name(final: Path) -> Path:
    """A fresh staging name beside ``final`` for a writer that works *outside* the folder lock:
    ``.NAME.<12 hex>.stage``, which :func:`sweep` leaves alone — a concurrent reader's sweep
    must never remove a live writer's work. The writer removes it itself, or moves it under a
    :func:`temp_name` inside :func:`commit`; one a killed writer left behind stays (hidden)
    until removed by hand. :func:`open_stage` makes a staging folder the sweep *can* remove
    once its writer is dead."""
    return final.with_name(f".{final.name}.{secrets.token_hex(_TOKEN_BYTES)}{STAGE}")


def open_stage(final: Path) -> tuple[Path, int]:
    """Create a staging folder beside ``final`` (``.NAME.<12 hex>.held.stage``) and hold it:
    returns its path and a descriptor holding a shared ``flock`` on it (close it once the
    stage has been committed or removed). Created under the folder lock, so a concurrent
    sweep sees it only once it is held; the sweep removes it once nobody holds it. Needs
    shared locks (POSIX, :mod:`.locks`): elsewhere a one-line :class:`DataError`."""
    _need_shared(final)
    with folder_lock(final.parent):
        stage = final.with_name(f".{final.name}.{secrets.token_hex(_TOKEN_BYTES)}{HELD}{STAGE}")
        os.mkdir(stage)
        fd = os.open(stage, os.O_RDONLY)
        try:
            lock_shared(fd)
        except BaseException:
            os.close(fd)
            raise
    return stage, fd


@contextlib.contextmanager
def stage_lock(stage: str | os.PathLike) -> Iterator[None]:
    """Hold a staging folder (shared ``flock``) while writing into it — what each Spark
    executor does around its part file, so that a reader's sweep never removes the stage
    under a live writer. A stage that is gone (its writer died and a sweep removed it) is
    an error."""
    _need_shared(Path(stage))
    fd = os.open(stage, os.O_RDONLY)
    try:
        lock_shared(fd)
        yield
    finally:
        os.close(fd)


def _need_shared(path: Path) -> None:
    if not HAS_SHARED:  # pragma: no cover - Windows
        raise DataError(f"cannot write {path}: a staged write (the Spark engine's) needs POSIX shared file locks",
                        path=path)


def _temp_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.[0-9a-f]{{{2 * _TOKEN_BYTES}}}{re.escape(PART)}$")


def _stage_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.[0-9a-f]{{{2 * _TOKEN_BYTES}}}{re.escape(HELD + STAGE)}$")


def _remove_if_dead(stage: Path) -> bool:
    """Remove a staging folder nobody holds (its writer died: :func:`open_stage`); ``False``
    when a writer still holds it, or when that cannot be told (no shared locks:
    :mod:`.locks`)."""
    if not HAS_SHARED:
        return False
    try:
        fd = os.open(stage, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            if not lock_exclusive(fd, blocking=False):  # held: a live writer
                return False
        except OSError:
            return False
        shutil.rmtree(stage)
        return True
    finally:
        os.close(fd)


def fsync_path(path: Path) -> None:
    """Flush a file's data, or a folder's entries (a rename is durable only once its folder is
    flushed), to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


fsync_dir = fsync_file = fsync_path


def sweep(folder: Path, names: Iterable[str]) -> list[Path]:
    """Remove the stale temporaries of the files ``names`` in ``folder`` (our own pattern
    only), and their staging folders that no live writer holds (:func:`open_stage`). Call
    with the folder lock held. Returns what was removed."""
    names = list(names)
    patterns = [_temp_pattern(n) for n in names]
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(".") and e.name.endswith((PART, STAGE))]
    except OSError:
        return removed
    stages = None
    for e in entries:
        if e.name.endswith(PART):
            if any(p.match(e.name) for p in patterns):
                with contextlib.suppress(OSError):
                    _remove(Path(e.path))
                    removed.append(Path(e.path))
            continue
        stages = [_stage_pattern(n) for n in names] if stages is None else stages
        if any(p.match(e.name) for p in stages):
            with contextlib.suppress(OSError):
                if _remove_if_dead(Path(e.path)):
                    removed.append(Path(e.path))
    return removed


def _remove(path: Path) -> None:
    """Remove a file, or a folder with everything in it (a release folder's temporary)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def recover(path: str | os.PathLike, files: Iterable[Path]) -> None:
    """Finish or undo an interrupted write of the release at ``path`` whose files are
    ``files`` (module docstring), then sweep their stale temporaries. Call with the folder
    lock held."""
    path = Path(path)
    folder = path.parent
    journal = journal_path(path)
    if journal.is_file():
        try:
            plan = json.loads(journal.read_text())
            renames, deletes, asides = plan["renames"], plan.get("deletes", []), plan.get("asides", [])
            if not all(isinstance(n, str) and "/" not in n
                       for n in [*(n for row in [*renames, *asides] for n in row), *deletes]) or \
                    not all(len(row) == 3 for row in asides):
                raise TypeError("journal")
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
            # a journal is renamed into place whole, so an unreadable one was never committed
            journal.unlink(missing_ok=True)
        else:
            try:
                for final, aside, tmp in asides:  # only while the replacement still waits
                    if (folder / tmp).exists() and os.path.lexists(folder / final):
                        os.replace(folder / final, folder / aside)
                for tmp, final in renames:
                    if (folder / tmp).exists():
                        os.replace(folder / tmp, folder / final)
                for name in deletes:
                    _remove(folder / name)
                fsync_dir(folder)
                journal.unlink()
                fsync_dir(folder)
            except PermissionError as exc:
                raise DataError(f"an interrupted write of {path} needs recovery, which needs write access to "
                                f"{folder}", path=path) from exc
    sweep(folder, [p.name for p in files] + [journal.name])


def commit(path: Path, writers: dict[Path, Callable[[Path], Any]], files: Iterable[Path], *,
           deletes: Iterable[Path] = ()) -> list[Path]:
    """Write every ``final -> write(tmp)`` of ``writers`` crash-safely as one unit (module
    docstring); ``deletes`` are removed in the same commit; ``files`` are every file the
    release at ``path`` may own (for recovery). A final path that exists as a folder, or
    that a folder replaces, is set aside and removed in the same commit (the caller has
    checked that it may be replaced). Returns the final paths."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    files = list(files)
    with folder_lock(folder):
        recover(path, files)
        temps: dict[Path, Path] = {}
        journal = journal_path(path)
        try:
            for final, write in writers.items():
                tmp = temp_name(final)
                temps[final] = tmp
                write(tmp)
                fsync_file(tmp)
            asides = [[f.name, temp_name(f).name, t.name] for f, t in temps.items()
                      if os.path.lexists(f) and (_is_folder(f) or _is_folder(t))]
            jtmp = temp_name(journal)
            temps[journal] = jtmp
            jtmp.write_text(json.dumps({"renames": [[t.name, f.name] for f, t in temps.items() if f != journal],
                                        "deletes": [d.name for d in deletes] + [a[1] for a in asides],
                                        "asides": asides}))
            fsync_file(jtmp)
            fsync_dir(folder)
            os.replace(jtmp, journal)  # the commit point
        except BaseException:
            for t in temps.values():
                _remove(t)
            raise
        fsync_dir(folder)
        recover(path, files)  # perform the renames and remove the journal
    return list(writers)


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def write_plain(path: str | os.PathLike, write: Callable[[Path], Any]) -> Path:
    """Write one file atomically (temporary name, sync, rename) under the folder lock,
    sweeping stale temporaries of the same name left by a killed earlier write."""
    path = Path(path)
    with folder_lock(path.parent):
        sweep(path.parent, [path.name])
        tmp = temp_name(path)
        try:
            write(tmp)
            fsync_file(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return path
