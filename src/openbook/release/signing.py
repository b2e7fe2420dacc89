"""Signed releases: an Ed25519 signature over the sidecar, which binds every file by its digest.

The sidecar's own digest (:func:`.sidecar.self_digest`) says the sidecar was not *torn*; anyone
can recompute it after editing the sidecar — change the algorithm, lower a figure, raise a
target — so it says nothing about *who* wrote it. A publisher who signs (``openbook key new``,
then ``anonymize --sign-key KEY``) adds ``signature`` to the sidecar: Ed25519 (RFC 8032) over
the canonical JSON of the sidecar without its ``digest`` and ``signature`` keys — the files'
SHA-256 digests and row counts included, so data, SA-table and sidecar are all covered. A
reader with the publisher's public key (``--public-key KEY.pub``) verifies it: any edit of any
file or any sidecar key fails in one line. Without a key a reader is told plainly whether the
release is signed (and by which key) or unsigned — and that nothing was verified.

Keys are files: the private key PKCS #8 PEM, readable by its owner only (0600), never
overwritten; the public key ``KEY.pub`` (SubjectPublicKeyInfo PEM). The key's *fingerprint* is
the first 16 hex digits of the SHA-256 of the raw public key; the sidecar names it
(``signature.key``), so a reader can tell which key to ask for.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import DataError, ParameterError

ALGORITHM = "ed25519"


def _canonical(meta: Mapping[str, Any]) -> bytes:
    from .sidecar import canonical

    return canonical({k: v for k, v in meta.items() if k not in ("digest", "signature")})


def fingerprint(public_key: Any) -> str:
    """First 16 hex digits of the SHA-256 of the raw 32-byte public key."""
    from cryptography.hazmat.primitives import serialization

    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_path(private: str | os.PathLike) -> Path:
    p = Path(private)
    return p.with_name(p.name + ".pub")


def new_key(path: str | os.PathLike, *, force: bool = False) -> tuple[Path, Path, str]:
    """Write a new Ed25519 key pair: ``path`` (private, 0600) and ``path.pub``; returns both
    paths and the fingerprint. Never over an existing file unless ``force``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    priv_path, pub_path = Path(path), public_path(path)
    if not priv_path.parent.is_dir():
        raise ParameterError(f"key {priv_path}: folder {priv_path.parent} does not exist", parameter="key")
    for p in (priv_path, pub_path):
        if p.is_dir():
            raise ParameterError(f"key {p} is a directory", parameter="key", value=str(p))
        if p.exists() and not force:
            raise ParameterError(f"key {p} exists; use --force to replace it (the releases signed with it then "
                                 "verify only with its old public key)", parameter="key", value=str(p))
    key = Ed25519PrivateKey.generate()
    priv = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    _write_private(priv_path, priv)
    from .io import write_plain

    def write_public(tmp: Path) -> None:
        tmp.write_bytes(pub)
        os.chmod(tmp, 0o644)

    write_plain(pub_path, write_public)
    return priv_path, pub_path, fingerprint(key.public_key())


def _write_private(path: Path, data: bytes) -> None:
    """Atomically, created 0600 from the start (never readable by others, not even briefly)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _load(path: str | os.PathLike, private: bool) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    p = Path(path)
    what = "private" if private else "public"
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ParameterError(f"no such {what} key: {p}", parameter="sign-key" if private else "public-key",
                             value=str(p)) from None
    except OSError as exc:
        raise ParameterError(f"cannot read the {what} key {p}: {exc.strerror or exc}",
                             parameter="sign-key" if private else "public-key", value=str(p)) from None
    try:
        key = (serialization.load_pem_private_key(data, password=None) if private
               else serialization.load_pem_public_key(data))
    except (ValueError, TypeError):
        raise ParameterError(f"{p} is not an Ed25519 {what} key in PEM (make one with `openbook key new`)",
                             parameter="sign-key" if private else "public-key", value=str(p)) from None
    want = Ed25519PrivateKey if private else Ed25519PublicKey
    if not isinstance(key, want):
        raise ParameterError(f"{p} is not an Ed25519 {what} key (make one with `openbook key new`)",
                             parameter="sign-key" if private else "public-key", value=str(p))
    return key


def check_private_key(path: str | os.PathLike) -> str:
    """Load the private key (before any work, so a bad key fails first); its fingerprint."""
    return fingerprint(_load(path, True).public_key())


def sign(meta: dict[str, Any], private_key: str | os.PathLike) -> dict[str, Any]:
    """``meta`` with its ``signature`` (to be added before the sidecar's own digest)."""
    key = _load(private_key, True)
    value = key.sign(_canonical(meta))
    return {**meta, "signature": {"algorithm": ALGORITHM, "key": fingerprint(key.public_key()),
                                  "value": base64.b64encode(value).decode("ascii")}}


def verify(meta: Mapping[str, Any], public_key: str | os.PathLike, where: Any) -> str:
    """Check the sidecar's signature with ``public_key``; its fingerprint. A release that is
    unsigned, signed by another key, or whose signature does not verify is a one-line
    :class:`DataError` (exit code 2)."""
    from cryptography.exceptions import InvalidSignature

    key = _load(public_key, False)
    fp = fingerprint(key)
    sig = meta.get("signature")
    if not sig:
        raise DataError(f"release {where} is unsigned: it cannot be verified against {Path(public_key).name} "
                        f"(key {fp})", path=where)
    if sig.get("key") != fp:
        raise DataError(f"release {where} was signed by key {sig.get('key')}, not by {Path(public_key).name} "
                        f"(key {fp})", path=where)
    try:
        key.verify(base64.b64decode(sig["value"], validate=True), _canonical(meta))
    except (InvalidSignature, ValueError, TypeError):
        raise DataError(f"release {where}: its signature does not verify with key {fp} — a file or the sidecar was "
                        "changed after it was signed", path=where) from None
    return fp


def status(meta: Mapping[str, Any], verified: str | None = None) -> str:
    """One line for a reader: verified, signed but not verified, or unsigned."""
    sig = meta.get("signature")
    if verified:
        return f"signed and verified (key {verified})"
    if sig:
        return f"signed by key {sig.get('key')}, NOT verified (give --public-key to verify it)"
    return "UNSIGNED: nothing shows who wrote it or that its sidecar was not edited (see docs/release-files.md)"
