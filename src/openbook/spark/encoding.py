"""Input for the Spark engine: Parquet or CSV at any Spark-readable path, encoded on the
cluster to exactly the integer codes the local engine gives (:func:`openbook.data.table.encode`).

**Dictionaries on the driver.** One aggregation collects every used column's distinct raw
values (and whether it holds nulls). On the driver those few values go through what the
local loaders do to a whole column — a CSV column is read as text and becomes numeric when
every value parses (:func:`openbook.data.loaders.read_table`), missing values follow the
schema's policy, and :func:`~openbook.data.table.encode` codes them (numeric columns in value
order, text sorted, a hierarchy's leaf order, an ordinal's declared order). Every decision
the local encoder makes about a column depends on its *set* of values only, so the codes are
the local ones. The dictionaries must fit the driver (as the local engine's do).

**Codes on the executors.** A ``mapInArrow`` pass looks each raw value up in its column's
dictionary (``pyarrow.compute.index_in``) and drops rows with a missing value under
``missing="drop"``.

**Row order.** Rows are numbered ``_row = 0..n-1`` in *input order*: files in path order,
each file in its own order (Spark's file metadata gives each row's file and block; a row's
rank inside its block is counted in the same pass; one small aggregation gives each block's
offset). Relaxed Mondrian shares tied points out in input order, so this is what makes its
partition the local one.

:class:`SparkTable` is the result: a cached DataFrame ``(_row, q0..q{d-1}, s)`` of int codes,
the dictionaries as a row-less :class:`~openbook.data.table.EncodedTable`, the row count and
the SA domain with the whole table's counts.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Iterator, Mapping

import numpy as np
import pandas as pd

from ..config import RunConfig
from ..data.schema import Schema
from ..data.table import MISSING_LABEL, EncodedColumn, EncodedTable, encode
from ..errors import DataError, ParameterError, PrivacyLeakWarning, SchemaError
from ..models.base import SADomain

ROW = "_row"
SA = "s"
CSV_SUFFIXES = {".csv", ".txt", ".data", ".test", ".tsv"}
PARQUET_SUFFIXES = {".parquet", ".pq"}


def qi_col(j: int) -> str:
    """The Spark column of QI ``j``'s codes."""
    return f"q{j}"


@dataclass(eq=False)
class SparkTable:
    """An encoded table on the cluster (module docstring)."""

    df: Any
    dictionaries: EncodedTable
    n_rows: int
    domain: SADomain

    @property
    def qi_names(self) -> list[str]:
        return self.dictionaries.qi_names

    @property
    def d(self) -> int:
        return len(self.qi_names)

    @property
    def qi_cols(self) -> list[str]:
        return [qi_col(j) for j in range(self.d)]

    @property
    def n_sa(self) -> int:
        return self.dictionaries.columns[self.dictionaries.sa_name].n_values

    @property
    def cardinalities(self) -> list[int]:
        return [self.dictionaries.columns[n].n_values for n in self.qi_names]

    def fragment(self, X: np.ndarray, sa: np.ndarray) -> EncodedTable:
        """The rows ``X`` (QI codes, one column per QI) and ``sa`` as an EncodedTable with
        this table's dictionaries and hierarchies (:func:`fragment_table`)."""
        return fragment_table(self.dictionaries, X, sa)


def fragment_table(dictionaries: EncodedTable, X: np.ndarray, sa: np.ndarray) -> EncodedTable:
    """An EncodedTable of the given codes under ``dictionaries`` (schema, categories, numeric
    values, hierarchies): a part of the whole table that Mondrian and the release builder see
    exactly as they see the whole (its widths are normalised by the dictionaries)."""
    t = dictionaries
    cols = {}
    for j, name in enumerate(t.qi_names):
        c = t.columns[name]
        cols[name] = EncodedColumn(name, c.kind, np.ascontiguousarray(X[:, j], dtype=np.int32), c.categories, c.numeric)
    s = t.columns[t.sa_name]
    cols[t.sa_name] = EncodedColumn(s.name, s.kind, np.ascontiguousarray(sa, dtype=np.int32), s.categories, s.numeric)
    return EncodedTable(t.schema, cols, t.hierarchies, None, t.dropped_columns, t.source)


