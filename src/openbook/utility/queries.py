"""COUNT-query workloads and their average relative error (paper 000 §5.3; paper 001 §7.2,
after Anatomy, Xiao & Tao 2006 §6)::

    SELECT COUNT(*) FROM T WHERE A_i1 ∈ V_i1 AND … AND A_iqd ∈ V_iqd AND S ∈ V_s

A query picks ``qd`` QIs at random; each predicate set ``V`` is a contiguous range of codes
for a numeric/ordinal attribute and a random subset for a categorical one. Predicates are
drawn over the *active domain* (the values that occur in the original table).

Selectivity ``sel`` (two conventions, :func:`make_workload` ``mode``):

* ``"expected"`` (Anatomy [Xiao & Tao 2006], the form paper 001 §7.2 adopts, "expected query
  selectivity s"): every predicate — the ``qd`` QI ones and the SA one — covers a fraction
  ``sel^(1/(qd+1))`` of its attribute's domain, so a query's expected selectivity under
  independence is ``sel``;
* ``"per-attribute"`` (paper 000 §5.3): "the size of V_ij is randomly chosen from
  {0, 1, …, sel·|D_ij|}"; we draw from ``{1, …, max(1, ⌊sel·|D|⌋)}`` (an empty ``V`` only
  produces a zero count that is excluded anyway) and apply it to the SA predicate too.

Answers (all sums over *classes* with numba, never over rows in Python):

* exact: rows of the original table that satisfy the predicate;
* generalized release (uniform spread inside a generalized value): a class contributes
  ``Π_j |V_j ∩ L_j| / |L_j| × |{t ∈ class: t.S ∈ V_s}|`` where ``L_j`` is the set of active
  ground values its published value of ``A_j`` stands for;
* bucketized release (Anatomy's estimator): a group contributes (QI-table rows of the group
  that satisfy the QI predicates) × (fraction of the group's SA-table counts in ``V_s``).

Relative error ``|est − act| / act``; queries with ``act = 0`` are excluded and counted.
:func:`correlated_subsets` picks the queries whose true count is farthest above / below the
independence estimate ``n Π sel_j`` (paper 000 Fig. 5c–d).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import ParameterError
from .metrics import ClassView

__all__ = ["QueryWorkload", "make_workload", "answer_all", "exact_answers", "estimate_answers", "relative_errors",
           "average_relative_error", "correlated_subsets", "evaluate_workload"]

MODES = ("expected", "per-attribute")
CHUNK = 512


@dataclass(eq=False)
class QueryWorkload:
    """``n`` COUNT queries. ``attrs[q, :qd]`` are the queried QI indices (padded with -1);
    ``qi_sets[j]`` is a ``(n, card_j)`` boolean matrix (all True where QI ``j`` is not
    queried); ``sa_set`` is ``(n, n_sa)``."""

    attrs: np.ndarray
    qi_sets: list[np.ndarray]
    sa_set: np.ndarray
    qd: int
    sel: float
    mode: str
    seed: Any

    @property
    def n(self) -> int:
        return int(self.sa_set.shape[0])


def _sizes(card: int, frac: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(frac * card), 1, card).astype(np.int64)


def _draw_sets(rng: np.random.Generator, active: np.ndarray, card: int, sizes: np.ndarray,
               contiguous: bool) -> np.ndarray:
    """One predicate set per query over the active values (codes ``active``)."""
    n = sizes.size
    out = np.zeros((n, card), dtype=bool)
    a = active.size
    if contiguous:
        start = rng.integers(0, a - sizes + 1)
        pos = np.arange(a)[None, :]
        inside = (pos >= start[:, None]) & (pos < (start + sizes)[:, None])
    else:
        keys = rng.random((n, a))
        ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
        inside = ranks < sizes[:, None]
    out[:, active] = inside
    return out


def make_workload(table: EncodedTable, *, n: int = 1000, qd: int | None = None, sel: float = 0.05,
                  mode: str = "expected", seed: Any = 0) -> QueryWorkload:
    """Random COUNT queries over ``table``'s QIs and SA (see the module docstring)."""
    d = len(table.qi_names)
    qd = d if qd is None else qd
    if isinstance(qd, bool) or not isinstance(qd, (int, np.integer)) or not 1 <= qd <= d:
        raise ParameterError(f"qd={qd!r} must be an integer in 1..{d} (the number of QIs)", parameter="qd", value=qd)
    if not (0 < float(sel) <= 1):
        raise ParameterError(f"sel={sel!r} must be in (0, 1]", parameter="sel", value=sel)
    if mode not in MODES:
        raise ParameterError(f"mode={mode!r} must be one of {', '.join(MODES)}", parameter="mode", value=mode)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"n={n!r} must be a positive integer", parameter="n", value=n)
    rng = np.random.default_rng(seed)
    attrs = np.argsort(rng.random((n, d)), axis=1)[:, :qd].astype(np.int64)
    queried = np.zeros((n, d), dtype=bool)
    np.put_along_axis(queried, attrs, True, axis=1)

    def sizes_for(a: int) -> np.ndarray:
        if mode == "expected":
            return _sizes(a, np.full(n, float(sel) ** (1.0 / (qd + 1))))
        top = max(1, int(np.floor(sel * a)))
        return rng.integers(1, top + 1, size=n)

    qi_sets = []
    for j, name in enumerate(table.qi_names):
        col = table.columns[name]
        card = col.n_values
        active = np.flatnonzero(np.bincount(col.codes, minlength=card) > 0)
        sets = _draw_sets(rng, active, card, sizes_for(active.size), col.kind in ("numeric", "ordinal"))
        sets[~queried[:, j]] = True
        qi_sets.append(sets)
    sa = table.columns[table.sa_name]
    active = np.flatnonzero(np.bincount(sa.codes, minlength=sa.n_values) > 0)
    sa_set = _draw_sets(rng, active, sa.n_values, sizes_for(active.size), False)
    return QueryWorkload(attrs, qi_sets, sa_set, int(qd), float(sel), mode, seed)


