"""Grouping rows by equal code tuples, in O(n) hashing rather than Python loops."""

from __future__ import annotations

import numpy as np
import pandas as pd


def group_ids(columns: list[np.ndarray] | np.ndarray, *, sort: bool = False) -> tuple[np.ndarray, int]:
    """Dense id (0..G-1) of each row's tuple of codes, and G.

    Codes are combined by mixed radix into one int64 key when the product of the
    cardinalities fits, else tuples are factorized pairwise. With ``sort=True`` ids follow
    lexicographic order of the tuples, else order of first appearance.
    """
    if isinstance(columns, np.ndarray):
        columns = [columns[:, j] for j in range(columns.shape[1])] if columns.ndim == 2 else [columns]
    if not columns:
        raise ValueError("group_ids needs at least one column")
    n = len(columns[0])
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for col in columns:
        col = np.asarray(col, dtype=np.int64)
        card = int(col.max(initial=-1)) + 1
        if card <= 0:
            card = 1
        if radix * card >= 2**62:  # compress what we have so far, then continue
            codes, uniq = pd.factorize(key, sort=sort)
            key, radix = codes.astype(np.int64), len(uniq)
        key = key * card + col
        radix *= card
    codes, uniq = pd.factorize(key, sort=sort)
    return codes.astype(np.int64), len(uniq)
