"""The traversal of full-domain search: Flash's binary search on greedy paths (Kohlmayer et
al., Flash, 2012, §4) with predictive tagging in both directions, suppression-aware bounds
and a probe biased to the height where the frontier was met; and, where satisfaction is
not upward closed, a bottom-up pass that checks only the nodes no satisfying node lies
below.

Vocabulary. ``P`` is an *upward-closed* node predicate (satisfied at ``v`` ⇒ satisfied at
every ``u >= v``); a check of ``v`` tags ``v``'s up-set satisfied or its down-set failed.
*Bounds* decide a node without grouping it, from the rows' fates at nodes already checked,
when ``P`` is "the rows of the classes failing an absorbing class predicate ``A`` are at
most the budget ``b``": a row kept at a checked ``v <= u`` is kept at ``u`` (its class
only grows), a row suppressed at a checked ``w >= u`` is suppressed at ``u`` (its class
only shrinks). So ``w·(∪ suppressed_w) > b`` fails ``u`` and ``n - w·(∪ kept_v) <= b``
satisfies it (``docs/algorithms.md`` proves both).

:class:`FlashSearch` runs the outer loop: from the first node not yet decided in an order
that lists every node after those below it (by height, or by a metric's bound then
height), a greedy chain upwards through undecided nodes (the QI with the smallest relative
level first), binary-searched for the first satisfying node. The first probe of a chain is
the node at the mean height of the frontier met so far (where the chain most likely
crosses it), later probes bisect; a probe is decided by the bounds when they can, else
checked. With ``prune``, a node it accepts is skipped with its up-set (``PRUNED``: its
metric's bound exceeds the least metric of a satisfying node known); when the order is by
that bound, the walk ends at the first node it prunes (every later one would be too). Every
node ends decided, pruned, or (order by bound) after the end of the walk.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

#: node states (``PRUNED``: not decided, its metric's lower bound exceeds a minimal node's value)
UNKNOWN, SAT, FAIL, PRUNED = 0, 1, -1, 2


class Grid:
    """The lattice as a C-ordered array of ``shape = heights + 1``: node index arithmetic
    and up-/down-set views. Immutable: :meth:`of` shares one per shape."""

    def __init__(self, heights: np.ndarray) -> None:
        self.heights = np.asarray(heights, dtype=np.int64)
        self.shape = tuple(int(x) + 1 for x in self.heights)
        self.d = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64)) if self.d else 1
        self.strides = np.array([int(np.prod(self.shape[j + 1:], dtype=np.int64)) for j in range(self.d)],
                                dtype=np.int64)
        self.nodes = np.indices(self.shape).reshape(self.d, -1).T.astype(np.int64)
        self.height = self.nodes.sum(axis=1)
        self.by_height = np.lexsort((np.arange(self.size), self.height))
        self.rel = np.maximum(self.heights, 1).astype(np.float64)
        for arr in (self.heights, self.strides, self.nodes, self.height, self.by_height, self.rel):
            arr.setflags(write=False)
        self._lists: tuple | None = None

    @staticmethod
    @functools.lru_cache(maxsize=16)
    def of(shape_heights: tuple[int, ...]) -> "Grid":
        """The grid of these heights (shared)."""
        return Grid(np.array(shape_heights, dtype=np.int64))

    def lists(self) -> tuple[list, list, list, list]:
        """Nodes, heights, relative scale and strides as Python lists (the search's loops)."""
        if self._lists is None:
            self._lists = (self.nodes.tolist(), self.heights.tolist(), self.rel.tolist(), self.strides.tolist())
        return self._lists

    def up(self, i: int) -> tuple[slice, ...]:
        return tuple(slice(x, None) for x in self.lists()[0][i])

    def down(self, i: int) -> tuple[slice, ...]:
        return tuple(slice(0, x + 1) for x in self.lists()[0][i])

    def chain(self, start: int, open_: Callable[[int], bool]) -> list[int]:
        """Greedy path upwards from ``start`` through nodes ``open_`` accepts: each step
        raises the QI of smallest relative level (ties: lower index) that leads to one."""
        nodes, heights, rel, strides = self.lists()
        qis = range(self.d)
        path, cur = [start], start
        while True:
            v = nodes[cur]
            nxt = -1
            for j in sorted(qis, key=lambda j: (v[j] / rel[j], j)):
                if v[j] < heights[j]:
                    cand = cur + strides[j]
                    if open_(cand):
                        nxt = cand
                        break
            if nxt < 0:
                return path
            path.append(nxt)
            cur = nxt


class MaskBounds:
    """Fates of the combinations at checked nodes (``kept`` under the absorbing predicate,
    packed bits) and the bounds they give on the rows a node suppresses."""

    def __init__(self, weights: np.ndarray, budget: int, d: int, unkept=None) -> None:
        self.w = np.asarray(weights, dtype=np.int64)
        self.kernel = unkept  # compiled :meth:`_unkept` (``lattice_kernels.unkept_rows``), if any
        self.m = len(self.w)
        self.n = int(self.w.sum())
        self.budget = budget
        self._levels = np.zeros((64, d), dtype=np.int64)
        self._kept = np.zeros((64, (self.m + 7) // 8), dtype=np.uint8)
        self._k = 0

    def add(self, levels: np.ndarray, kept: np.ndarray) -> None:
        if self._k == len(self._levels):
            self._levels = np.concatenate([self._levels, np.zeros_like(self._levels)])
            self._kept = np.concatenate([self._kept, np.zeros_like(self._kept)])
        self._levels[self._k] = levels
        self._kept[self._k] = np.packbits(kept)
        self._k += 1

    def _unkept(self, packed: np.ndarray) -> int:
        """Rows of the combinations whose bit is 0 (only the bytes holding one are unpacked)."""
        if self.kernel is not None:
            return int(self.kernel(packed, self.w))
        bytes_ = np.flatnonzero(packed != 0xFF)
        if bytes_.size == 0:
            return 0
        bits = np.unpackbits(packed[bytes_][:, None], axis=1)  # (bytes, 8), most significant bit first
        pos = (bytes_[:, None] * 8 + np.arange(8)).ravel()
        zero = (bits.ravel() == 0) & (pos < self.m)
        return int(self.w[pos[zero]].sum())

    def decide(self, levels: np.ndarray) -> int:
        """``FAIL`` when the rows surely suppressed exceed the budget, ``SAT`` when the rows
        possibly suppressed do not, else ``UNKNOWN``."""
        k = self._k
        if k == 0:
            return UNKNOWN
        lv = self._levels[:k]
        # one node alone decides nothing new (its own check tagged ``levels`` if it could);
        # with no budget, a node above that satisfies suppresses nothing
        above = np.flatnonzero((lv >= levels).all(axis=1)) if self.budget > 0 else ()
        if len(above) > 1:
            # suppressed somewhere above = not kept everywhere above
            kept_all = np.bitwise_and.reduce(self._kept[above], axis=0)
            if self._unkept(kept_all) > self.budget:
                return FAIL
        below = np.flatnonzero((lv <= levels).all(axis=1))
        if len(below) > 1:
            kept_any = np.bitwise_or.reduce(self._kept[below], axis=0)
            if self._unkept(kept_any) <= self.budget:
                return SAT
        return UNKNOWN


class FlashSearch:
    """Decide an upward-closed predicate on every node of ``grid``.

    ``check(i)`` evaluates node ``i`` (True: satisfied); ``bounds`` (optional) decides nodes
    without checking; ``state`` (int8, one per node) may arrive partly decided and is
    completed in place; ``on_sat(i)`` is told of every node decided satisfied (checked or
    bounded; its up-set is tagged with it). ``sorted_prune``: ``order`` is sorted by the
    bound ``prune`` compares (then every node after a pruned one in the order is pruned
    too, and the walk ends there, leaving them undecided).
    """

    def __init__(self, grid: Grid, check: Callable[[int], bool], bounds: MaskBounds | None = None,
                 bias: bool = True, prune: Callable[[int], bool] | None = None,
                 order: np.ndarray | None = None, on_sat: Callable[[int], None] | None = None,
                 sorted_prune: bool = False) -> None:
        self.grid, self.check, self.bounds, self.bias = grid, check, bounds, bias
        self.prune, self.on_sat, self.sorted_prune = prune, on_sat, sorted_prune
        self.order = grid.by_height if order is None else order
        self.frontier_heights: list[int] = []
        self._frontier_sum = 0

    def _pruned(self, i: int, state: np.ndarray) -> bool:
        """Is undecided node ``i`` pruned (``prune(i)``)? Then so is its undecided up-set
        (the lower bound only grows upwards): marked ``PRUNED`` — only ``i`` itself when the
        order is by the pruning bound (``sorted_prune``): the walk stops at the first node
        of the order it prunes, and a chain never enters a pruned node."""
        if self.prune is None or not self.prune(i):
            return False
        if self.sorted_prune:
            state[i] = PRUNED
            return True
        up = state.reshape(self.grid.shape)[self.grid.up(i)]
        up[up == UNKNOWN] = PRUNED
        return True

    def _decide(self, i: int, state: np.ndarray) -> int:
        r = UNKNOWN
        if self.bounds is not None:
            r = self.bounds.decide(self.grid.nodes[i])
        if r == UNKNOWN:
            r = SAT if self.check(i) else FAIL
        view = state.reshape(self.grid.shape)
        if r == SAT:
            view[self.grid.up(i)] = SAT
            if self.on_sat is not None:
                self.on_sat(i)
        else:
            view[self.grid.down(i)] = FAIL
        return r

    def run(self, state: np.ndarray) -> np.ndarray:
        g = self.grid
        order = self.order
        height = g.height
        cursor = 0
        while True:
            while cursor < g.size and state[order[cursor]] != UNKNOWN:  # skip decided nodes, 256 at a time
                ahead = np.flatnonzero(state[order[cursor:cursor + 256]] == UNKNOWN)
                cursor = cursor + int(ahead[0]) if ahead.size else cursor + 256
            if cursor >= g.size:
                return state
            if self._pruned(int(order[cursor]), state):
                if self.sorted_prune:  # so is every node after it in the order
                    return state
                continue
            path = g.chain(int(order[cursor]), lambda c: state[c] == UNKNOWN and not self._pruned(c, state))
            lo, hi = 0, len(path) - 1
            first_sat = -1
            probe_first = self.bias and bool(self.frontier_heights)
            while lo <= hi:
                while lo <= hi and state[path[lo]] == FAIL:
                    lo += 1
                while lo <= hi and state[path[hi]] in (SAT, PRUNED):
                    if state[path[hi]] == SAT:
                        first_sat = path[hi]
                    hi -= 1
                if lo > hi:
                    break
                if probe_first:  # the chain's heights rise by one per step
                    target = self._frontier_sum / len(self.frontier_heights)
                    mid = min(hi, max(lo, lo + int(round(target - int(height[path[lo]])))))
                    probe_first = False
                else:
                    mid = (lo + hi) // 2
                i = path[mid]
                if state[i] == UNKNOWN and not self._pruned(i, state):
                    self._decide(i, state)
                if state[i] == SAT:
                    first_sat = i
                    hi = mid - 1
                elif state[i] == PRUNED:  # so is the rest of the path
                    hi = mid - 1
                else:
                    lo = mid + 1
            if first_sat >= 0:
                self.frontier_heights.append(int(height[first_sat]))
                self._frontier_sum += int(height[first_sat])


def bottom_up(grid: Grid, known: np.ndarray, dominated: np.ndarray, check: Callable[[int], bool],
              prune: Callable[[int], bool] | None = None, order: np.ndarray | None = None) -> None:
    """Decide, in order of height, every node that is neither decided (``known`` ≠ 0) nor
    above a satisfying node (``dominated``) nor pruned (``prune(i)``, then ``PRUNED``); a
    satisfying node dominates its up-set. Used where satisfaction is not upward closed: a
    dominated node is not minimal whatever its state. ``order`` (default: by height) must
    list every node after all nodes below it."""
    dom = dominated.reshape(grid.shape)
    for i in grid.by_height if order is None else order:
        i = int(i)
        if known[i] != UNKNOWN or dominated[i]:
            continue
        if prune is not None and prune(i):
            known[i] = PRUNED
            continue
        if check(i):
            known[i] = SAT
            dom[grid.up(i)] = True
            dominated[i] = False
        else:
            known[i] = FAIL
