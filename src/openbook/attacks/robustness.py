"""r-robustness (paper 003 Def. 1) audit and the Δ measures of Theorem 1 (§4.1, §5).

A release is *r-robust* when no individual ``t`` is linked to a sensitive value ``x`` with
``p(t:x) > 1/r`` under the worst-case QI-based distribution (§2). The audit computes, for
every published tuple, the exact posterior ``p(t:x)`` (eq. 1-3, via
:mod:`openbook.attacks.permanent`) for **every** attribute set ``A`` of the knowledge and
every sensitive value ``x`` of its A-group, and keeps the worst (§5: "we take the greatest
such value"). A *problematic tuple* has a worst posterior above ``1/r``; the report gives
their proportion among the *sensitive tuples* (tuples whose own value is sensitive, §5
measure 3), the posterior of the whole sensitive set (``set_posterior``) beside it, and
measure 4: the greatest probability deviation ``Δ`` (Def. 4-5) per A-group, attribute set
and sensitive value, averaged as in §5, with Theorem 1's ``Δ_max`` (eq. 4) beside it.

Groups whose value DP would need more than ``max_states`` states are computed, per attribute
set, by the exact DP over the tuples' row types (A-signatures, ``Π (n_a + 1)`` states) when
that fits, else estimated by the Metropolis sampler (its stated bound is reported);
``methods`` counts the groups per method (``exact_row_types``: every set exact that way;
``mcmc``: at least one set sampled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, prange

from ..errors import DataError, ParameterError
from ..progress import track
from .background import Knowledge
from .permanent import (
    DEFAULT_MAX_STATES,
    _multiset_posteriors,
    _row_type_posteriors,
    n_states,
    sampled_posteriors,
)


# ---------------------------------------------------------------------------------------
# Theorem 1: Δ_max (eq. 4) and the expected minimum size N'_o (eq. 5)
# ---------------------------------------------------------------------------------------
def delta_max(N: Any, r: float, f_max: Any) -> np.ndarray:
    """Theorem 1's bound ``Δ_max = (N - r) f / (f (r-1)/(1-f) + N - 1)`` (eq. 4, Def. 5),
    vectorised; ``f = 1`` gives the limit 0."""
    N = np.asarray(N, dtype=np.float64)
    f = np.asarray(f_max, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = f * (r - 1.0) / (1.0 - f) + (N - 1.0)
        out = (N - r) * f / den
    return np.where(f >= 1.0, 0.0, out)


def min_group_size(delta: Any, f_max: Any, r: float) -> np.ndarray:
    """``N'_o``: the smallest integer ``N >= r`` with ``Δ <= Δ_max(N)`` (eq. 5), or
    ``inf`` when no size suffices (``Δ >= f_max > 0``, or ``f_max = 1`` with ``Δ > 0``)."""
    d = np.asarray(delta, dtype=np.float64)
    f = np.asarray(f_max, dtype=np.float64)
    d, f = np.broadcast_arrays(d, f)
    out = np.full(d.shape, np.inf)
    rr = math.ceil(r - 1e-12)
    zero = d <= 0.0
    out[zero] = rr
    ok = (~zero) & (f > d) & (f < 1.0)
    if ok.any():
        fo, do = f[ok], d[ok]
        n0 = (fo * (r - 1.0) * do / (1.0 - fo) - do + r * fo) / (fo - do)
        n = np.maximum(np.ceil(n0 - 1e-9), rr)
        # guard against rounding: step up while the bound is not met
        for _ in range(3):
            bad = delta_max(n, r, fo) < do
            n = np.where(bad, n + 1, n)
        out[ok] = n
    return out


#: Metropolis budget per (group, attribute set) in the audit (stated bound ~0.02 at p ~ 0.05)
AUDIT_SAMPLER = {"n_chains": 2, "n_batches": 10, "batch_sweeps": 300, "n_burn": 200}
#: groups larger than this that no exact DP fits are reported *unresolved* (posterior NaN,
#: counted in ``methods["unresolved"]`` and never counted as safe): the swap chain needs
#: O(N) moves per sweep and its start assignment an N×N matrix (a 45,222-row group asked
#: for 15 GB)
AUDIT_MAX_SAMPLED_ROWS = 5000


# ---------------------------------------------------------------------------------------
# the exact audit kernel
# ---------------------------------------------------------------------------------------
@njit(cache=True, parallel=True)
def _audit_kernel(P, idx, sa, order, starts, sens, max_states, post, post_set, arg_set, method):  # pragma: no cover
    G = starts.size - 1
    n_sets = idx.shape[0]
    K_all = P.shape[1]
    for g in prange(G):
        a, b = starts[g], starts[g + 1]
        N = b - a
        local = np.full(K_all, -1, np.int64)
        vals = np.empty(N, np.int64)
        mult = np.zeros(N, np.int64)
        K = 0
        has_sens = False
        for q in range(a, b):
            v = sa[order[q]]
            if local[v] < 0:
                local[v] = K
                vals[K] = v
                K += 1
                if sens[v]:
                    has_sens = True
            mult[local[v]] += 1
        for q in range(a, b):
            post[order[q]] = 0.0
            post_set[order[q]] = 0.0
            arg_set[order[q]] = -1
        if not has_sens:
            method[g] = 0
            continue
        S = 1.0
        for k in range(K):
            S *= mult[k] + 1
        if S > max_states:
            method[g] = 2
            continue
        method[g] = 1
        W = np.empty((N, K))
        out = np.empty((N, K))
        m = mult[:K].copy()
        for s in range(n_sets):
            for j in range(N):
                row = idx[s, order[a + j]]
                for k in range(K):
                    W[j, k] = P[row, vals[k]]
            _multiset_posteriors(W, m, out)
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
    methods: dict[str, int]
    mcmc_bound: float  # largest stated error bound of a sampled posterior (0 if none)
    delta: dict[str, Any] = field(default_factory=dict)
    #: False when the tuple-level SA is unknown (a bucketized release audited without the
    #: original SA): ``sensitive`` then only has the right count per group
    sensitive_exact: bool = True
    #: tuples of groups too large for any exact method or the sampler (posterior NaN)
    unresolved: np.ndarray | None = None

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
        worst = int(np.argmax(self.posterior)) if self.posterior.size else -1
        return {
            "adversary": "background (worst-case QI-based distribution, paper 003)",
            "r": self.r, "robust": self.robust, "n_unresolved": self.n_unresolved,
            "max_posterior": float(self.posterior.max(initial=0.0)),
            "max_set_posterior": float(self.set_posterior.max(initial=0.0)),
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
    """Exact r-robustness audit of a grouping of tuples.

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
    post = np.zeros(n)
    post_set = np.zeros(n)
    arg = np.full(n, -1, dtype=np.int64)
    method = np.zeros(uniq_g.size, dtype=np.int64)
    _audit_kernel(P, idx, sa, order.astype(np.int64), starts, sens, float(max_states), post, post_set, arg, method)
    mcmc_bound = 0.0
    unresolved = np.zeros(n, dtype=bool)
    big = np.flatnonzero(method == 2)
    for gi in track(big.tolist(), "background adversary: large groups"):  # too large for the value DP
        rows = order[starts[gi]:starts[gi + 1]]
        if rows.size > AUDIT_MAX_SAMPLED_ROWS:
            unresolved[rows] = True
            method[gi] = 4
            continue
        vals, inv = np.unique(sa[rows], return_inverse=True)
        mult = np.bincount(inv)
        sv = sens[vals]
        all_exact = True
        for s in range(idx.shape[0]):
            types, tinv = np.unique(idx[s, rows], return_inverse=True)
            cnt = np.bincount(tinv).astype(np.int64)
            if n_states(cnt) <= max_states:  # exact: DP over the tuples' row types (A-signatures)
                out = np.empty((types.size, vals.size))
                _row_type_posteriors(np.ascontiguousarray(P[types][:, vals]), cnt, mult.astype(np.int64), out)
                est = out[tinv]
            else:
                res = sampled_posteriors(P[idx[s, rows]][:, vals], mult, seed=[seed, gi, s],
                                         **({**AUDIT_SAMPLER, **(sampler or {})}))
                est = res.estimate
                mcmc_bound = max(mcmc_bound, float(res.bound[:, sv].max()))
                all_exact = False
            best = est[:, sv].max(axis=1)
            tot = est[:, sv].sum(axis=1)
            upd = best > post[rows]
            arg[rows[upd]] = s
            post[rows] = np.maximum(post[rows], best)
            post_set[rows] = np.maximum(post_set[rows], tot)
        method[gi] = 3 if all_exact else 2
    post[group < 0] = np.nan
    post_set[group < 0] = np.nan
    methods = {"no_sensitive_value": int((method == 0).sum()), "exact": int((method == 1).sum()),
               "exact_row_types": int((method == 3).sum()), "mcmc": int((method == 2).sum()),
               "unresolved": int((method == 4).sum())}
    post, post_set = np.nan_to_num(post, nan=0.0), np.nan_to_num(post_set)
    post[unresolved] = np.nan
    post_set[unresolved] = np.nan
    rep = RobustnessReport(r=float(r), posterior=post, set_posterior=post_set,
                           worst_set=arg, sensitive=sens[sa] & (group >= 0), group=group,
                           set_names=knowledge.set_names(), methods=methods, mcmc_bound=mcmc_bound,
                           unresolved=unresolved)
    if with_delta:
        rep.delta = delta_summary(knowledge, P, idx, sa, group, r=r, sensitive=sens)
    return rep


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
