"""ART — Algorithm generating r-Robust Tables (paper 003 §4.2), and ``art-exact``.

ART works on the QI-based distributions ``G_A`` of every attribute set ``A`` mined from the
table itself (:mod:`openbook.attacks.background`, the worst-case knowledge). Step 1 makes
every tuple an A-group; Step 2 merges, for each sensitive value ``x``, an A-group that
violates the *QI based distribution bound condition* (Theorem 1's inequality (4) for some
``A``, or a repeated sensitive value) with its *closest* A-groups (Def. 6: smallest
``D(L, L') = Σ_A (Δ_after,A - Δ_before,A)``) until the group has at least ``N'_o``
tuples (eq. 5, maximum over all ``A``).

How this implementation reads the paper (decisions, documented):

* **Seeds and candidates.** A group is grown from each *sensitive* tuple (its value ``x``);
  the candidates merged into it are the still-single *non-sensitive* tuples (A-groups of
  Step 1 that hold no value of ``Y(L)``, as §4.2 requires). Every group therefore holds
  exactly one sensitive tuple: "at most one occurrence of each sensitive value" holds, and
  the bound condition concerns that ``x`` only. Non-sensitive values may repeat in a group
  (they are not protected by r-robustness, Def. 1, and Theorem 1 only speaks of the ``x``
  that appears once).
* **Closest group, sub-quadratically.** All global probabilities of a tuple are fixed by
  its full QI combination, so candidates are indexed once per ``x`` by their probability
  vectors ``(p(s_A : x))_A`` in a ``scipy.spatial.cKDTree`` (L1 metric). For a group with
  per-``A`` range ``[lo_A, hi_A]``, ``D`` of a candidate with vector ``f`` is
  ``Σ_A max(0, f_A - hi_A) + max(0, lo_A - f_A)``; ART evaluates ``D`` exactly on the
  ``k_neighbors`` tree neighbours of the seed's vector (doubling ``k`` when they run out)
  and adds the best one, one tuple at a time, until ``N >= N'_o``.
* **Leftovers.** Non-sensitive tuples not merged into any group are published in groups of
  ``ceil(r)`` consecutive tuples in QI order (no sensitive value: ``p(t:x) = 0``).
* **Failures.** A seed for which no size suffices (``Δ >= f_max``, or ``N'_o`` above
  ``max_group_size``) is suppressed (``group = -1``) and counted in the provenance.

``art-exact`` (:class:`ARTExact`) is r-robust by construction: after the Theorem 1
condition holds it computes the exact posterior ``p(t:x)`` (eq. 1-3, every ``A``) of the
group and keeps merging closest tuples while any exceeds ``1/r``. It exists because
Theorem 1 can be violated (see ``docs/background.md`` and
``tests/regression/test_paper003.py``): its proof assumes that the values of a group other
than ``x`` exhaust the SA domain.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numba import njit

from ..attacks.background import DEFAULT_MIN_SUPPORT, Knowledge, mine_knowledge
from ..attacks.permanent import DEFAULT_MAX_STATES, _multiset_posteriors
from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import PrivacyModel
from ..progress import track
from ..release import Partition
from .base import Anonymizer

#: offset of the log-probability coordinates of the candidate index
LOG_EPS = 1e-4


# ---------------------------------------------------------------------------------------
# Theorem 1's N'_o (eq. 5) as scalar numba kernels for the inner loop (same arithmetic as
# :func:`openbook.attacks.robustness.min_group_size`, checked against it in the tests)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _n_o(d, f, r, rr):  # pragma: no cover - compiled
    if d <= 0.0:
        return rr
    if not (f > d and f < 1.0):
        return np.inf
    n0 = (f * (r - 1.0) * d / (1.0 - f) - d + r * f) / (f - d)
    n = max(np.ceil(n0 - 1e-9), rr)
    for _ in range(3):
        if (n - r) * f / (f * (r - 1.0) / (1.0 - f) + (n - 1.0)) < d:
            n += 1.0
    return n


@njit(cache=True)
def _need(lo, hi, r, rr):  # pragma: no cover - compiled
    """``max_A N'_o`` of a group with per-``A`` range ``[lo_A, hi_A]`` of ``p(s_A:x)``."""
    out = 0.0
    for a in range(lo.size):
        v = _n_o(hi[a] - lo[a], hi[a], r, rr)
        if v > out:
            out = v
    return out


