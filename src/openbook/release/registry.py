"""The release registry: the releases a publisher has already made, and the linkage audit a
new release must pass before it goes out (paper 002 §2.3: an adversary who knows a person's
QI intersects the classes that contain them across every release).

Two stores, chosen by the path:

* a **folder**: each release saved with :func:`save_release` as ``NNNN-name.csv`` (+ its
  ``.json`` sidecar and ``.sa.csv``), listed in ``registry.json`` (written atomically);
* a **SQLite / DuckDB file** (``.sqlite``, ``.sqlite3``, ``.db``, ``.duckdb``, ``.ddb``): table
  ``registry_index`` (name, added, kind, meta as JSON) and per release ``r<id>_data`` /
  ``r<id>_sa``.

:meth:`ReleaseRegistry.audit` links the new release with every earlier one
(:func:`openbook.attacks.linkage.linkage`) for a population of people and refuses — raises
:class:`InfeasibleError` naming how many people fall below ℓ and which releases they are
linked through — or, with ``warn_only=True``, issues a :class:`PrivacyLeakWarning`.

The population is the people whose QI values the adversary may know: pass it (the source
table of the new release is the natural choice). Without it, the audit uses every QI tuple
published ungeneralized in the releases (the QI-tables of bucketized releases and the rows of
generalized releases whose labels are single values), which may miss people hidden behind
ranges; the report says which population was used.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sqlite3
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, InfeasibleError, ParameterError, PrivacyLeakWarning
from .io import DB_SUFFIXES, _apply_dtypes, _dtypes, _from_meta, _json_default, _plain, load_release, save_release, write_db_table
from .release import Release

INDEX = "registry.json"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class AuditReport:
    """Result of auditing a new release against the registry."""

    l: int
    new_release: str
    earlier: list[str]
    population: str
    n_people: int
    n_below: int
    n_already_below: int
    n_disclosed: int
    pairwise: dict[str, int]
    involved: list[str]
    summary: dict[str, Any]
    diversity: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def ok(self) -> bool:
        return self.n_below == 0

    def message(self) -> str:
        if self.ok:
            return (f"{self.new_release}: every one of {self.n_people} people keeps post-linkage diversity ≥ {self.l} "
                    f"across {len(self.earlier)} earlier release(s)")
        rel = ", ".join(self.involved) if self.involved else "(the new release alone)"
        return (f"{self.new_release}: linkage with earlier releases {rel} drops {self.n_below} of {self.n_people} "
                f"people below l={self.l} ({self.n_disclosed} to diversity 1)")

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "l": self.l, "new_release": self.new_release, "earlier": self.earlier,
                "population": self.population, "n_people": self.n_people, "n_below_l": self.n_below,
                "n_already_below_l": self.n_already_below, "n_disclosed": self.n_disclosed,
                "pairwise_below_l": self.pairwise, "releases_involved": self.involved,
                "summary": self.summary, "message": self.message()}


class ReleaseRegistry:
    """Releases already published, in a folder or a SQLite/DuckDB file."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        self.path = Path(path)
        self.is_db = self.path.suffix.lower() in DB_SUFFIXES
        if not create and not self.path.exists():
            raise DataError(f"no release registry at {self.path}", path=self.path)
        if not self.is_db:
            if self.path.exists() and not self.path.is_dir():
                raise DataError(f"registry path {self.path} is a file, not a folder or database", path=self.path)

    # -- listing -----------------------------------------------------------------------
    def list(self) -> list[dict[str, Any]]:
        """Entries in the order they were added: name, added, kind, rows, algorithm."""
        if self.is_db:
            if not self.path.exists():
                return []
            con = self._connect(read_only=True)
            try:
                rows = self._query(con, "SELECT id, name, added, kind, meta FROM registry_index ORDER BY id") \
                    if self._has_index(con) else pd.DataFrame(columns=["id", "name", "added", "kind", "meta"])
            finally:
                con.close()
            out = []
            for r in rows.itertuples(index=False):
                meta = json.loads(r.meta)
                out.append({"id": int(r.id), "name": r.name, "added": r.added, "kind": r.kind,
                            "rows": meta.get("n_published"), "algorithm": (meta.get("algorithm") or {}).get("algorithm")})
            return out
        idx = self.path / INDEX
        if not idx.is_file():
            return []
        try:
            return json.loads(idx.read_text())["releases"]
        except (json.JSONDecodeError, KeyError) as exc:
            raise DataError(f"registry index {idx} is unreadable", path=idx) from exc

    def names(self) -> list[str]:
        return [e["name"] for e in self.list()]

    def __len__(self) -> int:
        return len(self.list())

    # -- adding ------------------------------------------------------------------------
    def add(self, release: Release, name: str | None = None) -> str:
        """Record a published release; returns its name (default ``release-NNNN``)."""
        entries = self.list()
        name = name or f"release-{len(entries) + 1:04d}"
        if not _NAME.match(name):
            raise ParameterError(f"registry name {name!r}: use letters, digits, '_', '-', '.'", parameter="name", value=name)
        if name in {e["name"] for e in entries}:
            raise ParameterError(f"the registry already holds a release named {name!r}", parameter="name", value=name)
        if self.is_db:
            self._add_db(release, name, len(entries) + 1)
            return name
        self.path.mkdir(parents=True, exist_ok=True)
        file = f"{len(entries) + 1:04d}-{name}.csv"
        save_release(release, self.path / file)
        entries.append({"name": name, "file": file, "added": _now(), "kind": release.kind,
                        "rows": release.n_published,
                        "algorithm": (release.meta.get("algorithm") or {}).get("algorithm")})
        payload = json.dumps({"releases": entries}, indent=2, default=_json_default)
        fd, tmp = tempfile.mkstemp(prefix="." + INDEX, dir=self.path)
        os.close(fd)
        try:
            Path(tmp).write_text(payload)
            os.replace(tmp, self.path / INDEX)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return name

    # -- loading -----------------------------------------------------------------------
    def load(self, name: str) -> Release:
        for e in self.list():
            if e["name"] == name:
                return self._load_db(int(e["id"])) if self.is_db else load_release(self.path / e["file"])
        raise ParameterError(f"no release named {name!r} in the registry {self.path}", parameter="name", value=name)

    def releases(self) -> list[tuple[str, Release]]:
        return [(n, self.load(n)) for n in self.names()]

    # -- auditing ----------------------------------------------------------------------
    def audit(self, new_release: Release, l: int, *, population: pd.DataFrame | None = None,
              hierarchies: Mapping[str, Any] | None = None, warn_only: bool = False,
              new_name: str = "new release") -> AuditReport:
        """Post-linkage diversity of every person against all earlier releases plus the new
        one; raise :class:`InfeasibleError` if someone in the new release falls below ``l``
        (or warn with ``warn_only=True``)."""
        from ..attacks.linkage import linkage, pairwise_below

        if int(l) < 1:
            raise ParameterError(f"l = {l} must be at least 1", parameter="l", value=l)
        l = int(l)
        earlier = self.releases()
        rels = [r for _, r in earlier] + [new_release]
        names = [n for n, _ in earlier] + [new_name]
        if population is None:
            population, pop_desc = default_population(rels, hierarchies)
        else:
            pop_desc = f"{len(population)} given people"
        cache: dict = {}
        res = linkage(rels, population, hierarchies=hierarchies, names=names, cache=cache)
        in_new = res.matched[:, -1]
        below = in_new & (res.diversity < l)
        if earlier:
            before = linkage(rels[:-1], population, hierarchies=hierarchies, names=names[:-1], cache=cache)
            already = below & before.matched.any(axis=1) & (before.diversity < l)
            pw = pairwise_below(rels, population, l, hierarchies=hierarchies, names=names, cache=cache)
        else:
            already = np.zeros_like(below)
            pw = {}
        involved = [names[j] for j in range(len(earlier)) if (res.matched[below, j]).any()]
        summary = res.summary(l)
        report = AuditReport(l=l, new_release=new_name, earlier=names[:-1], population=pop_desc,
                             n_people=int(in_new.sum()), n_below=int(below.sum()), n_already_below=int(already.sum()),
                             n_disclosed=int((in_new & (res.diversity == 1)).sum()), pairwise=pw, involved=involved,
                             summary=summary, diversity=res.diversity)
        if not report.ok:
            if warn_only:
                warnings.warn(report.message(), PrivacyLeakWarning, stacklevel=2)
            else:
                raise InfeasibleError(report.message() + "; refusing (use warn_only / --warn-only to publish anyway)",
                                      model=f"l={l} after linkage")
        return report

    # -- database backend ----------------------------------------------------------------
    def _connect(self, *, read_only: bool):
        if self.path.suffix.lower() in (".duckdb", ".ddb"):
            import duckdb

            return duckdb.connect(str(self.path), read_only=read_only and self.path.exists())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(str(self.path))

    @staticmethod
    def _query(con, sql: str) -> pd.DataFrame:
        if isinstance(con, sqlite3.Connection):
            return pd.read_sql_query(sql, con)
        return con.execute(sql).df()

    def _has_index(self, con) -> bool:
        if isinstance(con, sqlite3.Connection):
            return bool(con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='registry_index'").fetchall())
        return bool(con.execute("SELECT table_name FROM information_schema.tables WHERE table_name='registry_index'").fetchall())

    def _write(self, con, name: str, df: pd.DataFrame) -> None:
        write_db_table(con, name, df)

    def _add_db(self, release: Release, name: str, rid: int) -> None:
        meta = dict(release.meta)
        meta["files"] = {"rows": len(release.data), "dtypes": _dtypes(release.data)}
        if release.sa_table is not None:
            meta["files"].update(sa_rows=len(release.sa_table), sa_dtypes=_dtypes(release.sa_table))
        con = self._connect(read_only=False)
        try:
            if isinstance(con, sqlite3.Connection):
                con.execute("BEGIN")
            else:
                con.execute("BEGIN TRANSACTION")
            if not self._has_index(con):
                con.execute("CREATE TABLE registry_index (id INTEGER, name TEXT, added TEXT, kind TEXT, meta TEXT)")
            self._write(con, f"r{rid}_data", _plain(release.data))
            if release.sa_table is not None:
                self._write(con, f"r{rid}_sa", _plain(release.sa_table))
            con.execute("INSERT INTO registry_index VALUES (?, ?, ?, ?, ?)",
                        [rid, name, _now(), release.kind, json.dumps(meta, default=_json_default)])
            con.commit()
        except BaseException:
            con.rollback()
            raise
        finally:
            con.close()

    def _load_db(self, rid: int) -> Release:
        con = self._connect(read_only=True)
        try:
            meta = json.loads(self._query(con, f"SELECT meta FROM registry_index WHERE id = {int(rid)}")["meta"].iloc[0])
            data = self._query(con, f"SELECT * FROM r{rid}_data")
            sa = self._query(con, f"SELECT * FROM r{rid}_sa") if meta["kind"] == "bucketized" else None
        finally:
            con.close()
        files = meta["files"]
        if len(data) != files["rows"]:
            raise DataError(f"release {rid} in {self.path} is truncated", path=self.path)
        data = _apply_dtypes(data, files["dtypes"], self.path)
        if sa is not None:
            sa = _apply_dtypes(sa, files["sa_dtypes"], self.path)
        return _from_meta(meta, data, sa)


def default_population(releases: Sequence[Release], hierarchies: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, str]:
    """QI tuples published ungeneralized in any of ``releases`` (see the module docstring)."""
    from ..attacks.linkage import _RANGE, _TOP

    hierarchies = dict(hierarchies or {})
    qi = list(dict.fromkeys(c for r in releases for c in r.qi))
    frames = []
    for r in releases:
        if set(r.qi) != set(qi):
            continue
        df = r.data[qi].astype(str)
        if r.kind == "generalized":
            point = np.ones(len(df), dtype=bool)
            for c in qi:
                s = df[c].str.strip()
                point &= ~(s.eq(_TOP) | s.str.match(_RANGE.pattern)).to_numpy()
                h = hierarchies.get(c)
                if h is not None:
                    leaves = {str(x) for x in np.asarray(h.leaves, dtype=object)}
                    point &= s.isin(leaves).to_numpy()
            df = df[point]
        frames.append(df)
    if not frames:
        raise ParameterError("the releases publish different QI columns: give the population explicitly",
                             parameter="population")
    pop = pd.concat(frames, ignore_index=True).drop_duplicates(ignore_index=True)
    return pop, f"{len(pop)} distinct QI tuples published ungeneralized in the releases"
