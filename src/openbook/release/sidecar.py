"""The sidecar: what a release file says about itself, written from an allowlist and
validated key by key on every read (docs/release-files.md).

**Written** (:func:`public_record`): only the keys a reader needs to check and audit the
release — format, version, kind, schema, model, the algorithm's name, parameters and model,
the published row count, the number of groups, the recoding levels, the model check, the
skew step's method and ℓ, the certificate's aggregate verdict — and nothing about the rows
that were not published. By default the sidecar holds **no count or rate of suppressed or
withheld rows and no input row count** they could be derived from (paper 004 §3: the number
R-suppression withholds is randomized precisely so that it stays hidden): no ``n_input``,
no ``n_suppressed``, no skew-step counts, no per-adversary count of people considered or
absent, no algorithm diagnostics (tail rows, seeds, suppressed classes, timings), and no
names of the dropped identifier columns. A publisher opts in to the counts with
``publish_suppressed_count`` (``--publish-suppressed-count``) and to the identifier names
with ``publish_identifier_names``; the sidecar then records the choice (``publish``).

**Read** (:func:`validate`): every key is checked for its type and range and unknown keys
are refused, each failure one line naming the key; what can be checked against the data
(the model check, the number of groups) is checked by :func:`check_against_data`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping as MappingABC
from pathlib import Path
from types import UnionType
from typing import Any, Mapping, Union, get_args, get_origin, get_type_hints

import numpy as np

from ..catalog import CATALOG
from ..errors import DataError, OpenbookError
from .record import (
    ALGORITHM_KEYS,
    OPT_IN,
    PUBLIC,
    SKEW_PUBLIC,
    WRITER,
    AwareRecord,
    CertificateRecord,
    FindingRecord,
    Line,
    ReleaseMeta,
    UncertifiedRecord,
    finding_judged,
    finding_passes,
    keys as record_keys,
    required_keys,
    verdict_of,
    written,
)

FORMAT = "openbook-release/2"

def algorithm_names() -> frozenset[str]:
    """The algorithm names a sidecar may name: the catalog's (:mod:`openbook.catalog`)."""
    return frozenset(CATALOG)


#: skew-step methods (:data:`openbook.algorithms.suppression.METHODS`; same contract test)
SKEW_METHODS = frozenset({"safe-d", "unsafe-d", "r-suppression"})
#: certificate verdicts (:mod:`openbook.certificate`)
VERDICTS = frozenset({"pass", "fail", "no target", "not certified"})
DTYPES = frozenset({"int64", "float64", "string"})
#: what a publisher may opt in to publish
OPT_INS = ("suppressed_count", "identifier_names")

#: the algorithm record's keys an adversary replays with (Kerckhoffs; paper 000 §2.4)
_ALGORITHM_KEYS = ALGORITHM_KEYS
#: a certificate finding's keys that hold no count of people
_FINDING_KEYS = record_keys(FindingRecord, PUBLIC)
#: the certificate's own keys that hold no count of people
_CERTIFICATE_KEYS = ("verdict", "target", "target_source", "knowledge", "algorithm_aware", "lines")
#: a certificate line's keys (:class:`.record.Line`)
_LINE_KEYS = record_keys(Line)
#: a finding's target kinds
_TARGET_KINDS = ("posterior", "certainty", "re-identification")
#: a finding's keys that only an opted-in sidecar holds (the absent people are among them)
_FINDING_COUNTS = record_keys(FindingRecord, OPT_IN)

