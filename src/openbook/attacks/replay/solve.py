"""Solving a unit of the replay adversary (paper 000 §5.1): its posterior per cell, exactly
or sampled (the units, cells and worlds are :mod:`.engine`'s).

**Exact or sampled.** A unit with at most ``exact_limit`` contingency tables is solved
exactly (every table, weighted by its number of worlds). A larger unit is sampled: with
decisions and regions only, it is cut into *pieces* small enough to enumerate, joined by
the factors too wide to keep inside one piece; each piece is drawn from its exact
conditional distribution and the joining factors weight the joint draws (importance
sampling); otherwise worlds are drawn uniformly and weighted by the likelihood. The
posterior is self-normalised and its standard error is ``sqrt(Σ w²(x-x̂)²)/Σ w``. A unit of
decisions only that no drawn world reproduces (its consistent arrangements are rare: a leaf
none of whose cuts may be taken) is enumerated exactly after all — one class whose decisions
fall apart into blocks of cells block by block (:mod:`.components`), else whole — within
:data:`FALLBACK_WORK` visited tables (one class) or :data:`FALLBACK_WORK_CLASSES` (several),
and past that drawn cell by cell under its decisions (:mod:`.sequential`); a unit with regions
no joint draw passes is solved region by region through its blocks (:mod:`.blocks`). A unit
still without an answer is *unresolved*. Budgets (:data:`MAX_WORK`, :data:`MAX_RERUN`,
the pilot :data:`PILOT_WORLDS`) cap what one unit may cost; a unit past them is unresolved
too, with the reason (``UnitResult.reason``) — unresolved people count as failing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .engine import Region, Unit, log_multinomial, regions_pass, unit_tables, weight_chunked
from .kernels import sample_cell_counts

#: table entries (tables × cells × classes) held at once
_TABLE_ENTRIES = 2e7
#: rows re-run per region check of an exact enumeration or a piece (tables × region rows)
REGION_WORK = 2e6
#: entries (worlds × cells × classes, int32) of the worlds drawn at once for a unit weighed by
#: a likelihood of the whole unit (a re-run, full-domain search's decisions); past it: unresolved
_LIKELIHOOD_ENTRIES = 1e8
#: a unit whose tables are at least this many (by the lower bound) is counted before it is listed
_COUNT_FIRST = 1000
#: a sampled unit costing more (worlds × cells, plus re-run rows) is left unresolved
MAX_WORK = 5e7
#: worlds of one piece of a sampled unit (its exact conditional is enumerated)
PIECE_LIMIT = 2e4
#: rows re-run (worlds × rows of the regions checked on the joint draws) per sampled unit;
#: a unit whose regions would need more draws fewer worlds (its standard errors say so),
#: never fewer than the pilot's; one whose pilot alone needs more is unresolved
MAX_RERUN = 4e6
#: tables (and cut-off partial tables) visited, at most, to enumerate a unit of decisions the
#: sampler could not resolve: ~10 s of the enumeration (Adult's strict Mondrian under distinct
#: 3-diversity has one such unit, of 22 people: 22.4 million)
FALLBACK_WORK = 2.5e7
#: the same for a unit of several classes (~1 s; Adult's strict Mondrian: 415,412 for 43 people)
FALLBACK_WORK_CLASSES = 2e6
#: the first draws of a sampled unit (at least this many, or a tenth of its worlds): a unit
#: none of whose first draws is consistent is left unresolved without drawing the rest
PILOT_WORLDS = 200


@dataclass
class UnitResult:
    post: np.ndarray   # (n_cells, n_targets)
    se: np.ndarray     # (n_cells, n_targets)
    exact: bool
    n_worlds: float    # worlds enumerated (exact: number of tables or states) or sampled
    accepted: float    # sampled: effective number of accepted worlds; exact: weight share
    consistent: bool
    #: why an inconsistent unit is unresolved (``""`` when resolved)
    reason: str = ""


def classes(unit: Unit, target_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unit's SA classes: ``(rep, K, tm)`` — a representative SA code per class, the
    per-leaf class counts ``(n_leaves, n_cls)`` and per leaf the class → target weights
    ``(n_leaves, n_cls, T)``. Classes are the values present, except that when the model
    looks only at a sensitive set the other values are lumped into one class: their
    arrangement never changes the weight, so within a leaf each is a uniform share of the
    lump."""
    lc = unit.leaf_counts
    tot = lc.sum(axis=0)
    vals = np.flatnonzero(tot > 0)
    tmf = target_masks.T.astype(np.float64)  # (n_sa, T)
    nl = lc.shape[0]
    if unit.set_mask is not None:
        sv = vals[unit.set_mask[vals]]
        ov = vals[~unit.set_mask[vals]]
        if ov.size > 1:
            # the lump's representative: the first value outside the set (canonical, so
            # that units differing only in how the lump splits share a cached result)
            rep = np.concatenate([sv, np.flatnonzero(~unit.set_mask)[:1]])
            other = lc[:, ov].sum(axis=1, keepdims=True)
            K = np.concatenate([lc[:, sv], other], axis=1)
            share = lc[:, ov] / np.maximum(other, 1)  # (n_leaves, n_other)
            tm_other = np.einsum("lo,ot->lt", share, tmf[ov])[:, None, :]
            tm = np.concatenate([np.broadcast_to(tmf[sv][None], (nl, sv.size, tmf.shape[1])), tm_other], axis=1)
            return rep, K, tm
    return vals, lc[:, vals], np.broadcast_to(tmf[vals][None], (nl, vals.size, tmf.shape[1]))


