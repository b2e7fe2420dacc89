"""Encoding Arrow record batches to ``int32`` codes: the Arrow path of
:func:`openbook.data.table.encode`, in memory for the codes plus one batch.

Each used column keeps a dictionary of its distinct raw values, grown batch by batch
(``pyarrow.compute.dictionary_encode`` per batch, then a lookup of the batch's few distinct
values), and each row gets a *provisional* code: the value's order of first appearance.
Everything pandas would decide about a column — whether CSV text is numeric, which values are
missing (``?`` tokens), what a number looks like as text, the sorted order of the categories,
a value missing from a hierarchy — is a property of the column's distinct values, so it is
decided once at the end, over the dictionary, and the provisional codes are renumbered by a
lookup table as small as the dictionary. The result is the
:class:`~openbook.data.table.EncodedTable` that :func:`~openbook.data.frame_encoding.encode_frame`
builds from the same table as a DataFrame (the reference): same codes, decode maps, row order,
missing-value handling and errors.

:class:`Finalizer` works on *weighted rows*: every row (weight 1) here, or the distinct rows
with their counts in :mod:`openbook.data.frequency`, which therefore decides exactly as this
module does without keeping the rows.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .arrow import DEFAULT_BATCH_ROWS, NeedsPandas, TableSource
from .frame_encoding import (
    check_declared,
    duplicate_error,
    empty_after_drop_error,
    empty_error,
    encode_frame,
    lookup_error,
    missing_error,
    non_numeric_error,
    numeric_missing_value_error,
)
from .schema import Column, Schema
from .table import MISSING_LABEL, EncodedColumn, EncodedTable

#: text pandas reads as an int64 / a float64 exactly as Python does (anything else: pandas decides)
_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_NEG_ZERO = re.compile(r"-[0.]*")


class ColumnDictionary:
    """The distinct raw values of one column, in order of first appearance across batches.

    A missing value — null, ``NaN`` in a float column, or empty CSV text (pandas' ``na_values``)
    — gets code ``-1``. Only Arrow kernels and buffers are used: pyarrow imports pandas as soon
    as a Python value becomes an Arrow scalar or an array goes through ``to_numpy``.
    """

    def __init__(self, name: str, kind: str) -> None:
        self.name, self.kind = name, kind  # kind: text (CSV), string, int, uint, float
        self.values: list[Any] = []
        #: text columns: each value as pandas' ``str.strip()`` writes it
        self.stripped: list[str] = []
        self._index: dict[Any, int] = {}

    def add(self, arr: Any) -> np.ndarray:
        """Provisional ``int32`` codes of one batch's values (``-1``: missing)."""
        import pyarrow as pa

        from . import arrow_kernels as k

        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type) and (arr.null_count or not pa.types.is_int32(arr.type.index_type)):
            arr = arr.dictionary_decode()  # a null lives in the indices, not the dictionary: decode
        # a dictionary array (strings read from Parquet's dictionary pages) is its own
        # encoding; its dictionary may hold values no row has: they get codes no row uses
        enc = arr if pa.types.is_dictionary(arr.type) else k.dictionary_encode(arr)
        idx = enc.indices
        idx_np = np.frombuffer(idx.buffers()[1], dtype=np.int32, count=idx.offset + len(idx))[idx.offset:]
        batch_values = enc.dictionary.to_pylist()
        text = self.kind in ("text", "string")
        batch_stripped = k.trim_whitespace(enc.dictionary).to_pylist() if text else None
        mapping = np.empty(len(batch_values), dtype=np.int32)
        floats = self.kind == "float"
        for j, v in enumerate(batch_values):
            if v is None or (floats and v != v) or (self.kind == "text" and v == ""):
                mapping[j] = -1
                continue
            key = (v, math.copysign(1.0, v)) if floats and v == 0 else v  # -0.0 prints apart from 0.0
            code = self._index.get(key)
            if code is None:
                code = len(self.values)
                self._index[key] = code
                self.values.append(v)
                if batch_stripped is not None:  # text
                    self.stripped.append(batch_stripped[j])
            mapping[j] = code
        return mapping[idx_np] if len(mapping) else np.full(len(idx_np), -1, dtype=np.int32)


