"""``EncodedTable``: every used column encoded once to ``int32`` codes with a decode map.

Rows are referenced by **position** only (0..n-1), never by a DataFrame index label, so a
reindexed or shuffled frame cannot change a result (pyCANON's wrong-ℓ bug on a non-default
index cannot happen here). Numeric and ordinal columns are coded in value order, so code
order is value order; a column with a hierarchy is coded in the hierarchy's leaf order
(its leaves *are* the code space), so hierarchy operations work on codes directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..errors import DataError, HierarchyError, SchemaError
from ..models.base import SADomain
from .schema import Column, Schema

MISSING_LABEL = "<missing>"


@dataclass(frozen=True, eq=False)
class EncodedColumn:
    """Codes of one column and how to decode them."""

    name: str
    kind: str
    codes: np.ndarray  # int32, one per row
    categories: np.ndarray  # decoded value of each code
    numeric: np.ndarray | None = None  # float64 value of each code (numeric / ordinal rank)

    @property
    def n_values(self) -> int:
        return len(self.categories)


@dataclass(eq=False)
class EncodedTable:
    """A table with every QI and the SA as integer codes.

    Build one with :func:`encode` (from a DataFrame) or :meth:`from_codes` (from arrays,
    the fast path for synthetic tables of 10^7 rows and more).
    """

    schema: Schema
    columns: dict[str, EncodedColumn]
    hierarchies: dict[str, Any] = field(default_factory=dict)
    kept: pd.DataFrame | None = None
    dropped_columns: tuple[str, ...] = ()
    source: str | None = None

    # -- shape ------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(len(self.columns[self.schema.sa.name].codes))

    def __len__(self) -> int:
        return self.n_rows

    @property
    def qi_names(self) -> list[str]:
        return self.schema.qi_names

    @property
    def sa_name(self) -> str:
        return self.schema.sa.name

    @cached_property
    def qi_codes(self) -> np.ndarray:
        """``(n_rows, n_qi)`` int32 matrix of QI codes, columns in schema order."""
        return np.column_stack([self.columns[n].codes for n in self.qi_names]).astype(np.int32, copy=False)

    @property
    def sa_codes(self) -> np.ndarray:
        return self.columns[self.sa_name].codes

    @property
    def qi_cardinalities(self) -> np.ndarray:
        return np.array([self.columns[n].n_values for n in self.qi_names], dtype=np.int64)

    # -- hierarchies --------------------------------------------------------------------
    def hierarchy(self, name: str) -> Any:
        """The column's hierarchy: the declared one, or an automatic one built on first use
        (numeric → interval ladder, categorical → flat, ordinal → balanced merges)."""
        h = self.hierarchies.get(name)
        if h is None:
            from ..hierarchy import builders

            col = self.columns[name]
            h = builders.auto(list(col.categories), col.kind, column=name)
            self.hierarchies[name] = h
        return h

    # -- the SA -------------------------------------------------------------------------
    @cached_property
    def sa_domain(self) -> SADomain:
        """What privacy models know of the SA: values, table distribution, sets, numbers."""
        col = self.columns[self.sa_name]
        sets: dict[str, np.ndarray] = {}
        lookup = {_key(v): i for i, v in enumerate(col.categories)}
        for set_name, vals in self.schema.sensitive_sets.items():
            mask = np.zeros(col.n_values, dtype=bool)
            for v in vals:
                i = lookup.get(_key(v))
                if i is None:
                    raise SchemaError(
                        f"sensitive value {v!r} of set {set_name!r} does not occur in column "
                        f"{self.sa_name!r}",
                        column=self.sa_name,
                    )
                mask[i] = True
            sets[set_name] = mask
        return SADomain.from_codes(
            col.codes,
            col.categories,
            numeric=col.numeric,
            hierarchy=self.hierarchies.get(self.sa_name),
            sensitive_sets=sets,
        )

    def group_sa_counts(self, group: np.ndarray, n_groups: int) -> np.ndarray:
        """``(n_groups, n_sa)`` int64 matrix of SA counts per group; rows with group < 0
        (suppressed) are left out."""
        return sa_counts(group, self.sa_codes, n_groups, self.columns[self.sa_name].n_values)

    # -- row subsets and decoding -------------------------------------------------------------
    def take(self, rows: np.ndarray) -> "EncodedTable":
        """The sub-table of the given row positions (codes and decode maps kept as they are)."""
        rows = np.asarray(rows)
        cols = {
            n: EncodedColumn(c.name, c.kind, c.codes[rows], c.categories, c.numeric)
            for n, c in self.columns.items()
        }
        kept = None if self.kept is None else self.kept.iloc[rows].reset_index(drop=True)
        return EncodedTable(self.schema, cols, dict(self.hierarchies), kept, self.dropped_columns, self.source)

    def with_codes(self, name: str, codes: np.ndarray) -> "EncodedTable":
        """A copy whose column ``name`` holds ``codes`` (same decode map, schema, hierarchies)."""
        col = self.columns[name]
        cols = dict(self.columns)
        cols[name] = EncodedColumn(col.name, col.kind, np.asarray(codes, dtype=np.int32), col.categories,
                                   col.numeric)
        return EncodedTable(self.schema, cols, dict(self.hierarchies), self.kept, self.dropped_columns, self.source)

    def decode(self, name: str, codes: np.ndarray | None = None) -> np.ndarray:
        col = self.columns[name]
        return col.categories[col.codes if codes is None else codes]

    def to_frame(self) -> pd.DataFrame:
        """The table decoded back to values (QIs, SA, kept columns), index 0..n-1."""
        data = {n: self.decode(n) for n in [*self.qi_names, self.sa_name]}
        df = pd.DataFrame(data)
        if self.kept is not None:
            for c in self.kept.columns:
                df[c] = self.kept[c].to_numpy()
        return df

    # -- construction from arrays -------------------------------------------------------
    @classmethod
    def from_codes(
        cls,
        *,
        qi_codes: np.ndarray,
        sa_codes: np.ndarray,
        qi_names: list[str] | None = None,
        sa_name: str = "sa",
        qi_categories: list[np.ndarray] | None = None,
        sa_categories: np.ndarray | None = None,
        qi_kinds: list[str] | None = None,
        sensitive_sets: Mapping[str, Any] | None = None,
        hierarchies: Mapping[str, Any] | None = None,
    ) -> "EncodedTable":
        """Wrap ready-made integer codes (0..card-1 per column) without copying them."""
        qi_codes = np.asarray(qi_codes)
        n, d = qi_codes.shape
        qi_names = qi_names or [f"qi{j}" for j in range(d)]
        qi_kinds = qi_kinds or ["numeric"] * d
        sa_codes = np.asarray(sa_codes, dtype=np.int32)
        cols: dict[str, EncodedColumn] = {}
        for j, name in enumerate(qi_names):
            codes = np.ascontiguousarray(qi_codes[:, j], dtype=np.int32)
            cats = (
                np.asarray(qi_categories[j]) if qi_categories is not None
                else np.arange(int(codes.max(initial=-1)) + 1)
            )
            num = cats.astype(np.float64) if qi_kinds[j] == "numeric" and np.issubdtype(cats.dtype, np.number) else (
                np.arange(len(cats), dtype=np.float64) if qi_kinds[j] in ("numeric", "ordinal") else None
            )
            cols[name] = EncodedColumn(name, qi_kinds[j], codes, cats, num)
        sa_cats = sa_categories if sa_categories is not None else np.arange(int(sa_codes.max(initial=-1)) + 1)
        cols[sa_name] = EncodedColumn(sa_name, "categorical", sa_codes, np.asarray(sa_cats), None)
        schema = Schema.build(
            qi=[Column(n, k) for n, k in zip(qi_names, qi_kinds)],  # type: ignore[arg-type]
            sa=sa_name,
            sensitive_sets=sensitive_sets,
        )
        if n == 0:
            raise DataError("the table is empty (0 rows)")
        return cls(schema, cols, dict(hierarchies or {}))


def sa_counts(group: np.ndarray, sa: np.ndarray, n_groups: int, n_sa: int) -> np.ndarray:
    """Per-group SA counts by one ``bincount`` over ``group * n_sa + sa`` (rows with a
    negative group — suppressed — are skipped)."""
    group = np.asarray(group, dtype=np.int64)
    keep = group >= 0
    if not keep.all():
        group, sa = group[keep], sa[keep]
    flat = np.bincount(group * n_sa + sa, minlength=n_groups * n_sa)
    return flat.reshape(n_groups, n_sa)


def _key(v: Any) -> Any:
    """Comparable key for a category value (numbers compare as floats, text as stripped str)."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    return str(v).strip()


