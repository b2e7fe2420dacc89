"""The grammar of published QI values, one place for every reader of a release.

A generalized release publishes, per QI, one of (``release._generalized_column``):

* the exact value (a class whose members share it);
* a node of the column's hierarchy (the members' lowest common ancestor; ``*`` = the root);
* ``[lo-hi]`` — the members' range, for a numeric column without a declared hierarchy
  (inclusive; ``[lo-hi)`` half-open ranges from other tools are read too).

:func:`label_masks` turns published labels into the ground codes each one stands for;
:func:`codes_of` maps exact published values (a bucketized QI-table) to codes;
:func:`group_labels` makes the labels local recoding publishes, one per group.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..data.table import CHUNK_ROWS, EncodedTable
from ..errors import HierarchyError

#: ``[lo-hi]`` / ``[lo-hi)`` with signed decimal or scientific bounds
RANGE = re.compile(r"^\[\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*-\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*([\])])$")
TOP = "*"


def uses_ranges(table: EncodedTable, name: str) -> bool:
    """Local recoding publishes a numeric column without a declared hierarchy as ranges."""
    return table.columns[name].kind == "numeric" and name not in table.hierarchies


def label_masks(table: EncodedTable, name: str, labels: Any) -> np.ndarray:
    """``(n_labels, n_codes)`` bool: the ground values each published label of QI ``name``
    stands for. An unknown label is a :class:`HierarchyError` naming it."""
    labels = np.asarray(labels, dtype=object)
    col = table.columns[name]
    out = np.zeros((labels.size, col.n_values), dtype=bool)
    h = None if uses_ranges(table, name) else table.hierarchy(name)
    num = col.numeric
    for i, lab in enumerate(labels):
        lab = str(lab).strip()
        if h is not None:
            try:
                out[i] = h.leaf_mask(int(h.nodes_of([lab])[0]))
                continue
            except HierarchyError:
                if num is None:
                    raise HierarchyError(f"published value {lab!r} of column {name!r} is not in its hierarchy",
                                         column=name, value=lab) from None
        if lab == TOP:
            out[i] = True
            continue
        m = RANGE.match(lab)
        try:
            lo, hi = (float(m.group(1)), float(m.group(2))) if m else (float(lab), float(lab))
        except ValueError:
            raise HierarchyError(f"published value {lab!r} of column {name!r} is neither a node of its "
                                 "hierarchy nor a numeric range", column=name, value=lab) from None
        if num is None:
            raise HierarchyError(f"published value {lab!r} of column {name!r} is not in its hierarchy",
                                 column=name, value=lab)
        out[i] = (num >= lo) & ((num < hi) if m is not None and m.group(3) == ")" else (num <= hi))
    return out


def codes_of(table: EncodedTable, name: str, values: Any) -> np.ndarray:
    """Codes of exact published values of QI ``name`` (a bucketized QI-table); a value the
    table lacks is a :class:`HierarchyError` naming it."""
    values = pd.Series(values)
    col = table.columns[name]
    if col.kind == "numeric" and col.numeric is not None:
        idx = pd.Index(col.numeric).get_indexer(pd.to_numeric(values, errors="coerce").to_numpy(np.float64))
    else:
        idx = pd.Index([str(v).strip() for v in col.categories]).get_indexer(values.astype(str).str.strip())
    if (idx < 0).any():
        bad = values.iloc[int(np.flatnonzero(idx < 0)[0])]
        raise HierarchyError(f"value {bad!r} of column {name!r} does not occur in the original table",
                             column=name, value=bad)
    return idx.astype(np.int64)


def group_labels(table: EncodedTable, name: str, group: np.ndarray, n_groups: int,
                 codes: np.ndarray | None = None) -> np.ndarray:
    """The label local recoding publishes for QI ``name`` of each group (``group``: the group
    of each row whose codes are ``codes``, default the column's; every group non-empty): the
    members' range ``[lo-hi]`` (or the value) for a numeric column without a declared
    hierarchy, else the label of the members' lowest common ancestor in the hierarchy
    (the grammar above). An ``(n_groups,)`` object array of ``str``."""
    col = table.columns[name]
    codes = col.codes if codes is None else codes
    if col.kind == "numeric" and name not in table.hierarchies:
        lo = np.full(n_groups, np.iinfo(np.int64).max)
        hi = np.full(n_groups, -1, dtype=np.int64)
        for s in range(0, len(codes), CHUNK_ROWS):  # a chunk's int64 copy, not the column's
            wide = codes[s:s + CHUNK_ROWS].astype(np.int64)  # one type: ufunc.at's fast path (16x)
            np.minimum.at(lo, group[s:s + CHUNK_ROWS], wide)
            np.maximum.at(hi, group[s:s + CHUNK_ROWS], wide)
        used = hi >= 0
        lo, hi = np.where(used, lo, 0), np.where(used, hi, 0)
        a = pd.Series(col.categories[lo]).astype(str)
        b = pd.Series(col.categories[hi]).astype(str)
        return np.where(lo == hi, a, "[" + a + "-" + b + "]").astype(object)
    h = table.hierarchy(name)
    nodes, at = np.unique(h.group_lca(codes, group, n_groups), return_inverse=True)  # each node's label once
    return np.asarray([str(x) for x in h.label_of(nodes)], dtype=object)[at.ravel()]