def infer_numeric(values: list[str], has_null: bool) -> tuple[str, list[Any]] | None:
    """What :func:`openbook.data.loaders.read_table` makes of a CSV text column with these
    distinct values (and a missing value when ``has_null``): ``None`` when it stays text, else
    the pandas dtype (``"int"``, ``"uint"``, ``"float"``) and each value's number."""
    if all(_INT.fullmatch(v) and not _NEG_ZERO.fullmatch(v) for v in values):
        return ("float", [float(int(v)) for v in values]) if has_null else ("int", [int(v) for v in values])
    if all((_INT.fullmatch(v) or (_FLOAT.fullmatch(v) and sum(ch.isdigit() for ch in v) <= 15))
           and not _NEG_ZERO.fullmatch(v) for v in values):
        return "float", [float(v) for v in values]
    import pandas as pd

    s = pd.Series([*values, *([None] if has_null else [])], dtype=str)
    conv = pd.to_numeric(s, errors="coerce")
    if bool((conv.isna() & s.notna()).any()):
        return None
    dtype = {"int64": "int", "uint64": "uint", "float64": "float"}.get(str(conv.dtype))
    if dtype is None:
        raise NeedsPandas(f"numbers read as {conv.dtype}")
    return dtype, conv.iloc[: len(values)].tolist()


def parse_numbers(values: list[str]) -> list[float]:
    """``pd.to_numeric(errors="coerce")`` of each text value as a float (NaN: not a number)."""
    out: list[float] = [math.nan] * len(values)
    rest = []
    for i, v in enumerate(values):
        if (_INT.fullmatch(v) or (_FLOAT.fullmatch(v) and sum(ch.isdigit() for ch in v) <= 15)) \
                and not _NEG_ZERO.fullmatch(v):
            out[i] = float(v)
        else:
            rest.append(i)
    if rest:
        import pandas as pd

        conv = pd.to_numeric(pd.Series([values[i] for i in rest], dtype=str), errors="coerce")
        for i, x in zip(rest, conv.to_numpy(dtype=np.float64)):
            out[i] = float(x)
    return out


