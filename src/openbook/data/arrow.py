"""Reading CSV and Parquet files with Apache Arrow, whole or in record batches.

A :class:`FileSource` names a file and hands out its columns as Arrow record batches — a
Parquet file by its row groups (``ParquetFile.iter_batches``), a CSV file by blocks
(``pyarrow.csv.open_csv``) — so a file larger than memory is read one batch at a time.
:mod:`openbook.data.batch_encoding` turns the batches into integer codes.

The batches mean exactly what :func:`openbook.data.loaders.read_table` (pandas) makes of the
same file; wherever the two readers could disagree, the source says so by raising
:class:`NeedsPandas` and the caller reads the file with pandas instead (or, when reading in
bounded memory, refuses with one line). For CSV that is: a header with an empty name, a
quoted header spanning lines, a one-column file, rows with too few or too many fields, a line
of blanks, bytes that are not UTF-8, and a quoted field after a space (pandas skips spaces
after a delimiter *before* a quote; Arrow has no such option). For Parquet: column types other
than text, integers and ``float64``, and pandas metadata asking for other dtypes. Every value
is kept as the file has it; what pandas would infer or convert (numbers in CSV text, ``?``
tokens) is decided later, once, from each column's distinct values.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import DataError

#: rows per batch when none is asked for
DEFAULT_BATCH_ROWS = 1 << 20
_QUOTE = b'"'
#: pandas dtypes (from a Parquet file's pandas metadata) whose meaning the Arrow path keeps
_PLAIN_NUMPY_TYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float64"}


class NeedsPandas(Exception):
    """The file has a feature only pandas' reader interprets as openbook reads tables: read
    it with :func:`openbook.data.loaders.read_table`. Not an error of the input."""


def column_kind(arrow_type: Any) -> str | None:
    """How a column of this Arrow type is read: ``"string"``, ``"int"``, ``"uint"``,
    ``"float"``, or ``None`` (only pandas reads it as openbook does)."""
    import pyarrow as pa

    t = pa.types
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_string_view(arrow_type):
        return "string"
    if t.is_signed_integer(arrow_type):
        return "int"
    if t.is_unsigned_integer(arrow_type):
        return "uint"
    if t.is_float64(arrow_type):
        return "float"
    return None


@dataclass
class TableSource:
    """An Arrow table in memory, read as batches (the same path as a file)."""

    table: Any  # pyarrow.Table
    name: str | None = None
    is_csv_text: bool = False

    @property
    def column_names(self) -> list[str]:
        return list(self.table.column_names)

    def kinds(self, columns: list[str]) -> dict[str, str]:
        out = {}
        for c in columns:
            k = column_kind(self.table.schema.field(c).type)
            if k is None:
                raise NeedsPandas(f"column {c!r} has type {self.table.schema.field(c).type}")
            out[c] = "text" if (k == "string" and self.is_csv_text) else k
        return out

    def batches(self, columns: list[str], batch_rows: int = DEFAULT_BATCH_ROWS, dictionary: Any = ()) -> Iterator[Any]:
        """Record batches of ``columns`` (``dictionary``: see :meth:`FileSource.batches`; here as they are)."""
        sub = self.table.select(columns)
        yield from sub.to_batches(max_chunksize=max(1, int(batch_rows)))

    @property
    def n_rows(self) -> int | None:
        return int(self.table.num_rows)


@dataclass
class FileSource:
    """A CSV or Parquet file read in Arrow record batches (module docstring)."""

    path: Path
    format: str  # "csv" or "parquet"
    sep: str = ","
    #: the smallest CSV block read at once (tests make it small to read a small file in many batches)
    min_block_bytes: int = 1 << 16
    _names: list[str] | None = field(default=None, repr=False)
    _has_quotes: bool | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def is_csv_text(self) -> bool:
        return self.format == "csv"

    # -- columns ----------------------------------------------------------------------
    @property
    def column_names(self) -> list[str]:
        if self._names is None:
            self._names = self._csv_header() if self.format == "csv" else self._parquet_names()
        return list(self._names)

    def kinds(self, columns: list[str]) -> dict[str, str]:
        """``column -> "text"`` for CSV (every value is text until numbers are inferred), the
        Arrow kind (:func:`column_kind`) for Parquet."""
        if self.format == "csv":
            return {c: "text" for c in columns}
        schema = self._parquet().schema_arrow
        meta = _pandas_meta(schema)
        out = {}
        for c in columns:
            kind = column_kind(schema.field(c).type)
            spec = meta.get(c)
            if kind is None or (spec is not None and not _plain_pandas_dtype(spec, kind)):
                raise NeedsPandas(f"column {c!r} has type {schema.field(c).type}")
            out[c] = kind
        return out

    @property
    def n_rows(self) -> int | None:
        return int(self._parquet().metadata.num_rows) if self.format == "parquet" else None

    # -- batches ----------------------------------------------------------------------
    def batches(self, columns: list[str], batch_rows: int = DEFAULT_BATCH_ROWS, dictionary: Any = ()) -> Iterator[Any]:
        """Record batches of ``columns`` (about ``batch_rows`` rows each). Parquet string
        columns named in ``dictionary`` come as dictionary arrays, decoded from the file's
        dictionary pages without a string per row (~7x faster for a reader that only wants
        the distinct values and their codes: :class:`~openbook.data.batch_encoding.ColumnDictionary`)."""
        try:
            if self.format == "parquet":
                parquet = self._parquet(list(dictionary)) if dictionary else self._parquet()
                yield from parquet.iter_batches(batch_size=max(1, int(batch_rows)), columns=columns,
                                                use_pandas_metadata=False)
            else:
                yield from self._csv_batches(columns, batch_rows)
        except (NeedsPandas, DataError):
            raise
        except Exception as exc:  # Arrow's ArrowInvalid/OSError: pandas decides what the file means
            raise NeedsPandas(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__) from exc

    # -- Parquet ----------------------------------------------------------------------
    def _parquet(self, dictionary: list[str] | None = None) -> Any:
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(self.path, read_dictionary=dictionary) if dictionary else pq.ParquetFile(self.path)
        except Exception as exc:
            raise NeedsPandas(str(exc)) from exc

    def _parquet_names(self) -> list[str]:
        schema = self._parquet().schema_arrow
        raw = schema.metadata.get(b"pandas") if schema.metadata else None
        if raw is None:
            return list(schema.names)
        try:
            meta = json.loads(raw)
        except ValueError as exc:
            raise NeedsPandas("unreadable pandas metadata") from exc
        index = {c for c in meta.get("index_columns", []) if isinstance(c, str)}
        for ci in meta.get("column_indexes", []):
            if ci.get("pandas_type") not in ("unicode", "empty", None) or ci.get("numpy_type") not in ("str", "object"):
                raise NeedsPandas("column labels that are not text")
        for c in meta.get("columns", []):
            if c.get("field_name") not in index and c.get("name") != c.get("field_name"):
                raise NeedsPandas("pandas metadata renames a column")
        return [n for n in schema.names if n not in index]

    # -- CSV --------------------------------------------------------------------------
    def has_quotes(self) -> bool:
        """Does the file contain a quote character anywhere? (One scan, remembered.)"""
        if self._has_quotes is None:
            found = False
            with open(self.path, "rb") as fh:
                while chunk := fh.read(1 << 24):
                    if _QUOTE in chunk:
                        found = True
                        break
            self._has_quotes = found
        return self._has_quotes

    def _csv_header(self) -> list[str]:
        if len(self.sep) != 1 or self.sep in ('"', " ", "\n", "\r"):
            raise NeedsPandas(f"delimiter {self.sep!r}")
        try:
            with open(self.path, newline="", encoding="utf-8-sig") as fh:
                line = fh.readline()
        except UnicodeDecodeError as exc:
            raise NeedsPandas("not UTF-8") from exc
        if not line.strip(" \r\n"):
            raise NeedsPandas("empty file or blank first line")
        if line.count('"') % 2:
            raise NeedsPandas("a quoted header spanning lines")
        names = next(csv.reader([line.rstrip("\r\n")], delimiter=self.sep, skipinitialspace=True), [])
        if len(names) < 2:
            raise NeedsPandas("a one-column file")
        if any(n == "" for n in names):
            raise NeedsPandas("a header with an empty name")
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise DataError(f"{self.path}: the header names column {n!r} twice", path=self.path)
            seen.add(n)
        return names

    def _csv_batches(self, columns: list[str], batch_rows: int) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.csv as pcsv

        from . import arrow_kernels as k

        names = self.column_names
        quotes = self.has_quotes()
        read = pcsv.ReadOptions(column_names=names, skip_rows=1, block_size=self._block_size(batch_rows))
        parse = pcsv.ParseOptions(delimiter=self.sep, quote_char='"', double_quote=True, escape_char=False,
                                  newlines_in_values=quotes, ignore_empty_lines=True)
        convert = pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, include_columns=columns,
                                      null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True,
                                      check_utf8=True)
        reader = pcsv.open_csv(self.path, read_options=read, parse_options=parse, convert_options=convert)
        for batch in reader:
            if batch.num_rows == 0:
                continue
            arrays = []
            for arr in batch.columns:
                if quotes:
                    if k.any_true(k.starts_with(arr, " ")):
                        raise NeedsPandas("a field starting with a space in a file with quotes")
                else:  # pandas' skipinitialspace: spaces after the delimiter go (text left empty is
                    arr = k.ltrim(arr, " ")  # missing: the encoder's rule for CSV)
                arrays.append(arr)
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)

    def _block_size(self, batch_rows: int) -> int:
        """Bytes per CSV block for about ``batch_rows`` rows, judged from the first 64 KiB (at
        least ``min_block_bytes`` and four of the longest line seen there; a row longer than
        a block makes Arrow fail, and pandas then reads the file)."""
        with open(self.path, "rb") as fh:
            head = fh.read(1 << 16)
        lines = head.split(b"\n")
        per_row = max(len(head) // max(len(lines) - 1, 1), 1)
        longest = max(len(x) for x in lines) + 1
        return int(min(max(per_row * max(int(batch_rows), 1), 4 * longest, self.min_block_bytes), 1 << 30))


def string_scalar(text: str) -> Any:
    """An Arrow string scalar built from buffers: ``pa.scalar(text)`` would make pyarrow
    import pandas (~0.3 s of start-up) to check whether ``text`` is a pandas value."""
    import numpy as np
    import pyarrow as pa

    data = text.encode("utf-8")
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int32).tobytes())
    return pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)])[0]


def _pandas_meta(schema: Any) -> dict[str, dict[str, Any]]:
    raw = schema.metadata.get(b"pandas") if schema.metadata else None
    if raw is None:
        return {}
    try:
        meta = json.loads(raw)
    except ValueError as exc:
        raise NeedsPandas("unreadable pandas metadata") from exc
    return {c["field_name"]: c for c in meta.get("columns", []) if isinstance(c.get("field_name"), str)}


def _plain_pandas_dtype(spec: dict[str, Any], kind: str) -> bool:
    """Does pandas metadata ask for the dtype pandas would pick anyway for this Arrow kind?"""
    numpy_type = spec.get("numpy_type")
    if kind == "string":
        return numpy_type in ("str", "object") and spec.get("pandas_type") in ("unicode", "object")
    return numpy_type in _PLAIN_NUMPY_TYPES and spec.get("pandas_type") == numpy_type
