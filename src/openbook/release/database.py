"""A release in one SQLite / DuckDB file: tables ``release_data``, ``release_sa``
(bucketized) and ``release_meta`` (the sidecar as one JSON row, with a digest of the tables'
content). One file, so one atomic rename commits it (:mod:`.commit`). A database holding a
``release_meta`` table *is* a release: ``check`` and every other command load and verify it
as one, never as a raw table (docs/release-files.md).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ..errors import DataError
from .sidecar import FORMAT, json_default, self_digest

DB_SUFFIXES = {".sqlite", ".sqlite3", ".db", ".duckdb", ".ddb"}
DUCKDB_SUFFIXES = {".duckdb", ".ddb"}
META_TABLE = "release_meta"


def is_duckdb(path: Path, suffix: str | None = None) -> bool:
    return (suffix or path.suffix).lower() in DUCKDB_SUFFIXES


def connect(path: Path, *, read_only: bool, suffix: str | None = None) -> Any:
    """A connection; read-only connections never create or change the file."""
    if is_duckdb(path, suffix):
        import duckdb

        return duckdb.connect(str(path), read_only=read_only)
    if read_only:
        return sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    return sqlite3.connect(str(path))


def query(con: Any) -> Callable[[str], pd.DataFrame]:
    if isinstance(con, sqlite3.Connection):
        return lambda sql: pd.read_sql_query(sql, con)
    return lambda sql: con.execute(sql).df()


def tables(con: Any) -> set[str]:
    if isinstance(con, sqlite3.Connection):
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def is_release_database(path: str | Path) -> bool:
    """Is ``path`` a database file holding a release (its ``release_meta`` table)? A file
    that is not a readable database is not one (the raw-table reader reports it)."""
    path = Path(path)
    if path.suffix.lower() not in DB_SUFFIXES or not path.is_file():
        return False
    try:
        con = connect(path, read_only=True)
        try:
            return META_TABLE in tables(con)
        finally:
            con.close()
    except Exception:  # sqlite3 / duckdb raise many types for a file that is not theirs
        return False


def plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categoricals and strings as plain Python strings (what both engines store)."""
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(out[c].dtype):
            out[c] = out[c].astype(str).astype(object)
    return out


def content_digest(data: pd.DataFrame, sa_table: pd.DataFrame | None) -> str:
    """SHA-256 of the tables' canonical CSV text (what a database release is bound to)."""
    h = hashlib.sha256(plain(data).astype(str).to_csv(index=False).encode())
    if sa_table is not None:
        h.update(b"\0" + plain(sa_table).astype(str).to_csv(index=False).encode())
    return h.hexdigest()


def write_db_table(con: Any, name: str, df: pd.DataFrame) -> None:
    """Create table ``name`` from ``df`` in a SQLite or DuckDB connection."""
    if isinstance(con, sqlite3.Connection):
        df.to_sql(name, con, index=False)
    else:
        con.register("frame", df)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        con.unregister("frame")


def db_writer(data: pd.DataFrame, sa_table: pd.DataFrame | None, side: dict[str, Any],
              suffix: str) -> Callable[[Path], None]:
    """A writer of a new database file at a temporary path (see :func:`.commit.commit`)."""

    def write(tmp: Path) -> None:
        con = connect(tmp, read_only=False, suffix=suffix)
        try:
            frames = {"release_data": plain(data),
                      META_TABLE: pd.DataFrame({"meta": [json.dumps(side, default=json_default)]})}
            if sa_table is not None:
                frames["release_sa"] = plain(sa_table)
            for name, df in frames.items():
                write_db_table(con, name, df)
            con.commit()
        finally:
            con.close()

    return write


def read_db(path: Path) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None]:
    """The digest-checked record and the raw tables of a database release (the caller
    validates the record and binds the tables to it)."""
    if path.is_dir():
        raise DataError(f"{path} is a directory, not a release database", path=path)
    if not path.is_file():
        raise DataError(f"no such database file: {path}", path=path)
    try:
        con = connect(path, read_only=True)
        try:
            q = query(con)
            have = tables(con)
            if META_TABLE not in have:
                raise DataError(f"database {path} holds no release (no {META_TABLE} table)", path=path)
            rows = q(f"SELECT meta FROM {META_TABLE}")["meta"]
            if len(rows) != 1:
                raise DataError(f"database {path}: its {META_TABLE} table holds {len(rows)} rows, not 1", path=path)
            meta = json.loads(rows.iloc[0], parse_constant=lambda c: float(c))
            data = q("SELECT * FROM release_data")
            kind = meta.get("kind") if isinstance(meta, dict) else None
            sa = q("SELECT * FROM release_sa") if kind == "bucketized" else None
        finally:
            con.close()
    except DataError:
        raise
    except Exception as exc:  # sqlite3 / duckdb / pandas / json raise many types; one line
        raise DataError(f"cannot read a release from database {path}: "
                        f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", path=path) from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or "digest" not in meta:
        raise DataError(f"database {path} holds no {FORMAT} release (no digests); re-create it", path=path)
    if meta["digest"] != self_digest(meta):
        raise DataError(f"database {path}: its release record was edited after it was written (its digest does "
                        "not match its content)", path=path)
    return meta, data, sa
