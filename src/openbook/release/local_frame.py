"""The published table of a local recoding (Mondrian and its kin), built on codes.

:func:`openbook.release.release.build_release` publishes each group's generalized labels and
sorts the rows into the canonical order of :func:`~openbook.release.release.canonical_form`
(rows sorted by their published values, categories sorted). Done row by row, that is a
label string per row and QI, and a sort of the rows' string values. Every row of a group
shows the same labels, so here the labels are made and ranked once per *group*: each QI's
labels are numbered in text order, the groups' label tuples are ranked (the published
classes, in the order their values sort), and one radix sort of ``class × SA value`` gives
the canonical order — the same order, categories and bytes (the tests hold the two paths
together), a function of the published values alone. A text SA column is published, like
the QIs, as a categorical of the values its rows hold (:func:`sa_column`: one byte a row where
Arrow strings took ~20).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.table import EncodedColumn, EncodedTable


def local_frame(table: EncodedTable, group: np.ndarray, n_groups: int,
                rows: np.ndarray | None) -> tuple[pd.DataFrame, np.ndarray, int, np.ndarray] | None:
    """``(data, order, n_classes, class_ids)`` of the generalized release of ``table``'s rows
    ``rows`` (``None``: every row, in table order) in groups ``group`` (local recoding): the
    published frame already in canonical order, ``order[i]`` the position in ``rows`` of its
    row ``i`` (int32 below 2^31 rows), the number of published classes and each row's class
    (int64, numbered as :meth:`.Release.classes` numbers them: by the lexicographic order of
    the classes' labels). ``None`` when the table keeps other columns (their values join the
    sort: the row-by-row path of :func:`~openbook.release.release.canonical_form` orders them)."""
    from ..data.grouping import group_ids
    from .labels import group_labels
    from .release import stable_argsort

    n = table.n_rows if rows is None else rows.size
    if table.kept is not None or not table.qi_names or n == 0:
        return None
    used = np.flatnonzero(np.bincount(group, minlength=n_groups))
    small = np.int32 if used.size < 1 << 31 else np.int64  # half the bytes per row
    at = np.full(n_groups, -1, dtype=small)
    at[used] = np.arange(used.size, dtype=small)
    gpos = at[group]  # each row's group among the groups with published rows
    del at
    ranks, categories = [], []
    for name in table.qi_names:
        codes = table.columns[name].codes
        labels = group_labels(table, name, group, n_groups, codes if rows is None else codes[rows])[used]
        rank, uniq = pd.factorize(labels, sort=True)  # labels in text order (as the categories sort)
        ranks.append(rank.astype(_code_type(len(uniq))))
        categories.append(pd.Index(np.asarray(uniq, dtype=object).astype(str)))
    klass, n_classes = group_ids(ranks, sort=True)  # the groups' label tuples, ranked
    sa = table.columns[table.sa_name]
    sa_rank = pd.factorize(pd.Series(sa.categories), sort=True)[0].astype(np.int64)
    m = int(sa_rank.max(initial=0)) + 1
    sa_codes = sa.codes if rows is None else sa.codes[rows]
    wide = np.int32 if n_classes * m < 1 << 31 else np.int64
    key = klass.astype(wide)[gpos]  # (class, SA value) of each row, built in place
    key *= m
    key += sa_rank.astype(wide)[sa_codes]
    order = stable_argsort(key, n_classes * m)
    del key
    if n < 1 << 31:
        order = order.astype(np.int32)  # kept as the release's source rows: half the bytes
    gpos = gpos[order]
    out: dict[str, Any] = {name: pd.Categorical.from_codes(rank[gpos], categories=cats)
                           for name, rank, cats in zip(table.qi_names, ranks, categories)}
    out[table.sa_name] = sa_column(sa, sa_codes, order)
    return pd.DataFrame(out, copy=False), order, n_classes, klass.astype(np.int64)[gpos]


def _code_type(n: int) -> type:
    """The narrowest signed type of codes ``0..n-1`` (what a Categorical keeps)."""
    return np.int8 if n < 1 << 7 else np.int16 if n < 1 << 15 else np.int32 if n < 1 << 31 else np.int64


def sa_column(col: EncodedColumn, codes: np.ndarray, order: np.ndarray | None = None) -> Any:
    """The published SA column of rows whose SA codes are ``codes`` (taken in ``order`` when
    given): for text values, a categorical whose categories are the values present, in text
    order (what the canonical form sorts them to; a value only suppressed rows hold is no
    category, as no file may name it); other values (numbers) as they are."""
    cats = np.asarray(col.categories)
    if not (cats.dtype == object and cats.size and all(type(v) is str for v in cats)):
        return cats[codes if order is None else codes[order]]
    present = np.zeros(cats.size, dtype=bool)
    present[codes] = True
    values = cats[present]
    by_text = np.argsort(values.astype(str), kind="stable")
    new: np.ndarray = np.full(cats.size, -1, dtype=_code_type(values.size))
    new[np.flatnonzero(present)[by_text]] = np.arange(values.size)
    row_codes = new[codes]  # one byte a row, then ordered: never the int32 codes reordered
    return pd.Categorical.from_codes(row_codes if order is None else row_codes[order],
                                     categories=pd.Index(values[by_text].astype(str)))