# The keys :func:`validate` accepts in each record (allowed, then required): the ones
# :mod:`.record` declares, or (for the records it leaves untyped) declared here; the JSON
# Schema of :mod:`.sidecar_schema` is built from the same declarations.
#: ``schema``, and each of its columns (``schema.qi[i]``, ``schema.sa``)
SCHEMA_KEYS = (("qi", "sa", "sensitive_sets", "identifiers", "keep", "missing", "missing_tokens"), ("qi", "sa"))
COLUMN_KEYS = (("name", "kind", "order"), ("name",))
#: ``sa_reference``
REFERENCE_KEYS = (("values", "counts", "declared_public", "numeric"), ("values", "counts"))
#: ``check`` (:class:`openbook.models.CheckResult`)
CHECK_KEYS = (("model", "holds", "level", "n_groups", "failing_groups"), ("model", "holds", "n_groups", "failing_groups"))
#: ``skew`` (the full record only with ``publish.suppressed_count``)
SKEW_KEYS = (("step", "method", "l", "n_input", "n_suppressed", "suppression_rate"), ("method", "l"))
#: ``signature`` (:mod:`.signing`)
SIGNATURE_KEYS = (("algorithm", "key", "value"), ("algorithm", "key", "value"))
#: ``certificate`` of a certified release, of an uncertified one, and its ``algorithm_aware``
CERTIFIED_KEYS = written(CertificateRecord)
UNCERTIFIED_KEYS = written(UncertifiedRecord)
AWARE_KEYS = written(AwareRecord)
#: a certificate line, and a finding (per adversary)
LINE_KEYS = written(Line)
FINDING_KEYS = written(FindingRecord)
#: ``files`` of a release in files (the ``sa_`` keys: a bucketized release's SA-table) and of
#: a database release (:mod:`.database`); a folder release's is :data:`.folder.FOLDER_FILES`
FILE_KEYS = (("data", "rows", "sha256", "dtypes", "sa_table", "sa_rows", "sa_sha256", "sa_dtypes"),
             ("data", "rows", "sha256", "dtypes"))
DATABASE_FILE_KEYS = (("rows", "dtypes", "content_sha256", "sa_rows", "sa_dtypes"), ("rows", "dtypes", "content_sha256"))
#: ``certificate.lines[i].name``
LINE_NAMES = ("identity", "attribute")


# ---------------------------------------------------------------------------------------
# serialisation and digests
# ---------------------------------------------------------------------------------------
#: set to ``1`` (the test suite does, for itself and every process it starts) to validate every
#: sidecar openbook writes against its published JSON Schema (docs/sidecar.schema.json) first
CHECK_SCHEMA_ENV = "OPENBOOK_CHECK_SIDECAR_SCHEMA"


def check_schema(side: Mapping[str, Any]) -> None:
    """Under :data:`CHECK_SCHEMA_ENV`, raise if the sidecar about to be written breaks the
    published schema (:func:`.sidecar_schema.sidecar_schema`); a no-op otherwise."""
    import os

    if os.environ.get(CHECK_SCHEMA_ENV) != "1":
        return
    import jsonschema  # type: ignore[import-untyped]

    from .sidecar_schema import sidecar_schema

    jsonschema.validate(json.loads(json.dumps(side, default=json_default)), sidecar_schema())


def json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot serialise {type(o).__name__}")


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=json_default).encode()


def self_digest(meta: Mapping[str, Any]) -> str:
    """SHA-256 of a sidecar's content without its own ``digest`` key."""
    return hashlib.sha256(canonical({k: v for k, v in meta.items() if k != "digest"})).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------
# writing: the public record
# ---------------------------------------------------------------------------------------
def _algorithm_record(prov: Any) -> Any:
    if not isinstance(prov, Mapping):
        return prov
    out = {k: prov[k] for k in _ALGORITHM_KEYS if k in prov}
    for k in ("base_provenance", "k_partition"):
        if k in out:
            out[k] = _algorithm_record(out[k])
    return out


