"""Absorbing necessary conditions of privacy models — what full-domain search may prune on
when the model itself is not absorbing (Kohlmayer et al., Flash, 2012, §4: ARX's "minimal
group size" of ℓ-diversity; Li, Li, Venkatasubramanian, ICDE 2007, §4 for the EMD bounds).

A *necessary condition* ``A`` of a model ``M`` is a predicate on one class such that every
class that satisfies ``M`` satisfies ``A``. When ``A`` is also *absorbing* (a class that
satisfies it still does after any rows join it), its failing classes give a lower bound
on the rows ``M`` suppresses that is valid at every finer node: a class of a coarser node
that fails ``A`` splits, at a finer node, into classes that all fail ``A`` (one that held
would absorb the rest and hold), hence fail ``M``. So a node whose ``A``-failing rows
exceed the budget fails ``M``, and so does every node below it — predictive tagging
downwards for models that have none of their own (entropy and recursive ℓ, (α,k),
ℓ-eligibility, t-closeness).

:class:`ClassCondition` is the conjunction of three absorbing predicates, each only
growing when rows join a class: the class size ``N >= k``, the number of distinct SA
values ``>= l``, and, for each reference distribution ``q`` given, the mass under ``q`` of
the SA values present ``>= mass``. :func:`necessary_condition` derives one per model
(proofs in ``docs/algorithms.md``, full-domain search; checked exhaustively over small
count vectors in ``tests/unit/algorithms/test_lattice_bounds.py``):

* k-anonymity ``k``; distinct ℓ ``l``; (k,e) ``l = k`` (absorbing themselves);
* entropy ℓ: ``log(distinct) >= H >= log ℓ`` gives ``distinct >= ℓ``;
* recursive (c,ℓ): fewer than ℓ distinct values leave the tail sum 0 and ``r_1 < 0`` fails;
* ℓ-eligibility and (α,k) with every SA value sensitive (``each``): ``N <= distinct · max``
  and ``max <= N/ℓ`` (``α N``) give ``distinct >= ℓ`` (``1/α``); (α,k) also gives ``N >= k``;
* t-closeness: with ``δ`` the smallest ground distance between two SA values (1 equal,
  ``1/(m-1)`` ordered, ``1/H`` hierarchical), ``EMD >= δ · TV`` and ``TV = 1 - Σ_s
  min(p_s, q_s) >= 1 - q(support)``, so ``D <= t`` needs ``q(support) >= 1 - t/δ`` and a
  size ``N`` at which some count vector reaches ``Σ_s min(n_s, N q_s) >= N (1 - t/δ)``;
* a conjunction: the conjunction of its members' conditions.

Every threshold is rounded towards the weaker condition (a margin far above float
rounding), so the condition stays necessary whatever the models' tolerances.

:func:`projection_fails` applies such a predicate to each QI alone (Incognito's subset
property, LeFevre et al., SIGMOD 2005): the nodes whose failing rows already exceed the
budget when every other QI is ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..models.alpha_k import AlphaKAnonymity
from ..models.base import PrivacyModel, SADomain
from ..models.composite import AllOf
from ..models.eligibility import LEligibility
from ..models.k_anonymity import KAnonymity
from ..models.k_e_anonymity import KEAnonymity
from ..models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from ..models.t_closeness import TCloseness, tree_layout

#: relative slack that keeps a derived threshold on the weak side of the model's own test
#: (the models compare floats with a tolerance of 1e-12)
_SLACK = 1e-9
#: the largest class size the t-closeness size bound scans (beyond it the bound is this)
_MAX_SCAN = 1 << 20


@dataclass
class ClassCondition:
    """An absorbing predicate on a class: ``size >= k``, ``distinct SA values >= l`` and,
    for each ``(q, mass)`` in ``masses``, ``Σ_{s present} q_s >= mass``."""

    k: int = 1
    l: int = 1  # noqa: E741 - the papers' name
    masses: list[tuple[np.ndarray, float]] = field(default_factory=list)

    @property
    def trivial(self) -> bool:
        """Does every non-empty class satisfy it?"""
        return self.k <= 1 and self.l <= 1 and not self.masses

    @property
    def size_only(self) -> bool:
        """Does it read only class sizes (no SA counts needed)?"""
        return self.l <= 1 and not self.masses

    def holds(self, sizes: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
        """Per class: ``sizes`` (n_classes,), ``counts`` (n_classes, n_sa) or ``None`` when
        :attr:`size_only`."""
        ok = np.asarray(sizes) >= max(self.k, 1)
        if self.l > 1 or self.masses:
            present = np.asarray(counts) > 0
            if self.l > 1:
                ok &= present.sum(axis=1) >= self.l
            for q, mass in self.masses:
                ok &= np.multiply(present, q).sum(axis=1) >= mass  # no BLAS
        return ok

    def conjoin(self, other: "ClassCondition | None") -> "ClassCondition":
        if other is None:
            return self
        return ClassCondition(max(self.k, other.k), max(self.l, other.l), self.masses + other.masses)


def _at_least(x: float) -> int:
    """The least integer a quantity known to be >= ``x`` (up to float rounding) can be."""
    return max(1, math.ceil(x * (1.0 - _SLACK) - _SLACK))


def necessary_condition(model: PrivacyModel, domain: SADomain) -> ClassCondition | None:
    """An absorbing condition every class satisfying ``model`` satisfies, or ``None`` when
    openbook knows none for this model (see the module docstring)."""
    if isinstance(model, AllOf):
        out: ClassCondition | None = None
        for m in model.models:
            c = necessary_condition(m, domain)
            out = c if out is None else out.conjoin(c)
        return out
    if isinstance(model, KAnonymity):
        return ClassCondition(k=int(model.k))
    if isinstance(model, (DistinctLDiversity, RecursiveCLDiversity)):
        return ClassCondition(l=int(model.l))
    if isinstance(model, KEAnonymity):
        return ClassCondition(l=int(model.k))
    if isinstance(model, (EntropyLDiversity, LEligibility)):
        return ClassCondition(l=_at_least(float(model.l)))
    if isinstance(model, AlphaKAnonymity):  # also simple ℓ (α = 1/ℓ, k = 1)
        cond = ClassCondition(k=int(model.k))
        if model.sensitive_set is None and model.set_mode == "each":
            cond.l = _at_least(1.0 / float(model.alpha))
        return cond
    if isinstance(model, TCloseness):
        return _t_closeness(model, domain)
    return None


def _min_distance(model: TCloseness, domain: SADomain) -> float:
    """The smallest ground distance between two distinct SA values (0: none known)."""
    m = domain.n_values
    if model.distance == "equal":
        return 1.0
    if model.distance == "ordered":
        return 1.0 / (m - 1) if m > 1 else 0.0
    if domain.hierarchy is None:
        return 0.0
    height = tree_layout(domain.hierarchy, m).height
    return 1.0 / height if height > 0 else 0.0


def _t_closeness(model: TCloseness, domain: SADomain) -> ClassCondition | None:
    delta = _min_distance(model, domain)
    g = np.asarray(domain.global_counts, dtype=np.float64)
    if delta <= 0.0 or g.sum() <= 0:
        return None
    tau = (float(model.t) + 1e-12) / delta * (1.0 + _SLACK) + _SLACK  # TV <= tau is necessary
    if tau >= 1.0:
        return None
    q = g / g.sum()
    need = 1.0 - tau  # Σ_s min(p_s, q_s) >= need
    return ClassCondition(k=_t_min_size(q, need, int(g.sum())), masses=[(q, need - _SLACK)])


def _t_min_size(q: np.ndarray, need: float, n_rows: int) -> int:
    """The least class size ``N`` at which some count vector ``n`` (``Σ n = N``) reaches
    ``Σ_s min(n_s, N q_s) >= N · need`` (up to slack). The best vector puts
    ``floor(N q_s)`` on each value and one more on the values with the largest fractional
    parts, as many as remain — each extra unit gains its value's fractional part."""
    cap = max(1, min(n_rows, _MAX_SCAN))
    start = 1
    while start <= cap:
        sizes = np.arange(start, min(cap, 2 * start + 255) + 1, dtype=np.float64)
        nq = sizes[:, None] * q[None, :]
        full = np.floor(nq)
        frac = np.sort(nq - full, axis=1)[:, ::-1]
        rest = np.rint(sizes - full.sum(axis=1)).astype(np.int64)  # units still to place
        csum = np.concatenate([np.zeros((len(sizes), 1)), np.cumsum(frac, axis=1)], axis=1)
        best = full.sum(axis=1) + csum[np.arange(len(sizes)), np.clip(rest, 0, frac.shape[1])]
        hit = np.flatnonzero(best >= sizes * (need - _SLACK) - _SLACK)
        if hit.size:
            return int(sizes[hit[0]])
        start = int(sizes[-1]) + 1
    return cap