# ---------------------------------------------------------------------------------------
# the kernel: out[q, c] = Σ_k Π_j F[q, off_j + val[k, j]] · Σ_{s ∈ V_s} cnt[k, c, s]
# ---------------------------------------------------------------------------------------
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_TABLE = np.array([
    0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30,
    24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31,
    10, 25, 14, 19, 9, 13, 8, 7, 6], dtype=np.int64)


@numba.njit(cache=True, parallel=True)
def _answer_kernel(member, loff, card, qset, attrs, frac, F, off, val, cnt, sa_idx, sa_len, debruijn, table,
                   out):  # pragma: no cover - compiled
    """Per query: AND over the queried QIs of (OR over the values in V_j of the bitset of
    keys touching that value), then add each surviving key's SA-set count (times its
    fractions when ``frac``)."""
    Q = qset.shape[0]
    W = member.shape[1]
    K = val.shape[0]
    C = cnt.shape[1]
    qd = attrs.shape[1]
    S = cnt.shape[2]
    for q in numba.prange(Q):
        acc = np.empty(W, dtype=np.uint64)
        tmp = np.empty(W, dtype=np.uint64)
        per_sa = np.zeros((C, S), dtype=np.float64)
        first = True
        for t in range(qd):
            j = attrs[q, t]
            if j < 0:
                break
            tmp[:] = 0
            for v in range(card[j]):
                if qset[q, loff[j] + v]:
                    row = member[loff[j] + v]
                    for w in range(W):
                        tmp[w] |= row[w]
            if first:
                acc[:] = tmp
                first = False
            else:
                for w in range(W):
                    acc[w] &= tmp[w]
        if first:  # no QI predicate: every key
            acc[:] = ~np.uint64(0)
        for w in range(W):
            x = acc[w]
            while x != 0:
                low = x & (~x + np.uint64(1))
                b = table[np.int64((low * debruijn) >> np.uint64(58))]
                x ^= low
                k = w * 64 + b
                if k >= K:
                    break
                p = 1.0
                if frac:
                    for t in range(qd):
                        j = attrs[q, t]
                        if j < 0:
                            break
                        p *= F[q, off[j] + val[k, j]]
                for c in range(C):
                    for s in range(S):
                        per_sa[c, s] += p * cnt[k, c, s]
        for c in range(C):
            tot = 0.0
            for i in range(sa_len[q]):
                tot += per_sa[c, sa_idx[q, i]]
            out[q, c] = tot


