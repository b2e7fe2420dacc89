"""Helpers of the CLI tests (imported by ``conftest.py`` and by tests): file snapshots and
an in-process run of ``openbook``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from openbook.cli import main


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Size and SHA-256 of every file under ``root`` (directories by name only)."""
    out: dict[str, tuple[int, str]] = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_dir():
            out[rel + "/"] = (0, "dir")
        elif p.is_file():
            out[rel] = (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def run_cli(capsys, argv) -> tuple[int, str, str]:
    """Run ``openbook argv`` in-process; argparse's own exits are caught and returned."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.strip().splitlines() if ln.strip() and not ln.startswith("openbook: warning")]
