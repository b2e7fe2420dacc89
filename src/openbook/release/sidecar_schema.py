"""The JSON Schema (draft 2020-12) of a release sidecar (docs/release-files.md, "The
sidecar's JSON Schema"): docs/sidecar.schema.json is :func:`sidecar_schema`, and a test
keeps them equal (tests/cli/test_sidecar_schema.py).

It is built from the declarations :func:`.sidecar.validate` checks against — the keys of
every record (:data:`.sidecar.TOP_KEYS`, :data:`.sidecar.SCHEMA_KEYS`, ...), the known
names (algorithms, skew methods, verdicts, kinds, column types) — so a key the validator
learns is a key the schema lists. It describes each key's type and range; the rules between
keys (the counts adding up, a passing verdict without a failing line, the opt-ins, what
:func:`.sidecar.check_against_data` recomputes from the rows) stay the validator's: a sidecar
the schema accepts may still be refused by ``openbook check``, never the other way round.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..data.schema import KINDS as COLUMN_KINDS
from .folder import FOLDER_FILES
from .io import FOLDER_LAYOUT
from .release import KINDS
from .sidecar import (
    AWARE_KEYS,
    CERTIFIED_KEYS,
    CHECK_KEYS,
    COLUMN_KEYS,
    DATABASE_FILE_KEYS,
    DTYPES,
    FILE_KEYS,
    FINDING_KEYS,
    FORMAT,
    LINE_KEYS,
    LINE_NAMES,
    OPT_INS,
    REFERENCE_KEYS,
    SCHEMA_KEYS,
    SIGNATURE_KEYS,
    SKEW_KEYS,
    SKEW_METHODS,
    TOP_KEYS,
    UNCERTIFIED_KEYS,
    VERDICTS,
    algorithm_names,
)

#: the validator's tolerance on a probability (``<= 1 + 1e-9``)
_PROBABILITY_MAX = 1 + 1e-9
_STRING = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}
_COUNT = {"type": "integer", "minimum": 0}
_NUMBER = {"type": "number"}
_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_PROBABILITY = {"type": ["number", "null"], "minimum": 0, "maximum": _PROBABILITY_MAX}
_SOME_COUNT = {"type": ["integer", "null"], "minimum": 0, "description": "null: some (the count is not published)"}


def _record(keys: tuple[Iterable[str], Iterable[str]], props: dict[str, Any], *, description: str | None = None,
            open_keys: bool = False) -> dict[str, Any]:
    """An object of the declared ``(allowed, required)`` keys, each typed by ``props``
    (a key without a type: any value)."""
    allowed, required = (list(k) for k in keys)
    missing = sorted(set(props) - set(allowed))
    if missing:  # a type for a key the validator does not accept: a mistake here
        raise ValueError(f"typed keys {missing} are not declared")
    out: dict[str, Any] = {"type": "object"}
    if description:
        out["description"] = description
    out["properties"] = {k: props.get(k, {}) for k in allowed}
    if required:
        out["required"] = required
    if not open_keys:
        out["additionalProperties"] = False
    return out


def _enum(names: Iterable[str]) -> dict[str, Any]:
    return {"type": "string", "enum": sorted(names)}


def _array(items: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **more}


def _defs() -> dict[str, Any]:
    column = _record(COLUMN_KEYS, {"name": _NAME, "kind": _enum(COLUMN_KINDS),
                                   "order": {"type": ["array", "null"]}})
    algorithm = {
        "type": "object",
        "description": "the algorithm, its parameters and model (what the replay adversary re-runs); {} for a "
                       "partition made by hand",
        "properties": {"algorithm": _enum(algorithm_names()), "params": {"type": "object"},
                       "model": {"anyOf": [{"$ref": "#/$defs/model"}, {"type": "null"}]},
                       "minimality": {"type": "boolean"},
                       "levels": {"anyOf": [_array(_COUNT), {"type": "null"}]},
                       "base_provenance": {"$ref": "#/$defs/inner_algorithm"},
                       "k_partition": {"$ref": "#/$defs/inner_algorithm"}},
        "anyOf": [{"maxProperties": 0}, {"required": ["algorithm"]}],
    }
    inner = {"description": "an inner algorithm record (none: no algorithm)",
             "anyOf": [{"not": {"type": "object"}},
                       {"type": "object", "properties": {"algorithm": {"enum": [None, "none"]}}},
                       {"$ref": "#/$defs/algorithm"}]}
    line = _record(LINE_KEYS, {
        "name": _enum(LINE_NAMES), "passes": {"type": "boolean"}, "certainty": {"type": "boolean"},
        "source": _STRING, "text": _STRING, "target": _PROBABILITY, "worst": _PROBABILITY,
        "distance_target": _PROBABILITY, "worst_distance": _PROBABILITY, "n_above": _SOME_COUNT,
        "n_unresolved": _SOME_COUNT, "adversaries": _array(_NAME)})
    finding = _record(FINDING_KEYS, {
        "adversary": _NAME, "title": _STRING, "paper": _STRING, "disclosure": _STRING, "reason": _STRING,
        "method": _STRING, "applies": {"type": "boolean"}, "ran": {"type": "boolean"},
        "knows_algorithm": {"type": "boolean"}, "target": _PROBABILITY, "max_posterior": _PROBABILITY,
        "baseline_max_posterior": _PROBABILITY, "distance_target": _PROBABILITY, "max_distance": _PROBABILITY,
        "target_kind": _enum(("posterior", "certainty", "re-identification")), "n_above": _SOME_COUNT,
        "n_unresolved": _SOME_COUNT, "n_people": _COUNT, "n_absent": _COUNT, "seconds": _NUMBER,
        "params": {"type": "object"}, "error": {"type": ["string", "null"]}})
    certified = _record(CERTIFIED_KEYS, {
        "verdict": _enum(VERDICTS - {"not certified"}),
        "target": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
        "target_source": _STRING, "headline": _STRING, "knowledge": {"type": "object"},
        "algorithm_aware": _record(AWARE_KEYS, {"adversary": {"type": ["string", "null"], "minLength": 1},
                                                "reason": _STRING}),
        "seconds": _NUMBER, "lines": _array({"$ref": "#/$defs/line"}),
        "adversaries": _array({"$ref": "#/$defs/finding"})})
    uncertified = _record(UNCERTIFIED_KEYS, {"verdict": {"const": "not certified"}, "reason": _STRING,
                                             "adversaries": _array({}, maxItems=0)})
    certificate = {"description": "the certificate: its verdict, its two lines and per adversary its figures",
                   "type": "object", "required": ["verdict"], "if": {"type": "object", "properties": {"verdict": {"const": "not certified"}}},
                   "then": uncertified, "else": certified}
    dtypes = {"type": "object", "additionalProperties": _enum(DTYPES)}
    file_props = {"data": _NAME, "rows": _COUNT, "sha256": _SHA256, "dtypes": dtypes, "sa_table": _NAME,
                  "sa_rows": _COUNT, "sa_sha256": _SHA256, "sa_dtypes": dtypes}
    files = {"description": "per file its name, row count, SHA-256 and column types: a release in files, a "
                            "database release, or the Spark engine's folder of Parquet parts",
             "anyOf": [_record(FILE_KEYS, file_props),
                       _record(DATABASE_FILE_KEYS, {"rows": _COUNT, "dtypes": dtypes, "content_sha256": _SHA256,
                                                    "sa_rows": _COUNT, "sa_dtypes": dtypes}),
                       _record((FOLDER_FILES, FOLDER_FILES), {
                           "data": _NAME, "layout": {"const": FOLDER_LAYOUT}, "rows": _COUNT, "dtypes": dtypes,
                           "parts": _array(_record((("name", "rows", "sha256"),) * 2,
                                                   {"name": _NAME, "rows": _COUNT, "sha256": _SHA256}))})]}
    return {"column": column, "model": {"type": ["object", "array"], "description": "a model record (make_model)"},
            "algorithm": algorithm, "inner_algorithm": inner, "line": line, "finding": finding,
            "certificate": certificate, "files": files}


def sidecar_schema() -> dict[str, Any]:
    """The JSON Schema of a release sidecar (module docstring)."""
    schema = _record(SCHEMA_KEYS, {
        "qi": _array({"$ref": "#/$defs/column"}, minItems=1), "sa": {"$ref": "#/$defs/column"},
        "sensitive_sets": {"type": "object", "additionalProperties": _array({"type": ["string", "number"]})},
        "identifiers": _array(_NAME), "keep": _array(_NAME), "missing": _NAME, "missing_tokens": _array(_STRING)},
        description="the columns' roles: the QIs, the SA, sensitive sets, columns kept, the missing-value policy")
    reference = _record(REFERENCE_KEYS, {
        "values": _array(_STRING, uniqueItems=True), "counts": _array(_COUNT), "declared_public": {"const": True},
        "numeric": {"anyOf": [_array(_NUMBER), {"type": "null"}]}},
        description="the SA distribution t-closeness is checked against, declared public by the publisher")
    check = _record(CHECK_KEYS, {"model": _NAME, "holds": {"type": "boolean"},
                                 "level": {"type": ["number", "null"]}, "n_groups": _COUNT,
                                 "failing_groups": _COUNT}, description="the model check of the published rows")
    skew = _record(SKEW_KEYS, {"step": _NAME, "method": _enum(SKEW_METHODS), "l": {"type": "number", "minimum": 1},
                               "n_input": _COUNT, "n_suppressed": _COUNT, "suppression_rate": _NUMBER},
                   description="the skew step's method and l (its counts only with publish.suppressed_count)")
    top = _record((TOP_KEYS, ("format", "digest", "files", "kind", "schema", "n_published")), {
        "format": {"const": FORMAT}, "digest": _SHA256,
        "signature": _record(SIGNATURE_KEYS, {"algorithm": {"const": "ed25519"}, "key": _NAME, "value": _NAME}),
        "files": {"$ref": "#/$defs/files"}, "openbook_version": _NAME, "kind": _enum(KINDS),
        "qi_recoding": {"const": "local"}, "schema": schema,
        "model": {"anyOf": [{"$ref": "#/$defs/model"}, {"type": "null"}]}, "algorithm": {"$ref": "#/$defs/algorithm"},
        "n_input": _COUNT, "n_published": _COUNT, "n_suppressed": _COUNT, "n_groups": _COUNT,
        "levels": {"anyOf": [_array(_COUNT), {"type": "null"}]}, "source": _NAME, "sa_reference": reference,
        "check": check, "skew": skew, "certificate": {"$ref": "#/$defs/certificate"},
        "publish": _record((OPT_INS, ()), {k: {"const": True} for k in OPT_INS},
                           description="what the publisher opted in to publish")})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "openbook-release-sidecar",
            "title": f"openbook release sidecar ({FORMAT}): RELEASE.json beside the data file",
            **top, "$defs": _defs()}
