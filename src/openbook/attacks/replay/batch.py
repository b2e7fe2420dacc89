"""Many small units solved exactly at once (the replay's world engine, paper 000 §5.1).

A Mondrian or SG replay has hundreds of units of one or two classes whose weight is a few
decisions (:class:`.engine.Decisions`); each has a handful of contingency tables. Solving
them one by one costs mostly Python overhead, so :func:`solve_batch` enumerates every
unit's tables (numba), builds the side counts of every decision of every table in one
pass, calls the privacy model once for all of them, and reduces the weighted tables to
each unit's exact posterior (numba) — the same figures :func:`.solve.solve_unit` gives.
"""

from __future__ import annotations

import numpy as np

from .engine import Unit, holds
from .kernels import batch_posteriors, batch_sides, unit_tables_nb
from .sis import binary_chain_sis
from .solve import UnitResult, classes

#: a unit joins a batch with at most this many tables and cells
BATCH_TABLES = 4096
BATCH_CELLS = 64
#: table entries (tables × cells × classes) per batch
_BATCH_ENTRIES = 5_000_000
#: largest tabulated proposal of one GG/RGG group (:mod:`.sis`; 8 bytes each)
_SIS_TABLE = 8_000_000


def batchable(unit: Unit) -> bool:
    """Decisions only (no region, likelihood or chain), small enough to join a batch."""
    return (unit.decisions is not None and unit.likelihood is None and unit.chain is None and not unit.regions
            and not unit.unresolved and unit.n_cells <= BATCH_CELLS)


def solve_batch(units: list[Unit], target_masks: np.ndarray) -> list[UnitResult | None]:
    """Exact results of ``units`` (all :func:`batchable`); ``None`` for a unit with more
    than :data:`BATCH_TABLES` tables (solve it on its own)."""
    out: list[UnitResult | None] = [None] * len(units)
    prepared = []
    for i, u in enumerate(units):
        rep, K, tm = classes(u, target_masks)
        order = np.argsort(u.cell_leaf, kind="stable")  # a leaf's cells contiguous
        sizes = u.cell_size[order].astype(np.int64)
        tabs, ok = unit_tables_nb(sizes, u.cell_leaf[order].astype(np.int64), K.astype(np.int64), BATCH_TABLES)
        if not ok:
            continue
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        prepared.append((i, u, rep, K, tm, order, back, sizes, tabs))
    start = 0
    while start < len(prepared):
        end, entries = start, 0
        while end < len(prepared) and (end == start or entries + prepared[end][8].size <= _BATCH_ENTRIES):
            entries += prepared[end][8].size
            end += 1
        _solve_chunk(prepared[start:end], target_masks, out)
        start = end
    return out


def _solve_chunk(chunk: list, target_masks: np.ndarray, out: list) -> None:
    n_sa = chunk[0][1].leaf_counts.shape[1]
    C = max(p[8].shape[1] for p in chunk)
    V = max(p[8].shape[2] for p in chunk)
    n_tab = np.array([p[8].shape[0] for p in chunk], dtype=np.int64)
    tab_ptr = np.concatenate([[0], np.cumsum(n_tab)]).astype(np.int64)
    tabs = np.zeros((int(tab_ptr[-1]), C, V), dtype=np.int32)
    cells = np.array([p[8].shape[1] for p in chunk], dtype=np.int64)
    cell_ptr = np.concatenate([[0], np.cumsum(cells)]).astype(np.int64)
    reps, sizes, dec_n, side_cells, side_n, offs, acc = [], [], [], [], [], [], []
    for k, (_, u, rep, K, tm, order, back, sz, t) in enumerate(chunk):
        tabs[tab_ptr[k]:tab_ptr[k + 1], :t.shape[1], :t.shape[2]] = t
        reps.append(rep.astype(np.int64))
        sizes.append(sz)
        d = u.decisions
        dec_n.append(d.k)
        for i in range(d.k):
            for side in (d.left[i], d.right[i]):
                side_cells.append(back[side])  # cells in the enumeration's order
                side_n.append(side.size)
            offs.append(np.zeros(n_sa, np.int64) if d.off_left is None else d.off_left[i])
            offs.append(np.zeros(n_sa, np.int64) if d.off_right is None else d.off_right[i])
        acc.append(d.accepted)
    rep_ptr = np.concatenate([[0], np.cumsum([r.size for r in reps])]).astype(np.int64)
    dec_ptr = np.concatenate([[0], np.cumsum(dec_n)]).astype(np.int64)
    side_ptr = np.concatenate([[0], np.cumsum(side_n)]).astype(np.int64)
    vec = batch_sides(tabs, tab_ptr, cell_ptr, np.concatenate(reps), rep_ptr, dec_ptr, side_ptr,
                      np.concatenate(side_cells).astype(np.int64) if side_cells else np.zeros(0, np.int64),
                      np.asarray(offs, dtype=np.int64).reshape(-1, n_sa), n_sa)
    model, domain = chunk[0][1].decisions.model, chunk[0][1].decisions.domain
    ok = holds(model, domain, vec) if vec.shape[0] else np.zeros(0, dtype=bool)
    post, share, n_ok = batch_posteriors(tabs, tab_ptr, cell_ptr, np.concatenate(sizes).astype(np.float64), ok,
                                         dec_ptr, np.concatenate(acc).astype(np.bool_))
    for k, (i, u, rep, K, tm, order, back, sz, t) in enumerate(chunk):
        pc = post[cell_ptr[k]:cell_ptr[k + 1], :K.shape[1]][back]  # back to the unit's cell order
        if n_ok[k] == 0:
            nan = np.full((u.n_cells, tm.shape[2]), np.nan)
            out[i] = UnitResult(nan, nan.copy(), True, float(n_tab[k]), 0.0, False)
            continue
        p = np.einsum("cv,cvt->ct", pc, tm[u.cell_leaf])
        out[i] = UnitResult(p, np.zeros_like(p), True, float(n_tab[k]), float(share[k]), True)




