"""``EncodedTable``: every used column encoded once to integer codes with a decode map.

Rows are referenced by **position** only (0..n-1), never by a DataFrame index label, so a
reindexed or shuffled frame cannot change a result (pyCANON's wrong-ℓ bug on a non-default
index cannot happen here). Numeric and ordinal columns are coded in value order, so code
order is value order; a column with a hierarchy is coded in the hierarchy's leaf order
(its leaves *are* the code space), so hierarchy operations work on codes directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..errors import DataError, SchemaError
from ..models.base import SADomain
from .schema import Column, Schema

if TYPE_CHECKING:
    import pandas as pd

MISSING_LABEL = "<missing>"


@dataclass(frozen=True, eq=False)
class EncodedColumn:
    """Codes of one column and how to decode them.

    ``codes`` (one per row, ``0 .. n_values-1``) are held in the narrowest signed type of
    :func:`code_dtype` — int8 for a domain of at most 127 values, int16 up to 32,767, else
    int32 — so a 10^7-row table of small domains holds 1 byte a row per column, not 4.
    Codes given in another type are narrowed on construction when they all lie in the
    domain (codes outside it, which only a caller's error makes, are kept as given so the
    error is seen, never wrapped). A narrow type leaves headroom for ``code + 1`` but not
    for products: arithmetic on codes (``key * card + codes``) is done in int64 by the
    reader (:func:`openbook.data.grouping.group_ids`, :func:`sa_counts`, ...), never in the
    codes' own type."""

    name: str
    kind: str
    codes: np.ndarray  # narrow signed integers (code_dtype), one per row
    categories: np.ndarray  # decoded value of each code
    numeric: np.ndarray | None = None  # float64 value of each code (numeric / ordinal rank)

    def __post_init__(self) -> None:
        object.__setattr__(self, "codes", narrow_codes(self.codes, len(self.categories)))

    @property
    def n_values(self) -> int:
        return len(self.categories)


def code_dtype(n_values: int) -> np.dtype:
    """The type of a column's codes: the narrowest signed integer holding ``0 .. n_values``
    (one more than the largest code, so ``code + 1`` never wraps)."""
    n = int(n_values)
    return np.dtype(np.int8 if n <= 127 else np.int16 if n <= 32767 else np.int32)


def narrow_codes(codes: Any, n_values: int) -> np.ndarray:
    """``codes`` in :func:`code_dtype` of ``n_values`` when every code lies in
    ``0 .. n_values-1`` (checked by one min/max pass, never assumed); otherwise as given
    (an integer array), so a wrong code is reported by its reader rather than wrapped."""
    arr = np.asarray(codes)
    if arr.dtype.kind not in "iu":
        if arr.size:
            return arr
        arr = arr.astype(np.int32)
    target = code_dtype(n_values)
    if arr.dtype == target:
        return arr
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= int(n_values)):
        return arr
    return arr.astype(target)


class SchemaView:
    """What a table and its frequency table share: the schema's column names, each column's
    number of values, and the hierarchy of a column (the declared one, or an automatic one
    built on first use). Needs ``schema``, ``columns`` and ``hierarchies``."""

    schema: Schema
    columns: dict[str, EncodedColumn]
    hierarchies: dict[str, Any]

    @property
    def qi_names(self) -> list[str]:
        return self.schema.qi_names

    @property
    def sa_name(self) -> str:
        return self.schema.sa.name

    @property
    def qi_cardinalities(self) -> np.ndarray:
        return np.array([self.columns[n].n_values for n in self.qi_names], dtype=np.int64)

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


@dataclass(eq=False)
class EncodedTable(SchemaView):
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

    @cached_property
    def qi_codes(self) -> np.ndarray:
        """``(n_rows, n_qi)`` int32 matrix of QI codes, columns in schema order."""
        return np.column_stack([self.columns[n].codes for n in self.qi_names]).astype(np.int32, copy=False)

    @property
    def sa_codes(self) -> np.ndarray:
        return self.columns[self.sa_name].codes

    # -- the SA -------------------------------------------------------------------------
    @cached_property
    def sa_domain(self) -> SADomain:
        """What privacy models know of the SA: values, table distribution, sets, numbers."""
        col = self.columns[self.sa_name]
        counts = np.bincount(col.codes, minlength=col.n_values)  # no int64 copy of the codes
        return sa_domain_of(col, self.schema, self.hierarchies.get(self.sa_name), counts)

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
        cols[name] = EncodedColumn(col.name, col.kind, np.asarray(codes), col.categories, col.numeric)
        return EncodedTable(self.schema, cols, dict(self.hierarchies), self.kept, self.dropped_columns, self.source)

    def decode(self, name: str, codes: np.ndarray | None = None) -> np.ndarray:
        col = self.columns[name]
        return col.categories[col.codes if codes is None else codes]

    def to_frame(self) -> pd.DataFrame:
        """The table decoded back to values (QIs, SA, kept columns), index 0..n-1."""
        import pandas as pd

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