def to_targets(x: np.ndarray, tm: np.ndarray, cell_leaf: np.ndarray) -> np.ndarray:
    """``x[..., c, :] @ tm[cell_leaf[c]]`` for every cell ``c``: per-cell class weights
    ``(..., C, V)`` to per-cell targets ``(..., C, T)``. ``tm`` is usually one matrix broadcast
    over the leaves (:func:`classes`): then one matrix product, never ``tm[cell_leaf]``, which
    is ``C × V × T`` floats (31 GiB for 1,091 classes of a 2,000-value SA)."""
    x = np.asarray(x, dtype=np.float64)
    if tm.shape[0] == 0:  # a unit without leaves: nothing to weigh
        return np.zeros(x.shape[:-1] + (tm.shape[2],))
    if tm.strides[0] == 0 or np.all(tm == tm[:1]):
        m = tm[0]
        if m.size > 1 << 16:  # a wide SA: the value -> target matrix is mostly zeros
            from scipy import sparse

            flat = x.reshape(-1, x.shape[-1])
            return np.asarray(sparse.csr_matrix(m).T @ flat.T).T.reshape(x.shape[:-1] + (m.shape[1],))
        return x @ m
    out = np.zeros(x.shape[:-1] + (tm.shape[2],))
    for leaf in np.unique(cell_leaf):
        cells = np.flatnonzero(cell_leaf == leaf)
        out[..., cells, :] = x[..., cells, :] @ tm[leaf]
    return out


