"""Shared builders for the privacy-model unit tests (imported by the test modules of this
directory; not a conftest so that its name cannot clash with other packages' helpers)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from openbook.models import SADomain


@dataclass(frozen=True)
class Tree:
    """The part of :class:`openbook.hierarchy.Hierarchy` the models use: ``ancestor_table``
    (height + 1, n_leaves), level 0 the leaves, level ``height`` the root."""

    ancestor_table: np.ndarray
    height: int


def make_domain(global_counts, *, values=None, numeric=None, hierarchy=None, sets=None):
    g = np.asarray(global_counts, dtype=np.int64)
    if values is None:
        values = np.array([f"v{i}" for i in range(len(g))], dtype=object)
    return SADomain(
        values=np.asarray(values, dtype=object),
        global_counts=g,
        numeric=None if numeric is None else np.asarray(numeric, dtype=np.float64),
        hierarchy=hierarchy,
        sensitive_sets={k: np.asarray(v, dtype=bool) for k, v in (sets or {}).items()},
    )


def tree_from_parents(parents: dict, m: int, *, clamp: bool = True) -> Tree:
    """A :class:`Tree` from parent pointers (leaves 0..m−1, internal ids >= m, the root's
    parent None). A shallow leaf's column repeats the root (``clamp``, as
    :class:`openbook.hierarchy.Hierarchy` does) or the leaf itself (padding)."""
    chains = []
    for leaf in range(m):
        chain = [leaf]
        while parents[chain[-1]] is not None:
            chain.append(parents[chain[-1]])
        chains.append(chain)
    height = max(len(c) for c in chains) - 1
    table = np.empty((height + 1, m), dtype=np.int64)
    for leaf, chain in enumerate(chains):
        pad = height + 1 - len(chain)
        column = chain + [chain[-1]] * pad if clamp else [leaf] * pad + chain
        table[:, leaf] = column
    return Tree(ancestor_table=table, height=height)


def random_parents(rng: np.random.Generator, m: int, n_internal: int) -> dict:
    """Random tree with leaves of uneven depth: internal node m is the root, node m+i hangs
    under a random earlier internal node, each leaf under a random internal node."""
    parents: dict = {m: None}
    for i in range(1, n_internal):
        parents[m + i] = int(m + rng.integers(0, i))
    for leaf in range(m):
        parents[leaf] = int(m + rng.integers(0, n_internal))
    return parents


def random_tree(rng: np.random.Generator, m: int, height: int) -> Tree:
    """A random tree of uniform depth ``height`` over m leaves (global node ids)."""
    parents: dict = {}
    current = list(range(m))
    next_id = m
    for _ in range(height - 1):
        n_new = int(rng.integers(1, max(2, len(current))))
        ids = list(range(next_id, next_id + n_new))
        next_id += n_new
        for node in current:
            parents[node] = ids[int(rng.integers(0, n_new))]
        current = sorted(set(parents[node] for node in current))
    root = next_id
    for node in current:
        parents[node] = root
    parents[root] = None
    if height == 0:
        return Tree(ancestor_table=np.arange(m)[None, :], height=0)
    return tree_from_parents(parents, m)


def subtree_heights(parents: dict, m: int) -> dict:
    """Height of every node: the longest path down to a leaf (leaves 0)."""
    h: dict = {}
    for leaf in range(m):
        node, dist = leaf, 0
        while node is not None:
            h[node] = max(h.get(node, 0), dist)
            node, dist = parents[node], dist + 1
    return h


def hierarchical_ground(parents: dict, m: int) -> np.ndarray:
    """Li et al.'s ground distance: height(LCA(i, j)) / H, from the parent pointers."""
    h = subtree_heights(parents, m)
    root = next(n for n, p in parents.items() if p is None)

    def ancestors(leaf):
        out = [leaf]
        while parents[out[-1]] is not None:
            out.append(parents[out[-1]])
        return out

    chains = [ancestors(i) for i in range(m)]
    d = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            lca = next(n for n in chains[i] if n in chains[j])
            d[i, j] = h[lca] / h[root]
    return d


def emd_lp(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """Brute-force EMD: the min-cost flow from p to q under the ground distance matrix,
    solved as a linear program with scipy.optimize.linprog."""
    from scipy.optimize import linprog

    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1.0  # flow out of i = p_i
        a_eq[m + i, i::m] = 1.0  # flow into i = q_i
    res = linprog(
        ground.ravel(), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs"
    )
    assert res.status == 0, res.message
    return float(res.fun)
