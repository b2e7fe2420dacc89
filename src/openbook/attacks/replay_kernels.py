"""numba kernels of the replay adversary (:mod:`.replay`): sampling possible worlds.

A *unit* of the replay is a set of released groups ("leaves") whose rows are cut into
*cells* (rows the algorithm treats alike: a GG bucket, an SG half, a Mondrian atom). A
possible world assigns each leaf's released SA multiset uniformly at random to the leaf's
rows (paper 000 §5.1: "uniformly at random create an assignment of the sensitive values to
the tuples"); the replay only needs each world's SA counts per cell.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def sample_cell_counts(seed, vals, leaf_ptr, cell_of_pos, n_cells, n_vals, n_worlds):  # pragma: no cover
    """``(n_worlds, n_cells, n_vals)`` int32 SA counts of uniformly drawn worlds.

    ``vals`` holds the unit-local SA value of every position, positions of a leaf contiguous
    (``leaf_ptr`` are the leaf boundaries); ``cell_of_pos`` the cell of each position. Each
    world is a Fisher–Yates shuffle of every leaf's segment (a shuffle of a shuffled
    segment is again uniform, so the buffer is never reset).
    """
    np.random.seed(seed)
    buf = vals.copy()
    out = np.zeros((n_worlds, n_cells, n_vals), dtype=np.int32)
    n_leaves = leaf_ptr.size - 1
    for w in range(n_worlds):
        for lf in range(n_leaves):
            a = leaf_ptr[lf]
            b = leaf_ptr[lf + 1]
            for i in range(b - 1, a, -1):
                j = a + np.random.randint(0, i - a + 1)
                t = buf[i]
                buf[i] = buf[j]
                buf[j] = t
        for pos in range(buf.size):
            out[w, cell_of_pos[pos], buf[pos]] += 1
    return out


@njit(cache=True)
def gg_final_likelihood(H, p, n_buckets):  # pragma: no cover - compiled
    """Probability that GG/RGG(p) with ``tail="merge"``, started at the unit's first bucket,
    publishes the unit's buckets ``0..B-1`` (the table's last ones) as one group.

    ``H[w, i, j]``: do buckets ``i..j`` satisfy the model in world ``w``? Sums over every
    run: closed groups ``0 = s_1 < … < s_k``, then either the first group runs to the end
    (no tail) or a tail from ``t`` that no prefix ever satisfies, merged backwards into the
    groups until the merge holds — which must stop at bucket 0 (greedy.py ``_merge_tail``).
    """
    W = H.shape[0]
    B = n_buckets
    out = np.zeros(W)
    C = np.zeros((B, B))
    A = np.zeros(B)
    F = np.zeros(B)
    for w in range(W):
        # C[s, e]: from group start s, the group closes at e (e < B-1: a bucket follows)
        for s in range(B):
            f = 1.0
            for e in range(s, B):
                if H[w, s, e]:
                    if e == B - 1:
                        C[s, e] = f
                    else:
                        run_out = True
                        for e2 in range(e + 1, B):
                            if H[w, s, e2]:
                                run_out = False
                                break
                        C[s, e] = f * ((1.0 - p) + (p if run_out else 0.0))
                    f *= p
                else:
                    C[s, e] = 0.0
        A[:] = 0.0
        F[:] = 0.0
        F[0] = 1.0
        total = C[0, B - 1]
        for s in range(1, B):
            a = 0.0
            for s0 in range(s):
                a += F[s0] * C[s0, s - 1]
            A[s] = a
            # s as the start of a later group: the backward merge must not stop there
            F[s] = a if not H[w, s, B - 1] else 0.0
            # s as the tail start: no prefix from s ever satisfies
            tail = True
            for e in range(s, B):
                if H[w, s, e]:
                    tail = False
                    break
            if tail:
                total += a
        out[w] = total
    return out


@njit(cache=True)
def cut_left_masks(X, lo, hi, dim, mval, tval):  # pragma: no cover - compiled
    """Left-child indicator of every position of the segments ``[lo[i], hi[i])`` (concatenated
    in segment order) for the cut ``(dim[i], mval[i], tval[i])`` — the rule of
    ``mondrian._apply``/``mondrian_cut``: ``v < m``, or ``v == m`` among the first ``t`` such
    positions in the segment's order."""
    tot = 0
    for i in range(lo.size):
        tot += hi[i] - lo[i]
    out = np.zeros(tot, np.bool_)
    k = 0
    for i in range(lo.size):
        j = dim[i]
        m = mval[i]
        t = tval[i]
        seen = 0
        for q in range(lo[i], hi[i]):
            v = X[q, j]
            if v < m:
                out[k] = True
            elif v == m and seen < t:
                seen += 1
                out[k] = True
            k += 1
    return out
