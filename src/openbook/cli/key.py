"""``openbook key new PATH``: an Ed25519 key pair to sign releases with (``anonymize
--sign-key PATH``) and to verify them (``--public-key PATH.pub``; docs/release-files.md)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import emit, output_options, print_table


def cmd_key(args: argparse.Namespace) -> int:
    from ..release.signing import new_key

    priv, pub, fp = new_key(args.path, force=args.force)
    payload = {"private_key": str(priv), "public_key": str(pub), "fingerprint": fp}
    emit(args, payload, lambda p: print_table("key pair written", [
        ("private key (keep it; 0600)", p["private_key"]), ("public key (give it to readers)", p["public_key"]),
        ("fingerprint", p["fingerprint"]),
        ("sign", f"openbook anonymize ... --sign-key {p['private_key']}"),
        ("verify", f"openbook check RELEASE --public-key {p['public_key']}")]))
    return 0


def add_parser(sub: Any) -> None:
    k = sub.add_parser("key", help="make an Ed25519 key pair to sign releases with",
                       description="Make an Ed25519 key pair: PATH (the private key, readable by you only) and "
                                   "PATH.pub (the public key readers verify releases with).")
    k.add_argument("action", choices=["new"], help="new: write a new key pair")
    k.add_argument("path", help="the private key's file (the public key is PATH.pub)")
    k.add_argument("--force", action="store_true", help="replace an existing key pair")
    output_options(k)
    k.set_defaults(func=cmd_key)
