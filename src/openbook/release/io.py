"""Saving and loading releases: CSV or Parquet data files bound to a JSON sidecar, or tables
in one SQLite / DuckDB file (:mod:`.database`).

**Layout.** ``release.csv`` (or ``.parquet``) holds the data — the generalized table, or
the QI-table of a bucketized release — ``release.sa.csv`` the SA-table (bucketized only) and
``release.csv.json`` the sidecar (:mod:`.sidecar`: what it holds, and what it never holds),
with for every file its name, row count and SHA-256, plus a digest of the sidecar's own
content. Each data file has its own sidecar name, so ``r.csv`` and ``r.parquet`` never share
one.

**Bound.** Loading refuses a data file whose digest or row count differs from its sidecar's
(torn or tampered), a sidecar whose own digest does not match (hand-edited), a sidecar with
any malformed or unknown key (:func:`.sidecar.validate`), an SA-table whose per-group counts
differ from the QI-table's group sizes, and a model check or group count the published rows
contradict (:func:`.sidecar.check_against_data`). Row counts published by opt-in must add up
(input = published + suppressed); without it they are checked before writing only.

**Crash-safe.** Files are written with the commit protocol of :mod:`.commit`; every read or
write of a release path first settles it (:func:`settle`): an interrupted write is rolled
forward or undone and stale temporaries are swept, under the folder lock.

**Overwrites.** :func:`check_release_output` refuses an unknown suffix, a directory, a path
that is (or whose sidecar / SA-table is) an input, a file of another release, and — unless
``force`` — any existing file of the release; :func:`check_plain_output` does the same for
reports and posterior tables. A failed write never touches the previous release.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, cast

import pandas as pd

from ..errors import DataError, ParameterError, option
from . import commit as _commit
from .commit import JOURNAL, PART, folder_lock, path_lock, write_plain  # noqa: F401  (re-exported)
from .database import (  # noqa: F401  (re-exported)
    DB_SUFFIXES,
    content_digest,
    db_writer,
    is_release_database,
    plain,
    read_db,
    write_db_table,
)
from .record import ReleaseMeta
from .release import COUNT, GID, KINDS, Release
from .sidecar import (
    FORMAT,
    check_against_data,
    check_schema,
    json_default,
    public_record,
    self_digest,
    sha256_file,
    validate,
)

FRAME_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: ``files.layout`` of the Spark engine's release: a folder of Parquet part files
#: (:mod:`openbook.release.folder` reads it)
FOLDER_LAYOUT = "parquet-folder"

# names other modules and tests know these helpers by
_json_default, _self_digest, _sha256, _plain = json_default, self_digest, sha256_file, plain


def sidecar_path(path: str | os.PathLike) -> Path:
    """``r.csv`` -> ``r.csv.json``: every data file has its own sidecar."""
    p = Path(path)
    if not p.name:
        raise DataError(f"{path!s} names a folder, not a release file", path=p)
    return p.with_name(p.name + ".json")


def sa_table_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.name:
        raise DataError(f"{path!s} names a folder, not a release file", path=p)
    return p.with_name(p.stem + ".sa" + p.suffix)


def release_files(path: str | os.PathLike) -> list[Path]:
    """Every file a release at ``path`` may own: data, SA-table, sidecar (databases: one)."""
    p = Path(path)
    if p.suffix.lower() in DB_SUFFIXES:
        return [p]
    return [p, sa_table_path(p), sidecar_path(p)]


def data_path_of(path: str | os.PathLike) -> Path:
    """The data (or database) file of the release ``path`` names (its data file, its
    sidecar or its database file)."""
    p = Path(path)
    return p.with_name(p.name[: -len(".json")]) if p.name.endswith(".json") and len(p.name) > 5 else p


def _folder_name(path: Path) -> bool:
    """Is ``path`` named like the Spark engine's release folder (``NAME.parquet``)?"""
    return path.suffix.lower() == ".parquet"