def solve_unit(unit: Unit, target_masks: np.ndarray, *, worlds: int, seed: int, exact_limit: float = 1e6,
               force_sample: bool = False, cache: dict | None = None, piece_limit: float | None = None
               ) -> UnitResult:
    """Posterior per cell and target of one unit: exact when at most ``exact_limit``
    states / tables, else sampled (module docstring). ``piece_limit`` (default
    :data:`PIECE_LIMIT`) bounds the worlds of one piece of a sampled unit."""
    from .chain import chain_dp, chain_weight

    n_sa = unit.leaf_counts.shape[1]
    if unit.unresolved:
        nan = np.full((unit.n_cells, target_masks.shape[0]), np.nan)
        return UnitResult(nan, nan.copy(), False, 0.0, 0.0, False, unit.unresolved_reason)
    if unit.posterior is not None:  # solved exactly elsewhere: its values summed per target
        post = np.asarray(unit.posterior, dtype=np.float64) @ target_masks.T.astype(np.float64)
        return UnitResult(post, np.zeros(post.shape), True, 1.0, 1.0, True)
    if unit.constant:  # nothing excluded: the class frequency of each target, per class then per cell
        from ..baseline import target_counts

        lc = unit.leaf_counts
        tot = lc.sum(axis=1, keepdims=True).astype(np.float64)
        per_leaf = target_counts(lc, target_masks)
        leaf_freq = np.divide(per_leaf, tot, out=np.zeros(per_leaf.shape, dtype=np.float64), where=tot > 0)
        cl = unit.cell_leaf
        post = leaf_freq if cl.size == lc.shape[0] and np.array_equal(cl, np.arange(cl.size)) else leaf_freq[cl]
        if unit.inflate > 1.0:  # an upper bound: posterior + 3 s.e. = min(1, frequency × inflate)
            return UnitResult(post, (np.minimum(1.0, post * unit.inflate) - post) / 3.0, False, 1.0, 1.0 / unit.inflate,
                              True)
        return UnitResult(post, np.zeros(post.shape), True, 1.0, 1.0, True)  # calloc: no pages touched
    rep, K, tm = classes(unit, target_masks)
    size = unit.cell_size.astype(np.float64)
    if not force_sample:
        key = hit = None
        if cache is not None and unit.key is not None:
            key = (unit.key, unit.cell_size.tobytes(), unit.cell_leaf.tobytes(), K.shape,
                   np.ascontiguousarray(K, dtype=np.int64).tobytes(), rep.tobytes())
            hit = cache.get(key)
        ex = hit
        if ex is None and unit.chain is not None:
            ex = chain_dp(unit, K[0], size.astype(np.int64), rep, n_sa, int(exact_limit))
        if ex is None:
            ex = _solve_exact(unit, K, rep, n_sa, size, exact_limit)
        if ex is not None:
            if cache is not None and key is not None and hit is None:
                cache[key] = ex
            post_cls, n_worlds, share, consistent = ex
            post = to_targets(post_cls, tm, unit.cell_leaf)
            se = np.zeros_like(post) if consistent else post.copy()
            return UnitResult(post, se, True, n_worlds, share, consistent,
                              "" if consistent else "no world is consistent with the release")
    if unit.likelihood is None and unit.chain is None:
        r = _solve_pieces(unit, K, rep, tm, n_sa, size, worlds, seed,
                          PIECE_LIMIT if piece_limit is None else piece_limit)
        if not r.consistent and not force_sample and unit.decisions is not None and not unit.regions:
            # decisions no draw kept (rare among the arrangements: a leaf none of whose cuts
            # may be taken): enumerate the tables that keep them — exact, or unresolved as
            # before. One class gets the larger budget (Adult's strict Mondrian, ℓ = 3: 22.4
            # million tables); several, the smaller (Adult's relaxed Mondrian has units of
            # 2-5 classes past 2.5·10^7 tables: 13 s each spent for nothing at the larger).
            # The budget is per unit, never per replay, so the local and Spark engines (which
            # meet the units in different orders) give every unit the same answer.
            from .components import solve_components

            # one class whose decisions fall apart into blocks: each block enumerated alone
            ex = solve_components(unit, K, rep, n_sa, size, FALLBACK_WORK)
            if ex is None:
                ex = _exact_decisions(unit, K, rep, n_sa, size,
                                      FALLBACK_WORK if K.shape[0] == 1 else FALLBACK_WORK_CLASSES)
            if ex is not None:
                post_cls, n_worlds, share, consistent = ex
                post = to_targets(post_cls, tm, unit.cell_leaf)
                return UnitResult(post, np.zeros_like(post) if consistent else post.copy(), True, n_worlds, share,
                                  consistent, "" if consistent else "no world is consistent with the release")
            # too many to enumerate: drawn cell by cell under the decisions (:mod:`.sequential`)
            from .sequential import solve_sis

            s = solve_sis(unit, K, rep, tm, n_sa, size, worlds, seed)
            if s is not None:
                return s
        if not r.consistent and not force_sample and unit.regions:
            # regions no joint draw passes together (relaxed Mondrian's many small nodes):
            # region by region, through its blocks (:mod:`.blocks`)
            from .blocks import solve_blocks

            b, why = solve_blocks(unit, K, rep, tm, n_sa, worlds, seed)
            if b is not None:
                return b
            r.reason = f"{r.reason}; by blocks: {why}"
        return r
    if unit.likelihood is not None and float(worlds) * unit.n_cells * K.shape[1] > _LIKELIHOOD_ENTRIES:
        nan = np.full((unit.n_cells, tm.shape[2]), np.nan)  # the drawn worlds would not fit in memory
        return UnitResult(nan, nan.copy(), False, 0.0, 0.0, False,
                          f"{worlds:,} worlds of {unit.n_cells:,} cells are too many to weigh at once")
    counts = _uniform_worlds(unit.cell_leaf, unit.cell, K, seed, worlds)
    if unit.likelihood is not None:
        lik = weight_chunked(unit, counts, rep, n_sa)
    else:
        lik = chain_weight(unit, counts, rep, n_sa)
    acc = _Accumulator(unit.n_cells, tm.shape[2])
    acc.add(lik, counts, tm, unit.cell_leaf, size)
    return acc.result(worlds)


