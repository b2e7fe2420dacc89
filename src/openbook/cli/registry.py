"""``openbook registry``: remember what went out (add / list), for the linkage audit."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import emit, output_options, print_table


def cmd_registry(args: argparse.Namespace) -> int:
    from ..release import load_release
    from ..release.registry import ReleaseRegistry

    reg = ReleaseRegistry(args.registry, create=args.action == "add")
    if args.action == "add":
        if not args.release:
            from ..errors import ParameterError

            raise ParameterError("openbook registry add DIR_OR_DB RELEASE: no release given", parameter="release")
        name = reg.add(load_release(args.release), name=args.name)
        payload: dict[str, Any] = {"added": name, "registry": str(args.registry), "releases": len(reg)}
        emit(args, payload, lambda d: print_table("registry", list(d.items())))
    else:
        entries = reg.list()
        emit(args, {"releases": entries}, lambda d: print_table(
            f"registry {args.registry}", [(e["name"], f"{e['kind']}, {e['rows']} rows, added {e['added']}")
                                          for e in d["releases"]]))
    return 0


def add_parser(sub: Any) -> None:
    r = sub.add_parser("registry", help="record published releases: registry add|list DIR_OR_DB [RELEASE]")
    r.add_argument("action", choices=["add", "list"])
    r.add_argument("registry", metavar="DIR_OR_DB")
    r.add_argument("release", nargs="?")
    r.add_argument("--name", help="name of the added release (default release-NNNN)")
    output_options(r)
    r.set_defaults(func=cmd_registry)
