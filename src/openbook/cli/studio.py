"""``openbook studio``: the measure → apply → compare → publish loop in a local web page
(:mod:`openbook.studio`; docs/studio.md). Its dependencies (Starlette, uvicorn) are the
optional extra ``openbook[studio]``, imported only when this command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import POSITIVE_INT

#: where releases go when --out is not given (relative to the working folder)
DEFAULT_OUT = "openbook-studio"


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535; 0 picks a free one)")
    return int(text)


def cmd_studio(args: argparse.Namespace) -> int:
    from ..errors import ParameterError

    missing = []
    for module in ("starlette", "uvicorn"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise ParameterError(f"openbook studio needs its optional dependencies ({', '.join(missing)} missing): "
                             "pip install 'openbook[studio]'", parameter="studio")
    if args.input and args.dataset:
        raise ParameterError("give either a data file or --dataset, not both", parameter="dataset")
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise ParameterError(f"--out {args.out}: a file, not a folder", parameter="out", value=args.out)
    from ..studio.server import serve

    return serve(data=args.input, dataset=args.dataset, port=args.port, out_dir=out,
                 open_browser=not args.no_browser, max_upload_mb=args.max_upload_mb)


def add_parser(sub: Any) -> None:
    s = sub.add_parser("studio", help="a local web page to measure, anonymize, compare and publish "
                       "(pip install 'openbook[studio]')",
                       description="Serve openbook studio on 127.0.0.1: load a table, choose its QIs, SA and "
                       "hierarchies, measure its risk, run models and algorithms side by side (certified as "
                       "anonymize certifies), and publish the chosen release with its sidecar and report into the "
                       "output folder. Needs no network; Ctrl-C stops it. See docs/studio.md.")
    s.add_argument("input", nargs="?", help="a CSV or Parquet file to open (or --dataset, or load one in the page)")
    s.add_argument("--dataset", help="open a built-in dataset: adult, adult-train, synthetic")
    s.add_argument("--port", type=_port, default=0, help="the port on 127.0.0.1 (default: a free one, printed)")
    s.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help="the folder releases and reports are written "
                   f"to, and the only one the studio writes to (default ./{DEFAULT_OUT}, created on first publish)")
    s.add_argument("--no-browser", action="store_true", help="do not open a browser (the address is printed)")
    s.add_argument("--max-upload-mb", type=POSITIVE_INT, default=512, metavar="MB",
                   help="the largest file the page may upload (default 512; a file given by its path has no limit)")
    s.set_defaults(func=cmd_studio)
