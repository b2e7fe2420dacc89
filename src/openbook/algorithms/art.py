"""ART — Algorithm generating r-Robust Tables (paper 003 §4.2), and ``art-exact``.

ART works on the QI-based distributions ``G_A`` of every attribute set ``A`` mined from the
table itself (:mod:`openbook.inference.knowledge`, the worst-case knowledge). Step 1 makes
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
condition holds it decides ``max p(t:x) <= 1/r`` (eq. 1-3, every ``A``) for the group by
proven bounds or an exact DP (:func:`openbook.inference.threshold.certify_group`) and keeps
merging closest tuples while any exceeds ``1/r``. It exists because
Theorem 1 can be violated (see ``docs/background.md`` and
``tests/regression/test_paper003.py``): its proof assumes that the values of a group other
than ``x`` exhaust the SA domain.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any, Iterable, Iterator

import numpy as np
from numba import njit

from ..data.table import EncodedTable
from ..errors import ParameterError
from ..inference.knowledge import DEFAULT_MIN_SUPPORT, Knowledge, mine_knowledge
from ..inference.states import DEFAULT_MAX_STATES
from ..inference.theorem1 import n_o
from ..inference.threshold import certify_group
from ..models.base import PrivacyModel
from ..params import Integer, Optional, Real, Text
from ..progress import track
from ..release import Partition
from .base import Anonymizer
from .ordering import SeededGroups, seed_order as order_seeds

#: offset of the log-probability coordinates of the candidate index
LOG_EPS = 1e-4


# ---------------------------------------------------------------------------------------
# closest group (Def. 6) under Theorem 1's N'_o (eq. 5, :func:`openbook.inference.theorem1.n_o`)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _need(lo, hi, r, rr):  # pragma: no cover - compiled
    """``max_A N'_o`` of a group with per-``A`` range ``[lo_A, hi_A]`` of ``p(s_A:x)``."""
    out = 0.0
    for a in range(lo.size):
        v = n_o(hi[a] - lo[a], hi[a], r, rr)
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
            v = n_o(h - lw, h, r, rr)
            if v > need:
                need = v
        if best < 0 or need < best_need or (need == best_need and d < best_d):
            best, best_need, best_d = i, need, d
    return best


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
        self.navail0 = np.bincount(combo[cand], minlength=n_combo).astype(np.int64)
        self.navail = self.navail0.copy()
        self.P, self.idx = P, idx
        self.trees: dict[int, Any] = {}
        self.feats: dict[int, np.ndarray] = {}

    def fresh(self) -> "_Index":
        """Every candidate available again, the trees and features shared (another order of
        the seeds on the same table)."""
        out = copy.copy(self)
        out.ptr = self.start[:-1].copy()
        out.navail = self.navail0.copy()
        return out

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
        from ..models.promise import promised_l_int

        r = promised_l_int(model)
        if r is None:
            raise ParameterError(f"{name}: give r= (or an ℓ-diversity model whose ℓ is r)", parameter="r")
    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not r > 1:
        raise ParameterError(f"{name}: r={r!r} must be a number > 1", parameter="r", value=r)
    return float(r)


class ART(SeededGroups, Anonymizer):
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
    background_robust = True
    #: re-run on every world under every order of its seeds (:mod:`openbook.attacks.replay.seeded`)
    replay = "rerun"

    exact = False
    #: the exact check's DP budget and growth factor (set by :class:`ARTExact`, read when ``exact``)
    max_states: int
    growth: float
    parameter_constraints = {"r": Optional(Real(1.0, low_open=True)), "sensitive_set": Optional(Text()),
                             "max_size": Optional(Integer(minimum=1)), "min_support": Integer(minimum=1),
                             "k_neighbors": Integer(minimum=1, strict=True),
                             "max_group_size": Optional(Integer(minimum=1)), "max_suppression": Real(0.0, 1.0)}

    @classmethod
    def withholds(cls, params: dict[str, Any]) -> str:
        return "sensitive-only"

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

    def sensitive_values(self, table: EncodedTable) -> np.ndarray:
        """Which SA codes are sensitive (each seeds a group)."""
        from .ordering import sensitive_set_name

        name = sensitive_set_name(self.sensitive_set, self.model, self.name)
        mask = table.sa_domain.sensitive_mask(name)
        if mask is None or not mask.any():
            raise ParameterError(f"{self.name}: sensitive set {name!r} is empty", parameter="sensitive_set", value=name)
        if mask.all():
            raise ParameterError(f"{self.name}: every SA value is sensitive; ART merges sensitive tuples with "
                                 "non-sensitive ones", parameter="sensitive_set", value=name)
        return mask

    def seeded_runs(self, table: EncodedTable, orders: Iterable[Any]) -> Iterator[Partition]:
        """The partition of each of ``orders`` on one table, its knowledge mined once."""
        self._validate(table)
        r = _check_r(self.name, self.r, self.model)
        max_gs = self.max_group_size if self.max_group_size is not None else int(math.ceil(20 * r))
        t0 = time.perf_counter()
        sens = self.sensitive_values(table)
        kn = mine_knowledge(table, max_size=self.max_size, min_support=self.min_support)
        self.knowledge = kn
        P, idx = kn.stacked(table.qi_codes)
        sa = table.sa_codes.astype(np.int64)
        sens_row = sens[sa]
        base = _Index(table, P, idx, sens_row)
        for seed_order in orders:
            yield self._run(table, base.fresh(), P, idx, sa, sens_row, r, max_gs, kn,
                            order_seeds(self.name, np.flatnonzero(sens_row), self.seed, seed_order), t0)

    def _run(self, table: EncodedTable, index: _Index, P: np.ndarray, idx: np.ndarray, sa: np.ndarray,
             sens_row: np.ndarray, r: float, max_gs: int, kn: Knowledge, seeds: np.ndarray, t0: float) -> Partition:
        """Step 2 and the leftovers for one order of the seeds."""
        n = table.n_rows
        group = np.full(n, -1, dtype=np.int64)
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
        return Partition.from_labels(group, provenance=self.provenance() | prov)

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
    parameter_constraints = {"max_states": Integer(minimum=1, strict=True), "growth": Real(1.0)}

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
