"""A unit with regions solved region by region (paper 000 §5.1): the *blocks* method.

A region re-runs the algorithm on a node's rows (:class:`~.engine.Region`); relaxed
Mondrian has many, each read row by row, and a world must pass every one of them. Drawn
uniformly, a world passes them all with the product of their probabilities — too rarely to
sample (20 regions passing half the time: one world in a million). But the rows of one
class inside one region that lie on the same side of every decision (a *block*; a region
sits on one side of every cut taken above it, and a refused cut of an ancestor may part its
rows) are treated alike by everything outside the region. So a world factors in two stages:

1. the *coarse table* — the SA counts of each cell outside the regions and of each block —
   drawn with its number of worlds, and kept iff it keeps the unit's decisions: every kept
   table listed (the exact enumeration of :mod:`.exact`), or, when they are too many, drawn
   cell by cell under the decisions (:mod:`.sequential`, importance weights);
2. given the coarse table, the arrangement of each block's values over its rows — uniform and
   independent across blocks — and region ``j`` passes with probability ``P_j(n_j)``, a
   function of its blocks' counts ``n_j`` alone.

The weight of a coarse table is its number of worlds times ``Π_j P_j(n_j)``, and a region's
rows get, per coarse table, their posterior given that the region passes with those counts.
Each distinct ``(j, n_j)`` is solved once: exactly (every arrangement, re-run) when it has at
most :data:`INNER_EXACT` arrangements, else from :data:`INNER_DRAWS` uniform arrangements.
With the coarse tables listed and every ``(j, n_j)`` exact the unit's posterior is exact.
Otherwise it is an estimate whose standard error is the spread of :data:`BOOTSTRAP`
Poisson-bootstrap replicates of the draws (coarse and arrangements), plus a bound for the counts no draw passed: ``P_j(n_j)`` is then taken up to
``3 / draws`` (the "rule of three", a 95 % upper confidence bound) with every target at 1
in those worlds, and a third of the posterior's rise under that bound is added to the
standard error (the certificate reads posterior + 3 standard errors) — never understated by
a zero that is only a small probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .engine import Region, Unit, log_multinomial, regions_pass, unit_tables

#: arrangements of one region's blocks enumerated exactly (each re-run)
INNER_EXACT = 512
#: arrangements drawn for a region's block counts with more arrangements than that
INNER_DRAWS = 2000
#: fewest draws per block counts when the re-run budget is shared among many
INNER_MIN_DRAWS = 40
#: rows re-run (arrangements × region rows), in all, for one unit
BLOCK_RERUN = 4e6
#: coarse tables visited (kept or cut off) to list the kept ones — past it they are drawn.
#: A listing that gives up costs about 1 s per 10^6 visits; no unit met so far (the test
#: suite, the certificate table) completes its listing between 2·10^5 and 10^6 visits
OUTER_VISIT = 2e5
#: entries (tables × coarse cells × classes) of the kept coarse tables stored
OUTER_ENTRIES = 2e7
#: coarse tables drawn (sequentially) when they are too many to list
OUTER_DRAWS = 1000
#: kept coarse draws sought: past ``OUTER_DRAWS`` draws the sampler goes on until it has this many
OUTER_KEPT = 150
#: Poisson-bootstrap replicates of the draws for the standard error
BOOTSTRAP = 64


def side_tags(k: int) -> np.ndarray:
    """``k`` random 64-bit tags (fixed seed): a region cell's decision sides, summed."""
    return np.random.default_rng(0x5EED).integers(1, 2**62, size=k, dtype=np.int64)


@dataclass
class _Coarse:
    """The unit seen through its blocks: ``unit`` (decisions only) over the coarse cells;
    per region its blocks' coarse cells, its fine cells (the unit's, in the region's own
    numbering), the block of each fine cell and the region over that numbering."""

    unit: Unit
    outside: np.ndarray            # the unit's cells outside every region: coarse cells 0..
    block_cells: list[np.ndarray]
    fine: list[np.ndarray]
    fine_block: list[np.ndarray]
    inner: list[Region]


