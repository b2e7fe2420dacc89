"""Saving and loading releases: CSV or Parquet data files bound to a JSON sidecar, or tables
in one SQLite / DuckDB file.

**Layout.** ``release.csv`` (or ``.parquet``) holds the data — the generalized table, or
the QI-table of a bucketized release — ``release.sa.csv`` the SA-table (bucketized only) and
``release.csv.json`` the sidecar: schema, model, algorithm, counts, certificate, and for
every file its name, row count and SHA-256, plus a digest of the sidecar's own content. Each
data file has its own sidecar name, so ``r.csv`` and ``r.parquet`` never share one.

**Bound.** Loading refuses a data file whose digest or row count differs from its sidecar's
(torn or tampered), a sidecar whose own digest does not match (hand-edited), an SA-table
whose per-group counts differ from the QI-table's group sizes, and counts that do not add
up (input = published + suppressed).

**Crash-safe pair writes** (:func:`commit`): every new file is written under a temporary
name and synced; then a small *journal* listing the renames is written atomically — the
commit point — and the renames are performed; the journal is removed last. Every openbook
read or write of a release first :func:`recover`\\ s it under a lock on its folder: a journal
present means the commit happened, so the remaining renames are rolled forward; no journal
means the write never committed, so stale temporaries are removed and the old files are
intact. A kill at any moment therefore leaves, as every openbook command sees it, the old
release intact or the new one complete. SQLite/DuckDB releases are one file (one rename)
and carry a digest of their content.

**Overwrites.** :func:`check_release_output` refuses an unknown suffix, a directory, a path
that is (or whose sidecar / SA-table is) an input, a file of another release, and — unless
``force`` — any existing file of the release; :func:`check_plain_output` does the same for
reports and posterior tables. A failed write never touches the previous release.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError
from .release import COUNT, GID, KINDS, Release

FORMAT = "openbook-release/2"
FRAME_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
DB_SUFFIXES = {".sqlite", ".sqlite3", ".db", ".duckdb", ".ddb"}
JOURNAL = ".commit"
PART = ".part"


def sidecar_path(path: str | os.PathLike) -> Path:
    """``r.csv`` -> ``r.csv.json``: every data file has its own sidecar."""
    p = Path(path)
    return p.with_name(p.name + ".json")


def sa_table_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_name(p.stem + ".sa" + p.suffix)


def release_files(path: str | os.PathLike) -> list[Path]:
    """Every file a release at ``path`` may own: data, SA-table, sidecar (databases: one)."""
    p = Path(path)
    if p.suffix.lower() in DB_SUFFIXES:
        return [p]
    return [p, sa_table_path(p), sidecar_path(p)]


def _journal(path: Path) -> Path:
    return path.with_name("." + path.name + JOURNAL)


# ---------------------------------------------------------------------------------------
# locking, journal, recovery
# ---------------------------------------------------------------------------------------
#: locks this process holds: real path -> [descriptor, depth]
_HELD: dict[str, list[int]] = {}


@contextlib.contextmanager
def path_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Exclusive ``flock`` on a folder or file for a read-modify-write; re-entrant within a
    process (a registry holding its folder may write releases into it). ``timeout``
    seconds without the lock is a one-line :class:`DataError`."""
    import time

    key = os.path.realpath(path)
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise DataError(f"{path} is busy: another process has held it for over {timeout:.0f} s",
                                        path=path) from None
                    time.sleep(0.02)
        _HELD[key] = [fd, 1]
        try:
            yield
        finally:
            del _HELD[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def folder_lock(folder: Path) -> contextlib.AbstractContextManager:
    """Exclusive lock on a folder for a read-modify-write of a release in it."""
    return path_lock(folder)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_name(final: Path) -> Path:
    return final.with_name(f".{final.name}.{secrets.token_hex(6)}{PART}")


def recover(path: str | os.PathLike) -> None:
    """Finish or undo an interrupted write of the release at ``path`` (module docstring).
    Call with the folder lock held."""
    path = Path(path)
    folder = path.parent
    journal = _journal(path)
    if journal.is_file():
        try:
            plan = json.loads(journal.read_text())
            renames, deletes = plan["renames"], plan.get("deletes", [])
        except (OSError, ValueError, KeyError, TypeError):
            # a journal is renamed into place whole, so an unreadable one was never committed
            journal.unlink(missing_ok=True)
        else:
            try:
                for tmp, final in renames:
                    if (folder / tmp).exists():
                        os.replace(folder / tmp, folder / final)
                for name in deletes:
                    (folder / name).unlink(missing_ok=True)
                _fsync_dir(folder)
                journal.unlink()
                _fsync_dir(folder)
            except PermissionError as exc:
                raise DataError(f"an interrupted write of {path} needs recovery, which needs write access to "
                                f"{folder}", path=path) from exc
    for name in [p.name for p in release_files(path)] + [journal.name]:
        for stale in folder.glob(f".{glob.escape(name)}.*{PART}"):
            with contextlib.suppress(OSError):
                stale.unlink()


def commit(path: Path, writers: dict[Path, Any], *, deletes: Iterable[Path] = ()) -> list[Path]:
    """Write every ``final -> write(tmp)`` of ``writers`` crash-safely as one unit (module
    docstring); ``deletes`` are removed in the same commit. Returns the final paths."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    with folder_lock(folder):
        recover(path)
        temps: dict[Path, Path] = {}
        try:
            for final, write in writers.items():
                tmp = _temp_name(final)
                temps[final] = tmp
                write(tmp)
                _fsync_file(tmp)
            journal = _journal(path)
            jtmp = _temp_name(journal)
            temps[journal] = jtmp
            jtmp.write_text(json.dumps({"renames": [[t.name, f.name] for f, t in temps.items() if f != journal],
                                        "deletes": [d.name for d in deletes]}))
            _fsync_file(jtmp)
            _fsync_dir(folder)
            os.replace(jtmp, journal)  # the commit point
        except BaseException:
            for t in temps.values():
                t.unlink(missing_ok=True)
            raise
        _fsync_dir(folder)
        recover(path)  # perform the renames and remove the journal
    return list(writers)


# ---------------------------------------------------------------------------------------
# output paths
# ---------------------------------------------------------------------------------------
def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _owner(file: Path) -> Path | None:
    """The data file of the release ``file`` belongs to, if ``file`` is a release's file."""
    if file.suffix.lower() in DB_SUFFIXES:
        return file if file.is_file() else None
    candidates = [file]
    if file.name.endswith(".json"):
        candidates.append(file.with_name(file.name[: -len(".json")]))
    if file.stem.endswith(".sa"):
        candidates.append(file.with_name(file.stem[: -len(".sa")] + file.suffix))
    for c in candidates:
        if sidecar_path(c).is_file():
            return c
    return None


def _inputs(inputs: Iterable[Any]) -> list[Path]:
    return [Path(str(i)) for i in inputs if i is not None and "://" not in str(i) and Path(str(i)).exists()]


def check_release_output(path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = ()) -> Path:
    """May a release be written at ``path``? Raise a one-line :class:`ParameterError` when
    not (module docstring, "Overwrites")."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FRAME_SUFFIXES and suffix not in DB_SUFFIXES:
        known = ", ".join(sorted({*FRAME_SUFFIXES, *DB_SUFFIXES}))
        raise ParameterError(f"output {path}: unknown release format {path.suffix or '(no suffix)'!r} (use {known})",
                             parameter="output", value=str(path))
    if path.name.endswith(".sa" + path.suffix):
        raise ParameterError(f"output {path}: a '.sa{path.suffix}' name is an SA-table's; choose another name",
                             parameter="output", value=str(path))
    if path.is_dir():
        raise ParameterError(f"output {path} is a directory; give a file name", parameter="output", value=str(path))
    ins = _inputs(inputs)
    for f in release_files(path):
        if any(_same(f, i) for i in ins):
            raise ParameterError(f"output {path} would overwrite the input {f}; choose another name",
                                 parameter="output", value=str(path))
        if f.exists():
            owner = _owner(f)
            if owner is not None and owner != path:
                raise ParameterError(f"output {path} would overwrite {f}, a file of the release {owner}",
                                     parameter="output", value=str(path))
            if not force:
                what = "release" if owner is not None else "file"
                raise ParameterError(f"output {path}: {f} exists (a {what}); use --force to replace it",
                                     parameter="output", value=str(path))
    return path


def check_plain_output(path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = (),
                       what: str = "output") -> Path:
    """May a report or table be written at ``path``? Never over an input or a release's
    file; over another existing file only with ``force``."""
    path = Path(path)
    if path.is_dir():
        raise ParameterError(f"{what} {path} is a directory; give a file name", parameter=what, value=str(path))
    if not path.parent.is_dir():
        raise ParameterError(f"{what} {path}: folder {path.parent} does not exist", parameter=what, value=str(path))
    if any(_same(path, i) for i in _inputs(inputs)):
        raise ParameterError(f"{what} {path} is an input; choose another name", parameter=what, value=str(path))
    owner = _owner(path) if path.exists() else None
    if owner is not None:
        raise ParameterError(f"{what} {path} is a file of the release {owner}; choose another name",
                             parameter=what, value=str(path))
    if path.exists() and not force:
        raise ParameterError(f"{what} {path} exists; use --force to replace it", parameter=what, value=str(path))
    return path


def write_plain(path: str | os.PathLike, write: Any) -> Path:
    """Write one file atomically (temporary name, sync, rename)."""
    path = Path(path)
    tmp = _temp_name(path)
    try:
        write(tmp)
        _fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# ---------------------------------------------------------------------------------------
# serialisation helpers
# ---------------------------------------------------------------------------------------
def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    out = {}
    for c in df.columns:
        dt = df[c].dtype
        out[str(c)] = "int64" if pd.api.types.is_integer_dtype(dt) else (
            "float64" if pd.api.types.is_float_dtype(dt) else "string")
    return out


def _json_default(o: Any) -> Any:
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


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default).encode()


def _self_digest(meta: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical({k: v for k, v in meta.items() if k != "digest"})).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _frame_writer(df: pd.DataFrame, fmt: str):
    if fmt == "parquet":
        return lambda t: df.to_parquet(t, index=False)
    return lambda t: df.to_csv(t, index=False)


# ---------------------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------------------
def save_release(release: Release, path: str | os.PathLike, *, force: bool = False,
                 inputs: Iterable[Any] = ()) -> list[Path]:
    """Write the release bound to its sidecar, crash-safely (module docstring); returns the
    files written (data, SA-table, sidecar). Refuses to overwrite an existing release
    without ``force`` and any of ``inputs`` always."""
    path = check_release_output(path, force=force, inputs=inputs)
    if path.suffix.lower() in DB_SUFFIXES:
        return [_save_db(release, path)]
    fmt = FRAME_SUFFIXES[path.suffix.lower()]
    meta = {k: v for k, v in release.meta.items() if k not in ("files", "digest", "format")}
    written: dict[str, Any] = {}

    def data_writer(tmp: Path) -> None:
        _frame_writer(release.data, fmt)(tmp)
        written["data"] = {"data": path.name, "rows": len(release.data), "sha256": _sha256(tmp),
                           "dtypes": _dtypes(release.data)}

    writers: dict[Path, Any] = {path: data_writer}
    sp = sa_table_path(path)
    if release.sa_table is not None:
        def sa_writer(tmp: Path) -> None:
            _frame_writer(release.sa_table, fmt)(tmp)
            written["sa"] = {"sa_table": sp.name, "sa_rows": len(release.sa_table), "sa_sha256": _sha256(tmp),
                             "sa_dtypes": _dtypes(release.sa_table)}
        writers[sp] = sa_writer

    def sidecar_writer(tmp: Path) -> None:  # runs last: the digests are known by then
        files = {**written["data"], **written.get("sa", {})}
        side = {"format": FORMAT, **meta, "files": files}
        side["digest"] = _self_digest(side)
        tmp.write_text(json.dumps(side, indent=2, default=_json_default))

    writers[sidecar_path(path)] = sidecar_writer
    deletes = [sp] if release.sa_table is None and sp.exists() else []
    return commit(path, writers, deletes=deletes)


# ---------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------
def _bad(side: Path, what: str) -> DataError:
    return DataError(f"release sidecar {side} {what}", path=side)


def _int(value: Any, side: Path, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(side, f"has {key}={value!r}, not a non-negative integer")
    return value


def _plain_name(value: Any, side: Path, key: str) -> str:
    if not isinstance(value, str) or not value or value in (".", "..") or "/" in value or "\\" in value \
            or value.startswith("."):
        raise _bad(side, f"names {key}={value!r}: a release's files lie beside their sidecar")
    return value


def _read_sidecar(side: Path) -> dict[str, Any]:
    try:
        meta = json.loads(side.read_text(), parse_constant=lambda c: float(c))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise _bad(side, "is unreadable or truncated") from exc
    if not isinstance(meta, dict):
        raise _bad(side, f"is a JSON {type(meta).__name__}, not an object")
    if meta.get("format") != FORMAT or "digest" not in meta:
        raise _bad(side, f"is not a {FORMAT} sidecar (no digests: written by an older openbook, or not "
                         "openbook's); re-create the release")
    if meta["digest"] != _self_digest(meta):
        raise _bad(side, "was edited after it was written (its digest does not match its content)")
    if meta.get("kind") not in KINDS:
        raise _bad(side, f"has kind {meta.get('kind')!r} (known: {', '.join(KINDS)})")
    sch = meta.get("schema")
    if not isinstance(sch, dict) or not isinstance(sch.get("qi"), list) or not isinstance(sch.get("sa"), dict):
        raise _bad(side, "lacks the schema (qi and sa)")
    if not isinstance(meta.get("files"), dict):
        raise _bad(side, "lacks the files it describes")
    return meta


def _check_counts(meta: dict[str, Any], rows: int, where: Path) -> None:
    n_in, n_pub, n_sup = (meta.get(k) for k in ("n_input", "n_published", "n_suppressed"))
    for key, v in (("n_input", n_in), ("n_published", n_pub), ("n_suppressed", n_sup)):
        _int(v, where, key)
    if n_pub != rows:
        raise DataError(f"release {where}: the sidecar says {n_pub} published rows, the data holds {rows}", path=where)
    if n_in != n_pub + n_sup:
        raise DataError(f"release {where}: rows lost: input {n_in} != published {n_pub} + suppressed {n_sup}",
                        path=where)


def _read_frame(path: Path, fmt: str, dtypes: dict[str, str], rows: int, sha: Any) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"release file {path} is missing", path=path)
    if _sha256(path) != sha:
        raise DataError(f"release file {path} does not match its sidecar's digest (torn or tampered)", path=path)
    try:
        if fmt == "parquet":
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, on_bad_lines="error")
    except Exception as exc:  # pyarrow / pandas raise many types; one line
        raise DataError(f"cannot read release file {path}: {str(exc).splitlines()[0] if str(exc) else exc}",
                        path=path) from exc
    if len(df) != rows:
        raise DataError(f"release file {path} is truncated or altered: {len(df)} rows, the sidecar says {rows}",
                        path=path)
    return _apply_dtypes(df, dtypes, path)


def _apply_dtypes(df: pd.DataFrame, dtypes: Any, path: Any) -> pd.DataFrame:
    if not isinstance(dtypes, dict):
        raise DataError(f"release {path}: its sidecar lacks the column types", path=path)
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


def _check_sa_table(data: pd.DataFrame, sa_table: pd.DataFrame, sa: str, where: Path) -> None:
    for c in (GID, sa, COUNT):
        if c not in sa_table.columns:
            raise DataError(f"release {where}: its SA-table lacks column {c!r}", path=where)
    if GID not in data.columns:
        raise DataError(f"release {where}: its QI-table lacks column {GID!r}", path=where)
    if (sa_table[COUNT] <= 0).any():
        raise DataError(f"release {where}: its SA-table holds a count below 1", path=where)
    sizes = data[GID].value_counts()
    sums = sa_table.groupby(GID)[COUNT].sum()
    if not sizes.sort_index().equals(sums.sort_index().astype(sizes.dtype)):
        raise DataError(f"release {where}: the SA-table's counts per group differ from the QI-table's group sizes",
                        path=where)


def load_release(path: str | os.PathLike) -> Release:
    """Load a release from its data file, its sidecar, or a database file; verify that the
    files are bound to the sidecar (digests, counts) before returning it."""
    path = Path(path)
    if path.suffix.lower() in DB_SUFFIXES:
        return _load_db(path)
    data_path = path.with_name(path.name[: -len(".json")]) if path.name.endswith(".json") else path
    side = sidecar_path(data_path)
    if data_path.parent.is_dir() and (side.exists() or _journal(data_path).exists()):
        with folder_lock(data_path.parent):
            recover(data_path)
    if not side.is_file():
        raise DataError(f"no release sidecar {side} (is {data_path} a release written by openbook?)", path=side)
    fmt = FRAME_SUFFIXES.get(data_path.suffix.lower())
    if fmt is None:
        raise DataError(f"{data_path}: unknown release format {data_path.suffix!r}", path=data_path)
    meta = _read_sidecar(side)
    files = meta["files"]
    if _plain_name(files.get("data"), side, "files.data") != data_path.name:
        raise _bad(side, f"describes {files.get('data')!r}, not {data_path.name!r}")
    data = _read_frame(data_path, fmt, files.get("dtypes"), _int(files.get("rows"), side, "files.rows"),
                       files.get("sha256"))
    _check_counts(meta, len(data), data_path)
    sa_table = None
    if meta["kind"] == "bucketized":
        sa_name = _plain_name(files.get("sa_table"), side, "files.sa_table")
        sa_table = _read_frame(data_path.with_name(sa_name), fmt, files.get("sa_dtypes"),
                               _int(files.get("sa_rows"), side, "files.sa_rows"), files.get("sa_sha256"))
        _check_sa_table(data, sa_table, meta["schema"]["sa"].get("name"), data_path)
    return _from_meta(meta, data, sa_table)


def _from_meta(meta: dict[str, Any], data: pd.DataFrame, sa_table: pd.DataFrame | None) -> Release:
    schema = meta["schema"]
    try:
        qi = [c["name"] for c in schema["qi"]]
        sa = schema["sa"]["name"]
    except (KeyError, TypeError) as exc:
        raise DataError("a release's schema lacks its column names") from exc
    missing = [c for c in [*qi, sa] if c not in data.columns and not (c == sa and sa_table is not None)]
    if missing:
        raise DataError(f"a release's data lacks its column {missing[0]!r}")
    return Release(meta["kind"], data, qi, sa, sa_table, meta)


# -- databases --------------------------------------------------------------------------
def _connect(path: Path, *, read_only: bool, suffix: str | None = None):
    if (suffix or path.suffix).lower() in (".duckdb", ".ddb"):
        import duckdb

        return duckdb.connect(str(path), read_only=read_only)
    return sqlite3.connect(str(path))


def _content_digest(data: pd.DataFrame, sa_table: pd.DataFrame | None) -> str:
    """SHA-256 of the tables' canonical CSV text (what a database release is bound to)."""
    h = hashlib.sha256(_plain(data).astype(str).to_csv(index=False).encode())
    if sa_table is not None:
        h.update(b"\0" + _plain(sa_table).astype(str).to_csv(index=False).encode())
    return h.hexdigest()


def _save_db(release: Release, path: Path) -> Path:
    """Tables ``release_data``, ``release_sa`` (bucketized) and ``release_meta`` (one JSON
    row) in a new database file, renamed into place (one file: one atomic rename)."""
    meta = {k: v for k, v in release.meta.items() if k not in ("files", "digest", "format")}
    files = {"rows": len(release.data), "dtypes": _dtypes(release.data),
             "content_sha256": _content_digest(release.data, release.sa_table)}
    if release.sa_table is not None:
        files.update(sa_rows=len(release.sa_table), sa_dtypes=_dtypes(release.sa_table))
    side = {"format": FORMAT, **meta, "files": files}
    side["digest"] = _self_digest(side)

    def write(tmp: Path) -> None:
        con = _connect(tmp, read_only=False, suffix=path.suffix)
        try:
            frames = {"release_data": _plain(release.data),
                      "release_meta": pd.DataFrame({"meta": [json.dumps(side, default=_json_default)]})}
            if release.sa_table is not None:
                frames["release_sa"] = _plain(release.sa_table)
            for name, df in frames.items():
                write_db_table(con, name, df)
            con.commit()
        finally:
            con.close()

    return commit(path, {path: write})[0]


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
    with folder_lock(path.parent):
        recover(path)
    try:
        con = _connect(path, read_only=True)
        try:
            q = (lambda sql: pd.read_sql_query(sql, con)) if isinstance(con, sqlite3.Connection) \
                else (lambda sql: con.execute(sql).df())
            raw = q("SELECT meta FROM release_meta")["meta"].iloc[0]
            data = q("SELECT * FROM release_data")
            meta = json.loads(raw, parse_constant=lambda c: float(c))
            kind = meta.get("kind") if isinstance(meta, dict) else None
            sa = q("SELECT * FROM release_sa") if kind == "bucketized" else None
        finally:
            con.close()
    except DataError:
        raise
    except Exception as exc:  # sqlite3 / duckdb / pandas raise many types; one line
        raise DataError(f"cannot read a release from database {path}: "
                        f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", path=path) from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or "digest" not in meta:
        raise DataError(f"database {path} holds no {FORMAT} release (no digests); re-create it", path=path)
    if meta["digest"] != _self_digest(meta) or meta.get("kind") not in KINDS or not isinstance(meta.get("files"), dict):
        raise DataError(f"database {path}: its release record was edited or is malformed", path=path)
    files = meta["files"]
    rows = _int(files.get("rows"), path, "files.rows")
    if len(data) != rows:
        raise DataError(f"release in {path} is truncated: {len(data)} rows, expected {rows}", path=path)
    data = _apply_dtypes(data, files.get("dtypes"), path)
    if sa is not None:
        sa = _apply_dtypes(sa, files.get("sa_dtypes"), path)
    if _content_digest(data, sa) != files.get("content_sha256"):
        raise DataError(f"release in {path} does not match its digest (altered)", path=path)
    _check_counts(meta, len(data), path)
    if sa is not None:
        _check_sa_table(data, sa, meta["schema"]["sa"].get("name"), path)
    return _from_meta(meta, data, sa)

