"""The bad-input harness every CLI test shares: an invocation is *refused* when it exits with
code 2, prints exactly one line on stderr (``openbook: error: ...``; warnings aside), shows
no traceback, and leaves every file under the watched folder as it was (no new, changed or
removed file)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import pytest

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


@pytest.fixture()
def refused(capsys) -> Callable[..., str]:
    """``refused(root, argv, *needles)``: assert the invocation is refused (module docstring)
    and that its one error line contains every needle; returns that line."""

    def check(root: Path, argv, *needles: str) -> str:
        before = snapshot(root)
        code, out, err = run_cli(capsys, argv)
        lines = error_lines(err)
        assert code == 2, f"exit {code}, stdout={out!r}, stderr={err!r}"
        assert "Traceback" not in err, err
        assert len(lines) == 1, f"expected one error line, got {len(lines)}:\n{err}"
        assert lines[0].startswith("openbook: error: "), lines[0]
        for n in needles:
            assert n in lines[0], f"{n!r} not in {lines[0]!r}"
        assert snapshot(root) == before, "files changed under the watched folder"
        return lines[0]

    return check
