"""The algorithm-replay adversary — paper 000 §2.4 and §5.1 (Monte-Carlo minimality attack),
paper 001 Assumption 3.

The adversary knows (1) every individual's QI values, (2) the anonymization algorithm and
its parameters, (3) the release: which individuals form each group and each group's SA
multiset (paper 000 §2.4). A *possible world* assigns each group's released SA multiset to
its individuals; without the algorithm every world is equally likely (the baseline
adversary). The replay adversary weighs each world by the probability that the algorithm,
run on it, publishes exactly the released grouping (paper 000 §5.1: "reject those
assignments on which the (deterministic) algorithm would not produce the published
grouping") — 0/1 for the deterministic GG, SG, Mondrian, full-domain search; for RGG(p) each
voluntary merge has probability ``p`` and each stop ``1 - p`` (§4.3, App. C.4).

**What is recomputed from the QIs.** Only QI-only structure — the sort order, GG's buckets,
SG's even-split points, the Mondrian cuts a node tries (their ranking by width and the
median cuts) — is recomputed, with the algorithms' own public functions on the QI table
(``ordering.qi_order``, ``greedy.bucket_bounds``, ``symmetric.sg_split_point``,
``mondrian.mondrian_partition`` with a recording model). The group of every individual comes
from the release. ``Partition.extra`` is not needed (it holds the same QI-only facts).

**Units.** The released grouping splits into independent *units* (sampled on their own):

* GG / RGG: each group (buckets ``first..last``): prefixes ``first..e`` must fail for
  ``e < last`` (GG) — or, RGG, weigh ``p`` per satisfying prefix — and ``first..last`` must
  hold; the group holding the table's last bucket with ``tail="merge"`` sums over every run
  that ends in a tail merged into it (:func:`.replay_kernels.gg_final_likelihood`).
* SG: each group ``[lo, hi)`` of the order: the split at ``sg_split_point`` was refused —
  not both halves satisfy the model (App. C.3, Fig. 7).
* Mondrian: each node tries its cuts in width order; a refused cut whose sides straddle
  released groups is a constraint on the worlds; leaves coupled by such a constraint at an
  inner node (the "sibling set whose split was decided together") form one unit.
* anything else with ``partition`` (e.g. ``full-domain-search``): one unit, the whole table,
  each world re-run through ``algorithm.partition`` (small tables only).
* SA-only / QI-only groupings (Anatomy, k-anonymity, paper 000 Claim 4): no world is
  excluded; the posterior is the baseline's.

Rows a unit's checks treat alike form a *cell* (GG bucket, SG half, Mondrian atom); they
are exchangeable, so the posterior of a row is its cell's expected SA count / cell size.

**Exact or sampled.** A unit with at most ``exact_limit`` (default 10^6) possible worlds
(multiset permutations, product over its groups) is solved exactly by enumerating the
contingency tables (SA counts per cell) weighted by their number of worlds; larger units are
sampled (``worlds`` per unit, numba Fisher–Yates) with self-normalised likelihood weights,
and the standard error ``sqrt(Σ w²(x-x̂)²)/Σ w`` is reported.

References: Cormode, Srivastava, Li, Li, VLDB 2010 (paper 000); Wong, Fu, Wang, Pei,
VLDB 2007 (paper 001).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from math import lgamma
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from ..data.table import EncodedColumn, EncodedTable
from ..errors import OpenbookError, ParameterError, VerificationError
from ..progress import track
from ..release import Partition
from .base import AttackResult, model_l
from .replay_kernels import gg_final_likelihood, sample_cell_counts

#: algorithms whose grouping ignores the QI→SA association inside a group (Claim 4)
NO_INFORMATION = ("anatomy", "base-ana", "set-anatomy", "full-domain")
#: chunk of (world × checked group) rows per model call
_CHUNK_ROWS = 400_000
#: largest total transition work (states × increments × values) of an exact GG chain (~1 s)
_CHAIN_WORK = 3e7


@dataclass
class Unit:
    """One independently replayed set of released groups.

    ``rows``: global row ids, cells contiguous, cells of a leaf contiguous; ``cell`` the
    cell of each of those rows; ``cell_leaf`` the leaf of each cell; ``leaf_counts`` the
    released SA counts ``(n_leaves, n_sa)``; ``likelihood(counts (W, n_cells, n_sa)) -> (W,)``
    the probability of the released grouping in each world (``None``: constant).
    """

    rows: np.ndarray
    cell: np.ndarray
    cell_leaf: np.ndarray
    leaf_counts: np.ndarray
    likelihood: Callable[[np.ndarray], np.ndarray] | None
    kind: str
    #: GG/RGG: factor of prefix ``j`` given the prefix's SA counts ``(N, n_sa)`` — the
    #: likelihood is their product over the prefixes, a Markov chain (exact forward-backward)
    chain: Callable[[int, np.ndarray], np.ndarray] | None = None
    #: SA values the model looks at one by one (the rest are lumped; single-leaf units only)
    set_mask: np.ndarray | None = None
    #: hashable description of the likelihood given the cells (``None``: never cached) —
    #: two units with equal keys, cell sizes and class counts have the same exact posterior
    key: Any = None

    @property
    def n_cells(self) -> int:
        return int(self.cell_leaf.size)

    @property
    def cell_size(self) -> np.ndarray:
        return np.bincount(self.cell, minlength=self.n_cells)

    def log_worlds(self) -> float:
        """log of the number of possible worlds (multiset permutations, all leaves)."""
        tot = 0.0
        for c in self.leaf_counts:
            tot += lgamma(float(c.sum()) + 1) - sum(lgamma(float(x) + 1) for x in c if x > 1)
        return tot


# =======================================================================================
# exact enumeration of contingency tables
# =======================================================================================
def leaf_tables(cell_sizes: np.ndarray, counts: np.ndarray, limit: int) -> np.ndarray | None:
    """All ``(N, n_cells, n_vals)`` tables with row sums ``cell_sizes`` and column sums
    ``counts`` (numpy expansion, cell by cell and value by value), or ``None`` when there
    are more than ``limit``."""
    cell_sizes = np.asarray(cell_sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    c, v = cell_sizes.size, counts.size
    tabs = np.zeros((1, c, v), dtype=np.int32)
    rem = counts[None, :].copy()
    for ci in range(c):
        if ci == c - 1:
            tabs[:, ci, :] = rem
            break
        left = np.full(tabs.shape[0], cell_sizes[ci], dtype=np.int64)
        for vi in range(v):
            rest = rem[:, vi + 1:].sum(axis=1)
            lo = np.maximum(0, left - rest)
            hi = np.minimum(rem[:, vi], left)
            if vi == v - 1:
                lo = hi = left
            k = hi - lo + 1
            k = np.where(k > 0, k, 0)
            total = int(k.sum())
            if total > limit:
                return None
            idx = np.repeat(np.arange(tabs.shape[0]), k)
            start = np.cumsum(k) - k
            x = lo[idx] + (np.arange(total) - start[idx])
            tabs, rem, left = tabs[idx], rem[idx], left[idx]
            tabs[:, ci, vi] = x
            rem[:, vi] -= x
            left = left - x
    return tabs


def _unit_tables(unit: Unit, K: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Cartesian product over the unit's leaves of their tables: ``(N, n_cells, n_vals)``
    and the log number of worlds of each."""
    size = unit.cell_size
    per_leaf = []
    total = 1
    for lf in range(unit.leaf_counts.shape[0]):
        cells = np.flatnonzero(unit.cell_leaf == lf)
        t = leaf_tables(size[cells], K[lf], limit)
        if t is None:
            return None
        total *= t.shape[0]
        if total > limit:
            return None
        per_leaf.append((cells, t))
    N = total
    out = np.zeros((N, unit.n_cells, K.shape[1]), dtype=np.int32)
    rep = N
    tile = 1
    for cells, t in per_leaf:
        rep //= t.shape[0]
        idx = np.tile(np.repeat(np.arange(t.shape[0]), rep), tile)
        out[:, cells, :] = t[idx]
        tile *= t.shape[0]
    lg = _lgamma_table(int(out.max(initial=0)) + 1)
    logw = -lg[out].reshape(N, -1).sum(axis=1)
    return out, logw