def _certificate_record(cert: Any) -> Any:
    if not isinstance(cert, Mapping):
        return cert
    if cert.get("verdict") == "not certified":
        return {"verdict": cert["verdict"], "reason": cert.get("reason", ""), "adversaries": []}
    findings = []
    for f in cert.get("adversaries") or []:
        rec = {k: f[k] for k in _FINDING_KEYS if k in f}
        if f.get("n_people") is not None and f.get("n_people") == f.get("n_absent"):
            # every person it reasons about is absent (the eligibility adversary): its posterior
            # is a function of |T| and would say whether anyone was withheld
            rec.update({k: None for k in ("max_posterior", "baseline_max_posterior") if k in rec})
        for k in ("n_above", "n_unresolved"):
            # a count above 0 may count absent people (the eligibility adversary's are all absent,
            # the replay's unresolved ones may be): published as "some" (None), never as a number
            if rec.get(k):
                rec[k] = None
        findings.append(rec)
    out = {k: cert[k] for k in ("verdict", "headline", "lines") if k in cert}
    out.update({k: cert[k] for k in _CERTIFICATE_KEYS if k in cert and k not in out})
    if isinstance(out.get("lines"), list):
        lines = []
        for ln in out["lines"]:
            rec = {k: ln[k] for k in _LINE_KEYS if isinstance(ln, Mapping) and k in ln}
            for k in ("n_above", "n_unresolved"):
                if rec.get(k):
                    rec[k] = None
            if rec.get("passes") is False:  # its words count people: a count-free one
                rec["text"] = f"the {rec.get('name', '')} line fails"
            lines.append(rec)
        out["lines"] = lines
    # a failing headline names "N of M people" (M counts the absent people): a count-free one
    out["headline"] = (str(cert.get("headline", "")) if cert.get("verdict") != "fail" else
                       "fail: an adversary that applies puts people above the target, leaves them unresolved or "
                       "could not run, or none knows the algorithm (see adversaries)")
    out["adversaries"] = findings
    return out


def public_record(meta: Mapping[str, Any], *, publish_suppressed_count: bool | None = None,
                  publish_identifier_names: bool | None = None) -> dict[str, Any]:
    """The sidecar content of a release whose in-memory record is ``meta`` (module
    docstring). ``None`` keeps the choice the release records (a loaded release keeps what
    its publisher chose)."""
    chosen = dict(meta.get("publish") or {})
    counts = bool(chosen.get("suppressed_count")) if publish_suppressed_count is None else publish_suppressed_count
    idents = bool(chosen.get("identifier_names")) if publish_identifier_names is None else publish_identifier_names
    # the declarations' filter (:mod:`.record`): public keys, and the opted-in ones when chosen
    keys = record_keys(ReleaseMeta, PUBLIC, *((OPT_IN,) if counts else ()))
    out: dict[str, Any] = {k: meta[k] for k in keys if k in meta}
    schema = dict(out.get("schema") or {})
    if not idents:
        schema.pop("identifiers", None)
    out["schema"] = schema
    if not counts:
        if "algorithm" in out:
            out["algorithm"] = _algorithm_record(out["algorithm"])
        if isinstance(out.get("skew"), Mapping):
            out["skew"] = {k: out["skew"][k] for k in SKEW_PUBLIC if k in out["skew"]}
        if "certificate" in out:
            out["certificate"] = _certificate_record(out["certificate"])
    else:
        if isinstance(out.get("algorithm"), Mapping) and "skew" in out["algorithm"]:
            out["algorithm"] = {k: v for k, v in out["algorithm"].items() if k != "skew"}  # once, at the top level
        cert = out.get("certificate")
        if isinstance(cert, Mapping) and cert.get("adversaries"):
            # an adversary that did not run counted nobody: its counts are left out, not null
            out["certificate"] = {**cert, "adversaries": [
                {k: v for k, v in f.items() if not (k in _FINDING_COUNTS and v is None)} if isinstance(f, Mapping)
                else f for f in cert["adversaries"]]}
    publish = {name: True for name, on in zip(OPT_INS, (counts, idents)) if on}
    if publish:
        out["publish"] = publish
    return out


