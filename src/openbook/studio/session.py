"""The single user's session: the table loaded, each column's role (QI, SA, identifier, kept,
dropped) and kind, the hierarchies, and from them the run configuration ``anonymize --config``
would read (:class:`openbook.config.RunConfig`) and the encoded table
(:func:`openbook.pipeline.load_input`, cached per configuration); the raw table's measure; the
runs (:mod:`.worker`) and the releases published (:mod:`.publish`).

Everything the page changes goes through one lock: a local studio has one user, but a page
may send requests while a run finishes in the background.
"""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data import Loaded, present_values

#: a column's roles: quasi-identifier, sensitive attribute, direct identifier (dropped),
#: published unchanged (``--keep``), or dropped with anonymize's warning
ROLES = ("qi", "sa", "identifier", "keep", "drop")
#: a QI's (or the SA's) kinds
KINDS = ("categorical", "numeric", "ordinal")
#: what a missing value does (``--missing``)
MISSING = ("error", "drop", "value")
#: hierarchy choices besides one built in the page
HIERARCHY_MODES = ("auto", "builtin", "adult:paper001", "adult:arx")
#: encoded tables kept (the runs keep their own)
TABLE_CACHE = 4


@dataclass
class Choices:
    """The publisher's declarations: role and kind per column, hierarchies, ``--missing``,
    sensitive value sets (``NAME=v1|v2`` a line)."""

    roles: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    hierarchies: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: str = "error"
    sensitive: str = ""

    def named(self, role: str) -> list[str]:
        return [c for c, r in self.roles.items() if r == role]

    def to_dict(self) -> dict[str, Any]:
        return {"roles": dict(self.roles), "kinds": dict(self.kinds), "missing": self.missing,
                "sensitive": self.sensitive,
                "hierarchies": {c: {k: v for k, v in h.items() if k != "path"} for c, h in self.hierarchies.items()}}


def sensitive_sets(text: str) -> dict[str, list[str]] | None:
    """``NAME=v1|v2`` lines (as ``--sensitive`` repeated) → ``{NAME: [v1, v2]}``; a bare
    ``v1|v2`` is the set ``sensitive``."""
    from ..errors import ParameterError

    out: dict[str, list[str]] = {}
    for line in str(text or "").splitlines():
        if not line.strip():
            continue
        name, _, vals = line.rpartition("=")
        values = [v.strip() for v in vals.split("|") if v.strip()]
        if not values:
            raise ParameterError(f"sensitive set {line.strip()!r}: no values (use NAME=v1|v2)", parameter="sensitive",
                                 value=line.strip())
        bucket = out.setdefault(name.strip() or "sensitive", [])
        bucket.extend(v for v in values if v not in bucket)
    return out or None