# ---------------------------------------------------------------------------------------
# Encoding a DataFrame
# ---------------------------------------------------------------------------------------
def encode(
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
    schema.check_columns(df.columns)
    for name in hierarchies:
        if name not in schema.qi_names and name != schema.sa.name:
            raise SchemaError(f"a hierarchy is given for column {name!r}, which is neither QI nor SA", column=name)
    if len(df) == 0:
        raise DataError(f"the table{' ' + source if source else ''} is empty (0 rows)", path=source)
    df = df.reset_index(drop=True)
    used = [*schema.qi_names, schema.sa.name]
    df = _handle_missing(df, schema, used)
    if len(df) == 0:
        raise DataError("the table is empty after dropping rows with missing values", path=source)

    cols: dict[str, EncodedColumn] = {}
    for col in (*schema.qi, schema.sa):
        cols[col.name] = _encode_column(df[col.name], col, hierarchies.get(col.name))
    kept = df[list(schema.keep)].copy() if schema.keep else None
    dropped = tuple(schema.undeclared(map(str, df.columns)))
    return EncodedTable(schema, cols, hierarchies, kept, dropped, source)


def _is_missing(s: pd.Series, tokens: tuple[str, ...]) -> np.ndarray:
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
        others = f" (and {len(bad) - 1} more columns)" if len(bad) > 1 else ""
        raise SchemaError(
            f"column {col!r} has {cnt} missing value(s){others}; use missing='drop' to drop "
            "those rows or missing='value' to treat missing as a value",
            column=col,
        )
    if schema.missing == "drop":
        any_missing = np.logical_or.reduce(list(masks.values()))
        return df.loc[~any_missing].reset_index(drop=True)
    # "value": missing becomes a category of its own (impossible in a numeric column)
    df = df.copy()
    for c in bad:
        if schema.column(c).kind == "numeric":
            raise SchemaError(
                f"column {c!r} is numeric and has {bad[c]} missing value(s): missing='value' "
                "needs a categorical column; use missing='drop'",
                column=c,
            )
        s = df[c].astype(object)
        s[masks[c]] = MISSING_LABEL
        df[c] = s
    return df


def _encode_column(s: pd.Series, col: Column, hierarchy: Any) -> EncodedColumn:
    if col.kind == "numeric":
        values = pd.to_numeric(s, errors="coerce")
        bad = values.isna().to_numpy() & ~s.isna().to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise SchemaError(
                f"non-numeric value {s.iloc[pos]!r} in numeric column {col.name!r} (row {pos}, "
                f"{int(bad.sum())} such value(s))",
                column=col.name,
            )
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
    index = pd.Index(categories)
    if not index.is_unique:
        raise HierarchyError(f"{what} of column {column!r} lists a value twice", column=column)
    codes = index.get_indexer(values)
    if (codes < 0).any():
        pos = np.flatnonzero(codes < 0)
        value = values[pos[0]]
        if isinstance(value, float) and value == int(value):
            value = int(value)
        err = HierarchyError if what == "its hierarchy" else SchemaError
        raise err(
            f"value {value!r} of column {column!r} is missing from {what} "
            f"({len(pos)} row(s) affected)",
            column=column,
            **({"value": value} if err is HierarchyError else {}),
        )
    return codes.astype(np.int32)
