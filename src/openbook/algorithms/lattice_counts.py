"""Equivalence classes of full-domain nodes from counts, rolled up from finer nodes
(LeFevre et al., Incognito, SIGMOD 2005, §3 "rollup"; Kohlmayer et al., Flash, 2012, §5:
ARX's snapshots of a finer transformation), and the model checked on them.

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
combination. The finest cached node below ``u`` with the fewest classes is the source; the
bottom node (the combinations themselves) is always cached. Each class also carries its
generalization loss. The roll-up runs in :mod:`.lattice_kernels` (numba) on tables large
enough to repay loading it, else in numpy (a mixed-radix key, a dense renumbering and
``bincount``); both give the same classes.

:class:`ModelCheck` decides the model on a node's classes: the compiled per-class check
for k-anonymity, distinct, entropy and recursive (c,ℓ)-diversity and their conjunctions
(with the model's own ``holds`` for the classes it flags ambiguous), else ``model.holds``.
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..models.base import PrivacyModel, SADomain
from ..models.composite import AllOf
from ..models.k_anonymity import KAnonymity
from ..models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, xlogx_table
from . import lattice_kernels as lk

#: keys spanning at most this many times their count (plus a constant) are renumbered by a
#: lookup table; wider ones by a sort (or pandas' hash table when pandas is loaded)
_DENSE_FACTOR, _DENSE_SLACK = 4, 1 << 16
#: cache budget in array entries (source-class ids dominate: one per class of the source)
_CACHE_ENTRIES = 1 << 25
#: per hierarchy: dense codes of each leaf per level, codes per level, loss per code per level
_LEVELS: "weakref.WeakKeyDictionary[object, tuple]" = weakref.WeakKeyDictionary()


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


def hierarchy_levels(h) -> tuple[np.ndarray, list[int], list[np.ndarray]]:
    """``(codes, radix, loss)`` of a hierarchy: ``codes[lv, leaf]`` the dense code of each
    leaf at each level, ``radix[lv]`` the codes of a level, ``loss[lv][code]`` the code's
    ``(coverage - 1)/(leaves - 1)``. Cached per hierarchy (hierarchies are immutable)."""
    got = _LEVELS.get(h)
    if got is None:
        nl = max(h.n_leaves - 1, 1)
        cov = np.asarray(h.coverage, dtype=np.float64)
        codes = np.empty((h.height + 1, h.n_leaves), dtype=np.int32)
        radix, loss = [], []
        for lv in range(h.height + 1):
            anc = np.asarray(h.ancestor_table[lv])
            present = np.zeros(h.n_nodes, dtype=np.bool_)
            present[anc] = True
            uniq = np.flatnonzero(present)  # sorted node ids: np.unique's numbering
            rank = np.cumsum(present) - 1
            codes[lv] = rank[anc]
            radix.append(len(uniq))
            loss.append((cov[uniq] - 1.0) / nl)
        got = (codes, radix, loss)
        _LEVELS[h] = got
    return got


class LatticeData:
    """Distinct QI combinations with their SA counts, and the QI hierarchies.

    Parameters
    ----------
    combos: ``(m, d)`` leaf codes of each combination (duplicates are merged).
    sa_counts: ``(m, n_sa)`` non-negative SA counts of each combination.
    hierarchies: one :class:`openbook.hierarchy.Hierarchy` per QI (leaf codes = ``combos``).
    domain: the SA domain the privacy models read (values, global counts, ...).
    qi_names: the QI names (default ``q0, q1, ...``).
    distinct: the caller guarantees the combinations are distinct (no merge pass).
    trusted: the combinations' sizes, given with ``combos`` the ``(d, m)`` int32 transpose,
        distinct, with codes in range and counts non-negative (what
        :func:`~.lattice.lattice_data` builds; nothing is checked).
    """

    def __init__(self, combos, sa_counts, hierarchies, domain: SADomain, qi_names=None, *,
                 distinct: bool = False, trusted: np.ndarray | None = None) -> None:
        self.h = list(hierarchies)
        if trusted is not None:
            self.leaf, counts, self._combos = combos, sa_counts, None
            self.d = self.leaf.shape[0]
            distinct = True
        else:
            combos = self._combos = np.asarray(combos, dtype=np.int64)
            counts = np.asarray(sa_counts, dtype=np.int64)
            if combos.ndim != 2 or counts.ndim != 2 or len(combos) != len(counts):
                raise ParameterError(f"combos {combos.shape} and sa_counts {counts.shape} must be (m, d) and "
                                     f"(m, n_sa)", parameter="combos")
            self.d = combos.shape[1]
        if len(self.h) != self.d:
            raise ParameterError(f"{len(self.h)} hierarchies for {self.d} QIs", parameter="hierarchies")
        if trusted is None:
            if counts.size and counts.min() < 0:
                raise ParameterError("sa_counts must be non-negative", parameter="sa_counts")
            self.leaf = np.ascontiguousarray(combos.T, dtype=np.int32) if self.d else \
                np.zeros((0, len(combos)), np.int32)
            if combos.size:
                lo, hi = self.leaf.min(axis=1), self.leaf.max(axis=1)
                for j, h in enumerate(self.h):
                    if lo[j] < 0 or hi[j] >= h.n_leaves or combos[:, j].max() != hi[j]:  # also: no int32 wrap
                        raise ParameterError(f"QI {j}: codes outside 0..{h.n_leaves - 1}", parameter="combos")
        self.domain = domain
        self.qi_names = list(qi_names) if qi_names is not None else [f"q{j}" for j in range(self.d)]
        self.heights = np.array([h.height for h in self.h], dtype=np.int64)
        levels = [hierarchy_levels(h) for h in self.h]
        self.level_codes = [list(codes) for codes, _, _ in levels]
        self.level_radix = [radix for _, radix, _ in levels]
        self.level_loss = [loss for _, _, loss in levels]
        if not distinct:  # merge duplicate combinations (level-0 classes are distinct code tuples)
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
                self.leaf = np.ascontiguousarray(combos.T, dtype=np.int32)
            self._combos = combos
        self.combo_t = list(self.leaf)
        self.counts = counts
        self.sizes = trusted if trusted is not None else counts.sum(axis=1)
        self.m, self.n_sa = counts.shape
        self.n = int(self.sizes.sum())
        # the kernels' tables: one row per (QI, level), leaf -> code and code -> loss
        self.row = np.cumsum([0] + [int(h) + 1 for h in self.heights.tolist()])[:self.d].tolist()
        n_rows = sum(int(h) + 1 for h in self.heights.tolist())
        width = max([h.n_leaves for h in self.h], default=1)
        self.code_table = np.zeros((max(n_rows, 1), width), dtype=np.int32)
        self.loss_table = np.zeros((max(n_rows, 1), width), dtype=np.float64)
        for j, (codes, _, loss) in enumerate(levels):
            r = int(self.row[j])
            self.code_table[r:r + len(codes), :codes.shape[1]] = codes
            for lv, ls in enumerate(loss):
                self.loss_table[r + lv, :len(ls)] = ls
        self._combo_codes: dict[tuple[int, int], np.ndarray] = {}
        self._row_qi = np.repeat(np.arange(self.d), [int(h) + 1 for h in self.heights.tolist()])
        self._code_table2: np.ndarray | None = None
        self._filled = np.zeros(max(n_rows, 1), dtype=bool)
        #: loss mass of each QI at each level: Σ_rows (coverage - 1)/(leaves - 1)
        self.level_mass = []
        for j in range(self.d):
            w = np.bincount(self.combo_t[j], weights=self.sizes, minlength=self.h[j].n_leaves)
            self.level_mass.append(np.array([_mass(w, self.level_loss[j][lv][self.level_codes[j][lv]])
                                             for lv in range(self.heights[j] + 1)]))

    @property
    def combos(self) -> np.ndarray:
        """``(m, d)`` int64 leaf codes of the combinations."""
        if self._combos is None:
            self._combos = np.ascontiguousarray(self.leaf.T, dtype=np.int64)
        return self._combos

    def code_rows(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each combination's dense code at the (QI, level) ``rows`` (of :attr:`loss_table`):
        ``(codes, index)`` with ``codes[index[t]]`` the codes of ``rows[t]`` — rows of a
        table filled on first use while it stays within the cache budget, else computed."""
        if self._code_table2 is None:
            n_rows = self.code_table.shape[0]
            if n_rows * self.m > _CACHE_ENTRIES:
                out = np.empty((len(rows), self.m), dtype=np.int32)
                for t, r in enumerate(rows):
                    out[t] = self.code_table[r][self.leaf[self._row_qi[r]]]
                return out, np.arange(len(rows), dtype=np.int64)
            self._code_table2 = np.empty((n_rows, self.m), dtype=np.int32)
        for r in rows:
            if not self._filled[r]:
                np.take(self.code_table[r], self.leaf[self._row_qi[r]], out=self._code_table2[r])
                self._filled[r] = True
        return self._code_table2, np.asarray(rows, dtype=np.int64)

    def codes_at(self, j: int, level: int, rep: np.ndarray) -> np.ndarray:
        """Dense code of QI ``j`` at ``level`` for the combinations ``rep``."""
        got = self._combo_codes.get((j, level))
        if got is None:
            got = self.level_codes[j][level][self.combo_t[j]]
            if got.size * (len(self._combo_codes) + 1) <= _CACHE_ENTRIES:
                self._combo_codes[(j, level)] = got
        return got[rep]


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