class Session:
    """The studio's state (module docstring). ``folder`` is the session's own folder (uploads,
    hierarchy files), ``out_dir`` the only folder releases are written to."""

    def __init__(self, folder: Path, out_dir: Path, *, max_upload: int) -> None:
        self.lock = threading.RLock()
        self.folder = Path(folder)
        self.out_dir = Path(out_dir)
        self.max_upload = int(max_upload)
        self.data: Loaded | None = None
        self.choices = Choices()
        self.version = 0  # bumps on every change of data or declarations
        self.loads = 0
        self.measure: dict[str, Any] | None = None
        self.histogram: str | None = None
        self.runs: list[Any] = []
        self.published: list[dict[str, Any]] = []
        self._tables: dict[str, tuple[Any, list[str]]] = {}

    # -- data and declarations -----------------------------------------------------------------
    def load(self, loaded: Loaded) -> None:
        """Work on ``loaded`` from now on: its own declarations (a built-in dataset's schema and
        hierarchies) or none; the runs so far stay in the history."""
        with self.lock:
            self.data = loaded
            self.loads += 1
            names = [c["name"] for c in loaded.columns]
            roles = {n: loaded.roles.get(n, "drop") for n in names}  # a file's columns: the publisher decides
            kinds = {c["name"]: loaded.kinds.get(c["name"], c["suggested_kind"]) for c in loaded.columns}
            hier = {c: {"mode": "builtin", "description": d} for c, d in loaded.builtin.items()}
            self.choices = Choices(roles, kinds, hier, loaded.missing, loaded.sensitive)
            self._changed()

    def _changed(self) -> None:
        self.version += 1
        self.measure = None
        self.histogram = None

    def require_data(self) -> Loaded:
        from ..errors import ParameterError

        if self.data is None:
            raise ParameterError("load a table first (a built-in dataset, a file path or an upload)", parameter="data")
        return self.data

    def set_columns(self, body: dict[str, Any]) -> None:
        """Roles, kinds, ``--missing`` and sensitive sets from the page (unknown columns,
        roles or kinds refused by name; two SAs refused)."""
        from ..errors import ParameterError, SchemaError

        with self.lock:
            data = self.require_data()
            names = {c["name"] for c in data.columns}
            roles, kinds = dict(self.choices.roles), dict(self.choices.kinds)
            for col in body.get("columns") or []:
                name = str(col.get("name"))
                if name not in names:
                    raise SchemaError(f"unknown column {name!r}", column=name)
                role, kind = col.get("role", roles.get(name)), col.get("kind", kinds.get(name))
                if role not in ROLES:
                    raise ParameterError(f"column {name!r}: unknown role {role!r} (use one of {', '.join(ROLES)})",
                                         parameter="role", value=role)
                if kind not in KINDS:
                    raise ParameterError(f"column {name!r}: unknown kind {kind!r} (use one of {', '.join(KINDS)})",
                                         parameter="kind", value=kind)
                roles[name], kinds[name] = role, kind
            sa = [c for c, r in roles.items() if r == "sa"]
            if len(sa) > 1:
                raise SchemaError(f"one sensitive attribute: {sa[0]!r} and {sa[1]!r} are both marked SA", column=sa[1])
            missing = body.get("missing", self.choices.missing)
            if missing not in MISSING:
                raise ParameterError(f"--missing {missing!r}: use one of {', '.join(MISSING)}", parameter="missing",
                                     value=missing)
            sensitive = str(body.get("sensitive", self.choices.sensitive) or "")
            sensitive_sets(sensitive)  # a malformed line is refused now, by name
            self.choices = Choices(roles, kinds, self.choices.hierarchies, missing, sensitive)
            self._changed()

    def build_hierarchy(self, column: str, method: str, param: str) -> dict[str, Any]:
        """Build ``column``'s hierarchy as ``openbook hierarchy`` would (:mod:`.hierarchy`)."""
        from ..errors import SchemaError
        from . import hierarchy

        with self.lock:
            data = self.require_data()
            if column not in data.frame.columns:
                raise SchemaError(f"unknown column {column!r}", column=column)
            tokens = ("?",)
            values = present_values(data.frame[column], tokens)
            info = hierarchy.write(self.folder / "hierarchies", column, method, param, values)
            self.choices.hierarchies[column] = info
            self._changed()
            return info

    def reset_hierarchy(self, column: str, mode: str) -> None:
        """``auto`` (the automatic hierarchy of the column's kind), ``builtin`` (a built-in
        dataset's), or a named Adult hierarchy (``adult:paper001``, ``adult:arx``)."""
        from ..errors import ParameterError
        from ..hierarchy import ADULT_COLUMNS

        with self.lock:
            data = self.require_data()
            if mode not in HIERARCHY_MODES:
                raise ParameterError(f"unknown hierarchy choice {mode!r} (use {', '.join(HIERARCHY_MODES)})",
                                     parameter="hierarchy", value=mode)
            if mode == "builtin" and column not in data.builtin:
                raise ParameterError(f"column {column!r} has no built-in hierarchy", parameter="hierarchy", value=mode)
            if mode.startswith("adult:") and column not in ADULT_COLUMNS:
                raise ParameterError(f"the Adult hierarchies have none for column {column!r}", parameter="hierarchy",
                                     value=mode)
            if mode == "auto":
                self.choices.hierarchies.pop(column, None)
                if column in data.builtin:  # the dataset's own would apply otherwise
                    self.choices.hierarchies[column] = {"mode": "auto", "description": "automatic"}
            elif mode == "builtin":
                self.choices.hierarchies[column] = {"mode": "builtin", "description": data.builtin[column]}
            else:
                self.choices.hierarchies[column] = {"mode": mode, "description": f"named ({mode})"}
            self._changed()

    # -- the run configuration and the table ---------------------------------------------------------
    def config(self) -> Any:
        """The :class:`~openbook.config.RunConfig` of the declarations (input, schema,
        hierarchies), as ``anonymize --config`` would read it."""
        from ..config import RunConfig

        with self.lock:
            data = self.require_data()
            ch = self.choices
            cfg = RunConfig()
            if data.dataset:
                cfg.input["dataset"] = data.dataset
            else:
                cfg.input["path"] = str(data.path)
            qi = []
            for col in ch.named("qi"):
                same = data.kinds.get(col) == ch.kinds[col]  # a dataset's own declaration (its orders) kept
                qi.append(col if same or ch.kinds[col] == "categorical" else f"{col}:{ch.kinds[col]}")
            cfg.schema["qi"] = qi
            sa = ch.named("sa")
            if sa:
                col = sa[0]
                same = data.kinds.get(col) == ch.kinds[col]
                cfg.schema["sa"] = col if same or ch.kinds[col] == "categorical" else f"{col}:{ch.kinds[col]}"
            if ch.named("identifier"):
                cfg.schema["identifiers"] = ch.named("identifier")
            if ch.named("keep"):
                cfg.schema["keep"] = ch.named("keep")
            if ch.missing != data.missing:  # else the input's own (a dataset's, or anonymize's default)
                cfg.schema["missing"] = ch.missing
            sets = sensitive_sets(ch.sensitive)
            if sets and not (data.dataset and ch.sensitive.strip() == data.sensitive.strip()):  # not the dataset's own
                cfg.schema["sensitive_sets"] = sets
            for col, h in ch.hierarchies.items():
                if col not in qi and col not in sa:
                    continue
                if h["mode"] == "built":
                    cfg.hierarchies[col] = h["path"]
                elif h["mode"] != "builtin":
                    cfg.hierarchies[col] = h["mode"]
            return cfg

    def key(self, cfg: Any) -> str:
        """What identifies an encoded table: the data loaded and the configuration."""
        files = {c: Path(p).stat().st_mtime_ns for c, p in cfg.hierarchies.items() if Path(str(p)).is_file()}
        return json.dumps([self.loads, cfg.input, cfg.schema, cfg.hierarchies, files], sort_keys=True, default=str)

    def table(self, cfg: Any = None) -> tuple[Any, list[str]]:
        """The encoded table of the declarations and the warnings ``anonymize`` prints while
        reading it (a dropped column, a QI that would collapse to '*', dropped rows),
        as :func:`openbook.pipeline.load_input` makes them."""
        from ..pipeline import load_input

        with self.lock:
            data = self.require_data()
            cfg = cfg or self.config()
            key = self.key(cfg)
            if key in self._tables:
                return self._tables[key]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                table = load_input(cfg)
            if data.origin == "upload":
                table.source = data.name  # the name the publisher knows, not the session's copy
            said = list(dict.fromkeys(str(w.message) for w in caught if not issubclass(w.category, RuntimeWarning)))
            self._tables[key] = (table, said)
            while len(self._tables) > TABLE_CACHE:
                self._tables.pop(next(iter(self._tables)))
            return table, said

    def inputs(self, cfg: Any) -> list[str]:
        """Every file a run reads (the input, hierarchy files): a release is never written over
        one (``anonymize``'s rule)."""
        out = [cfg.input.get("path"), *cfg.hierarchies.values()]
        return [str(x) for x in out if x and Path(str(x)).is_file()]

    def hierarchy_file(self, column: str) -> Path | None:
        h = self.choices.hierarchies.get(column)
        return Path(h["path"]) if h and h.get("mode") == "built" else None

    # -- the page's view -----------------------------------------------------------------------------
    def state(self, catalog: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            return {"version": self.version, "data": None if self.data is None else self.data.to_dict(),
                    "choices": self.choices.to_dict(), "measure": self.measure,
                    "runs": [r.brief() for r in self.runs], "published": list(self.published),
                    "out_dir": str(self.out_dir), "max_upload_mb": self.max_upload // (1 << 20),
                    "catalog": catalog}
