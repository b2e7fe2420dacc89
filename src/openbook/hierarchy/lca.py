"""Coverage and lowest common ancestors, vectorised over groups of rows.

Paper 001 (Wong et al., VLDB 2007) Def. 5 defines ``coverage[v*]``, the number of ground
values under a generalized value, and Def. 6 charges each tuple ``(coverage[v*] - 1) /
(base - 1)`` where ``v*`` is the *nearest common ancestor* of the original and published
values; a QID-EC published as one generalized value is charged the coverage of the LCA of
its members. This module computes that LCA for every group at once.

LCA rule: the node of **smallest coverage** that covers every leaf of the group; ties (a unary
chain, or two DAG parents with the same leaf count) go to the **greatest depth**, then the
**smallest node id** (:func:`priority_order`). In a tree this is the deepest common ancestor.

* :class:`TreeLCA` (trees of any depth profile): the LCA of a set of leaves is the LCA of its
  first and last leaf in DFS order; per group the min/max DFS position is one
  ``np.minimum.at``/``np.maximum.at`` pass, and the depth of the pair's LCA is a range
  minimum (sparse table, O(1) per group) over the LCA depths of DFS-consecutive leaves.
  O(rows + groups), no sort.
* :class:`DagLCA` (DAGs): each leaf's ancestor set is kept as a bitset (bit ``v`` = node
  ``v``) and as a list sorted by LCA priority. A group's LCA is an ancestor of its first
  leaf, so those ancestors are the candidates; each is tested against the group's distinct
  leaves by bit lookups, and the lowest-rank candidate covering all wins. O(pairs x
  ancestors) with one sort of the (group, leaf) pairs. Temporary bit matrices built at
  construction are chunked to stay under :data:`CHUNK_BYTES`.
"""

from __future__ import annotations

import numpy as np

from openbook.hierarchy._graph import NodeGraph, unique_sorted

__all__ = ["TreeLCA", "DagLCA", "priority_order", "CHUNK_BYTES"]

#: Upper bound on the bytes of a temporary bit matrix (DAG paths only).
CHUNK_BYTES = 1 << 24
#: rows per pass of a tree's per-group minimum and maximum (a pass's int64 positions stay small)
CHUNK_ROWS = 1 << 20


