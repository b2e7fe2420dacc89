"""``openbook certify``: the certificate of an existing release — every adversary that applies,
against the original table (and earlier releases), with a verdict. Exit code 0 when the
release passes (or the model sets no target), 3 when it fails."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    adversary_option,
    certify_options,
    certify_params,
    earlier_releases,
    emit,
    load_original,
    original_options,
    output_options,
    print_table,
    public_key_option,
    status,
)


def cmd_certify(args: argparse.Namespace) -> int:
    from ..attacks.registry import parse_adversaries
    from ..certificate import FAIL, certify
    from ..release import load_release
    from .anonymize import certificate_rows

    release = load_release(args.release, public_key=args.public_key)
    original = load_original(args, release)
    earlier = earlier_releases(args.against_registry)
    names = parse_adversaries(args.adversary) or None
    with status("certifying the release", quiet=args.quiet) as st:
        cert = certify(release, original=original, earlier=earlier, max_risk=args.max_risk,
                       max_reid_risk=args.max_reid_risk, adversaries=names, params=certify_params(args),
                       on_step=lambda name: st.update(f"certifying: the {name} adversary"))
    from ._common import signature_row

    payload = {"release": str(args.release), "signature": signature_row(release)[1], **cert.to_dict()}
    emit(args, payload, lambda p: print_table(f"certificate of {p['release']}",
                                              certificate_rows(p) + [("signature", p["signature"])]))
    return 3 if cert.verdict == FAIL else 0


def add_parser(sub: Any) -> None:
    c = sub.add_parser("certify", help="certify an existing release against every adversary that applies",
                       description="Run every adversary that applies to the release (replay, minimality, "
                       "background, eligibility, linkage with --against-registry, and the baseline) and print "
                       "the verdict; exit code 3 when an adversary puts someone above the target or leaves "
                       "someone unresolved.")
    c.add_argument("release", help="the release (its data file, sidecar or database file)")
    public_key_option(c)
    original_options(c, required_for="; most adversaries need it")
    adversary_option(c, several=True)
    certify_options(c)
    output_options(c)
    c.set_defaults(func=cmd_certify)
