"""The frequency table: a table's distinct QI tuples (its equivalence classes) with the count
of every SA value in each — all that the privacy models' levels and the prosecutor risk need
(paper 000 §2: a QI-group is judged by its SA distribution only).

:func:`frequency_table` builds it from a file read in Arrow record batches, in memory bounded
by the number of distinct (QI, SA) tuples rather than rows: each batch's rows get provisional
codes (:class:`~openbook.data.batch_encoding.ColumnDictionary`), its distinct tuples are
counted, and the counts are merged into the running table, batch after batch. At the end the
same :class:`~openbook.data.batch_encoding.Finalizer` that encodes a whole table decides what
pandas would (numbers in CSV text, missing values, sorted categories, hierarchy look-ups),
over the weighted distinct tuples; only an error message's row position needs a second pass
over the file. So the frequency table of a file equals :meth:`FrequencyTable.from_table` of
the same file encoded whole — the same codes and decode maps, the same classes and counts —
and the levels computed from it are the in-memory levels, exactly.

A full-domain search can generalize ``qi_codes`` (each class at once, weighted by
``weights``) instead of every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator, Mapping

import numpy as np

from ..errors import DataError
from ..models.base import SADomain
from .arrow import DEFAULT_BATCH_ROWS, NeedsPandas
from .batch_encoding import ColumnDictionary, Finalizer, as_source, pandas_frame
from .frame_encoding import check_declared, empty_after_drop_error, empty_error
from .grouping import group_ids
from .schema import Schema
from .table import EncodedColumn, EncodedTable, SchemaView, sa_domain_of

#: dense class × SA-value count matrices above this many cells are refused (int64 cells)
MAX_COUNT_CELLS = 1 << 31


@dataclass(eq=False)
class FrequencyTable(SchemaView):
    """A table's equivalence classes on the QIs and the SA counts of each.

    Attributes
    ----------
    schema, hierarchies, source, dropped_columns:
        As in :class:`~openbook.data.table.EncodedTable`.
    columns:
        The decode map of every QI and the SA (:class:`~openbook.data.table.EncodedColumn`
        with no row codes): code ``c`` of column ``q`` means ``columns[q].categories[c]``.
    qi_codes:
        ``(n_classes, n_qi)`` int32: the distinct QI code tuples, in lexicographic order.
    sa_counts:
        ``(n_classes, n_sa)`` int64: how many rows of each class have each SA code.
    """

    schema: Schema
    columns: dict[str, EncodedColumn]
    qi_codes: np.ndarray
    sa_counts: np.ndarray
    hierarchies: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    dropped_columns: tuple[str, ...] = ()

    @property
    def weights(self) -> np.ndarray:
        """Rows per class (int64): the class sizes."""
        return self.sa_counts.sum(axis=1)

    @property
    def n_classes(self) -> int:
        return int(self.qi_codes.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.sa_counts.sum())

    @cached_property
    def sa_domain(self) -> SADomain:
        """The SA's domain (as :attr:`EncodedTable.sa_domain`; the counts are the column sums)."""
        col = self.columns[self.sa_name]
        return sa_domain_of(col, self.schema, self.hierarchies.get(self.sa_name), self.sa_counts.sum(axis=0))

    @classmethod
    def from_table(cls, table: EncodedTable) -> "FrequencyTable":
        """The frequency table of an encoded table (classes in lexicographic order)."""
        columns = [table.columns[q].codes for q in table.qi_names]  # (no row matrix of the QIs)
        cls_id, n = group_ids(columns, sort=True)
        first = np.empty(n, dtype=np.int64)
        first[cls_id] = np.arange(table.n_rows, dtype=np.int64)  # any row of a class: all alike
        qi = np.empty((n, len(columns)), dtype=np.int32)
        for j, c in enumerate(columns):
            qi[:, j] = c[first]
        counts = table.group_sa_counts(cls_id, n).astype(np.int64)
        cols = {k: _meta(c) for k, c in table.columns.items()}
        return cls(table.schema, cols, qi, counts, dict(table.hierarchies), table.source, table.dropped_columns)


def _meta(col: EncodedColumn) -> EncodedColumn:
    return EncodedColumn(col.name, col.kind, np.zeros(0, dtype=np.int32), col.categories, col.numeric)


class _TupleCounts:
    """Distinct rows of provisional codes with their counts, merged batch by batch; pending
    parts are merged once they hold as many tuples as the merged table (amortized doubling)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows = np.zeros((0, width), dtype=np.int32)
        self.counts = np.zeros(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    def add(self, rows: np.ndarray, counts: np.ndarray | None = None) -> None:
        rows, counts = _distinct(rows, counts)
        self._pending.append((rows, counts))
        self._pending_size += len(rows)
        if self._pending_size >= max(len(self.rows), 1 << 16):
            self._merge()

    def _merge(self) -> None:
        if self._pending:
            rows = np.concatenate([self.rows, *[r for r, _ in self._pending]])
            counts = np.concatenate([self.counts, *[c for _, c in self._pending]])
            self._pending, self._pending_size = [], 0
            self.rows, self.counts = _distinct(rows, counts)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self._merge()
        return self.rows, self.counts


def _distinct(rows: np.ndarray, counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an int32 matrix (codes >= -1) and their summed counts."""
    n = len(rows)
    if n == 0:
        return rows.reshape(0, rows.shape[1]), np.zeros(0, dtype=np.int64)
    ids, m = group_ids(rows + 1)  # codes >= 0 (int32: one column at a time becomes int64 inside)
    rep = np.empty(m, dtype=np.int64)
    rep[ids] = np.arange(n, dtype=np.int64)  # any row of a group: the rows are equal
    if counts is None:
        total = np.bincount(ids, minlength=m).astype(np.int64)
    else:
        total = np.zeros(m, dtype=np.int64)
        np.add.at(total, ids, counts)
    return rows[rep], total


