"""Portable advisory locks on folders and files: the primitive under the folder lock and the
staging locks of :mod:`.commit` (docs/release-files.md, "Crash-safe writes").

**Exclusive locks** (:func:`lock_exclusive`, every read and write of a release path) go
through :func:`filelock.lock_descriptor` — ``flock(LOCK_EX)`` on POSIX, ``LockFileEx`` on one
byte on Windows — on a descriptor from :func:`open_lock`. On POSIX that descriptor is the
folder (or file) itself, as before this module: nothing is created in the folder (a release
in a read-only folder stays readable) and another process's plain ``flock`` on the folder
contends with ours. Windows cannot open a folder, so there a folder's lock is the hidden
file :data:`LOCK_FILE` in it (created on first use).

**Shared locks** (:func:`lock_shared`, the staging folders of the Spark engine's writes,
:func:`.commit.open_stage`) need ``flock(LOCK_SH)``: a stage is held by its driver *and* by
every executor writing into it at the same time, so an exclusive lock would deadlock them.
Where ``fcntl`` is missing (Windows) they are unavailable (:data:`HAS_SHARED` False): a
staged write is a one-line error there, and a sweep leaves every staging folder alone,
since it cannot tell a dead writer's from a live one's. Neither module imports ``fcntl``
unconditionally, so the release writer imports on every platform.
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import lock_descriptor, unlock_descriptor

try:  # POSIX only
    import fcntl

    #: shared locks (``flock(LOCK_SH)``) are available: POSIX
    HAS_SHARED = True
except ImportError:  # pragma: no cover - Windows
    HAS_SHARED = False
#: a folder's descriptor can be opened and locked (POSIX); otherwise it is locked through
#: :data:`LOCK_FILE` in it
FOLDER_DESCRIPTORS = os.name != "nt"
#: the lock file of a folder where a folder cannot be locked itself (Windows)
LOCK_FILE = ".openbook.lock"


def open_lock(path: str | os.PathLike[str]) -> int:
    """A descriptor to lock ``path`` (a folder or a file) with; the caller closes it."""
    p = Path(path)
    if p.is_dir() and not FOLDER_DESCRIPTORS:
        return os.open(p / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    return os.open(p, os.O_RDONLY)


def lock_exclusive(fd: int, *, blocking: bool = True) -> bool:
    """Lock ``fd`` exclusively: wait for it, or ``False`` at once when another holds it
    (``blocking=False``)."""
    return lock_descriptor(fd, blocking=blocking, poll_interval=0.02)


def lock_shared(fd: int) -> None:
    """Lock ``fd`` shared (waits while another holds it exclusively); POSIX only
    (:data:`HAS_SHARED`)."""
    if not HAS_SHARED:  # pragma: no cover - Windows
        raise OSError("shared file locks need POSIX flock")
    fcntl.flock(fd, fcntl.LOCK_SH)


def unlock(fd: int) -> None:
    """Release a lock taken on ``fd`` (closing ``fd`` releases it too)."""
    unlock_descriptor(fd)
