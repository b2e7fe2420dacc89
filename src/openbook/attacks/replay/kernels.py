"""numba kernels of the replay adversary (paper 000 §5.1): sampling possible worlds, GG's
last group, and the per-cut class bookkeeping of the Mondrian replay.

A *unit* of the replay is a set of released groups ("leaves") whose rows are cut into
*cells* (rows the algorithm treats alike: a GG bucket, an SG half, a Mondrian atom). A
possible world assigns each leaf's released SA multiset uniformly at random to the leaf's
rows (paper 000 §5.1: "uniformly at random create an assignment of the sensitive values to
the tuples"); the replay only needs each world's SA counts per cell.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import numba
import numpy as np
from numba import njit

#: rows below which a parallel kernel run (a planner re-run) is cheaper on one thread: each
#: parallel launch wakes the thread pool (milliseconds on a busy machine, whatever the work)
SERIAL_ROWS = 100_000


@contextmanager
def serial_below(rows: int, threshold: int = SERIAL_ROWS) -> Iterator[None]:
    """Run numba's parallel kernels on the calling thread alone while the work is small
    (``rows < threshold``); the thread count (numba's, per calling thread) is restored."""
    if rows >= threshold:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


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
def gg_run_likelihood(H, A, p, followed, merge):  # pragma: no cover - compiled
    """Probability that GG/RGG(p), starting a group at the run's first bucket, publishes the
    run's buckets ``0..B-1`` as groups that all carry the class's labels (``A[s, e]``:
    buckets ``s..e`` would), ending exactly at bucket ``B-1``.

    ``H[w, s, e]``: do buckets ``s..e`` satisfy the model in world ``w``? A group from ``s``
    closes at the first satisfying ``e`` (RGG: extends with probability ``p`` per satisfying
    ``e``; with no later satisfying bucket before the table's end the extension closes at
    ``e``). ``followed``: a bucket follows the run (its last group then stops with
    ``1 - p``); ``merge``: the run ends the table under ``tail="merge"`` — after the last
    closed group a tail no prefix of which ever satisfies is merged backwards into the
    groups until the merged group holds, which must happen inside the run (greedy.py
    ``_merge_tail``).
    """
    W = H.shape[0]
    B = H.shape[1]
    out = np.zeros(W)
    C = np.zeros((B, B))
    F = np.zeros(B)
    T = np.zeros(B + 1)
    for w in range(W):
        # C[s, e]: from group start s, the group closes at e
        for s in range(B):
            f = 1.0
            for e in range(s, B):
                C[s, e] = 0.0
                if H[w, s, e]:
                    if e == B - 1 and not followed:
                        C[s, e] = f
                    else:
                        run_out = not followed
                        if run_out:
                            for e2 in range(e + 1, B):
                                if H[w, s, e2]:
                                    run_out = False
                                    break
                        C[s, e] = f * ((1.0 - p) + (p if run_out else 0.0))
                    f *= p
        # F[s]: a group starts at s and every earlier group of the run carries the labels
        F[:] = 0.0
        F[0] = 1.0
        for s in range(1, B):
            acc = 0.0
            for s0 in range(s):
                if A[s0, s - 1]:
                    acc += F[s0] * C[s0, s - 1]
            F[s] = acc
        total = 0.0
        if not merge:
            for s in range(B):
                if A[s, B - 1]:
                    total += F[s] * C[s, B - 1]
        else:
            # T[s]: from a group start s after the merged group's start: groups whose starts
            # never satisfy to the end (the merge passes them), then a tail
            T[B] = 0.0
            for s in range(B - 1, 0, -1):
                if H[w, s, B - 1]:
                    T[s] = 0.0
                    continue
                tail = 1.0
                for e in range(s, B):
                    if H[w, s, e]:
                        tail = 0.0
                        break
                acc = tail
                for e in range(s, B - 1):
                    acc += C[s, e] * T[e + 1]
                T[s] = acc
            for s in range(B):
                if A[s, B - 1] and H[w, s, B - 1]:
                    g = C[s, B - 1]
                    for e in range(s, B - 1):
                        g += C[s, e] * T[e + 1]
                    total += F[s] * g
        out[w] = total
    return out


@njit(cache=True)
def class_sides(pcls, left, cut_ptr, csize, psa, n_sa, n_cls):  # pragma: no cover - compiled
    """Per candidate cut (positions ``cut_ptr[i]..cut_ptr[i+1]-1``, class ``pcls``, side
    ``left``, SA code ``psa`` of each): the *involved* classes — those whose members' SA
    counts on a side differ between possible worlds: they straddle the cut, or have members
    outside the node. Returns ``n_inv`` per cut, per involved (cut, class) entry the cut,
    class, members left and right and their SA counts, and per position whether its class
    is involved."""
    m = cut_ptr.size - 1
    cnt_l = np.zeros(n_cls, np.int64)
    cnt_r = np.zeros(n_cls, np.int64)
    stamp = np.full(n_cls, -1, np.int64)
    done = np.full(n_cls, -1, np.int64)
    entry = np.full(n_cls, -1, np.int64)
    n_inv = np.zeros(m, np.int64)
    for phase in range(2):
        if phase == 1:
            E = 0
            for i in range(m):
                E += n_inv[i]
            e_cut = np.empty(E, np.int64)
            e_cls = np.empty(E, np.int64)
            e_l = np.empty(E, np.int64)
            e_r = np.empty(E, np.int64)
            sa_l = np.zeros((E, n_sa), np.int64)
            sa_r = np.zeros((E, n_sa), np.int64)
            inv_pos = np.zeros(pcls.size, np.bool_)
            stamp[:] = -1
            done[:] = -1
        e = 0
        for i in range(m):
            a = cut_ptr[i]
            b = cut_ptr[i + 1]
            for q in range(a, b):
                c = pcls[q]
                if stamp[c] != i:
                    stamp[c] = i
                    cnt_l[c] = 0
                    cnt_r[c] = 0
                if left[q]:
                    cnt_l[c] += 1
                else:
                    cnt_r[c] += 1
            for q in range(a, b):
                c = pcls[q]
                if done[c] != i:
                    done[c] = i
                    inv = (cnt_l[c] > 0 and cnt_r[c] > 0) or cnt_l[c] + cnt_r[c] < csize[c]
                    if phase == 0:
                        if inv:
                            n_inv[i] += 1
                    else:
                        entry[c] = -1
                        if inv:
                            entry[c] = e
                            e_cut[e] = i
                            e_cls[e] = c
                            e_l[e] = cnt_l[c]
                            e_r[e] = cnt_r[c]
                            e += 1
                if phase == 1 and entry[c] >= 0:
                    inv_pos[q] = True
                    if left[q]:
                        sa_l[entry[c], psa[q]] += 1
                    else:
                        sa_r[entry[c], psa[q]] += 1
    return n_inv, e_cut, e_cls, e_l, e_r, sa_l, sa_r, inv_pos


@njit(cache=True)
def segment_sum(x, seg, m):  # pragma: no cover - compiled
    """``out[s] = Σ x[e]`` over the entries ``e`` with ``seg[e] == s`` (``(m, V)`` int64)."""
    out = np.zeros((m, x.shape[1]), np.int64)
    for e in range(seg.size):
        s = seg[e]
        for v in range(x.shape[1]):
            out[s, v] += x[e, v]
    return out


@njit(cache=True)
def refine_atoms(atom, rows, side, ptr, nxt):  # pragma: no cover - compiled
    """Split atoms by constraints, in order: constraint ``c`` holds ``rows[ptr[c]:ptr[c+1]]``
    on sides ``side`` (0/1); its rows of one atom on one side get a fresh atom id (from
    ``nxt`` on). ``atom`` is updated in place; returns the next free id."""
    bound = nxt + rows.size + 1
    stamp = np.full((2, bound), -1, np.int64)
    fresh = np.empty((2, bound), np.int64)
    for c in range(ptr.size - 1):
        for q in range(ptr[c], ptr[c + 1]):
            r = rows[q]
            a = atom[r]
            sd = side[q]
            if stamp[sd, a] != c:
                stamp[sd, a] = c
                fresh[sd, a] = nxt
                nxt += 1
        for q in range(ptr[c], ptr[c + 1]):
            r = rows[q]
            atom[r] = fresh[side[q], atom[r]]
    return nxt


@njit(cache=True)
def box_points(lo, hi, total, cap):  # pragma: no cover - compiled
    """Every integer point ``x`` of box ``i`` (``lo[i] <= x <= hi[i]``) with ``sum(x) ==
    total[i]``; a box with more than ``cap`` candidate points is skipped and flagged in
    ``over``. Returns ``(points (P, V), owner (P,), over (m,))``."""
    m, V = lo.shape
    over = np.zeros(m, np.bool_)
    n_cand = np.zeros(m, np.int64)
    for i in range(m):
        p = 1.0
        last = -1
        for v in range(V):
            if hi[i, v] > lo[i, v]:
                last = v
        for v in range(V):
            if hi[i, v] > lo[i, v] and v != last:
                p *= hi[i, v] - lo[i, v] + 1
        if p > cap:
            over[i] = True
        else:
            n_cand[i] = int(p)
    tot = 0
    for i in range(m):
        tot += n_cand[i]
    pts = np.empty((tot, V), np.int64)
    owner = np.empty(tot, np.int64)
    keep = np.zeros(tot, np.bool_)
    k = 0
    cur = np.empty(V, np.int64)
    for i in range(m):
        if over[i]:
            continue
        last = -1
        for v in range(V):
            if hi[i, v] > lo[i, v]:
                last = v
        for v in range(V):
            cur[v] = lo[i, v]
        for _ in range(n_cand[i]):
            s = 0
            for v in range(V):
                if v != last:
                    s += cur[v]
            ok = True
            if last >= 0:
                x = total[i] - s
                if x < lo[i, last] or x > hi[i, last]:
                    ok = False
                for v in range(V):
                    pts[k, v] = cur[v]
                pts[k, last] = x
            else:
                if s != total[i]:
                    ok = False
                for v in range(V):
                    pts[k, v] = cur[v]
            owner[k] = i
            keep[k] = ok
            k += 1
            # odometer over the free dimensions except the last
            for v in range(V):
                if v == last or hi[i, v] == lo[i, v]:
                    continue
                if cur[v] < hi[i, v]:
                    cur[v] += 1
                    break
                cur[v] = lo[i, v]
    return pts[keep], owner[keep], over


@njit(cache=True)
def pruned_tables(sizes, cell_leaf, K, cs_ptr, cs_side, side_rad, lut_ptr, lut, end_ptr, end_dec, accepted,
                  lgam, limit, store_cap, weigh=True):  # pragma: no cover - compiled
    """Depth-first enumeration of the ``(C, V)`` tables (row sums ``sizes``, per leaf —
    cells with equal ``cell_leaf``, in any order — column sums ``K[leaf]``) keeping every
    decision. Cell ``c`` lies on the sides ``cs_side[cs_ptr[c]:cs_ptr[c+1]]``; side ``s``
    holds iff ``lut[lut_ptr[s] + Σ_v y_v·side_rad[s, v]]`` (``y`` its counts from cells);
    decisions ``end_dec[end_ptr[c]:end_ptr[c+1]]`` are complete after cell ``c``, and
    decision ``d`` (sides ``2d``, ``2d+1``) is kept iff both hold == ``accepted[d]``.

    Returns ``(acc (C, V), tot, ref, n_kept, visited, ok, tabs, logw, stored_ok)``: the
    weighted class counts and total weight of the kept tables, both scaled by ``exp(-ref)``;
    ``visited`` = tables and cut-off partial tables seen (``ok`` False above ``limit``); the
    kept tables and their log weights when ``store_cap > 0`` (``stored_ok`` False past it).
    ``weigh`` False skips the weights (``acc``, ``tot`` and ``logw`` stay 0): the tables alone,
    :func:`unit_tables_nb`. The one enumerator of a unit's tables: :mod:`.exact` imports it."""
    C = sizes.size
    V = K.shape[1]
    P = C * V
    S = side_rad.shape[0]
    last_of_leaf = np.zeros(C, np.bool_)  # the leaf's last cell in this order: its remainder
    seen = np.zeros(K.shape[0], np.bool_)
    for c in range(C - 1, -1, -1):
        if not seen[cell_leaf[c]]:
            seen[cell_leaf[c]] = True
            last_of_leaf[c] = True
    hi = np.zeros(P, np.int64)
    val = np.zeros(P, np.int64)
    lw = np.zeros(P + 1)
    y = np.zeros((S, V), np.int64)
    acc = np.zeros((C, V))
    tot = 0.0
    ref = -1e300
    n_kept = 0
    visited = 0
    cap0 = 0
    if store_cap > 0:
        cap0 = min(store_cap, 1024)
    tabs = np.zeros((cap0, C, V), np.int32)
    logw = np.zeros(cap0)
    stored_ok = True
    if P == 0:
        return acc, 1.0, 0.0, 1, 1, True, np.zeros((1, C, V), np.int32), np.zeros(1), True
    rem = K.astype(np.int64).copy()
    left = sizes.astype(np.int64).copy()
    p = 0
    fresh = True
    while True:
        c = p // V
        v = p % V
        lf = cell_leaf[c]
        if fresh:  # entering entry p: its range given the entries before it
            if last_of_leaf[c]:
                lo, hi[p] = rem[lf, v], (rem[lf, v] if rem[lf, v] <= left[c] else -1)
            elif v == V - 1:
                lo, hi[p] = left[c], (left[c] if left[c] <= rem[lf, v] else -1)
            else:
                rest = 0
                for u in range(v + 1, V):
                    rest += rem[lf, u]
                lo, hi[p] = max(0, left[c] - rest), min(rem[lf, v], left[c])
            if lo > hi[p]:  # no value fits: back to the entry before
                fresh = False
                p -= 1
                if p < 0:
                    break
                continue
            val[p] = lo
        else:  # back at entry p: undo it and try its next value
            rem[lf, v] += val[p]
            left[c] += val[p]
            for q in range(cs_ptr[c], cs_ptr[c + 1]):
                y[cs_side[q], v] -= val[p]
            if val[p] >= hi[p]:
                p -= 1
                if p < 0:
                    break
                continue
            val[p] += 1
        rem[lf, v] -= val[p]
        left[c] -= val[p]
        for q in range(cs_ptr[c], cs_ptr[c + 1]):
            y[cs_side[q], v] += val[p]
        if weigh:
            lw[p + 1] = lw[p] - lgam[val[p]]
        if v == V - 1:  # cell c complete: the decisions it completes
            keep = True
            for q in range(end_ptr[c], end_ptr[c + 1]):
                d = end_dec[q]
                both = True
                for s in (2 * d, 2 * d + 1):
                    key = 0
                    for u in range(V):
                        key += y[s, u] * side_rad[s, u]
                    if not lut[lut_ptr[s] + key]:
                        both = False
                if both != accepted[d]:
                    keep = False
                    break
            if not keep:
                visited += 1
                if visited > limit:
                    return acc, tot, ref, n_kept, visited, False, tabs[:0], logw[:0], False
                fresh = False
                continue
        if p == P - 1:  # a complete table that keeps every decision
            visited += 1
            if visited > limit:
                return acc, tot, ref, n_kept, visited, False, tabs[:0], logw[:0], False
            w_log = lw[P]
            if weigh:
                if w_log > ref:
                    scale = math.exp(ref - w_log) if ref > -1e299 else 0.0
                    tot *= scale
                    for a in range(C):
                        for b in range(V):
                            acc[a, b] *= scale
                    ref = w_log
                w = math.exp(w_log - ref)
                tot += w
                for q in range(P):
                    acc[q // V, q % V] += w * val[q]
            if store_cap > 0 and stored_ok:
                if n_kept >= store_cap:
                    stored_ok = False
                else:
                    if n_kept >= tabs.shape[0]:
                        grow = min(store_cap, 2 * tabs.shape[0] + 1)
                        t2 = np.zeros((grow, C, V), np.int32)
                        t2[:n_kept] = tabs[:n_kept]
                        l2 = np.zeros(grow)
                        l2[:n_kept] = logw[:n_kept]
                        tabs = t2
                        logw = l2
                    for q in range(P):
                        tabs[n_kept, q // V, q % V] = val[q]
                    logw[n_kept] = w_log
            n_kept += 1
            fresh = False
            continue
        p += 1
        fresh = True
    n_st = min(n_kept, tabs.shape[0]) if stored_ok else 0
    return acc, tot, ref, n_kept, visited, True, tabs[:n_st], logw[:n_st], stored_ok


@njit(cache=True)
def unit_tables_nb(sizes, cell_leaf, K, limit):  # pragma: no cover - compiled
    """Every ``(C, V)`` table of a unit — row sums ``sizes``, and for each leaf (cells with
    ``cell_leaf == l``) column sums ``K[l]`` — as ``(N, C, V)`` int32, depth first over the
    entries (cell by cell, value by value: :func:`pruned_tables` without decisions or
    weights); ``(0, C, V)`` and ``False`` above ``limit`` tables."""
    C = sizes.size
    V = K.shape[1]
    no_sides = np.zeros(C + 1, np.int64)
    cap = min(limit, 2**62) + 1
    _, _, _, _, _, ok, tabs, _, _ = pruned_tables(
        sizes, cell_leaf, K, no_sides, no_sides, np.zeros((0, V), np.int64), np.zeros(1, np.int64),
        np.zeros(0, np.bool_), no_sides, no_sides, np.zeros(0, np.bool_), np.zeros(1), limit, cap, False)
    if not ok:
        return np.zeros((0, C, V), np.int32), False
    return tabs, True


@njit(cache=True)
def batch_sides(tabs, tab_ptr, cell_ptr, rep, rep_ptr, dec_ptr, side_ptr, side_cells, off, n_sa):  # pragma: no cover
    """Side count vectors of every decision of every table of a batch of units: unit ``u``
    has tables ``tab_ptr[u]..`` (rows of the flat ``tabs``: ``cell_ptr`` cells each, ``V``
    columns, class ``j`` = SA code ``rep[rep_ptr[u] + j]``) and decisions
    ``dec_ptr[u]..``; decision ``d`` has sides ``2d`` (left) and ``2d+1`` whose cells are
    ``side_cells[side_ptr[s]..side_ptr[s+1]]`` plus the constant ``off[s]``. Returns
    ``(n_vectors, n_sa)`` counts, table by table, decision by decision, left then right."""
    U = tab_ptr.size - 1
    n_vec = 0
    for u in range(U):
        n_vec += (tab_ptr[u + 1] - tab_ptr[u]) * (dec_ptr[u + 1] - dec_ptr[u]) * 2
    out = np.zeros((n_vec, n_sa), np.int64)
    k = 0
    for u in range(U):
        for t in range(tab_ptr[u], tab_ptr[u + 1]):
            for d in range(dec_ptr[u], dec_ptr[u + 1]):
                for sd in range(2):
                    s = 2 * d + sd
                    for x in range(n_sa):
                        out[k, x] = off[s, x]
                    for q in range(side_ptr[s], side_ptr[s + 1]):
                        c = side_cells[q]
                        for j in range(rep_ptr[u + 1] - rep_ptr[u]):
                            out[k, rep[rep_ptr[u] + j]] += tabs[t, c, j]
                    k += 1
    return out


@njit(cache=True)
def batch_posteriors(tabs, tab_ptr, cell_ptr, sizes, ok, dec_ptr, accepted):  # pragma: no cover
    """Per unit of a batch: the exact class posterior per cell (expected count / size) from
    its tables weighted by their number of worlds and by whether every decision came out
    as observed (``ok``: both sides hold, per side vector in :func:`batch_sides` order).
    Returns the flat ``(sum cells, V)`` posteriors, the weight share and the number of
    consistent tables per unit."""
    U = tab_ptr.size - 1
    V = tabs.shape[2]
    post = np.zeros((cell_ptr[U], V))
    share = np.zeros(U)
    n_ok = np.zeros(U, np.int64)
    k = 0
    for u in range(U):
        C = cell_ptr[u + 1] - cell_ptr[u]
        nd = dec_ptr[u + 1] - dec_ptr[u]
        nt = tab_ptr[u + 1] - tab_ptr[u]
        logw = np.zeros(nt)
        good = np.ones(nt, np.bool_)
        for i in range(nt):
            t = tab_ptr[u] + i
            s = 0.0
            for c in range(C):
                for j in range(V):
                    s -= math.lgamma(tabs[t, c, j] + 1.0)
            logw[i] = s
            for d in range(nd):
                both = ok[k] and ok[k + 1]
                k += 2
                if both != accepted[dec_ptr[u] + d]:
                    good[i] = False
        mx = -1e300
        for i in range(nt):
            if logw[i] > mx:
                mx = logw[i]
        tot = 0.0
        allw = 0.0
        for i in range(nt):
            w = math.exp(logw[i] - mx)
            allw += w
            if good[i]:
                n_ok[u] += 1
                tot += w
                t = tab_ptr[u] + i
                for c in range(C):
                    for j in range(V):
                        post[cell_ptr[u] + c, j] += w * tabs[t, c, j]
        if tot > 0:
            for c in range(C):
                for j in range(V):
                    post[cell_ptr[u] + c, j] /= tot * sizes[cell_ptr[u] + c]
            share[u] = tot / allw
    return post, share, n_ok


@njit(cache=True)
def feasible_pairs(S0, D, K):  # pragma: no cover - compiled
    """The pairs ``(i, d)``, row-major, with ``S0[i] + D[d] <= K`` in every value: a GG/RGG
    chain layer's transitions (:func:`openbook.attacks.replay.chain.chain_dp`), never the
    ``states × increments × values`` array."""
    n0, nd, nv = S0.shape[0], D.shape[0], K.size
    cnt = 0
    for p in range(2):
        if p == 1:
            i0 = np.empty(cnt, np.int64)
            di = np.empty(cnt, np.int64)
            cnt = 0
        for i in range(n0):
            for d in range(nd):
                ok = True
                for v in range(nv):
                    if S0[i, v] + D[d, v] > K[v]:
                        ok = False
                        break
                if ok:
                    if p == 1:
                        i0[cnt] = i
                        di[cnt] = d
                    cnt += 1
    return i0, di
