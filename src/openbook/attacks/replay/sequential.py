"""Sequential importance sampling of a unit's tables under its decisions (paper 000 §5.1;
the contingency-table sampler of Chen, Diaconis, Holmes & Liu, JASA 2005).

A unit of decisions (:class:`~.engine.Decisions`) whose tables are too many to enumerate and
whose consistent worlds are too rare to draw uniformly — relaxed Mondrian's classes of 50
people cut into a dozen cells by 48 decisions: one uniform world in two thousand keeps them
all — is drawn cell by cell, in the enumeration's order (:func:`.exact.lookup`). Under the
uniform law of worlds a cell's class counts are a multivariate hypergeometric draw from what
its leaf has left. When the cell completes decisions, every count vector it can take is
listed, the ones that break a completed decision are dropped, and the cell is drawn from the
rest in proportion to their hypergeometric probabilities; the world's importance weight
gains the factor ``Z`` = the probability mass kept. A cell completing no decision is drawn
from the hypergeometric itself (``Z = 1``), and so is one with more than
:data:`CANDIDATES` count vectors, then kept or dropped (a dropped world weighs 0). So the
weight of a drawn table is its probability under the uniform law, times its indicator of
keeping every decision, over its probability under the proposal — the self-normalised
estimate is the posterior, with the standard error of :mod:`.solve`'s sampled units. A
leaf's last cell has no freedom (it takes what is left), so it is filled right after its
last but one and drawn with it: each candidate of the last but one is checked with both
cells' decisions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .engine import Unit

#: count vectors listed for one cell before it is drawn blind (hypergeometric, then checked)
CANDIDATES = 20_000
#: entries (worlds × cells × classes) drawn at once
_CHUNK_ENTRIES = 2e7


@njit(cache=True)
def _compositions(s, capv, out):  # pragma: no cover - compiled
    """Every ``x`` with ``0 <= x_v <= capv_v`` and ``Σ x = s`` into ``out`` (rows); returns
    their number, or -1 when more than ``out`` holds."""
    V = capv.size
    suf = np.zeros(V + 1, np.int64)
    for v in range(V - 1, -1, -1):
        suf[v] = suf[v + 1] + capv[v]
    if s < 0 or s > suf[0]:
        return 0
    x = np.zeros(V, np.int64)
    lft = np.zeros(V + 1, np.int64)
    lft[0] = s
    n = 0
    v = 0
    x[0] = max(0, s - suf[1])
    while True:
        while v < V - 1:  # down to the last class, each at its lowest feasible count
            lft[v + 1] = lft[v] - x[v]
            v += 1
            x[v] = max(0, lft[v] - suf[v + 1])
        x[V - 1] = lft[V - 1]
        if n >= out.shape[0]:
            return -1
        out[n, :] = x
        n += 1
        v = V - 2
        while v >= 0 and x[v] >= min(capv[v], lft[v]):
            v -= 1
        if v < 0:
            break
        x[v] += 1
    return n


@njit(cache=True)
def _keeps(c, x, y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted):  # pragma: no cover - compiled
    """Do the decisions completed at cell ``c`` come out as observed, the side counts being
    ``y`` plus ``x`` on the sides marked ``inc`` and ``x2`` on those marked ``inc2``?"""
    V = x.size
    for q in range(end_ptr[c], end_ptr[c + 1]):
        d = end_dec[q]
        both = True
        for s in (2 * d, 2 * d + 1):
            key = 0
            for u in range(V):
                key += (y[s, u] + (x[u] if inc[s] else 0) + (x2[u] if inc2[s] else 0)) * rad[s, u]
            if not lut[lut_ptr[s] + key]:
                both = False
        if both != accepted[d]:
            return False
    return True


@njit(cache=True)
def sis_tables(seed, sizes, cell_leaf, K, cs_ptr, cs_side, rad, lut_ptr, lut, end_ptr, end_dec, accepted, lgam,
               n_worlds, cand_cap):  # pragma: no cover - compiled
    """``(n_worlds, C, V)`` int32 tables (cells in fill order) and their log importance
    weights (``-inf``: a world dropped), drawn as the module docstring says. A leaf's last
    cell filled right after its last but one (:func:`paired_order`) is drawn with it: each
    candidate of the last but one fixes the last, and both cells' decisions are checked."""
    np.random.seed(seed)
    C = sizes.size
    L, V = K.shape
    S = rad.shape[0]
    last_of_leaf = np.zeros(C, np.bool_)
    seen = np.zeros(L, np.bool_)
    for c in range(C - 1, -1, -1):
        if not seen[cell_leaf[c]]:
            seen[cell_leaf[c]] = True
            last_of_leaf[c] = True
    out = np.zeros((n_worlds, C, V), np.int32)
    logw = np.zeros(n_worlds)
    rem = np.zeros((L, V), np.int64)
    rows = np.zeros(L, np.int64)
    y = np.zeros((S, V), np.int64)
    inc = np.zeros(S, np.bool_)
    inc2 = np.zeros(S, np.bool_)
    x = np.zeros(V, np.int64)
    x2 = np.zeros(V, np.int64)
    cands = np.zeros((cand_cap, V), np.int64)
    cw = np.zeros(cand_cap)
    for w in range(n_worlds):
        for lf in range(L):
            rows[lf] = 0
            for v in range(V):
                rem[lf, v] = K[lf, v]
                rows[lf] += K[lf, v]
        y[:, :] = 0
        lw = 0.0
        for c in range(C):
            lf = cell_leaf[c]
            s = sizes[c]
            for q in range(cs_ptr[c], cs_ptr[c + 1]):
                inc[cs_side[q]] = True
            # the leaf's last cell next: drawn with this one (its counts are what is left)
            paired = (not last_of_leaf[c]) and c + 1 < C and last_of_leaf[c + 1] and cell_leaf[c + 1] == lf
            checks = end_ptr[c + 1] > end_ptr[c]
            checks2 = False
            if paired:
                checks2 = end_ptr[c + 2] > end_ptr[c + 1]
                for q in range(cs_ptr[c + 1], cs_ptr[c + 2]):
                    inc2[cs_side[q]] = True
            n = 0
            if (checks or checks2) and not last_of_leaf[c]:
                n = _compositions(s, rem[lf], cands)
            if n > 0:  # list, drop, draw in proportion: weight × kept mass
                base = lgam[rows[lf]] - lgam[s] - lgam[rows[lf] - s]
                z = 0.0
                for i in range(n):
                    cw[i] = 0.0
                    ok = _keeps(c, cands[i], y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted)
                    if ok and checks2:
                        for v in range(V):
                            x2[v] = rem[lf, v] - cands[i, v]
                        ok = _keeps(c + 1, cands[i], y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted)
                        for v in range(V):
                            x2[v] = 0
                    if ok:
                        lp = -base
                        for v in range(V):
                            k = cands[i, v]
                            lp += lgam[rem[lf, v]] - lgam[k] - lgam[rem[lf, v] - k]
                        cw[i] = math.exp(lp)
                    z += cw[i]
                    cw[i] = z
                if not z > 0.0:
                    lw = -np.inf
                else:
                    u = np.random.random() * z
                    pick = 0
                    while pick < n - 1 and cw[pick] <= u:
                        pick += 1
                    for v in range(V):
                        x[v] = cands[pick, v]
                    lw += math.log(z)
            elif last_of_leaf[c]:  # what the leaf has left (checked with its pair when it had one)
                for v in range(V):
                    x[v] = rem[lf, v]
                if checks and not _keeps(c, x, y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted):
                    lw = -np.inf
            else:  # the hypergeometric itself (then checked, with the pair's last cell)
                left = s
                tot = rows[lf]
                for v in range(V - 1):
                    good = rem[lf, v]
                    k = 0
                    if left > 0 and good > 0:
                        k = np.random.hypergeometric(good, tot - good, left)
                    x[v] = k
                    left -= k
                    tot -= good
                x[V - 1] = left
                if checks and not _keeps(c, x, y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted):
                    lw = -np.inf
                if checks2 and lw > -np.inf:
                    for v in range(V):
                        x2[v] = rem[lf, v] - x[v]
                    if not _keeps(c + 1, x, y, inc, x2, inc2, rad, lut_ptr, lut, end_ptr, end_dec, accepted):
                        lw = -np.inf
                    for v in range(V):
                        x2[v] = 0
            for q in range(cs_ptr[c], cs_ptr[c + 1]):
                inc[cs_side[q]] = False
            if paired:
                for q in range(cs_ptr[c + 1], cs_ptr[c + 2]):
                    inc2[cs_side[q]] = False
            if lw == -np.inf:
                break
            for v in range(V):
                rem[lf, v] -= x[v]
                out[w, c, v] = x[v]
            rows[lf] -= s
            for q in range(cs_ptr[c], cs_ptr[c + 1]):
                for v in range(V):
                    y[cs_side[q], v] += x[v]
        logw[w] = lw
    return out, logw


