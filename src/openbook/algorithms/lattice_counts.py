"""Equivalence classes of full-domain nodes from counts, rolled up from finer nodes
(LeFevre et al., Incognito, SIGMOD 2005, §3 "rollup"; Kohlmayer et al., Flash, 2012, §5:
ARX's snapshots of a finer transformation).

A node needs only class counts, never rows: its classes are the distinct QI code tuples
(*combinations*) of the table generalized to the node's levels, each class with its size
and SA count vector. :class:`LatticeData` holds the combinations (level-0 code tuples,
duplicates merged) and their SA count matrix — built from an :class:`EncodedTable` or
from any (distinct tuples, SA counts) arrays, such as a frequency table streamed from
Arrow batches.

:class:`ClassEngine` computes the classes of a node. When node ``v <= u`` (componentwise)
has been computed, each class of ``u`` is a union of classes of ``v`` (a hierarchy level's
code is a function of the level below it), so ``u`` is computed from ``v``'s classes — one
representative combination each, their sizes and SA counts summed — instead of from every
combination: a mixed-radix key over the representatives' generalized codes, a dense
renumbering and two ``bincount`` calls over ``v``'s classes. The finest cached node below
``u`` with the fewest classes is the source; the bottom node (the combinations themselves)
is always cached.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..models.base import SADomain

#: keys spanning at most this many times their count (plus a constant) are renumbered by a
#: lookup table; wider ones by a sort (or pandas' hash table when pandas is loaded)
_DENSE_FACTOR, _DENSE_SLACK = 4, 1 << 16
#: cache budget in array entries (combination class ids dominate: m per cached node)
_CACHE_ENTRIES = 1 << 25


def renumber(key: np.ndarray, upper: int) -> tuple[np.ndarray, int]:
    """Dense ids ``0..G-1`` of non-negative int64 ``key`` values below ``upper`` (any
    order), and ``G``."""
    n = key.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if upper <= _DENSE_FACTOR * n + _DENSE_SLACK:
        present = np.zeros(upper, dtype=np.bool_)
        present[key] = True
        rank = np.cumsum(present, dtype=np.int64)
        return rank[key] - 1, int(rank[-1])
    if "pandas" in sys.modules:
        codes, uniq = sys.modules["pandas"].factorize(key)
        return codes.astype(np.int64, copy=False), len(uniq)
    uniq, ids = np.unique(key, return_inverse=True)
    return ids.reshape(-1).astype(np.int64, copy=False), len(uniq)


class LatticeData:
    """Distinct QI combinations with their SA counts, and the QI hierarchies.

    Parameters
    ----------
    combos: ``(m, d)`` leaf codes of each combination (duplicates are merged).
    sa_counts: ``(m, n_sa)`` non-negative SA counts of each combination.
    hierarchies: one :class:`openbook.hierarchy.Hierarchy` per QI (leaf codes = ``combos``).
    domain: the SA domain the privacy models read (values, global counts, ...).
    qi_names: the QI names (default ``q0, q1, ...``).
    """

    def __init__(self, combos, sa_counts, hierarchies, domain: SADomain, qi_names=None) -> None:
        combos = np.asarray(combos, dtype=np.int64)
        counts = np.asarray(sa_counts, dtype=np.int64)
        if combos.ndim != 2 or counts.ndim != 2 or len(combos) != len(counts):
            raise ParameterError(f"combos {combos.shape} and sa_counts {counts.shape} must be (m, d) and (m, n_sa)",
                                 parameter="combos")
        self.h = list(hierarchies)
        self.d = combos.shape[1]
        if len(self.h) != self.d:
            raise ParameterError(f"{len(self.h)} hierarchies for {self.d} QIs", parameter="hierarchies")
        if counts.size and counts.min() < 0:
            raise ParameterError("sa_counts must be non-negative", parameter="sa_counts")
        for j, h in enumerate(self.h):
            if combos.size and (combos[:, j].min() < 0 or combos[:, j].max() >= h.n_leaves):
                raise ParameterError(f"QI {j}: codes outside 0..{h.n_leaves - 1}", parameter="combos")
        self.domain = domain
        self.qi_names = list(qi_names) if qi_names is not None else [f"q{j}" for j in range(self.d)]
        self.heights = np.array([h.height for h in self.h], dtype=np.int64)
        # dense code of each leaf at each level, and the loss (coverage - 1)/(leaves - 1) of each code
        self.level_codes: list[list[np.ndarray]] = []
        self.level_radix: list[list[int]] = []
        self.level_loss: list[list[np.ndarray]] = []
        for h in self.h:
            codes_j, radix_j, loss_j = [], [], []
            nl = max(h.n_leaves - 1, 1)
            cov = np.asarray(h.coverage, dtype=np.float64)
            for lv in range(h.height + 1):
                uniq, inv = np.unique(np.asarray(h.ancestor_table[lv]), return_inverse=True)
                codes_j.append(inv.reshape(-1).astype(np.int64))
                radix_j.append(len(uniq))
                loss_j.append((cov[uniq] - 1.0) / nl)
            self.level_codes.append(codes_j)
            self.level_radix.append(radix_j)
            self.level_loss.append(loss_j)
        # merge duplicate combinations (level-0 classes are distinct code tuples)
        key, radix = np.zeros(len(combos), dtype=np.int64), 1
        for j in range(self.d):
            key, radix = _push(key, radix, combos[:, j], self.h[j].n_leaves)
        ids, m = renumber(key, radix)
        if m < len(combos):
            first = np.full(m, len(combos), dtype=np.int64)
            np.minimum.at(first, ids, np.arange(len(combos)))
            merged = np.zeros((m, counts.shape[1]), dtype=np.int64)
            np.add.at(merged, ids, counts)
            combos, counts = combos[first], merged
        self.combos = combos
        self.combo_t = [np.ascontiguousarray(combos[:, j]) for j in range(self.d)]
        self.counts = counts
        self.sizes = counts.sum(axis=1)
        self.m, self.n_sa = counts.shape
        self.n = int(self.sizes.sum())
        # each combination's code at each level of each QI, when small enough (one gather a roll-up)
        total = sum(int(h) + 1 for h in self.heights.tolist()) * self.m
        self._combo_codes = None
        if total <= _CACHE_ENTRIES:
            self._combo_codes = [[self.level_codes[j][lv][self.combo_t[j]].astype(np.int32)
                                  for lv in range(self.heights[j] + 1)] for j in range(self.d)]
        #: loss mass of each QI at each level: Σ_rows (coverage - 1)/(leaves - 1)
        every = np.arange(self.m)
        self.level_mass = [np.array([_mass(self.sizes, self.level_loss[j][lv][self.codes_at(j, lv, every)])
                                     for lv in range(self.heights[j] + 1)]) for j in range(self.d)]

    def codes_at(self, j: int, level: int, rep: np.ndarray) -> np.ndarray:
        """Dense code of QI ``j`` at ``level`` for the combinations ``rep``."""
        if self._combo_codes is not None:
            return self._combo_codes[j][level][rep]
        return self.level_codes[j][level][self.combo_t[j][rep]]


def _mass(sizes: np.ndarray, loss: np.ndarray) -> float:
    """``sizes · loss`` without BLAS (its threads spin on a loaded machine)."""
    return float(np.multiply(sizes, loss).sum())


def _push(key: np.ndarray, radix: int, col: np.ndarray, card: int) -> tuple[np.ndarray, int]:
    """Append one mixed-radix digit (Python-int guard: renumber first if the product would
    leave int64)."""
    if radix == 1:
        return col.astype(np.int64), card
    if radix * card >= 2**62:
        key, radix = renumber(key, radix)
    key = key * card
    key += col
    return key, radix * card


@dataclass
class NodeClasses:
    """The classes of one node: ``combo_class[c]`` is combination ``c``'s class, ``rep``
    one combination per class, ``sizes`` and ``counts`` (``None`` when not needed) per
    class."""

    levels: tuple[int, ...]
    combo_class: np.ndarray
    rep: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray | None

    @property
    def n_classes(self) -> int:
        return len(self.sizes)


class ClassEngine:
    """Classes of any node, rolled up from the cached node below it with the fewest
    classes. ``with_counts=False`` skips the SA counts (models that read sizes only)."""

    def __init__(self, data: LatticeData, with_counts: bool = True) -> None:
        self.data = data
        self.with_counts = with_counts
        m = data.m
        bottom = NodeClasses(tuple([0] * data.d), np.arange(m, dtype=np.int64), np.arange(m, dtype=np.int64),
                             data.sizes, data.counts if with_counts else None)
        self.bottom = bottom
        self.capacity = max(4, min(256, _CACHE_ENTRIES // max(m, 1)))
        self._levels = np.zeros((0, data.d), dtype=np.int64)
        self._nodes: list[NodeClasses] = []
        self._ncls = np.zeros(0, dtype=np.int64)
        self.n_computed = 0

    def classes(self, levels) -> NodeClasses:
        """The classes of the node at ``levels`` (cached: a later node may roll up from it)."""
        u = np.asarray(levels, dtype=np.int64)
        src = self.bottom
        if len(self._nodes):
            below = np.flatnonzero((self._levels <= u).all(axis=1))
            if below.size:
                src = self._nodes[int(below[np.argmin(self._ncls[below])])]
                if src.levels == tuple(u.tolist()):
                    return src
        if not u.any():
            return self.bottom
        out = self._roll_up(src, u)
        self._store(out)
        return out

    def _roll_up(self, src: NodeClasses, u: np.ndarray) -> NodeClasses:
        data = self.data
        rep = src.rep
        key, radix = np.zeros(len(rep), dtype=np.int64), 1
        for j in range(data.d):
            lv = int(u[j])
            card = data.level_radix[j][lv]
            if card > 1:
                key, radix = _push(key, radix, data.codes_at(j, lv, rep), card)
        up, nc = renumber(key, radix)  # class of u for each class of src
        sizes = np.bincount(up, weights=src.sizes, minlength=nc)
        sizes = np.rint(sizes).astype(np.int64)
        rep_u = np.empty(nc, dtype=np.int64)
        rep_u[up] = rep  # any member of a class represents it: all share the node's codes
        counts = None
        if self.with_counts and src.counts is not None:
            n_sa = data.n_sa
            flat = np.bincount((up[:, None] * n_sa + np.arange(n_sa)).ravel(),
                               weights=src.counts.ravel(), minlength=nc * n_sa)
            counts = np.rint(flat).astype(np.int64).reshape(nc, n_sa)
        self.n_computed += 1
        return NodeClasses(tuple(int(x) for x in u), up[src.combo_class], rep_u, sizes, counts)

    def _store(self, node: NodeClasses) -> None:
        if len(self._nodes) >= self.capacity:  # evict the oldest
            self._nodes.pop(0)
            self._levels = self._levels[1:]
            self._ncls = self._ncls[1:]
        self._nodes.append(node)
        self._levels = np.vstack([self._levels, np.asarray(node.levels, dtype=np.int64)[None, :]])
        self._ncls = np.append(self._ncls, node.n_classes)

    def class_loss(self, node: NodeClasses) -> np.ndarray:
        """Per class, Σ over QIs of the generalized value's ``(coverage - 1)/(leaves - 1)``."""
        data = self.data
        total = np.zeros(node.n_classes)
        for j, lv in enumerate(node.levels):
            total += data.level_loss[j][lv][data.codes_at(j, lv, node.rep)]
        return total