def _dictionaries_of(table: EncodedTable) -> EncodedTable:
    empty = np.zeros(0, dtype=np.int32)
    cols = {n: EncodedColumn(c.name, c.kind, empty, c.categories, c.numeric) for n, c in table.columns.items()}
    return EncodedTable(table.schema, cols, table.hierarchies, None, table.dropped_columns, table.source)


def _domain(dictionaries: EncodedTable, counts: np.ndarray) -> SADomain:
    """The SA domain of the dictionaries (values, numbers, hierarchy, sensitive sets) with the
    whole table's counts."""
    sa = dictionaries.columns[dictionaries.sa_name]
    probe = fragment_table(dictionaries, np.zeros((sa.n_values, len(dictionaries.qi_names)), dtype=np.int32),
                           np.arange(sa.n_values, dtype=np.int32))
    return dataclasses.replace(probe.sa_domain, global_counts=np.asarray(counts, dtype=np.int64))


def materialize_hierarchies(dictionaries: EncodedTable, *, numeric: bool) -> None:
    """Build the automatic hierarchies once on the driver (so the executors do not each build
    their own): of every non-numeric QI, and with ``numeric`` of the numeric ones too (a
    numeric QI with a hierarchy is generalized by it, so Mondrian's ranges must not get one)."""
    for name in dictionaries.qi_names:
        if numeric or dictionaries.columns[name].kind != "numeric":
            dictionaries.hierarchy(name)


# ---------------------------------------------------------------------------------------
# from an in-memory table
# ---------------------------------------------------------------------------------------
def from_encoded(spark: Any, table: EncodedTable) -> SparkTable:
    """An in-memory EncodedTable on the cluster (built-in datasets, tests)."""
    import pyarrow as pa

    n = table.n_rows
    arrays = {ROW: pa.array(np.arange(n, dtype=np.int64))}
    for j, name in enumerate(table.qi_names):
        arrays[qi_col(j)] = pa.array(np.asarray(table.columns[name].codes, dtype=np.int32))
    arrays[SA] = pa.array(np.asarray(table.sa_codes, dtype=np.int32))
    df = spark.createDataFrame(pa.table(arrays))
    return SparkTable(_persist(df), _dictionaries_of(table), n, table.sa_domain)


def _persist(df: Any) -> Any:
    from pyspark import StorageLevel

    return df.persist(StorageLevel.MEMORY_AND_DISK)


# ---------------------------------------------------------------------------------------
# from a file
# ---------------------------------------------------------------------------------------
def format_of(path: str, fmt: str | None) -> str:
    """``csv`` or ``parquet``: ``fmt``, else the path's suffix."""
    if fmt:
        if fmt not in ("csv", "parquet"):
            raise ParameterError(f"--engine spark reads Parquet or CSV, not {fmt} (use --engine local for databases)",
                                 parameter="format", value=fmt)
        return fmt
    suffix = PurePosixPath(path.rstrip("/")).suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in CSV_SUFFIXES:
        return "csv"
    raise DataError(f"{path}: unknown table format {suffix or '(no suffix)'!r} for the Spark engine (use .parquet or "
                    ".csv, or --format)", path=path)


