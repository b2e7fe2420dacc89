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
from ..attacks.permanent import _multiset_posteriors
from ..attacks.robustness import min_group_size
from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import PrivacyModel
from ..release import Partition
from .base import Anonymizer, register


@njit(cache=True)
def _worst_posterior(P, idx_rows, vals, mult, target):  # pragma: no cover - compiled
    """Largest ``p(t_j : vals[target])`` over all attribute sets for one group whose rows
    have stacked-probability indices ``idx_rows`` (n_sets, N) and local value ids."""
    n_sets, N = idx_rows.shape
    K = mult.size
    W = np.empty((N, K))
    out = np.empty((N, K))
    best = 0.0
    for s in range(n_sets):
        for j in range(N):
            for k in range(K):
                W[j, k] = P[idx_rows[s, j], vals[k]]
        _multiset_posteriors(W, mult, out)
        for j in range(N):
            if out[j, target] > best:
                best = out[j, target]
    return best


def group_worst_posterior(P: np.ndarray, idx: np.ndarray, sa: np.ndarray, rows: np.ndarray, x: int) -> float:
    """Exact worst posterior of value ``x`` in the group ``rows`` over every attribute set."""
    vals, inv = np.unique(sa[rows], return_inverse=True)
    mult = np.bincount(inv).astype(np.int64)
    target = int(np.searchsorted(vals, x))
    return float(_worst_posterior(P, np.ascontiguousarray(idx[:, rows]), vals.astype(np.int64), mult, target))


class _Index:
    """Candidates (non-sensitive tuples) grouped by full QI combination, with per-``x``
    KD-trees over their probability vectors."""

    def __init__(self, table: EncodedTable, P: np.ndarray, idx: np.ndarray, sens_row: np.ndarray) -> None:
        qc = table.qi_codes.astype(np.int64)
        _, combo = np.unique(qc, axis=0, return_inverse=True)
        combo = combo.ravel()
        self.combo = combo
        n_combo = int(combo.max()) + 1 if combo.size else 0
        self.rep = np.zeros(n_combo, dtype=np.int64)
        self.rep[combo[::-1]] = np.arange(combo.size)[::-1]
        cand = np.flatnonzero(~sens_row)
        order = cand[np.argsort(combo[cand], kind="stable")]
        self.rows = order
        self.start = np.searchsorted(combo[order], np.arange(n_combo + 1))
        self.ptr = self.start[:-1].copy()
        self.P, self.idx = P, idx
        self.trees: dict[int, Any] = {}
        self.feats: dict[int, np.ndarray] = {}

    def avail(self, u: np.ndarray) -> np.ndarray:
        return self.start[1:][u] - self.ptr[u]

    def features(self, x: int) -> np.ndarray:
        if x not in self.feats:
            self.feats[x] = np.ascontiguousarray(self.P[self.idx[:, self.rep], x].T)
        return self.feats[x]

    def tree(self, x: int) -> Any:
        if x not in self.trees:
            from scipy.spatial import cKDTree

            self.trees[x] = cKDTree(self.features(x))
        return self.trees[x]

    def take(self, u: int) -> int:
        row = int(self.rows[self.ptr[u]])
        self.ptr[u] += 1
        return row

    def give_back(self, us: list[int]) -> None:
        for u in us:
            self.ptr[u] -= 1


def _check_r(name: str, r: Any, model: PrivacyModel) -> float:
    if r is None:
        from .ordering import model_l

        r = model_l(model)
        if r is None:
            raise ParameterError(f"{name}: give r= (or an ℓ-diversity model whose ℓ is r)", parameter="r")
    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not r > 1:
        raise ParameterError(f"{name}: r={r!r} must be a number > 1", parameter="r", value=r)
    return float(r)


@register
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
                 max_group_size: int | None = None, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
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
                "max_group_size": self.max_group_size}

    def _sensitive(self, table: EncodedTable) -> np.ndarray:
        name = self.sensitive_set if self.sensitive_set is not None else getattr(self.model, "sensitive_set", None)
        if name is None:
            raise ParameterError(f"{self.name}: needs a sensitive value set (sensitive_set= or the model's set=)",
                                 parameter="sensitive_set")
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
        failed = 0
        exact_extra = 0
        for t in seeds.tolist():
            x = int(sa[t])
            members, used, ok, grew = self._grow(t, x, index, P, idx, sa, r, max_gs)
            if ok:
                group[members] = next_gid
                next_gid += 1
                exact_extra += grew
            else:
                index.give_back(used)
                failed += 1
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
                "n_seeds": int(seeds.size), "n_failed_seeds": failed, "exact": self.exact,
                "tuples_added_by_exact_check": exact_extra, "seconds": round(time.perf_counter() - t0, 3)}
        part = Partition.from_labels(group, provenance=self.provenance() | prov)
        return part

    # -- one group --------------------------------------------------------------------
    def _grow(self, t: int, x: int, index: _Index, P: np.ndarray, idx: np.ndarray, sa: np.ndarray, r: float,
              max_gs: int) -> tuple[list[int], list[int], bool, int]:
        feats = index.features(x)
        q = P[idx[:, t], x]
        lo, hi = q.copy(), q.copy()
        members = [t]
        used: list[int] = []
        k = self.k_neighbors
        n_combo = feats.shape[0]
        cand = self._query(index, x, q, k)
        need = float(min_group_size(hi - lo, hi, r).max())
        grew = 0
        floor = 0.0  # art-exact: size demanded by a failed exact check
        theorem_ok = False
        base = 1
        while True:
            if need == math.inf or need > max_gs or len(members) > max_gs:
                return members, used, False, grew
            if len(members) >= need:
                if not self.exact:
                    return members, used, True, grew
                if not theorem_ok:
                    theorem_ok = True
                    base = len(members)
                rows = np.asarray(members, dtype=np.int64)
                if group_worst_posterior(P, idx, sa, rows, x) <= 1.0 / r + 1e-12:
                    return members, used, True, len(members) - base
                floor = len(members) + 1.0
                need = floor
            av = index.avail(cand)
            while not (av > 0).any():
                if k >= n_combo:
                    return members, used, False, grew
                k = min(2 * k, n_combo)
                cand = self._query(index, x, q, k)
                av = index.avail(cand)
            c = cand[av > 0]
            F = feats[c]
            D = (np.maximum(F - hi, 0.0) + np.maximum(lo - F, 0.0)).sum(axis=1)
            u = int(c[int(np.argmin(D))])
            members.append(index.take(u))
            used.append(u)
            f = feats[u]
            np.minimum(lo, f, out=lo)
            np.maximum(hi, f, out=hi)
            need = max(floor, float(min_group_size(hi - lo, hi, r).max()))

    @staticmethod
    def _query(index: _Index, x: int, q: np.ndarray, k: int) -> np.ndarray:
        tree = index.tree(x)
        k = min(k, tree.n)
        _, nb = tree.query(q, k=k, p=1)
        return np.atleast_1d(nb).astype(np.int64)


@register
class ARTExact(ART):
    """ART whose groups also pass the exact posterior check ``max p(t:x) <= 1/r`` over
    every attribute set (r-robust by construction, whatever Theorem 1 says)."""

    name = "art-exact"
    exact = True