# ---------------------------------------------------------------------------------------
# reading: every key validated
# ---------------------------------------------------------------------------------------
class _Check:
    """Type and range checks of one sidecar, each failure one line naming the key."""

    def __init__(self, where: Any) -> None:
        self.where = where

    def bad(self, key: str, what: str) -> DataError:
        return DataError(f"release sidecar {self.where}: {key} {what}", path=self.where)

    def obj(self, v: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(v, Mapping):
            raise self.bad(key, f"is {_show(v)}, not an object")
        return v

    def lst(self, v: Any, key: str) -> list[Any]:
        if not isinstance(v, list):
            raise self.bad(key, f"is {_show(v)}, not a list")
        return v

    def string(self, v: Any, key: str, *, empty: bool = False) -> str:
        if not isinstance(v, str) or (not empty and not v):
            raise self.bad(key, f"is {_show(v)}, not a{'' if empty else ' non-empty'} string")
        return v

    def integer(self, v: Any, key: str, *, minimum: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.bad(key, f"is {_show(v)}, not an integer >= {minimum}")
        return v

    def number(self, v: Any, key: str, *, none: bool = False, nan: bool = False) -> float | None:
        """A finite number (``nan``: NaN and infinities too — a level of no groups, or of
        groups without a bound)."""
        if v is None and none:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (
                not nan and (math.isnan(v) or math.isinf(v))):
            raise self.bad(key, f"is {_show(v)}, not a finite number")
        return float(v)

    def boolean(self, v: Any, key: str) -> bool:
        if not isinstance(v, bool):
            raise self.bad(key, f"is {_show(v)}, not true or false")
        return v

    def choice(self, v: Any, key: str, known: Any) -> str:
        if not isinstance(v, str) or v not in known:
            raise self.bad(key, f"is {_show(v)} (known: {', '.join(sorted(known))})")
        return v

    def keys(self, d: Mapping[str, Any], key: str, allowed: Any, required: Any = ()) -> None:
        unknown = sorted(set(d) - set(allowed))
        if unknown:
            raise self.bad(f"{key}.{unknown[0]}" if key else unknown[0], "is not a key openbook writes")
        missing = [k for k in required if k not in d]
        if missing:
            raise self.bad(f"{key}.{missing[0]}" if key else missing[0], "is missing")


def _show(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


#: every key a sidecar may hold (:class:`.record.ReleaseMeta` but what stays in memory)
TOP_KEYS = record_keys(ReleaseMeta, PUBLIC, OPT_IN, WRITER)


def _decode(c: _Check, record: Any, value: Mapping[str, Any], key: str) -> None:
    """The decode: each key of ``value`` checked against the type ``record`` declares for it
    (:mod:`.record`; every declared ``int`` is a count or a level, so ``>= 0``). What is left to
    the callers is what no type says: names, ranges, the rules between keys."""
    hints = get_type_hints(record)
    for k, v in value.items():
        if k in hints:
            _typed(c, hints[k], v, f"{key}.{k}" if key else k)


def _typed(c: _Check, t: Any, v: Any, key: str) -> None:
    origin, args = get_origin(t), get_args(t)
    if origin in (Union, UnionType):
        if v is None and type(None) in args:
            return
        rest = [a for a in args if a is not type(None)]
        t = rest[0] if len(rest) == 1 else Any
        origin, args = get_origin(t), get_args(t)
    if t is str:
        c.string(v, key, empty=True)
    elif t is bool:
        c.boolean(v, key)
    elif t is int:
        c.integer(v, key)
    elif t is float:
        c.number(v, key)
    elif origin is list:
        for i, x in enumerate(c.lst(v, key)):
            if args:
                _typed(c, args[0], x, f"{key}[{i}]")
    elif origin in (dict, Mapping, MappingABC):
        c.obj(v, key)


def validate(meta: Any, where: Any, *, kinds: Any, database: bool | None = False) -> dict[str, Any]:
    """Check every key of a sidecar (already digest-checked) and return it (module
    docstring). ``database``: the record of a SQLite/DuckDB release (its ``files`` differ);
    ``None``: a record about to be written, before its files and digest exist."""
    c = _Check(where)
    c.keys(meta, "", TOP_KEYS, required_keys(ReleaseMeta) + (
        () if database is None else ("format", "digest", "files")))
    c.string(meta.get("openbook_version", "?"), "openbook_version")
    kind = c.choice(meta["kind"], "kind", kinds)
    if "qi_recoding" in meta:
        c.choice(meta["qi_recoding"], "qi_recoding", ("local",))
        if kind != "bucketized":
            raise c.bad("qi_recoding", f"is recorded for a {kind} release (only a bucketized QI-table is recoded)")
    _schema(c, meta["schema"])
    n_qi = len(meta["schema"]["qi"])
    if meta.get("model") is not None:
        _model(c, meta["model"], "model")
    if "algorithm" in meta:
        _algorithm(c, meta["algorithm"], "algorithm")
    n_pub = c.integer(meta["n_published"], "n_published")
    for key in ("n_input", "n_suppressed"):
        if key in meta:
            c.integer(meta[key], key)
    if ("n_input" in meta) != ("n_suppressed" in meta):
        raise c.bad("n_suppressed" if "n_input" in meta else "n_input", "is missing (the counts come as a pair)")
    if "n_input" in meta and meta["n_input"] != n_pub + meta["n_suppressed"]:
        raise DataError(f"release {where}: rows lost: input {meta['n_input']} != published {n_pub} + suppressed "
                        f"{meta['n_suppressed']}", path=where)
    if "n_groups" in meta:
        g = c.integer(meta["n_groups"], "n_groups")
        if g > n_pub or (n_pub > 0 and g == 0):
            raise c.bad("n_groups", f"is {g}, impossible for {n_pub} published rows")
    if meta.get("levels") is not None:
        lv = c.lst(meta["levels"], "levels")
        for i, x in enumerate(lv):
            c.integer(x, f"levels[{i}]")
        if len(lv) != n_qi:
            raise c.bad("levels", f"has {len(lv)} entries for {n_qi} QIs")
    if "source" in meta:
        c.string(meta["source"], "source")
    if "sa_reference" in meta:
        _reference(c, meta["sa_reference"])
    if "check" in meta:
        _check_record(c, meta["check"])
        if meta.get("model") is None:
            raise c.bad("check", "is recorded without a model")
    if "skew" in meta:
        _skew(c, meta["skew"])
    if "certificate" in meta:
        _certificate(c, meta["certificate"])
    if "signature" in meta:
        sig = c.obj(meta["signature"], "signature")
        c.keys(sig, "signature", *SIGNATURE_KEYS)
        c.choice(sig["algorithm"], "signature.algorithm", ("ed25519",))
        for k in ("key", "value"):
            c.string(sig[k], f"signature.{k}")
    if "publish" in meta:
        pub = c.obj(meta["publish"], "publish")
        c.keys(pub, "publish", OPT_INS)
        for k, v in pub.items():
            if v is not True:
                raise c.bad(f"publish.{k}", f"is {_show(v)}; only true is written")
    if "n_input" in meta and not (meta.get("publish") or {}).get("suppressed_count"):
        raise c.bad("n_input", "is published without publish.suppressed_count")
    if (meta["schema"].get("identifiers")) and not (meta.get("publish") or {}).get("identifier_names"):
        raise c.bad("schema.identifiers", "is published without publish.identifier_names")
    if database is not None:
        _files(c, c.obj(meta["files"], "files"), bucketized=kind == "bucketized", database=database)
    return dict(meta)


def _schema(c: _Check, sch: Any) -> None:
    from ..data.schema import KINDS, Schema

    sch = c.obj(sch, "schema")
    c.keys(sch, "schema", *SCHEMA_KEYS)
    qi = c.lst(sch["qi"], "schema.qi")
    if not qi:
        raise c.bad("schema.qi", "is empty: a release has at least one QI")
    for i, col in enumerate([*qi, sch["sa"]]):
        key = f"schema.qi[{i}]" if i < len(qi) else "schema.sa"
        col = c.obj(col, key)
        c.keys(col, key, *COLUMN_KEYS)
        c.string(col["name"], f"{key}.name")
        c.choice(col.get("kind", "categorical"), f"{key}.kind", KINDS)
        if col.get("order") is not None:
            c.lst(col["order"], f"{key}.order")
    for key in ("identifiers", "keep", "missing_tokens"):
        for i, x in enumerate(c.lst(sch.get(key, []), f"schema.{key}")):
            c.string(x, f"schema.{key}[{i}]", empty=key == "missing_tokens")
    if "missing" in sch:
        c.string(sch["missing"], "schema.missing")
    sets = c.obj(sch.get("sensitive_sets", {}), "schema.sensitive_sets")
    for name, members in sets.items():
        for i, x in enumerate(c.lst(members, f"schema.sensitive_sets.{name}")):
            if not isinstance(x, (str, int, float)) or isinstance(x, bool):
                raise c.bad(f"schema.sensitive_sets.{name}[{i}]", f"is {_show(x)}, not a value")
    try:
        Schema.from_dict(sch)
    except OpenbookError as exc:
        raise c.bad("schema", f"is malformed: {exc}") from None


def _model(c: _Check, spec: Any, key: str) -> None:
    from ..models import make_model

    if not isinstance(spec, (Mapping, list)):
        raise c.bad(key, f"is {_show(spec)}, not a model record")
    try:
        make_model(spec)
    except OpenbookError as exc:
        raise c.bad(key, f"is not a model openbook knows: {exc}") from None
    except (TypeError, ValueError, KeyError) as exc:
        raise c.bad(key, f"is not a model openbook knows: {exc}") from None


def _algorithm(c: _Check, prov: Any, key: str) -> None:
    prov = c.obj(prov, key)
    if not prov:
        return  # a partition made by hand: no algorithm recorded
    c.choice(prov.get("algorithm"), f"{key}.algorithm", algorithm_names())
    c.obj(prov.get("params", {}), f"{key}.params")
    if prov.get("model") is not None:
        _model(c, prov["model"], f"{key}.model")
    if "minimality" in prov:
        c.boolean(prov["minimality"], f"{key}.minimality")
    if prov.get("levels") is not None:
        for i, x in enumerate(c.lst(prov["levels"], f"{key}.levels")):
            c.integer(x, f"{key}.levels[{i}]")
    for sub in ("base_provenance", "k_partition"):
        if isinstance(prov.get(sub), Mapping) and prov[sub].get("algorithm") not in (None, "none"):
            _algorithm(c, prov[sub], f"{key}.{sub}")


def _reference(c: _Check, ref: Any) -> None:
    ref = c.obj(ref, "sa_reference")
    c.keys(ref, "sa_reference", *REFERENCE_KEYS)
    values = c.lst(ref["values"], "sa_reference.values")
    counts = c.lst(ref["counts"], "sa_reference.counts")
    for i, v in enumerate(values):
        c.string(v, f"sa_reference.values[{i}]", empty=True)
    if len(set(values)) != len(values):
        raise c.bad("sa_reference.values", "repeats a value")
    for i, v in enumerate(counts):
        c.integer(v, f"sa_reference.counts[{i}]")
    if len(counts) != len(values) or sum(counts) <= 0:
        raise c.bad("sa_reference.counts", "must give one count per value, with a positive total")
    if ref.get("declared_public", True) is not True:
        raise c.bad("sa_reference.declared_public", "must be true")
    if ref.get("numeric") is not None:
        num = c.lst(ref["numeric"], "sa_reference.numeric")
        for i, v in enumerate(num):
            c.number(v, f"sa_reference.numeric[{i}]")
        if len(num) != len(values):
            raise c.bad("sa_reference.numeric", "must give one number per value")


def _check_record(c: _Check, rec: Any) -> None:
    rec = c.obj(rec, "check")
    c.keys(rec, "check", *CHECK_KEYS)
    c.string(rec["model"], "check.model")
    holds = c.boolean(rec["holds"], "check.holds")
    c.number(rec.get("level"), "check.level", none=True, nan=True)
    n = c.integer(rec["n_groups"], "check.n_groups")
    f = c.integer(rec["failing_groups"], "check.failing_groups")
    if f > n or holds != (f == 0):
        raise c.bad("check", f"is inconsistent: holds={holds} with {f} of {n} groups failing")


def _skew(c: _Check, skew: Any) -> None:
    skew = c.obj(skew, "skew")
    c.keys(skew, "skew", *SKEW_KEYS)
    c.choice(skew["method"], "skew.method", SKEW_METHODS)
    if (c.number(skew["l"], "skew.l") or 0) < 1:
        raise c.bad("skew.l", f"is {_show(skew['l'])}, not at least 1")
    if "step" in skew:
        c.string(skew["step"], "skew.step")
    for k in ("n_input", "n_suppressed"):
        if k in skew:
            c.integer(skew[k], f"skew.{k}")
    if "suppression_rate" in skew:
        c.number(skew["suppression_rate"], "skew.suppression_rate")


def _certificate(c: _Check, cert: Any) -> None:
    cert = c.obj(cert, "certificate")
    verdict = c.choice(cert.get("verdict"), "certificate.verdict", VERDICTS)
    if verdict == "not certified":
        c.keys(cert, "certificate", *UNCERTIFIED_KEYS)
        c.string(cert.get("reason", ""), "certificate.reason", empty=True)
        if c.lst(cert.get("adversaries", []), "certificate.adversaries"):
            raise c.bad("certificate.adversaries", "lists adversaries of an uncertified release")
        return
    c.keys(cert, "certificate", *CERTIFIED_KEYS)
    target = c.number(cert.get("target"), "certificate.target", none=True)
    if target is not None and not 0 < target <= 1:
        raise c.bad("certificate.target", f"is {target}, not in (0, 1]")
    for k in ("target_source", "headline"):
        c.string(cert.get(k, ""), f"certificate.{k}", empty=True)
    c.obj(cert.get("knowledge", {}), "certificate.knowledge")
    aware = c.obj(cert.get("algorithm_aware", {}), "certificate.algorithm_aware")
    c.keys(aware, "certificate.algorithm_aware", *AWARE_KEYS)
    if aware.get("adversary") is not None:
        c.string(aware["adversary"], "certificate.algorithm_aware.adversary")
    c.string(aware.get("reason", ""), "certificate.algorithm_aware.reason", empty=True)
    if "seconds" in cert:
        c.number(cert["seconds"], "certificate.seconds")
    lines_ok = True
    for i, ln in enumerate(c.lst(cert.get("lines", []), "certificate.lines")):
        key = f"certificate.lines[{i}]"
        ln = c.obj(ln, key)
        c.keys(ln, key, *LINE_KEYS)
        _decode(c, Line, ln, key)
        c.choice(ln["name"], f"{key}.name", LINE_NAMES)
        lines_ok &= ln["passes"]
        for k in ("target", "worst", "distance_target", "worst_distance"):
            v = ln.get(k)
            if v is not None and not 0 <= v <= 1 + 1e-9:
                raise c.bad(f"{key}.{k}", f"is {v}, not in [0, 1]")
        for j, a in enumerate(ln.get("adversaries", [])):
            c.string(a, f"{key}.adversaries[{j}]")
    if verdict == "pass" and verdict_of([lines_ok]) != "pass":
        raise c.bad("certificate.verdict", "is 'pass' but one of its lines fails")
    judged_ok = True
    for i, f in enumerate(c.lst(cert["adversaries"], "certificate.adversaries")):
        key = f"certificate.adversaries[{i}]"
        f = c.obj(f, key)
        c.keys(f, key, *FINDING_KEYS)
        _decode(c, FindingRecord, f, key)
        c.string(f["adversary"], f"{key}.adversary")
        for k in ("n_people", "n_absent"):  # written only with the counts, and then as numbers
            if k in f:
                c.integer(f[k], f"{key}.{k}")
        applies, ran = f["applies"], f["ran"]
        for k in ("target", "max_posterior", "baseline_max_posterior", "distance_target", "max_distance"):
            v = f.get(k)
            if v is not None and not 0 <= v <= 1 + 1e-9:
                raise c.bad(f"{key}.{k}", f"is {v}, not a probability")
        if "target_kind" in f:
            c.choice(f["target_kind"], f"{key}.target_kind", _TARGET_KINDS)
        above, unresolved = f.get("n_above", 0), f.get("n_unresolved", 0)  # None: "some", the count not published
        if finding_judged(applies, ran, f.get("target"), f.get("distance_target")):
            judged_ok &= finding_passes(applies, ran, above, unresolved)  # None ("some") fails
    if verdict == "pass" and verdict_of([judged_ok]) != "pass":
        raise c.bad("certificate.verdict", "is 'pass' but an adversary it lists fails")


def _files(c: _Check, files: Mapping[str, Any], *, bucketized: bool, database: bool) -> None:
    allowed, required = DATABASE_FILE_KEYS if database else FILE_KEYS
    if bucketized:  # the SA-table's keys are required too
        required = (*required, *(k for k in allowed if k.startswith("sa_")))
    c.keys(files, "files", allowed if bucketized else [k for k in allowed if not k.startswith("sa_")], required)
    for k in ("rows", "sa_rows"):
        if k in files:
            c.integer(files[k], f"files.{k}")
    for k in ("sha256", "sa_sha256", "content_sha256"):
        if k in files:
            v = c.string(files[k], f"files.{k}")
            if len(v) != 64 or any(ch not in "0123456789abcdef" for ch in v):
                raise c.bad(f"files.{k}", "is not a SHA-256 digest")
    for k in ("dtypes", "sa_dtypes"):
        if k in files:
            for col, t in c.obj(files[k], f"files.{k}").items():
                c.choice(t, f"files.{k}.{col}", DTYPES)


def check_against_data(release: Any, where: Any) -> None:
    """What the sidecar claims about the published rows, recomputed from them: the number
    of groups, and the model check (the model holds, its level, the groups that fail)."""
    meta = release.meta
    n_pub = len(release.data)
    if meta["n_published"] != n_pub:
        raise DataError(f"release {where}: the sidecar says {meta['n_published']} published rows, the data holds "
                        f"{n_pub}", path=where)
    _, n_cls = release.classes()
    g = meta.get("n_groups")
    if g is not None and g != n_cls:
        raise DataError(f"release {where}: n_groups is {g}, the published rows form {n_cls} "
                        f"{'groups' if release.kind == 'bucketized' else 'classes'}", path=where)
    if meta.get("model") is not None and "check" in meta:
        from ..models import make_model

        got = release.check(make_model(meta["model"])).to_dict()
        rec = meta["check"]
        same = all(got[k] == rec.get(k) for k in ("model", "holds", "n_groups", "failing_groups"))
        same &= _same_level(got["level"], rec.get("level"))
        if not same:
            raise DataError(f"release {where}: its sidecar's check ({rec.get('model')}: holds={rec.get('holds')}, "
                            f"{rec.get('failing_groups')} of {rec.get('n_groups')} groups failing) does not match "
                            f"the published rows ({got['model']}: holds={got['holds']}, {got['failing_groups']} of "
                            f"{got['n_groups']})", path=where)


def _same_level(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return (math.isnan(a) and math.isnan(b)) or a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
