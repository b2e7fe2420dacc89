"""Loading source tables: CSV, Parquet, a pandas DataFrame, or SQL.

:func:`read_table` reads a source into a pandas DataFrame — the reference meaning of a table
file. :func:`read_source` gives CSV and Parquet files as a :class:`~openbook.data.arrow.FileSource`
instead: read in Arrow record batches and encoded to codes without a DataFrame (and without
importing pandas), to the same result (:mod:`openbook.data.batch_encoding`).

SQL sources: SQLite files through the standard library (``sqlite:///path.db`` or a
``.sqlite``/``.db`` path with ``--table``/``--query``), DuckDB (``duckdb:///path.duckdb``),
and any other SQLAlchemy URL (``postgresql://…``) for real databases. Every failure to
read becomes one :class:`~openbook.errors.DataError` naming the file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataError, ParameterError

if TYPE_CHECKING:
    import pandas as pd

CSV_SUFFIXES = {".csv", ".txt", ".data", ".test", ".tsv"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
SQLITE_SUFFIXES = {".sqlite", ".sqlite3", ".db"}
DUCKDB_SUFFIXES = {".duckdb", ".ddb"}


def read_table(
    source: Any,
    *,
    format: str | None = None,
    table: str | None = None,
    query: str | None = None,
    sep: str | None = None,
    header: bool = True,
    names: list[str] | None = None,
) -> pd.DataFrame:
    """Read a source into a DataFrame (index 0..n-1; openbook never uses index labels).

    ``source`` is a DataFrame, a path (format from ``format`` or the suffix), or a database
    URL (``sqlite:///…``, ``duckdb:///…``, any SQLAlchemy URL). For databases give
    ``table`` or ``query``.
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True)
    text = str(source)
    if "://" in text:
        return _read_sql_url(text, table=table, query=query)
    path = _existing_file(text)
    fmt = (format or _format_of(path)).lower()
    try:
        if fmt == "csv":
            delim = sep or ("\t" if path.suffix == ".tsv" else ",")
            if header and names is None:
                _check_header(path, delim)
            df = pd.read_csv(
                path,
                sep=delim,
                skipinitialspace=True,
                header=0 if header and names is None else None,
                names=names,
                on_bad_lines="error",
                dtype=str,
                keep_default_na=False,
                na_values=[""],
            )
        elif fmt == "parquet":
            import pyarrow.parquet as pq

            check_columns(list(pq.read_schema(path).names), path)
            df = pd.read_parquet(path)
        elif fmt == "sqlite":
            df = _read_sqlite(path, table=table, query=query)
        elif fmt == "duckdb":
            df = _read_duckdb(path, table=table, query=query)
        else:
            raise DataError(f"unknown table format {fmt!r} for {path} (use csv, parquet, sqlite or duckdb)", path=path)
    except (DataError, ParameterError):
        raise
    except Exception as exc:  # pandas/pyarrow/sqlite raise many types; report one line
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"cannot read {path} as {fmt}: {reason}", path=path) from exc
    check_columns([str(c) for c in df.columns], path)
    check_scalar_cells(df, path)
    if fmt == "csv":
        df = numeric_where_possible(df)
    return df.reset_index(drop=True)


def read_source(
    source: Any,
    *,
    format: str | None = None,
    table: str | None = None,
    query: str | None = None,
) -> Any:
    """A source as :func:`openbook.data.table.encode` reads it best: a CSV or Parquet file as
    a :class:`~openbook.data.arrow.FileSource` (nothing is read yet: the rows come in Arrow
    batches when the table is encoded), anything else as :func:`read_table`'s DataFrame."""
    text = str(source)
    if not isinstance(source, (str, Path)) or "://" in text:
        return read_table(source, format=format, table=table, query=query)
    path = _existing_file(text)
    fmt = (format or _format_of(path)).lower()
    if fmt not in ("csv", "parquet"):
        return read_table(source, format=format, table=table, query=query)
    from .arrow import FileSource, NeedsPandas

    src = FileSource(path, fmt, sep="\t" if fmt == "csv" and path.suffix == ".tsv" else ",")
    try:
        names = src.column_names  # the header (CSV) or schema (Parquet): a file pandas must read says so now
    except NeedsPandas:
        return read_table(source, format=format, table=table, query=query)
    check_columns(names, path)
    return src


def column_names(data: Any) -> list[str]:
    """The column names of a DataFrame, an Arrow table or a file source."""
    names = getattr(data, "column_names", None)
    return list(names) if names is not None else [str(c) for c in data.columns]


def _existing_file(text: str) -> Path:
    import os
    import stat

    path = Path(text)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DataError(f"no such file: {path}", path=path) from None
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}", path=path) from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{path} is a directory, not a table file", path=path)
    if not stat.S_ISREG(mode):  # a pipe or a device would be read forever
        raise DataError(f"{path} is not a regular file (a pipe, socket or device): save the table to a file first",
                        path=path)
    if not os.access(path, os.R_OK):
        raise DataError(f"cannot read {path}: permission denied", path=path)
    return path


