"""Validation and layout of a hierarchy's node graph (paper 001 §3: a taxonomy is a tree or,
in general, a DAG - here with a single root).

:func:`build_graph` checks the parent links given to :class:`~openbook.hierarchy.Hierarchy`
and lays them out as CSR arrays; one top-down pass (Kahn's algorithm in rounds, vectorised
per round) finds cycles and gives every node its longest and shortest root distance and the
topological rounds later passes reuse. Every check raises :class:`HierarchyError` with one
line naming the column and the offending value or node label.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from openbook.errors import HierarchyError

__all__ = ["NodeGraph", "build_graph", "context_of", "as_python", "is_number", "leaf_array", "ranges", "unique_sorted"]


def context_of(column: str | None) -> str:
    return f"hierarchy of column {column!r}" if column is not None else "hierarchy"


def as_python(value: Any) -> Any:
    """A numpy scalar as the Python scalar it stands for (for messages and dict keys)."""
    return value.item() if isinstance(value, np.generic) else value


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def leaf_array(values: Iterable[Any], column: str | None) -> np.ndarray:
    """Leaf values as an int64, float64 or object array; rejects missing values."""
    vals = [as_python(v) for v in values]
    for v in vals:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise HierarchyError(
                f"{context_of(column)}: a leaf value is missing ({v!r}); leaves must be actual values",
                column=column,
                value=v,
            )
        if not isinstance(v, Hashable):
            raise HierarchyError(
                f"{context_of(column)}: leaf value {v!r} is not hashable", column=column, value=v
            )
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return np.array(vals, dtype=np.int64)
    if vals and all(is_number(v) for v in vals):
        return np.array(vals, dtype=np.float64)
    arr = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        arr[i] = v
    return arr


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for each (s, c), without a Python loop."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, counts) + np.arange(total)


def unique_sorted(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (``np.sort`` + mask; much faster than ``np.unique`` here)."""
    s = np.sort(np.asarray(a).ravel())
    return s[np.r_[True, s[1:] != s[:-1]]] if s.size else s


@dataclass(frozen=True)
class NodeGraph:
    """A validated hierarchy graph. Edges are stored twice as CSR arrays: parents of node
    ``v`` are ``parent_idx[parent_ptr[v]:parent_ptr[v+1]]`` (first-listed first), children
    ``child_idx[child_ptr[v]:child_ptr[v+1]]``."""

    leaves: np.ndarray
    labels: list[str]
    n_leaves: int
    n_nodes: int
    root: int
    parent_ptr: np.ndarray
    parent_idx: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    depth: np.ndarray  # longest root-to-node path
    shortest_depth: np.ndarray  # shortest root-to-node path
    rounds: list[np.ndarray]  # topological rounds from the root: all parents come earlier