def paired_order(unit: Unit) -> np.ndarray:
    """The enumeration's fill order (:func:`.exact.cell_order`) with each leaf's last cell
    moved right after its last but one, so the sampler draws the two together (a decision
    completed by a leaf's last cell has no freedom left there)."""
    from .exact import cell_order

    base = cell_order(unit.n_cells, unit.decisions)
    leaf = unit.cell_leaf[base]
    last: dict[int, int] = {}
    pen: dict[int, int] = {}
    for pos in range(base.size):
        lf = int(leaf[pos])
        if lf in last:
            pen[lf] = last[lf]
        last[lf] = pos
    moved = {pen[lf]: last[lf] for lf in pen}  # position of the last but one -> of the last
    skip = set(moved.values())
    out = []
    for pos in range(base.size):
        if pos in skip:
            continue
        out.append(base[pos])
        if pos in moved:
            out.append(base[moved[pos]])
    return np.asarray(out, dtype=np.int64)


def sis_chunks(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, max_draws: int, seed: int,
               chunk: int | None = None):
    """Yield ``(tables (A, n_cells, V) in the unit's cell order, their log weights (A,),
    draws)`` per chunk of at most ``chunk`` draws — the ``A`` draws that kept every decision
    — until ``max_draws`` (a caller stops when it has enough); nothing when the unit's lookup
    tables are too large."""
    from .exact import lookup

    lk = lookup(unit, K, rep, n_sa, paired_order(unit))
    if lk is None:
        return
    V = K.shape[1]
    step = int(max(1, min(max_draws, chunk or max_draws, _CHUNK_ENTRIES // max(1, unit.n_cells * V))))
    rng = np.random.default_rng(seed)
    Kc = np.ascontiguousarray(K, dtype=np.int64)
    for a in range(0, max_draws, step):
        n = int(min(step, max_draws - a))
        tabs, logw = sis_tables(int(rng.integers(2**31 - 1)), lk.size, lk.leaf, Kc, lk.cs_ptr, lk.cs_side, lk.rad,
                                lk.lut_ptr, lk.lut, lk.end_ptr, lk.end_dec, lk.accepted, lk.lgam, n, CANDIDATES)
        live = np.isfinite(logw)
        yield tabs[live][:, lk.back, :], logw[live], n


#: fewest effective draws (``(Σw)² / Σw²``) for a sampled answer; fewer: no answer
MIN_EFFECTIVE = 30
#: effective draws sought: past ``worlds`` draws the sampler goes on until it has this many
TARGET_EFFECTIVE = 300
#: at most this many times ``worlds`` draws, and at most :data:`MAX_CELL_DRAWS` cells drawn
GROW = 100
MAX_CELL_DRAWS = 5e7
#: rounds of ``worlds`` draws after which a sampler that kept nothing stops
PILOT_ROUNDS = 3


def draw_budget(unit: Unit, worlds: int) -> int:
    """Most draws of a unit (:data:`GROW`, :data:`MAX_CELL_DRAWS`)."""
    return int(max(worlds, min(GROW * worlds, MAX_CELL_DRAWS // max(1, unit.n_cells))))


def solve_sis(unit: Unit, K: np.ndarray, rep: np.ndarray, tm: np.ndarray, n_sa: int, size: np.ndarray, worlds: int,
              seed: int):
    """The unit's posterior from sequential draws (a :class:`~.solve.UnitResult`): ``worlds``
    of them, more while fewer than :data:`TARGET_EFFECTIVE` are effective (within
    :func:`draw_budget`); ``None`` when its lookup tables are too large or fewer than
    :data:`MIN_EFFECTIVE` effective draws keep its decisions."""
    from .solve import _Accumulator

    acc = _Accumulator(unit.n_cells, tm.shape[2])
    ref = -np.inf
    drawn = 0
    for tabs, logw, n in sis_chunks(unit, K, rep, n_sa, draw_budget(unit, worlds), seed, chunk=worlds):
        drawn += n
        if logw.size:
            top = float(logw.max())
            if top > ref:
                if ref > -np.inf:
                    acc.scale(math.exp(ref - top))
                ref = top
            acc.add(np.exp(logw - ref), tabs, tm, unit.cell_leaf, size)
        if drawn >= worlds and acc.sw > 0 and acc.sw ** 2 / acc.sw2 >= TARGET_EFFECTIVE:
            break
        if drawn >= PILOT_ROUNDS * worlds and not acc.sw > 0:  # nothing kept so far: not worth the rest
            break
    if drawn == 0:
        return None
    r = acc.result(drawn, "no sequential draw keeps the decisions")
    if not r.consistent or r.accepted < MIN_EFFECTIVE:
        return None
    return r
