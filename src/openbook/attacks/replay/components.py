"""Exact posterior of a one-class unit whose decisions fall apart into groups of cells
(paper 000 §5.1; the replay of Mondrian's refused cuts, :mod:`.mondrian`).

A class whose every cut was refused is a unit of one leaf: its cells are the rows on the same
side of every cut, and each decision reads some of them. Cells that no decision links (two
cuts of different sub-boxes, say) interact only through the class's SA counts: a table of the
unit is a table of each *block* — a connected group of decision cells, or the cells no
decision reads — whose totals ``a_j`` add up to the class's counts ``K``. The depth-first
enumeration (:mod:`.exact`) visits ``Σ Π_j T_j(a_j)`` tables; here each block is enumerated
once, alone, with one extra cell holding the rest of the class (so its totals range over
every ``a ≤ K``), its kept tables grouped by ``a``:

    W_j(a) = Σ_{kept tables t of block j with totals a} Π_{c ∈ j, v} 1 / x_cv!

(the rest cell's factor divided out), and the cells no decision reads in closed form,
``W_F(a) = N_F! / (Π_v a_v! Π_c s_c!)`` with ``E[x_cv | a] = s_c a_v / N_F``. A forward and a
backward pass over the blocks, on count vectors ``r ≤ K`` (dense, mixed radix), give every
cell's expected counts over the kept tables — each weighed by its worlds ``Π s_c! / Π x_cv!``,
as the enumeration weighs them — in ``Σ_j T_j`` instead of ``Π_j T_j`` steps. Adult's strict
Mondrian under distinct 3-diversity had a class of 22 rows with two blocks of three refused
cuts: 22.4 million tables enumerated in 5 s.

Exact; ``None`` when the unit is not of this shape, a block's tables are too many to keep
(:data:`STORE_CAP`) or the count vectors too many (:data:`MAX_STATES`).
``tests/unit/attacks/test_replay_blocks.py`` checks it against the whole enumeration.
"""

from __future__ import annotations

import math

import numpy as np

from .engine import Unit

#: most count vectors ``r ≤ K`` of the passes (dense arrays)
MAX_STATES = 2_000_000
#: most kept tables of one block
STORE_CAP = 400_000
#: (state, block total, value) entries compared per chunk
_PAIRS = 4_000_000


def blocks_of(unit: Unit) -> list[np.ndarray]:
    """The unit's blocks: cells linked by a decision, connected components (cells no
    decision reads are left out)."""
    dec = unit.decisions
    C = unit.n_cells
    parent = np.arange(C)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x
    used = np.zeros(C, dtype=bool)
    assert dec is not None  # a unit of decisions
    for i in range(dec.k):
        cells = dec.cells(i)
        used[cells] = True
        for c in cells[1:].tolist():
            a, b = find(int(cells[0])), find(int(c))
            if a != b:
                parent[b] = a
    roots = np.array([find(c) for c in range(C)])
    return [np.flatnonzero(used & (roots == r)) for r in np.unique(roots[used]).tolist()]