def _layout(side: Path) -> Any:
    """``files.layout`` of the sidecar ``side`` (``None`` when it has none or is unreadable)."""
    try:
        files = json.loads(side.read_text()).get("files")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return None
    return files.get("layout") if isinstance(files, dict) else None


def recover(path: str | os.PathLike) -> None:
    """Finish or undo an interrupted write of the release at ``path`` and sweep its stale
    temporaries (:func:`.commit.recover`). Call with the folder lock held."""
    _commit.recover(path, release_files(path))


def settle(path: str | os.PathLike) -> None:
    """What every read or write of a release path does first: under the folder lock,
    :func:`recover` it. A path without a folder or a file name is left alone, and so is a
    folder — unless it is named like the Spark engine's release folder (``NAME.parquet``),
    which is written and recovered like a file."""
    p = data_path_of(path)
    if not p.name or p.name in (".", "..") or not p.parent.is_dir() or (p.is_dir() and not _folder_name(p)):
        return
    if p.suffix.lower() not in FRAME_SUFFIXES and p.suffix.lower() not in DB_SUFFIXES:
        return
    try:
        with folder_lock(p.parent):
            recover(p)  # its own permission failures are one-line DataErrors
    except PermissionError:  # a folder this user cannot open: nothing it could recover either
        return


def commit(path: Path, writers: dict[Path, Any], *, deletes: Iterable[Path] = ()) -> list[Path]:
    """Write ``writers`` as one crash-safe unit (:func:`.commit.commit`)."""
    return _commit.commit(path, writers, release_files(path), deletes=deletes)


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
        if c.name and sidecar_path(c).is_file():
            return c
    return None


def _inputs(inputs: Iterable[Any]) -> list[Path]:
    return [Path(str(i)) for i in inputs if i is not None and "://" not in str(i) and Path(str(i)).exists()]


def check_release_output(path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = ()) -> Path:
    """May a release be written at ``path``? Raise a one-line :class:`ParameterError` when
    not (module docstring, "Overwrites")."""
    path = Path(path)
    if path.is_dir() or not path.name:
        raise ParameterError(f"output {path} is a directory; give a file name", parameter="output", value=str(path))
    check_output_folder(path)
    suffix = path.suffix.lower()
    if suffix not in FRAME_SUFFIXES and suffix not in DB_SUFFIXES:
        known = ", ".join(sorted({*FRAME_SUFFIXES, *DB_SUFFIXES}))
        raise ParameterError(f"output {path}: unknown release format {path.suffix or '(no suffix)'!r} (use {known})",
                             parameter="output", value=str(path))
    if path.name.endswith(".sa" + path.suffix):
        raise ParameterError(f"output {path}: a '.sa{path.suffix}' name is an SA-table's; choose another name",
                             parameter="output", value=str(path))
    settle(path)  # a write interrupted earlier is finished or undone before anything is judged
    ins = _inputs(inputs)
    verified = False
    for f in release_files(path):
        if any(_same(f, i) for i in ins):
            raise ParameterError(f"output {path} would overwrite the input {f}; choose another name",
                                 parameter="output", value=str(path))
        if f.is_dir():  # never a folder, whatever its name, and never its contents
            raise ParameterError(f"output {path}: {f} is a folder, not a file openbook wrote; choose another name",
                                 parameter="output", value=str(path))
        if f.exists():
            owner = _owner(f)
            if owner is not None and owner != path:
                raise ParameterError(f"output {path} would overwrite {f}, a file of the release {owner}",
                                     parameter="output", value=str(path))
            if not force:
                what = "release" if owner is not None else "file"
                raise ParameterError(f"output {path}: {f} exists (a {what}); use {option('force')} to replace it",
                                     parameter="output", value=str(path))
            if not verified:  # --force replaces only a release openbook wrote and can verify
                try:
                    _load_release(path)
                except Exception:  # noqa: BLE001 - anything that is not a verifiable release
                    raise ParameterError(f"output {path}: {f} exists and is not part of a release openbook wrote and "
                                         f"can verify; {option('force')} replaces only those (move it away yourself)",
                                         parameter="output", value=str(path)) from None
                verified = True
    return path


