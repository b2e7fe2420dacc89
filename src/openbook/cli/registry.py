"""``openbook registry``: remember what went out (add / list), for the linkage audit."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import POSITIVE_INT, emit, output_options, print_table


def cmd_registry(args: argparse.Namespace) -> int:
    from ..release import load_release
    from ..release.registry import ReleaseRegistry

    reg = ReleaseRegistry(args.registry, create=args.action == "add")
    if args.action == "add":
        if not args.release:
            from ..errors import ParameterError

            raise ParameterError("openbook registry add DIR_OR_DB RELEASE: no release given", parameter="release")
        release = load_release(args.release)
        check = None
        if not args.no_audit:
            check = _linkage_check(release, args)
        name = reg.add(release, name=args.name, check=check)
        payload: dict[str, Any] = {"added": name, "registry": str(args.registry), "releases": len(reg),
                                   "linkage_audit": "skipped (--no-audit)" if args.no_audit else "passed"}
        emit(args, payload, lambda d: print_table("registry", list(d.items())))
    else:
        entries = reg.list()
        emit(args, {"releases": entries}, lambda d: print_table(
            f"registry {args.registry}", [(e["name"], f"{e['kind']}, {e['rows']} rows, added {e['added']}")
                                          for e in d["releases"]]))
    return 0


def _linkage_check(release, args: argparse.Namespace):
    """The linkage audit (paper 002 §2.3) against the earlier releases, run inside the
    registry's lock: refuse (exit 3) when someone's post-linkage diversity falls below ℓ."""
    from ..attacks.base import model_l
    from ..attacks.baseline import release_model
    from ..attacks.linkage_audit import audit_registry

    l = args.l if args.l is not None else int(model_l(release_model(release)) or 2)
    name = args.name or "the new release"

    def check(earlier):
        if earlier:
            audit_registry(_Earlier(earlier), release, l, new_name=name)

    return check


class _Earlier:
    """The earlier releases, as the audit asks for them."""

    def __init__(self, pairs) -> None:
        self.pairs = pairs

    def releases(self):
        return list(self.pairs)


def add_parser(sub: Any) -> None:
    r = sub.add_parser("registry", help="record published releases: registry add|list DIR_OR_DB [RELEASE]")
    r.add_argument("action", choices=["add", "list"])
    r.add_argument("registry", metavar="DIR_OR_DB")
    r.add_argument("release", nargs="?")
    r.add_argument("--name", help="name of the added release (default release-NNNN)")
    r.add_argument("--l", type=POSITIVE_INT, help="least post-linkage diversity every person must keep (default: the "
                   "release model's l, else 2)")
    r.add_argument("--no-audit", action="store_true", help="record the release without the linkage audit")
    output_options(r)
    r.set_defaults(func=cmd_registry)
