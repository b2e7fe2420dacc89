"""``openbook`` command line: ``datasets | check | anonymize | hierarchy | certify | audit |
registry | report | experiment | demo | key | studio``.

One module per command, each with ``add_parser(subparsers)`` and its ``cmd_*`` function;
options shared by several commands are defined once in :mod:`._common`. Bad input gets one
line on stderr and exit code 2, never a traceback and never a partial output file
(docs/design.md). Heavy modules are imported inside the commands, and a command line naming a
command builds only that command's parser (``openbook --help`` builds them all), so a short
command such as ``openbook check --dataset adult`` starts at once (``bench/bench_startup.py``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import warnings
from typing import Sequence

from .. import __version__
from ..errors import INTERFACE, DataWarning, OpenbookError, PrivacyLeakWarning
from ._common import Parser

#: the commands, in the order ``--help`` lists them (each the module ``openbook.cli.<name>``)
COMMANDS = ("datasets", "check", "anonymize", "hierarchy", "certify", "audit", "registry", "report", "experiment",
            "demo", "key", "studio")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``openbook`` parser: every command, or only the command ``only``."""
    p = Parser(prog="openbook", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"openbook {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return p


def command() -> int:
    """The ``openbook`` program (its console script): :func:`main` in a process whose
    allocators give memory back (:func:`configure_process`)."""
    configure_process()
    return main()


def configure_process() -> None:
    """Allocators of a batch process, set before the first array (the ``openbook`` command;
    ``bench/bench_anonymize.py`` measures it): Arrow's default pool (mimalloc) keeps freed
    pages for reuse, so after a 10^7-row file was read and encoded 5-20 bytes a row stayed
    resident for the rest of the run; the system allocator gives them back, and encodes no
    slower (``ARROW_DEFAULT_MEMORY_POOL``, read when pyarrow is first imported; a value the
    user set is kept). (A fixed glibc mmap threshold saved another ~6 bytes a row and cost
    ~7 % of the run's time: not set.)"""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2, one line printed)
        return int(exc.code or 0) if isinstance(exc.code, (int, type(None))) else 2
    token = INTERFACE.set("cli")  # messages name the command line's flags (errors.option)
    saved = os.environ.get("OPENBOOK_PROGRESS")
    if getattr(args, "quiet", False) or getattr(args, "json", False):
        os.environ["OPENBOOK_PROGRESS"] = "0"  # no progress display on stderr
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.simplefilter("always", DataWarning)
            # numpy's floating-point notes ("invalid value encountered in divide") are not a
            # user's concern: a result they affect is a bug a test must catch, not a warning line
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.showwarning = _show_warning  # one line, no source excerpt
            return int(args.func(args) or 0)
    except OpenbookError as exc:
        print(f"openbook: error: {exc}", file=sys.stderr)
        if getattr(args, "json", False):  # a machine reading stdout gets the error too, as JSON
            print(json.dumps(_error_object(exc), default=str))
        return exc.exit_code
    except KeyboardInterrupt:
        print("openbook: interrupted", file=sys.stderr)
        return 130
    except RecursionError:  # a TOML, JSON or sidecar nested thousands deep
        print("openbook: error: an input is nested too deeply to read (a TOML or JSON file of thousands of "
              "nested levels)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of stdout went away (``| head``): stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except OSError as exc:  # the file system refused (disk full, a file too large, permissions)
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"openbook: error: {exc.strerror or exc}{where} (nothing was left half-written)", file=sys.stderr)
        return 2
    finally:
        INTERFACE.reset(token)
        if saved is None:
            os.environ.pop("OPENBOOK_PROGRESS", None)
        else:
            os.environ["OPENBOOK_PROGRESS"] = saved


def _error_object(exc: OpenbookError) -> dict:
    """``--json``'s error: the kind (``error``, or ``refused`` for a failing certificate, exit 3),
    the message, the exit code, and the offending column, value, parameter or adversary."""
    out = {"error": "refused" if exc.exit_code == 3 else type(exc).__name__, "message": str(exc),
           "exit_code": exc.exit_code}
    for key in ("column", "value", "parameter", "path", "adversary", "n_people", "worst"):
        v = getattr(exc, key, None)
        if v is not None:
            out[key] = v
    return out


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"openbook: warning: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