def coarsen(unit: Unit) -> _Coarse | None:
    """The coarse unit (module docstring), or ``None`` when the unit does not factor so: two
    regions share a cell, a cell has rows outside its region, or (only were the side tags to
    collide, :func:`side_tags`) a decision would see part of a block."""
    size = unit.cell_size
    n = unit.n_cells
    owner = np.full(n, -1, dtype=np.int64)
    for j, r in enumerate(unit.regions):
        lc, cnt = np.unique(r.live_cells, return_counts=True)
        if np.any(owner[lc] >= 0) or np.any(cnt != size[lc]):
            return None
        owner[lc] = j
    dec = unit.decisions
    # a block: a region's cells of one class on the same side of every decision (a refused
    # cut of an ancestor may part a region's rows: its sides then split the block)
    lab = np.where(owner >= 0, owner * unit.leaf_counts.shape[0] + unit.cell_leaf, -1)
    if dec is not None and dec.k:
        # the sides of each region cell, as a sum of random 64-bit tags (a collision would
        # merge cells a decision parts: the check below then refuses the unit, never errs)
        sides = list(dec.left) + list(dec.right)
        tag = side_tags(len(sides))
        h = np.zeros(n, dtype=np.int64)
        with np.errstate(over="ignore"):
            for si, cells in enumerate(sides):
                rc = cells[owner[cells] >= 0]
                if rc.size:
                    h[rc] += tag[si]
        inr = np.flatnonzero(owner >= 0)
        if inr.size:
            lab[inr] = np.unique(np.stack([lab[inr], h[inr]], axis=1), axis=0, return_inverse=True)[1].ravel()
    outside = np.flatnonzero(owner < 0)
    cmap = np.full(n, -1, dtype=np.int64)
    cmap[outside] = np.arange(outside.size)
    leaf = [unit.cell_leaf[outside]]
    nxt = outside.size
    block_cells, fine, fine_block, inner = [], [], [], []
    for r in unit.regions:
        lc = np.unique(r.live_cells)
        ub, first, inv = np.unique(lab[lc], return_index=True, return_inverse=True)
        inv = inv.ravel().astype(np.int64)
        cmap[lc] = nxt + inv
        block_cells.append(nxt + np.arange(ub.size))
        leaf.append(unit.cell_leaf[lc[first]])
        nxt += ub.size
        fine.append(lc)
        fine_block.append(inv)
        inner.append(Region(np.where(r.cells >= 0, np.searchsorted(lc, r.cells), -1), r.check, r.fixed_sa, r.batch))
    cell_leaf = np.concatenate(leaf).astype(np.int64)
    if dec is not None and dec.k:  # by construction no decision sees part of a block: checked
        n_fine = np.bincount(cmap, minlength=nxt)
        for cells in list(dec.left) + list(dec.right):
            got, cnt = np.unique(cmap[cells], return_counts=True)
            if np.any(cnt != n_fine[got]):
                return None
        dec = dec.remap(cmap)
        dec = type(dec)(dec.model, dec.domain, [np.unique(c) for c in dec.left], [np.unique(c) for c in dec.right],
                        dec.accepted, dec.off_left, dec.off_right)
    cu = Unit(unit.rows, cmap[unit.cell], cell_leaf, unit.leaf_counts, None, unit.kind, set_mask=unit.set_mask,
              decisions=dec if (dec is not None and dec.k) else None)
    return _Coarse(cu, outside, block_cells, fine, fine_block, inner)


@dataclass
class _Inner:
    """One region's answer for one ``n_j``: pass probability, the fine cells' class shares
    given a pass, and their bootstrap replicates (``None`` when exact); ``zero``: sampled
    and no draw passed."""

    p: float
    mu: np.ndarray                 # (n_fine, V)
    p_b: np.ndarray | None = None  # (B,)
    mu_b: np.ndarray | None = None  # (B, n_fine, V)
    zero: bool = False
    draws: int = 0


