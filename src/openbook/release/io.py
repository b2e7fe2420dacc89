"""Saving and loading releases: CSV or Parquet data files with a JSON sidecar, or tables in
a SQLite / DuckDB database.

File layout for ``release.csv`` (or ``.parquet``): the data (generalized table, or the
QI-table of a bucketized release), ``release.sa.csv`` (the SA-table, bucketized only) and
``release.json`` (schema, model, algorithm, counts, version, column types, row counts).
Every file is written to a temporary name and renamed into place, the sidecar last, so a
failure leaves no partial release behind. Loading checks the row counts the sidecar
records, so a truncated data file is reported, not read.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from .release import COUNT, GID, Release

DB_SUFFIXES = {".sqlite", ".sqlite3", ".db", ".duckdb", ".ddb"}


def sidecar_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_suffix(".json")


def sa_table_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_name(p.stem + ".sa" + p.suffix)


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_frame(df: pd.DataFrame, path: Path) -> None:
    if path.suffix.lower() in (".parquet", ".pq"):
        _atomic_write(path, lambda t: df.to_parquet(t, index=False))
    else:
        _atomic_write(path, lambda t: df.to_csv(t, index=False))


def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    out = {}
    for c in df.columns:
        dt = df[c].dtype
        out[str(c)] = "int64" if pd.api.types.is_integer_dtype(dt) else (
            "float64" if pd.api.types.is_float_dtype(dt) else "string")
    return out


def save_release(release: Release, path: str | os.PathLike) -> list[Path]:
    """Write the release; returns the files written (data first, sidecar last)."""
    path = Path(path)
    if path.suffix.lower() in DB_SUFFIXES:
        return [_save_db(release, path)]
    meta = dict(release.meta)
    meta["files"] = {"data": path.name, "rows": len(release.data), "dtypes": _dtypes(release.data)}
    written = []
    # a failure mid-way must leave nothing: remove what this call already renamed into place
    try:
        _write_frame(release.data, path)
        written.append(path)
        if release.sa_table is not None:
            sp = sa_table_path(path)
            _write_frame(release.sa_table, sp)
            written.append(sp)
            meta["files"].update(sa_table=sp.name, sa_rows=len(release.sa_table),
                                 sa_dtypes=_dtypes(release.sa_table))
        side = sidecar_path(path)
        payload = json.dumps(meta, indent=2, default=_json_default)
        _atomic_write(side, lambda t: t.write_text(payload))
        written.append(side)
    except BaseException:
        for w in written:
            w.unlink(missing_ok=True)
        raise
    return written


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot serialise {type(o).__name__}")


def _read_frame(path: Path, dtypes: dict[str, str], rows: int | None) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"release file {path} is missing", path=path)
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, on_bad_lines="error")
    except Exception as exc:
        raise DataError(f"cannot read release file {path}: {str(exc).splitlines()[0] if str(exc) else exc}", path=path) from exc
    if rows is not None and len(df) != rows:
        raise DataError(f"release file {path} is truncated or altered: {len(df)} rows, the sidecar says {rows}", path=path)
    return _apply_dtypes(df, dtypes, path)


def _apply_dtypes(df: pd.DataFrame, dtypes: dict[str, str], path: Any) -> pd.DataFrame:
    for c, t in dtypes.items():
        if c not in df.columns:
            raise DataError(f"release file {path} lacks column {c!r}", path=path)
        try:
            if t == "int64":
                df[c] = pd.to_numeric(df[c]).astype("int64")
            elif t == "float64":
                df[c] = pd.to_numeric(df[c]).astype("float64")
            else:
                df[c] = df[c].astype(str)
        except (ValueError, TypeError) as exc:
            raise DataError(f"release file {path}: column {c!r} is not {t}", path=path) from exc
    return df


def load_release(path: str | os.PathLike) -> Release:
    """Load a release from its data file, its sidecar, or a database file."""
    path = Path(path)
    if path.suffix.lower() in DB_SUFFIXES:
        return _load_db(path)
    side = path if path.suffix == ".json" else sidecar_path(path)
    if not side.is_file():
        raise DataError(f"no release sidecar {side} (is {path} a release written by openbook?)", path=side)
    try:
        meta = json.loads(side.read_text())
        files = meta["files"]
    except (json.JSONDecodeError, KeyError, UnicodeDecodeError) as exc:
        raise DataError(f"release sidecar {side} is unreadable or truncated", path=side) from exc
    data = _read_frame(side.with_name(files["data"]), files["dtypes"], files["rows"])
    sa_table = None
    if meta["kind"] == "bucketized":
        sa_table = _read_frame(side.with_name(files["sa_table"]), files["sa_dtypes"], files["sa_rows"])
    return _from_meta(meta, data, sa_table)


def _from_meta(meta: dict[str, Any], data: pd.DataFrame, sa_table: pd.DataFrame | None) -> Release:
    schema = meta["schema"]
    qi = [c["name"] for c in schema["qi"]]
    return Release(meta["kind"], data, qi, schema["sa"]["name"], sa_table, meta)


# -- databases --------------------------------------------------------------------------
def _connect(path: Path, *, read_only: bool):
    if path.suffix.lower() in (".duckdb", ".ddb"):
        import duckdb

        return duckdb.connect(str(path), read_only=read_only)
    return sqlite3.connect(str(path))


def _save_db(release: Release, path: Path) -> Path:
    """Tables ``release_data``, ``release_sa`` (bucketized) and ``release_meta`` (one JSON
    row), written to a temporary database file and renamed into place."""
    meta = dict(release.meta)
    meta["files"] = {"rows": len(release.data), "dtypes": _dtypes(release.data)}
    if release.sa_table is not None:
        meta["files"].update(sa_rows=len(release.sa_table), sa_dtypes=_dtypes(release.sa_table))

    def write(tmp: Path) -> None:
        tmp.unlink(missing_ok=True)
        con = _connect(tmp, read_only=False)
        try:
            frames = {"release_data": _plain(release.data),
                      "release_meta": pd.DataFrame({"meta": [json.dumps(meta, default=_json_default)]})}
            if release.sa_table is not None:
                frames["release_sa"] = _plain(release.sa_table)
            for name, df in frames.items():
                write_db_table(con, name, df)
            con.commit()
        finally:
            con.close()

    tmp_path = path.with_name("." + path.name + ".part" + path.suffix)
    try:
        write(tmp_path)
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)
    return path


def write_db_table(con: Any, name: str, df: pd.DataFrame) -> None:
    """Create table ``name`` from ``df`` in a SQLite or DuckDB connection."""
    if isinstance(con, sqlite3.Connection):
        df.to_sql(name, con, index=False)
    else:
        con.register("frame", df)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        con.unregister("frame")


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(out[c].dtype):
            out[c] = out[c].astype(str).astype(object)
    return out


def _load_db(path: Path) -> Release:
    if not path.is_file():
        raise DataError(f"no such database file: {path}", path=path)
    try:
        con = _connect(path, read_only=True)
        try:
            q = (lambda sql: pd.read_sql_query(sql, con)) if isinstance(con, sqlite3.Connection) else (lambda sql: con.execute(sql).df())
            meta = json.loads(q("SELECT meta FROM release_meta")["meta"].iloc[0])
            data = q("SELECT * FROM release_data")
            sa = q("SELECT * FROM release_sa") if meta["kind"] == "bucketized" else None
        finally:
            con.close()
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"cannot read a release from database {path}: {str(exc).splitlines()[0] if str(exc) else exc}", path=path) from exc
    files = meta["files"]
    if len(data) != files["rows"]:
        raise DataError(f"release in {path} is truncated: {len(data)} rows, expected {files['rows']}", path=path)
    data = _apply_dtypes(data, files["dtypes"], path)
    if sa is not None:
        sa = _apply_dtypes(sa, files["sa_dtypes"], path)
    return _from_meta(meta, data, sa)
