"""Generalization hierarchies (taxonomy trees and DAGs) over the integer codes of one column.

A :class:`Hierarchy` is the *conceptual taxonomy* of an attribute (Wong et al., VLDB 2007,
paper 001 §3): its leaves are the *ground values* of the column, an internal node is a
generalized value, and ``v' ≺ v*`` holds when ``v*`` is an ancestor of ``v'``. Paper 001 §3
allows a taxonomy to be a DAG ("day" → "week", or "day" → "month" → "year"; footnote 3:
"lung cancer" under both "cancer" and "respiratory disease"); a DAG here must still have a
single root.

Code space
    Nodes are integers. The leaves are nodes ``0 .. n_leaves-1`` in the order given, and
    **those numbers are the column's codes**: the table encoder uses :attr:`Hierarchy.leaves`
    as the category order of the column (:meth:`Hierarchy.encode`). Internal nodes follow,
    ``n_leaves .. n_nodes-1``.

Depth and height
    ``depth[v]`` is the length of the *longest* path from the root down to ``v`` (in a tree,
    the only path). ``height`` is the longest leaf-to-root path. ``uniform_depth`` is true
    when every path from every leaf to the root has the same length (what ARX requires).

Levels (:attr:`Hierarchy.ancestor_table`)
    Full-domain generalization needs a *function* from (leaf, level) to a node. Levels are
    counted from the leaf, as in ARX: level 0 is the leaf itself, level ``j`` is the ``j``-th
    ancestor along the leaf's **first-listed parent** chain, and a leaf whose chain reaches
    the root before level ``j`` stays at the root. So in a tree of non-uniform depth a shallow
    leaf is at the root for every level ``>= its depth``, and in a DAG the second and later
    parents of a node never appear in the table (they do count for coverage and LCA).

Coverage, base, LCA (paper 001 Def. 5, Def. 6)
    ``coverage[v]`` is the number of ground values under ``v``; ``base = n_leaves``. The
    *nearest (lowest) common ancestor* of a set of leaves, used by the information loss of
    Def. 6, is the node of **smallest coverage** that covers all of them; ties (unary chains,
    e.g. an ARX level that keeps a value unchanged) are broken by **greatest depth**, then
    **smallest node id**. In a tree this is the usual deepest common ancestor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy._graph import as_python, build_graph, context_of
from openbook.hierarchy.lca import DagLCA, TreeLCA, priority_order

__all__ = ["Hierarchy"]


class Hierarchy:
    """A generalization taxonomy (tree or single-rooted DAG) of one column.

    Parameters
    ----------
    leaves:
        The ground values, in code order (leaf ``i`` is code ``i``). Any hashable values;
        all-int values give an int64 array, all-numeric a float64 array, else object.
    labels:
        The labels of the internal nodes ``n_leaves, n_leaves+1, ...`` (converted to str).
        A leaf's label is ``str(value)``.
    parents:
        One entry per node (leaves first): ``None`` (or ``-1``) for the root, a node id, or a
        sequence of node ids for a node with several parents (DAG). The first-listed parent
        defines the node's levels (see the module docstring).
    column:
        The column name, used in error messages.
    intervals:
        Optional ``(n_nodes, 2)`` float array of ``(lo, hi)`` per node for numeric interval
        hierarchies (see :func:`openbook.hierarchy.builders.interval_ladder`).

    Raises
    ------
    HierarchyError
        On a cycle, a leaf that has children, a leaf without parent, more than one root,
        an internal node without children (unreachable from every leaf), duplicate or
        missing leaf values, or a parent id out of range.
    """

    def __init__(
        self,
        leaves: Sequence[Any],
        labels: Sequence[Any],
        parents: Sequence[Any],
        *,
        column: str | None = None,
        intervals: Any = None,
    ) -> None:
        self.column = None if column is None else str(column)
        g = build_graph(leaves, labels, parents, self.column)
        nl, nn = g.n_leaves, g.n_nodes
        n_parents = np.diff(g.parent_ptr)
        self.leaves: np.ndarray = g.leaves
        self.labels: np.ndarray = np.array(g.labels, dtype=object)
        self.n_leaves: int = nl
        self.n_nodes: int = nn
        self.base: int = nl
        self.root: int = g.root
        self.depth: np.ndarray = g.depth.astype(np.int32)
        self.height: int = int(g.depth[:nl].max())
        self.is_tree: bool = bool((n_parents <= 1).all())
        self.uniform_depth: bool = bool(
            (g.depth[:nl] == g.depth[0]).all() and (g.shortest_depth[:nl] == g.depth[:nl]).all()
        )
        self._parent_ptr, self._parent_idx = g.parent_ptr, g.parent_idx.astype(np.int32)
        self._child_ptr, self._child_idx = g.child_ptr, g.child_idx.astype(np.int32)
        has_parent = n_parents > 0
        up = np.arange(nn, dtype=np.int32)
        up[has_parent] = g.parent_idx[g.parent_ptr[:-1][has_parent]]
        self.first_parent: np.ndarray = np.where(has_parent, up, -1).astype(np.int32)
        table = np.empty((self.height + 1, nl), dtype=np.int32)
        table[0] = np.arange(nl, dtype=np.int32)
        for j in range(1, self.height + 1):  # first-parent chains, clamped at the root
            table[j] = up[table[j - 1]]
        self.ancestor_table: np.ndarray = table
        self._lca: TreeLCA | DagLCA = TreeLCA(table, g.depth, nn) if self.is_tree else DagLCA(g)
        self.coverage: np.ndarray = self._lca.coverage
        self._rank_order = priority_order(self.coverage, self.depth)
        self.intervals: np.ndarray | None = None
        if intervals is not None:
            iv = np.asarray(intervals, dtype=np.float64)
            if iv.shape != (nn, 2):
                raise HierarchyError(
                    f"{context_of(self.column)}: intervals must have shape ({nn}, 2), got {iv.shape}",
                    column=self.column,
                )
            self.intervals = iv
        for arr in (self.leaves, self.labels, self.depth, self.first_parent, table, self.coverage, self.intervals):
            if arr is not None:
                arr.setflags(write=False)

    # ---- checks ----------------------------------------------------------------------------
    def _codes(self, codes: Any, what: str = "codes") -> np.ndarray:
        arr = np.asarray(codes)
        if arr.dtype.kind not in "iu":
            if arr.size == 0:
                return arr.astype(np.int64)
            raise ParameterError(
                f"{context_of(self.column)}: {what} must be integer leaf codes, got dtype {arr.dtype}",
                parameter=what,
            )
        self._in_range(arr, self.n_leaves, "code {} is not a leaf code")
        return arr

    def _nodes(self, nodes: Any) -> np.ndarray:
        arr = np.asarray(nodes)
        if arr.dtype.kind not in "iu" and arr.size:
            raise ParameterError(
                f"{context_of(self.column)}: nodes must be integer node ids, got dtype {arr.dtype}",
                parameter="nodes",
            )
        self._in_range(arr, self.n_nodes, "{} is not a node id")
        return arr.astype(np.int64, copy=False)

    def _in_range(self, arr: np.ndarray, bound: int, what: str) -> None:
        """Raise :class:`HierarchyError` when the integer array ``arr`` leaves ``0..bound-1``,
        naming its smallest entry if negative, else its largest (``what``: the message, ``{}``
        for that entry)."""
        if arr.size:
            lo, hi = arr.min(), arr.max()
            if lo < 0 or hi >= bound:
                bad = as_python(lo if lo < 0 else hi)
                raise HierarchyError(
                    f"{context_of(self.column)}: {what.format(bad)} 0..{bound - 1}",
                    column=self.column,
                    value=bad,
                )

    # ---- structure ---------------------------------------------------------------------------
    def parents_of(self, node: int) -> np.ndarray:
        """Parents of ``node``, first-listed first (empty for the root)."""
        v = int(self._nodes(node))
        return self._parent_idx[self._parent_ptr[v] : self._parent_ptr[v + 1]].copy()

    def children_of(self, node: int) -> np.ndarray:
        """Children of ``node`` (empty for a leaf)."""
        v = int(self._nodes(node))
        return self._child_idx[self._child_ptr[v] : self._child_ptr[v + 1]].copy()

    def is_leaf(self, nodes: Any) -> np.ndarray:
        """True for the nodes that are leaves (ground values)."""
        return self._nodes(nodes) < self.n_leaves

    # ---- encoding and labels -------------------------------------------------------------
    def encode(self, values: Any) -> np.ndarray:
        """Leaf codes (int32) of raw column values; the inverse of ``leaves[codes]``.

        Raises :class:`HierarchyError` naming the first value that is not a leaf.
        """
        import pandas as pd  # imported on use: loading hierarchies must not load pandas

        vals = np.asarray(values, dtype=object if self.leaves.dtype == object else None)
        codes = pd.Index(self.leaves).get_indexer(vals.ravel())
        if (codes < 0).any():
            bad = as_python(vals.ravel()[int(np.flatnonzero(codes < 0)[0])])
            raise HierarchyError(
                f"{context_of(self.column)}: value {bad!r} is not a leaf of the hierarchy",
                column=self.column,
                value=bad,
            )
        return codes.astype(np.int32).reshape(vals.shape)

    def label_of(self, nodes: Any) -> np.ndarray:
        """Labels (object array of str) of node ids."""
        return self.labels[self._nodes(nodes)]

    def labels_at(self, level: int) -> np.ndarray:
        """Label of every leaf's generalization at ``level`` (ARX column ``level``)."""
        return self.labels[self.ancestor_table[self._level(level)]]

    def nodes_of(self, labels: Any) -> np.ndarray:
        """Node ids of labels; a label carried by several nodes (an unchanged ARX level) maps to
        the node of smallest coverage, deepest first. Raises HierarchyError on an unknown label."""
        import pandas as pd

        if not hasattr(self, "_label_index"):
            # a label's first occurrence in priority order is its lowest node
            lab = self.labels[self._rank_order]
            first = ~pd.Index(lab).duplicated()
            self._label_index = (pd.Index(lab[first]), self._rank_order[first])
        index, node = self._label_index
        vals = np.asarray(labels, dtype=object)
        pos = index.get_indexer(vals.ravel())
        if (pos < 0).any():
            bad = vals.ravel()[int(np.flatnonzero(pos < 0)[0])]
            raise HierarchyError(
                f"{context_of(self.column)}: label {bad!r} is not a node of the hierarchy",
                column=self.column,
                value=bad,
            )
        return node[pos].astype(np.int32).reshape(vals.shape)

    # ---- generalization ------------------------------------------------------------------
    def _level(self, level: Any) -> Any:
        lv = np.asarray(level)
        if lv.dtype.kind not in "iu" or (lv.size and (lv.min() < 0 or lv.max() > self.height)):
            raise ParameterError(
                f"{context_of(self.column)}: level {level!r} is not an integer in 0..{self.height}",
                parameter="level",
                value=level,
            )
        return lv

    def generalize(self, codes: Any, level: Any) -> np.ndarray:
        """Node id that each leaf code generalizes to at ``level`` (scalar or array broadcast
        with ``codes``), via :attr:`ancestor_table` (first-parent levels, root-clamped)."""
        return self.ancestor_table[self._level(level), self._codes(codes)]

    def leaf_mask(self, node: int) -> np.ndarray:
        """Boolean array over the leaves: True where the leaf is ``node`` or lies under it."""
        return self._lca.leaf_mask(int(self._nodes(node)))

    def covers(self, node: int, codes: Any) -> np.ndarray:
        """True where leaf code ``codes[i]`` is ``node`` or lies under it (``codes ≼ node``)."""
        return self.leaf_mask(node)[self._codes(codes)]

    def lca(self, codes: Any) -> int:
        """Lowest common ancestor of a non-empty set of leaf codes (smallest coverage, then
        greatest depth, then smallest id); paper 001 Def. 6 "nearest common ancestor"."""
        arr = self._codes(codes).ravel()
        if arr.size == 0:
            raise ParameterError(
                f"{context_of(self.column)}: lca of an empty set of codes is undefined", parameter="codes"
            )
        return int(self.group_lca(arr, np.zeros(arr.size, dtype=np.int64), 1)[0])

    def group_lca(self, codes: Any, group_ids: Any, n_groups: int) -> np.ndarray:
        """Lowest common ancestor of the leaf codes of each group, vectorised.

        ``codes[i]`` belongs to group ``group_ids[i]`` in ``0 .. n_groups-1``. Returns an int32
        array of length ``n_groups`` (``-1`` for a group without rows).

        Trees: min/max DFS position per group plus a sparse-table range minimum, O(rows +
        groups) without sorting; DAGs: the first leaf's ancestors, in priority order, tested
        against the group's distinct leaves by bit lookups (see :mod:`openbook.hierarchy.lca`).
        """
        codes_arr = self._codes(codes).ravel()  # any integer type: the LCA walks it by chunks
        g = np.asarray(group_ids).ravel()
        n_groups = int(n_groups)
        if n_groups < 0:
            raise ParameterError(f"n_groups must be >= 0, got {n_groups}", parameter="n_groups", value=n_groups)
        if g.shape != codes_arr.shape:
            raise ParameterError(
                f"{context_of(self.column)}: group_ids has {g.size} entries for {codes_arr.size} codes",
                parameter="group_ids",
            )
        if g.size and (g.dtype.kind not in "iu" or g.min() < 0 or g.max() >= n_groups):
            raise ParameterError(
                f"{context_of(self.column)}: group_ids must be integers in 0..{n_groups - 1}",
                parameter="group_ids",
            )
        if g.size == 0:
            return np.full(n_groups, -1, dtype=np.int32)
        return self._lca.group_lca(codes_arr, g, n_groups)

    def group_coverage(self, codes: Any, group_ids: Any, n_groups: int) -> np.ndarray:
        """Coverage (paper 001 Def. 5) of each group's LCA; 0 for an empty group."""
        lca = self.group_lca(codes, group_ids, n_groups)
        return np.where(lca >= 0, self.coverage[np.maximum(lca, 0)], 0).astype(np.int64)

    # ---- comparison and display ---------------------------------------------------------
    def same_structure(self, other: Hierarchy) -> bool:
        """True if both hierarchies have the same leaves (same order) and the same labelled
        graph (parent order included), whatever the numbering of internal nodes. Intervals and
        the column name are not compared."""
        if not isinstance(other, Hierarchy) or self.n_nodes != other.n_nodes:
            return False
        if self.n_leaves != other.n_leaves or self.leaves.dtype.kind != other.leaves.dtype.kind:
            return False
        if [as_python(v) for v in self.leaves] != [as_python(v) for v in other.leaves]:
            return False

        def canon(h: Hierarchy) -> Counter:
            keys = [
                (h.labels[v], int(h.depth[v]), np.packbits(h.leaf_mask(v)).tobytes())
                for v in range(h.n_nodes)
            ]
            return Counter((keys[v], tuple(keys[int(p)] for p in h.parents_of(v))) for v in range(h.n_nodes))

        return canon(self) == canon(other)

    def __repr__(self) -> str:
        kind = "tree" if self.is_tree else "DAG"
        return (
            f"Hierarchy(column={self.column!r}, n_leaves={self.n_leaves}, n_nodes={self.n_nodes}, "
            f"height={self.height}, {kind}{'' if self.uniform_depth else ', non-uniform depth'})"
        )
