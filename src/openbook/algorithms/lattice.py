"""Full-domain generalization by lattice search (Samarati 2001; LeFevre et al., Incognito,
SIGMOD 2005; Kohlmayer et al., Flash, 2012) — the global-recoding, minimality-following
algorithm paper 001 §4.1 attacks.

The *generalization lattice* has one node per level vector ``(l_1, …, l_d)``, ``0 <= l_j <=
height_j`` of the QI hierarchies; node ``u`` generalizes node ``v`` when ``u >= v``
componentwise. A node *satisfies* the model when, after recoding every QI ``j`` to level
``l_j``, the rows of the classes that violate the model are at most ``max_suppression · n``
(those classes are suppressed). Satisfaction is upward closed (:meth:`Lattice.upward_closed`)
when the model is monotonic and either there is no budget or the model is *absorbing*: a
node's classes are unions of a finer node's classes, and then every class the coarser node
fails is a union of classes the finer node failed, so it suppresses no more rows. That gives
**predictive tagging**: a satisfying node tags every node above it satisfying, a failing node
tags every node below it failing, unchecked. The search walks, from the lowest untagged node,
a greedy chain upwards through untagged nodes and binary-searches it (Flash's path
strategy), until every node is tagged. Otherwise every node is checked: with a budget,
entropy/recursive ℓ, (α,k), simple ℓ, t-closeness (every distance) and ℓ-eligibility are
*not* upward closed (a class {a, b} satisfies entropy 2-diversity and {c × 100} is
suppressed; merged, all 102 rows fail — ``tests/unit/algorithms/test_lattice_minimal.py``
keeps such counterexamples). The proof for each model, with and without a budget, is in
``docs/algorithms.md``.

Output: all *minimal* satisfying nodes (no satisfying node anywhere strictly below —
Samarati's k-minimal generalizations; where satisfaction is upward closed this is the same
as "no direct predecessor satisfies", otherwise :meth:`Lattice.minimal` propagates "something
below satisfies" layer by layer) and, among them, the one with the least information loss
under ``metric`` (ties: smaller height, then lexicographic):

``"loss"``            mean over rows and QIs of ``(coverage(value) - 1) / (n_leaves - 1)``,
                      a suppressed row counting 1 per QI (Iyengar's LM; ARX's "Loss").
``"discernibility"``  ``Σ |class|² + n_suppressed · n`` (Bayardo & Agrawal).
``"precision"``       Sweeney's Prec loss: mean over QIs of ``level / height``.
``"height"``          sum of levels.

Checks run on the distinct QI combinations (with their SA counts), not on rows: a node is a
mixed-radix key over the combinations' generalized codes, a hash factorization and one
``bincount``.

Provenance: ``levels`` (chosen node), ``minimal_nodes``, ``n_nodes``, ``n_checked``,
``metric`` and its value; the decision function :func:`node_satisfies` lets an adversary
re-check any node.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import InfeasibleError, ParameterError
from ..models.base import PrivacyModel
from ..params import Options, Real
from ..release import Partition
from .base import Anonymizer

METRICS = ("loss", "discernibility", "precision", "height")


#: the largest lattice the search enumerates (its nodes are materialised as an array)
MAX_NODES = 2_000_000


class Lattice:
    """The generalization lattice of a table's QI hierarchies and the node checks."""

    def __init__(self, table: EncodedTable, model: PrivacyModel, max_suppression: float = 0.0) -> None:
        self.table, self.model = table, model
        self.domain = table.sa_domain
        self.n = table.n_rows
        self.budget = int(np.floor(max_suppression * self.n + 1e-9))
        self.h = [table.hierarchy(nm) for nm in table.qi_names]
        self.heights = np.array([h.height for h in self.h], dtype=np.int64)
        self.d = len(self.h)
        size = math.prod(int(x) + 1 for x in self.heights.tolist())  # Python ints: no wrap
        if size > MAX_NODES:
            raise ParameterError(f"the full-domain lattice of these {self.d} QIs has {size:.3g} nodes, above the "
                                 f"{MAX_NODES:,} openbook searches; use fewer QIs or --algorithm mondrian",
                                 parameter="qi", value=size)
        # distinct QI combinations and their SA counts
        cls, m = group_ids(table.qi_codes)
        first = np.full(m, -1, dtype=np.int64)
        first[cls[::-1]] = np.arange(self.n - 1, -1, -1)
        self.combos = table.qi_codes[first].astype(np.int64)  # (m, d)
        counts = table.group_sa_counts(cls, m)
        self.combo_size = counts.sum(axis=1)
        ci, si = np.nonzero(counts)
        self.pair_combo, self.pair_sa, self.pair_w = ci, si.astype(np.int64), counts[ci, si].astype(np.float64)
        self.n_sa = counts.shape[1]
        # generalized code of each combination at each level, per QI
        self.gen = [[h.ancestor_table[lv][self.combos[:, j]].astype(np.int64) for lv in range(h.height + 1)]
                    for j, h in enumerate(self.h)]
        self.radix = [int(h.n_nodes) for h in self.h]
        self.cov = [np.asarray(h.coverage, dtype=np.float64) for h in self.h]
        shape = tuple(int(x) + 1 for x in self.heights)
        self.shape = shape
        self.nodes = np.indices(shape).reshape(self.d, -1).T.astype(np.int64)  # (N, d), lexicographic
        self.n_checked = 0

    # -- one node ----------------------------------------------------------------------
    def classes(self, levels) -> tuple[np.ndarray, int]:
        """Class id of each distinct QI combination at ``levels``."""
        key = np.zeros(len(self.combos), dtype=np.int64)
        radix = 1
        for j, lv in enumerate(levels):
            g = self.gen[j][int(lv)]
            if radix * self.radix[j] >= 2**62:
                codes, uniq = pd.factorize(key)
                key, radix = codes.astype(np.int64), len(uniq)
            key = key * self.radix[j] + g
            radix *= self.radix[j]
        codes, uniq = pd.factorize(key)
        return codes.astype(np.int64), len(uniq)

    def evaluate(self, levels) -> dict[str, Any]:
        """Classes at ``levels``, which hold, and how many rows would be suppressed."""
        cc, nc = self.classes(levels)
        flat = np.bincount(cc[self.pair_combo] * self.n_sa + self.pair_sa, weights=self.pair_w,
                           minlength=nc * self.n_sa)
        counts = np.rint(flat).astype(np.int64).reshape(nc, self.n_sa)
        ok = np.asarray(self.model.holds(counts, self.domain), dtype=bool)
        sizes = counts.sum(axis=1)
        suppressed = int(sizes[~ok].sum())
        return {"combo_class": cc, "n_classes": nc, "holds": ok, "sizes": sizes, "suppressed": suppressed}

    def upward_closed(self) -> bool:
        """Is the set of satisfying nodes closed upwards (so predictive tagging is exact)?"""
        return bool(self.model.monotonic) and (self.budget == 0 or bool(self.model.absorbing))

    def satisfies(self, levels) -> bool:
        self.n_checked += 1
        return self.evaluate(levels)["suppressed"] <= self.budget

    # -- metrics -----------------------------------------------------------------------
    def metric(self, levels, name: str) -> float:
        if name == "height":
            return float(np.sum(levels))
        if name == "precision":
            h = np.maximum(self.heights, 1)
            return float(np.mean(np.asarray(levels) / h))
        ev = self.evaluate(levels)
        if name == "discernibility":
            ok = ev["holds"]
            return float((ev["sizes"][ok] ** 2).sum() + ev["suppressed"] * self.n)
        # loss
        kept_combo = ev["holds"][ev["combo_class"]]
        w = self.combo_size * kept_combo
        total = 0.0
        for j, h in enumerate(self.h):
            nl = max(h.n_leaves - 1, 1)
            per = (self.cov[j][self.gen[j][int(levels[j])]] - 1.0) / nl
            total += float((per * w).sum())
        total += float(ev["suppressed"]) * self.d
        return total / (self.n * self.d)

    # -- search ------------------------------------------------------------------------
    def _index(self, v: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(np.asarray(v).T), self.shape)

    def search(self, monotonic: bool | None = None) -> np.ndarray:
        """State of every node: +1 satisfies, -1 fails (all nodes tagged or checked).
        ``monotonic`` defaults to :meth:`upward_closed`; ``False`` checks every node."""
        if monotonic is None:
            monotonic = self.upward_closed()
        N = self.nodes.shape[0]
        state = np.zeros(N, dtype=np.int8)
        if not monotonic:
            for i in range(N):
                state[i] = 1 if self.satisfies(self.nodes[i]) else -1
            return state
        height = self.nodes.sum(axis=1)
        by_height = np.lexsort((np.arange(N), height))
        rel = self.heights.astype(np.float64)
        rel[rel == 0] = 1.0
        cursor = 0
        while True:
            while cursor < N and state[by_height[cursor]] != 0:
                cursor += 1
            if cursor >= N:
                break
            start = self.nodes[by_height[cursor]].copy()
            path = [start]
            cur = start
            while True:
                nxt = None
                order = np.lexsort((np.arange(self.d), cur / rel))
                for j in order:
                    if cur[j] < self.heights[j]:
                        cand = cur.copy()
                        cand[j] += 1
                        if state[self._index(cand[None, :])[0]] == 0:
                            nxt = cand
                            break
                if nxt is None:
                    break
                path.append(nxt)
                cur = nxt
            lo, hi = 0, len(path) - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                v = path[mid]
                i = self._index(v[None, :])[0]
                if state[i] == 0:
                    if self.satisfies(v):
                        state[np.all(self.nodes >= v, axis=1)] = 1
                    else:
                        state[np.all(self.nodes <= v, axis=1)] = -1
                if state[i] == 1:
                    hi = mid - 1
                else:
                    lo = mid + 1
        return state

    def minimal(self, state: np.ndarray) -> np.ndarray:
        """Satisfying nodes with no satisfying node strictly below them (Samarati's minimal
        generalizations). When satisfaction is upward closed this is "no direct predecessor
        satisfies"; otherwise a satisfying node can sit above a failing one above a
        satisfying one, so "something below satisfies" is propagated upwards layer by layer."""
        sat = state == 1
        below = np.zeros_like(sat)  # some node strictly below satisfies
        height = self.nodes.sum(axis=1)
        for h in range(1, int(height.max(initial=0)) + 1):
            layer = np.flatnonzero(height == h)
            for j in range(self.d):
                has = layer[self.nodes[layer, j] > 0]
                pred = self.nodes[has].copy()
                pred[:, j] -= 1
                pi = self._index(pred)
                below[has] |= sat[pi] | below[pi]
        return self.nodes[sat & ~below]


