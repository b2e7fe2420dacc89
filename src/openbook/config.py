"""Run configuration: a TOML file (input, schema, hierarchies, model, algorithm, output)
whose every option can also be given, and overridden, as a command-line flag.

Example::

    [input]
    path = "patients.csv"          # or: dataset = "adult"
    [schema]
    qi = ["age:numeric", "zip", "sex"]
    sa = "disease"
    missing = "error"              # or "drop", "value"
    [schema.sensitive_sets]
    sens = ["HIV"]
    [hierarchies]
    zip = "hierarchies/zip.csv"    # ARX CSV: leaf;level1;...;root
    [model]
    spec = "l=3"                   # see `openbook anonymize --help`
    [algorithm]
    name = "full-domain"
    levels = [1, 2, 0]
    max_suppression = 0.02
    skew = "none"                  # or r-suppression, safe-d, unsafe-d (paper 004; --skew)
    [output]
    path = "release.csv"
    publish_suppressed_count = false   # true: the sidecar states the input and suppressed counts
    publish_identifier_names = false   # true: the sidecar names the dropped identifier columns
    sign_key = "keys/publisher"        # sign the release (Ed25519; `openbook key new`)
    [certify]
    max_risk = 0.2                 # the sensitive-value line (default: the model's 1/ℓ)
    max_reid_risk = 0.2            # the identity line (default: 1/k of the model's k, else 0.2)
    worlds = 2000                  # replay adversary: worlds per sampled unit
    enabled = true                 # false = --no-certify
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DataError, ParameterError

#: a CSV or Parquet input at least this large is read in batches even without --batch-rows
#: (``check``, and ``anonymize``'s full-domain search on the frequency table)
AUTO_BATCH_BYTES = 1 << 30

SECTIONS = {"input", "schema", "hierarchies", "model", "algorithm", "output", "certify"}
#: the keys each section may hold (``hierarchies``: any column; ``model`` and ``algorithm``
#: pass their keys to the model / anonymizer, which reject unknown ones by name)
KEYS: dict[str, dict[str, Any]] = {
    "input": {"path": str, "dataset": str, "data_dir": str, "format": str, "table": str, "query": str},
    "schema": {"qi": (list, str), "sa": str, "sensitive_sets": (dict, str), "keep": (list, str),
               "identifiers": (list, str), "missing": str, "kinds": dict},
    "output": {"path": str, "kind": str, "t_reference": (str, dict), "publish_suppressed_count": bool,
               "publish_identifier_names": bool, "sign_key": str},
    "certify": {"max_risk": (int, float), "max_reid_risk": (int, float), "worlds": int, "enabled": bool,
                "against_registry": str},
}

#: the command-line flag (argparse destination) that overrides each key: one table, read by
#: :meth:`RunConfig.apply_flags` (``--sensitive``, ``--hierarchy`` and ``-m`` are parsed first)
FLAGS: dict[str, tuple[str, str]] = {
    "input": ("input", "path"), "dataset": ("input", "dataset"), "data_dir": ("input", "data_dir"),
    "format": ("input", "format"), "table": ("input", "table"), "query": ("input", "query"),
    "qi": ("schema", "qi"), "sa": ("schema", "sa"), "keep": ("schema", "keep"),
    "identifiers": ("schema", "identifiers"), "missing": ("schema", "missing"),
    "algorithm": ("algorithm", "name"), "levels": ("algorithm", "levels"), "seed": ("algorithm", "seed"),
    "max_suppression": ("algorithm", "max_suppression"), "p": ("algorithm", "p"), "order": ("algorithm", "order"),
    "strict": ("algorithm", "strict"), "skew": ("algorithm", "skew"),
    "output": ("output", "path"), "t_reference": ("output", "t_reference"), "kind": ("output", "kind"), "sign_key": ("output", "sign_key"),
    "publish_suppressed_count": ("output", "publish_suppressed_count"),
    "publish_identifier_names": ("output", "publish_identifier_names"),
    "max_risk": ("certify", "max_risk"), "max_reid_risk": ("certify", "max_reid_risk"),
    "worlds": ("certify", "worlds"), "against_registry": ("certify", "against_registry"),
}
#: the flags every command reading a table takes (``config_from_args``)
INPUT_FLAGS = ("input", "dataset", "data_dir", "format", "table", "query", "qi", "sa", "keep", "identifiers",
               "missing")

#: what each key means, for the reference page (docs/config.md) and the JSON Schema
#: (docs/config.schema.json): section -> key -> (meaning, default)
DOCS: dict[str, dict[str, tuple[str, str]]] = {
    "input": {"path": ("a CSV, Parquet, SQLite or DuckDB file, or a database URL (relative to the config file)", "—"),
              "dataset": ("a built-in dataset instead: adult, adult-train, synthetic", "—"),
              "data_dir": ("where to look for the dataset's files", "the usual places"),
              "format": ("csv, parquet, sqlite or duckdb when the suffix does not say", "from the suffix"),
              "table": ("a database's table", "—"), "query": ("a database query (one SELECT or WITH)", "—")},
    "schema": {"qi": ("the quasi-identifiers, each NAME or NAME:KIND (numeric, categorical, ordinal)", "—"),
               "sa": ("the sensitive attribute, NAME or NAME:KIND", "—"),
               "sensitive_sets": ("named sets of SA values: a table NAME = [values] (or \"NAME=v1|v2\")", "none"),
               "keep": ("other columns published unchanged", "none"),
               "identifiers": ("columns dropped from every release", "none"),
               "missing": ("error, drop or value: what a missing QI or SA value does", "error"),
               "kinds": ("a table NAME = KIND (numeric, categorical, ordinal)", "from qi/sa")},
    "output": {"path": ("the release's data file (.csv, .parquet, .sqlite, .duckdb; relative to the config file)", "—"),
               "kind": ("generalized or bucketized", "the algorithm's"),
               "t_reference": ("t-closeness: published, input, or a table value = count", "published"),
               "publish_suppressed_count": ("write the input and suppressed counts into the sidecar", "false"),
               "publish_identifier_names": ("write the dropped identifier columns' names into the sidecar", "false"),
               "sign_key": ("sign the release with this Ed25519 private key (`openbook key new`)", "unsigned")},
    "certify": {"max_risk": ("the sensitive-value line's target (a posterior bound in (0, 1])", "1/ℓ, α, t, or nobody "
                                                                                                 "certain"),
                "max_reid_risk": ("the identity line's target (re-identification risk in (0, 1]; 1 accepts exact QIs)",
                                  "1/k, else 0.2"),
                "worlds": ("the replay adversary's sampled worlds per unit too large to enumerate", "2000"),
                "enabled": ("false writes the release uncertified (--no-certify)", "true"),
                "against_registry": ("earlier releases to certify against (a registry folder or database)", "none")},
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a run configuration (its TOML read as JSON):
    docs/config.schema.json is this, and a test keeps them equal."""
    types: dict[type, dict[str, Any]] = {str: {"type": "string"}, int: {"type": "integer"}, bool: {"type": "boolean"},
             float: {"type": "number"}, list: {"type": "array", "items": {"type": "string"}},
             dict: {"type": "object"}}

    def one(t: Any) -> dict[str, Any]:
        if isinstance(t, tuple):
            opts = [types[x] for x in t]
            if {"type": "integer"} in opts and {"type": "number"} in opts:
                opts.remove({"type": "integer"})
            return opts[0] if len(opts) == 1 else {"anyOf": opts}
        return dict(types[t])

    props: dict[str, Any] = {}
    for section, keys in KEYS.items():
        props[section] = {"type": "object", "additionalProperties": False,
                          "properties": {k: {**one(t), "description": f"{DOCS[section][k][0]} (default: "
                                                                       f"{DOCS[section][k][1]})"}
                                         for k, t in keys.items()}}
    props["hierarchies"] = {"type": "object", "description": "column = hierarchy: an ARX CSV path, auto, adult:arx, "
                                                               "adult:paper001", "additionalProperties": {"type": "string"}}
    props["model"] = {"type": "object", "description": "spec = \"l=3\" (the -m syntax), or a model's own keys "
                                                         "(model = NAME, its parameters)",
                      "oneOf": [{"required": ["spec"], "properties": {"spec": {"type": "string"}},
                                 "additionalProperties": False},
                                {"required": ["model"], "properties": {"model": {"type": "string"}},
                                 "not": {"required": ["spec"]}}]}
    props["algorithm"] = {"type": "object", "description": "name = an algorithm of `anonymize --help`; every other key "
                                                             "is that algorithm's parameter (seed, levels, p, ...)",
                          "properties": {"name": {"type": "string"}, "seed": {"type": "integer", "minimum": 0},
                                         "skew": {"enum": ["none", "r-suppression", "safe-d", "unsafe-d"],
                                                  "description": "restore ℓ-eligibility first (paper 004; "
                                                                 "--skew)"}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "openbook-run-config",
            "title": "openbook run configuration (anonymize --config FILE.toml)", "type": "object",
            "additionalProperties": False, "properties": props}


def _home(key: str) -> str | None:
    """The section a key of :data:`KEYS` belongs to (the first that declares it)."""
    for section, keys in KEYS.items():
        if key in keys:
            return section
    return None


def _check_free_sections(path: Path, raw: dict[str, Any]) -> None:
    """``[model]`` and ``[algorithm]`` pass their keys on, so a key of another section placed
    there would otherwise be dropped or misread: it is refused, naming its section; a
    misspelling of such a key gets a did-you-mean; ``[model]`` holds ``spec`` or a model's
    own keys, not both; ``[hierarchies]`` maps columns to paths (strings)."""
    import difflib

    every = {k: sec for sec, keys in KEYS.items() for k in keys}
    for section in ("model", "algorithm"):
        body = raw.get(section)
        if not isinstance(body, dict):
            continue
        for key in body:
            home = _home(key)
            if home is not None and not (section == "algorithm" and key in ("seed",)):
                raise ParameterError(f"config file {path}: key {key!r} belongs in [{home}], not [{section}]",
                                     parameter=f"{section}.{key}")
            close = difflib.get_close_matches(key, list(every), n=1, cutoff=0.85)
            if close and close[0] != key and section == "model":
                raise ParameterError(f"config file {path}: unknown key {key!r} in [model]; did you mean "
                                     f"[{every[close[0]]}] {close[0]}?", parameter=f"model.{key}")
    model = raw.get("model")
    if isinstance(model, dict) and "spec" in model and len(model) > 1:
        extra = sorted(k for k in model if k != "spec")[0]
        raise ParameterError(f"config file {path}: [model] holds spec = {model['spec']!r} and also {extra!r}; give "
                             "the whole model in spec (e.g. spec = \"k=5,l=3\") or the model's keys without spec",
                             parameter=f"model.{extra}")
    hier = raw.get("hierarchies")
    if isinstance(hier, dict):
        for col, val in hier.items():
            if not isinstance(val, str):
                raise ParameterError(f"config file {path}: [hierarchies] {col} = {val!r} must be a path (a string), "
                                     "'auto' or 'adult:arx'", parameter=f"hierarchies.{col}", value=val)


def _check_keys(path: Path, raw: dict[str, Any]) -> None:
    """Unknown or wrongly typed keys of the known sections: one line, with a did-you-mean."""
    import difflib

    _check_free_sections(path, raw)
    for section, keys in KEYS.items():
        body = raw.get(section)
        if body is None:
            continue
        if not isinstance(body, dict):
            raise ParameterError(f"config file {path}: [{section}] must be a table of keys", parameter=section)
        for key, value in body.items():
            if key not in keys:
                close = difflib.get_close_matches(key, list(keys), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(keys))})"
                raise ParameterError(f"config file {path}: unknown key {key!r} in [{section}]{hint}",
                                     parameter=f"{section}.{key}")
            if not isinstance(value, keys[key]) or isinstance(value, bool) and keys[key] is not bool:
                raise ParameterError(f"config file {path}: [{section}] {key} = {value!r} has the wrong type",
                                     parameter=f"{section}.{key}", value=value)


