"""TEMPORARY stand-in for task A's alignment module (replaced at merge)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError


@dataclass
class Alignment:
    group: np.ndarray
    row: np.ndarray
    n_ambiguous: int = 0
    exact: bool = True


def _rows_within_class(group: np.ndarray, cls: np.ndarray) -> np.ndarray:
    row = np.full(group.size, -1, dtype=np.int64)
    people = np.flatnonzero(group >= 0)
    order_p = people[np.argsort(group[people], kind="stable")]
    order_r = np.argsort(cls, kind="stable")
    row[order_p] = order_r[: order_p.size]
    return row


def align(release, table, *, partition=None) -> Alignment:
    cls, _ = release.classes()
    n = table.n_rows
    if partition is None and getattr(release, "partition", None) is not None and release.partition.n_rows == n:
        partition = release.partition
    if partition is not None:
        g = np.full(n, -1, dtype=np.int64)
        g[partition.group >= 0] = cls
        return Alignment(g, _rows_within_class(g, cls))
    if release.n_published == n:
        return Alignment(np.asarray(cls, dtype=np.int64), np.arange(n))
    levels = release.meta.get("levels")
    if levels is not None and release.kind == "generalized":
        labels = []
        for name, lv in zip(release.qi, levels):
            h = table.hierarchy(name)
            labels.append(np.asarray([str(x) for x in h.label_of(h.generalize(table.columns[name].codes, int(lv)))],
                                     dtype=object))
        keys = pd.MultiIndex.from_arrays(labels)
        pub = pd.MultiIndex.from_frame(release.data[release.qi].astype(str))
        pk = pd.Index(pub.to_flat_index())
        first = ~pk.duplicated()
        g = np.full(n, -1, dtype=np.int64)
        idx = pk[first].get_indexer(keys.to_flat_index())
        ok = idx >= 0
        g[ok] = cls[first][idx[ok]]
        return Alignment(g, _rows_within_class(g, cls))
    raise ParameterError("cannot align the release with the original table", parameter="original")
