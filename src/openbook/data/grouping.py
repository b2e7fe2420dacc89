"""Grouping rows by equal code tuples, in O(n) hashing rather than Python loops.

Codes are combined into one ``int64`` key per row, and the keys are numbered densely. The
numbering is defined, not an accident of the method: with ``sort=True`` ids follow the
lexicographic order of the tuples, else their order of first appearance. Three methods give
that same numbering: pandas' hash factorization when pandas is already loaded (it never is
loaded for this, so a short command such as ``openbook check`` starts without it), a lookup
table when the keys span a range not much larger than the rows, Arrow's hash table when
pyarrow is loaded (a file read through Arrow), and a sort otherwise.
"""

from __future__ import annotations

import sys

import numpy as np

#: keys spanning at most this many times the rows (plus a constant) use a lookup table
_DENSE_FACTOR = 4
_DENSE_SLACK = 1 << 16


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
            codes, m = factorize(key, sort=sort, upper=radix)
            key, radix = codes, m
        key = key * card + col
        radix *= card
    return factorize(key, sort=sort, upper=radix)


def factorize(key: np.ndarray, *, sort: bool = False, upper: int | None = None) -> tuple[np.ndarray, int]:
    """Dense ids of non-negative int64 ``key`` values (sorted or first-appearance order, as
    :func:`group_ids`) and their number. ``upper`` bounds the keys (exclusive) when known."""
    key = np.asarray(key, dtype=np.int64)
    n = key.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if "pandas" in sys.modules:
        pd = sys.modules["pandas"]
        codes, uniq = pd.factorize(key, sort=sort)
        return codes.astype(np.int64, copy=False), len(uniq)
    if upper is None:
        upper = int(key.max()) + 1
    if upper <= _DENSE_FACTOR * n + _DENSE_SLACK:
        return _factorize_dense(key, upper, sort)
    if "pyarrow" in sys.modules:
        return _factorize_hashing(key, sort)
    return _factorize_sorting(key, sort)


def _factorize_hashing(key: np.ndarray, sort: bool) -> tuple[np.ndarray, int]:
    """Arrow's hash table (``dictionary_encode``: ids in order of first appearance), then the
    few distinct keys sorted: O(n + m log m), where a sort of the rows is O(n log n) — what
    keeps ``check`` linear in the rows when pandas is not loaded but Arrow read the file."""
    import pyarrow as pa

    from .arrow_kernels import dictionary_encode

    key = np.ascontiguousarray(key, dtype=np.int64)
    # from buffers: pa.array() would import pandas to inspect its argument
    enc = dictionary_encode(pa.Array.from_buffers(pa.int64(), key.size, [None, pa.py_buffer(key)]))
    idx, dic = enc.indices, enc.dictionary
    ids = np.frombuffer(idx.buffers()[1], dtype=np.dtype(idx.type.to_pandas_dtype()),
                        count=idx.offset + len(idx))[idx.offset:].astype(np.int64)
    uniq = np.frombuffer(dic.buffers()[1], dtype=np.int64, count=dic.offset + len(dic))[dic.offset:]
    m = int(uniq.size)
    if not sort:
        return ids, m
    rank = np.empty(m, dtype=np.int64)
    rank[np.argsort(uniq, kind="stable")] = np.arange(m, dtype=np.int64)
    return rank[ids], m


def _factorize_dense(key: np.ndarray, upper: int, sort: bool) -> tuple[np.ndarray, int]:
    """A lookup table over ``0..upper-1``: O(n + upper)."""
    present = np.zeros(upper, dtype=bool)
    present[key] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    ids = rank[key]
    m = int(rank[-1]) + 1
    if sort:
        return ids, m
    return _first_appearance(ids, m), m


def _factorize_sorting(key: np.ndarray, sort: bool) -> tuple[np.ndarray, int]:
    uniq, ids = np.unique(key, return_inverse=True)
    ids = ids.reshape(-1).astype(np.int64, copy=False)
    m = int(uniq.size)
    if sort:
        return ids, m
    return _first_appearance(ids, m), m


def _first_appearance(sorted_ids: np.ndarray, m: int) -> np.ndarray:
    """Renumber ids ``0..m-1`` by the row where each first appears."""
    first = np.full(m, sorted_ids.size, dtype=np.int64)
    np.minimum.at(first, sorted_ids, np.arange(sorted_ids.size, dtype=np.int64))
    rank = np.empty(m, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(m, dtype=np.int64)
    return rank[sorted_ids]
