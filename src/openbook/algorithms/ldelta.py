"""(ℓ,δ)-diversity: Mech-(ℓ,δ), Greedy-Generalize, Generalize-Ind (paper 002 §4,
Rameshwar & Tandon: Algorithms 1–3, Lemma 4.3, Theorems 4.4/4.5, Proposition 4.6,
Lemma 4.7, Corollary 4.8, Remarks 2–3).

Mech-(ℓ,δ) (Algorithm 1). A central agency that knows (or has estimated) the distribution
``P_{Q,S}`` of i.i.d. records picks ``p ∈ (0, p_ℓ]`` (``p_i`` = the i-th largest SA marginal),
fixes **dataset-independent** equivalence classes ``q̄`` with ``|{s : P(q̄, s) ≥ p}| ≥ ℓ``,
and broadcasts them with the sample size

    N = ⌈ ln(mℓ/δ) / ln(1/(1−p)) ⌉,   m = min{ |Q|, 1/(ℓp), Σ_{i≥ℓ} p_i / p }.

Every data owner waits for N records and generalizes them to those classes. One release
then violates ℓ-diversity with probability ≤ ℓ|Q̄|(1−p)^N ≤ δ (Theorem 4.4), and the linkage
of t such releases with probability ≤ tδ (Theorem 4.5) — unlike data-dependent ℓ-diverse
releases, whose linkage can fall to 1 (Proposition 3.1).

Greedy-Generalize (Algorithm 2) sweeps the QIs in a fixed total order and closes a class as
soon as it is admissible; Proposition 4.6: no admissible contiguous algorithm makes more
classes. **The printed pseudo-code has an off-by-one at the end of its loop**:

* the outer loop runs ``while i < |Q|`` — when a class closes exactly at ``q_{|Q|−1}`` the
  loop stops with ``i = |Q|`` and the last QI ``q_{|Q|}`` is put in no class;
* ``j ← j + 1`` (line 9) also runs after the inner loop *broke* at ``i = |Q| + 1`` with the
  current class still inadmissible, so the final test (line 11) inspects the new, empty
  class ``q̄_j`` instead of the unfinished ``q̄_{j−1}``: it merges ∅ into the unfinished class
  and returns it as the last class although ``|S_{q̄}| < ℓ``.

Here every QI is visited (``for i in 1..|Q|``) and the unfinished tail, if any, is merged
into the last closed class (merging only adds mass, so it stays admissible); if no class
ever closes, ``p > p_ℓ`` and the request is infeasible.

Generalize-Ind (Algorithm 3) cuts the order into blocks of ``T = |Q| / ⌊θ p_ℓ / p⌋`` QIs
(``θ = |Q| min_q P_Q(q)``) for independent ``P_{Q,S} = P_Q P_S``. The paper treats ``T`` as an
integer; we use blocks of ``⌈T⌉`` QIs with the remainder joined to the last block, so every
block keeps the guarantee of Lemma 4.7. For uniform ``P_Q``, Corollary 4.8 states that the
optimum is ``⌊p_ℓ/p⌋ = ⌊1/β⌋`` classes; that holds when ``β|Q|`` is an integer (blocks of
``β|Q|`` QIs tile Q). In general the largest admissible number is ``⌊|Q| / ⌈β|Q|⌉⌋`` (each
class needs at least ``β|Q|`` QIs), which can be smaller — e.g. ``|Q| = 10, β = 0.15``: 5, not
6. Greedy-Generalize attains it; the tests check both against brute force.

Probabilities are compared with a relative tolerance ``rtol = 1e-9`` (``P(q̄,s) ≥ p(1−rtol)``)
so that sums of equal floating-point masses reach their exact threshold.

An estimated distribution (:func:`estimate_distribution`) carries an error bound ``ε`` in
total variation; every ``P(q̄, s)`` is then off by at most ``ε``, so the guarantee holds with
``p − ε`` in place of ``p``: :class:`LDeltaPlan` reports that robust sample size too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from numba import njit

from ..data.table import EncodedTable
from ..errors import InfeasibleError
from ..params import Integer, check_choice, check_real, fail
from ..release import Partition, Release, build_release

RTOL = 1e-9
#: the owner named in parameter errors
OWNER = "mech-l-delta"


# ---------------------------------------------------------------------------------------
# the distribution and its derived quantities
# ---------------------------------------------------------------------------------------
def _as_distribution(P: Any) -> np.ndarray:
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.size == 0:
        raise fail(OWNER, "P_{Q,S}", P.shape, "be a non-empty (|Q|, |S|) matrix")
    if (P < 0).any() or not np.isfinite(P).all():
        raise fail(OWNER, "P_{Q,S}", "negative or non-finite entries", "hold probabilities")
    total = P.sum()
    if not abs(total - 1.0) <= 1e-6:
        raise fail(OWNER, "P_{Q,S}", f"a sum of {total:.6g}", "sum to 1")
    return P / total


def sorted_marginal(P: np.ndarray) -> np.ndarray:
    """``p_1 ≥ p_2 ≥ … ≥ p_|S|``: the SA marginal in decreasing order."""
    return np.sort(np.asarray(P, dtype=np.float64).sum(axis=0))[::-1]


def _check_l(l: int, n_s: int) -> int:
    return Integer(minimum=1, maximum=n_s, strict=True).check(OWNER, "l", l)


def _check_delta(delta: float) -> float:
    return check_real("delta", delta, model=OWNER, low=0.0, high=1.0, low_open=True, high_open=True)


def p_l(P: np.ndarray, l: int) -> float:
    """``p_ℓ``, the ℓ-th largest SA marginal (the largest admissible ``p``)."""
    ps = sorted_marginal(P)
    return float(ps[_check_l(l, len(ps)) - 1])


def m_bound(p_sorted: np.ndarray, n_q: int, l: int, p: float) -> float:
    """``m = min{|Q|, 1/(ℓp), Σ_{i≥ℓ} p_i / p}`` (Lemma 4.3: ``|Q̄| ≤ m``)."""
    return float(min(n_q, 1.0 / (l * p), float(np.sum(p_sorted[l - 1:])) / p))


def sample_size(*, l: int, delta: float, p: float, n_q: int,
                p_sorted: Sequence[float] | np.ndarray) -> tuple[int, float]:
    """``(N, m)`` of Algorithm 1, step 4: ``N = ⌈ln(mℓ/δ) / ln(1/(1−p))⌉``."""
    p_sorted = np.asarray(p_sorted, dtype=np.float64)
    l = _check_l(l, len(p_sorted))
    delta = _check_delta(delta)
    p = check_real("p", p, model=OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    m = m_bound(p_sorted, n_q, l, p)
    x = math.log(m * l / delta) / -math.log1p(-p)
    return max(1, int(math.ceil(x - 1e-9))), m


# ---------------------------------------------------------------------------------------
# equivalence classes
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _greedy_kernel(P, l, thr):  # pragma: no cover - numba
    nq, ns = P.shape
    cls = np.empty(nq, dtype=np.int64)
    acc = np.zeros(ns)
    cnt = 0
    j = 0
    open_from = 0
    for i in range(nq):
        cls[i] = j
        for s in range(ns):
            old = acc[s]
            acc[s] = old + P[i, s]
            if old < thr[s] and acc[s] >= thr[s]:
                cnt += 1
        if cnt >= l:
            j += 1
            cnt = 0
            open_from = i + 1
            for s in range(ns):
                acc[s] = 0.0
    if open_from < nq:  # an unfinished tail: merge it into the last closed class
        if j == 0:
            return cls, 0
        for i in range(open_from, nq):
            cls[i] = j - 1
    return cls, j


def _order(order: Any, n_q: int) -> np.ndarray | None:
    if order is None:
        return None
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (n_q,) or not np.array_equal(np.sort(order), np.arange(n_q)):
        raise fail(OWNER, "order", order.tolist(), f"be a permutation of the QI indices 0..{n_q - 1}")
    return order


def greedy_generalize(P: Any, *, l: int, p: float, order: Any = None, threshold: Any = None) -> tuple[np.ndarray, int]:
    """Greedy-Generalize (Algorithm 2, end-of-loop fixed): class id of every QI (in QI-index
    order) and the number of classes R. ``order`` is the total order (a permutation of QI
    indices; default 0..|Q|−1). ``threshold`` overrides the per-value threshold ``p`` (used
    with count matrices for data-dependent comparisons). O(|Q||S|)."""
    P = np.asarray(P, dtype=np.float64)
    n_q, n_s = P.shape
    l = _check_l(l, n_s)
    order = _order(order, n_q)
    Pq = P if order is None else P[order]
    thr = np.full(n_s, p * (1 - RTOL)) if threshold is None else np.broadcast_to(np.asarray(threshold, dtype=np.float64), (n_s,)).copy()
    cls, R = _greedy_kernel(np.ascontiguousarray(Pq), l, thr)
    if R == 0:
        raise InfeasibleError(f"no admissible class even with all {n_q} QIs merged: p = {p:.6g} exceeds p_ℓ for l = {l}",
                              model=f"(l={l}, p={p:.6g})")
    if order is not None:
        out = np.empty(n_q, dtype=np.int64)
        out[order] = cls
        cls = out
    return cls, int(R)


def generalize_ind(P: Any, *, l: int, p: float, order: Any = None) -> tuple[np.ndarray, int]:
    """Generalize-Ind (Algorithm 3) for ``P_{Q,S} = P_Q P_S``: equal blocks of ``⌈T⌉`` QIs,
    ``T = |Q| / ⌊θ p_ℓ / p⌋``, the remainder joined to the last block. Raises
    :class:`InfeasibleError` if a block is not admissible (``P`` is not independent)."""
    P = np.asarray(P, dtype=np.float64)
    n_q, n_s = P.shape
    l = _check_l(l, n_s)
    order = _order(order, n_q)
    pl = p_l(P, l)
    theta = n_q * float(P.sum(axis=1).min())
    k0 = int(math.floor(theta * pl / p * (1 + RTOL)))
    if k0 < 1:
        raise InfeasibleError(f"Generalize-Ind: ⌊θ p_ℓ / p⌋ = 0 (θ = {theta:.4g}, p_ℓ = {pl:.4g}, p = {p:.4g})",
                              model=f"(l={l}, p={p:.6g})")
    T = n_q / k0
    t_int = int(math.ceil(T * (1 - RTOL)))
    R = max(1, n_q // t_int)
    pos_cls = np.minimum(np.arange(n_q) // t_int, R - 1)
    cls = pos_cls if order is None else np.empty(n_q, dtype=np.int64)
    if order is not None:
        cls[order] = pos_cls
    cp = class_probabilities(P, cls, R)
    bad = (cp >= p * (1 - RTOL)).sum(axis=1) < l
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InfeasibleError(f"Generalize-Ind: block {k} has only {int((cp[k] >= p * (1 - RTOL)).sum())} SA values with "
                              f"P(q̄,s) ≥ p < l = {l}; Lemma 4.7 needs independent P_{{Q,S}} = P_Q·P_S",
                              model=f"(l={l}, p={p:.6g})")
    return cls.astype(np.int64), int(R)


def class_probabilities(P: np.ndarray, cls: np.ndarray, n_classes: int) -> np.ndarray:
    """``P(q̄, s) = Σ_{q ∈ q̄} P(q, s)`` as an ``(n_classes, |S|)`` matrix."""
    P = np.asarray(P, dtype=np.float64)
    out = np.empty((n_classes, P.shape[1]))
    for s in range(P.shape[1]):
        out[:, s] = np.bincount(cls, weights=P[:, s], minlength=n_classes)
    return out


# ---------------------------------------------------------------------------------------
# Mech-(ℓ,δ)
# ---------------------------------------------------------------------------------------
@dataclass
class LDeltaPlan:
    """What the central agency broadcasts (Algorithm 1, step 4): the fixed classes and N."""

    l: int
    delta: float
    p: float
    p_l: float
    classes: np.ndarray  # class id of each QI index
    n_classes: int
    N: int
    m: float
    method: str
    n_q: int
    n_s: int
    class_probs: np.ndarray
    estimation: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def beta(self) -> float:
        return self.p / self.p_l

    @property
    def violation_bound(self) -> float:
        """``ℓ |Q̄| (1−p)^N`` ≤ ``mℓ(1−p)^N`` ≤ δ: the union bound of Theorem 4.4."""
        return float(self.l * self.n_classes * math.exp(self.N * math.log1p(-self.p)))

    def class_of(self, qi_index: np.ndarray) -> np.ndarray:
        qi_index = np.asarray(qi_index, dtype=np.int64)
        if qi_index.size and (qi_index.min() < 0 or qi_index.max() >= self.n_q):
            raise fail(OWNER, "a QI index", int(qi_index.max() if qi_index.max() >= self.n_q else qi_index.min()),
                       f"be in 0..{self.n_q - 1}")
        return self.classes[qi_index]

    def partition(self, table: EncodedTable) -> Partition:
        """The fixed classes applied to a sample (data-independent; no suppression)."""
        idx, n_q = qi_index(table)
        if n_q != self.n_q:
            raise fail(OWNER, "the table's QI space", f"{n_q} points", f"have the plan's {self.n_q} points")
        part = Partition.from_labels(self.class_of(idx), provenance=self.provenance())
        return part

    def release(self, table: EncodedTable, *, kind: str = "generalized", on_violation: str = "raise") -> Release:
        """Release one batch. With ``on_violation="raise"`` a sample that happens to violate
        ℓ-diversity (probability ≤ δ) raises VerificationError; ``"release"`` publishes it
        anyway, as the paper's mechanism does, recording the check in the metadata."""
        from ..models.registry import make_model

        if table.n_rows < self.N:
            raise fail(OWNER, "the batch", f"{table.n_rows} records", f"hold N = {self.N} records (Mech-(ℓ,δ) waits)")
        check_choice("on_violation", on_violation, ("raise", "release"), model=OWNER)
        model = make_model(f"l={self.l}")
        part = self.partition(table)
        if on_violation == "raise":
            return build_release(table, part, model=model, kind=kind)
        rel = build_release(table, part, model=None, kind=kind)
        rel.meta["model"] = model.to_dict()
        rel.meta["check"] = rel.check(model).to_dict()
        return rel

    def provenance(self) -> dict[str, Any]:
        return {"algorithm": "mech-l-delta", "params": {"l": self.l, "delta": self.delta, "p": self.p,
                                                       "method": self.method, "N": self.N, "n_classes": self.n_classes}}

    def summary(self) -> dict[str, Any]:
        out = {"l": self.l, "delta": self.delta, "p": self.p, "p_l": self.p_l, "beta": self.beta,
               "method": self.method, "n_classes": self.n_classes, "N": self.N, "m": self.m,
               "violation_bound": self.violation_bound, "n_q": self.n_q, "n_s": self.n_s}
        if self.estimation is not None:
            out["estimation"] = dict(self.estimation)
        return out


