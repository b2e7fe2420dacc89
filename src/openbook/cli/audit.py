"""``openbook audit``: one adversary against a saved release, per person — the baseline,
minimality (paper 001), replay (paper 000), background (paper 003), eligibility (paper 004),
linkage with a registry of earlier releases (paper 002) — through the adversary registry."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    AT_LEAST_1,
    POSITIVE_INT,
    SEED,
    emit,
    load_original,
    original_options,
    output_options,
    print_table,
    status,
)


def adversary_params(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The keyword parameters of adversary ``name`` given on the command line."""
    flags = {"baseline": {"sensitive_set": args.set},
             "replay": {"worlds": args.worlds, "world_seed": args.seed, "sensitive_set": args.set},
             "minimality": {"sensitive_set": args.set, "exact": args.exact or None},
             "background": {"r": args.r, "min_support": args.min_support, "max_attrs": args.max_attrs,
                            "sensitive_set": args.set}}.get(name, {})
    return {k: v for k, v in flags.items() if v is not None}


def cmd_audit(args: argparse.Namespace) -> int:
    from ..attacks.adversary import make_adversary
    from ..errors import ParameterError
    from ..release import load_release

    if args.posteriors_out:
        from ..release.io import check_plain_output

        check_plain_output(args.posteriors_out, force=args.force, inputs=[args.release, args.original],
                           what="--posteriors-out")
    release = load_release(args.release)
    adv = make_adversary(args.adversary, **adversary_params(args, args.adversary))
    original = load_original(args, release)
    earlier = []
    if args.against_registry:
        from ..release.registry import ReleaseRegistry

        earlier = [r for _, r in ReleaseRegistry(args.against_registry, create=False).releases()]
    applies = adv.applies_to(release)
    if not applies:
        raise ParameterError(f"the {adv.name} adversary does not apply to this release: {applies.reason}",
                             parameter="adversary", value=adv.name)
    with status(f"the {adv.name} adversary", quiet=args.quiet):
        result = adv.run(release, original=original, earlier=earlier)
    l = args.l if args.l is not None else result.l
    if l is None:
        raise ParameterError("the release's model promises no posterior bound: give --l (threshold 1/l)",
                             parameter="l")
    summary = result.summary(l=l, m=args.m)
    if args.posteriors_out:
        from ..release.io import write_plain

        frame = result.frame()
        write_plain(args.posteriors_out, lambda t: frame.to_csv(t, index=False))
    payload = summary.to_dict(groups=20)
    payload.update(adversary=adv.name, paper=adv.paper, posteriors_out=args.posteriors_out)
    emit(args, payload, lambda d: print_table(f"audit ({adv.name}, {adv.paper})", [
        (k, v) for k, v in d.items() if k not in ("summary", "per_group", "notes")]))
    return 0


def add_parser(sub: Any) -> None:
    from ..attacks.adversary import ADVERSARY_NAMES

    u = sub.add_parser("audit", help="one adversary against a saved release, per person")
    u.add_argument("release", help="the release (its data file, sidecar or database file)")
    u.add_argument("--adversary", choices=ADVERSARY_NAMES, default="baseline", help="adversary (default baseline)")
    original_options(u, required_for="; replay, minimality and background need it")
    u.add_argument("--against-registry", metavar="DIR_OR_DB", help="earlier releases (the linkage adversary)")
    u.add_argument("--l", type=AT_LEAST_1, help="posterior threshold 1/l of 'vulnerable' (default: the release "
                   "model's l; linkage: the post-linkage diversity l)")
    u.add_argument("--m", type=AT_LEAST_1, help="m of m-confidentiality (default: l)")
    u.add_argument("--posteriors-out", metavar="CSV", help="write every person's posteriors here")
    u.add_argument("--force", action="store_true", help="replace an existing --posteriors-out file")
    u.add_argument("--set", help="sensitive value set (default: the release model's)")
    u.add_argument("--exact", action="store_true", help="minimality: exact integer counting (small tables)")
    u.add_argument("--worlds", type=POSITIVE_INT, help="replay: possible worlds sampled per unit too large to enumerate "
                   "(default 10000)")
    u.add_argument("--seed", type=SEED, help="replay: seed of the world sampling (default 0)")
    u.add_argument("--r", type=AT_LEAST_1, help="background: r of r-robustness (default: the algorithm's r, else 1/l)")
    u.add_argument("--min-support", type=POSITIVE_INT, help="background: least support of a signature's distribution "
                   "(default 100)")
    u.add_argument("--max-attrs", type=POSITIVE_INT, help="background: largest QI attribute set (default all, <= 6 QIs)")
    output_options(u)
    u.set_defaults(func=cmd_audit)