def _solve_exact(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, size: np.ndarray,
                 exact_limit: float) -> tuple[np.ndarray, float, float, bool] | None:
    """Exact class-level posterior ``(n_cells, n_cls)`` (expected class count per cell /
    cell size), the number of tables, the accepted weight share and whether some world is
    consistent; ``None`` when too large to enumerate."""
    # the contingency tables (never more than the worlds), at most ~2·10^7 entries at once;
    # a region re-runs the algorithm on every table
    cap = int(min(exact_limit, _TABLE_ENTRIES // max(1, unit.n_cells * K.shape[1]),
                  REGION_WORK // max(1, sum(r.cells.size for r in unit.regions))))
    if unit.likelihood is None and unit.chain is None and unit.decisions is not None:
        from .exact import log_all_tables, pruned

        # decisions checked during the enumeration (:mod:`.exact`): only the tables that keep
        # them (and the partial tables cut off) are visited — at most as many as all tables,
        # so with the same cap never fewer units are exact
        pr = pruned(unit, K, rep, n_sa, min(exact_limit, _TABLE_ENTRIES // max(1, unit.n_cells * K.shape[1])),
                    store_cap=cap if unit.regions else 0)
        if pr is not None:
            if not pr.complete or (unit.regions and pr.tabs is None):
                return None
            if not unit.regions:
                return _kept_posterior(unit, pr, K, size)
            tabs, logw = pr.tabs, pr.logw
            assert tabs is not None and logw is not None  # stored: returned above otherwise
            if tabs.shape[0] == 0:
                return np.full((unit.n_cells, K.shape[1]), np.nan), float(pr.visited), 0.0, False
            lik = weight_chunked(_regions_only(unit), tabs, rep, n_sa)
            w = np.exp(logw - logw.max()) * lik
            tot = w.sum()
            if not tot > 0:
                return np.full((unit.n_cells, K.shape[1]), np.nan), float(pr.visited), 0.0, False
            post_cls = np.einsum("n,ncv->cv", w, tabs.astype(np.float64)) / tot / size[:, None]
            share = math.exp(math.log(tot) + float(logw.max()) - log_all_tables(unit.cell_leaf, size, K))
            return post_cls, float(pr.visited), share, True
    lower = tables_lower_bound(unit.cell_leaf, size, K, cap)
    if lower > cap:  # never enumerate only to give up
        return None
    if lower > _COUNT_FIRST:  # counted first: listing tables only to give up costs ~7x the count
        from .exact import count_tables

        if count_tables(unit.cell_leaf, size, K, cap) is None:
            return None
    enum = unit_tables(unit.cell_leaf, size.astype(np.int64), K, cap)
    if enum is None:
        return None
    tabs, logw = enum
    lik = weight_chunked(unit, tabs, rep, n_sa)
    if unit.chain is not None:  # the chain's prefix factors (when its exact DP was too large)
        from .chain import chain_weight

        lik = lik * chain_weight(unit, tabs, rep, n_sa)
    w = np.exp(logw - logw.max()) * lik
    tot = w.sum()
    if not tot > 0:
        return np.full((unit.n_cells, K.shape[1]), np.nan), float(tabs.shape[0]), 0.0, False
    post_cls = np.einsum("n,ncv->cv", w, tabs.astype(np.float64)) / tot / size[:, None]
    share = float(tot / np.exp(logw - logw.max()).sum())
    return post_cls, float(tabs.shape[0]), share, True


def _kept_posterior(unit: Unit, pr, K: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, float, float, bool]:
    """:func:`_solve_exact`'s answer from a complete enumeration of the tables that keep a
    unit's decisions (a unit without regions)."""
    from .exact import log_all_tables

    if pr.n_kept == 0:
        return np.full((unit.n_cells, K.shape[1]), np.nan), float(pr.visited), 0.0, False
    share = math.exp(math.log(pr.tot) + pr.ref - log_all_tables(unit.cell_leaf, size, K))
    return pr.acc / pr.tot / size[:, None], float(pr.visited), share, True


def _exact_decisions(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, size: np.ndarray, limit: float
                     ) -> tuple[np.ndarray, float, float, bool] | None:
    """The exact posterior of a unit of decisions only, visiting at most ``limit`` tables and
    cut-off partial tables (nothing is stored: memory is the enumeration's depth); ``None``
    past it."""
    from .exact import pruned

    pr = pruned(unit, K, rep, n_sa, limit, store_cap=0)
    if pr is None or not pr.complete:
        return None
    return _kept_posterior(unit, pr, K, size)


def tables_lower_bound(cell_leaf: np.ndarray, size: np.ndarray, K: np.ndarray, cap: float = np.inf) -> float:
    """A lower bound on a unit's number of contingency tables: per leaf, the number of
    count vectors a prefix of its cells can hold (each is the prefix of some table) — the
    coefficient of ``x^rows`` in ``Π_v (1 + x + … + x^K_v)``, largest over the prefixes —
    multiplied over the leaves. Stops once above ``cap`` (coefficients only grow with each
    factor)."""
    out = 1.0
    for lf in range(K.shape[0]):
        pref = np.cumsum(size[cell_leaf == lf]).astype(np.int64)
        top = int(pref.max(initial=0))
        poly = np.ones(1)
        for k in K[lf]:
            poly = np.convolve(poly, np.ones(min(int(k), top) + 1))[:top + 1]
            if out * float(poly[pref[pref < poly.size]].max(initial=1.0)) > cap:
                return float("inf")
        out *= float(poly[pref[pref < poly.size]].max(initial=1.0))
    return out


def _regions_only(unit: Unit) -> Unit:
    """``unit`` weighed by its regions alone (its decisions already kept)."""
    return Unit(unit.rows, unit.cell, unit.cell_leaf, unit.leaf_counts, None, unit.kind, regions=unit.regions)


def _uniform_worlds(cell_leaf: np.ndarray, cell: np.ndarray, K: np.ndarray, seed: int, worlds: int) -> np.ndarray:
    """``(worlds, n_cells, n_cls)`` counts of uniformly drawn worlds (numba Fisher–Yates)."""
    n_cls = K.shape[1]
    order = np.argsort(cell_leaf[cell], kind="stable")
    pos_cell = cell[order].astype(np.int64)
    leaf_of_pos = cell_leaf[pos_cell]
    pos_vals = np.concatenate([np.repeat(np.arange(n_cls), K[lf]) for lf in range(K.shape[0])]).astype(np.int64)
    leaf_ptr = np.concatenate([[0], np.cumsum(np.bincount(leaf_of_pos, minlength=K.shape[0]))])
    return sample_cell_counts(int(seed), pos_vals, leaf_ptr.astype(np.int64), pos_cell, int(cell_leaf.size),
                              n_cls, int(worlds))


class _Accumulator:
    """Streaming self-normalised estimate: sums of ``w``, ``w²``, ``w x``, ``w² x``, ``w² x²``
    per cell and target (``x`` = a world's share of the target in the cell)."""

    def __init__(self, n_cells: int, n_targets: int) -> None:
        self.sw = self.sw2 = 0.0
        self.wx = np.zeros((n_cells, n_targets))
        self.w2x = np.zeros((n_cells, n_targets))
        self.w2x2 = np.zeros((n_cells, n_targets))

    def add(self, w: np.ndarray, counts: np.ndarray, tm: np.ndarray, cell_leaf: np.ndarray,
            size: np.ndarray) -> None:
        live = np.flatnonzero(w > 0)
        self.sw += float(w.sum())
        self.sw2 += float((w ** 2).sum())
        if live.size == 0:
            return
        w = w[live]
        x = to_targets(counts[live], tm, cell_leaf) / size[None, :, None]
        self.wx += np.einsum("w,wct->ct", w, x)
        self.w2x += np.einsum("w,wct->ct", w ** 2, x)
        self.w2x2 += np.einsum("w,wct->ct", w ** 2, x ** 2)

    def scale(self, f: float) -> None:
        """Every weight so far times ``f`` (a new reference for log weights)."""
        self.sw *= f
        self.sw2 *= f * f
        self.wx *= f
        self.w2x *= f * f
        self.w2x2 *= f * f

    def result(self, worlds: int, reason: str = "no drawn world is consistent") -> UnitResult:
        if not self.sw > 0:
            nan = np.full(self.wx.shape, np.nan)
            return UnitResult(nan, nan.copy(), False, float(worlds), 0.0, False, reason)
        post = self.wx / self.sw
        var = self.w2x2 - 2 * post * self.w2x + post ** 2 * self.sw2
        se = np.sqrt(np.maximum(var, 0.0)) / self.sw
        return UnitResult(post, se, False, float(worlds), self.sw ** 2 / self.sw2, True)


# =======================================================================================
# pieces: a large unit of decisions and regions, sampled piece by piece
# =======================================================================================
def _solve_pieces(unit: Unit, K: np.ndarray, rep: np.ndarray, tm: np.ndarray, n_sa: int, size: np.ndarray,
                  worlds: int, seed: int, piece_limit: float) -> UnitResult:
    """Importance sampling of a unit whose weight is a product of decisions and regions:
    the factors are kept inside *pieces* (groups of leaves) while a piece has at most
    ``piece_limit`` worlds — narrow factors first — and each piece is drawn from its exact
    conditional; the other factors weight the joint draws (module docstring)."""
    n_leaves = K.shape[0]
    dec = unit.decisions
    scopes: list[tuple[str, int, np.ndarray]] = []
    if dec is not None:
        for i in range(dec.k):
            scopes.append(("d", i, np.unique(unit.cell_leaf[dec.cells(i)])))
    for j, r in enumerate(unit.regions):
        scopes.append(("r", j, np.unique(unit.cell_leaf[r.live_cells])))
    lw = np.array([log_multinomial(c) for c in K])
    parent = np.arange(n_leaves)
    comp_lw = lw.copy()

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    cap = math.log(max(piece_limit, 1.0))
    comp_rows = np.zeros(n_leaves)  # region rows re-run per table of the piece
    local: list[tuple[str, int]] = []
    deferred: list[tuple[str, int]] = []
    for kind, i, leaves in sorted(scopes, key=lambda s: (s[2].size, float(lw[s[2]].sum()))):
        roots = sorted({find(int(x)) for x in leaves})
        if not roots:  # reads no cell: the same in every world, weighed on the joint draws
            deferred.append((kind, i))
            continue
        tot = float(sum(comp_lw[r_] for r_ in roots))
        rr = float(sum(comp_rows[r_] for r_ in roots)) + (unit.regions[i].cells.size if kind == "r" else 0)
        if tot <= cap and (rr == 0 or tot <= math.log(max(REGION_WORK / rr, 1.0))):
            comp_rows[roots[0]] = rr
            for r_ in roots[1:]:
                parent[r_] = roots[0]
            comp_lw[roots[0]] = tot
            local.append((kind, i))
        else:
            deferred.append((kind, i))
    root_of = np.array([find(x) for x in range(n_leaves)])
    rerun = sum(unit.regions[i].cells.size for k_, i in deferred if k_ == "r")
    pilot = min(worlds, max(PILOT_WORLDS, worlds // 10))
    if rerun:  # the joint draws' re-runs within MAX_RERUN rows: fewer worlds, never below the pilot
        worlds = max(pilot, min(worlds, int(MAX_RERUN // rerun)))
    work = worlds * (unit.n_cells + rerun)
    if work > MAX_WORK or (worlds == pilot and worlds * rerun > MAX_RERUN):
        # coupled too widely to sample within the budget: unresolved
        nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
        return UnitResult(nan, nan.copy(), False, 0.0, 0.0, False,
                          f"coupled beyond the sampling budget ({n_leaves} classes, {unit.n_cells} cells, "
                          f"{0 if dec is None else dec.k} decisions, {len(unit.regions)} regions)")
    rng = np.random.default_rng(seed)
    # each piece with local factors: its exact conditional distribution over tables
    local_by_root: dict[int, list[tuple[str, int]]] = {}
    for kind, i in local:
        leaf0 = int(unit.cell_leaf[(dec.cells(i) if kind == "d" and dec is not None else unit.regions[i].live_cells)[0]])
        local_by_root.setdefault(int(root_of[leaf0]), []).append((kind, i))
    from .exact import pruned

    pieces = []  # (cells, sub-unit, tables keeping the piece's decisions, their log weights)
    for root, facs in local_by_root.items():
        leaves = np.flatnonzero(root_of == root)
        cells = np.flatnonzero(np.isin(unit.cell_leaf, leaves))
        cmap = np.full(unit.n_cells, -1, dtype=np.int64)
        cmap[cells] = np.arange(cells.size)
        lmap = np.full(n_leaves, -1, dtype=np.int64)
        lmap[leaves] = np.arange(leaves.size)
        sub = _sub_unit(unit, facs, cells, cmap, lmap[unit.cell_leaf[cells]], K[leaves])
        lim = int(max(piece_limit, 1))
        pr = pruned(sub, K[leaves], rep, n_sa, lim, store_cap=lim) if sub.decisions is not None else None
        if pr is not None and pr.complete and pr.tabs is not None and pr.logw is not None:
            tabs, logw = pr.tabs, pr.logw
        else:
            enum = unit_tables(sub.cell_leaf, size[cells].astype(np.int64), K[leaves], lim)
            if enum is None:  # cannot happen by construction (tables <= worlds <= limit); stay safe
                deferred.extend(facs)
                continue
            tabs, logw = enum
            if sub.decisions is not None:
                keep = weight_chunked(Unit(sub.rows, sub.cell, sub.cell_leaf, sub.leaf_counts, None, sub.kind,
                                           decisions=sub.decisions), tabs, rep, n_sa) > 0
                tabs, logw = tabs[keep], logw[keep]
        if tabs.shape[0] == 0:  # no world of this piece keeps its decisions
            nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
            return UnitResult(nan, nan.copy(), False, float(worlds), 0.0, False,
                              "no world is consistent with the release")
        pieces.append((cells, sub, tabs, logw))
    # the pieces' regions, re-run together
    items = [(r, tabs, rep) for _, sub, tabs, _ in pieces for r in sub.regions]
    passed = iter(regions_pass(items) if items else [])
    exact_pieces = []
    for cells, sub, tabs, logw in pieces:
        wt = np.exp(logw - logw.max())
        for _ in sub.regions:
            wt = wt * next(passed)
        if not wt.sum() > 0:  # no world of this piece is consistent
            nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
            return UnitResult(nan, nan.copy(), False, float(worlds), 0.0, False,
                              "no world is consistent with the release")
        exact_pieces.append((cells, tabs, np.cumsum(wt / wt.sum())))
    in_exact = np.zeros(unit.n_cells, dtype=bool)
    for cells, _, _ in exact_pieces:
        in_exact[cells] = True
    free = np.flatnonzero(~in_exact)
    joint = Unit(unit.rows, unit.cell, unit.cell_leaf, unit.leaf_counts, None, unit.kind,
                 decisions=None if dec is None else dec.subset(np.array([i for k_, i in deferred if k_ == "d"],
                                                                         dtype=np.int64)),
                 regions=[unit.regions[i] for k_, i in deferred if k_ == "r"])
    acc = _Accumulator(unit.n_cells, tm.shape[2])
    step = max(1, int(_TABLE_ENTRIES // max(1, unit.n_cells * K.shape[1])))
    free_leaves = np.unique(unit.cell_leaf[free])
    # the pilot's draws first: a unit none of them keeps stops there (unresolved)
    bounds = sorted({0, pilot, worlds} | set(range(pilot, worlds, step)) | set(range(0, pilot, step)))
    for a, b in zip(bounds[:-1], bounds[1:]):
        if a == pilot and not acc.sw > 0:
            return acc.result(a, f"no consistent world in the first {a} draws")
        w_n = b - a
        counts = np.zeros((w_n, unit.n_cells, K.shape[1]), dtype=np.int32)
        if free.size:
            fmap = np.full(n_leaves, -1, dtype=np.int64)
            fmap[free_leaves] = np.arange(free_leaves.size)
            frow = np.flatnonzero(~in_exact[unit.cell])
            fcell_map = np.full(unit.n_cells, -1, dtype=np.int64)
            fcell_map[free] = np.arange(free.size)
            counts[:, free, :] = _uniform_worlds(fmap[unit.cell_leaf[free]], fcell_map[unit.cell[frow]],
                                                 K[free_leaves], int(rng.integers(2**31 - 1)), w_n)
        for cells, tabs, cdf in exact_pieces:
            pick = np.minimum(np.searchsorted(cdf, rng.random(w_n) * cdf[-1], side="right"), cdf.size - 1)
            counts[:, cells, :] = tabs[pick]
        w = weight_chunked(joint, counts, rep, n_sa) if (joint.decisions is not None and joint.decisions.k) \
            or joint.regions else np.ones(w_n)
        acc.add(w, counts, tm, unit.cell_leaf, size)
    return acc.result(worlds)


def _sub_unit(unit: Unit, facs: list[tuple[str, int]], cells: np.ndarray, cmap: np.ndarray,
              cell_leaf: np.ndarray, K: np.ndarray) -> Unit:
    """The unit restricted to ``cells`` with the factors ``facs`` (cells renumbered)."""
    dec = unit.decisions
    d_idx = np.array([i for k, i in facs if k == "d"], dtype=np.int64)
    regions = [Region(np.where(unit.regions[i].cells >= 0, cmap[unit.regions[i].cells], -1), unit.regions[i].check,
                      unit.regions[i].fixed_sa, unit.regions[i].batch) for k, i in facs if k == "r"]
    sub_dec = dec.subset(d_idx).remap(cmap) if (dec is not None and d_idx.size) else None
    rows_mask = np.isin(unit.cell, cells)
    return Unit(unit.rows[rows_mask], cmap[unit.cell[rows_mask]], cell_leaf, K, None, unit.kind,
                decisions=sub_dec, regions=regions)