class Finalizer:
    """Decides, from each column's dictionary, what pandas decides from the whole column, and
    renumbers weighted rows of provisional codes (module docstring).

    ``codes`` holds one provisional-code array per used column (one entry per row: every row
    of the table, or each distinct row with its ``weights``). ``locate(column, bad)`` gives the
    position, among the rows kept after missing values are dropped, of the first row whose
    provisional code ``c`` has ``bad[c + 1]``, and that code (for error messages).
    """

    def __init__(self, schema: Schema, hierarchies: Mapping[str, Any], dictionaries: Mapping[str, ColumnDictionary],
                 *, source: str | None = None, csv_text: bool = False) -> None:
        self.schema, self.hierarchies, self.source = schema, dict(hierarchies), source
        self.dicts = dict(dictionaries)
        self.used = [*schema.qi_names, schema.sa.name]
        self.csv_text = csv_text
        #: per used column, True at ``code + 1`` for a missing value (set by :meth:`missing`)
        self.missing_luts: dict[str, np.ndarray] = {}

    # -- 1. what the column is as a pandas column ------------------------------------
    def frame_dtype(self, name: str, has_null: bool) -> tuple[str, list[Any]]:
        """``("text", strings)`` or a numeric pandas dtype and the numbers."""
        d = self.dicts[name]
        if d.kind == "text":
            num = infer_numeric(d.values, has_null)
            return ("text", d.values) if num is None else num
        if d.kind == "string":
            return "text", d.values
        if d.kind in ("int", "uint"):
            return ("float", [float(v) for v in d.values]) if has_null else (d.kind, d.values)
        return "float", d.values

    # -- 2. missing values -------------------------------------------------------------
    def missing(self, codes: Mapping[str, np.ndarray], weights: np.ndarray | None) -> np.ndarray | None:
        """Apply the schema's missing policy: raise, or the mask of rows kept (``None``: all)."""
        self.dtypes: dict[str, tuple[str, list[Any]]] = {}
        self.stripped: dict[str, list[str]] = {}
        bad: dict[str, int] = {}
        for c in self.used:
            dtype, vals = self.dtypes[c] = self.frame_dtype(c, bool((codes[c] < 0).any()))
            lut = np.zeros(len(vals) + 1, dtype=bool)
            lut[0] = True
            if dtype == "text":
                d = self.dicts[c]
                self.stripped[c] = d.stripped if d.kind in ("text", "string") else [str(v).strip() for v in vals]
                if self.schema.missing_tokens:
                    tokens = set(self.schema.missing_tokens)
                    lut[1:] = [v in tokens for v in self.stripped[c]]
            self.missing_luts[c] = lut
            miss = lut[codes[c] + 1]
            n = int(miss.sum()) if weights is None else int(weights[miss].sum())
            if n:
                bad[c] = n
        self.replaced: set[str] = set()
        if not bad:
            return None
        if self.schema.missing == "error":
            col, cnt = next(iter(bad.items()))
            raise missing_error(col, cnt, len(bad))
        if self.schema.missing == "drop":
            drop = np.zeros(len(codes[self.used[0]]), dtype=bool)
            for c in self.used:
                drop |= self.missing_luts[c][codes[c] + 1]
            return ~drop
        for c in bad:  # "value": missing becomes a category of its own
            if self.schema.column(c).kind == "numeric":
                raise numeric_missing_value_error(c, bad[c])
            self.replaced.add(c)
        return None

    # -- 3. the codes ------------------------------------------------------------------
    def column(self, col: Column, codes: np.ndarray, weights: np.ndarray | None,
               locate: Callable[[str, np.ndarray], tuple[int, int]]) -> tuple[EncodedColumn, np.ndarray]:
        """The column's decode map and the lookup table from ``provisional code + 1`` to its
        final code (``-1``: a code no kept row has)."""
        name = col.name
        dtype, vals = self.dtypes[name]
        present = np.zeros(len(vals) + 1, dtype=bool)
        present[codes + 1] = True
        live = np.flatnonzero(present[1:])  # provisional codes some kept row has
        hierarchy = self.hierarchies.get(name)

        if col.kind == "numeric":
            if dtype == "text":
                nums = parse_numbers([vals[i] for i in live])
                bad_lut = np.zeros(len(vals) + 1, dtype=bool)
                bad_lut[live + 1] = ~np.isfinite(np.asarray(nums, dtype=np.float64)) if len(live) else []
                if bad_lut.any():
                    pos, first = locate(name, bad_lut)
                    raise non_numeric_error(vals[first], pos, _rows_with(bad_lut, codes, weights), name)
                values = np.asarray(nums, dtype=np.float64)
            else:
                values = np.asarray([vals[i] for i in live], dtype=np.float64)
                if not np.isfinite(values).all():
                    bad_lut = np.zeros(len(vals) + 1, dtype=bool)
                    bad_lut[live + 1] = ~np.isfinite(values)
                    pos, first = locate(name, bad_lut)
                    raise non_numeric_error(vals[first], pos, _rows_with(bad_lut, codes, weights), name)
            if hierarchy is not None:
                cats = np.asarray(hierarchy.leaves)
                try:
                    leaf_num = cats.astype(np.float64)
                except (TypeError, ValueError):
                    from ..errors import HierarchyError

                    raise HierarchyError(f"hierarchy of numeric column {name!r} has non-numeric leaves",
                                         column=name) from None
                by_code = {c: np.float64(v) for c, v in zip(live.tolist(), values.tolist())}
                final = self._lookup(by_code, list(leaf_num), codes, weights, locate, name)
                return EncodedColumn(name, col.kind, np.zeros(0, np.int32), cats, leaf_num), final
            uniq, inv = np.unique(values, return_inverse=True)  # (with the inverse numpy skips numpy.ma)
            signs = {math.copysign(1.0, v) for v in values.tolist() if v == 0}
            if len(signs) == 2:  # -0.0 and 0.0 are one value, written as the first row has it
                zero = np.zeros(len(vals) + 1, dtype=bool)
                zero[live[values == 0] + 1] = True
                _, first = locate(name, zero)
                uniq[uniq == 0] = values[np.searchsorted(live, first)]
            cats = uniq.astype(np.int64) if np.all(uniq == np.round(uniq)) else uniq
            lut = np.full(len(vals) + 1, -1, dtype=np.int32)
            lut[live + 1] = inv.reshape(-1)
            return EncodedColumn(name, col.kind, np.zeros(0, np.int32), cats, uniq.astype(np.float64)), lut

        text = self._text(name, dtype, vals, live)
        if hierarchy is not None:
            cats = np.asarray(hierarchy.leaves)
            final = self._lookup(text, [str(v).strip() for v in cats], codes, weights, locate, name)
            numeric = np.arange(len(cats), dtype=np.float64) if col.kind == "ordinal" else None
            return EncodedColumn(name, col.kind, np.zeros(0, np.int32), cats, numeric), final
        if col.kind == "ordinal" and col.order is not None:
            order = [str(v).strip() for v in col.order]
            final = self._lookup(text, order, codes, weights, locate, name, what="the declared order")
            return EncodedColumn(name, col.kind, np.zeros(0, np.int32), np.asarray(col.order, dtype=object),
                                 np.arange(len(order), dtype=np.float64)), final
        text_codes = sorted(set(text.values()))
        rank = {t: i for i, t in enumerate(text_codes)}
        lut = np.full(len(vals) + 1, -1, dtype=np.int32)
        for c, t in text.items():
            lut[c + 1] = rank[t]
        uniq = np.empty(len(text_codes), dtype=object)
        uniq[:] = text_codes
        numeric = np.arange(len(uniq), dtype=np.float64) if col.kind == "ordinal" else None
        return EncodedColumn(name, col.kind, np.zeros(0, np.int32), uniq, numeric), lut

    def _text(self, name: str, dtype: str, vals: list[Any], live: np.ndarray) -> dict[int, str]:
        """Each live provisional code's text, as pandas writes the column (``-1``: missing)."""
        replaced = name in self.replaced
        miss = self.missing_luts[name]
        out: dict[int, str] = {}
        if replaced and miss[0]:
            out[-1] = MISSING_LABEL
        for i in live.tolist():
            if replaced and miss[i + 1]:
                out[i] = MISSING_LABEL
            elif dtype == "text":
                out[i] = self.stripped[name][i]
            elif replaced:  # an object column after the replacement: str() then strip
                out[i] = str(vals[i]).strip()
            else:
                out[i] = str(vals[i])
        return out

    def _lookup(self, values: dict[int, Any], categories: list[Any], codes: np.ndarray,
                weights: np.ndarray | None, locate: Callable[[str, np.ndarray], tuple[int, int]], name: str,
                what: str = "its hierarchy") -> np.ndarray:
        """The lookup table of the live codes' ``values`` into ``categories`` (a value not
        found raises, naming the first row's value and the rows affected)."""
        index: dict[Any, int] = {}
        for i, c in enumerate(categories):
            if c in index:
                raise duplicate_error(name, what)
            index[c] = i
        n_vals = len(self.dtypes[name][1])
        lut = np.full(n_vals + 1, -1, dtype=np.int32)
        bad = np.zeros(n_vals + 1, dtype=bool)
        for c, v in values.items():
            j = index.get(v)
            if j is None:
                bad[c + 1] = True
            else:
                lut[c + 1] = j
        if bad.any():
            _, first = locate(name, bad)
            raise lookup_error(values[first], _rows_with(bad, codes, weights), name, what)
        return lut


