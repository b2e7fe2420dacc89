"""The world engine of the replay adversary (paper 000 §5.1): units, cells, exact
enumeration of the possible worlds, sampling with standard errors.

A *unit* is a set of published classes ("leaves" of the unit) replayed together; its rows
are cut into *cells* — rows every check of the unit treats alike (a GG bucket, an SG half,
a Mondrian atom). A possible world assigns each class's published SA multiset to its
members uniformly at random (§5.1: "uniformly at random create an assignment of the
sensitive values to the tuples"); the replay needs only each world's SA counts per cell,
a contingency table. The world's weight is the probability that the algorithm, re-run on
it, publishes what was observed: a product of

* ``likelihood(counts)`` — a function of the whole unit (GG's last group, a re-run);
* ``chain`` — GG/RGG's per-prefix factors (exact forward–backward, :mod:`.chain`);
* :class:`Decisions` — decisions of a planner that must come out as observed (SG's refused
  split, Mondrian's refused or taken cuts), each a function of two sides' SA counts;
* :class:`Region` — a node re-run on the world whose output is compared with the observed
  classes (Mondrian cuts whose other outcome could publish the same file).

**Exact or sampled.** A unit with at most ``exact_limit`` contingency tables is solved
exactly (every table, weighted by its number of worlds). A larger unit is sampled: with
decisions and regions only, it is cut into *pieces* small enough to enumerate, joined by
the factors too wide to keep inside one piece; each piece is drawn from its exact
conditional distribution and the joining factors weight the joint draws (importance
sampling); otherwise worlds are drawn uniformly and weighted by the likelihood. The
posterior is self-normalised and its standard error is ``sqrt(Σ w²(x-x̂)²)/Σ w``; a unit
no drawn world reproduces is *unresolved*. Budgets (:data:`MAX_WORK`, :data:`MAX_RERUN`,
the pilot :data:`PILOT_WORLDS`) cap what one unit may cost; a unit past them is unresolved
too, with the reason (``UnitResult.reason``) — unresolved people count as failing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from math import lgamma
from typing import Any, Callable

import numpy as np

from .kernels import sample_cell_counts, unit_tables_nb

#: chunk of (world × checked group) rows per model call
_CHUNK_ROWS = 400_000
#: table entries (tables × cells × classes) held at once
_TABLE_ENTRIES = 2e7
#: rows re-run per region check of an exact enumeration or a piece (tables × region rows)
REGION_WORK = 2e6
#: a sampled unit costing more (worlds × cells, plus re-run rows) is left unresolved
MAX_WORK = 5e7
#: worlds of one piece of a sampled unit (its exact conditional is enumerated)
PIECE_LIMIT = 2e4
#: rows re-run (worlds × rows of the regions checked on the joint draws) per sampled unit;
#: a unit whose regions would need more draws fewer worlds (its standard errors say so),
#: never fewer than the pilot's; one whose pilot alone needs more is unresolved
MAX_RERUN = 4e6
#: the first draws of a sampled unit (at least this many, or a tenth of its worlds): a unit
#: none of whose first draws is consistent is left unresolved without drawing the rest
PILOT_WORLDS = 200


def holds(model: Any, domain: Any, counts: np.ndarray) -> np.ndarray:
    """``model.holds`` over the last axis of ``counts`` (any leading shape)."""
    shp = counts.shape[:-1]
    return np.asarray(model.holds(counts.reshape(-1, counts.shape[-1]), domain), dtype=bool).reshape(shp)


@dataclass
class Decisions:
    """``k`` decisions a planner makes from two sides' SA counts: decision ``i`` takes its
    cut iff both sides satisfy the model, and must come out as ``accepted[i]``. Side counts
    are the unit's cells ``left[i]`` / ``right[i]`` plus constant offsets (rows whose SA
    counts every world shares)."""

    model: Any
    domain: Any
    left: list[np.ndarray]
    right: list[np.ndarray]
    accepted: np.ndarray
    off_left: np.ndarray | None = None    # (k, n_sa)
    off_right: np.ndarray | None = None
    _lr: Any = field(default=None, repr=False)

    @property
    def k(self) -> int:
        return len(self.left)

    def cells(self, i: int) -> np.ndarray:
        return np.concatenate([self.left[i], self.right[i]])

    def subset(self, idx: np.ndarray) -> "Decisions":
        idx = np.asarray(idx, dtype=np.int64)
        return Decisions(self.model, self.domain, [self.left[i] for i in idx], [self.right[i] for i in idx],
                         self.accepted[idx], None if self.off_left is None else self.off_left[idx],
                         None if self.off_right is None else self.off_right[idx])

    def remap(self, cell_map: np.ndarray) -> "Decisions":
        """The same decisions over renumbered cells (``cell_map[old] = new``)."""
        return Decisions(self.model, self.domain, [cell_map[c] for c in self.left], [cell_map[c] for c in self.right],
                         self.accepted, self.off_left, self.off_right)

    def key(self) -> Any:
        off = (b"" if self.off_left is None else np.ascontiguousarray(self.off_left, dtype=np.int64).tobytes()
               + np.ascontiguousarray(self.off_right, dtype=np.int64).tobytes())
        return ("decisions", tuple((tuple(a.tolist()), tuple(b.tolist())) for a, b in zip(self.left, self.right)),
                self.accepted.tobytes(), off)

    def satisfied(self, counts: np.ndarray, rep: np.ndarray | None = None, n_sa: int | None = None) -> np.ndarray:
        """``(W, k)``: does each world make each decision as observed? ``counts`` is
        ``(W, n_cells, V)`` over the classes ``rep`` (SA codes; default the full domain)."""
        W, n_cells, v = counts.shape
        k = self.k
        if self._lr is None or self._lr.shape[0] != n_cells:
            cols = np.concatenate([np.full(c.size, i) for i, c in enumerate(self.left)]
                                  + [np.full(c.size, k + i) for i, c in enumerate(self.right)]).astype(np.int64)
            rows = np.concatenate(self.left + self.right).astype(np.int64)
            if n_cells * 2 * k <= 200_000:
                self._lr = np.zeros((n_cells, 2 * k), dtype=np.float32)
                self._lr[rows, cols] = 1.0
            else:  # wide units: a sparse side matrix
                from scipy.sparse import csc_matrix

                self._lr = csc_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(n_cells, 2 * k))
        # (W·v, cells) @ (cells, 2k): both sides of every decision in one product (exact in
        # float32 below 2^24 rows)
        flat = np.swapaxes(counts, 1, 2).reshape(W * v, n_cells).astype(np.float32)
        sides = np.asarray(self._lr.T.dot(flat.T).T).reshape(W, v, 2 * k)
        sides = np.rint(sides).astype(np.int64).transpose(0, 2, 1)  # (W, 2k, v)
        if rep is not None:
            full = np.zeros((W, 2 * k, int(n_sa)), dtype=np.int64)
            full[:, :, rep] = sides
            sides = full
        if self.off_left is not None:
            sides[:, :k] += self.off_left[None]
            sides[:, k:] += self.off_right[None]
        pair = np.stack([sides[:, :k], sides[:, k:]], axis=2)  # (W, k, 2, n_sa)
        both = holds(self.model, self.domain, pair).all(axis=2)
        return both == self.accepted[None, :]


@dataclass
class Region:
    """A part of the unit the algorithm is re-run on in each world: ``cells`` — the cell of
    each of its rows, in the order the algorithm reads them (rows of one cell are treated
    alike by the algorithm, so which of them holds which value does not matter) — and
    ``check(sa (W, r)) -> (W,)`` bool: does the re-run on these SA codes publish the
    observed classes? Rows of *fixed* classes (one value class, the same counts in every
    world, :func:`.splits.assemble_units`) belong to no cell of the unit: ``cells`` is
    ``-1`` there and ``fixed_sa`` gives their SA codes."""

    cells: np.ndarray
    check: Callable[[np.ndarray], np.ndarray]
    fixed_sa: np.ndarray | None = None
    #: ``(checker, rows)``: ``checker.check_many([(rows, sa), …])`` checks many regions'
    #: worlds in one re-run (:func:`regions_pass`)
    batch: Any = None

    @property
    def live_cells(self) -> np.ndarray:
        """The unit cells the region reads (its rows of fixed classes excluded)."""
        return self.cells[self.cells >= 0]

    def row_values(self, counts: np.ndarray, rep: np.ndarray | None = None) -> np.ndarray:
        """``(W, r)`` SA code of each row: a cell's values (classes ``rep``; default the
        SA codes) dealt to its rows in order; rows of fixed classes their own code."""
        live = self.cells >= 0
        ucells, idx = np.unique(self.cells[live], return_inverse=True)
        idx = idx.ravel()
        rank = np.zeros(idx.size, dtype=np.int64)
        order = np.argsort(idx, kind="stable")
        starts = np.searchsorted(idx[order], np.arange(ucells.size))
        rank[order] = np.arange(idx.size) - starts[idx[order]]
        cum = np.cumsum(counts[:, ucells, :], axis=2)  # (W, U, v)
        j = (cum[:, idx, :] <= rank[None, :, None]).sum(axis=2)
        vals = j if rep is None else np.asarray(rep)[j]
        if live.all():
            return vals
        out = np.empty((counts.shape[0], self.cells.size), dtype=np.int64)
        out[:, live] = vals
        out[:, ~live] = self.fixed_sa[~live][None, :]
        return out


@dataclass
class Unit:
    """One independently replayed set of published classes (module docstring).

    ``rows``: global row ids, cells contiguous, cells of a leaf contiguous; ``cell`` the
    cell of each of those rows; ``cell_leaf`` the leaf (class) of each cell; ``leaf_counts``
    the published SA counts ``(n_leaves, n_sa)``; the weight of a world is the product of
    ``likelihood``, ``chain``, ``decisions`` and ``regions`` (all absent: constant).
    """

    rows: np.ndarray
    cell: np.ndarray
    cell_leaf: np.ndarray
    leaf_counts: np.ndarray
    likelihood: Callable[[np.ndarray], np.ndarray] | None
    kind: str
    #: GG/RGG: factor of prefix ``j`` given the prefix's SA counts ``(N, n_sa)`` — the
    #: likelihood is their product over the prefixes, a Markov chain (exact forward-backward)
    chain: Callable[[int, np.ndarray], np.ndarray] | None = None
    #: SA values the model looks at one by one (the rest are lumped: their arrangement never
    #: changes any check)
    set_mask: np.ndarray | None = None
    #: hashable description of the weight given the cells (``None``: never cached) — two
    #: units with equal keys, cell sizes and class counts have the same exact posterior
    key: Any = None
    decisions: Decisions | None = None
    regions: list[Region] = field(default_factory=list)
    #: rows of the unit nobody can resolve (e.g. a structure the replay does not model)
    unresolved: bool = False
    #: a GG/RGG one-group chain as data: ``(model, domain, p, stop)`` (batched sampling)
    chain_params: tuple | None = None

    @property
    def n_cells(self) -> int:
        return int(self.cell_leaf.size)

    @property
    def cell_size(self) -> np.ndarray:
        return np.bincount(self.cell, minlength=self.n_cells)

    @property
    def constant(self) -> bool:
        return self.likelihood is None and self.chain is None and self.decisions is None and not self.regions

    def log_worlds(self) -> float:
        """log of the number of possible worlds (multiset permutations, all leaves)."""
        return sum(_log_multinomial(c) for c in self.leaf_counts)


def _log_multinomial(c: np.ndarray) -> float:
    return lgamma(float(np.sum(c)) + 1) - sum(lgamma(float(x) + 1) for x in np.asarray(c).tolist() if x > 1)


def weight(unit: Unit, counts: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    """The weight of each world: ``counts`` ``(W, n_cells, V)`` over the unit's classes
    ``rep`` (:func:`classes`), without the chain (which :mod:`.chain` handles)."""
    out = np.ones(counts.shape[0])
    if unit.likelihood is not None:
        out *= unit.likelihood(expand(counts, rep, n_sa))
    if unit.decisions is not None and unit.decisions.k:
        out *= unit.decisions.satisfied(counts, rep, n_sa).all(axis=1)
    if unit.regions:
        live = np.flatnonzero(out > 0)
        if live.size:
            ok = regions_pass([(r, counts[live], rep) for r in unit.regions])
            out[live[~np.logical_and.reduce(ok)]] = 0.0
    return out


def regions_pass(items: list[tuple[Region, np.ndarray, np.ndarray | None]]) -> list[np.ndarray]:
    """For each ``(region, counts (W, cells, V), rep)``: ``(W,)`` does the re-run of the
    region publish the observed classes in each world? A check depends only on the counts
    of the region's cells, so each distinct configuration is re-run once, and the regions
    that share a checker (``Region.batch``) are re-run together."""
    out: list[np.ndarray | None] = [None] * len(items)
    groups: dict[int, tuple[Any, list]] = {}
    for k, (r, counts, rep) in enumerate(items):
        cells = np.unique(r.live_cells)
        sub = counts[:, cells, :].reshape(counts.shape[0], -1)
        if counts.shape[0] > 1:
            uniq, inv = np.unique(sub, axis=0, return_inverse=True)
            inv = inv.ravel()
        else:
            uniq, inv = sub, np.zeros(1, dtype=np.int64)
        full = np.zeros((uniq.shape[0],) + counts.shape[1:], dtype=counts.dtype)
        full[:, cells, :] = uniq.reshape(uniq.shape[0], cells.size, counts.shape[2])
        vals = r.row_values(full, rep)
        if r.batch is None:
            out[k] = np.asarray(r.check(vals), dtype=bool)[inv]
        else:
            groups.setdefault(id(r.batch[0]), (r.batch[0], []))[1].append((k, r.batch[1], vals, inv))
    for checker, reqs in groups.values():
        res = checker.check_many([(rows, vals) for _, rows, vals, _ in reqs])
        for (k, _, _, inv), ok in zip(reqs, res):
            out[k] = np.asarray(ok, dtype=bool)[inv]
    return out  # type: ignore[return-value]


# =======================================================================================
# exact enumeration of contingency tables
# =======================================================================================
def leaf_tables(cell_sizes: np.ndarray, counts: np.ndarray, limit: int) -> np.ndarray | None:
    """All ``(N, n_cells, n_vals)`` tables with row sums ``cell_sizes`` and column sums
    ``counts`` (numba depth-first enumeration), or ``None`` when there are more than
    ``limit``."""
    sizes = np.asarray(cell_sizes, dtype=np.int64)
    tabs, ok = unit_tables_nb(sizes, np.zeros(sizes.size, dtype=np.int64), np.asarray(counts, dtype=np.int64)[None],
                              int(min(limit, 2**62)))
    return tabs if ok else None


def unit_tables(cell_leaf: np.ndarray, size: np.ndarray, K: np.ndarray, limit: int
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """Cartesian product over the leaves of their tables: ``(N, n_cells, n_cls)`` and the
    log number of worlds of each (``None`` above ``limit``)."""
    per_leaf = []
    total = 1
    for lf in range(K.shape[0]):
        cells = np.flatnonzero(cell_leaf == lf)
        t = leaf_tables(size[cells], K[lf], limit)
        if t is None:
            return None
        total *= t.shape[0]
        if total > limit:
            return None
        per_leaf.append((cells, t))
    N = total
    out = np.zeros((N, cell_leaf.size, K.shape[1]), dtype=np.int32)
    rep = N
    tile = 1
    for cells, t in per_leaf:
        rep //= t.shape[0]
        idx = np.tile(np.repeat(np.arange(t.shape[0]), rep), tile)
        out[:, cells, :] = t[idx]
        tile *= t.shape[0]
    lg = lgamma_table(int(out.max(initial=0)) + 1)
    logw = -lg[out].reshape(N, -1).sum(axis=1)
    return out, logw


def lgamma_table(n: int) -> np.ndarray:
    return np.array([lgamma(i + 1.0) for i in range(n)])


def expand(part: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    """Counts over the unit's classes ``rep`` as counts over the full SA domain."""
    full = np.zeros(part.shape[:-1] + (n_sa,), dtype=np.int64)
    full[..., rep] = part
    return full