def projection_fails(data, nodes: np.ndarray, holds, size_only: bool, budget: int) -> np.ndarray:
    """Mask over ``nodes`` (level vectors) of those that fail from one QI alone.

    The classes of node ``u`` refine the classes of QI ``j`` alone at level ``u_j`` (the
    other QIs ignored). For an absorbing predicate ``holds(sizes, counts)`` (``counts``
    ``None`` when ``size_only``) a failing class of that projection splits into failing
    classes of ``u`` (one that held would absorb the rest), so its rows are suppressed at
    ``u``; with no budget and a monotonic predicate some class of ``u`` inside it fails
    (were all to hold, their union would). So ``u`` fails when, for some ``j``, the rows of
    the failing projection classes at ``u_j`` exceed ``budget``. The mask is closed
    downwards (a failing coarser class is a union of failing finer ones). ``data`` is a
    :class:`~.lattice_counts.LatticeData`."""
    worst = np.zeros(len(nodes), dtype=np.int64)
    n_sa = data.n_sa
    for j, h in enumerate(data.h):
        leaf = data.combo_t[j]
        w = np.bincount(leaf, weights=data.sizes, minlength=h.n_leaves)
        c = None
        if not size_only:
            idx = (leaf.astype(np.int64)[:, None] * n_sa + np.arange(n_sa)).ravel()
            c = np.bincount(idx, weights=data.counts.ravel(), minlength=h.n_leaves * n_sa).reshape(-1, n_sa)
        rows = np.zeros(h.height + 1, dtype=np.int64)
        for lv in range(h.height + 1):
            codes, r = data.level_codes[j][lv], data.level_radix[j][lv]
            sizes = np.rint(np.bincount(codes, weights=w, minlength=r)).astype(np.int64)
            counts = None
            if c is not None:
                flat = (codes.astype(np.int64)[:, None] * n_sa + np.arange(n_sa)).ravel()
                counts = np.rint(np.bincount(flat, weights=c.ravel(), minlength=r * n_sa)).astype(np.int64)
                counts = counts.reshape(r, n_sa)
            ok = np.asarray(holds(sizes, counts), dtype=bool) | (sizes == 0)  # codes without rows
            rows[lv] = int(sizes[~ok].sum())
        worst = np.maximum(worst, rows[nodes[:, j]])
    return worst > budget