def check_output_folder(path: Path, what: str = "output") -> None:
    """The folder a file will be written into: every existing ancestor a folder (``people.csv/r.csv``
    is refused), writable, and the file's name (with the suffixes of its sidecar and temporaries)
    within the file system's name limit — each a one-line :class:`ParameterError`."""
    for anc in path.parents:
        if anc.exists():
            if not anc.is_dir():
                raise ParameterError(f"{what} {path}: {anc} is a file, not a folder", parameter=what, value=str(path))
            if not os.access(anc, os.W_OK | os.X_OK):
                raise ParameterError(f"{what} {path}: folder {anc} is not writable", parameter=what, value=str(path))
            try:
                limit = os.pathconf(anc, "PC_NAME_MAX")
            except (OSError, ValueError):
                limit = 255
            # the longest name written beside it: a temporary of the sidecar (".NAME.json.<pid>.<hex>.tmp")
            if len(os.fsencode(path.name)) + 48 > limit:
                raise ParameterError(f"{what} {path}: the file name is too long ({len(path.name)} characters; this "
                                     f"file system allows {limit} with room for the sidecar's)", parameter=what,
                                     value=str(path))
            break


#: the first bytes of a plain file openbook writes, by kind (``check_plain_output(ours=...)``):
#: ``--force`` replaces an existing file only when it starts so — never a file openbook did not
#: write (an input not named on the command line, say)
PLAIN_HEADS = {"posteriors": b"tuple,group,"}


def check_plain_output(path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = (),
                       what: str = "output", ours: str | None = None) -> Path:
    """May a report or table be written at ``path``? Never over an input or a release's
    file; over another existing file only with ``force`` — and, given ``ours`` (a key of
    :data:`PLAIN_HEADS`), only over a file that starts as openbook writes that kind."""
    path = Path(path)
    if path.is_dir() or not path.name:
        raise ParameterError(f"{what} {path} is a directory; give a file name", parameter=what, value=str(path))
    if not path.parent.is_dir():
        raise ParameterError(f"{what} {path}: folder {path.parent} does not exist", parameter=what, value=str(path))
    if any(_same(path, i) for i in _inputs(inputs)):
        raise ParameterError(f"{what} {path} is an input; choose another name", parameter=what, value=str(path))
    owner = _owner(path) if path.exists() else None
    if owner is not None or is_release_database(path):
        raise ParameterError(f"{what} {path} is a file of the release {owner or path}; choose another name",
                             parameter=what, value=str(path))
    if path.exists() and not force:
        raise ParameterError(f"{what} {path} exists; use {option('force')} to replace it", parameter=what,
                             value=str(path))
    if path.exists() and ours is not None:
        head = PLAIN_HEADS[ours]
        try:
            with open(path, "rb") as fh:
                start = fh.read(len(head))
        except OSError:
            start = b""
        if start != head:
            raise ParameterError(f"{what} {path} exists and is not a {ours} file openbook wrote; {option('force')} "
                                 "replaces only those (move it away yourself)", parameter=what, value=str(path))
    return path


# ---------------------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------------------
def _dtypes(df: pd.DataFrame) -> dict[str, str]:
    out = {}
    for c in df.columns:
        dt = df[c].dtype
        out[str(c)] = "int64" if pd.api.types.is_integer_dtype(dt) else (
            "float64" if pd.api.types.is_float_dtype(dt) else "string")
    return out


def _frame_writer(df: pd.DataFrame, fmt: str):
    if fmt == "parquet":
        return lambda t: df.to_parquet(t, index=False)
    return lambda t: df.to_csv(t, index=False)


def _counts_add_up(release: Release) -> None:
    """Published + suppressed = input, checked on the publisher's record before anything is
    written (the sidecar does not carry the counts unless the publisher opts in)."""
    m = release.meta
    n_pub = m.get("n_published", len(release.data))
    if n_pub != len(release.data):
        raise DataError(f"release says {n_pub} published rows but holds {len(release.data)}; nothing was written")
    if "n_input" in m and m["n_input"] != n_pub + m.get("n_suppressed", 0):
        raise DataError(f"rows lost: input {m['n_input']} != published {n_pub} + suppressed "
                        f"{m.get('n_suppressed', 0)}; nothing was written")