def read_raw(spark: Any, path: str, fmt: str | None = None) -> Any:
    """The table at ``path`` (any Spark-readable path: a file, a folder of parts, ``hdfs://``,
    ``s3a://`` …) as Spark reads it; CSV as text with a header, as the local loader does."""
    kind = format_of(path, fmt)
    if "://" in path and path.split("://", 1)[0] in ("sqlite", "duckdb", "postgresql", "mysql"):
        raise ParameterError(f"--engine spark reads Parquet or CSV, not the database {path.split('@')[-1]}",
                             parameter="engine", value="spark")
    reader = spark.read.format(kind)
    if kind == "csv":
        reader = (reader.option("header", True).option("inferSchema", False).option("mode", "FAILFAST")
                  .option("ignoreLeadingWhiteSpace", True).option("sep", "\t" if path.endswith(".tsv") else ","))
    try:
        df = reader.load(path)
        df.schema  # noqa: B018  (lists the files now: a missing path fails here)
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "PATH_NOT_FOUND" in text or "does not exist" in text:
            raise DataError(f"no such file: {path}", path=path) from None
        raise DataError(f"cannot read {path} as {kind}: {text}", path=path) from None
    return df


def load_spark_input(spark: Any, cfg: RunConfig) -> SparkTable:
    """The configured input on the cluster: a built-in dataset (encoded on the driver, as the
    local engine does) or a Parquet/CSV path encoded on the cluster."""
    from ..pipeline import load_hierarchy, load_input, schema_from

    inp = cfg.input
    if inp.get("dataset"):
        return from_encoded(spark, load_input(cfg))
    if inp.get("table") or inp.get("query"):
        raise ParameterError("--engine spark reads Parquet or CSV files, not database tables", parameter="table")
    if not inp.get("path"):
        raise ParameterError("no input: give a data file or --dataset", parameter="input")
    schema = schema_from(cfg.schema)
    if schema.keep:
        raise ParameterError("--keep: the Spark engine publishes QIs and the SA only (use --engine local to keep "
                             "other columns)", parameter="keep")
    hier: dict[str, Any] = {}
    for col, spec in cfg.hierarchies.items():
        kind = schema.column(col).kind if col in [*schema.qi_names, schema.sa.name] else "categorical"
        h = load_hierarchy(spec, col, kind)
        if h is not None:
            hier[col] = h
    path = str(inp["path"])
    raw = read_raw(spark, path, inp.get("format"))
    return encode_raw(spark, raw, schema, hier, source=path, csv=format_of(path, inp.get("format")) == "csv")


def _distinct_series(values: Any, has_null: bool, csv: bool) -> tuple[Any, pd.Series]:
    """A column's distinct raw values (Arrow, nulls last) and the same values as the local
    loader would hold them (pandas, CSV text made numeric when every value parses)."""
    import pyarrow as pa

    arr = values
    if has_null:
        arr = pa.concat_arrays([arr, pa.nulls(1, type=arr.type)])
    s = pa.table({"v": arr}).to_pandas()["v"]
    if csv:
        conv = pd.to_numeric(s, errors="coerce")
        if not (conv.isna() & s.notna()).any():
            s = conv
    return arr, s.reset_index(drop=True)


