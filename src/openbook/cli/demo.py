"""``openbook demo``: the end-to-end story on the built-in data."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ._common import output_options


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from ..demo import run_demo
    from ..errors import ParameterError

    if args.out is None:  # never into the current folder: a fresh folder, printed at the end
        out = Path(tempfile.mkdtemp(prefix="openbook-demo-"))
    else:
        out = Path(args.out)
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ParameterError(f"--out {out}: give a new or empty folder (the demo never overwrites files)",
                                 parameter="out", value=str(out))
    payload = run_demo(out_dir=out, quiet=args.json)
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
    return 0


def add_parser(sub: Any) -> None:
    m = sub.add_parser("demo", help="the end-to-end story on the built-in data")
    m.add_argument("--out", metavar="DIR", help="a new or empty folder for the demo's releases and reports "
                   "(default: a fresh temporary folder, printed at the end)")
    output_options(m)
    m.set_defaults(func=cmd_demo)