def _rows_with(bad: np.ndarray, codes: np.ndarray, weights: np.ndarray | None) -> int:
    """Rows (weighted) whose provisional code ``c`` has ``bad[c + 1]``."""
    hit = bad[codes + 1]
    return int(hit.sum()) if weights is None else int(weights[hit].sum())


# ---------------------------------------------------------------------------------------
# a whole table from a source
# ---------------------------------------------------------------------------------------
def read_codes(src: Any, columns: list[str], kinds: Mapping[str, str], batch_rows: int,
               keep: Sequence[str] = ()) -> tuple[dict[str, ColumnDictionary], dict[str, np.ndarray], list[Any]]:
    """Every batch of ``src``: the dictionaries, the provisional codes of every row, and the
    Arrow arrays of the ``keep`` columns (values as they are)."""
    dicts = {c: ColumnDictionary(c, kinds[c]) for c in columns}
    chunks: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    kept: list[Any] = []
    total = src.n_rows
    out = {c: np.empty(total, dtype=np.int32) for c in columns} if total is not None else None
    at = 0
    strings = [c for c in columns if kinds[c] == "string" and c not in keep]  # kept columns stay as they are
    for batch in src.batches([*columns, *[k for k in keep if k not in columns]], batch_rows, dictionary=strings):
        n = batch.num_rows
        for c in columns:
            codes = dicts[c].add(batch.column(c))
            if out is not None:
                out[c][at:at + n] = codes
            else:
                chunks[c].append(codes)
        if keep:
            kept.append(batch.select(list(keep)))
        at += n
    if out is None:
        out = {}
        for c in columns:  # one column at a time: the chunks go as the column is built
            out[c] = np.concatenate(chunks.pop(c)) if chunks[c] else np.zeros(0, dtype=np.int32)
    elif at != total:
        raise NeedsPandas("the file has a different number of rows than its metadata says")
    return dicts, out, kept


