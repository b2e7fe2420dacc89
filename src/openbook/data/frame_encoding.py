"""Encoding a pandas DataFrame under a schema: the reference path of
:func:`openbook.data.table.encode`.

Whatever the source, a table means what this module makes of it as a DataFrame: the Arrow
path (:mod:`openbook.data.batch_encoding`) gives the same codes, decode maps, row order,
missing-value handling and errors, and the tests hold the two together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..errors import DataError, HierarchyError, SchemaError, option
from .schema import Column, Schema
from .table import MISSING_LABEL, EncodedColumn, EncodedTable

if TYPE_CHECKING:
    import pandas as pd


def encode_frame(
    df: pd.DataFrame,
    schema: Schema,
    hierarchies: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
) -> EncodedTable:
    """Encode a DataFrame under a schema. The frame's index is ignored: rows are positions.

    Raises ``SchemaError`` (unknown column, non-numeric value in a numeric QI, missing
    values under ``missing="error"``), ``HierarchyError`` (a value missing from its
    column's hierarchy), ``DataError`` (empty table).
    """
    hierarchies = dict(hierarchies or {})
    check_declared(df.columns, schema, hierarchies)
    if len(df) == 0:
        raise empty_error(source)
    df = df.reset_index(drop=True)
    used = [*schema.qi_names, schema.sa.name]
    df = _handle_missing(df, schema, used)
    if len(df) == 0:
        raise empty_after_drop_error(source)

    cols: dict[str, EncodedColumn] = {}
    for col in (*schema.qi, schema.sa):
        cols[col.name] = _encode_column(df[col.name], col, hierarchies.get(col.name))
    kept = df[list(schema.keep)].copy() if schema.keep else None
    dropped = tuple(schema.undeclared(map(str, df.columns)))
    return EncodedTable(schema, cols, hierarchies, kept, dropped, source)


def check_declared(columns: Any, schema: Schema, hierarchies: Mapping[str, Any]) -> None:
    """Every declared column is in the data; every hierarchy belongs to a QI or the SA."""
    schema.check_columns(columns)
    for name in hierarchies:
        if name not in schema.qi_names and name != schema.sa.name:
            raise SchemaError(f"a hierarchy is given for column {name!r}, which is neither QI nor SA", column=name)


def _is_missing(s: pd.Series, tokens: tuple[str, ...]) -> np.ndarray:
    import pandas as pd

    miss = s.isna().to_numpy().copy()
    if tokens and (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
        stripped = s.astype("string").str.strip()
        miss |= stripped.isin(tokens).fillna(False).to_numpy(dtype=bool)
    return miss


def _handle_missing(df: pd.DataFrame, schema: Schema, used: list[str]) -> pd.DataFrame:
    masks = {c: _is_missing(df[c], schema.missing_tokens) for c in used}
    bad = {c: int(m.sum()) for c, m in masks.items() if m.any()}
    if not bad:
        return df
    if schema.missing == "error":
        col, cnt = next(iter(bad.items()))
        raise missing_error(col, cnt, len(bad))
    if schema.missing == "drop":
        from ..errors import warn_dropped

        any_missing = np.logical_or.reduce(list(masks.values()))
        warn_dropped(int(any_missing.sum()), len(df))
        return df.loc[~any_missing].reset_index(drop=True)
    # "value": missing becomes a category of its own (impossible in a numeric column)
    df = df.copy()
    for c in bad:
        if schema.column(c).kind == "numeric":
            raise numeric_missing_value_error(c, bad[c])
        s = df[c].astype(object)
        s[masks[c]] = MISSING_LABEL
        df[c] = s
    return df


def _encode_column(s: pd.Series, col: Column, hierarchy: Any) -> EncodedColumn:
    import pandas as pd

    if col.kind == "numeric":
        values = pd.to_numeric(s, errors="coerce")
        # not a number, or not a finite one ("inf" would publish as a range ending at -2^63)
        bad = (values.isna().to_numpy() & ~s.isna().to_numpy()) | np.isinf(values.to_numpy(dtype=np.float64))
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise non_numeric_error(s.iloc[pos], pos, int(bad.sum()), col.name)
        values = values.to_numpy(dtype=np.float64)
        if hierarchy is not None:
            cats = np.asarray(hierarchy.leaves)
            try:
                leaf_num = cats.astype(np.float64)
            except (TypeError, ValueError):
                raise HierarchyError(
                    f"hierarchy of numeric column {col.name!r} has non-numeric leaves",
                    column=col.name,
                ) from None
            codes = _lookup(values, leaf_num, col.name)
            return EncodedColumn(col.name, col.kind, codes, cats, leaf_num)
        inv, uniq = pd.factorize(values, sort=True)  # hash, then sort the few uniques
        uniq = np.asarray(uniq, dtype=np.float64)
        cats = uniq.astype(np.int64) if np.all(uniq == np.round(uniq)) else uniq
        return EncodedColumn(col.name, col.kind, inv.astype(np.int32), cats, uniq.astype(np.float64))

    text = s.astype(str).str.strip() if not pd.api.types.is_numeric_dtype(s.dtype) else s.astype(str)
    text = text.to_numpy(dtype=object)
    if hierarchy is not None:
        cats = np.asarray(hierarchy.leaves)
        codes = _lookup(text, np.array([str(v).strip() for v in cats], dtype=object), col.name)
        numeric = np.arange(len(cats), dtype=np.float64) if col.kind == "ordinal" else None
        return EncodedColumn(col.name, col.kind, codes, cats, numeric)
    if col.kind == "ordinal" and col.order is not None:
        order = np.array([str(v).strip() for v in col.order], dtype=object)
        codes = _lookup(text, order, col.name, what="the declared order")
        return EncodedColumn(col.name, col.kind, codes, np.asarray(col.order, dtype=object),
                             np.arange(len(order), dtype=np.float64))
    inv, uniq = pd.factorize(text, sort=True)
    uniq = np.asarray(uniq, dtype=object)
    numeric = np.arange(len(uniq), dtype=np.float64) if col.kind == "ordinal" else None
    return EncodedColumn(col.name, col.kind, inv.astype(np.int32), uniq.astype(object), numeric)


def _lookup(values: np.ndarray, categories: np.ndarray, column: str, what: str = "its hierarchy") -> np.ndarray:
    """Codes of ``values`` in ``categories``; a value not found raises naming it and the column."""
    import pandas as pd

    index = pd.Index(categories)
    if not index.is_unique:
        raise duplicate_error(column, what)
    codes = index.get_indexer(values)
    if (codes < 0).any():
        pos = np.flatnonzero(codes < 0)
        raise lookup_error(values[pos[0]], len(pos), column, what)
    return codes.astype(np.int32)


def lookup_error(value: Any, n_rows: int, column: str, what: str = "its hierarchy") -> Exception:
    """The error for a value (the first row's) missing from a hierarchy or declared order."""
    if isinstance(value, float) and value == int(value):
        value = int(value)
    err = HierarchyError if what == "its hierarchy" else SchemaError
    return err(
        f"value {value!r} of column {column!r} is missing from {what} ({n_rows} row(s) affected)",
        column=column,
        **({"value": value} if err is HierarchyError else {}),
    )


def non_numeric_error(value: Any, pos: int, n_rows: int, column: str) -> SchemaError:
    """The error for a value of a numeric column that is not a (finite) number."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar reads as the Python number (np.float64(inf) -> inf)
    what = "infinite" if str(value).strip().lstrip("+-").lower() in ("inf", "infinity") else "non-numeric"
    return SchemaError(
        f"{what} value {value!r} in numeric column {column!r} (row {pos}, {n_rows} such value(s)): a numeric QI "
        "holds finite numbers", column=column,
    )


def duplicate_error(column: str, what: str = "its hierarchy") -> HierarchyError:
    return HierarchyError(f"{what} of column {column!r} lists a value twice", column=column)


def missing_error(column: str, count: int, n_bad_columns: int) -> SchemaError:
    """The error of ``missing="error"``: the first column with missing values, and how many."""
    others = f" (and {n_bad_columns - 1} more columns)" if n_bad_columns > 1 else ""
    return SchemaError(
        f"column {column!r} has {count} missing value(s){others}; use {option('missing', 'drop')} to drop "
        f"those rows or {option('missing', 'value')} to treat missing as a value",
        column=column,
    )


def numeric_missing_value_error(column: str, count: int) -> SchemaError:
    return SchemaError(
        f"column {column!r} is numeric and has {count} missing value(s): missing='value' "
        "needs a categorical column; use missing='drop'",
        column=column,
    )


def empty_error(source: str | None) -> DataError:
    return DataError(f"the table{' ' + source if source else ''} is empty (0 rows)", path=source)


def empty_after_drop_error(source: str | None) -> DataError:
    return DataError("the table is empty after dropping rows with missing values", path=source)
