"""Row orders over the quasi-identifiers, and the group-size floor a model implies.

GG, RGG and SG (paper 000 §2.3, §4.1, App. C.3) first *sort the data based on the
quasi-identifiers*, "chosen to make similar QIs adjacent in the ordering": "as simple as
choosing a prioritization of the attributes, and doing a lexicographic sort; or more
complex, such as some clustering". Three orders are offered, all vectorised and stable
(ties keep row order, so the same table always gives the same order):

``"lex"``      lexicographic by QI codes, attributes in the given priority (default: schema
               order). Codes are value order for numeric/ordinal columns and hierarchy leaf
               order for categorical ones.
``"zorder"``   Morton (Z-order) key over the QIs normalised to ``b = 63 // d`` bits each.
``"hilbert"``  Hilbert-curve index over the same normalised grid (Skilling 2004,
               "Programming the Hilbert curve"), vectorised over rows.

The ℓ a model promises and the smallest group it allows are derived in one place,
:mod:`openbook.models.promise` (``promised_l_int``, ``size_floor``; re-exported here as
``model_l`` and ``size_floor`` for the algorithms that size groups by them: GG's bucket size,
paper 000 §4.1; Mondrian skips nodes smaller than twice the floor, which changes no decision).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..data.table import EncodedTable
from ..models.promise import (
    promised_l_int as model_l,  # noqa: F401 - re-exported
    size_floor,  # noqa: F401 - re-exported
)
from ..params import check_choice, fail

ORDERS = ("lex", "zorder", "hilbert")


def _priority_index(table: EncodedTable, priority: Sequence[str] | None) -> list[int]:
    names = table.qi_names
    if priority is None:
        return list(range(len(names)))
    if isinstance(priority, str):
        priority = [p.strip() for p in priority.split(",") if p.strip()]
    idx = []
    for p in priority:
        if p not in names:
            raise fail("", "priority", p, f"name a QI column (QIs: {', '.join(names)})")
        idx.append(names.index(p))
    if len(set(idx)) != len(idx):
        raise fail("", "priority", list(priority), "name each QI column at most once")
    # columns not named keep schema order after the named ones
    idx += [j for j in range(len(names)) if j not in idx]
    if not idx:
        raise fail("", "the group order", [], "name at least one QI column (the table has none)")
    return idx


def normalised_grid(table: EncodedTable, bits: int, cols: Sequence[int]) -> np.ndarray:
    """``(n, len(cols))`` uint64 QI coordinates scaled to ``0 .. 2**bits - 1``: numeric
    columns by value, the others by code rank."""
    n = table.n_rows
    out = np.empty((n, len(cols)), dtype=np.uint64)
    top = (1 << bits) - 1
    for c, j in enumerate(cols):
        name = table.qi_names[j]
        col = table.columns[name]
        if col.numeric is not None and col.kind == "numeric":
            vals = np.asarray(col.numeric, dtype=np.float64)
        else:
            vals = np.arange(col.n_values, dtype=np.float64)
        lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 0.0)
        scale = top / (hi - lo) if hi > lo else 0.0
        per_code = np.floor((vals - lo) * scale).astype(np.uint64)
        out[:, c] = per_code[col.codes]
    return out


def _interleave(coords: np.ndarray, bits: int) -> np.ndarray:
    """Morton key: bit ``b`` of coordinate ``c`` goes to bit ``b*d + (d-1-c)``."""
    n, d = coords.shape
    key = np.zeros(n, dtype=np.uint64)
    for b in range(bits - 1, -1, -1):
        for c in range(d):
            key = (key << np.uint64(1)) | ((coords[:, c] >> np.uint64(b)) & np.uint64(1))
    return key


def _hilbert_transpose(coords: np.ndarray, bits: int) -> np.ndarray:
    """Skilling's AxesToTranspose, vectorised over rows (operates on a copy)."""
    x = coords.copy()
    n, d = x.shape
    one = np.uint64(1)
    m = one << np.uint64(bits - 1)
    # inverse undo
    q = m
    while q > one:
        p = q - one
        for i in range(d):
            hit = (x[:, i] & q) != 0
            # if bit set: invert low bits of x[0]; else exchange low bits of x[0] and x[i]
            x[hit, 0] ^= p
            nh = ~hit
            t = (x[nh, 0] ^ x[nh, i]) & p
            x[nh, 0] ^= t
            x[nh, i] ^= t
        q >>= one
    # Gray encode
    for i in range(1, d):
        x[:, i] ^= x[:, i - 1]
    t = np.zeros(n, dtype=np.uint64)
    q = m
    while q > one:
        hit = (x[:, d - 1] & q) != 0
        t[hit] ^= q - one
        q >>= one
    for i in range(d):
        x[:, i] ^= t
    return x


def qi_order(table: EncodedTable, method: str = "lex", priority: Sequence[str] | None = None) -> np.ndarray:
    """Row positions of ``table`` in the chosen QI order (int64, a permutation of 0..n-1).

    ``priority`` lists QI names, most significant first (lexicographic order; for the
    space-filling curves it selects and orders the coordinates the same way).
    """
    check_choice("order", method, ORDERS, model="")
    idx = _priority_index(table, priority)
    if method == "lex":
        keys = [table.columns[table.qi_names[j]].codes for j in reversed(idx)]
        return np.lexsort(keys).astype(np.int64)
    d = len(idx)
    bits = max(1, min(21, 63 // d))
    coords = normalised_grid(table, bits, idx)
    if method == "zorder":
        key = _interleave(coords, bits)
    else:
        key = _interleave(_hilbert_transpose(coords, bits), bits)
    return np.argsort(key, kind="stable").astype(np.int64)


def sensitive_set_name(name: str | None, model, algorithm: str) -> str:
    """The sensitive value set an algorithm protects: the one given explicitly, else the
    model's ``set=``; a ParameterError naming the algorithm when there is neither."""
    name = name if name is not None else getattr(model, "sensitive_set", None)
    if name is None:
        raise fail(algorithm, "sensitive_set", None, "name a sensitive value set (or the model its set=)")
    return name