def _set_mask(unit: Unit) -> np.ndarray:
    assert unit.set_mask is not None  # a chain_batchable unit
    return unit.set_mask


def _chain_params(unit: Unit) -> tuple:
    assert unit.chain_params is not None  # a chain_batchable unit
    return unit.chain_params


def chain_batchable(unit: Unit) -> bool:
    """A GG/RGG one-group unit (its weight a chain of prefix factors) of one class with two
    SA classes — a sensitive value and the rest lumped (binary ℓ-diversity, the papers'
    setting) — its cells the buckets in order."""
    if (unit.chain is None or unit.likelihood is not None or unit.decisions is not None or unit.regions
            or unit.unresolved or unit.leaf_counts.shape[0] != 1 or unit.chain_params is None
            or unit.set_mask is None or int(unit.set_mask.sum()) != 1):
        return False
    k1 = int(unit.leaf_counts[0, unit.set_mask].sum())
    # the table of reachable prefixes (buckets × (k1+1)) stays small
    return bool(np.all(np.diff(unit.cell) >= 0)) and unit.n_cells * (k1 + 1) <= 5_000_000


def sample_chains(units: list[Unit], target_masks: np.ndarray, worlds: int, seeds: list[int]) -> list[UnitResult]:
    """Sampled results of one-group GG/RGG units (:func:`chain_batchable`), all at once: the
    model is called once for every prefix count a world can reach, then numba draws every
    unit's worlds bucket by bucket, each bucket from its hypergeometric tilted by the
    chain's factor (sequential importance sampling, :mod:`.sis`), and averages them with
    their importance weights — self-normalised estimates with standard errors."""
    if not units:
        return []
    n_sa = units[0].leaf_counts.shape[1]
    sv = int(np.flatnonzero(_set_mask(units[0]))[0])
    other = int(np.flatnonzero(~_set_mask(units[0]))[0])
    tmf = target_masks.T.astype(np.float64)
    k1 = np.array([u.leaf_counts[0, sv] for u in units], dtype=np.int64)
    k0 = np.array([u.leaf_counts[0].sum() for u in units], dtype=np.int64) - k1
    sizes = np.concatenate([u.cell_size for u in units]).astype(np.int64)
    cell_ptr = np.concatenate([[0], np.cumsum([u.n_cells for u in units])]).astype(np.int64)
    # every prefix (unit, bucket j, x values of the set) a world can reach: one model call
    # (the model sees a prefix's count of the value and its size: each distinct pair once)
    n_h = np.array([u.n_cells * (k + 1) for u, k in zip(units, k1)], dtype=np.int64)
    h_ptr = np.concatenate([[0], np.cumsum(n_h)]).astype(np.int64)
    xs = np.empty(int(h_ptr[-1]), dtype=np.int64)
    rows = np.empty(int(h_ptr[-1]), dtype=np.int64)
    tms = np.zeros((len(units), 2, target_masks.shape[0]))
    for i, u in enumerate(units):
        pref = np.cumsum(u.cell_size)
        x = np.arange(k1[i] + 1)
        xs[h_ptr[i]:h_ptr[i + 1]] = np.tile(x, u.n_cells)
        rows[h_ptr[i]:h_ptr[i + 1]] = np.repeat(pref, x.size)
        lc = u.leaf_counts[0]
        ov = np.flatnonzero(~_set_mask(u))
        tms[i, 0] = tmf[sv]
        tms[i, 1] = (lc[ov] / max(lc[ov].sum(), 1)) @ tmf[ov]
    model, domain = _chain_params(units[0])[0], _chain_params(units[0])[1]
    feasible = np.flatnonzero(rows >= xs)
    pairs, inv = np.unique(rows[feasible] * (int(xs.max(initial=0)) + 1) + xs[feasible], return_inverse=True)
    vec = np.zeros((pairs.size, n_sa), dtype=np.int64)
    vec[:, sv] = pairs % (int(xs.max(initial=0)) + 1)
    vec[:, other] = pairs // (int(xs.max(initial=0)) + 1) - vec[:, sv]
    H = np.zeros(xs.size, dtype=np.bool_)
    H[feasible] = np.asarray(holds(model, domain, vec), dtype=bool)[inv.ravel()] if pairs.size else False
    p = np.array([_chain_params(u)[2] for u in units], dtype=np.float64)
    stop = np.array([_chain_params(u)[3] for u in units], dtype=np.float64)
    post, se, ess = binary_chain_sis(k1, k0, sizes, cell_ptr, H, h_ptr, p, stop, tms,
                                     np.asarray(seeds, dtype=np.int64), int(worlds), _SIS_TABLE)
    out = []
    for i, u in enumerate(units):
        a, b = cell_ptr[i], cell_ptr[i + 1]
        if ess[i] > 0:
            out.append(UnitResult(post[a:b], se[a:b], False, float(worlds), float(ess[i]), True))
        else:
            nan = np.full((u.n_cells, target_masks.shape[0]), np.nan)
            out.append(UnitResult(nan, nan.copy(), False, float(worlds), 0.0, False))
    return out
