"""The loops of a full-domain node check, compiled by numba (:mod:`.lattice_counts` calls
them; Incognito's roll-up, LeFevre et al., SIGMOD 2005, §3; Flash's snapshots, Kohlmayer et
al., 2012, §5).

* :func:`roll_up` — the classes of node ``u`` from the classes of a cached node below it:
  one pass over the source classes (a mixed-radix key of each representative's codes at
  ``u``'s levels, numbered densely in order of first appearance by a lookup table or an
  open-addressing hash table), sizes and SA counts summed, and each class's generalization
  loss ``Σ_j (coverage - 1)/(leaves - 1)`` (QIs summed in order, as the numpy path does).
* :func:`check_classes` — the model on every class for k-anonymity, distinct, entropy and
  recursive (c,ℓ)-diversity and their conjunctions, with the absorbing necessary condition
  (class size, distinct values) beside it. Entropy is ``log N - Σ c log c / N`` with ``c log
  c`` read from numpy's table; a class whose entropy lies within 1e-9 of the threshold is
  flagged *ambiguous* and decided by the model's own ``holds`` (so verdicts are the model's,
  whatever the last bits of a logarithm). Recursive (c,ℓ) compares integers exactly when
  ``c`` is a simple fraction, else in the model's float form.
* :func:`node_sums` — rows suppressed, the loss they add beyond their generalization
  (``Σ_failing size · (d - gen)``) and the discernibility of the kept classes.
* :func:`group_rows` — the distinct QI combinations of a table's rows with their SA
  counts, in one pass (the numbering of :func:`roll_up`).
* :func:`unkept_rows` — the rows of the combinations whose bit is 0 in a packed mask.
* :func:`first_appearance` — row labels renumbered in order of first appearance
  (:meth:`Partition.from_labels`' numbering) in one pass.

Loading numba's compiled code costs about 0.3 s once per process, so :func:`wanted` uses
the kernels only when numba is already loaded or the table has enough combinations to
repay it; the numpy path of :mod:`.lattice_counts` gives the same classes and verdicts
(``FORCE`` overrides, for tests).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

#: ``None``: decide by size; ``"compiled"`` or ``"numpy"``: always that path (tests)
FORCE: str | None = None
#: combinations × SA values from which the kernels repay loading numba
MIN_WORK = 20_000
#: half-width of the band around the entropy threshold decided by the model itself
AMBIGUOUS = 1e-9
#: member kinds of :func:`check_classes`
K, DISTINCT, ENTROPY, RECURSIVE_EXACT, RECURSIVE_FLOAT = 0, 1, 2, 3, 4

_COMPILED: dict[str, Any] | None = None


def wanted(work: int) -> bool:
    """Use the compiled kernels for a table of ``work`` combinations × SA values?"""
    if FORCE is not None:
        return FORCE == "compiled"
    return _COMPILED is not None or "numba" in sys.modules or work >= MIN_WORK


def compiled() -> dict[str, Any]:
    """The kernels compiled by numba (loaded from its cache after the first run)."""
    global _COMPILED
    if _COMPILED is None:
        import numba

        _COMPILED = {f.__name__: numba.njit(cache=True)(f) for f in (roll_up, check_classes, node_sums,
                                                                      first_appearance, combo_gen, group_rows,
                                                                      unkept_rows)}
    return _COMPILED


def roll_up(codes, krows, radix, upper, src_rep, bottom, src_sizes, src_counts, with_counts, level_loss,
            loss_rows, base_gen):  # pragma: no cover - compiled
    """Classes of a node from a finer node's classes (module docstring). ``codes`` (R, m):
    each combination's dense code at some (QI, level) rows; ``krows`` the rows of the QIs
    with more than one code at the node's levels and ``radix`` their codes (``upper`` their
    product, fitting int64); ``bottom``: the source classes are the combinations themselves
    (``src_rep`` is the identity). ``level_loss`` (L, codes) with ``loss_rows`` the (QI,
    level) row of each of those QIs; ``base_gen`` the loss of the QIs with one code.
    Returns each source class's class, a representative combination per class, sizes,
    counts (``(0, 0)`` without counts) and generalization loss per class."""
    ns = src_rep.shape[0]
    t_n = krows.shape[0]
    key = np.zeros(ns, dtype=np.int64)
    for t in range(t_n):  # column by column: sequential (bottom) or gathered codes
        row = codes[krows[t]]
        rj = radix[t]
        if bottom:
            for i in range(ns):
                key[i] = key[i] * rj + row[i]
        else:
            for i in range(ns):
                key[i] = key[i] * rj + row[src_rep[i]]
    up = np.empty(ns, dtype=np.int64)
    rep = np.empty(ns, dtype=np.int64)
    nc = 0
    if upper <= 4 * ns + 65536:
        table = np.full(upper, -1, dtype=np.int64)
        for i in range(ns):
            c = table[key[i]]
            if c < 0:
                c = nc
                table[key[i]] = c
                rep[c] = src_rep[i]
                nc += 1
            up[i] = c
    else:
        bits = 1
        while (1 << bits) < 2 * ns:
            bits += 1
        mask = (1 << bits) - 1
        keys = np.empty(1 << bits, dtype=np.int64)
        ids = np.full(1 << bits, -1, dtype=np.int64)
        mult = np.uint64(0x9E3779B97F4A7C15)
        shift = np.uint64(64 - bits)
        for i in range(ns):
            k = key[i]
            h = np.int64((np.uint64(k) * mult) >> shift)
            while True:
                c = ids[h]
                if c < 0:
                    c = nc
                    ids[h] = c
                    keys[h] = k
                    rep[c] = src_rep[i]
                    nc += 1
                    break
                if keys[h] == k:
                    break
                h = (h + 1) & mask
            up[i] = c
    sizes = np.zeros(nc, dtype=np.int64)
    for i in range(ns):
        sizes[up[i]] += src_sizes[i]
    if with_counts:
        n_sa = src_counts.shape[1]
        counts = np.zeros((nc, n_sa), dtype=np.int64)
        for i in range(ns):
            c = up[i]
            for s in range(n_sa):
                counts[c, s] += src_counts[i, s]
    else:
        counts = np.zeros((0, 0), dtype=np.int64)
    gen = np.empty(nc, dtype=np.float64)
    for c in range(nc):
        r = rep[c]
        g = base_gen
        for t in range(t_n):
            g += level_loss[loss_rows[t], codes[krows[t], r]]
        gen[c] = g
    return up, rep[:nc].copy(), sizes, counts, gen


def combo_gen(leaf, level_code, level_loss, rows, combos):  # pragma: no cover - compiled
    """Generalization loss at the node of ``rows`` of each combination in ``combos``."""
    d = rows.shape[0]
    out = np.empty(combos.shape[0], dtype=np.float64)
    for i in range(combos.shape[0]):
        r = combos[i]
        g = 0.0
        for j in range(d):
            g += level_loss[rows[j], level_code[rows[j], leaf[j, r]]]
        out[i] = g
    return out


def check_classes(sizes, counts, kinds, iparam, fparam, xlogx, cond_k, cond_l):  # pragma: no cover - compiled
    """Per class: does the model hold (``ok``), is its entropy too close to the threshold
    to decide here (``amb``), does the necessary condition ``size >= cond_k`` and
    ``distinct >= cond_l`` hold (``cond``). Members ``kinds[t]`` with integer parameters
    ``iparam[t]`` and float parameters ``fparam[t]`` (``lattice_counts._members``)."""
    nc = sizes.shape[0]
    n_sa = counts.shape[1]
    ok = np.ones(nc, dtype=np.bool_)
    amb = np.zeros(nc, dtype=np.bool_)
    cond = np.ones(nc, dtype=np.bool_)
    tmp = np.empty(max(n_sa, 1), dtype=np.int64)
    for c in range(nc):
        n = sizes[c]
        distinct = 0
        for s in range(n_sa):
            if counts[c, s] > 0:
                distinct += 1
        cond[c] = n >= cond_k and distinct >= cond_l
        good = n > 0
        for t in range(kinds.shape[0]):
            kind = kinds[t]
            if kind == 0:
                good = good and n >= iparam[t, 0]
            elif kind == 1:
                good = good and distinct >= iparam[t, 0]
            elif kind == 2:
                s_log = 0.0
                for s in range(n_sa):
                    s_log += xlogx[counts[c, s]]
                nf = float(n)
                h = np.log(nf) - s_log / nf if n > 0 else 0.0
                if h < 0.0:
                    h = 0.0
                thr = fparam[t, 0]
                if abs(h - thr) <= AMBIGUOUS * max(1.0, abs(thr)):
                    amb[c] = True
                good = good and h >= thr
            else:
                ell = iparam[t, 0]
                if ell > n_sa:
                    good = False
                    continue
                for s in range(n_sa):
                    tmp[s] = counts[c, s]
                top = 0
                r1 = 0
                for q in range(ell - 1 if ell > 1 else 1):  # the ℓ-1 largest (r1 first)
                    best = 0
                    for s in range(1, n_sa):
                        if tmp[s] > tmp[best]:
                            best = s
                    if q == 0:
                        r1 = tmp[best]
                    if q < ell - 1:
                        top += tmp[best]
                    tmp[best] = -1
                tail = n - top
                if kind == 3:
                    good = good and r1 * iparam[t, 2] < tail * iparam[t, 1]
                else:
                    good = good and float(r1) < fparam[t, 0] * float(tail) * fparam[t, 1]  # the model's 1 - TOL
        ok[c] = good
    return ok, amb, cond


def node_sums(sizes, gen, ok, d):  # pragma: no cover - compiled
    """Rows suppressed, ``Σ_failing size · (d - gen)`` and ``Σ_kept size²``."""
    supp = 0
    extra = 0.0
    sq = 0
    for c in range(sizes.shape[0]):
        s = sizes[c]
        if ok[c]:
            sq += s * s
        else:
            supp += s
            extra += s * (d - gen[c])
    return supp, extra, sq


def first_appearance(labels):  # pragma: no cover - compiled
    """Labels (``>= 0``; negative = suppressed) renumbered ``0..G-1`` in order of first
    appearance, and ``G``."""
    n = labels.shape[0]
    top = 0
    for i in range(n):
        if labels[i] >= top:
            top = labels[i] + 1
    new = np.full(top, -1, dtype=np.int64)
    out = np.full(n, -1, dtype=np.int64)
    g = 0
    for i in range(n):
        lab = labels[i]
        if lab >= 0:
            if new[lab] < 0:
                new[lab] = g
                g += 1
            out[i] = new[lab]
    return out, g


def group_rows(qi, cards, upper, sa, n_sa):  # pragma: no cover - compiled
    """Combination id of each row (``qi`` (n, d), codes below ``cards``; ``upper`` their
    product, fitting int64) in order of first appearance, the combinations' codes
    ``(d, m)``, their SA counts (``sa`` codes below ``n_sa``) and sizes. A code out of
    range returns ``m = -1`` (empty arrays)."""
    n, d = qi.shape
    key = np.zeros(n, dtype=np.int64)
    bad = False
    for j in range(d):  # column by column (one stream per QI)
        cj = cards[j]
        for r in range(n):
            v = qi[r, j]
            bad |= (v < 0) | (v >= cj)
            key[r] = key[r] * cj + v
    for r in range(n):
        bad |= (sa[r] < 0) | (sa[r] >= n_sa)
    if bad:
        return key[:0], np.zeros((d, 0), dtype=np.int32), np.zeros((0, n_sa), dtype=np.int64), key[:0], -1
    combo = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    m = 0
    if upper <= 4 * n + 65536:
        ids = np.full(upper, -1, dtype=np.int64)
        for r in range(n):
            c = ids[key[r]]
            if c < 0:
                c = m
                ids[key[r]] = c
                first[c] = r
                m += 1
            combo[r] = c
    else:
        bits = 1
        while (1 << bits) < 2 * n:
            bits += 1
        mask = (1 << bits) - 1
        ids = np.full(1 << bits, -1, dtype=np.int64)
        mult = np.uint64(0x9E3779B97F4A7C15)
        shift = np.uint64(64 - bits)
        for r in range(n):
            k = key[r]
            h = np.int64((np.uint64(k) * mult) >> shift)
            while True:
                c = ids[h]
                if c < 0:
                    c = m
                    ids[h] = c
                    first[c] = r
                    m += 1
                    break
                if key[first[c]] == k:
                    break
                h = (h + 1) & mask
            combo[r] = c
    counts = np.zeros((m, n_sa), dtype=np.int64)
    sizes = np.zeros(m, dtype=np.int64)
    for r in range(n):
        counts[combo[r], sa[r]] += 1
        sizes[combo[r]] += 1
    leaf = np.empty((d, m), dtype=np.int32)
    for j in range(d):
        for c in range(m):
            leaf[j, c] = qi[first[c], j]
    return combo, leaf, counts, sizes, m


def unkept_rows(packed, w):  # pragma: no cover - compiled
    """``Σ w[c]`` over the combinations ``c`` whose bit (most significant first) is 0."""
    m = w.shape[0]
    total = 0
    for b in range(packed.shape[0]):
        byte = packed[b]
        if byte != 255:
            for t in range(8):
                c = b * 8 + t
                if c < m and not (byte >> (7 - t)) & 1:
                    total += w[c]
    return total