@njit(cache=True)
def _pick(F, lo, hi, r, rr):  # pragma: no cover - compiled
    """Index of the candidate (row of ``F``) giving the smallest ``max_A N'_o`` after the
    merge, ties broken by Def. 6's ``D = Σ_A`` (increase of the range)."""
    best = -1
    best_need = np.inf
    best_d = np.inf
    for i in range(F.shape[0]):
        need = 0.0
        d = 0.0
        for a in range(lo.size):
            f = F[i, a]
            h = max(hi[a], f)
            lw = min(lo[a], f)
            d += (h - hi[a]) + (lo[a] - lw)
            v = _n_o(h - lw, h, r, rr)
            if v > need:
                need = v
        if best < 0 or need < best_need or (need == best_need and d < best_d):
            best, best_need, best_d = i, need, d
    return best


# ---------------------------------------------------------------------------------------
# certifying a group: proven bounds first, an exact DP when they do not decide
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _row_types(rows_s):  # pragma: no cover - compiled
    """Distinct stacked-probability rows of one attribute set and how many tuples share
    each (tuples with the same A-signature have identical ``p(s_A : ·)``)."""
    types = np.unique(rows_s)
    cnt = np.zeros(types.size, np.int64)
    for j in range(rows_s.size):
        cnt[np.searchsorted(types, rows_s[j])] += 1
    return types, cnt


@njit(cache=True)
def _type_bounds(P, types, cnt, vals, x):  # pragma: no cover - compiled
    """Lower and upper bound of ``max_j p_A(t_j : x)`` for one attribute set, for a group in
    which ``x`` occurs exactly once and ``vals`` are the other (distinct) values. With
    ``R_j`` the multiset permanent of the other tuples and values,

        p(t_j : x) = 1 / (1 + Σ_{u≠j} (W[u,x] / W[j,x]) · R_u / R_j);

    expanding ``R_u`` along row ``j`` and ``R_j`` along row ``u`` (the same remaining
    tuples) gives ``R_u / R_j = Σ_v W[j,v] c_v / Σ_v W[u,v] c_v`` with ``c_v >= 0``, hence
    ``min_v W[j,v]/W[u,v] <= R_u/R_j <= max_v W[j,v]/W[u,v]`` (a mediant bound). The ratio
    is 1 for two tuples of the same type; the bounds are exact when ``vals`` has one value."""
    T = types.size
    lo_best = 0.0
    hi_best = 0.0
    for j in range(T):
        rj = types[j]
        wj = P[rj, x]
        if wj <= 0.0:
            continue
        acc_lo = (cnt[j] - 1) * wj  # Σ with the smallest ratios -> upper bound of p
        acc_hi = acc_lo  # Σ with the largest ratios -> lower bound of p
        for u in range(T):
            if u == j:
                continue
            ru = types[u]
            wu = P[ru, x]
            if wu <= 0.0:
                continue
            rmin = np.inf
            rmax = 0.0
            for v in vals:
                a = P[ru, v]
                b = P[rj, v]
                if a > 0.0:
                    q = b / a
                    if q < rmin:
                        rmin = q
                    if q > rmax:
                        rmax = q
                elif b > 0.0:
                    rmax = np.inf
            acc_lo += cnt[u] * wu * rmin
            acc_hi += cnt[u] * wu * rmax
        ub = wj / (wj + acc_lo) if acc_lo < np.inf else 0.0
        lb = wj / (wj + acc_hi) if acc_hi < np.inf else 0.0
        if ub > hi_best:
            hi_best = ub
        if lb > lo_best:
            lo_best = lb
    return lo_best, hi_best