def sidecar_record(release: Release, *, publish_suppressed_count: bool | None = None,
                   publish_identifier_names: bool | None = None) -> dict[str, Any]:
    """The sidecar content of ``release`` before its ``files`` and digest (:mod:`.sidecar`)."""
    meta = {k: v for k, v in release.meta.items() if k not in ("files", "digest", "format")}
    meta.setdefault("n_published", len(release.data))
    return {"format": FORMAT, **public_record(meta, publish_suppressed_count=publish_suppressed_count,
                                              publish_identifier_names=publish_identifier_names)}


def save_release(release: Release, path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = (),
                 publish_suppressed_count: bool | None = None,
                 publish_identifier_names: bool | None = None, sign_key: str | os.PathLike | None = None) -> list[Path]:
    """Write the release bound to its sidecar, crash-safely (module docstring); returns the
    files written (data, SA-table, sidecar). Refuses to overwrite an existing release
    without ``force`` and any of ``inputs`` always.

    ``publish_suppressed_count``: also publish the input row count, the suppressed and
    withheld counts and the certificate's per-adversary counts of absent people (by default
    none of them is written: paper 004 randomizes the number R-suppression withholds to
    hide it); ``publish_identifier_names``: also publish the names of the dropped identifier
    columns. ``None`` keeps what the release records (a loaded release keeps its choice).
    ``sign_key``: the publisher's Ed25519 private key — the sidecar is signed (:mod:`.signing`)."""
    path = check_release_output(path, force=force, inputs=inputs)
    if sign_key is not None:
        from .signing import check_private_key

        check_private_key(sign_key)  # a bad key fails before anything is written
    _counts_add_up(release)
    base = sidecar_record(release, publish_suppressed_count=publish_suppressed_count,
                          publish_identifier_names=publish_identifier_names)
    # what could not be loaded back is never written
    validate(json.loads(json.dumps(base, default=json_default)), path, kinds=KINDS, database=None)
    if path.suffix.lower() in DB_SUFFIXES:
        files = {"rows": len(release.data), "dtypes": _dtypes(release.data),
                 "content_sha256": content_digest(release.data, release.sa_table)}
        if release.sa_table is not None:
            files.update(sa_rows=len(release.sa_table), sa_dtypes=_dtypes(release.sa_table))
        side = _signed({**base, "files": files}, sign_key)
        side["digest"] = self_digest(side)
        check_schema(side)
        return commit(path, {path: db_writer(release.data, release.sa_table, side, path.suffix)})
    fmt = FRAME_SUFFIXES[path.suffix.lower()]
    written: dict[str, Any] = {}

    def data_writer(tmp: Path) -> None:
        _frame_writer(release.data, fmt)(tmp)
        written["data"] = {"data": path.name, "rows": len(release.data), "sha256": sha256_file(tmp),
                           "dtypes": _dtypes(release.data)}

    writers: dict[Path, Any] = {path: data_writer}
    sp = sa_table_path(path)
    sa_table = release.sa_table
    if sa_table is not None:
        def sa_writer(tmp: Path) -> None:
            _frame_writer(sa_table, fmt)(tmp)
            written["sa"] = {"sa_table": sp.name, "sa_rows": len(sa_table), "sa_sha256": sha256_file(tmp),
                             "sa_dtypes": _dtypes(sa_table)}
        writers[sp] = sa_writer

    def sidecar_writer(tmp: Path) -> None:  # runs last: the digests are known by then
        side = _signed({**base, "files": {**written["data"], **written.get("sa", {})}}, sign_key)
        side["digest"] = self_digest(side)
        check_schema(side)
        tmp.write_text(json.dumps(side, indent=2, default=json_default))

    writers[sidecar_path(path)] = sidecar_writer
    deletes = [sp] if release.sa_table is None and sp.exists() else []
    return commit(path, writers, deletes=deletes)