def priority_order(coverage: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Node ids sorted by LCA priority: coverage ascending, depth descending, id ascending."""
    return np.lexsort((np.arange(coverage.size), -np.asarray(depth, dtype=np.int64), coverage)).astype(np.int32)


class TreeLCA:
    """Coverage, leaf masks and group LCAs of a tree, from its level table.

    ``by_depth[d, leaf]`` is the leaf's ancestor at depth ``d`` from the root, or the leaf
    itself below its own depth (so two different leaves never agree below their LCA).
    """

    def __init__(self, ancestor_table: np.ndarray, depth: np.ndarray, n_nodes: int) -> None:
        height, nl = ancestor_table.shape[0] - 1, ancestor_table.shape[1]
        dl = np.asarray(depth[:nl], dtype=np.int64)
        d = np.arange(height + 1)[:, None]
        j = dl[None, :] - d
        cols = np.broadcast_to(np.arange(nl), j.shape)
        by_depth = np.where(j >= 0, ancestor_table[np.clip(j, 0, None), cols], cols).astype(np.int64)
        self.by_depth = by_depth
        self.coverage = np.bincount(by_depth[d <= dl[None, :]], minlength=n_nodes).astype(np.int64)
        self._depth = np.asarray(depth, dtype=np.int64)
        self._nl = nl
        # leaves in DFS order = lexicographic order of their root-to-leaf paths
        dfs = np.lexsort(by_depth[::-1])
        self._leaf_at_pos = dfs.astype(np.int64)
        self._pos = np.empty(nl, dtype=np.int64)
        self._pos[dfs] = np.arange(nl)
        # lcp[p] = depth of LCA(leaf at p, leaf at p+1) = number of agreeing depths - 1
        paths = by_depth[:, dfs]
        lcp = (paths[:, :-1] == paths[:, 1:]).sum(axis=0) - 1
        levels = [np.r_[lcp, 0].astype(np.int64)]  # padded to length nl
        span = 1
        while 2 * span <= nl - 1:
            prev = levels[-1]
            nxt = prev.copy()  # nxt[x] = min(lcp[x : x + 2 span]) where that range is valid
            nxt[: nl - span] = np.minimum(prev[: nl - span], prev[span:nl])
            levels.append(nxt)
            span *= 2
        self._rmq = np.concatenate(levels)  # level t at offset t * nl
        self._log2 = np.zeros(nl + 1, dtype=np.int64)
        self._log2[2:] = np.floor(np.log2(np.arange(2, nl + 1))).astype(np.int64)
        self._flat = by_depth.ravel()

    def leaf_mask(self, node: int) -> np.ndarray:
        return self.by_depth[self._depth[node]] == node

    def group_lca(self, codes: np.ndarray, group_ids: np.ndarray, n_groups: int) -> np.ndarray:
        """LCA per group (int32, -1 for an empty group); inputs already validated, integer
        arrays of one length. The members' least and greatest DFS positions are taken a
        chunk of rows at a time (a chunk's positions, never a whole column's, in int64)."""
        nl = self._nl
        i = np.full(n_groups, nl - 1, dtype=np.int64)
        j = np.full(n_groups, -1, dtype=np.int64)
        for s in range(0, len(codes), CHUNK_ROWS):
            p = self._pos[codes[s:s + CHUNK_ROWS]]
            g = group_ids[s:s + CHUNK_ROWS]
            np.minimum.at(i, g, p)
            np.maximum.at(j, g, p)
        empty = j < 0
        j = np.maximum(j, i)
        span = j - i
        t = self._log2[span]
        lo = t * nl
        dd = np.minimum(self._rmq[lo + i], self._rmq[lo + j - (1 << t)])
        a = self._leaf_at_pos[i]
        res = np.where(span > 0, self._flat[dd * nl + a], a)
        res[empty] = -1
        return res.astype(np.int32)


class DagLCA:
    """Coverage, leaf masks and group LCAs of a DAG, from leaf-ancestor bitsets."""

    def __init__(self, graph: NodeGraph) -> None:
        nn, nl = graph.n_nodes, graph.n_leaves
        nb = (nn + 7) // 8
        # ancestor sets (bit v = node v, itself included), propagated in topological rounds
        anc = np.zeros((nn, nb), dtype=np.uint8)
        ids = np.arange(nn)
        anc[ids, ids >> 3] = (1 << (ids & 7)).astype(np.uint8)
        ptr, idx = graph.parent_ptr, graph.parent_idx
        for frontier in graph.rounds[1:]:  # all parents of a round are in earlier rounds
            cnt = ptr[frontier + 1] - ptr[frontier]
            for k in range(int(cnt.max())):
                f = frontier[cnt > k]
                anc[f] |= anc[idx[ptr[f] + k]]
        anc = anc[:nl].copy()
        # each leaf's ancestor list (unpacked chunk by chunk), coverage = how many lists hold v
        step = max(1, CHUNK_BYTES // max(nn, 1))
        leaf_of, node_of = [], []
        for s in range(0, nl, step):
            rows, nodes = np.nonzero(np.unpackbits(anc[s : s + step], axis=1, count=nn, bitorder="little"))
            leaf_of.append(rows + s)
            node_of.append(nodes)
        leaf_of_a, node_of_a = np.concatenate(leaf_of), np.concatenate(node_of)
        self.coverage = np.bincount(node_of_a, minlength=nn).astype(np.int64)
        self._order = priority_order(self.coverage, graph.depth).astype(np.int64)
        self._rank = np.empty(nn, dtype=np.int64)
        self._rank[self._order] = np.arange(nn)
        # ancestor lists sorted by LCA priority rank within each leaf
        key = np.sort(leaf_of_a * nn + self._rank[node_of_a])
        self._anc_rank = key % nn
        self._anc_cnt = np.bincount(leaf_of_a, minlength=nl).astype(np.int64)
        self._anc_ptr = np.cumsum(self._anc_cnt) - self._anc_cnt
        self._bits = anc  # bit v of row l: node v covers leaf l
        self._nl = nl

    def leaf_mask(self, node: int) -> np.ndarray:
        return ((self._bits[:, node >> 3] >> (node & 7)) & 1).astype(bool)

    def group_lca(self, codes: np.ndarray, group_ids: np.ndarray, n_groups: int) -> np.ndarray:
        """LCA per group (int32, -1 for an empty group); inputs already validated, integer
        arrays of one length.

        The LCA is an ancestor of the group's first leaf, so the candidates are that leaf's
        ancestors; each candidate is tested against every distinct leaf of the group (one bit
        lookup per pair), the tests are AND-ed per candidate and the candidate of lowest rank
        that covers all wins - all with flat arrays and 1-D ``reduceat``.
        """
        out = np.full(n_groups, -1, dtype=np.int32)
        if group_ids.size == 0:
            return out
        nl = self._nl
        key = unique_sorted(group_ids.astype(np.int64) * nl + codes)  # distinct (group, leaf) pairs, by group
        gp, lp = key // nl, key % nl
        starts = np.flatnonzero(np.r_[True, gp[1:] != gp[:-1]])
        n_g = np.diff(np.r_[starts, gp.size])
        first = lp[starts]
        m_g = self._anc_cnt[first]  # candidates per group (>= 1: the root)
        # one segment of n_g entries per (group, candidate); entries ordered (group, candidate, leaf)
        cand_start = np.cumsum(m_g) - m_g
        cand = self._anc_rank[
            np.repeat(self._anc_ptr[first] - cand_start, m_g) + np.arange(int(m_g.sum()))
        ]  # candidate ranks, group by group
        seg_len = np.repeat(n_g, m_g)
        seg = np.cumsum(seg_len) - seg_len
        li = np.arange(int(seg_len.sum())) - np.repeat(seg, seg_len)
        leaf = lp[np.repeat(np.repeat(starts, m_g), seg_len) + li]
        v = np.repeat(self._order[cand], seg_len)
        hit = (self._bits[leaf, v >> 3] >> (v & 7)) & 1
        covers_all = np.minimum.reduceat(hit, seg)
        val = np.where(covers_all == 1, cand, np.iinfo(np.int64).max)
        best = np.minimum.reduceat(val, cand_start)
        out[gp[starts]] = self._order[best]
        return out