def _sa_lists(sa_set: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lens = sa_set.sum(axis=1).astype(np.int64)
    idx = np.zeros((sa_set.shape[0], max(int(lens.max(initial=0)), 1)), dtype=np.int64)
    q, s = np.nonzero(sa_set)
    pos = np.arange(q.size) - np.searchsorted(q, q)
    idx[q, pos] = s
    return idx, lens


def _bitsets(touch: list[np.ndarray]) -> np.ndarray:
    """``touch[j]`` is ``(K, card_j)`` bool (key k touches value v); returns the stacked
    ``(Σ card_j, W)`` uint64 bitsets over keys (bit k of a row = key k)."""
    rows = np.concatenate([t.T for t in touch], axis=0)
    packed = np.packbits(rows, axis=1, bitorder="little")
    pad = (-packed.shape[1]) % 8
    if pad or packed.shape[1] == 0:
        packed = np.pad(packed, ((0, 0), (0, pad if packed.shape[1] else 8)))
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


def _run(wl: QueryWorkload, touch: list[np.ndarray], val: np.ndarray, cnt: np.ndarray,
         fractions=None) -> np.ndarray:
    """Evaluate the kernel in chunks of queries. ``touch[j]`` says which keys a leaf value of
    QI ``j`` reaches; ``fractions(j, rows)`` (generalized views only) gives the
    ``(len(rows), n_values_j)`` fraction table of QI ``j``; ``cnt`` is ``(K, C, n_sa)`` (C
    answers per query at once). Returns ``(n, C)``."""
    d = len(wl.qi_sets)
    sa_idx, sa_len = _sa_lists(wl.sa_set)
    C = cnt.shape[1]
    out = np.zeros((wl.n, C), dtype=np.float64)
    val = np.ascontiguousarray(val, dtype=np.int64)
    cnt = np.ascontiguousarray(cnt, dtype=np.float64)
    member = _bitsets(touch)
    card = np.array([t.shape[1] for t in touch], dtype=np.int64)
    loff = np.concatenate([[0], np.cumsum(card)[:-1]]).astype(np.int64)
    qset_all = np.concatenate(wl.qi_sets, axis=1).astype(np.uint8)
    for start in range(0, wl.n, CHUNK):
        rows = np.arange(start, min(start + CHUNK, wl.n))
        if fractions is not None:
            parts = [fractions(j, rows) for j in range(d)]
            widths = np.array([p.shape[1] for p in parts], dtype=np.int64)
            off = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
            F = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float64)
        else:
            off, F = np.zeros(d, np.int64), np.zeros((rows.size, 1))
        res = np.zeros((rows.size, C), dtype=np.float64)
        _answer_kernel(member, loff, card, np.ascontiguousarray(qset_all[rows]), np.ascontiguousarray(wl.attrs[rows]),
                       fractions is not None, F, off, val, cnt, np.ascontiguousarray(sa_idx[rows]), sa_len[rows],
                       _DEBRUIJN, _DEBRUIJN_TABLE, res)
        out[rows] = res
    return out


def _leaf_touch(keys: np.ndarray, cards: list[int]) -> list[np.ndarray]:
    out = []
    for j, c in enumerate(cards):
        t = np.zeros((keys.shape[0], c), dtype=bool)
        t[np.arange(keys.shape[0]), keys[:, j]] = True
        out.append(t)
    return out