def as_source(data: Any) -> Any:
    """A file source as it is; a ``pyarrow.Table`` as a :class:`~openbook.data.arrow.TableSource`."""
    return data if hasattr(data, "batches") else TableSource(data)


def encode_source(data: Any, schema: Schema, hierarchies: Mapping[str, Any] | None = None, *,
                  source: str | None = None, batch_rows: int | None = None, fallback: bool = True) -> EncodedTable:
    """:func:`openbook.data.table.encode` of a ``pyarrow.Table`` or a file source; a file only
    pandas reads as openbook does (:class:`~openbook.data.arrow.NeedsPandas`) is read with
    pandas (``fallback=False``: the signal is raised instead)."""
    src = as_source(data)
    try:
        return _encode(src, schema, dict(hierarchies or {}), source, batch_rows or DEFAULT_BATCH_ROWS)
    except NeedsPandas:
        if not fallback:
            raise
        return encode_frame(pandas_frame(src), schema, hierarchies, source=source)


def pandas_frame(src: Any) -> Any:
    """The source as the DataFrame that means it (the reference)."""
    if not hasattr(src, "path"):
        return src.table.to_pandas()
    from .loaders import read_table

    return read_table(src.path, format=src.format, sep=src.sep)


def _encode(src: Any, schema: Schema, hierarchies: dict[str, Any], source: str | None,
            batch_rows: int) -> EncodedTable:
    names = src.column_names
    used = [*schema.qi_names, schema.sa.name]
    present = set(names)
    read = [c for c in dict.fromkeys(used) if c in present]
    keep = [k for k in schema.keep if k in present]
    kinds = src.kinds(read + keep)
    dicts, codes, kept_batches = read_codes(src, read, kinds, batch_rows, keep)
    import pyarrow as pa

    # Arrow's allocator keeps the freed pages of the batches read (~20 bytes a row at 10^7
    # rows, bench/RESULTS.md "The whole anonymize"): the codes are all that is left of them
    pa.default_memory_pool().release_unused()
    check_declared(names, schema, hierarchies)
    n = len(codes[used[0]])
    if n == 0:
        raise empty_error(source)
    fin = Finalizer(schema, hierarchies, dicts, source=source, csv_text=src.is_csv_text)
    keep_rows = fin.missing(codes, None)
    if keep_rows is not None:
        codes = {c: a[keep_rows] for c, a in codes.items()}
        if not keep_rows.any():
            raise empty_after_drop_error(source)
        from ..errors import warn_dropped

        warn_dropped(int((~keep_rows).sum()), int(keep_rows.size), source)

    def locate(name: str, bad: np.ndarray) -> tuple[int, int]:
        pos = int(np.flatnonzero(bad[codes[name] + 1])[0])
        return pos, int(codes[name][pos])

    cols: dict[str, EncodedColumn] = {}
    for col in (*schema.qi, schema.sa):
        meta, lut = fin.column(col, codes[col.name], None, locate)
        final = codes.pop(col.name)  # renumbered in place: no second copy of the column
        final += 1
        np.take(lut, final, out=final)
        cols[col.name] = EncodedColumn(col.name, col.kind, final, meta.categories, meta.numeric)
    kept = _kept_frame(kept_batches, keep, keep_rows, src.is_csv_text) if schema.keep else None
    dropped = tuple(schema.undeclared(names))
    return EncodedTable(schema, cols, hierarchies, kept, dropped, source)


def _kept_frame(batches: list[Any], keep: list[str], rows: np.ndarray | None, csv_text: bool) -> Any:
    """The kept columns as the DataFrame the pandas path keeps (CSV numbers inferred)."""
    import pyarrow as pa

    from .loaders import numeric_where_possible

    table = pa.Table.from_batches(batches) if batches else None
    df = table.to_pandas() if table is not None else None
    if df is None:
        import pandas as pd

        df = pd.DataFrame({k: pd.Series([], dtype=str) for k in keep})
    if csv_text:  # CSV text left empty by the spaces pandas skips is missing, as in pandas
        for c in df.columns:
            df[c] = df[c].mask(df[c] == "")
        df = numeric_where_possible(df)
    if rows is not None:
        df = df.loc[rows]
    return df.reset_index(drop=True)