def frequency_table(data: Any, schema: Schema, hierarchies: Mapping[str, Any] | None = None, *,
                    source: str | None = None, batch_rows: int | None = None,
                    fallback: bool = True) -> FrequencyTable:
    """The frequency table of a table — a file source from
    :func:`~openbook.data.loaders.read_source`, a ``pyarrow.Table``, or a DataFrame — read in
    batches of ``batch_rows`` rows (module docstring). A file only pandas reads as openbook
    does is encoded whole through pandas when ``fallback`` (else
    :class:`~openbook.data.arrow.NeedsPandas` is raised). The same errors as
    :func:`~openbook.data.table.encode`."""
    hier = dict(hierarchies or {})
    if hasattr(data, "iloc"):  # a DataFrame is in memory already
        from .frame_encoding import encode_frame

        return FrequencyTable.from_table(encode_frame(data, schema, hier, source=source))
    src = as_source(data)
    try:
        return _build(src, schema, hier, source, int(batch_rows or DEFAULT_BATCH_ROWS))
    except NeedsPandas:
        if not fallback:
            raise
        from .frame_encoding import encode_frame

        return FrequencyTable.from_table(encode_frame(pandas_frame(src), schema, hier, source=source))


def _build(src: Any, schema: Schema, hier: dict[str, Any], source: str | None, batch_rows: int) -> FrequencyTable:
    names = src.column_names
    used = [*schema.qi_names, schema.sa.name]
    present = set(names)
    read = [c for c in used if c in present]
    kinds = src.kinds(read)
    dicts = {c: ColumnDictionary(c, kinds[c]) for c in read}
    tuples = _TupleCounts(len(read))
    for batch in src.batches(read, batch_rows, dictionary=[c for c in read if kinds[c] == "string"]):
        if batch.num_rows:
            rows = np.empty((batch.num_rows, len(read)), dtype=np.int32)
            for j, c in enumerate(read):
                rows[:, j] = dicts[c].add(batch.column(c))
            del batch
            tuples.add(rows)
    check_declared(names, schema, hier)
    rows, weights = tuples.result()
    if int(weights.sum()) == 0:
        raise empty_error(source)
    codes = {c: rows[:, j] for j, c in enumerate(read)}
    fin = Finalizer(schema, hier, dicts, source=source, csv_text=src.is_csv_text)
    keep = fin.missing(codes, weights)
    if keep is not None:
        codes = {c: a[keep] for c, a in codes.items()}
        weights = weights[keep]
        if not keep.any():
            raise empty_after_drop_error(source)

    def locate(name: str, bad: np.ndarray) -> tuple[int, int]:
        return _locate(src, read, dicts, fin, keep is not None, name, bad, batch_rows)

    cols: dict[str, EncodedColumn] = {}
    final: dict[str, np.ndarray] = {}
    for col in (*schema.qi, schema.sa):
        meta, lut = fin.column(col, codes[col.name], weights, locate)
        cols[col.name] = meta
        final[col.name] = lut[codes[col.name] + 1]
    qi = [final[c] for c in schema.qi_names]
    cls_id, n = group_ids(qi, sort=True)
    n_sa = cols[schema.sa.name].n_values
    if n * n_sa > MAX_COUNT_CELLS:
        raise DataError(f"{n:,} classes × {n_sa:,} SA values are too many for a count matrix", path=source)
    counts = np.zeros(n * n_sa, dtype=np.int64)
    np.add.at(counts, cls_id * n_sa + final[schema.sa.name], weights)
    first = np.empty(n, dtype=np.int64)
    first[cls_id] = np.arange(len(cls_id), dtype=np.int64)
    qi_codes = np.column_stack(qi)[first].astype(np.int32) if n else np.zeros((0, len(qi)), np.int32)
    return FrequencyTable(schema, cols, np.ascontiguousarray(qi_codes), counts.reshape(n, n_sa), hier, source,
                          tuple(schema.undeclared(names)))


def _locate(src: Any, read: list[str], dicts: Mapping[str, ColumnDictionary], fin: Finalizer, dropping: bool,
            name: str, bad: np.ndarray, batch_rows: int) -> tuple[int, int]:
    """A second pass for an error message: the position among the kept rows of the first row
    whose provisional code in ``name`` is ``bad``, and that code."""
    at = 0
    for codes in _batch_codes(src, read, dicts, batch_rows):
        rows = np.ones(len(codes[name]), dtype=bool)
        if dropping:
            for c in read:
                rows &= ~fin.missing_luts[c][codes[c] + 1]
        kept = codes[name][rows]
        hit = np.flatnonzero(bad[kept + 1])
        if hit.size:
            return at + int(hit[0]), int(kept[hit[0]])
        at += int(rows.sum())
    raise AssertionError("a value found in the classes is in no row")  # pragma: no cover


def _batch_codes(src: Any, read: list[str], dicts: Mapping[str, ColumnDictionary],
                 batch_rows: int) -> Iterator[dict[str, np.ndarray]]:
    for batch in src.batches(read, batch_rows, dictionary=[c for c in read if dicts[c].kind == "string"]):
        yield {c: dicts[c].add(batch.column(c)) for c in read}
