"""``openbook`` command line: ``datasets | check | anonymize | certify | audit | registry | report | experiment | demo``.

One module per command, each with ``add_parser(subparsers)`` and its ``cmd_*`` function;
options shared by several commands are defined once in :mod:`._common`. Bad input gets one
line on stderr and exit code 2, never a traceback and never a partial output file
(DESIGN.md). Heavy modules are imported inside the commands, so ``--help`` starts at once.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Sequence

from .. import __version__
from ..errors import OpenbookError, PrivacyLeakWarning
from . import (
    anonymize,
    audit,
    certify,
    check,
    datasets,
    demo,
    experiment,
    registry,
    report,
)
from ._common import Parser

#: the commands, in the order ``--help`` lists them
COMMANDS = (datasets, check, anonymize, certify, audit, registry, report, experiment, demo)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="openbook", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"openbook {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2, one line printed)
        return int(exc.code or 0) if isinstance(exc.code, (int, type(None))) else 2
    saved = os.environ.get("OPENBOOK_PROGRESS")
    if getattr(args, "quiet", False) or getattr(args, "json", False):
        os.environ["OPENBOOK_PROGRESS"] = "0"  # no progress display on stderr
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.showwarning = _show_warning  # one line, no source excerpt
            return int(args.func(args) or 0)
    except OpenbookError as exc:
        print(f"openbook: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("openbook: interrupted", file=sys.stderr)
        return 130
    finally:
        if saved is None:
            os.environ.pop("OPENBOOK_PROGRESS", None)
        else:
            os.environ["OPENBOOK_PROGRESS"] = saved


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"openbook: warning: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