#: rows per pass of the counting loops: a pass's int64 keys are a few MB at any table size
#: (``hierarchy.lca`` has its own: importing it here would load the hierarchy package at start)
CHUNK_ROWS = 1 << 20


def sa_counts(group: np.ndarray, sa: np.ndarray, n_groups: int, n_sa: int) -> np.ndarray:
    """Per-group SA counts by ``bincount`` over ``group * n_sa + sa`` (rows with a negative
    group — suppressed — are skipped), a chunk of rows at a time: the int64 keys of a chunk,
    never of the whole table (8 bytes a row at 10^7 rows would be the release's largest
    temporary)."""
    size = int(n_groups) * int(n_sa)
    flat = np.zeros(size, dtype=np.int64)
    step = max(CHUNK_ROWS, size)  # a pass never costs more than the counts it adds to
    for s in range(0, len(group), step):
        g = np.asarray(group[s:s + step]).astype(np.int64)  # a copy: the keys are built in place
        v = sa[s:s + step]
        keep = g >= 0
        if not keep.all():
            g, v = g[keep], v[keep]
        g *= n_sa
        g += v
        flat += np.bincount(g, minlength=size)
    return flat.reshape(n_groups, n_sa)


def sa_domain_of(col: EncodedColumn, schema: Schema, hierarchy: Any, counts: np.ndarray) -> SADomain:
    """The SA's domain from its column's decode map and its count per code (the sensitive
    sets resolved to masks over codes; a listed value that does not occur is an error)."""
    sets: dict[str, np.ndarray] = {}
    lookup = {_key(v): i for i, v in enumerate(col.categories)}
    for set_name, vals in schema.sensitive_sets.items():
        mask = np.zeros(col.n_values, dtype=bool)
        for v in vals:
            i = lookup.get(_key(v))
            if i is None:
                raise SchemaError(
                    f"sensitive value {v!r} of set {set_name!r} does not occur in column {col.name!r}",
                    column=col.name,
                )
            mask[i] = True
        sets[set_name] = mask
    return SADomain(values=np.asarray(col.categories), global_counts=np.asarray(counts, dtype=np.int64),
                    numeric=col.numeric, hierarchy=hierarchy, sensitive_sets=sets)


def encode(
    data: Any,
    schema: Schema,
    hierarchies: Mapping[str, Any] | None = None,
    *,
    source: str | None = None,
    batch_rows: int | None = None,
) -> EncodedTable:
    """Encode a table under a schema: every QI and the SA to ``int32`` codes.

    ``data`` is a pandas DataFrame (:func:`openbook.data.frame_encoding.encode_frame`), a
    ``pyarrow.Table``, or a file source from :func:`openbook.data.loaders.read_source`
    (read in record batches of ``batch_rows`` rows: memory for the codes plus one batch). The
    result is the same whichever form the same table comes in: the same codes, decode maps,
    row order, missing-value handling and errors (the DataFrame path is the reference). The
    frame's index is ignored: rows are positions.

    Raises ``SchemaError`` (unknown column, non-numeric value in a numeric QI, missing
    values under ``missing="error"``), ``HierarchyError`` (a value missing from its
    column's hierarchy), ``DataError`` (empty table).
    """
    if _is_frame(data):
        from .frame_encoding import encode_frame

        return encode_frame(data, schema, hierarchies, source=source)
    from .batch_encoding import encode_source

    return encode_source(data, schema, hierarchies, source=source, batch_rows=batch_rows)


def _is_frame(data: Any) -> bool:
    """A pandas DataFrame (checked without importing pandas)."""
    return any(c.__module__.startswith("pandas") and c.__name__ == "DataFrame" for c in type(data).__mro__)


def _key(v: Any) -> Any:
    """Comparable key for a category value (numbers compare as floats, text as stripped str)."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    return str(v).strip()


