"""r-robustness (paper 003 Def. 1) audit and the Δ measures of Theorem 1 (§4.1, §5).

A release is *r-robust* when no individual ``t`` is linked to a sensitive value ``x`` with
``p(t:x) > 1/r`` under the worst-case QI-based distribution (§2, mined by
:mod:`openbook.inference.knowledge`). The audit computes, for every published tuple, the
posterior ``p(t:x)`` (eq. 1-3) for **every** attribute set ``A`` of the knowledge and every
sensitive value ``x`` of its A-group, and keeps the worst (§5: "we take the greatest such
value"). A *problematic tuple* has a worst posterior above ``1/r``; the report gives their
proportion among the *sensitive tuples* (tuples whose own value is sensitive, §5 measure 3),
the posterior of the whole sensitive set (``set_posterior``) beside it, and measure 4: the
greatest probability deviation ``Δ`` (Def. 4-5) per A-group, attribute set and sensitive
value, averaged as in §5, with Theorem 1's ``Δ_max`` (eq. 4, :mod:`openbook.inference.theorem1`)
beside it.

**Methods, per (group, attribute set).** Exact by the cheaper of two DPs within
``max_states`` states: over value multiplicity vectors (:mod:`openbook.inference.multiset_dp`)
or over the tuples' row types, i.e. A-signatures (:mod:`openbook.inference.row_types`; the
backward pass alone when the group holds one sensitive value). When neither fits, the
Metropolis sampler (:mod:`openbook.inference.sampler`) estimates the posterior with a
standard error; the report's ``bound`` is then, per tuple, the largest *upper bound* over
the attribute sets — the exact posterior, or the estimate plus ``z·SE + 3/n`` — so
``posterior <= true worst posterior <= bound`` up to the sampler's stated confidence.
``methods`` counts the groups (``exact``: every set exact; ``mcmc``: at least one set
sampled; ``unresolved``: too large for the sampler, or no world of positive weight) and,
under ``pairs``, the (group, set) computations per method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, parallel_chunksize, prange

from ..errors import DataError, ParameterError
from ..inference.knowledge import Knowledge
from ..inference.multiset_dp import multiset_posteriors
from ..inference.row_types import colseq_first, row_type_kernel, row_types
from ..inference.sampler import sample_groups, sampled_posteriors
from ..inference.states import DEFAULT_MAX_STATES
from ..inference.theorem1 import delta_max
from ..progress import track

#: Metropolis budget per (group, attribute set) in the audit
AUDIT_SAMPLER = {"n_chains": 4, "n_batches": 10, "batch_sweeps": 15, "n_burn": 40}
#: multiple of the standard error in a sampled posterior's stated bound
AUDIT_Z = 4.0
#: groups larger than this that no exact DP fits are reported *unresolved* (posterior NaN,
#: counted in ``methods["unresolved"]`` and never counted as safe): the swap chain needs
#: O(N) moves per sweep and its fallback start an N×N matrix
AUDIT_MAX_SAMPLED_ROWS = 5000
#: calls of the exact kernel (progress steps) per audit
_STEPS = 20


# ---------------------------------------------------------------------------------------
# the exact audit kernel
# ---------------------------------------------------------------------------------------
@njit(cache=True, parallel=True)
def _audit_kernel(P, idx, sa, order, starts, sens, g_lo, g_hi, max_states, post, post_set, arg_set, method,
                  pending, n_pairs):  # pragma: no cover - compiled
    """Exact posteriors of groups ``g_lo..g_hi-1`` for every attribute set the cheaper DP
    fits; ``pending[g, s]`` marks the others, ``method[g]`` is 0 (no sensitive value), 1
    (every set computed), 2 (some set pending) or 4 (no world of positive weight);
    ``n_pairs[g]`` counts the sets done by the value DP and by the row-type DP."""
    n_sets = idx.shape[0]
    K_all = P.shape[1]
    for g in prange(g_lo, g_hi):
        a, b = starts[g], starts[g + 1]
        N = b - a
        local = np.full(K_all, -1, np.int64)
        vals = np.empty(N, np.int64)
        mult = np.zeros(N, np.int64)
        K = 0
        n_sens = 0
        first = -1
        for q in range(a, b):
            v = sa[order[q]]
            if local[v] < 0:
                local[v] = K
                vals[K] = v
                if sens[v]:
                    n_sens += 1
                    first = K
                K += 1
            mult[local[v]] += 1
        for q in range(a, b):
            post[order[q]] = 0.0
            post_set[order[q]] = 0.0
            arg_set[order[q]] = -1
        if n_sens == 0:
            method[g] = 0
            continue
        if n_sens > 1:
            first = -1  # several sensitive values: every column of the row-type DP
        m = mult[:K].copy()
        seq = colseq_first(m, first)
        s_val = 1.0
        for k in range(K):
            s_val *= m[k] + 1
        cost_val = 2.0 * s_val * K if s_val <= max_states else np.inf
        W = np.empty((N, K))
        out = np.empty((N, K))
        rows_s = np.empty(N, np.int64)
        tj = np.empty(N, np.int64)
        method[g] = 1
        for s in range(n_sets):
            for j in range(N):
                rows_s[j] = idx[s, order[a + j]]
            types, cnt = row_types(rows_s)
            T = types.size
            s_row = 1.0
            for t in range(T):
                s_row *= cnt[t] + 1
            cost_row = (1.0 if first >= 0 else 2.0) * s_row * T if s_row <= max_states else np.inf
            if cost_row == np.inf and cost_val == np.inf:
                pending[g, s] = True
                method[g] = 2
                continue
            if cost_row <= cost_val:
                Wt = np.empty((T, K))
                for t in range(T):
                    for k in range(K):
                        Wt[t, k] = P[types[t], vals[k]]
                ot = np.empty((T, K))
                good = row_type_kernel(Wt, cnt, seq, first >= 0, ot)
                for j in range(N):
                    tj[j] = np.searchsorted(types, rows_s[j])
                    for k in range(K):
                        out[j, k] = ot[tj[j], k]
                n_pairs[g, 1] += 1
            else:
                for j in range(N):
                    for k in range(K):
                        W[j, k] = P[rows_s[j], vals[k]]
                good = multiset_posteriors(W, m, out) > -np.inf
                n_pairs[g, 0] += 1
            if not good:
                method[g] = 4
                break
            for j in range(N):
                t = order[a + j]
                best = 0.0
                tot = 0.0
                for k in range(K):
                    if sens[vals[k]]:
                        tot += out[j, k]
                        if out[j, k] > best:
                            best = out[j, k]
                if best > post[t]:
                    post[t] = best
                    arg_set[t] = s
                if tot > post_set[t]:
                    post_set[t] = tot


@dataclass
class RobustnessReport:
    """Per-tuple worst posteriors and the release-level summaries of paper 003 §5."""

    r: float
    posterior: np.ndarray  # worst p(t:x) over A and sensitive x in t's group
    set_posterior: np.ndarray  # worst p(t : sensitive set) over A
    worst_set: np.ndarray  # index of the attribute set attaining ``posterior`` (-1: none)
    sensitive: np.ndarray  # bool: t's own value is sensitive
    group: np.ndarray
    set_names: list[str]
    methods: dict[str, int | dict[str, int]]
    #: largest ``bound - posterior`` over the tuples: 0 when every posterior is exact
    mcmc_bound: float
    delta: dict[str, Any] = field(default_factory=dict)
    #: False when the tuple-level SA is unknown (a bucketized release audited without the
    #: original SA): ``sensitive`` then only has the right count per group
    sensitive_exact: bool = True
    #: tuples of groups too large for any exact method or the sampler (posterior NaN)
    unresolved: np.ndarray | None = None
    #: per tuple, an upper bound of its worst posterior: the posterior where every set was
    #: exact, else the largest ``estimate + z·SE + 3/n`` of a sampled set (module docstring)
    bound: np.ndarray | None = None
    #: the same for ``set_posterior``
    set_bound: np.ndarray | None = None

    @property
    def n_unresolved(self) -> int:
        return 0 if self.unresolved is None else int(self.unresolved.sum())

    @property
    def problematic(self) -> np.ndarray:
        return self.posterior > 1.0 / self.r + 1e-12

    @property
    def n_problematic(self) -> int:
        return int(self.problematic.sum())

    @property
    def problematic_fraction(self) -> float:
        """Proportion of problematic tuples among the sensitive tuples (§5, measure 3): the
        fraction of sensitive tuples that are problematic when the tuple-level SA is known,
        else the count ratio ``n_problematic / n_sensitive``."""
        s = self.sensitive if self.unresolved is None else self.sensitive & ~self.unresolved
        if not s.any():
            return float("nan") if self.n_unresolved else 0.0
        if self.sensitive_exact:
            return float(self.problematic[s].mean())
        return self.n_problematic / int(s.sum())

    @property
    def robust(self) -> bool:
        """No problematic tuple, and none left unresolved (unknown is not safe)."""
        return self.n_problematic == 0 and self.n_unresolved == 0

    def to_dict(self) -> dict[str, Any]:
        ok = ~np.isnan(self.posterior)
        worst = int(np.flatnonzero(ok)[np.argmax(self.posterior[ok])]) if ok.any() else -1
        return {
            "adversary": "background (worst-case QI-based distribution, paper 003)",
            "r": self.r, "robust": self.robust, "n_unresolved": self.n_unresolved,
            "max_posterior": float(np.nanmax(self.posterior, initial=0.0)),
            "max_set_posterior": float(np.nanmax(self.set_posterior, initial=0.0)),
            "max_bound": None if self.bound is None else float(np.nanmax(self.bound, initial=0.0)),
            "worst_attribute_set": self.set_names[self.worst_set[worst]] if worst >= 0 and self.worst_set[worst] >= 0
            else None,
            "n_problematic": self.n_problematic, "n_sensitive_tuples": int(self.sensitive.sum()),
            "problematic_fraction": self.problematic_fraction,
            "n_set_problematic": int((self.set_posterior > 1.0 / self.r + 1e-12).sum()),
            "avg_delta": self.delta.get("avg_delta"), "avg_delta_max": self.delta.get("avg_delta_max"),
            "bound_violations": self.delta.get("violations"),
            "methods": self.methods, "mcmc_bound": self.mcmc_bound, "n_attribute_sets": len(self.set_names),
        }


def _sensitive_mask(knowledge: Knowledge, sensitive: Any) -> np.ndarray:
    K = knowledge.n_sa
    if sensitive is None:
        return np.ones(K, dtype=bool)
    s = np.asarray(sensitive)
    if s.dtype == bool:
        if s.size != K:
            raise ParameterError(f"sensitive mask has {s.size} entries, the SA has {K} values", parameter="sensitive")
        return s.copy()
    want = {str(v) for v in np.atleast_1d(s).tolist()}
    values = [str(v) for v in knowledge.sa_values]
    missing = want - set(values)
    if missing:
        raise ParameterError(f"sensitive value(s) {sorted(missing)} not in the SA domain", parameter="sensitive",
                             value=sorted(missing)[0])
    return np.array([v in want for v in values], dtype=bool)


def audit_groups(knowledge: Knowledge, qi_codes: np.ndarray, sa_codes: np.ndarray, group: np.ndarray, *,
                 r: float, sensitive: Any = None, max_states: int = DEFAULT_MAX_STATES, seed: int = 0,
                 with_delta: bool = True, sampler: dict | None = None) -> RobustnessReport:
    """r-robustness audit of a grouping of tuples: exact posteriors where a DP fits
    ``max_states``, sampled ones (seeded by ``seed``; budget ``AUDIT_SAMPLER`` updated by
    ``sampler``) with a per-tuple upper bound elsewhere (module docstring).

    ``qi_codes`` (n, |QI|) and ``sa_codes`` (n,) are in the knowledge's coding; ``group``
    gives each row's A-group (``-1``: not published, ignored). ``sensitive`` is a boolean
    mask over SA codes or a list of sensitive values (default: every value is sensitive).
    """
    if not (isinstance(r, (int, float)) and r > 1):
        raise ParameterError(f"r={r!r} must be a number > 1", parameter="r", value=r)
    qi_codes = np.asarray(qi_codes)
    sa = np.asarray(sa_codes, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    n = sa.size
    if qi_codes.shape[0] != n or group.size != n:
        raise DataError("qi_codes, sa_codes and group must have one entry per row")
    sens = _sensitive_mask(knowledge, sensitive)
    P, idx = knowledge.stacked(qi_codes)
    keep = np.flatnonzero(group >= 0)
    order = keep[np.argsort(group[keep], kind="stable")]
    gsorted = group[order]
    uniq_g = np.unique(gsorted)
    starts = np.searchsorted(gsorted, np.append(uniq_g, np.iinfo(np.int64).max)).astype(np.int64)
    G = uniq_g.size
    post = np.zeros(n)
    post_set = np.zeros(n)
    arg = np.full(n, -1, dtype=np.int64)
    method = np.zeros(G, dtype=np.int64)
    pending = np.zeros((G, idx.shape[0]), dtype=bool)
    n_pairs = np.zeros((G, 2), dtype=np.int64)
    order = order.astype(np.int64)
    step = max(256, -(-G // _STEPS))
    chunks = [(lo, min(lo + step, G)) for lo in range(0, G, step)]
    for lo, hi in track(chunks, "background adversary: exact posteriors"):
        with parallel_chunksize(1):  # dynamic scheduling: the costly groups are not spread evenly
            _audit_kernel(P, idx, sa, order, starts, sens, lo, hi, float(max_states), post, post_set, arg, method,
                          pending, n_pairs)
    sizes = np.diff(starts)
    unresolved = np.zeros(n, dtype=bool)
    too_big = (method == 2) & (sizes > AUDIT_MAX_SAMPLED_ROWS)
    for g in np.flatnonzero((method == 4) | too_big).tolist():
        unresolved[order[starts[g]:starts[g + 1]]] = True
    method[too_big] = 4
    pending[method == 4] = False
    bound, set_bound = post.copy(), post_set.copy()  # exact so far
    n_sampled = _sample_pending(P, idx, sa, order, starts, sens, pending, seed, {**AUDIT_SAMPLER, **(sampler or {})},
                                post, post_set, arg, bound, set_bound)
    post[unresolved | (group < 0)] = 0.0
    post_set[unresolved | (group < 0)] = 0.0
    bound[group < 0] = 0.0
    set_bound[group < 0] = 0.0
    mcmc_bound = float(max((bound - post).max(initial=0.0), (set_bound - post_set).max(initial=0.0)))
    for arr in (post, post_set, bound, set_bound):
        arr[unresolved] = np.nan
    methods: dict[str, int | dict[str, int]] = {"no_sensitive_value": int((method == 0).sum()), "exact": int((method == 1).sum()),
               "mcmc": int((method == 2).sum()), "unresolved": int((method == 4).sum()),
               "pairs": {"value_dp": int(n_pairs[:, 0].sum()), "row_type_dp": int(n_pairs[:, 1].sum()),
                         "sampled": n_sampled}}
    rep = RobustnessReport(r=float(r), posterior=post, set_posterior=post_set,
                           worst_set=arg, sensitive=sens[sa] & (group >= 0), group=group,
                           set_names=knowledge.set_names(), methods=methods, mcmc_bound=mcmc_bound,
                           unresolved=unresolved, bound=bound, set_bound=set_bound)
    if with_delta:
        rep.delta = delta_summary(knowledge, P, idx, sa, group, r=r, sensitive=sens)
    return rep


def _sample_pending(P: np.ndarray, idx: np.ndarray, sa: np.ndarray, order: np.ndarray, starts: np.ndarray,
                    sens: np.ndarray, pending: np.ndarray, seed: int, params: dict[str, Any], post: np.ndarray,
                    post_set: np.ndarray, arg: np.ndarray, bound: np.ndarray, set_bound: np.ndarray) -> int:
    """Sample every pending (group, attribute set) pair (in parallel, seeded per pair) and
    fold the estimates into ``post``/``post_set``/``arg`` and the stated upper bounds into
    ``bound``/``set_bound``. Returns the number of pairs sampled."""
    pg, ps = np.nonzero(pending)
    if pg.size == 0:
        return 0
    n_chains, n_batches = int(params["n_chains"]), int(params["n_batches"])
    batch_sweeps, n_burn = int(params["batch_sweeps"]), int(params["n_burn"])
    z = float(params.get("z", AUDIT_Z))
    seeds = np.stack([np.random.default_rng([seed, int(g), int(s)]).integers(2**31 - 1, size=n_chains)
                      for g, s in zip(pg.tolist(), ps.tolist())]).astype(np.int64)
    sizes = (starts[pg + 1] - starts[pg]).astype(np.int64)
    # chunks of pairs of about equal work (rows x pairs) for the progress bar
    work = np.cumsum(sizes)
    n_chunks = int(min(pg.size, max(1, work[-1] // 20_000)))
    cuts = np.searchsorted(work, np.linspace(0, work[-1], n_chunks + 1)[1:-1])
    for part in track(np.split(np.arange(pg.size), cuts), "background adversary: sampled posteriors"):
        if part.size == 0:
            continue
        g, s = pg[part].astype(np.int64), ps[part].astype(np.int64)
        offs = np.concatenate([[0], np.cumsum(sizes[part])]).astype(np.int64)
        est_max, bnd_max = np.zeros(offs[-1]), np.zeros(offs[-1])
        est_sum, bnd_sum = np.zeros(offs[-1]), np.zeros(offs[-1])
        ok = np.zeros(part.size, dtype=bool)
        with parallel_chunksize(1):
            sample_groups(P, idx, sa, order, starts, sens, g, s, seeds[part], n_burn, n_batches, batch_sweeps, z,
                          offs, est_max, bnd_max, est_sum, bnd_sum, ok)
        for m in np.flatnonzero(~ok).tolist():  # greedy found no start: the Hungarian method
            rows = order[starts[g[m]]:starts[g[m] + 1]]
            vals, inv = np.unique(sa[rows], return_inverse=True)
            res = sampled_posteriors(P[idx[s[m], rows]][:, vals], np.bincount(inv), seed=seeds[part[m]].tolist(),
                                     n_chains=n_chains, n_batches=n_batches, batch_sweeps=batch_sweeps,
                                     n_burn=n_burn, z=z, track=sens[vals])
            sv = sens[vals]
            sl = slice(offs[m], offs[m + 1])
            est_max[sl] = res.estimate[:, sv].max(axis=1)
            bnd_max[sl] = (res.estimate + res.bound)[:, sv].max(axis=1)
            est_sum[sl] = res.estimate[:, sv].sum(axis=1)
            bnd_sum[sl] = est_sum[sl] + res.bound[:, sv].sum(axis=1)
        rows = np.concatenate([order[starts[gg]:starts[gg + 1]] for gg in g.tolist()])
        set_of = np.repeat(s, np.diff(offs))
        # pairs of one group cover the same rows: fold pair by pair (np.maximum.at)
        upd_order = np.lexsort((est_max,))  # ascending: the last write of arg wins with the largest estimate
        r_sorted, e_sorted, s_sorted = rows[upd_order], est_max[upd_order], set_of[upd_order]
        better = e_sorted > post[r_sorted]
        arg[r_sorted[better]] = s_sorted[better]
        np.maximum.at(post, rows, est_max)
        np.maximum.at(post_set, rows, est_sum)
        np.maximum.at(bound, rows, bnd_max)
        np.maximum.at(set_bound, rows, bnd_sum)
    return int(pg.size)


def delta_summary(knowledge: Knowledge, P: np.ndarray, idx: np.ndarray, sa: np.ndarray, group: np.ndarray, *,
                  r: float, sensitive: np.ndarray) -> dict[str, Any]:
    """Measure 4 of §5: for each sensitive value ``x`` and attribute set ``A`` with large
    samples, ``H_A`` = mean of ``Δ_L`` over the A-groups ``L`` holding ``x``; averaged over
    ``A``, then over ``x``. ``Δ_max`` (eq. 4, with ``L``'s size and ``f_max``) is averaged the
    same way; ``violations`` is the fraction of (L, A, x) with ``Δ > Δ_max``."""
    keep = np.flatnonzero(group >= 0)
    if keep.size == 0:
        return {"avg_delta": 0.0, "avg_delta_max": 0.0, "violations": 0.0}
    order = keep[np.argsort(group[keep], kind="stable")]
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, g.size])
    gi = np.repeat(np.arange(starts.size), sizes)
    K = P.shape[1]
    counts = np.bincount(gi * K + sa[order], minlength=starts.size * K).reshape(starts.size, K)
    large_sets = [i for i, s in enumerate(knowledge.sets) if s.n_signatures > 0]
    per_x, per_x_max, viol, tot = [], [], 0, 0
    for x in np.flatnonzero(sensitive & (counts.sum(axis=0) > 0)).tolist():
        holds = counts[:, x] > 0
        H, Hm = [], []
        for s in large_sets:
            f = P[idx[s, order], x]
            fmax = np.maximum.reduceat(f, starts)
            fmin = np.minimum.reduceat(f, starts)
            d = (fmax - fmin)[holds]
            dm = delta_max(sizes[holds], r, fmax[holds])
            H.append(d.mean())
            Hm.append(np.mean(np.maximum(dm, 0.0)))
            viol += int((d > dm + 1e-12).sum())
            tot += d.size
        if H:
            per_x.append(float(np.mean(H)))
            per_x_max.append(float(np.mean(Hm)))
    return {"avg_delta": float(np.mean(per_x)) if per_x else 0.0,
            "avg_delta_max": float(np.mean(per_x_max)) if per_x_max else 0.0,
            "violations": viol / tot if tot else 0.0}


def audit_release(release: Any, knowledge: Knowledge, *, r: float, sensitive: Any = None,
                  original_sa: np.ndarray | None = None, **kwargs: Any) -> RobustnessReport:
    """Audit a :class:`~openbook.release.Release` against the knowledge.

    Bucketized: the QI-table gives each tuple's QI values and GID, the SA-table each group's
    multiset (the tuple-level SA is unknown to the adversary; the sensitive-tuple count of
    measure 3 needs ``original_sa``, the true SA code of each published row in QI-table
    order — without it the expected number of sensitive tuples per group is spread over
    the group). Generalized: the published rows' classes with the adversary's exact QI
    values taken from the original table's rows (needs ``original_qi`` in ``kwargs``)."""
    import pandas as pd

    from ..release.release import COUNT, GID

    sa_name = release.sa
    values = [str(v) for v in knowledge.sa_values]
    lookup = pd.Index(values)
    if release.kind == "bucketized":
        qi = knowledge.encode_frame(release.data)
        gid = pd.factorize(release.data[GID], sort=True)[0].astype(np.int64)
        st = release.sa_table
        st_g = pd.Index(pd.unique(release.data[GID])).get_indexer(st[GID])
        st_v = lookup.get_indexer(st[sa_name].astype(str))
        if (st_v < 0).any() or (st_g < 0).any():
            raise DataError("the SA-table holds a value or GID unknown to the knowledge / QI-table")
        # give each QI-table row of a group one value of the group's multiset (the order is
        # irrelevant: posteriors depend on the multiset only)
        uniq_gid = pd.unique(release.data[GID])
        g_of_st = pd.Index(np.sort(uniq_gid)).get_indexer(st[GID])
        cnt = st[COUNT].to_numpy(np.int64)
        o = np.lexsort((st_v, g_of_st))
        sa_sorted = np.repeat(st_v[o], cnt[o])
        row_order = np.argsort(gid, kind="stable")
        sa = np.empty(gid.size, dtype=np.int64)
        if sa_sorted.size != gid.size:
            raise DataError("SA-table counts do not match the QI-table rows")
        sa[row_order] = sa_sorted
    else:
        oq = kwargs.pop("original_qi", None)
        if oq is None:
            raise ParameterError("a generalized release needs the original QI codes (original_qi=) of its rows",
                                 parameter="original_qi")
        qi = np.asarray(oq)
        gid = release.classes()[0]
        sa = lookup.get_indexer(release.data[sa_name].astype(str)).astype(np.int64)
        if (sa < 0).any():
            raise DataError("the release holds SA values unknown to the knowledge")
    rep = audit_groups(knowledge, qi, sa, gid, r=r, sensitive=sensitive, **kwargs)
    if original_sa is not None:
        rep.sensitive = _sensitive_mask(knowledge, sensitive)[np.asarray(original_sa, dtype=np.int64)]
    elif release.kind == "bucketized":
        rep.sensitive_exact = False
    return rep