def mech_l_delta(P: Any, *, l: int, delta: float, p: float | None = None, beta: float | None = None,
                 method: str = "greedy", order: Any = None, estimation: dict[str, Any] | None = None) -> LDeltaPlan:
    """Algorithm 1: classes (Greedy-Generalize or Generalize-Ind) and sample size N.

    Give ``p ∈ (0, p_ℓ]`` or ``beta ∈ (0, 1]`` (``p = β p_ℓ``, the parametrisation of §5).
    """
    P = _as_distribution(P)
    n_q, n_s = P.shape
    l = _check_l(l, n_s)
    delta = _check_delta(delta)
    ps = sorted_marginal(P)
    pl = float(ps[l - 1])
    if (p is None) == (beta is None):
        raise fail(OWNER, "p and beta", (p, beta), "be given one of the two")
    if beta is not None:
        p = check_real("beta", beta, model=OWNER, low=0.0, high=1.0, low_open=True) * pl
    assert p is not None
    if not 0.0 < p <= pl * (1 + RTOL):
        raise fail(OWNER, "p", p, f"be in (0, p_ℓ = {pl:.6g}]")
    if method == "greedy":
        cls, R = greedy_generalize(P, l=l, p=p, order=order)
    elif method in ("ind", "generalize-ind"):
        cls, R = generalize_ind(P, l=l, p=p, order=order)
        method = "ind"
    else:
        check_choice("method", method, ("greedy", "ind", "generalize-ind"), model=OWNER)
        raise AssertionError("unreachable")
    N, m = sample_size(l=l, delta=delta, p=p, n_q=n_q, p_sorted=ps)
    plan = LDeltaPlan(l, delta, float(p), pl, cls, R, N, m, method, n_q, n_s, class_probabilities(P, cls, R), estimation)
    if estimation is not None:
        eps = float(estimation.get("tv_bound", 0.0))
        p_eff = p - eps
        plan.estimation = dict(estimation, p_effective=p_eff,
                               N_robust=(sample_size(l=l, delta=delta, p=p_eff, n_q=n_q, p_sorted=ps)[0] if p_eff > 0 else None))
    return plan


