"""Row orders over the quasi-identifiers, and the group-size floor a model implies.

GG, RGG and SG (paper 000 §2.3, §4.1, App. C.3) first *sort the data based on the
quasi-identifiers*, "chosen to make similar QIs adjacent in the ordering": "as simple as
choosing a prioritization of the attributes, and doing a lexicographic sort; or more
complex, such as some clustering". Three orders are offered, all vectorised; rows the order
cannot tell apart — equal QI values — are put (GG and RGG by default, SG with
``ties="random"``) in a uniformly random order drawn from a secret from the algorithm's seed and
the rows' content (``tie_keys``), so the input's row order never shows in their releases
(issue 26); else in row position:

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

from abc import ABC, abstractmethod
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..data.table import EncodedTable
from ..models.promise import (
    promised_l_int as model_l,  # noqa: F401 - re-exported
    size_floor,  # noqa: F401 - re-exported
)
from ..params import check_choice, fail

ORDERS = ("lex", "zorder", "hilbert")
#: how GG, RGG and SG order rows with equal QIs: ``"random"`` (GG's and RGG's default:
#: :func:`tie_keys`, the input's order never shows) or ``"input"`` (SG's default; row position — the papers' experiments are
#: reproduced so; the certificate then takes the input order as known to the adversary and
#: independent of the SA, an assumption a file sorted by its SA breaks)
TIES = ("random", "input")


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


def qi_order(table: EncodedTable, method: str = "lex", priority: Sequence[str] | None = None,
             ties: np.ndarray | None = None) -> np.ndarray:
    """Row positions of ``table`` in the chosen QI order (int64, a permutation of 0..n-1).

    ``priority`` lists QI names, most significant first (lexicographic order; for the
    space-filling curves it selects and orders the coordinates the same way). Rows the curve
    puts at one point are ordered by their QI tuple (lexicographic in the same priority), so
    only rows with equal QIs tie. **Ties** are broken by the keys ``ties`` (:func:`tie_keys`: a
    random order of the rows with equal QIs drawn from their content and a secret seed, never
    the input's order — issue 26: GG and SG read the order, so an input order that broke ties
    showed in the release) or, without keys, by row position (the replay's use: it places
    people with equal QIs itself, ``attacks/replay/greedy.tie_orders``).
    """
    check_choice("order", method, ORDERS, model="")
    idx = _priority_index(table, priority)
    tuples = [table.columns[table.qi_names[j]].codes for j in reversed(idx)]
    tie = [] if ties is None else [np.asarray(ties)]
    if method == "lex":
        return np.lexsort(tie + tuples).astype(np.int64)
    d = len(idx)
    bits = max(1, min(21, 63 // d))
    coords = normalised_grid(table, bits, idx)
    if method == "zorder":
        key = _interleave(coords, bits)
    else:
        key = _interleave(_hilbert_transpose(coords, bits), bits)
    return np.lexsort(tie + tuples + [key]).astype(np.int64)


#: stream tag of the tie order's secret (``SeedSequence([seed, TIE_STREAM])``)
TIE_STREAM = 0x71E


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer (Steele, Lea, Flood 2014), on uint64 arrays (wrapping)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def tie_keys(table: EncodedTable, seed: int | None) -> np.ndarray:
    """A key per row that orders rows with equal QIs at random: a hash of a secret drawn from
    the algorithm's seed (its own stream; fresh entropy without one — never published) and the
    row's content — QI codes, SA code, and its rank among rows equal in both (equal rows are
    interchangeable). Codes follow the values' order, so the keys, hence the release, are a
    function of the table's rows and the seed, never of their order in the input; to whoever
    does not know the secret, the rows of each set of equal QIs are in a uniformly random
    order, whatever their SA values (the replay's assumption, docs/replay.md)."""
    from ..data.grouping import group_ids

    n = table.n_rows
    words = np.random.SeedSequence(None if seed is None else [int(seed), TIE_STREAM]).generate_state(2, np.uint64)
    h = np.full(n, words[0], dtype=np.uint64)
    cols = [table.columns[c].codes for c in table.qi_names] + [table.sa_codes]
    for codes in cols:
        h = _mix(h ^ np.asarray(codes, dtype=np.int64).astype(np.uint64))
    same, n_same = group_ids(cols)
    rank = np.zeros(n, dtype=np.int64)
    if n:
        o = np.argsort(same, kind="stable")
        first = np.searchsorted(same[o], np.arange(n_same))
        rank[o] = np.arange(n) - first[same[o]]
    return _mix(h ^ rank.astype(np.uint64))


def sensitive_set_name(name: str | None, model, algorithm: str) -> str:
    """The sensitive value set an algorithm protects: the one given explicitly, else the
    model's ``set=``; a ParameterError naming the algorithm when there is neither."""
    name = name if name is not None else getattr(model, "sensitive_set", None)
    if name is None:
        raise fail(algorithm, "sensitive_set", None, "name a sensitive value set (or the model its set=)")
    return name


def seed_order(name: str, seeds: np.ndarray, seed: int | None, given: Sequence[int] | None) -> np.ndarray:
    """The order in which ART and Injector grow a group from each sensitive row (``seeds``,
    increasing): a secret uniformly random permutation drawn from ``seed`` — or ``given``,
    one of those permutations, which the replay adversary re-runs one by one
    (:mod:`openbook.attacks.replay.seeded`)."""
    if given is None:
        return np.random.default_rng(seed).permutation(seeds)
    out = np.asarray(given, dtype=np.int64)
    if out.shape != seeds.shape or not np.array_equal(np.sort(out), seeds):
        from ..errors import ParameterError

        raise ParameterError(f"{name}: seed_order must be an order of the {seeds.size} sensitive rows",
                             parameter="seed_order")
    return out


class SeededGroups(ABC):
    """The algorithms that grow one group from each sensitive row, in a secret random order
    (ART, Injector): :meth:`partition` is a run under one order, :meth:`seeded_runs` runs
    several orders on one table, its mined knowledge computed once (the replay adversary's
    re-runs, :mod:`openbook.attacks.replay.seeded`)."""

    def partition(self, table: EncodedTable, *, seed_order: Any = None) -> Any:
        """``seed_order``: the sensitive rows in the order their groups are grown (default a
        secret uniformly random permutation, :func:`seed_order`)."""
        return next(self.seeded_runs(table, [seed_order]))

    @abstractmethod
    def seeded_runs(self, table: EncodedTable, orders: Iterable[Any]) -> Iterator[Any]:
        """The partition of each of ``orders`` (as :meth:`partition`'s ``seed_order``) on ``table``."""

    @abstractmethod
    def sensitive_values(self, table: EncodedTable) -> np.ndarray:
        """Which SA codes are sensitive (each row holding one seeds a group)."""
