"""The bad-input harness every CLI test shares: an invocation is *refused* when it exits with
code 2, prints exactly one line on stderr (``openbook: error: ...``; warnings aside), shows
no traceback, and leaves every file under the watched folder as it was (no new, changed or
removed file)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from cli_harness import error_lines, run_cli, snapshot  # noqa: F401  (re-exported)


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