def _signed(side: dict[str, Any], sign_key: Any) -> dict[str, Any]:
    if sign_key is None:
        return side
    from .signing import sign

    return sign(side, sign_key)


# ---------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------
def _bad(side: Path, what: str) -> DataError:
    return DataError(f"release sidecar {side} {what}", path=side)


def _plain_name(value: Any, side: Path, key: str) -> str:
    if not isinstance(value, str) or not value or value in (".", "..") or "/" in value or "\\" in value \
            or value.startswith("."):
        raise _bad(side, f"names {key}={value!r}: a release's files lie beside their sidecar")
    return value


def _read_sidecar(side: Path) -> dict[str, Any]:
    return validate(_sidecar_json(side), side, kinds=KINDS)


def _sidecar_json(side: Path) -> dict[str, Any]:
    """A sidecar's content, its format and own digest checked (every key still to validate)."""
    try:
        meta = json.loads(side.read_text(), parse_constant=lambda c: float(c))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise _bad(side, "is unreadable or truncated") from exc
    if not isinstance(meta, dict):
        raise _bad(side, f"is a JSON {type(meta).__name__}, not an object")
    if meta.get("format") != FORMAT or "digest" not in meta:
        raise _bad(side, f"is not an {FORMAT} sidecar (no digests: written by an older openbook, or not "
                         "openbook's); re-create the release")
    if meta["digest"] != self_digest(meta):
        raise _bad(side, "was edited after it was written (its digest does not match its content)")
    return meta


def _read_frame(path: Path, fmt: str, dtypes: dict[str, str], rows: int, sha: Any) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"release file {path} is missing", path=path)
    if sha256_file(path) != sha:
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
        except (ValueError, TypeError, OverflowError) as exc:
            raise DataError(f"release file {path}: column {c!r} is not {t}", path=path) from exc
    return df


def _check_sa_table(data: pd.DataFrame, sa_table: pd.DataFrame, sa: str, where: Path) -> None:
    for c in (GID, sa, COUNT):
        if c not in sa_table.columns:
            raise DataError(f"release {where}: its SA-table lacks column {c!r}", path=where)
    if GID not in data.columns:
        raise DataError(f"release {where}: its QI-table lacks column {GID!r}", path=where)
    for frame, c in ((sa_table, GID), (sa_table, COUNT), (data, GID)):
        if not pd.api.types.is_integer_dtype(frame[c].dtype):
            raise DataError(f"release {where}: its column {c!r} is not integer", path=where)
    if (sa_table[COUNT] <= 0).any():
        raise DataError(f"release {where}: its SA-table holds a count below 1", path=where)
    sizes = data[GID].value_counts()
    sums = sa_table.groupby(GID)[COUNT].sum()
    if not sizes.sort_index().equals(sums.sort_index().astype(sizes.dtype)):
        raise DataError(f"release {where}: the SA-table's counts per group differ from the QI-table's group sizes",
                        path=where)


def load_release(path: str | os.PathLike, *, public_key: str | os.PathLike | None = None) -> Release:
    """Load a release from its data file, its sidecar, or a database file; verify that the
    files are bound to the sidecar (digests, counts), that the sidecar's claims hold on the
    published rows, and — with ``public_key`` — that the publisher's signature verifies
    (:mod:`.signing`) before returning it. ``meta["signature_verified"]`` (in memory) holds the
    verified key's fingerprint."""
    from .signing import verify

    p = Path(path)
    side = None if p.is_dir() or p.suffix.lower() in DB_SUFFIXES else sidecar_path(data_path_of(p))
    if public_key is not None and side is not None and side.is_file():
        # the signature first: an edited release is named as such, before any other check
        try:
            raw = json.loads(side.read_text(), parse_constant=lambda c: float(c))
        except (OSError, ValueError, UnicodeDecodeError):
            raw = None
        if isinstance(raw, dict):
            verify(raw, public_key, path)
    release = _load_release(path)
    if public_key is not None:
        release.meta["signature_verified"] = verify(release.meta, public_key, path)
    return release