@njit(cache=True)
def _row_type_posterior(P, types, cnt, colseq, x):  # pragma: no cover - compiled
    """Exact ``max_j p(t_j : x)`` for a group holding ``x`` once, by a DP over how many
    tuples of each *row type* are used (``Π (n_a + 1)`` states; cheap when the A-group's
    tuples share few A-signatures). ``x`` is assigned first, then the other values in the
    order ``colseq``; ``B[k]`` is the (normalised) weight of assigning the remaining values
    to the unused tuples: ``B[k] = Σ_a (n_a - k_a)/(N - |k|) · W[a, col] · B[k + e_a]`` with
    each column's weights scaled to maximum 1 (constants per level cancel in the ratio).
    Then ``p(t : x) = W[a,x] B[e_a] / Σ_b n_b W[b,x] B[e_b]`` for a tuple of type ``a``.
    Returns -1.0 when every world has weight 0 or the weights underflow."""
    T = types.size
    N = 0
    for a in range(T):
        N += cnt[a]
    stride = np.empty(T, np.int64)
    S = 1
    for a in range(T):
        stride[a] = S
        S *= cnt[a] + 1
    ncol = colseq.size
    scale = np.ones(ncol)
    for c in range(ncol):
        mx = 0.0
        for a in range(T):
            w = P[types[a], colseq[c]]
            if w > mx:
                mx = w
        if mx > 0.0:
            scale[c] = 1.0 / mx
    B = np.zeros(S)
    B[S - 1] = 1.0
    digits = np.empty(T, np.int64)
    for c in range(S - 2, 0, -1):
        rem = c
        lv = 0
        for a in range(T - 1, -1, -1):
            digits[a] = rem // stride[a]
            rem -= digits[a] * stride[a]
            lv += digits[a]
        col = colseq[lv - 1]
        acc = 0.0
        for a in range(T):
            free = cnt[a] - digits[a]
            if free > 0:
                acc += free * P[types[a], col] * B[c + stride[a]]
        B[c] = acc * scale[lv - 1] / (N - lv)
    Z = 0.0
    for a in range(T):
        Z += cnt[a] * P[types[a], x] * B[stride[a]]
    if not (Z > 0.0) or not np.isfinite(Z):
        return -1.0
    best = 0.0
    for a in range(T):
        p = P[types[a], x] * B[stride[a]] / Z
        if p > best:
            best = p
    return best


@njit(cache=True)
def _certify_kernel(P, idx_rows, sa_rows, x, thr, max_states):  # pragma: no cover - compiled
    """Verdict for ``max_{A,j} p_A(t_j : x) <= thr`` (1 yes, 0 no, -1 undecided) and the
    number of attribute sets decided by the bounds and by an exact DP."""
    n_sets, N = idx_rows.shape
    K = P.shape[1]
    present = np.zeros(K, np.bool_)
    for j in range(N):
        if sa_rows[j] != x:
            present[sa_rows[j]] = True
    vals = np.flatnonzero(present)
    # the other values: distinct ids, multiplicities, and the column order of the row DP
    allv = np.empty(vals.size + 1, np.int64)
    allv[:vals.size] = vals
    allv[vals.size] = x
    allv.sort()
    mult = np.zeros(allv.size, np.int64)
    colseq = np.empty(N - 1, np.int64)
    q = 0
    for j in range(N):
        mult[np.searchsorted(allv, sa_rows[j])] += 1
    for k in range(allv.size):
        if allv[k] != x:
            for _ in range(mult[k]):
                colseq[q] = allv[k]
                q += 1
    target = np.searchsorted(allv, x)
    s_col = 1.0
    for k in range(allv.size):
        s_col *= mult[k] + 1
    n_bound = 0
    n_exact = 0
    undecided = False
    W = np.empty((N, allv.size))
    out = np.empty((N, allv.size))
    for s in range(n_sets):
        types, cnt = _row_types(idx_rows[s])
        lb, ub = _type_bounds(P, types, cnt, vals, x)
        if ub <= thr:
            n_bound += 1
            continue
        if lb > thr:
            return 0, n_bound + 1, n_exact
        s_row = 1.0
        for a in range(types.size):
            s_row *= cnt[a] + 1
        cost_row = s_row * types.size
        cost_col = s_col * allv.size
        if min(s_row, s_col) > max_states:
            undecided = True
            continue
        n_exact += 1
        if cost_row <= cost_col:
            w = _row_type_posterior(P, types, cnt, colseq, x)
            if w < 0.0:
                undecided = True
                continue
        else:
            for j in range(N):
                for k in range(allv.size):
                    W[j, k] = P[idx_rows[s, j], allv[k]]
            if _multiset_posteriors(W, mult, out) == -np.inf:
                undecided = True
                continue
            w = 0.0
            for j in range(N):
                if out[j, target] > w:
                    w = out[j, target]
        if w > thr:
            return 0, n_bound, n_exact
    if undecided:
        return -1, n_bound, n_exact
    return 1, n_bound, n_exact