def check_columns(names: list[str], where: Any) -> None:
    """A table naming one column twice is refused (a reader could not tell which is meant)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(f"{where}: the table names column {name!r} twice", path=where)
        seen.add(name)


def check_scalar_cells(df: Any, where: Any) -> None:
    """A column whose cells hold lists, arrays or mappings (a Parquet list or struct column) is
    refused: openbook reads one value per cell."""
    import numpy as np

    for c in df.columns:
        s = df[c]
        if s.dtype != object or not len(s):
            continue
        first = s.dropna()
        if len(first) and isinstance(first.iloc[0], (list, tuple, dict, set, np.ndarray)):
            raise DataError(f"{where}: column {c!r} holds {type(first.iloc[0]).__name__} values, not one value per "
                            "cell", path=where)


def _check_header(path: Path, delim: str) -> None:
    """A CSV header naming one column twice is refused (pandas would rename the second)."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        first = next(csv.reader(fh, delimiter=delim, skipinitialspace=True), [])
    seen: set[str] = set()
    for name in first:
        if name in seen:
            raise DataError(f"{path}: the header names column {name!r} twice", path=path)
        seen.add(name)


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in SQLITE_SUFFIXES:
        return "sqlite"
    if suffix in DUCKDB_SUFFIXES:
        return "duckdb"
    if suffix in CSV_SUFFIXES:
        return "csv"
    raise DataError(f"{path}: unknown table format {suffix or '(no suffix)'!r} (use .csv, .parquet, .sqlite, "
                    ".duckdb, or --format)", path=path)


def numeric_where_possible(df: pd.DataFrame) -> pd.DataFrame:
    """CSV columns are read as text (so nothing is silently coerced); columns whose every
    value parses as a number become numeric. Whether a column is *used* as numeric is the
    schema's decision, not this one's."""
    import pandas as pd

    out = {}
    for c in df.columns:
        conv = pd.to_numeric(df[c], errors="coerce")
        out[c] = conv if not (conv.isna() & df[c].notna()).any() else df[c]
    return pd.DataFrame(out)


def _sql_text(table: str | None, query: str | None) -> str:
    if (table is None) == (query is None):
        raise ParameterError("give exactly one of table= or query= for a database source", parameter="table")
    if query is not None:
        return read_only_query(query)
    assert table is not None
    if not table.replace("_", "").replace(".", "").isalnum():
        raise ParameterError(f"table name {table!r} is not a plain identifier", parameter="table", value=table)
    return f'SELECT * FROM "{table}"' if "." not in table else f"SELECT * FROM {table}"


#: the first word a ``--query`` may start with: it reads, it never writes
_READ_KEYWORDS = ("select", "with", "values", "table", "from")


def read_only_query(query: str) -> str:
    """``--query`` as given, when it is one statement that reads (``SELECT``/``WITH``/...):
    ``COPY … TO``, ``ATTACH``, ``PRAGMA`` and every other statement are refused in one line —
    a read-only connection alone does not stop them writing files."""
    q = query.strip().rstrip(";").strip()
    words = q.split(None, 1)
    if not words or words[0].lower() not in _READ_KEYWORDS or ";" in q:
        raise ParameterError(f"--query must be one statement that reads (SELECT or WITH), got {query[:60]!r}",
                             parameter="query", value=query)
    return q


def _deny_writes(action: int, *args: Any) -> int:
    """SQLite authorizer: no ATTACH/DETACH, no pragma, no writes (defence beside the keyword check)."""
    denied = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_PRAGMA, sqlite3.SQLITE_INSERT,
              sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_DROP_TABLE}
    return sqlite3.SQLITE_DENY if action in denied else sqlite3.SQLITE_OK


def _read_sqlite(path: Path, *, table: str | None, query: str | None) -> pd.DataFrame:
    import pandas as pd

    sql = _sql_text(table, query)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        con.set_authorizer(_deny_writes)
        return pd.read_sql_query(sql, con)
    finally:
        con.close()


def _read_duckdb(path: Path, *, table: str | None, query: str | None) -> pd.DataFrame:
    import duckdb

    sql = _sql_text(table, query)
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.execute("SET enable_external_access = false")  # no COPY … TO, no ATTACH, no reading other files
        return con.execute(sql).df()
    finally:
        con.close()


def _read_sql_url(url: str, *, table: str | None, query: str | None) -> pd.DataFrame:
    try:
        if url.startswith("sqlite:///"):
            return _read_sqlite(Path(url[len("sqlite:///"):]), table=table, query=query)
        if url.startswith("duckdb:///"):
            return _read_duckdb(Path(url[len("duckdb:///"):]), table=table, query=query)
        import pandas as pd
        import sqlalchemy

        engine = sqlalchemy.create_engine(url)
        with engine.connect() as con:
            return pd.read_sql_query(sqlalchemy.text(_sql_text(table, query)), con)
    except (DataError, ParameterError):
        raise
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"cannot read from database {url.split('@')[-1]}: {reason}", path=url) from exc