def _lgamma_table(n: int) -> np.ndarray:
    return np.array([lgamma(i + 1.0) for i in range(n)])


# =======================================================================================
# the engine
# =======================================================================================
@dataclass
class UnitResult:
    post: np.ndarray   # (n_cells, n_targets)
    se: np.ndarray     # (n_cells, n_targets)
    exact: bool
    n_worlds: float    # worlds enumerated (exact: number of tables) or sampled
    accepted: float    # sampled: effective number of accepted worlds; exact: weight share
    consistent: bool


def _classes(unit: Unit, target_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unit's SA classes: ``(rep, K, tm)`` — a representative SA code per class, the
    per-leaf class counts ``(n_leaves, n_cls)`` and per leaf the class → target weights
    ``(n_leaves, n_cls, T)``. Classes are the values present, except that when the model
    looks only at a sensitive set the other values are lumped into one class: their
    arrangement never changes the likelihood, so within a leaf each is a uniform share of
    the lump."""
    lc = unit.leaf_counts
    tot = lc.sum(axis=0)
    vals = np.flatnonzero(tot > 0)
    tmf = target_masks.T.astype(np.float64)  # (n_sa, T)
    nl = lc.shape[0]
    if unit.set_mask is not None:
        sv = vals[unit.set_mask[vals]]
        ov = vals[~unit.set_mask[vals]]
        if ov.size > 1:
            # the lump's representative: the first value outside the set (canonical, so
            # that units differing only in how the lump splits share a cached result)
            rep = np.concatenate([sv, np.flatnonzero(~unit.set_mask)[:1]])
            other = lc[:, ov].sum(axis=1, keepdims=True)
            K = np.concatenate([lc[:, sv], other], axis=1)
            share = lc[:, ov] / np.maximum(other, 1)  # (n_leaves, n_other)
            tm_other = np.einsum("lo,ot->lt", share, tmf[ov])[:, None, :]
            tm = np.concatenate([np.broadcast_to(tmf[sv][None], (nl, sv.size, tmf.shape[1])), tm_other], axis=1)
            return rep, K, tm
    return vals, lc[:, vals], np.broadcast_to(tmf[vals][None], (nl, vals.size, tmf.shape[1]))


def solve_unit(unit: Unit, target_masks: np.ndarray, *, worlds: int, seed: int,
               exact_limit: float = 1e6, force_sample: bool = False, cache: dict | None = None) -> UnitResult:
    """Posterior per cell and target of one unit: exact (forward-backward over a GG chain,
    or enumerated contingency tables) when at most ``exact_limit`` states / worlds, else
    sampled (module docstring)."""
    n_sa = unit.leaf_counts.shape[1]
    rep, K, tm = _classes(unit, target_masks)
    size = unit.cell_size.astype(np.float64)
    if unit.likelihood is None and unit.chain is None:  # nothing excluded: the class frequency
        leaf_freq = K / K.sum(axis=1, keepdims=True)
        post = np.einsum("cv,cvt->ct", leaf_freq[unit.cell_leaf], tm[unit.cell_leaf])
        return UnitResult(post, np.zeros_like(post), True, 1.0, 1.0, True)
    if not force_sample:
        key = None
        if cache is not None and unit.key is not None:
            key = (unit.key, unit.cell_size.tobytes(), unit.cell_leaf.tobytes(), K.shape,
                   np.ascontiguousarray(K, dtype=np.int64).tobytes(), rep.tobytes())
            hit = cache.get(key)
        else:
            hit = None
        ex = hit if hit is not None else _solve_exact(unit, K, rep, n_sa, size, exact_limit)
        if ex is not None:
            if key is not None and hit is None:
                cache[key] = ex
            post_cls, n_worlds, share, consistent = ex
            post = np.einsum("cv,cvt->ct", post_cls, tm[unit.cell_leaf])
            se = np.zeros_like(post) if consistent else post.copy()
            return UnitResult(post, se, True, n_worlds, share, consistent)
    # sampled
    n_cls = rep.size
    order = np.argsort(unit.cell_leaf[unit.cell], kind="stable")
    pos_cell = unit.cell[order].astype(np.int64)
    leaf_of_pos = unit.cell_leaf[pos_cell]
    pos_vals = np.concatenate([np.repeat(np.arange(n_cls), K[lf]) for lf in range(K.shape[0])]).astype(np.int64)
    leaf_ptr = np.concatenate([[0], np.cumsum(np.bincount(leaf_of_pos, minlength=K.shape[0]))])
    counts = sample_cell_counts(int(seed), pos_vals, leaf_ptr.astype(np.int64), pos_cell, unit.n_cells,
                                n_cls, int(worlds))
    if unit.likelihood is not None:
        lik = _likelihood_chunked(unit, counts, rep, n_sa)
    else:
        lik = _chain_likelihood(unit, counts, rep, n_sa)
    tot = lik.sum()
    if not tot > 0:
        nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
        return UnitResult(nan, nan.copy(), False, float(worlds), 0.0, False)
    x = np.einsum("wcv,cvt->wct", counts.astype(np.float64), tm[unit.cell_leaf]) / size[None, :, None]
    post = np.einsum("w,wct->ct", lik, x) / tot
    se = np.sqrt(np.einsum("w,wct->ct", lik ** 2, (x - post[None]) ** 2)) / tot
    ess = float(tot ** 2 / (lik ** 2).sum())
    return UnitResult(post, se, False, float(worlds), ess, True)


def _solve_exact(unit: Unit, K: np.ndarray, rep: np.ndarray, n_sa: int, size: np.ndarray,
                 exact_limit: float) -> tuple[np.ndarray, float, float, bool] | None:
    """Exact class-level posterior ``(n_cells, n_cls)`` (expected class count per cell /
    cell size), the number of states or tables, the accepted weight share and whether some
    world is consistent; ``None`` when too large to enumerate."""
    if unit.chain is not None:
        res = _chain_dp(unit, K[0], size.astype(np.int64), rep, n_sa, int(exact_limit))
        if res is not None:
            return res
    # exact when the contingency tables (never more than the worlds) are few enough
    # (memory: at most ~2·10^7 table entries at once)
    cap = int(min(exact_limit, 2e7 // max(1, unit.n_cells * K.shape[1])))
    enum = _unit_tables(unit, K, cap)
    if enum is None:
        return None
    tabs, logw = enum
    lik = _likelihood_chunked(unit, tabs, rep, n_sa)
    w = np.exp(logw - logw.max()) * lik
    tot = w.sum()
    if not tot > 0:
        return np.full((unit.n_cells, K.shape[1]), np.nan), float(tabs.shape[0]), 0.0, False
    post_cls = np.einsum("n,ncv->cv", w, tabs.astype(np.float64)) / tot / size[:, None]
    share = float(tot / np.exp(logw - logw.max()).sum())
    return post_cls, float(tabs.shape[0]), share, True


def _log_worlds(K: np.ndarray) -> float:
    tot = 0.0
    for c in K:
        tot += lgamma(float(c.sum()) + 1) - sum(lgamma(float(x) + 1) for x in c if x > 1)
    return tot


def _expand(part: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    full = np.zeros(part.shape[:-1] + (n_sa,), dtype=np.int64)
    full[..., rep] = part
    return full


def _likelihood_chunked(unit: Unit, tabs: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    N = tabs.shape[0]
    step = max(1, _CHUNK_ROWS // max(1, unit.n_cells * 4))
    out = np.empty(N)
    for a in range(0, N, step):
        out[a:a + step] = unit.likelihood(_expand(tabs[a:a + step], rep, n_sa))
    return out


def _chain_likelihood(unit: Unit, counts: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    pref = np.cumsum(counts, axis=1)
    out = np.ones(counts.shape[0])
    for j in range(counts.shape[1]):
        out *= unit.chain(j, _expand(pref[:, j], rep, n_sa))
    return out


def _prefix_states(total: int, prefix: int, K: np.ndarray, limit: int) -> np.ndarray | None:
    """All count vectors ``0 <= c <= K`` with ``sum(c) == prefix``."""
    t = leaf_tables(np.array([prefix, total - prefix]), K, limit)
    return None if t is None else t[:, 0, :].astype(np.int64)


def _chain_dp(unit: Unit, K: np.ndarray, sizes: np.ndarray, rep: np.ndarray, n_sa: int,
              limit: int) -> tuple[np.ndarray, float, float, bool] | None:
    """Exact posterior per bucket of a GG/RGG group by forward-backward over the prefix
    count vectors (the likelihood is a product of per-prefix factors); ``None`` when a
    layer has more than ``limit`` states."""
    K = np.asarray(K, dtype=np.int64)
    B = sizes.size
    total = int(K.sum())
    # number of prefix count vectors with each sum (coefficients of prod_v (1 + x + … + x^K_v)):
    # give up before building anything when a layer or a transition would be too large
    poly = np.ones(1)
    for k in K:
        poly = np.convolve(poly, np.ones(int(k) + 1))
    pref = np.cumsum(sizes)
    if poly[pref].max(initial=0.0) > limit:
        return None
    work = poly[np.concatenate([[0], pref[:-1]])] * poly[sizes] * K.size
    if np.any(work > 2e7) or work.sum() > _CHAIN_WORK:  # memory of one transition; total time
        return None
    # mixed-radix keys of the count vectors: Π (K_v + 1) must fit an int64 (Python ints)
    if math.prod(int(k) + 1 for k in K.tolist()) >= 2**62:
        return None
    radix = np.concatenate([[1], np.cumprod(K[:-1] + 1)]).astype(np.int64)
    layers = [np.zeros((1, K.size), dtype=np.int64)]
    P = 0
    for j in range(B):
        P += int(sizes[j])
        st = _prefix_states(total, P, K, limit)
        if st is None:
            return None
        st = st[np.argsort(st @ radix)]
        layers.append(st)
    lg = _lgamma_table(int(max(sizes.max(), 1)) + 1)
    trans = []  # per bucket: (from idx, to idx, log w, d)
    fac = []
    for j in range(B):
        S0, S1 = layers[j], layers[j + 1]
        D = _prefix_states(total, int(sizes[j]), K, limit)
        if D is None or S0.shape[0] * D.shape[0] * K.size > 2e7:  # memory of one transition
            return None
        to = S0[:, None, :] + D[None, :, :]
        ok = np.all(to <= K, axis=2)
        i0, di = np.nonzero(ok)
        keys = to[i0, di] @ radix
        k1 = S1 @ radix
        i1 = np.searchsorted(k1, keys)
        logw = -lg[D].sum(axis=1)[di]
        trans.append((i0, i1, logw, D[di]))
        fac.append(np.asarray(unit.chain(j, _expand(S1, rep, n_sa)), dtype=np.float64))
    # forward
    alpha = [np.ones(1)]
    for j in range(B):
        i0, i1, logw, _ = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        a = np.bincount(i1, weights=alpha[j][i0] * w, minlength=layers[j + 1].shape[0]) * fac[j]
        m = a.max(initial=0.0)
        if not m > 0:
            return np.full((unit.n_cells, K.size), np.nan), float(sum(L.shape[0] for L in layers)), 0.0, False
        alpha.append(a / m)
    beta = [None] * (B + 1)
    beta[B] = np.ones(layers[B].shape[0])
    for j in range(B - 1, -1, -1):
        i0, i1, logw, _ = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        b = np.bincount(i0, weights=w * fac[j][i1] * beta[j + 1][i1], minlength=layers[j].shape[0])
        m = b.max(initial=0.0)
        beta[j] = b / m if m > 0 else b
    post_cls = np.zeros((B, K.size))
    for j in range(B):
        i0, i1, logw, d = trans[j]
        w = np.exp(logw - logw.max()) if logw.size else logw
        q = alpha[j][i0] * w * fac[j][i1] * beta[j + 1][i1]
        post_cls[j] = (q[:, None] * d).sum(axis=0) / q.sum() / sizes[j]
    n_states = float(sum(L.shape[0] for L in layers))
    return post_cls, n_states, 1.0, True


# =======================================================================================
# units per algorithm
# =======================================================================================
def _holds(model: Any, domain: Any, counts: np.ndarray) -> np.ndarray:
    shp = counts.shape[:-1]
    return np.asarray(model.holds(counts.reshape(-1, counts.shape[-1]), domain), dtype=bool).reshape(shp)


def _gg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    from ..algorithms.greedy import bucket_bounds
    from ..algorithms.ordering import qi_order

    model, domain = algo.model, table.sa_domain
    p = float(getattr(algo, "p", 0.0) or 0.0) if algo.name == "rgg" else 0.0
    n = table.n_rows
    pr = algo.priority.split(",") if isinstance(algo.priority, str) else algo.priority
    order = qi_order(table, algo.order, pr)
    bounds = bucket_bounds(n, algo.effective_bucket_size())
    nb = bounds.size - 1
    bucket_of_pos = np.repeat(np.arange(nb, dtype=np.int64), np.diff(bounds))
    g_pos = group[order]
    pub = g_pos >= 0
    n_groups = gcounts.shape[0]
    first = np.full(n_groups, nb, dtype=np.int64)
    last = np.full(n_groups, -1, dtype=np.int64)
    np.minimum.at(first, g_pos[pub], bucket_of_pos[pub])
    np.maximum.at(last, g_pos[pub], bucket_of_pos[pub])
    # every bucket in one group, groups contiguous runs of buckets
    gb_lo = np.full(nb, n_groups, dtype=np.int64)
    gb_hi = np.full(nb, -2, dtype=np.int64)
    gpos = np.where(pub, g_pos, -1)
    np.minimum.at(gb_lo, bucket_of_pos, gpos)
    np.maximum.at(gb_hi, bucket_of_pos, gpos)
    if np.any(gb_lo != gb_hi) or np.any(np.diff(first[np.argsort(first)]) <= 0):
        raise VerificationError(f"{algo.name}: the released groups are not unions of consecutive buckets of "
                                f"{algo.effective_bucket_size()} rows in the QI order")
    merge = getattr(algo, "tail", "merge") == "merge"
    smask = set_only_mask(model, domain)
    units = []
    for g in range(n_groups):
        a, b = int(first[g]), int(last[g])
        if b < a:
            continue
        pos = np.arange(bounds[a], bounds[b + 1])
        rows = order[pos]
        cell = (bucket_of_pos[pos] - a).astype(np.int64)
        B = b - a + 1
        is_end = b == nb - 1
        lik = _gg_lik(model, domain, p, B, final=is_end and merge, followed=not is_end)
        units.append(Unit(rows, cell, np.zeros(B, dtype=np.int64), gcounts[g:g + 1], lik["likelihood"], algo.name,
                          chain=lik.get("chain"), set_mask=smask, key=lik.get("key")))
    return units


def _gg_lik(model: Any, domain: Any, p: float, B: int, *, final: bool, followed: bool) -> dict[str, Any]:
    """Likelihood of a GG/RGG(p) group of ``B`` buckets: the group holding the last bucket
    under ``tail="merge"`` sums over runs (numba DP); any other group is a chain of prefix
    factors — ``p`` (RGG's voluntary merge; 0 for GG) per satisfying prefix before the
    last, then "holds" times ``1 - p`` (the stop) when a bucket follows."""
    if final and B > 1:
        def lik_final(c: np.ndarray) -> np.ndarray:
            W = c.shape[0]
            P = np.zeros((W, B + 1, c.shape[2]), dtype=np.int64)
            np.cumsum(c, axis=1, out=P[:, 1:])
            i, j = np.triu_indices(B)
            H = np.zeros((W, B, B), dtype=np.bool_)
            H[:, i, j] = _holds(model, domain, P[:, j + 1] - P[:, i])
            return gg_final_likelihood(H, p, B)
        return {"likelihood": lik_final, "key": ("gg-final", B, p)}
    if B == 1:
        return {"likelihood": None}  # one bucket: every world gives the same (verified) group
    stop = (1.0 - p) if followed else 1.0

    def chain(j: int, prefix_counts: np.ndarray) -> np.ndarray:
        H = _holds(model, domain, prefix_counts)
        return np.where(H, p, 1.0) if j < B - 1 else H * stop
    return {"likelihood": None, "chain": chain, "key": ("gg-chain", B, stop, p)}


def set_only_mask(model: Any, domain: Any) -> np.ndarray | None:
    """SA values a set-based model (simple/binary ℓ-diversity, (α,k)-anonymity with a
    sensitive set, with k-anonymity) looks at one by one; ``None`` for other models."""
    from ..models.alpha_k import AlphaKAnonymity
    from ..models.k_anonymity import KAnonymity

    mask = None
    for sub in getattr(model, "models", None) or [model]:
        if isinstance(sub, KAnonymity):
            continue
        if isinstance(sub, AlphaKAnonymity) and sub.sensitive_set is not None:
            m = np.asarray(domain.sensitive_mask(sub.sensitive_set), dtype=bool)
            mask = m if mask is None else (mask | m)
            continue
        return None
    return mask


def _sg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    from ..algorithms.ordering import qi_order
    from ..algorithms.symmetric import sg_split_point

    model, domain = algo.model, table.sa_domain
    pr = algo.priority.split(",") if isinstance(algo.priority, str) else algo.priority
    order = qi_order(table, algo.order, pr)
    g_pos = group[order]
    n = g_pos.size
    # rebuild the even-split tree top-down from the released groups
    units = []
    stack = [(0, n)]
    while stack:
        lo, hi = stack.pop()
        seg = g_pos[lo:hi]
        if seg[0] == seg[-1] and np.all(seg == seg[0]):
            g = int(seg[0])
            if g < 0 or gcounts[g].sum() != hi - lo:
                raise VerificationError("sg: a released group is not a node of the even-split tree")
            rows = order[lo:hi]
            if hi - lo < 2:
                units.append(Unit(rows, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                  gcounts[g:g + 1], None, "sg"))
                continue
            mid = int(sg_split_point(lo, hi))
            cell = (np.arange(lo, hi) >= mid).astype(np.int64)
            units.append(Unit(rows, cell, np.zeros(2, dtype=np.int64), gcounts[g:g + 1],
                              _split_refused(model, domain, [(np.array([0]), np.array([1]))]), "sg",
                              set_mask=set_only_mask(model, domain), key=("split", ((0,), (1,)))))
            continue
        if hi - lo < 2:
            raise VerificationError("sg: the released groups are not the leaves of an even-split tree")
        mid = int(sg_split_point(lo, hi))
        stack.extend([(mid, hi), (lo, mid)])
    return units


def _split_refused(model: Any, domain: Any, cuts: Sequence[tuple[np.ndarray, np.ndarray]]) -> Callable:
    """Likelihood 1 iff every cut ``(left cells, right cells)`` was refused: not both sides
    satisfy the model (SG Fig. 7 line 3; Mondrian's allowable cut)."""
    cuts = list(cuts)
    if not cuts:
        return lambda c: np.ones(c.shape[0])
    n_cells = 1 + max(int(max(lc.max(initial=0), rc.max(initial=0))) for lc, rc in cuts)
    # side membership of every cell in every cut: all cuts checked in one model call
    L = np.zeros((len(cuts), n_cells))
    R = np.zeros((len(cuts), n_cells))
    for k, (lc, rc) in enumerate(cuts):
        L[k, lc] = 1.0
        R[k, rc] = 1.0

    LR = np.concatenate([L, R], axis=0).T  # (cells, 2 * cuts)
    k = len(cuts)

    def lik(c: np.ndarray) -> np.ndarray:
        w, cells, v = c.shape
        # (W, v, cells) @ (cells, 2k): one BLAS product gives both sides of every cut
        sides = np.matmul(np.swapaxes(c, 1, 2).astype(np.float64), LR[:cells])  # (W, v, 2k)
        sides = np.rint(sides).astype(np.int64).transpose(0, 2, 1)  # (W, 2k, v)
        pair = np.stack([sides[:, :k], sides[:, k:]], axis=2)  # (W, k, 2, v)
        both = _holds(model, domain, pair).all(axis=2)  # (W, k)
        return (~both.any(axis=1)).astype(np.float64)
    return lik


class _RecordingModel:
    """A model that refuses every cut and records the cuts Mondrian tries, in order: with the
    SA replaced by row ids, the left counts are the left child's indicator."""

    def __init__(self) -> None:
        self.calls: list[np.ndarray] = []

    def holds(self, counts: np.ndarray, domain: Any) -> np.ndarray:
        self.calls.append(np.array(counts, copy=True))
        return np.zeros(np.asarray(counts).shape[0], dtype=bool)


def mondrian_candidate_cuts(table: EncodedTable, rows: np.ndarray, *, strict: bool, categorical: str,
                            model: Any) -> list[np.ndarray]:
    """The cuts Mondrian tries on the node whose rows are ``rows`` (in the node's current
    order), in the order it tries them: left-child masks over ``rows``. QI-only (widths,
    medians), so the adversary recomputes them; obtained by running the public
    ``mondrian_partition`` on the node with a recording model that refuses every cut."""
    from ..algorithms.mondrian import mondrian_partition
    from ..algorithms.ordering import size_floor
    from ..data.schema import Schema

    r = rows.size
    if r < max(2, 2 * max(1, size_floor(model))):
        return []
    sub = table.take(rows)
    cols = dict(sub.columns)
    sa = table.sa_name
    cols[sa] = EncodedColumn(sa, "categorical", np.arange(r, dtype=np.int32), np.arange(r), None)
    schema = Schema.from_dict({**table.schema.to_dict(), "sensitive_sets": {}})
    probe_table = EncodedTable(schema, cols, dict(sub.hierarchies))
    rec = _RecordingModel()
    mondrian_partition(probe_table, rec, strict=strict, categorical=categorical)
    return [np.asarray(c[0]) > 0 for c in rec.calls[0::2]]


def _mondrian_walk(model: Any, domain: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                   strict: bool, categorical: str, parent: np.ndarray,
                   find: Callable[[int], int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Rebuild the Mondrian tree of the release top-down, breadth-first over all nodes of a
    level at once, with Mondrian's own kernels (``mondrian._ranges``, ``_Dims.widths``,
    ``_plan``, ``_apply``) — the same cuts, in the same order, as
    :func:`mondrian_candidate_cuts` (one probe per node), without a probe per node. Returns
    the refused cuts that straddle released groups, ``(rows of the node, left mask)``, and
    unites (``parent``) the groups of an inner node with such a cut."""
    from ..algorithms.mondrian import _apply, _Dims, _plan, _ranges
    from ..algorithms.ordering import size_floor
    from .replay_kernels import cut_left_masks

    n = table.n_rows
    n_groups = gcounts.shape[0]
    gsize = gcounts.sum(axis=1)
    dims = _Dims(table, categorical)
    d = dims.d
    X = dims.matrix(table)
    G = group.astype(np.int64).copy()          # permuted with X (plays the SA in _plan/_apply)
    rows_p = np.arange(n, dtype=np.int64)
    floor = max(1, size_floor(model))
    use_hier = bool(dims.hier.any() and strict)
    constraints: list[tuple[np.ndarray, np.ndarray]] = []
    lo = np.array([0], dtype=np.int64)
    hi = np.array([n], dtype=np.int64)
    gnode = np.full(n_groups, -1, dtype=np.int64)
    zeros_sa = np.zeros(n, dtype=np.int32)
    while lo.size:
        r = hi - lo
        # per-segment min/max group (segments are increasing, not necessarily adjacent)
        bnd = np.stack([lo, hi], axis=1).ravel()
        Gx = np.append(G, 0)
        gmin = np.minimum.reduceat(Gx, bnd)[0::2]
        gmax = np.maximum.reduceat(Gx, bnd)[0::2]
        pure = gmin == gmax
        bad = pure & (gsize[gmin] != r)
        if bad.any():
            raise VerificationError("mondrian: a released group is not a node of the Mondrian tree")
        splittable = np.flatnonzero(r >= max(2, 2 * floor))
        if np.any(~pure[np.setdiff1d(np.arange(lo.size), splittable)]):
            raise VerificationError("mondrian: the released groups are not the leaves of a Mondrian tree "
                                    "(no allowable cut reproduces them)")
        chosen = np.full(lo.size, -1, dtype=np.int64)
        mv = np.zeros(lo.size, dtype=np.int64)
        tv = np.zeros(lo.size, dtype=np.int64)
        nlv = np.zeros(lo.size, dtype=np.int64)
        if splittable.size:
            mn, mx, nd = _ranges(X, lo[splittable], hi[splittable], dims.distinct, dims.cmax_distinct)
            w, lvl = dims.widths(mn, mx, nd)
            rank = np.argsort(-w, axis=1, kind="stable")
            undecided = np.ones(splittable.size, dtype=bool)
            for a in range(d):
                dj = rank[:, a]
                idx = np.flatnonzero(undecided & (w[np.arange(w.shape[0]), dj] > 0))
                if idx.size == 0:
                    break
                dsel = dj[idx]
                hl = lvl[idx, dsel] if use_hier else np.zeros(idx.size, dtype=np.int64)
                hl = np.where(dims.hier[dsel], hl, 0) if use_hier else hl
                nodes = splittable[idx]
                valid, mval, tval, nleft, _, _ = _plan(X, zeros_sa, lo[nodes], hi[nodes], dsel,
                                                       mn[idx, dsel], mx[idx, dsel], hl, dims.hanc, strict, 1)
                vi = np.flatnonzero(valid)
                if vi.size == 0:
                    continue
                vn = nodes[vi]
                left = cut_left_masks(X, lo[vn], hi[vn], dsel[vi], mval[vi], tval[vi])
                starts = np.concatenate([[0], np.cumsum(r[vn])])
                seg = np.repeat(np.arange(vi.size), r[vn])
                pos = lo[vn][seg] + (np.arange(starts[-1]) - starts[seg])
                g = G[pos]
                gnode[g] = seg
                lc = np.bincount(g, weights=left, minlength=n_groups)
                ug = np.unique(g)
                strad = (lc[ug] > 0) & (lc[ug] < gsize[ug])
                node_strad = np.bincount(gnode[ug], weights=strad, minlength=vi.size) > 0
                # whole cuts of inner nodes: allowable iff both sides hold (known counts)
                whole = np.flatnonzero(~node_strad)
                acc_local = np.zeros(vi.size, dtype=bool)
                if whole.size:
                    gl = ug[lc[ug] >= gsize[ug]]
                    gr = ug[lc[ug] <= 0]
                    L = np.zeros((vi.size, gcounts.shape[1]), dtype=np.int64)
                    R = np.zeros_like(L)
                    np.add.at(L, gnode[gl], gcounts[gl])
                    np.add.at(R, gnode[gr], gcounts[gr])
                    ok = _holds(model, domain, np.stack([L[whole], R[whole]], axis=1)).all(axis=1)
                    acc_local[whole[ok]] = True
                # straddling cuts tried before the accepted one were refused: constraints
                for k in np.flatnonzero(node_strad):
                    i = vn[k]
                    constraints.append((rows_p[lo[i]:hi[i]].copy(), left[starts[k]:starts[k + 1]].copy()))
                    if not pure[i]:
                        gi = np.unique(G[lo[i]:hi[i]])
                        a0 = find(int(gi[0]))
                        for gg in gi[1:]:
                            b0 = find(int(gg))
                            if b0 != a0:
                                parent[b0] = a0
                acc = vi[acc_local]
                an = nodes[acc]
                chosen[an] = dsel[acc]
                mv[an], tv[an], nlv[an] = mval[acc], tval[acc], nleft[acc]
                undecided[idx[acc]] = False
                if not undecided.any():
                    break
        cut = np.flatnonzero(chosen >= 0)
        if np.any(~pure & (chosen < 0)):
            raise VerificationError("mondrian: the released groups are not the leaves of a Mondrian tree "
                                    "(no allowable cut reproduces them)")
        if cut.size == 0:
            break
        _apply(X, G, rows_p, lo[cut], hi[cut], chosen[cut], mv[cut], tv[cut])
        mid = lo[cut] + nlv[cut]
        lo = np.stack([lo[cut], mid], axis=1).ravel()
        hi = np.stack([mid, hi[cut]], axis=1).ravel()
    return constraints


def _mondrian_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    model, domain = algo.model, table.sa_domain
    smask = set_only_mask(model, domain)
    strict, categorical = bool(algo.strict), algo.categorical
    n_groups = gcounts.shape[0]
    gsize = gcounts.sum(axis=1)
    if np.any(group < 0):
        raise ParameterError("mondrian replay: the release suppressed rows", parameter="release")
    # union-find over groups coupled by a refused cut at an inner node
    parent = np.arange(n_groups)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    constraints = _mondrian_walk(model, domain, table, group, gcounts, strict, categorical, parent, find)
    roots = np.array([find(g) for g in range(n_groups)])
    # assign constraints to units; atoms = rows with the same (group, side of every cut)
    by_unit: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for rows, m in constraints:
        by_unit.setdefault(int(roots[group[rows[0]]]), []).append((rows, m))
    units = []
    order_g = np.argsort(roots, kind="stable")
    bounds = np.flatnonzero(np.diff(roots[order_g])) + 1
    row_sorted = np.argsort(group, kind="stable")
    gptr = np.concatenate([[0], np.cumsum(gsize)])
    for members in np.split(order_g, bounds):
        u = int(roots[members[0]])
        rows = np.concatenate([row_sorted[gptr[g]:gptr[g + 1]] for g in members])
        local_leaf = np.repeat(np.arange(members.size), gsize[members])
        cons = by_unit.get(u, [])
        if not cons:
            units.append(Unit(rows, local_leaf.copy(), np.arange(members.size), gcounts[members], None, "mondrian"))
            continue
        pos_of_row = np.full(table.n_rows, -1, dtype=np.int64)
        pos_of_row[rows] = np.arange(rows.size)
        bits = [local_leaf.astype(np.int64)]
        sides = []
        for crow, m in cons:
            side = np.full(rows.size, -1, dtype=np.int64)
            side[pos_of_row[crow]] = m.astype(np.int64)
            bits.append(side)
            sides.append(side)
        key = np.stack(bits, axis=1)
        _, atom = np.unique(key, axis=0, return_inverse=True)
        atom = atom.ravel()
        srt = np.lexsort((atom,))
        rows, atom, local_leaf = rows[srt], atom[srt], local_leaf[srt]
        sides = [s[srt] for s in sides]
        n_atoms = int(atom.max()) + 1
        cell_leaf = np.zeros(n_atoms, dtype=np.int64)
        cell_leaf[atom] = local_leaf
        cuts = []
        for s in sides:
            side_of_atom = np.full(n_atoms, -1, dtype=np.int64)
            side_of_atom[atom] = s
            cuts.append((np.flatnonzero(side_of_atom == 1), np.flatnonzero(side_of_atom == 0)))
        ckey = ("split", tuple((tuple(a.tolist()), tuple(b.tolist())) for a, b in cuts))
        units.append(Unit(rows, atom.astype(np.int64), cell_leaf, gcounts[members],
                          _split_refused(model, domain, cuts), "mondrian", set_mask=smask, key=ckey))
    return units


def _rerun_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    """Generic: one unit, the whole table, one cell per row; each world re-run through
    ``algo.partition`` and kept iff the grouping is the released one."""
    if np.any(group < 0):
        raise ParameterError(f"{algo.name} replay: the release suppressed rows (their SA is unknown)",
                             parameter="release")
    n = table.n_rows
    rows = np.argsort(group, kind="stable")
    leaf = group[rows]
    ref = _canonical(group)

    def lik(c: np.ndarray) -> np.ndarray:
        out = np.zeros(c.shape[0])
        sa = np.empty(n, dtype=np.int32)
        for w in range(c.shape[0]):
            sa[rows] = np.argmax(c[w], axis=1)
            t = _with_sa(table, sa)
            try:
                part = algo.partition(t)
            except OpenbookError:  # an infeasible world cannot produce the release
                continue
            out[w] = float(np.array_equal(_canonical(part.group), ref))
        return out
    return [Unit(rows, np.arange(n, dtype=np.int64), leaf.astype(np.int64), gcounts, lik, "rerun")]


def _canonical(group: np.ndarray) -> np.ndarray:
    """Group labels renumbered by first appearance (compare groupings, not label names)."""
    _, first, inv = np.unique(group, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    out = rank[inv.ravel()]
    return np.where(group < 0, -1, out)


def _with_sa(table: EncodedTable, sa: np.ndarray) -> EncodedTable:
    cols = dict(table.columns)
    c = cols[table.sa_name]
    cols[table.sa_name] = EncodedColumn(c.name, c.kind, np.asarray(sa, dtype=np.int32), c.categories, c.numeric)
    return EncodedTable(table.schema, cols, dict(table.hierarchies), table.kept, table.dropped_columns, table.source)


UNIT_BUILDERS: dict[str, Callable] = {"gg": _gg_units, "rgg": _gg_units, "sg": _sg_units,
                                      "mondrian": _mondrian_units}


def replay_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    """The independent units of a release made by ``algo`` (module docstring)."""
    name = algo.name
    if name in UNIT_BUILDERS:
        return UNIT_BUILDERS[name](algo, table, group, gcounts)
    if name in NO_INFORMATION:
        rows = np.argsort(group, kind="stable")
        rows = rows[group[rows] >= 0]
        g = group[rows]
        return [Unit(rows, g.astype(np.int64), np.arange(gcounts.shape[0]), gcounts, None, "no-information")]
    return _rerun_units(algo, table, group, gcounts)


# =======================================================================================
# the attack
# =======================================================================================
def replay_attack(table: EncodedTable, group: np.ndarray, algorithm: Any, *, worlds: int = 10_000,
                  seed: int | np.random.Generator = 0, exact_limit: float = 1e6, targets: Any = None,
                  sensitive_set: str | None = None, set_mode: str | None = None,
                  force_sample: bool = False, l: float | None = None) -> AttackResult:
    """Per-tuple posteriors of the replay adversary (module docstring).

    Parameters
    ----------
    table:
        The individuals (QI values; the adversary knows them). Its SA column is read only
        per released group — as the release's SA multisets — and to mark which tuples are
        truly sensitive for the audit.
    group:
        Released group of each row (``Partition.group``; ``-1`` = suppressed).
    algorithm:
        The anonymizer (an :class:`~openbook.algorithms.base.Anonymizer` with its
        parameters and model), e.g. ``make_algorithm("gg", model=make_model("l=3"))``.
    worlds:
        Worlds sampled per unit when it has more than ``exact_limit`` possible worlds.
    seed:
        Seed (int or ``numpy.random.Generator``) of the sampling.
    targets, sensitive_set, set_mode:
        ``targets`` = ``(names, masks (T, n_sa))``; default from the model's sensitive set
        (:func:`.baseline.choose_targets`): ``"set:NAME"``, or every SA value.
    force_sample:
        Sample even units small enough to enumerate (used by the tests).
    """
    from .baseline import choose_targets

    t0 = time.perf_counter()
    if worlds < 1:
        raise ParameterError(f"worlds={worlds} must be >= 1", parameter="worlds", value=worlds)
    group = np.asarray(group, dtype=np.int64)
    if group.size != table.n_rows:
        raise ParameterError(f"group has {group.size} labels for {table.n_rows} rows", parameter="group")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    model = algorithm.model
    domain = table.sa_domain
    if targets is None:
        names, masks, _ = choose_targets(domain, model, sensitive_set, set_mode)
    else:
        names, masks = targets
    masks = np.asarray(masks, dtype=bool)
    n_groups = int(group.max()) + 1 if group.size else 0
    gcounts = table.group_sa_counts(group, n_groups)
    units = _merge_constant_units(replay_units(algorithm, table, group, gcounts))
    cache: dict = {}
    post = np.full((table.n_rows, len(names)), np.nan)
    se = np.zeros((table.n_rows, len(names)))
    unresolved = np.zeros(table.n_rows, dtype=bool)
    seeds = rng.integers(0, 2**31 - 1, size=max(1, len(units)))
    info = {"group": [], "unit": [], "exact": [], "worlds": [], "accepted": [], "unit_kind": []}
    n_exact = n_sampled = 0
    for ui, u in enumerate(track(units, "replay adversary: units")):
        r = solve_unit(u, masks, worlds=worlds, seed=int(seeds[ui]), exact_limit=exact_limit,
                       force_sample=force_sample, cache=cache)
        if u.likelihood is not None or u.chain is not None:
            n_exact += int(r.exact)
            n_sampled += int(not r.exact)
        post[u.rows] = r.post[u.cell]
        se[u.rows] = r.se[u.cell]
        if not r.consistent:
            unresolved[u.rows] = True
        for g in np.unique(group[u.rows]):
            info["group"].append(int(g))
            info["unit"].append(ui)
            info["exact"].append(bool(r.exact))
            info["worlds"].append(r.n_worlds)
            info["accepted"].append(r.accepted)
            info["unit_kind"].append(u.kind)
    post[group < 0] = np.nan
    sens = masks.any(axis=0)[table.sa_codes]
    gi = pd.DataFrame(info)
    return AttackResult(
        adversary="replay", posterior=post, targets=list(names), group=group,
        l=model_l(model) if l is None else l, stderr=se, sensitive=sens, unresolved=unresolved,
        group_info=gi,
        notes={"knowledge": "every QI, the algorithm and its parameters, the release (paper 000 §2.4)",
               "algorithm": algorithm.name, "params": _jsonable(algorithm.params()),
               "units": len(units), "units_exact": n_exact, "units_sampled": n_sampled,
               "worlds_per_unit": int(worlds), "exact_limit": float(exact_limit),
               "elapsed_s": round(time.perf_counter() - t0, 3)},
    )


def _merge_constant_units(units: list[Unit]) -> list[Unit]:
    """Units whose likelihood is constant (no world excluded) merged into one: their
    posterior is the leaf frequency, computed for all of them at once."""
    const = [u for u in units if u.likelihood is None and u.chain is None]
    if len(const) < 2:
        return units
    rest = [u for u in units if not (u.likelihood is None and u.chain is None)]
    cell_off = np.cumsum([0] + [u.n_cells for u in const])
    leaf_off = np.cumsum([0] + [u.leaf_counts.shape[0] for u in const])
    merged = Unit(np.concatenate([u.rows for u in const]),
                  np.concatenate([u.cell + cell_off[i] for i, u in enumerate(const)]).astype(np.int64),
                  np.concatenate([u.cell_leaf + leaf_off[i] for i, u in enumerate(const)]).astype(np.int64),
                  np.concatenate([u.leaf_counts for u in const]), None, const[0].kind)
    return [merged] + rest


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        out[k] = v.tolist() if isinstance(v, np.ndarray) else v
    return out


def replay_partition(table: EncodedTable, partition: Partition, algorithm: Any, **kw: Any) -> AttackResult:
    """:func:`replay_attack` on a :class:`Partition` the algorithm produced."""
    return replay_attack(table, partition.group, algorithm, **kw)


def _settle_ties(algo: Any, table: EncodedTable, group: np.ndarray) -> np.ndarray:
    """People with equal QIs are interchangeable to the adversary, so which of them sits in
    which group is the auditor's choice: within each run of equal QI tuples along the
    algorithm's order, seat groups that started before the run first and groups that go on
    after it last — the seating under which the groups are consecutive, as GG/SG made them."""
    from ..algorithms.ordering import qi_order
    from ..data.grouping import group_ids

    pr = algo.priority.split(",") if isinstance(algo.priority, str) else algo.priority
    order = qi_order(table, algo.order, pr)
    key, _ = group_ids(table.qi_codes)
    k = key[order]
    g = group[order].copy()
    n = g.size
    if n == 0:
        return group
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], n]
    pos = np.arange(n)
    valid = g >= 0
    n_groups = int(group.max()) + 1 if valid.any() else 0
    first = np.full(n_groups, n, dtype=np.int64)
    last = np.full(n_groups, -1, dtype=np.int64)
    np.minimum.at(first, g[valid], pos[valid])
    np.maximum.at(last, g[valid], pos[valid])
    for a, b in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist()):
        seg = g[a:b]
        rank = np.where(seg < 0, 3, np.where(first[np.maximum(seg, 0)] < a, 0,
                                              np.where(last[np.maximum(seg, 0)] >= b, 2, 1)))
        g[a:b] = seg[np.lexsort((seg, rank))]
    out = np.empty_like(group)
    out[order] = g
    return out


def algorithm_from_provenance(prov: dict[str, Any], model: Any = None) -> Any:
    """The anonymizer a release's provenance (``meta["algorithm"]``) describes."""
    from ..algorithms.registry import make_algorithm
    from ..models.registry import make_model

    if not prov or "algorithm" not in prov:
        raise ParameterError("the release records no algorithm: replay needs the provenance "
                             "(algorithm, params, model)", parameter="release")
    spec = model if model is not None else prov.get("model")
    if spec is None:
        raise ParameterError("the release records no privacy model", parameter="model")
    mdl = make_model(spec) if isinstance(spec, (str, dict, list)) else spec
    params = dict(prov.get("params") or {})
    return make_algorithm(prov["algorithm"], model=mdl, **params)


def replay_release(release: Any, knowledge: EncodedTable, *, worlds: int = 10_000, seed: int = 0,
                   exact_limit: float = 1e6, sensitive_set: str | None = None,
                   partition: Partition | None = None) -> AttackResult:
    """Replay attack on a saved release: the algorithm from its provenance, the individuals'
    QIs from ``knowledge`` (the original table; its SA marks the truly sensitive tuples).
    The groups are the publisher's partition when known (``partition`` or
    ``release.partition``), else the published classes, every person placed by
    :func:`openbook.release.align.align` (rows carry no order)."""
    from ..release.align import align, seated_sa

    algo = algorithm_from_provenance(release.meta.get("algorithm") or {}, release.meta.get("model"))
    n = knowledge.n_rows
    if partition is None and release.partition is not None and release.partition.n_rows == n:
        partition = release.partition  # the publisher's own groups
    if partition is not None:  # the publisher's own partition: its groups are the truth
        return replay_attack(knowledge, partition.group, algo, worlds=worlds, seed=seed,
                             exact_limit=exact_limit, sensitive_set=sensitive_set)
    counts, dom = release.sa_counts()
    kdom = knowledge.sa_domain
    unknown = sorted(set(map(str, dom.values)) - set(map(str, kdom.values)))
    if unknown:
        raise ParameterError(f"the release publishes SA value {unknown[0]!r} the knowledge table lacks",
                             parameter="knowledge")
    al = align(release, knowledge)
    if algo.name in ("gg", "rgg", "sg"):
        al.group = _settle_ties(algo, knowledge, al.group)
    group = al.group
    # the released SA multisets, placed on the knowledge rows (people with equal QIs are
    # interchangeable, so any consistent seating gives the adversary's posteriors)
    knowledge = _with_sa(knowledge, seated_sa(release, knowledge, al))
    return replay_attack(knowledge, group, algo, worlds=worlds, seed=seed, exact_limit=exact_limit,
                         sensitive_set=sensitive_set)