def sweep_p(P: Any, *, l: int, delta: float, betas: Sequence[float] | None = None, method: str = "greedy",
            order: Any = None) -> pd.DataFrame:
    """Remark 2: utility (number of classes) against sample size N as ``p = β p_ℓ`` varies."""
    betas = list(betas) if betas is not None else [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01]
    rows = []
    for b in betas:
        plan = mech_l_delta(P, l=l, delta=delta, beta=b, method=method, order=order)
        rows.append({"beta": b, "p": plan.p, "n_classes": plan.n_classes, "N": plan.N, "m": plan.m})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# the distribution from historical data
# ---------------------------------------------------------------------------------------
def qi_index(table: EncodedTable) -> tuple[np.ndarray, int]:
    """Index of each row's QI tuple in the lexicographic order of the QI columns (in schema
    order, each in code order) and ``|Q|`` = the product of the cardinalities."""
    idx = np.zeros(table.n_rows, dtype=np.int64)
    n_q = 1
    for name in table.qi_names:
        col = table.columns[name]
        idx = idx * col.n_values + col.codes
        n_q *= col.n_values
    return idx, int(n_q)


def estimate_distribution(qi_idx: np.ndarray, sa_codes: np.ndarray, *, n_q: int, n_s: int,
                          confidence: float = 0.95) -> tuple[np.ndarray, dict[str, Any]]:
    """Empirical ``P̂_{Q,S}`` of historical records and its estimation error in total
    variation: ``E[TV] ≤ ½√(K/n)`` (K = |Q||S| cells) and, with probability ``confidence``,
    ``TV ≤ ½√(K/n) + √(ln(1/(1−confidence))/(2n))`` (McDiarmid)."""
    qi_idx = np.asarray(qi_idx, dtype=np.int64)
    sa_codes = np.asarray(sa_codes, dtype=np.int64)
    n = len(qi_idx)
    if n == 0 or len(sa_codes) != n:
        raise fail(OWNER, "the historical data", f"{n} QI indices, {len(sa_codes)} SA codes",
                   "be non-empty, one SA code per QI index")
    check_real("confidence", confidence, model=OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
    counts = np.bincount(qi_idx * n_s + sa_codes, minlength=n_q * n_s).reshape(n_q, n_s)
    P = counts / n
    K = n_q * n_s
    mean_bound = 0.5 * math.sqrt(K / n)
    tv = mean_bound + math.sqrt(math.log(1 / (1 - confidence)) / (2 * n))
    return P, {"n_records": n, "cells": K, "tv_expected_bound": mean_bound, "tv_bound": tv, "confidence": confidence}


# ---------------------------------------------------------------------------------------
# validation by simulation (Theorems 4.4 and 4.5)
# ---------------------------------------------------------------------------------------
def simulate_violations(plan: LDeltaPlan, P: Any, *, t: int = 1, n_sims: int = 1000, N: int | None = None,
                        seed: int | np.random.Generator = 0) -> dict[str, float]:
    """Monte-Carlo probability that one release of ``N`` i.i.d. records (default ``plan.N``)
    generalized to the plan's classes violates ℓ-diversity, and that the linkage of ``t``
    independent such releases does (some class nonempty in all t whose intersected support
    has fewer than ℓ values). Returns the rates and their standard errors."""
    rng = np.random.default_rng(seed)
    P = _as_distribution(P)
    cp = class_probabilities(P, plan.classes, plan.n_classes)
    K, S = cp.shape
    N = plan.N if N is None else int(N)
    flat = cp.ravel() / cp.sum()
    draws = rng.multinomial(N, flat, size=(n_sims, t)).reshape(n_sims, t, K, S)
    present: np.ndarray = draws > 0
    nonempty = np.asarray(present.any(axis=3))  # (sims, t, K)
    single_bad = (nonempty & (present.sum(axis=3) < plan.l)).any(axis=2)  # (sims, t)
    inter = present.all(axis=1).sum(axis=2)  # (sims, K)
    linked_bad = (nonempty.all(axis=1) & (inter < plan.l)).any(axis=1)
    r1 = float(single_bad[:, 0].mean())
    rt = float(linked_bad.mean())
    return {"n_sims": n_sims, "N": N, "t": t,
            "single_rate": r1, "single_se": math.sqrt(max(r1 * (1 - r1), 1e-300) / n_sims),
            "any_release_rate": float(single_bad.any(axis=1).mean()),
            "linked_rate": rt, "linked_se": math.sqrt(max(rt * (1 - rt), 1e-300) / n_sims),
            "bound_single": plan.violation_bound, "delta": plan.delta, "bound_linked": t * plan.delta}


def simulate_data_dependent(P: Any, *, l: int, N: int, t: int = 2, n_sims: int = 50,
                            seed: int | np.random.Generator = 0) -> dict[str, float]:
    """The contrast of §3 / §5: each of ``t`` samples of ``N`` records gets its *own*
    ℓ-diverse contiguous generalization (Greedy-Generalize run on the sample's counts — a
    data-dependent, always exactly ℓ-diverse release, like Mondrian on each sample), and the
    t releases are linked. Returns the mean fraction of QI points (weighted by ``P_Q``) whose
    post-linkage diversity falls below ℓ or to 1, and how often some point falls below ℓ."""
    rng = np.random.default_rng(seed)
    P = _as_distribution(P)
    n_q, n_s = P.shape
    pq = P.sum(axis=1)
    frac_below, frac_one, any_below = [], [], []
    for _ in range(n_sims):
        supports = np.ones((n_q, n_s), dtype=bool)
        for _j in range(t):
            counts = rng.multinomial(N, P.ravel()).reshape(n_q, n_s).astype(np.float64)
            cls, R = greedy_generalize(counts, l=l, p=1.0, threshold=0.5)
            present = class_probabilities(counts, cls, R) > 0
            supports &= present[cls]
        div = supports.sum(axis=1)
        frac_below.append(float(pq[div < l].sum()))
        frac_one.append(float(pq[div <= 1].sum()))
        any_below.append(bool((div < l).any()))
    return {"n_sims": n_sims, "N": N, "t": t, "l": l,
            "mean_fraction_below_l": float(np.mean(frac_below)), "mean_fraction_at_most_1": float(np.mean(frac_one)),
            "prob_some_below_l": float(np.mean(any_below))}