def solve_blocks(unit: Unit, K: np.ndarray, rep: np.ndarray, tm: np.ndarray, n_sa: int, worlds: int, seed: int):
    """The unit's posterior by blocks (module docstring): ``(UnitResult, "")``, or ``(None,
    why)`` when the unit does not factor or passes a budget."""
    from .exact import log_all_tables, pruned
    from .sequential import MIN_EFFECTIVE, PILOT_ROUNDS, draw_budget, sis_chunks
    from .solve import UnitResult, to_targets

    co = coarsen(unit)
    if co is None:
        return None, "its regions do not factor into blocks"
    cu = co.unit
    C, V = cu.n_cells, K.shape[1]
    nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
    rng = np.random.default_rng(seed)
    store = int(max(1, min(OUTER_ENTRIES // max(1, C * V), OUTER_VISIT)))
    pr = pruned(cu, K, rep, n_sa, OUTER_VISIT, store_cap=store)
    if pr is None:  # the decisions' lookup tables are too large: the sequential sampler needs them too
        return None, f"its decisions' lookup tables are too large ({C} coarse cells)"
    outer_exact = pr.complete and pr.tabs is not None and pr.logw is not None
    if outer_exact:
        assert pr.tabs is not None and pr.logw is not None
        tabs, logw = pr.tabs, pr.logw
        if tabs.shape[0] == 0:
            return UnitResult(nan, nan.copy(), True, float(pr.visited), 0.0, False,
                              "no world is consistent with the release"), ""
        n_worlds = float(tabs.shape[0])
    else:  # too many to list: drawn cell by cell under the decisions (:mod:`.sequential`)
        n = int(max(1, min(worlds, OUTER_DRAWS, OUTER_ENTRIES // max(1, C * V))))
        got, drawn, kept = [], 0, 0
        for t_, lw_, m in sis_chunks(cu, K, rep, n_sa, draw_budget(cu, n), int(rng.integers(2**31 - 1)), chunk=n):
            got.append((t_, lw_))
            drawn += m
            kept += lw_.size
            if drawn >= n and kept >= min(n, OUTER_KEPT):  # enough kept draws (each costs re-runs)
                break
            if drawn >= PILOT_ROUNDS * n and not kept:  # nothing kept so far: not worth the rest
                break
        if not drawn:
            return None, f"its coarse tables are too many to list or draw ({C} coarse cells)"
        tabs = np.concatenate([g[0] for g in got])
        logw = np.concatenate([g[1] for g in got])
        if tabs.shape[0] > n:  # at most n stored: the first n kept (the draws are exchangeable)
            tabs, logw = tabs[:n], logw[:n]
        if tabs.shape[0] == 0:
            return None, f"no sequential draw of its {C} coarse cells keeps the decisions"
        ww = np.exp(logw - logw.max())
        if ww.sum() ** 2 / (ww ** 2).sum() < MIN_EFFECTIVE:
            return None, f"too few effective draws of its {C} coarse cells"
        n_worlds = float(drawn)
    # each region's distinct block counts over the coarse tables
    keys, invs = [], []
    for bc in co.block_cells:
        u, inv = np.unique(tabs[:, bc, :].reshape(tabs.shape[0], -1), axis=0, return_inverse=True)
        keys.append(u.reshape(u.shape[0], bc.size, V))
        invs.append(inv.ravel())
    inner = _solve_inner(unit, co, keys, rep, int(rng.integers(2**31 - 1)))
    if inner is None:
        return None, "its regions' arrangements are too many to re-run"
    a = np.exp(logw - logw.max())
    csize = cu.cell_size.astype(np.float64)
    exact = outer_exact and all(x.p_b is None for res in inner for x in res)
    # Poisson-bootstrap factors of the coarse draws (a listing has no sampling error)
    boot = None if outer_exact else rng.poisson(1.0, size=(BOOTSTRAP, tabs.shape[0])).astype(np.float64)
    n_out = co.outside.size
    out_tabs = tabs[:, :n_out, :].astype(np.float64)

    def estimate(b: int | None) -> tuple[np.ndarray, float] | None:
        """Class shares per fine cell ``(n_cells, V)`` and the total weight, from the point
        estimates (``b`` None) or bootstrap replicate ``b``."""
        w = a.copy() if (b is None or boot is None) else a * boot[b]
        for res, inv in zip(inner, invs):
            p = np.array([x.p if (b is None or x.p_b is None) else x.p_b[b] for x in res])
            w *= p[inv]
        tot = float(w.sum())
        if not tot > 0:
            return None
        post = np.zeros((unit.n_cells, V))
        if n_out:  # a cell outside the regions is its own coarse cell (numbered first, in order)
            post[co.outside] = np.einsum("n,ncv->cv", w, out_tabs) / tot / csize[:n_out, None]
        for res, inv, fine in zip(inner, invs, co.fine):
            wk = np.bincount(inv, weights=w, minlength=len(res)) / tot
            mus = np.stack([x.mu if (b is None or x.mu_b is None) else x.mu_b[b] for x in res])
            post[fine] = np.einsum("k,kcv->cv", wk, mus)
        return post, tot

    point = estimate(None)
    if point is None:
        if exact:
            return UnitResult(nan, nan.copy(), True, n_worlds, 0.0, False, "no world is consistent with the release"), ""
        return None, "no drawn arrangement of its regions passes"
    post_cls, tot = point
    post = to_targets(post_cls, tm, unit.cell_leaf)
    if exact:
        share = math.exp(math.log(tot) + float(logw.max()) - log_all_tables(cu.cell_leaf, csize, K))
        return UnitResult(post, np.zeros_like(post), True, n_worlds, share, True), ""
    reps = []
    for b in range(BOOTSTRAP):
        e = estimate(b)
        if e is not None:
            reps.append(to_targets(e[0], tm, unit.cell_leaf))
    if len(reps) < BOOTSTRAP // 2:  # most replicates without a passing draw: no answer
        return None, "too few drawn arrangements of its regions pass"
    se = np.std(np.stack(reps), axis=0, ddof=1)
    # counts no draw passed: P up to 3 / draws, every target 1 there (module docstring)
    any_zero = np.zeros(tabs.shape[0], dtype=bool)
    w_up = a.copy()
    for res, inv in zip(inner, invs):
        any_zero |= np.array([x.zero for x in res])[inv]
        w_up *= np.array([(3.0 / x.draws) if x.zero else x.p for x in res])[inv]
    w0 = float(w_up[any_zero].sum())
    if w0 > 0:
        se = se + ((post * tot + w0) / (tot + w0) - post) / 3.0
    ess = float(a.sum() ** 2 / (a ** 2).sum())
    return UnitResult(post, se, False, n_worlds, ess, True), ""


def pass_bootstrap(xp: np.ndarray, m: int, rng: np.random.Generator, reps: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Poisson bootstrap of ``m`` drawn arrangements of which the ``xp.shape[0]`` passing
    ones have class shares ``xp`` (flat rows): per replicate the pass rate, the passes' mean
    shares (0 when none) and the passes' total multiplicity. Each draw's multiplicity is
    Poisson(1), independent; the failing draws enter only through their total, one
    Poisson(m - passes) per replicate (a sum of independent Poissons) — the same law as
    multiplying every draw, at the cost of the passes only."""
    pw = rng.poisson(1.0, size=(reps, xp.shape[0])).astype(np.float64)
    nb = pw.sum(axis=1)
    pb = nb / np.maximum(nb + rng.poisson(float(m - xp.shape[0]), size=reps), 1.0)
    return pb, (pw @ xp) / np.maximum(nb, 1.0)[:, None], nb


def _solve_inner(unit: Unit, co: _Coarse, keys: list[np.ndarray], rep: np.ndarray, seed: int
                 ) -> list[list[_Inner]] | None:
    """Every region's answer for each of its block counts (``keys[j]``: ``(n_keys, B_j, V)``),
    exact or drawn within :data:`BLOCK_RERUN` rows re-run in all; ``None`` past it."""
    from .solve import _uniform_worlds

    size = unit.cell_size
    rng = np.random.default_rng(seed)
    plans = []  # per region, per key: its enumeration (tables, log weights), or None: drawn
    rows_exact = 0.0
    rows_drawn = 0.0
    for j, ks in enumerate(keys):
        fs = size[co.fine[j]].astype(np.int64)
        r = co.inner[j].cells.size
        plan: list[tuple[np.ndarray, np.ndarray] | None] = []
        for key in ks:
            # arrangements of the blocks (never fewer than their tables): enumerate when few
            few = INNER_EXACT >= 1 and sum(log_multinomial(k) for k in key) <= math.log(INNER_EXACT)
            enum = unit_tables(co.fine_block[j], fs, key, INNER_EXACT) if few else None
            if enum is not None:
                plan.append(enum)
                rows_exact += enum[0].shape[0] * r
            else:
                plan.append(None)
                rows_drawn += r
        plans.append(plan)
    if rows_exact + rows_drawn * INNER_MIN_DRAWS > BLOCK_RERUN:
        return None
    draws = int(min(INNER_DRAWS, (BLOCK_RERUN - rows_exact) // rows_drawn)) if rows_drawn else 0
    items: list = []  # per region, every key's arrangements in one request; all re-run together
    counts: list[list[int]] = []  # per request, the arrangements of each of its keys
    meta: list[tuple[int, np.ndarray, np.ndarray | None]] = []
    for j, (ks, plan) in enumerate(zip(keys, plans)):
        fs = size[co.fine[j]].astype(np.int64)
        cell_of_row = np.repeat(np.arange(fs.size), fs)
        mine = []
        for key, enum in zip(ks, plan):
            if enum is None:
                tabs = _uniform_worlds(co.fine_block[j], cell_of_row, key, int(rng.integers(2**31 - 1)), draws)
                meta.append((j, tabs, None))
            else:
                meta.append((j, enum[0], enum[1]))
            mine.append(meta[-1][1])
        if mine:
            items.append((co.inner[j], np.concatenate(mine), rep))
            counts.append([t.shape[0] for t in mine])
    passed: list[np.ndarray] = []
    for ok_j, ns in zip(regions_pass(items) if items else [], counts):
        passed.extend(np.split(ok_j, np.cumsum(ns)[:-1]))
    out: list[list[_Inner]] = [[] for _ in keys]
    for (j, tabs, logw), ok in zip(meta, passed):
        fsz = size[co.fine[j]].astype(np.float64)[None, :, None]
        if logw is not None:  # exact
            x = tabs.astype(np.float64) / fsz  # class shares
            w = np.exp(logw - logw.max()) * ok
            p = float(w.sum() / np.exp(logw - logw.max()).sum())
            mu = np.einsum("n,ncv->cv", w, x) / w.sum() if w.sum() > 0 else np.zeros(x.shape[1:])
            out[j].append(_Inner(p, mu))
            continue
        m = tabs.shape[0]
        shape = tabs.shape[1:]
        xp = (tabs[ok].astype(np.float64) / fsz).reshape(int(ok.sum()), int(np.prod(shape)))  # passes' class shares
        n_pass = float(xp.shape[0])
        mu = (xp.sum(axis=0) / n_pass).reshape(shape) if n_pass else np.zeros(shape)
        pb, mu_b, nb = pass_bootstrap(xp, m, rng, BOOTSTRAP)
        mu_b = mu_b.reshape((BOOTSTRAP,) + shape)
        mu_b[nb == 0] = mu
        out[j].append(_Inner(n_pass / m, mu, pb, mu_b, zero=n_pass == 0, draws=m))
    return out