def _cells(table: EncodedTable) -> tuple[np.ndarray, np.ndarray]:
    """Distinct QI tuples of the table and each row's cell."""
    cells, inv = np.unique(table.qi_codes.astype(np.int64), axis=0, return_inverse=True)
    return cells, inv.ravel()


def _cell_index(cells: np.ndarray, tuples: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """Position of each QI tuple among ``cells`` (every tuple must occur). Exact for any
    cardinalities: the tuples of both get joint dense ids (:func:`~openbook.data.grouping.group_ids`
    combines codes by mixed radix only while the product fits in int64, guarded in Python
    ints, and compresses otherwise) — never a float key, which would let distinct tuples
    collide once the product passes 2^53."""
    m = cells.shape[0]
    if tuples.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    if m == 0:
        raise ParameterError("the release holds a QI tuple that the original table lacks", parameter="original")
    ids, n_ids = group_ids(np.concatenate([cells, tuples]).astype(np.int64))
    pos = np.full(n_ids, -1, dtype=np.int64)
    pos[ids[:m]] = np.arange(m)
    found = pos[ids[m:]]
    if (found < 0).any():
        raise ParameterError("the release holds a QI tuple that the original table lacks", parameter="original")
    return found


def _bucketized_cell_counts(view: ClassView, cells: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """Anatomy's estimator folded onto the table's cells: ``A[cell, s] = Σ_g n_{cell,g} ·
    cnt_g[s] / |g|`` (so the estimate is ``Σ_{matching cells} Σ_{s ∈ V_s} A[cell, s]``)."""
    assert view.group_sa_counts is not None and view.group_of_class is not None
    gcnt = view.group_sa_counts.astype(np.float64)
    gsize = np.maximum(gcnt.sum(axis=1), 1.0)
    g = view.group_of_class
    where = _cell_index(cells, view.class_values.astype(np.int64), cards)
    contrib = (view.class_sizes / gsize[g])[:, None] * gcnt[g]
    A = np.zeros((cells.shape[0], gcnt.shape[1]), dtype=np.float64)
    np.add.at(A, where, contrib)
    return A


def answer_all(wl: QueryWorkload, table: EncodedTable, views: list[ClassView] | tuple = ()) -> tuple[np.ndarray, list[np.ndarray]]:
    """Exact answers and the estimates of every view. The exact answers and all bucketized
    views share one pass over the table's distinct QI cells; generalized views take one pass
    over their classes each."""
    cells, inv = _cells(table)
    n_sa = table.columns[table.sa_name].n_values
    cards = np.array([table.columns[n].n_values for n in table.qi_names], dtype=np.int64)
    exact = np.bincount(inv * n_sa + table.sa_codes, minlength=len(cells) * n_sa).reshape(len(cells), n_sa)
    stacks = [exact.astype(np.float64)]
    buck = [i for i, v in enumerate(views) if v.bucketized]
    for i in buck:
        stacks.append(_bucketized_cell_counts(views[i], cells, cards))
    res = _run(wl, _leaf_touch(cells, [int(c) for c in cards]), cells, np.stack(stacks, axis=1))
    ests: list[np.ndarray | None] = [None] * len(views)
    for c, i in enumerate(buck, start=1):
        ests[i] = res[:, c]
    for i, v in enumerate(views):
        if not v.bucketized:
            ests[i] = estimate_answers(wl, v, table)
    return res[:, 0], ests  # type: ignore[return-value]


def exact_answers(wl: QueryWorkload, table: EncodedTable) -> np.ndarray:
    """True counts on the original table (one pass over its distinct QI cells)."""
    return answer_all(wl, table, [])[0]


def estimate_answers(wl: QueryWorkload, view: ClassView, table: EncodedTable | None = None) -> np.ndarray:
    """Estimated counts from a release's classes (:class:`~openbook.utility.metrics.ClassView`).

    Generalized: uniform spread of each class over the *active* ground values its published
    value stands for (``table`` gives the active domain; without it every ground value of
    the hierarchy counts). Bucketized: Anatomy's QI-table matches × SA-table fraction
    (needs ``table``: the estimate is folded onto its distinct QI cells)."""
    if view.bucketized:
        if table is None:
            raise ParameterError("a bucketized estimate needs the original table", parameter="table")
        return answer_all(wl, table, [view])[1][0]
    masks = []
    for j, name in enumerate(view.qi_names):
        m = view.value_masks[j]
        if table is not None:
            col = table.columns[name]
            m = m & (np.bincount(col.codes, minlength=col.n_values) > 0)[None, :]
        masks.append(m.astype(np.float64))
    cover = [np.maximum(m.sum(axis=1), 1.0) for m in masks]
    touch = [masks[j][view.class_values[:, j]] > 0 for j in range(len(masks))]

    def fractions(j: int, rows: np.ndarray) -> np.ndarray:
        return (wl.qi_sets[j][rows].astype(np.float64) @ masks[j].T) / cover[j][None, :]

    assert view.sa_counts is not None
    return _run(wl, touch, view.class_values, view.sa_counts[:, None, :], fractions)[:, 0]


def relative_errors(est: np.ndarray, act: np.ndarray) -> tuple[np.ndarray, int]:
    """``|est − act| / act`` for the queries with ``act > 0``, and how many had ``act = 0``."""
    est, act = np.asarray(est, np.float64), np.asarray(act, np.float64)
    nz = act > 0
    return np.abs(est[nz] - act[nz]) / act[nz], int((~nz).sum())


def average_relative_error(est: np.ndarray, act: np.ndarray) -> float:
    err, _ = relative_errors(est, act)
    return float(err.mean()) if err.size else float("nan")


def independence_estimates(wl: QueryWorkload, table: EncodedTable) -> np.ndarray:
    """``n Π_j sel_j · sel_s`` with each ``sel`` the marginal fraction of rows in ``V``."""
    n = table.n_rows
    est = np.full(wl.n, float(n))
    for j, name in enumerate(table.qi_names):
        col = table.columns[name]
        freq = np.bincount(col.codes, minlength=col.n_values) / n
        est *= wl.qi_sets[j].astype(np.float64) @ freq
    freq = np.bincount(table.sa_codes, minlength=wl.sa_set.shape[1]) / n
    return est * (wl.sa_set.astype(np.float64) @ freq)


def correlated_subsets(act: np.ndarray, indep: np.ndarray, size: int = 100) -> dict[str, np.ndarray]:
    """Indices of the ``size`` queries (``act > 0``) whose true count is farthest above
    (``"above"``) and below (``"below"``) the independence estimate, by ``log(act/indep)``
    (paper 000 §5.3, Fig. 5c–d, calls them the negative and positive queries)."""
    act, indep = np.asarray(act, np.float64), np.asarray(indep, np.float64)
    ok = np.flatnonzero((act > 0) & (indep > 0))
    r = np.log(act[ok] / indep[ok])
    order = np.argsort(r, kind="stable")
    size = min(size, ok.size)
    return {"above": ok[order[::-1][:size]], "below": ok[order[:size]]}


def evaluate_workload(wl: QueryWorkload, table: EncodedTable, view: ClassView, *,
                      act: np.ndarray | None = None, correlated: int | None = None) -> dict[str, Any]:
    """ARE of ``view`` on ``wl`` (plus the correlated subsets' AREs when ``correlated``)."""
    if act is None:
        act, (est,) = answer_all(wl, table, [view])
    else:
        est = estimate_answers(wl, view, table)
    err, zero = relative_errors(est, act)
    out: dict[str, Any] = {"are": float(err.mean()) if err.size else float("nan"), "n_queries": wl.n,
                           "n_zero": zero, "qd": wl.qd, "sel": wl.sel, "mode": wl.mode}
    if correlated:
        subs = correlated_subsets(act, independence_estimates(wl, table), correlated)
        for k, idx in subs.items():
            out[f"are_{k}"] = average_relative_error(est[idx], act[idx])
    return out