def weight_chunked(unit: Unit, tabs: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    N = tabs.shape[0]
    step = max(1, _CHUNK_ROWS // max(1, unit.n_cells * tabs.shape[2]))
    out = np.empty(N)
    for a in range(0, N, step):
        out[a:a + step] = weight(unit, tabs[a:a + step], rep, n_sa)
    return out


# =======================================================================================
# solving a unit
# =======================================================================================
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


def solve_unit(unit: Unit, target_masks: np.ndarray, *, worlds: int, seed: int, exact_limit: float = 1e6,
               force_sample: bool = False, cache: dict | None = None, piece_limit: float | None = None
               ) -> UnitResult:
    """Posterior per cell and target of one unit: exact when at most ``exact_limit``
    states / tables, else sampled (module docstring). ``piece_limit`` (default
    :data:`PIECE_LIMIT`) bounds the worlds of one piece of a sampled unit."""
    from .chain import chain_dp, chain_weight

    n_sa = unit.leaf_counts.shape[1]
    rep, K, tm = classes(unit, target_masks)
    size = unit.cell_size.astype(np.float64)
    if unit.unresolved:
        nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
        return UnitResult(nan, nan.copy(), False, 0.0, 0.0, False, "a structure the replay does not model")
    if unit.constant:  # nothing excluded: the class frequency
        leaf_freq = K / K.sum(axis=1, keepdims=True)
        post = np.einsum("cv,cvt->ct", leaf_freq[unit.cell_leaf], tm[unit.cell_leaf])
        return UnitResult(post, np.zeros_like(post), True, 1.0, 1.0, True)
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
            if key is not None and hit is None:
                cache[key] = ex
            post_cls, n_worlds, share, consistent = ex
            post = np.einsum("cv,cvt->ct", post_cls, tm[unit.cell_leaf])
            se = np.zeros_like(post) if consistent else post.copy()
            return UnitResult(post, se, True, n_worlds, share, consistent,
                              "" if consistent else "no world is consistent with the release")
    if unit.likelihood is None and unit.chain is None:
        return _solve_pieces(unit, K, rep, tm, n_sa, size, worlds, seed,
                             PIECE_LIMIT if piece_limit is None else piece_limit)
    counts = _uniform_worlds(unit.cell_leaf, unit.cell, K, seed, worlds)
    if unit.likelihood is not None:
        lik = weight_chunked(unit, counts, rep, n_sa)
    else:
        lik = chain_weight(unit, counts, rep, n_sa)
    acc = _Accumulator(unit.n_cells, tm.shape[2])
    acc.add(lik, counts, tm[unit.cell_leaf], size)
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
                if pr.n_kept == 0:
                    return np.full((unit.n_cells, K.shape[1]), np.nan), float(pr.visited), 0.0, False
                share = math.exp(math.log(pr.tot) + pr.ref - log_all_tables(unit.cell_leaf, size, K))
                return pr.acc / pr.tot / size[:, None], float(pr.visited), share, True
            tabs, logw = pr.tabs, pr.logw
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
    if tables_lower_bound(unit.cell_leaf, size, K, cap) > cap:  # never enumerate only to give up
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

    def add(self, w: np.ndarray, counts: np.ndarray, tm_cells: np.ndarray, size: np.ndarray) -> None:
        live = np.flatnonzero(w > 0)
        self.sw += float(w.sum())
        self.sw2 += float((w ** 2).sum())
        if live.size == 0:
            return
        w = w[live]
        x = np.einsum("wcv,cvt->wct", counts[live].astype(np.float64), tm_cells) / size[None, :, None]
        self.wx += np.einsum("w,wct->ct", w, x)
        self.w2x += np.einsum("w,wct->ct", w ** 2, x)
        self.w2x2 += np.einsum("w,wct->ct", w ** 2, x ** 2)

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
    lw = np.array([_log_multinomial(c) for c in K])
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
        leaf0 = int(unit.cell_leaf[(dec.cells(i) if kind == "d" else unit.regions[i].live_cells)[0]])
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
        if pr is not None and pr.complete and pr.tabs is not None:
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
    tm_cells = tm[unit.cell_leaf]
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
        acc.add(w, counts, tm_cells, size)
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