def _load_release(path: str | os.PathLike) -> Release:
    path = Path(path)
    if (path.is_dir() and not _folder_name(path)) or not path.name or path.name in (".", ".."):
        raise DataError(f"{path} is a directory, not a release (give its data file, its .json sidecar or its "
                        "database file)", path=path)
    settle(path)
    if path.is_dir() and not sidecar_path(path).is_file():
        raise DataError(f"{path} is a directory, not a release (give its data file, its .json sidecar or its "
                        "database file)", path=path)
    if path.suffix.lower() in DB_SUFFIXES:
        return _load_db(path)
    data_path = data_path_of(path)
    side = sidecar_path(data_path)
    if data_path.is_dir() or (not data_path.exists() and _layout(side) == FOLDER_LAYOUT):
        from .folder import load_folder  # pyarrow only: no Spark needed to read one

        return load_folder(data_path, side)
    fmt = FRAME_SUFFIXES.get(data_path.suffix.lower())
    if not side.is_file():
        raise DataError(f"no release sidecar {side} (is {data_path} a release written by openbook?)", path=side)
    if fmt is None:
        raise DataError(f"{data_path}: unknown release format {data_path.suffix!r}", path=data_path)
    meta = _read_sidecar(side)
    files = meta["files"]
    if _plain_name(files.get("data"), side, "files.data") != data_path.name:
        raise _bad(side, f"describes {files.get('data')!r}, not {data_path.name!r}")
    data = _read_frame(data_path, fmt, files["dtypes"], files["rows"], files["sha256"])
    sa_table = None
    if meta["kind"] == "bucketized":
        sa_name = _plain_name(files.get("sa_table"), side, "files.sa_table")
        sa_table = _read_frame(data_path.with_name(sa_name), fmt, files["sa_dtypes"], files["sa_rows"],
                               files["sa_sha256"])
        _check_sa_table(data, sa_table, meta["schema"]["sa"]["name"], data_path)
    release = _from_meta(meta, data, sa_table, data_path)
    check_against_data(release, data_path)
    return release


def _from_meta(meta: dict[str, Any], data: pd.DataFrame, sa_table: pd.DataFrame | None,
               where: Any = "a release") -> Release:
    schema = meta["schema"]
    try:
        qi = [c["name"] for c in schema["qi"]]
        sa = schema["sa"]["name"]
    except (KeyError, TypeError) as exc:
        raise DataError(f"release {where}: its schema lacks its column names") from exc
    missing = [c for c in [*qi, sa] if c not in data.columns and not (c == sa and sa_table is not None)]
    if missing:
        raise DataError(f"release {where}: its data lacks its column {missing[0]!r}")
    # a validated sidecar (:func:`.sidecar.validate`): every key one :class:`.record.ReleaseMeta` declares
    return Release(meta["kind"], data, qi, sa, sa_table, cast(ReleaseMeta, meta))


def _load_db(path: Path) -> Release:
    meta, data, sa = read_db(path)
    meta = validate(meta, path, kinds=KINDS, database=True)
    files = meta["files"]
    if len(data) != files["rows"]:
        raise DataError(f"release in {path} is truncated: {len(data)} rows, expected {files['rows']}", path=path)
    data = _apply_dtypes(data, files["dtypes"], path)
    if sa is not None:
        if len(sa) != files["sa_rows"]:
            raise DataError(f"release in {path} is truncated: its SA-table holds {len(sa)} rows, expected "
                            f"{files['sa_rows']}", path=path)
        sa = _apply_dtypes(sa, files["sa_dtypes"], path)
    if content_digest(data, sa) != files["content_sha256"]:
        raise DataError(f"release in {path} does not match its digest (altered)", path=path)
    if sa is not None:
        _check_sa_table(data, sa, meta["schema"]["sa"]["name"], path)
    release = _from_meta(meta, data, sa, path)
    check_against_data(release, path)
    return release