def solve_components(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, size: np.ndarray, limit: float
                     ) -> tuple[np.ndarray, float, float, bool] | None:
    """``(post_cls (cells, classes), tables visited, share kept, consistent)`` as
    :func:`.solve._solve_exact` answers, or ``None`` (module docstring). ``limit``: most
    tables visited per block."""
    from .exact import log_all_tables, pruned

    if K.shape[0] != 1 or unit.decisions is None or unit.regions or unit.likelihood is not None \
            or unit.chain is not None:
        return None
    blocks = blocks_of(unit)
    free = np.setdiff1d(np.arange(unit.n_cells), np.concatenate(blocks) if blocks else np.zeros(0, np.int64))
    if len(blocks) + (free.size > 0) < 2:
        return None
    Kv = np.asarray(K[0], dtype=np.int64)
    V = Kv.size
    dims = Kv + 1
    if math.prod(int(x) for x in dims.tolist()) > MAX_STATES:
        return None
    radix = np.concatenate([[1], np.cumprod(dims[:-1])]).astype(np.int64)
    n_states = int(np.prod(dims))
    D = ((np.arange(n_states)[:, None] // radix[None, :]) % dims[None, :]).astype(np.int32)  # every state's digits
    N = int(size.sum())
    sizes = size.astype(np.int64)
    dec = unit.decisions
    # per block: its totals (state indices), log W(a), and Σ_t w_t x_t per total (unnormalised)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    visited = 0.0
    for cells in blocks:
        ids = np.array([i for i in range(dec.k) if np.isin(dec.cells(i), cells).all()], dtype=np.int64)
        rest = N - int(sizes[cells].sum())
        cmap = np.full(unit.n_cells, -1, dtype=np.int64)
        cmap[cells] = np.arange(cells.size)
        csz = np.concatenate([sizes[cells], [rest]]) if rest else sizes[cells]
        sub = Unit(np.arange(int(csz.sum())), np.repeat(np.arange(csz.size), csz).astype(np.int64),
                   np.zeros(csz.size, dtype=np.int64), K, None, unit.kind, decisions=dec.subset(ids).remap(cmap))
        pr = pruned(sub, K, rep, n_sa, limit, store_cap=STORE_CAP)
        if pr is None or not pr.complete or (pr.n_kept and pr.tabs is None):
            return None
        visited += float(pr.visited)
        if pr.n_kept == 0:
            return np.full((unit.n_cells, V), np.nan), visited, 0.0, False
        assert pr.tabs is not None and pr.logw is not None  # stored: checked above
        tabs = pr.tabs.astype(np.int64)
        logw = np.asarray(pr.logw, dtype=np.float64)
        if rest:
            xr = tabs[:, -1, :]
            logw = logw + _lfact(xr).sum(axis=1)  # the rest cell's 1/Π x! divided out
            tot = Kv[None, :] - xr
            tabs = tabs[:, :-1, :]
        else:
            tot = np.repeat(Kv[None, :], tabs.shape[0], axis=0)
        idx = tot @ radix
        uniq, inv = np.unique(idx, return_inverse=True)
        inv = inv.ravel()
        m = float(logw.max())
        w = np.exp(logw - m)
        W = np.bincount(inv, weights=w, minlength=uniq.size)
        S = np.zeros((uniq.size, cells.size, V))
        np.add.at(S, inv, w[:, None, None] * tabs)
        parts.append((cells, uniq, np.log(W) + m, S / W[:, None, None]))
    if free.size:  # the cells no decision reads: every table of their totals, in closed form
        nf = int(sizes[free].sum())
        st = np.flatnonzero(D.sum(axis=1) == nf)
        lw = math.lgamma(nf + 1) - _lfact(D[st]).sum(axis=1) - float(_lfact(sizes[free]).sum())
        S = sizes[free][None, :, None] * D[st][:, None, :] / nf
        parts.append((free, st.astype(np.int64), lw, S.astype(np.float64)))
    # forward: F[j] over the states the first j blocks' totals reach (log scale kept apart)
    fwd = [(np.zeros(1, dtype=np.int64), np.zeros(1))]  # (states, log weight)
    for _, uniq, lw, _ in parts:
        fwd.append(_step(fwd[-1], uniq, lw, D, Kv, n_states, +1))
    Z = _logsum(fwd[-1][1][fwd[-1][0] == n_states - 1])
    if not np.isfinite(Z):
        return np.full((unit.n_cells, V), np.nan), visited, 0.0, False
    bwd = [(np.array([n_states - 1], dtype=np.int64), np.zeros(1))]  # states r from which K is reached
    for _, uniq, lw, _ in reversed(parts):
        bwd.append(_step(bwd[-1], uniq, lw, D, Kv, n_states, -1))
    bwd.reverse()
    post = np.zeros((unit.n_cells, V))
    for j, (cells, uniq, lw, mean) in enumerate(parts):
        c = _coupling(fwd[j], bwd[j + 1], uniq, D, Kv)  # log Σ_r F(r) B(r + a), per total a
        p = np.exp(c + lw - Z)
        post[cells] = np.einsum("a,acv->cv", p, mean)
    share = math.exp(Z - log_all_tables(unit.cell_leaf, size, K))
    return post / size[:, None], visited, min(share, 1.0), True


def _lfact(x: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    return gammaln(np.asarray(x, dtype=np.float64) + 1.0)


def _logsum(x: np.ndarray) -> float:
    if x.size == 0:
        return float("-inf")
    m = float(x.max())
    return m + math.log(float(np.exp(x - m).sum())) if np.isfinite(m) else m


def _pairs(states: np.ndarray, uniq: np.ndarray, D: np.ndarray, Kv: np.ndarray, sign: int):
    """Chunks of ``(state i, total k, target state)`` with ``state ± total`` inside ``0..K``."""
    step = max(1, _PAIRS // max(1, uniq.size * Kv.size))
    Du = D[uniq]
    for a in range(0, states.size, step):
        s = states[a:a + step]
        tgt = D[s][:, None, :] + sign * Du[None, :, :]
        ok = ((tgt >= 0) & (tgt <= Kv)).all(axis=2)
        i, k = np.nonzero(ok)
        yield a + i, k, s[i] + sign * uniq[k]


def _step(prev: tuple[np.ndarray, np.ndarray], uniq: np.ndarray, lw: np.ndarray, D: np.ndarray, Kv: np.ndarray,
          n_states: int, sign: int) -> tuple[np.ndarray, np.ndarray]:
    """One block added to a pass: ``G(r ± a) = Σ F(r) W(a)`` (log domain, one scale)."""
    states, lf = prev
    if states.size == 0 or uniq.size == 0:  # nothing reached: no table keeps the decisions
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    m = float(lf.max()) + float(lw.max())
    acc = np.zeros(n_states)
    for i, k, t in _pairs(states, uniq, D, Kv, sign):
        np.add.at(acc, t, np.exp(lf[i] + lw[k] - m))
    nz = np.flatnonzero(acc > 0)
    return nz.astype(np.int64), np.log(acc[nz]) + m


def _coupling(f: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], uniq: np.ndarray, D: np.ndarray,
              Kv: np.ndarray) -> np.ndarray:
    """``log Σ_r F(r) B(r + a)`` for each block total ``a`` (``-inf`` where none)."""
    states, lf = f
    bl = np.full(D.shape[0], -np.inf)
    bl[b[0]] = b[1]
    m = float(lf.max()) + float(b[1].max())
    acc = np.zeros(uniq.size)
    for i, k, t in _pairs(states, uniq, D, Kv, +1):
        np.add.at(acc, k, np.exp(lf[i] + bl[t] - m))
    with np.errstate(divide="ignore"):
        return np.log(acc) + m