@dataclass
class RunConfig:
    input: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)
    hierarchies: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    algorithm: dict[str, Any] = field(default_factory=dict)
    output: dict[str, Any] = field(default_factory=dict)
    certify: dict[str, Any] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)

    @classmethod
    def from_toml(cls, path: str | Path) -> "RunConfig":
        path = Path(path)
        try:
            raw = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise DataError(f"no such config file: {path}", path=path) from None
        except IsADirectoryError:
            raise DataError(f"config file {path} is a directory; give a .toml file", path=path) from None
        except OSError as exc:
            raise DataError(f"cannot read config file {path}: {exc.strerror or exc}", path=path) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"config file {path} is not valid TOML: {exc}", path=path) from None
        unknown = set(raw) - SECTIONS
        if unknown:
            raise ParameterError(
                f"config file {path}: unknown section [{sorted(unknown)[0]}] (known: {', '.join(sorted(SECTIONS))})",
                parameter=sorted(unknown)[0],
            )
        _check_keys(path, raw)
        bad = [k for k, v in raw.items() if not isinstance(v, dict)]
        if bad:
            raise ParameterError(f"config file {path}: [{bad[0]}] must be a table of keys", parameter=bad[0])
        cfg = cls(**{k: dict(v) for k, v in raw.items()}, base_dir=path.parent)
        # paths in the file are relative to the file
        for section, key in (("input", "path"), ("output", "path")):
            val = getattr(cfg, section).get(key)
            if isinstance(val, str) and "://" not in val and not Path(val).is_absolute():
                getattr(cfg, section)[key] = str(cfg.base_dir / val)
        for col, val in list(cfg.hierarchies.items()):
            if isinstance(val, str) and val not in ("auto", "flat") and not Path(val).is_absolute():
                cfg.hierarchies[col] = str(cfg.base_dir / val)
        return cfg

    def set(self, section: str, key: str, value: Any) -> None:
        """A flag given on the command line overrides the file."""
        if value is not None:
            getattr(self, section)[key] = value

    def apply_flags(self, args: Any, *dests: str) -> None:
        """The command-line flags ``dests`` (argparse destinations, :data:`FLAGS`) given in
        ``args`` override the file's keys; a flag not given (``None``) leaves the file's."""
        for dest in dests:
            section, key = FLAGS[dest]
            self.set(section, key, getattr(args, dest, None))
