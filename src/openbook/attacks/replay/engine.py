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

How a unit is solved — exactly or by sampling — is :mod:`.solve`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import lgamma
from typing import Any, Callable, Sequence

import numpy as np

from .kernels import unit_tables_nb

#: chunk of (world × checked group) rows per model call
_CHUNK_ROWS = 400_000


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
            assert n_sa is not None
            full = np.zeros((W, 2 * k, int(n_sa)), dtype=np.int64)
            full[:, :, rep] = sides
            sides = full
        if self.off_left is not None:
            assert self.off_right is not None  # the offsets come as a pair
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
        assert self.fixed_sa is not None  # cells not live have fixed SA codes
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
    #: why (with ``unresolved``)
    unresolved_reason: str = "a structure the replay does not model"
    #: a GG/RGG one-group chain as data: ``(model, domain, p, stop)`` (batched sampling)
    chain_params: tuple | None = None
    #: a constant unit whose posterior is only bounded: the class frequency times this factor
    #: (``1 / P(no world excluded)``, a lower bound on that probability — :mod:`.lattice`) is an
    #: upper bound, stated as the class frequency plus three standard errors
    inflate: float = 1.0
    #: a unit solved in closed form elsewhere: each cell's posterior over the SA values
    #: ``(n_cells, n_sa)`` (:mod:`.anatomized_order`)
    posterior: np.ndarray | None = None

    @property
    def n_cells(self) -> int:
        return int(self.cell_leaf.size)

    @property
    def cell_size(self) -> np.ndarray:
        return np.bincount(self.cell, minlength=self.n_cells)

    @property
    def constant(self) -> bool:
        return (self.likelihood is None and self.chain is None and self.decisions is None and not self.regions
                and self.posterior is None)

    def log_worlds(self) -> float:
        """log of the number of possible worlds (multiset permutations, all leaves)."""
        return sum(log_multinomial(c) for c in self.leaf_counts)


def log_multinomial(c: np.ndarray) -> float:
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


def regions_pass(items: Sequence[tuple[Region, np.ndarray, np.ndarray | None]]) -> list[np.ndarray]:
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
            uniq, inv = distinct_rows(sub)
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


def distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, axis=0, return_inverse=True)`` of an integer matrix, fast for wide
    rows: the rows are told apart by two random 64-bit hashes (a 16-byte key, not the row's
    bytes), and every row is then compared with its key's representative — a collision (never
    seen; ~``W²/2^128``) falls back to ``np.unique``, so the answer is always exact."""
    if x.shape[1] <= 2:
        u, inv = np.unique(x, axis=0, return_inverse=True)
        return u, inv.ravel()
    h = row_hash(x)
    _, first, inv = np.unique(np.ascontiguousarray(h).view(np.dtype((np.void, 16))).ravel(), return_index=True,
                              return_inverse=True)
    inv = inv.ravel()
    if not np.array_equal(x, x[first][inv]):
        u, inv2 = np.unique(x, axis=0, return_inverse=True)
        return u, inv2.ravel()
    return x[first], inv


def row_hash(x: np.ndarray) -> np.ndarray:
    """``(W, 2)`` int64: two random linear hashes of each row (wrapping mod 2^64)."""
    coef = np.random.default_rng(0x5EED).integers(1, 2**62, size=(2, x.shape[1]), dtype=np.int64)
    xi = x.astype(np.int64, copy=False)
    with np.errstate(over="ignore"):
        return np.stack([xi @ coef[0], xi @ coef[1]], axis=1)


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
    """Counts over the unit's classes ``rep`` as counts over the full SA domain (a new int64
    array). Gathered along the last axis — a scatter into it (``full[..., rep] = part``) was
    ~6x slower, a plain copy when ``rep`` is the whole domain in order ~30x."""
    rep = np.asarray(rep)
    if rep.size == n_sa and np.array_equal(rep, np.arange(n_sa)):
        return np.array(part, dtype=np.int64)
    src = np.full(n_sa, part.shape[-1], dtype=np.int64)  # a value of no class: the zero column
    src[rep] = np.arange(rep.size)
    ext = np.concatenate([np.asarray(part, dtype=np.int64), np.zeros(part.shape[:-1] + (1,), np.int64)], axis=-1)
    return np.take(ext, src, axis=-1)


def weight_chunked(unit: Unit, tabs: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    N = tabs.shape[0]
    step = max(1, _CHUNK_ROWS // max(1, unit.n_cells * tabs.shape[2]))
    out = np.empty(N)
    for a in range(0, N, step):
        out[a:a + step] = weight(unit, tabs[a:a + step], rep, n_sa)
    return out