def node_satisfies(table: EncodedTable, model: PrivacyModel, levels, max_suppression: float = 0.0) -> bool:
    """Decision function: does full-domain recoding at ``levels`` satisfy ``model`` within the
    suppression budget?"""
    return Lattice(table, model, max_suppression).satisfies(levels)


class FullDomainSearch(Anonymizer):
    """Optimal full-domain generalization over the hierarchy lattice, with suppression.

    Parameters
    ----------
    model: the privacy model every published class must satisfy.
    max_suppression: largest fraction of rows that may be suppressed (default 0).
    metric: ``"loss"`` (default), ``"discernibility"``, ``"precision"`` or ``"height"``.
    """

    name = "full-domain-search"
    minimality = True
    parameter_constraints = {"max_suppression": Real(0.0, 1.0), "metric": Options(*METRICS)}

    def __init__(self, *, model: PrivacyModel, max_suppression: float = 0.0, metric: str = "loss",
                 seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.max_suppression = max_suppression
        self.metric = metric
        self._levels: list[int] | None = None

    def params(self) -> dict[str, Any]:
        return {"max_suppression": self.max_suppression, "metric": self.metric}

    def _validate(self, table: EncodedTable) -> None:
        self.check_params()
        ms = float(self.max_suppression)
        try:
            super()._validate(table)
        except InfeasibleError:
            # the model's whole-table feasibility (eligibility, ...) assumes every row is
            # published; with a budget, suppressing rows can make the table feasible, and
            # the lattice decides (InfeasibleError when no node satisfies)
            if ms == 0.0:
                raise

    def release_levels(self) -> list[int] | None:
        return self._levels

    def search(self, table: EncodedTable) -> dict[str, Any]:
        """Run the lattice search; returns the minimal nodes, the chosen one and counts."""
        self._validate(table)
        lat = Lattice(table, self.model, float(self.max_suppression))
        state = lat.search()
        mins = lat.minimal(state)
        if mins.shape[0] == 0:
            raise InfeasibleError(
                f"full-domain-search: no generalization satisfies {self.model.describe()} with at most "
                f"{float(self.max_suppression):.1%} of rows suppressed", model=self.model)
        vals = np.array([lat.metric(v, self.metric) for v in mins])
        best = np.lexsort((*mins.T[::-1], mins.sum(axis=1), vals))[0]
        return {"lattice": lat, "minimal": mins, "values": vals, "best": mins[best], "state": state}

    def partition(self, table: EncodedTable) -> Partition:
        res = self.search(table)
        lat: Lattice = res["lattice"]
        levels = [int(x) for x in res["best"]]
        self._levels = levels
        gen = [h.generalize(table.columns[nm].codes, lv) for h, nm, lv in zip(lat.h, table.qi_names, levels)]
        cls, n_cls = group_ids(gen)
        counts = table.group_sa_counts(cls, n_cls)
        ok = np.asarray(self.model.holds(counts, table.sa_domain), dtype=bool)
        labels = np.where(ok[cls], cls, -1)
        prov = self.provenance() | {
            "levels": levels, "minimal_nodes": res["minimal"].tolist(),
            "minimal_metric": [float(x) for x in res["values"]], "metric_value": float(res["values"].min()),
            "n_nodes": int(lat.nodes.shape[0]), "n_checked": int(lat.n_checked),
            "qi": list(table.qi_names), "heights": lat.heights.tolist(),
        }
        return Partition.from_labels(labels, provenance=prov)