def build_graph(
    leaves: Sequence[Any], labels: Sequence[Any], parents: Sequence[Any], column: str | None
) -> NodeGraph:
    """Validate ``leaves``/``labels``/``parents`` (see :class:`Hierarchy`) into a NodeGraph.

    Raises :class:`HierarchyError` on missing or duplicate leaf values, a parent id out of
    range, a leaf that has children or no parent, more than one root, a cycle (naming a node
    on it), or an internal node without children (unreachable from every leaf).
    """
    ctx = context_of(column)
    leaf_values = leaf_array(leaves, column)
    nl = len(leaf_values)
    if nl == 0:
        raise HierarchyError(f"{ctx}: a hierarchy needs at least one leaf", column=column)
    seen: dict[Any, int] = {}
    for i, v in enumerate(leaf_values):
        v = as_python(v)
        if v in seen:
            raise HierarchyError(
                f"{ctx}: leaf value {v!r} is listed twice (leaves {seen[v]} and {i})",
                column=column,
                value=v,
            )
        seen[v] = i
    all_labels = [str(as_python(v)) for v in leaf_values] + [str(as_python(x)) for x in labels]
    nn = len(all_labels)
    parents = list(parents)
    if len(parents) != nn:
        raise HierarchyError(
            f"{ctx}: {len(parents)} parent entries given for {nn} nodes "
            f"({nl} leaves + {nn - nl} internal)",
            column=column,
        )

    def name(v: int) -> str:
        return f"{all_labels[v]!r} (node {v})"

    # parent lists as CSR arrays, first-listed parent first
    counts = np.zeros(nn, dtype=np.int64)
    flat: list[int] = []
    for v, p in enumerate(parents):
        if p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, bool) and p == -1):
            plist: list[Any] = []
        elif isinstance(p, (int, np.integer)) and not isinstance(p, bool):
            plist = [p]
        else:
            plist = list(p)
        for q in plist:
            if not (isinstance(q, (int, np.integer)) and not isinstance(q, bool)) or not 0 <= q < nn:
                raise HierarchyError(
                    f"{ctx}: node {name(v)} has parent {q!r}, which is not a node id 0..{nn - 1}",
                    column=column,
                    value=all_labels[v],
                )
            if q == v:
                raise HierarchyError(
                    f"{ctx}: cycle through node {name(v)}: it is its own parent",
                    column=column,
                    value=all_labels[v],
                )
        if len(set(int(q) for q in plist)) != len(plist):
            raise HierarchyError(
                f"{ctx}: node {name(v)} lists the same parent twice",
                column=column,
                value=all_labels[v],
            )
        counts[v] = len(plist)
        flat.extend(int(q) for q in plist)
    parent_ptr = np.zeros(nn + 1, dtype=np.int64)
    np.cumsum(counts, out=parent_ptr[1:])
    parent_idx = np.asarray(flat, dtype=np.int64)
    edge_child = np.repeat(np.arange(nn, dtype=np.int64), counts)

    # a leaf is never a parent; a leaf always has a parent (unless it is the only node)
    as_parent_leaf = parent_idx < nl
    if as_parent_leaf.any():
        e = int(np.flatnonzero(as_parent_leaf)[0])
        leaf, child = int(parent_idx[e]), int(edge_child[e])
        raise HierarchyError(
            f"{ctx}: leaf {as_python(leaf_values[leaf])!r} is not a leaf: it is the parent of {name(child)}",
            column=column,
            value=as_python(leaf_values[leaf]),
        )
    orphan_leaves = np.flatnonzero(counts[:nl] == 0)
    if orphan_leaves.size and nn > 1:
        leaf = int(orphan_leaves[0])
        raise HierarchyError(
            f"{ctx}: leaf {as_python(leaf_values[leaf])!r} has no parent, so it never reaches the root",
            column=column,
            value=as_python(leaf_values[leaf]),
        )
    roots = np.flatnonzero(counts == 0)
    if roots.size > 1:
        shown = ", ".join(repr(all_labels[r]) for r in roots[:5])
        raise HierarchyError(
            f"{ctx}: {roots.size} roots ({shown}{', ...' if roots.size > 5 else ''}); "
            "a hierarchy needs a single root",
            column=column,
            value=all_labels[int(roots[1])],
        )

    # children CSR (edges sorted by parent)
    order = np.argsort(parent_idx, kind="stable")
    child_of_edge = edge_child[order]
    parent_of_edge = parent_idx[order]
    n_children = np.bincount(parent_idx, minlength=nn).astype(np.int64)
    child_ptr = np.zeros(nn + 1, dtype=np.int64)
    np.cumsum(n_children, out=child_ptr[1:])

    # top-down Kahn in rounds: longest (depth) and shortest root paths, topological rounds
    depth = np.zeros(nn, dtype=np.int64)
    sdepth = np.full(nn, np.iinfo(np.int64).max, dtype=np.int64)
    sdepth[roots] = 0
    remaining = counts.copy()
    done = np.zeros(nn, dtype=bool)
    rounds: list[np.ndarray] = []
    frontier = roots.astype(np.int64)
    while frontier.size:
        done[frontier] = True
        rounds.append(frontier)
        edges = ranges(child_ptr[frontier], n_children[frontier])
        if edges.size == 0:
            break
        ch, pa = child_of_edge[edges], parent_of_edge[edges]
        np.maximum.at(depth, ch, depth[pa] + 1)
        np.minimum.at(sdepth, ch, sdepth[pa] + 1)
        remaining -= np.bincount(ch, minlength=nn)
        cand = unique_sorted(ch)
        frontier = cand[remaining[cand] == 0]
    if not done.all():
        start = int(np.flatnonzero(~done)[0])
        path: list[int] = []
        pos: dict[int, int] = {}
        v = start
        while v not in pos:
            pos[v] = len(path)
            path.append(v)
            ps = parent_idx[parent_ptr[v] : parent_ptr[v + 1]]
            v = int(next(q for q in ps if not done[q]))
        cyc = path[pos[v] :] + [v]
        shown = " -> ".join(repr(all_labels[u]) for u in cyc)
        raise HierarchyError(
            f"{ctx}: cycle through node {name(v)}: {shown}",
            column=column,
            value=all_labels[v],
        )
    childless = np.flatnonzero(n_children[nl:] == 0) + nl
    if childless.size:
        v = int(childless[0])
        raise HierarchyError(
            f"{ctx}: internal node {name(v)} has no children, so it is unreachable from every leaf",
            column=column,
            value=all_labels[v],
        )

    return NodeGraph(
        leaves=leaf_values,
        labels=all_labels,
        n_leaves=nl,
        n_nodes=nn,
        root=int(roots[0]),
        parent_ptr=parent_ptr,
        parent_idx=parent_idx,
        child_ptr=child_ptr,
        child_idx=child_of_edge,
        depth=depth,
        shortest_depth=sdepth,
        rounds=rounds,
    )