@dataclass(eq=False)
class NodeClasses:
    """The classes of one node: ``rep`` one combination per class, ``sizes``, ``counts``
    (``None`` when not needed) and ``gen`` (generalization loss of one row) per class; the
    class of each combination (:attr:`combo_class`) is composed on demand from the source
    node's (``src``) and the source classes' classes here (``up``)."""

    levels: tuple[int, ...]
    rep: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray | None
    gen: np.ndarray
    up: np.ndarray | None = None
    src: "NodeClasses | None" = None
    _combo_class: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @property
    def combo_class(self) -> np.ndarray:
        if self._combo_class is None:
            assert self.up is not None and self.src is not None  # composed from the source node's
            self._combo_class = self.up[self.src.combo_class]
            self.src = None  # the chain below is no longer needed
        return self._combo_class


class ClassEngine:
    """Classes of any node, rolled up from the cached node below it with the fewest
    classes. ``with_counts=False`` skips the SA counts (models that read sizes only)."""

    def __init__(self, data: LatticeData, with_counts: bool = True) -> None:
        self.data = data
        self.with_counts = with_counts
        m = data.m
        self.kernels = lk.compiled() if lk.wanted(m * max(data.n_sa, 1)) else None
        gen0 = np.zeros(m)
        for j in range(data.d):
            if data.level_loss[j][0].any():  # a leaf's own loss is 0 (coverage 1)
                gen0 += data.level_loss[j][0][data.level_codes[j][0][data.combo_t[j]]]
        bottom = NodeClasses(tuple([0] * data.d), np.arange(m, dtype=np.int64), data.sizes,
                             data.counts if with_counts else None, gen0, _combo_class=np.arange(m, dtype=np.int64))
        self.bottom = bottom
        self.capacity = max(4, min(256, _CACHE_ENTRIES // max(m, 1)))
        self._levels = np.zeros((self.capacity, data.d), dtype=np.int64)
        self._nodes: list[NodeClasses] = []
        self._ncls = np.zeros(self.capacity, dtype=np.int64)
        self._next = 0  # the slot to overwrite once the cache is full (oldest first)
        self.n_computed = 0

    def classes(self, levels) -> NodeClasses:
        """The classes of the node at ``levels`` (cached: a later node may roll up from it)."""
        u = np.asarray(levels, dtype=np.int64)
        src = self.bottom
        k = len(self._nodes)
        if k:
            below = np.flatnonzero((self._levels[:k] <= u).all(axis=1))
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
        lv = u.tolist()
        act = [j for j in range(data.d) if data.level_radix[j][lv[j]] > 1]  # QIs with more than one code
        upper = 1
        for j in act:
            upper *= data.level_radix[j][lv[j]]
        counts_in = src.counts is not None and self.with_counts
        self.n_computed += 1
        if self.kernels is not None and upper < 2**62:
            rows = [int(data.row[j]) + lv[j] for j in act]
            codes, krows = data.code_rows(rows)
            radix = np.array([data.level_radix[j][lv[j]] for j in act], dtype=np.int64)
            base = 0.0
            for j in range(data.d):
                if data.level_radix[j][lv[j]] <= 1:
                    base += float(data.level_loss[j][lv[j]][0])
            up, rep_u, sizes, counts, gen = self.kernels["roll_up"](
                codes, krows, radix, upper, src.rep, src is self.bottom, src.sizes,
                src.counts if counts_in else np.zeros((0, 0), dtype=np.int64), counts_in, data.loss_table,
                np.asarray(rows, dtype=np.int64), base)
            return NodeClasses(tuple(lv), rep_u, sizes, counts if counts_in else None, gen, up, src)
        rep = src.rep
        key, radix_ = np.zeros(len(rep), dtype=np.int64), 1
        for j in range(data.d):
            lv = int(u[j])
            card = data.level_radix[j][lv]
            if card > 1:
                key, radix_ = _push(key, radix_, data.codes_at(j, lv, rep), card)
        up, nc = renumber(key, radix_)  # class of u for each class of src
        sizes = np.rint(np.bincount(up, weights=src.sizes, minlength=nc)).astype(np.int64)
        rep_u = np.empty(nc, dtype=np.int64)
        rep_u[up] = rep  # any member of a class represents it: all share the node's codes
        counts = None
        if counts_in:
            assert src.counts is not None  # a node with counts rolls up from one with counts
            n_sa = data.n_sa
            flat = np.bincount((up[:, None] * n_sa + np.arange(n_sa)).ravel(),
                               weights=src.counts.ravel(), minlength=nc * n_sa)
            counts = np.rint(flat).astype(np.int64).reshape(nc, n_sa)
        gen = np.zeros(nc)
        for j, lv in enumerate(u.tolist()):
            gen += data.level_loss[j][lv][data.codes_at(j, lv, rep_u)]
        return NodeClasses(tuple(int(x) for x in u), rep_u, sizes, counts, gen, up, src)

    def _store(self, node: NodeClasses) -> None:
        if len(self._nodes) < self.capacity:
            slot = len(self._nodes)
            self._nodes.append(node)
        else:  # evict the oldest
            slot = self._next
            self._nodes[slot] = node
            self._next = (slot + 1) % self.capacity
        self._levels[slot] = node.levels
        self._ncls[slot] = node.n_classes

    def class_loss(self, node: NodeClasses) -> np.ndarray:
        """Per class, Σ over QIs of the generalized value's ``(coverage - 1)/(leaves - 1)``."""
        return node.gen


@functools.lru_cache(maxsize=4)
def _xlogx(n: int) -> np.ndarray:
    """``c log c`` for ``c = 0..n`` (numpy's, as the entropy model reads it); read-only."""
    out = xlogx_table(n)
    out.setflags(write=False)
    return out


def _members(model: PrivacyModel) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The compiled check's members of ``model`` (kinds, integer and float parameters), or
    ``None`` when a member has no compiled check."""
    from ..models import TOL

    kinds: list[int] = []
    ip: list[tuple[int, int, int]] = []
    fp: list[tuple[float, float]] = []
    m: Any
    for m in (model.models if isinstance(model, AllOf) else (model,)):
        t = type(m)
        if t is KAnonymity:
            kinds.append(lk.K)
            ip.append((int(m.k), 0, 0))
            fp.append((0.0, 0.0))
        elif t is DistinctLDiversity:
            kinds.append(lk.DISTINCT)
            ip.append((int(m.l), 0, 0))
            fp.append((0.0, 0.0))
        elif t is EntropyLDiversity:
            kinds.append(lk.ENTROPY)
            ip.append((0, 0, 0))
            fp.append((float(np.log(m.l) - TOL), 0.0))
        elif t is RecursiveCLDiversity:
            r = m._ratio
            kinds.append(lk.RECURSIVE_EXACT if r.exact else lk.RECURSIVE_FLOAT)
            ip.append((int(m.l), int(r.num), int(r.den)))
            fp.append((float(r.value), 1.0 - TOL))
        else:
            return None
    return (np.array(kinds, dtype=np.int64), np.array(ip, dtype=np.int64).reshape(-1, 3),
            np.array(fp, dtype=np.float64).reshape(-1, 2))


class ModelCheck:
    """The model (and optionally a necessary condition with ``k``, ``l`` only) on a node's
    classes: ``holds(cls) -> (ok, cond_ok or None)``."""

    def __init__(self, model: PrivacyModel, data: LatticeData, engine: ClassEngine, cond=None) -> None:
        self.model: Any = model  # (its k, when checked by size only)
        self.domain = data.domain
        self.cond = cond
        self.members = _members(model) if engine.kernels is not None and engine.with_counts else None
        if self.members is not None and cond is not None and cond.masses:
            self.members = None  # a mass condition (t-closeness) is read in numpy anyway
        self.kernels = engine.kernels
        self.size_only = not engine.with_counts
        self.xlogx = _xlogx(data.n) if self.members is not None and (self.members[0] == lk.ENTROPY).any() \
            else np.zeros(1)

    def holds(self, cls: NodeClasses, with_cond: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        if self.size_only:  # k-anonymity without SA counts
            ok = cls.sizes >= self.model.k
            return ok, (cls.sizes >= self.cond.k) if with_cond else None
        counts = cls.counts
        assert counts is not None  # nodes carry SA counts unless checked by size only
        if self.members is not None:
            assert self.kernels is not None  # members are compiled only with the kernels
            ck, cl = (self.cond.k, self.cond.l) if self.cond is not None else (1, 1)
            ok, amb, cond = self.kernels["check_classes"](cls.sizes, counts, *self.members, self.xlogx,
                                                          int(ck), int(cl))
            if amb.any():
                ok[amb] = np.asarray(self.model.holds(counts[amb], self.domain), dtype=np.bool_)
            return ok, (cond if with_cond else None)
        ok = np.asarray(self.model.holds(counts, self.domain), dtype=np.bool_)
        return ok, (self.cond.holds(cls.sizes, counts) if with_cond else None)