def certify_group(P: np.ndarray, idx: np.ndarray, sa: np.ndarray, rows: np.ndarray, x: int, r: float,
                  max_states: int = DEFAULT_MAX_STATES) -> tuple[bool | None, str]:
    """Decide ``max_{A,t} p(t:x) <= 1/r`` (every attribute set of the stacked knowledge
    ``P, idx``) for the group ``rows`` holding ``x`` exactly once (an ART group).

    Per attribute set: the proven mediant bounds of :func:`_type_bounds` first; when they
    straddle ``1/r``, the exact posterior by the cheaper of two DPs — over multiplicity
    vectors of the values (:mod:`openbook.attacks.permanent`) or over used counts of the
    tuples' row types (:func:`_row_type_posterior`) — if it fits ``max_states`` states.
    Returns ``(verdict, method)``: True (r-robust for ``x``), False (some posterior exceeds
    ``1/r``) or None (undecided: bounds straddle and both DPs are too large); ``method`` is
    ``"bound"`` when no DP was needed, else ``"exact"``. Never a sampler."""
    rows = np.asarray(rows, dtype=np.int64)
    sr = np.ascontiguousarray(sa[rows], dtype=np.int64)
    if int((sr == x).sum()) != 1:
        raise ParameterError(f"certify_group needs x={x} exactly once in the group", parameter="x", value=x)
    verdict, _, n_exact = _certify_kernel(P, np.ascontiguousarray(idx[:, rows]), sr, int(x), 1.0 / r + 1e-12,
                                          float(max_states))
    return (None if verdict < 0 else bool(verdict)), ("exact" if n_exact else "bound")


class _Index:
    """Candidates (non-sensitive tuples) grouped by full QI combination and, inside a
    combination, by SA value; per-``x`` KD-trees over the combinations' probability
    vectors. Tuples of one combination are interchangeable for every ``G_A`` (their
    ``p(s_A : ·)`` are equal for every ``A``), so ``take`` may choose *which* of them joins
    a group: one whose SA value the group already holds (the most frequent first), which
    keeps the group's multiset — and the exact DP over multiplicity vectors — small."""

    def __init__(self, table: EncodedTable, P: np.ndarray, idx: np.ndarray, sens_row: np.ndarray) -> None:
        qc = table.qi_codes.astype(np.int64)
        _, combo = np.unique(qc, axis=0, return_inverse=True)
        combo = combo.ravel()
        self.combo = combo
        n_combo = int(combo.max()) + 1 if combo.size else 0
        self.K = K = int(P.shape[1])
        self.rep = np.zeros(n_combo, dtype=np.int64)
        self.rep[combo[::-1]] = np.arange(combo.size)[::-1]
        sa = table.sa_codes.astype(np.int64)
        cand = np.flatnonzero(~sens_row)
        key = combo[cand] * K + sa[cand]
        order = cand[np.argsort(key, kind="stable")]
        self.rows = order
        self.start = np.searchsorted(np.sort(key), np.arange(n_combo * K + 1))
        self.ptr = self.start[:-1].copy()
        self.navail = np.bincount(combo[cand], minlength=n_combo).astype(np.int64)
        self.P, self.idx = P, idx
        self.trees: dict[int, Any] = {}
        self.feats: dict[int, np.ndarray] = {}

    def avail(self, u: np.ndarray) -> np.ndarray:
        return self.navail[u]

    def features(self, x: int) -> np.ndarray:
        if x not in self.feats:
            self.feats[x] = np.ascontiguousarray(self.P[self.idx[:, self.rep], x].T)
        return self.feats[x]

    def tree(self, x: int) -> Any:
        if x not in self.trees:
            from scipy.spatial import cKDTree

            self.trees[x] = cKDTree(np.log(self.features(x) + LOG_EPS))
        return self.trees[x]

    def take(self, u: int, mult: np.ndarray) -> tuple[int, int]:
        """A row of combination ``u``: of the value with the largest multiplicity ``mult``
        in the group, else of the value with the most rows left in ``u``."""
        K = self.K
        rem = self.start[u * K + 1:(u + 1) * K + 1] - self.ptr[u * K:(u + 1) * K]
        score = np.where(rem > 0, mult * (self.rows.size + 1) + rem, -1)
        v = int(np.argmax(score))
        p = u * K + v
        row = int(self.rows[self.ptr[p]])
        self.ptr[p] += 1
        self.navail[u] -= 1
        return row, v

    def give_back(self, used: list[tuple[int, int]]) -> None:
        for u, v in used:
            self.ptr[u * self.K + v] -= 1
            self.navail[u] += 1


