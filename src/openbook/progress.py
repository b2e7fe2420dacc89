"""Progress bars on long work (rich), shown only when stderr is a terminal, so piped,
``--json`` and CI output stay clean. ``OPENBOOK_PROGRESS=0`` turns them off."""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Iterator, TypeVar

T = TypeVar("T")


#: depth of :func:`silenced` blocks: work run many times inside one bar draws none of its own
_SILENCED = 0


def enabled() -> bool:
    return _SILENCED == 0 and os.environ.get("OPENBOOK_PROGRESS", "1") != "0" and sys.stderr.isatty()


class silenced:
    """No bar or spinner inside the block (an algorithm re-run thousands of times under one
    adversary's bar)."""

    def __enter__(self) -> "silenced":
        global _SILENCED
        _SILENCED += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        global _SILENCED
        _SILENCED -= 1


_CONSOLE = None


def _console():
    """The one stderr console every bar and spinner draws on: a bar started inside a running
    spinner or bar (an adversary's units inside the certificate) nests below it instead of
    fighting it for the terminal."""
    global _CONSOLE
    if _CONSOLE is None:
        from rich.console import Console

        _CONSOLE = Console(stderr=True)
    return _CONSOLE


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate ``items``, drawing a progress bar on stderr when it is a terminal."""
    if not enabled():
        yield from items
        return
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    items = list(items) if total is None and not hasattr(items, "__len__") else items
    n = total if total is not None else len(items)  # type: ignore[arg-type]
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=_console(), transient=True) as progress:
        task = progress.add_task(description, total=n)
        for item in items:
            yield item
            progress.advance(task)


class status:
    """A spinner with a message on stderr while a long step runs (no-op off a terminal)."""

    def __init__(self, message: str) -> None:
        self.message = message
        self._status: Any = None

    def __enter__(self) -> "status":
        if enabled():
            self._status = _console().status(self.message)
            self._status.__enter__()
        return self

    def update(self, message: str) -> None:
        if self._status is not None:
            self._status.update(message)

    def __exit__(self, *exc) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)
