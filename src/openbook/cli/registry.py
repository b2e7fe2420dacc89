"""``openbook registry``: remember what went out (add / list), for the linkage audit."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import emit, linkage_l_option, output_options, print_table, removed_l_option


def cmd_registry(args: argparse.Namespace) -> int:
    from ..release import load_release
    from ..release.registry import ReleaseRegistry

    reg = ReleaseRegistry(args.registry, create=args.action == "add")
    if args.action == "add":
        if not args.release:
            from ..errors import ParameterError

            raise ParameterError("openbook registry add DIR_OR_DB RELEASE: no release given", parameter="release")
        release = load_release(args.release, public_key=getattr(args, "public_key", None))
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
    """The linkage adversary (paper 002 §2.3, :class:`~openbook.attacks.families.LinkageAdversary`)
    against the earlier releases, run inside the registry's lock: refuse (exit 3) when
    someone's post-linkage diversity falls below ℓ (``--linkage-l``, default the release
    model's ℓ as a float, else 2)."""
    from ..attacks.baseline import release_model
    from ..attacks.registry import make_adversary
    from ..errors import RiskError
    from ..models.promise import promised_l

    l = args.linkage_l if args.linkage_l is not None else (promised_l(release_model(release)) or 2.0)
    adv = make_adversary("linkage", l=float(l))
    name = args.name or "the new release"

    def check(earlier):
        import numpy as np

        if not earlier:
            return
        res = adv.run(release, earlier=[r for _, r in earlier])
        n = res.notes["n_below_l"]
        if n:
            involved = ", ".join(earlier[j][0] for j in res.notes["earlier_involved"]) or "(the new release alone)"
            people = int((res.group >= 0).sum())
            raise RiskError(f"{name}: linkage with earlier releases {involved} drops {n} of {people} people below "
                            f"l={l:g} ({res.notes['n_disclosed']} to diversity 1, posterior 1); refusing "
                            "(--no-audit records it anyway)", adversary="linkage", n_people=n,
                            worst=float(np.nanmax(res.posterior)))

    return check


def add_parser(sub: Any) -> None:
    r = sub.add_parser("registry", help="record published releases: registry add|list DIR_OR_DB [RELEASE]")
    r.add_argument("action", choices=["add", "list"])
    r.add_argument("registry", metavar="DIR_OR_DB")
    r.add_argument("release", nargs="?")
    from ._common import public_key_option

    public_key_option(r)
    r.add_argument("--name", help="name of the added release (default release-NNNN)")
    linkage_l_option(r)
    removed_l_option(r)
    r.add_argument("--no-audit", action="store_true", help="record the release without the linkage audit")
    output_options(r)
    r.set_defaults(func=cmd_registry)