def _missing_mask(s: pd.Series, tokens: tuple[str, ...]) -> np.ndarray:
    """Which values the schema counts as missing (null, or a missing token in a text column),
    as the local encoder decides."""
    miss = s.isna().to_numpy().copy()
    if tokens and (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
        stripped = s.astype("string").str.strip()
        miss |= stripped.isin(tokens).fillna(False).to_numpy(dtype=bool)
    return miss


def encode_raw(spark: Any, raw: Any, schema: Schema, hierarchies: Mapping[str, Any], *, source: str,
               csv: bool = False) -> SparkTable:
    """Encode a raw Spark DataFrame under ``schema`` (module docstring)."""
    from pyspark.sql import functions as F

    schema.check_columns(raw.columns)
    for name in hierarchies:
        if name not in schema.qi_names and name != schema.sa.name:
            raise SchemaError(f"a hierarchy is given for column {name!r}, which is neither QI nor SA", column=name)
    used = [*schema.qi_names, schema.sa.name]
    undeclared = schema.undeclared(map(str, raw.columns))
    if undeclared:
        warnings.warn(f"columns {', '.join(undeclared)} are neither QI nor SA and are dropped from the release "
                      "(declare them with keep= to publish them)", PrivacyLeakWarning, stacklevel=3)
    aggs = [F.collect_set(F.col(f"`{c}`")).alias(f"v{i}") for i, c in enumerate(used)]
    aggs += [F.sum(F.when(F.col(f"`{c}`").isNull(), 1).otherwise(0)).alias(f"n{i}") for i, c in enumerate(used)]
    first = raw.agg(*aggs, F.count(F.lit(1)).alias("rows")).toArrow()
    if int(first.column("rows")[0].as_py() or 0) == 0:
        raise DataError(f"the table {source} is empty (0 rows)", path=source)
    raws, series, masks = [], [], []
    for i, c in enumerate(used):
        arr, s = _distinct_series(first.column(f"v{i}")[0].values, int(first.column(f"n{i}")[0].as_py() or 0) > 0,
                                  csv)
        raws.append(arr)
        series.append(s)
        masks.append(_missing_mask(s, schema.missing_tokens))
    bad = [i for i in range(len(used)) if masks[i].any()]
    if bad and schema.missing == "error":
        c = used[bad[0]]
        cnt = _count_rows(raw, c, raws[bad[0]], masks[bad[0]])
        others = f" (and {len(bad) - 1} more columns)" if len(bad) > 1 else ""
        raise SchemaError(f"column {c!r} has {cnt} missing value(s){others}; use missing='drop' to drop those rows "
                          "or missing='value' to treat missing as a value", column=c)
    if schema.missing == "value":
        for i in bad:
            if schema.column(used[i]).kind == "numeric":
                raise SchemaError(f"column {used[i]!r} is numeric and has {_count_rows(raw, used[i], raws[i], masks[i])} "
                                  "missing value(s): missing='value' needs a categorical column; use missing='drop'",
                                  column=used[i])
            s = series[i].astype(object)
            s[masks[i]] = MISSING_LABEL
            series[i] = s
            masks[i] = np.zeros(len(s), dtype=bool)
    # the local encoder on the distinct values: each column padded to one length by repeating a value
    keep = [np.flatnonzero(~m) for m in masks]
    if any(k.size == 0 for k in keep):
        raise DataError(f"the table {source} is empty after dropping rows with missing values", path=source)
    width = max(k.size for k in keep)
    frame = pd.DataFrame({c: series[i].iloc[np.concatenate([keep[i], np.repeat(keep[i][:1], width - keep[i].size)])]
                          .reset_index(drop=True) for i, c in enumerate(used)})
    dict_schema = dataclasses.replace(schema, identifiers=(), keep=(), missing="error")
    enc = encode(frame, dict_schema, dict(hierarchies), source=source)
    lookups = []
    for i, c in enumerate(used):
        lut = np.full(len(series[i]), -1, dtype=np.int32)
        lut[keep[i]] = enc.columns[c].codes[: keep[i].size]
        lookups.append(lut)
    dictionaries = _dictionaries_of(enc)
    dictionaries = EncodedTable(schema, dictionaries.columns, dictionaries.hierarchies, None,
                                tuple(undeclared), source)
    df = _codes_frame(raw, used, raws, lookups)
    counts = np.zeros(dictionaries.columns[schema.sa.name].n_values, dtype=np.int64)
    for row in df.groupBy(SA).count().toArrow().to_pylist():
        counts[row[SA]] = row["count"]
    n = int(counts.sum())
    if n == 0:
        raise DataError(f"the table {source} is empty after dropping rows with missing values", path=source)
    return SparkTable(df, dictionaries, n, _domain(dictionaries, counts))


def _count_rows(raw: Any, column: str, values: Any, mask: np.ndarray) -> int:
    """Rows of ``raw`` whose ``column`` holds one of the missing ``values[mask]``."""
    from pyspark.sql import functions as F

    vals = [v for v in values.to_pylist() if v is not None]
    missing_vals = [vals[i] for i in np.flatnonzero(mask[: len(vals)])]
    cond = F.col(f"`{column}`").isNull()
    if missing_vals:
        cond = cond | F.col(f"`{column}`").isin(missing_vals)
    return int(raw.filter(cond).count())


def _codes_frame(raw: Any, used: list[str], raws: list[Any], lookups: list[np.ndarray]) -> Any:
    """``(_row, q0.., s)`` of the raw rows: codes looked up on the executors, rows with a
    missing value dropped, ``_row`` the input order (module docstring)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    d = len(used) - 1
    names = [qi_col(j) for j in range(d)] + [SA]
    src = raw.select(*[F.col(f"`{c}`").alias(f"c{i}") for i, c in enumerate(used)],
                     F.xxhash64(F.col("_metadata.file_path")).alias("_file"),
                     F.col("_metadata.file_block_start").alias("_block"))
    schema = ", ".join(["_file long", "_block long", "_i long"] + [f"{n} int" for n in names])

    def encode_batches(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow.compute as pc

        last_key, seen = None, 0
        for b in batches:
            codes = []
            for i in range(len(used)):
                idx = pc.index_in(b.column(f"c{i}"), value_set=raws[i]).to_numpy(zero_copy_only=False)
                idx = np.where(np.isnan(idx), -1, idx).astype(np.int64) if idx.dtype.kind == "f" else idx
                codes.append(np.where(idx >= 0, lookups[i][np.maximum(idx, 0)], -1).astype(np.int32))
            keep = np.logical_and.reduce([c >= 0 for c in codes])
            f = b.column("_file").to_numpy(zero_copy_only=False)
            blk = b.column("_block").to_numpy(zero_copy_only=False)
            n = f.size
            if n == 0:
                continue
            new = np.ones(n, dtype=bool)
            new[1:] = (f[1:] != f[:-1]) | (blk[1:] != blk[:-1])
            run = np.cumsum(new) - 1
            starts = np.flatnonzero(new)
            kept = keep.astype(np.int64)
            cum = np.cumsum(kept)
            before = np.concatenate([[0], cum])[starts]  # kept rows before each run in this batch
            base = np.zeros(starts.size, dtype=np.int64)
            if last_key is not None and (f[0], blk[0]) == last_key:
                base[0] = seen
            i_in = base[run] + cum - 1 - before[run]
            end = (int(f[-1]), int(blk[-1]))
            seen = int(base[-1] + cum[-1] - before[-1])
            last_key = end
            sel = np.flatnonzero(keep)
            out = [pa.array(f[sel]), pa.array(blk[sel]), pa.array(i_in[sel])] + [pa.array(c[sel]) for c in codes]
            yield pa.RecordBatch.from_arrays(out, names=["_file", "_block", "_i"] + names)

    coded = src.mapInArrow(encode_batches, schema)
    splits = sorted((r["_file"], r["_block"], r["count"]) for r in coded.groupBy("_file", "_block").count()
                    .toArrow().to_pylist())
    # files in path order: the hash only keys a split; order by path, which the metadata gives
    paths = {r["_file"]: r["p"] for r in src.select("_file", F.col("_metadata.file_path").alias("p")).distinct()
             .toArrow().to_pylist()} if len({s[0] for s in splits}) > 1 else {}
    splits.sort(key=lambda s: (paths.get(s[0], ""), s[1]))
    offsets = np.concatenate([[0], np.cumsum([s[2] for s in splits])[:-1]]).astype(np.int64)
    import pyarrow as pa2

    off = raw.sparkSession.createDataFrame(pa2.table({"_file": pa2.array([s[0] for s in splits], pa2.int64()),
                                                      "_block": pa2.array([s[1] for s in splits], pa2.int64()),
                                                      "_off": pa2.array(offsets)}))
    df = coded.join(F.broadcast(off), ["_file", "_block"]).select(
        (F.col("_off") + F.col("_i")).alias(ROW), *names)
    return _persist(df)