def _check_r(name: str, r: Any, model: PrivacyModel) -> float:
    if r is None:
        from .ordering import model_l

        r = model_l(model)
        if r is None:
            raise ParameterError(f"{name}: give r= (or an ℓ-diversity model whose ℓ is r)", parameter="r")
    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not r > 1:
        raise ParameterError(f"{name}: r={r!r} must be a number > 1", parameter="r", value=r)
    return float(r)


class ART(Anonymizer):
    """ART (paper 003 §4.2): merge each sensitive tuple with its closest tuples until
    Theorem 1's bound holds for every attribute set; bucketized release.

    Parameters
    ----------
    model: verified on the output; use simple ℓ-diversity on the sensitive set with ℓ = r
        (e.g. ``simple-l=10,set=NAME``), which every ART group satisfies.
    r: the r of r-robustness (default: the model's ℓ).
    sensitive_set: name of the schema's sensitive value set (default: the model's).
    max_size: largest attribute set mined (default: all subsets for ≤ 6 QIs).
    min_support: least support of a "large sample" signature.
    k_neighbors: tree neighbours examined per closest-group search (doubled when used up).
    max_group_size: largest group before a seed is given up (default ``20 r``).
    seed: order in which sensitive tuples are processed.
    """

    name = "art"
    release_kind = "bucketized"
    minimality = False
    exact = False

    def __init__(self, *, model: PrivacyModel, r: float | None = None, sensitive_set: str | None = None,
                 max_size: int | None = None, min_support: int = DEFAULT_MIN_SUPPORT, k_neighbors: int = 64,
                 max_group_size: int | None = None, max_suppression: float = 0.0, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.max_suppression = max_suppression
        self.r = r
        self.sensitive_set = sensitive_set
        self.max_size = max_size
        self.min_support = min_support
        self.k_neighbors = k_neighbors
        self.max_group_size = max_group_size
        self.knowledge: Knowledge | None = None

    def params(self) -> dict[str, Any]:
        return {"r": self.r, "sensitive_set": self.sensitive_set, "max_size": self.max_size,
                "min_support": self.min_support, "k_neighbors": self.k_neighbors,
                "max_group_size": self.max_group_size, "max_suppression": self.max_suppression}

    def _sensitive(self, table: EncodedTable) -> np.ndarray:
        from .ordering import sensitive_set_name

        name = sensitive_set_name(self.sensitive_set, self.model, self.name)
        mask = table.sa_domain.sensitive_mask(name)
        if mask is None or not mask.any():
            raise ParameterError(f"{self.name}: sensitive set {name!r} is empty", parameter="sensitive_set", value=name)
        if mask.all():
            raise ParameterError(f"{self.name}: every SA value is sensitive; ART merges sensitive tuples with "
                                 "non-sensitive ones", parameter="sensitive_set", value=name)
        return mask

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        r = _check_r(self.name, self.r, self.model)
        if not isinstance(self.k_neighbors, int) or self.k_neighbors < 1:
            raise ParameterError(f"{self.name}: k_neighbors={self.k_neighbors!r} must be an integer >= 1",
                                 parameter="k_neighbors", value=self.k_neighbors)
        max_gs = self.max_group_size if self.max_group_size is not None else int(math.ceil(20 * r))
        t0 = time.perf_counter()
        sens = self._sensitive(table)
        kn = mine_knowledge(table, max_size=self.max_size, min_support=self.min_support)
        self.knowledge = kn
        P, idx = kn.stacked(table.qi_codes)
        sa = table.sa_codes.astype(np.int64)
        sens_row = sens[sa]
        index = _Index(table, P, idx, sens_row)
        n = table.n_rows
        group = np.full(n, -1, dtype=np.int64)
        rng = np.random.default_rng(self.seed)
        seeds = rng.permutation(np.flatnonzero(sens_row))
        next_gid = 0
        stats = {"failed": 0, "unreachable": 0, "too_large": 0, "undecided": 0, "exact_extra": 0,
                 "bound": 0, "exact": 0, "checks": 0}
        for t in track(seeds.tolist(), f"{self.name}: growing r-robust groups"):
            x = int(sa[t])
            members, used, ok = self._grow(t, x, index, P, idx, sa, r, max_gs, stats)
            if ok:
                group[members] = next_gid
                next_gid += 1
            else:
                index.give_back(used)
                stats["failed"] += 1
        # leftovers: unmerged non-sensitive tuples, in QI order, groups of ceil(r)
        left = np.flatnonzero((group < 0) & ~sens_row)
        if left.size:
            qc = table.qi_codes[left]
            left = left[np.lexsort(qc.T[::-1])]
            size = int(math.ceil(r))
            n_chunks = max(left.size // size, 1)
            lab = np.minimum(np.arange(left.size) // size, n_chunks - 1)
            group[left] = next_gid + lab
            next_gid += n_chunks
        prov = {"r": r, "n_attribute_sets": len(kn.sets), "min_support": kn.min_support,
                "n_seeds": int(seeds.size), "n_failed_seeds": stats["failed"],
                "suppressed_sensitive": stats["failed"],
                "failed_unreachable": stats["unreachable"], "failed_too_large": stats["too_large"],
                "exact": self.exact, "tuples_added_by_exact_check": stats["exact_extra"],
                "seconds": round(time.perf_counter() - t0, 3)}
        if self.exact:
            prov |= {"certified_by_bound": stats["bound"], "certified_by_exact_dp": stats["exact"],
                     "failed_undecided": stats["undecided"], "certification_checks": stats["checks"],
                     "max_states": int(self.max_states)}
        part = Partition.from_labels(group, provenance=self.provenance() | prov)
        return part

    # -- one group --------------------------------------------------------------------
    def _grow(self, t: int, x: int, index: _Index, P: np.ndarray, idx: np.ndarray, sa: np.ndarray, r: float,
              max_gs: int, stats: dict[str, int]) -> tuple[list[int], list[tuple[int, int]], bool]:
        """Grow the group of sensitive tuple ``t`` (value ``x``); ``ok`` False when it fails
        (the seed is then suppressed and the taken candidates given back)."""
        feats = index.features(x)
        q = P[idx[:, t], x]
        lo, hi = q.copy(), q.copy()
        rr = float(math.ceil(r - 1e-12))
        members = [t]
        used: list[tuple[int, int]] = []
        mult = np.zeros(index.K, dtype=np.int64)
        k = self.k_neighbors
        n_combo = feats.shape[0]
        need = float(_need(lo, hi, r, rr))
        if need == math.inf:
            stats["unreachable"] += 1
            return members, used, False
        cand = self._query(index, x, q, k)
        floor = 0.0  # art-exact: size demanded by a failed / undecided exact check
        base = 0
        undecided = False
        while True:
            if need == math.inf or need > max_gs or len(members) > max_gs:
                stats["undecided" if undecided else ("unreachable" if need == math.inf else "too_large")] += 1
                return members, used, False
            if len(members) >= need:
                if not self.exact:
                    return members, used, True
                if base == 0:
                    base = len(members)
                stats["checks"] += 1
                verdict, method = certify_group(P, idx, sa, np.asarray(members, dtype=np.int64), x, r,
                                                   max_states=self.max_states)
                if verdict:
                    stats[method] += 1
                    stats["exact_extra"] += len(members) - base
                    return members, used, True
                undecided = verdict is None
                # rejected: grow by ``growth``; undecided (bounds straddle, DPs too large):
                # grow faster, a larger group rarely becomes decidable
                factor = self.growth if not undecided else max(self.growth, 1.5)
                floor = float(max(len(members) + 1, math.ceil(factor * len(members))))
                need = floor
            av = index.avail(cand)
            while not (av > 0).any():
                if k >= n_combo:
                    stats["too_large"] += 1
                    return members, used, False
                k = min(2 * k, n_combo)
                cand = self._query(index, x, q, k)
                av = index.avail(cand)
            c = cand[av > 0]
            u = int(c[_pick(np.ascontiguousarray(feats[c]), lo, hi, r, rr)])
            row, v = index.take(u, mult)
            members.append(row)
            used.append((u, v))
            mult[v] += 1
            f = feats[u]
            np.minimum(lo, f, out=lo)
            np.maximum(hi, f, out=hi)
            need = max(floor, float(_need(lo, hi, r, rr)))

    @staticmethod
    def _query(index: _Index, x: int, q: np.ndarray, k: int) -> np.ndarray:
        tree = index.tree(x)
        k = min(k, tree.n)
        _, nb = tree.query(np.log(q + LOG_EPS), k=k, p=1)
        return np.atleast_1d(nb).astype(np.int64)


class ARTExact(ART):
    """ART whose groups also pass the check ``max p(t:x) <= 1/r`` over every attribute set
    (r-robust by construction, whatever Theorem 1 says). Each check is decided by proven
    bounds or by the exact DP (:func:`certify_group`), never by a sampler; a group the check
    rejects or cannot decide grows by ``growth`` (at least one tuple) and is checked again.

    Extra parameters
    ----------------
    max_states: DP state budget of one exact check (groups above it must be decided by the
        bounds, else they keep growing).
    growth: factor by which a rejected group grows before the next check.
    """

    name = "art-exact"
    exact = True

    def __init__(self, *, model: PrivacyModel, r: float | None = None, sensitive_set: str | None = None,
                 max_size: int | None = None, min_support: int = DEFAULT_MIN_SUPPORT, k_neighbors: int = 64,
                 max_group_size: int | None = None, max_states: int = DEFAULT_MAX_STATES, growth: float = 1.1,
                 max_suppression: float = 0.0, seed: int | None = None) -> None:
        super().__init__(model=model, r=r, sensitive_set=sensitive_set, max_size=max_size, min_support=min_support,
                         k_neighbors=k_neighbors, max_group_size=max_group_size, max_suppression=max_suppression,
                         seed=seed)
        self.max_states = max_states
        self.growth = growth

    def params(self) -> dict[str, Any]:
        return super().params() | {"max_states": self.max_states, "growth": self.growth}

    def partition(self, table: EncodedTable) -> Partition:
        if isinstance(self.max_states, bool) or not isinstance(self.max_states, (int, np.integer)) \
                or self.max_states < 1:
            raise ParameterError(f"{self.name}: max_states={self.max_states!r} must be an integer >= 1",
                                 parameter="max_states", value=self.max_states)
        if isinstance(self.growth, bool) or not isinstance(self.growth, (int, float)) or not self.growth >= 1:
            raise ParameterError(f"{self.name}: growth={self.growth!r} must be a number >= 1", parameter="growth",
                                 value=self.growth)
        return super().partition(table)
