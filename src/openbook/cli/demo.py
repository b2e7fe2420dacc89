"""``openbook demo``: the end-to-end story on the built-in data."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ._common import output_options


def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    payload = run_demo(out_dir=Path(args.out), quiet=args.json)
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
    return 0


def add_parser(sub: Any) -> None:
    m = sub.add_parser("demo", help="the end-to-end story on the built-in data")
    m.add_argument("--out", default="openbook-demo", help="folder for the demo's release files")
    m.add_argument("--quiet", action="store_true", help="no progress display")
    output_options(m)
    m.set_defaults(func=cmd_demo)
