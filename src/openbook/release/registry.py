"""The release registry: the releases a publisher has already made (storage only; the
linkage audit a new release must pass is :mod:`openbook.attacks.linkage_audit`, paper 002
§2.3).

Two stores, chosen by the path:

* a **folder**: each release saved with :func:`save_release` as ``NNNN-name.csv`` (+ its
  ``.json`` sidecar and ``.sa.csv``), listed in ``registry.json`` (written atomically);
* a **SQLite / DuckDB file** (``.sqlite``, ``.sqlite3``, ``.db``, ``.duckdb``, ``.ddb``): table
  ``registry_index`` (name, added, kind, meta as JSON) and per release ``r<id>_data`` /
  ``r<id>_sa``.

**Concurrency.** Every add holds an exclusive lock (``flock`` on the folder, or on the
database file) for its whole read-modify-write, and every read takes it briefly, so two
processes adding at once both land, numbered in turn. A lock not obtained within
``LOCK_TIMEOUT`` seconds is a one-line error.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as _dt
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError, ParameterError
from .io import (
    DB_SUFFIXES,
    _apply_dtypes,
    _dtypes,
    _from_meta,
    _json_default,
    _plain,
    load_release,
    path_lock,
    save_release,
    sidecar_record,
    write_db_table,
    write_plain,
)
from .release import KINDS, Release
from .sidecar import check_against_data, validate

#: seconds to wait for another process's add before giving up
LOCK_TIMEOUT = 60.0

INDEX = "registry.json"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")  # no leading dot: never ".", ".." or hidden


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class ReleaseRegistry:
    """Releases already published, in a folder or a SQLite/DuckDB file."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        self.path = Path(path)
        self.is_db = self.path.suffix.lower() in DB_SUFFIXES
        if not create and not self.path.exists():
            raise DataError(f"no release registry at {self.path}", path=self.path)
        if not self.is_db and self.path.exists() and not self.path.is_dir():
            raise DataError(f"registry path {self.path} is a file, not a folder or database", path=self.path)
        if self.is_db and self.path.is_dir():
            raise DataError(f"registry path {self.path} is a folder, not a database file", path=self.path)

    # -- locking -----------------------------------------------------------------------
    def _lock(self, exclusive: bool) -> Any:
        """Exclusive lock on the folder, or on the database file itself (``flock``, which
        SQLite's and DuckDB's own POSIX locks do not interfere with), for every add and
        read; no lock file is ever created."""
        if not self.path.exists():
            if not exclusive:
                return contextlib.nullcontext()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with path_lock(self.path.parent, timeout=LOCK_TIMEOUT):  # one creator at a time
                if not self.path.exists():
                    if not self.is_db:
                        self.path.mkdir()
                    elif self.path.suffix.lower() in (".duckdb", ".ddb"):
                        import duckdb

                        duckdb.connect(str(self.path)).close()
                    else:
                        sqlite3.connect(str(self.path)).close()
        return path_lock(self.path, timeout=LOCK_TIMEOUT)

    # -- listing -----------------------------------------------------------------------
    def list(self) -> list[dict[str, Any]]:
        """Entries in the order they were added: name, added, kind, rows, algorithm."""
        with self._lock(exclusive=False):
            return self._list()

    def _list(self) -> builtins.list[dict[str, Any]]:
        if self.is_db:
            if not self.path.exists():
                return []
            try:
                con = self._connect(read_only=True)
                try:
                    rows = self._query(con, "SELECT id, name, added, kind, meta FROM registry_index ORDER BY id") \
                        if self._has_index(con) else pd.DataFrame(columns=["id", "name", "added", "kind", "meta"])
                finally:
                    con.close()
                out = []
                for r in rows.itertuples(index=False):
                    meta = json.loads(r.meta)
                    out.append({"id": int(r.id), "name": str(r.name), "added": r.added, "kind": r.kind,
                                "rows": meta.get("n_published"),
                                "algorithm": (meta.get("algorithm") or {}).get("algorithm")})
                return out
            except DataError:
                raise
            except Exception as exc:  # sqlite3 / duckdb / json raise many types: one line
                raise DataError(f"{self.path} is not a readable openbook registry: "
                                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                                path=self.path) from exc
        idx = self.path / INDEX
        if not idx.is_file():
            return []
        try:
            entries = json.loads(idx.read_text())["releases"]
            if not isinstance(entries, list) or not all(
                    isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("file"), str)
                    and isinstance(e.get("kind"), str) for e in entries):
                raise TypeError("entries")
            return entries
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise DataError(f"registry index {idx} is unreadable (not an openbook registry index)", path=idx) from exc

    def _refuse_foreign_database(self) -> None:
        """A database file that holds tables of its own and no registry index is somebody's data
        (an input, say): the registry never writes into it."""
        if not self.is_db or not self.path.exists():
            return
        try:
            con = self._connect(read_only=True)
            try:
                if self._has_index(con):
                    return
                if self.path.suffix.lower() in (".duckdb", ".ddb"):
                    tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
                else:
                    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()]
            finally:
                con.close()
        except (DataError, ParameterError):
            raise
        except Exception as exc:  # sqlite3 / duckdb: a file that is no database
            raise DataError(f"{self.path} is not a readable openbook registry: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", path=self.path) from exc
        if tables:
            raise ParameterError(f"{self.path} is a database holding other tables ({', '.join(sorted(tables)[:3])}), "
                                 "not a release registry: choose another path", parameter="registry",
                                 value=str(self.path))

    def names(self) -> builtins.list[str]:
        return [e["name"] for e in self.list()]

    def __len__(self) -> int:
        return len(self.list())

    # -- adding ------------------------------------------------------------------------
    def add(self, release: Release, name: str | None = None, *, check: Any = None) -> str:
        """Record a published release; returns its name (default ``release-NNNN``). Safe
        when several processes add at once (module docstring). ``check(earlier)`` — e.g. the
        linkage audit — runs on the earlier ``(name, release)`` pairs inside the same lock,
        so no other add can slip in between the audit and the write."""
        if name is not None and not _NAME.match(name):
            raise ParameterError(f"registry name {name!r}: use letters, digits, '_', '-', '.' (not first)",
                                 parameter="name",
                                 value=name)
        with self._lock(exclusive=True):
            self._refuse_foreign_database()
            entries = self._list()
            name = name or f"release-{len(entries) + 1:04d}"
            if name in {e["name"] for e in entries}:
                raise ParameterError(f"the registry already holds a release named {name!r}", parameter="name",
                                     value=name)
            if check is not None:
                check([(e["name"], self._load_entry(e)) for e in entries])
            if self.is_db:
                try:
                    self._add_db(release, name, max([int(e["id"]) for e in entries], default=0) + 1)
                except (sqlite3.Error, ImportError) as exc:
                    raise DataError(f"cannot add to the registry {self.path}: {exc}", path=self.path) from exc
                except Exception as exc:  # duckdb raises its own types: one line
                    if type(exc).__module__.split(".")[0] != "duckdb":
                        raise
                    raise DataError(f"cannot add to the registry {self.path}: {str(exc).splitlines()[0]}",
                                    path=self.path) from exc
                return name
            self.path.mkdir(parents=True, exist_ok=True)
            file = f"{len(entries) + 1:04d}-{name}.csv"
            save_release(release, self.path / file)
            entries.append({"name": name, "file": file, "added": _now(), "kind": release.kind,
                            "rows": release.n_published,
                            "algorithm": (release.meta.get("algorithm") or {}).get("algorithm")})
            payload = json.dumps({"releases": entries}, indent=2, default=_json_default)
            write_plain(self.path / INDEX, lambda t: t.write_text(payload))
            return name

    # -- loading -----------------------------------------------------------------------
    def _load_entry(self, e: dict[str, Any]) -> Release:
        return self._load_db(int(e["id"])) if self.is_db else load_release(self.path / e["file"])

    def load(self, name: str) -> Release:
        with self._lock(exclusive=False):
            for e in self._list():
                if e["name"] == name:
                    return self._load_entry(e)
        raise ParameterError(f"no release named {name!r} in the registry {self.path}", parameter="name", value=name)

    def releases(self) -> builtins.list[tuple[str, Release]]:
        with self._lock(exclusive=False):
            return [(e["name"], self._load_entry(e)) for e in self._list()]

    # -- database backend ----------------------------------------------------------------
    def _connect(self, *, read_only: bool):
        if self.path.suffix.lower() in (".duckdb", ".ddb"):
            import duckdb

            return duckdb.connect(str(self.path), read_only=read_only and self.path.exists())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(str(self.path), timeout=LOCK_TIMEOUT)

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
        meta = sidecar_record(release)  # what a sidecar would hold: nothing about suppressed rows
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
        where = f"{self.path} (release {rid})"
        try:
            con = self._connect(read_only=True)
            try:
                meta = json.loads(self._query(con, f"SELECT meta FROM registry_index WHERE id = {int(rid)}")["meta"]
                                  .iloc[0], parse_constant=lambda c: float(c))
                kind = meta.get("kind") if isinstance(meta, dict) else None
                data = self._query(con, f"SELECT * FROM r{rid}_data")
                sa = self._query(con, f"SELECT * FROM r{rid}_sa") if kind == "bucketized" else None
            finally:
                con.close()
        except Exception as exc:  # sqlite3 / duckdb / json raise many types: one line
            raise DataError(f"cannot read {where}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                            path=self.path) from exc
        if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict):
            raise DataError(f"{where}: its record is not an openbook release record", path=self.path)
        files = meta["files"]
        meta = validate({k: v for k, v in meta.items() if k != "files"}, where, kinds=KINDS, database=None)
        if not isinstance(files.get("rows"), int) or len(data) != files["rows"]:
            raise DataError(f"release {rid} in {self.path} is truncated", path=self.path)
        data = _apply_dtypes(data, files.get("dtypes"), self.path)
        if sa is not None:
            sa = _apply_dtypes(sa, files.get("sa_dtypes"), self.path)
        release = _from_meta(meta, data, sa, where)
        check_against_data(release, where)
        return release
