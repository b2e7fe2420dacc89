"""Symmetric Grouping (SG) — paper 000 §3.2 and App. C.3 (Fig. 7).

SG is the even-split counterpart of GG: on the same QI sort order (:mod:`.ordering`),
starting from the whole table, "split the current group G = t_l … t_r into
G' = t_l … t_⌊(l+r)/2⌋ and G'' = t_⌊(l+r)/2⌋+1 … t_r; if both G' and G'' satisfy the
requirement, recurse on each in turn" (Fig. 7) — ties broken "with the larger group
consisting of the left half" (App. C.3). In 0-based half-open positions a segment
``[lo, hi)`` of ``r`` rows splits at ``lo + ⌈r/2⌉`` (:func:`sg_split_point`); 54 rows give
27/27, then 14/13, then 7/7 and 7/6 (Fig. 1's even-split tree).

By Theorem 5 an even-split algorithm leaks at most ``1/(ℓ - 2/3)``-ish to an adversary who
knows it, so SG is not marked as minimality-following. The recursion runs level by level
over all open segments at once (SA counts from prefix sums over the order, one vectorised
model call per level).

Decision function for replay: :func:`sg_would_split`. The split tree is in
``Partition.extra``: ``order``, ``tree_lo``/``tree_hi`` (positions in the order),
``tree_parent`` (-1 for the root), ``tree_split`` (was the node split?), ``tree_group``
(group id of a leaf node, else -1). Groups are numbered along the order.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..data.table import EncodedTable
from ..models.base import PrivacyModel, SADomain
from ..params import Names, Optional, Options
from ..release import Partition
from .base import Anonymizer
from .ordering import ORDERS, TIES, qi_order, tie_keys


def sg_split_point(lo: Any, hi: Any) -> Any:
    """Where SG splits the half-open segment ``[lo, hi)``: ``lo + ⌈(hi-lo)/2⌉`` (Fig. 7's
    ⌊(l+r)/2⌋ in 1-based inclusive positions; the left half is the larger)."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    out = lo + (hi - lo + 1) // 2
    return int(out) if out.ndim == 0 else out


def sg_would_split(left_counts: np.ndarray, right_counts: np.ndarray, model: PrivacyModel,
                   domain: SADomain) -> Any:
    """SG's decision (Fig. 7, line 3): split iff both halves satisfy ``model``. Accepts one
    count vector per side (→ bool) or matrices (→ bool array)."""
    lc, rc = np.asarray(left_counts), np.asarray(right_counts)
    one = lc.ndim == 1
    lc, rc = np.atleast_2d(lc), np.atleast_2d(rc)
    ok = np.asarray(model.holds(lc, domain), dtype=bool) & np.asarray(model.holds(rc, domain), dtype=bool)
    return bool(ok[0]) if one else ok


class SymmetricGrouping(Anonymizer):
    """SG (paper 000 App. C.3, Fig. 7): recursive even splits of the QI sort order.

    Parameters
    ----------
    model: the privacy model each group must satisfy.
    order: ``"lex"`` (default), ``"zorder"`` or ``"hilbert"``.
    priority: QI names, most significant first (default: schema order).
    ties: ``"input"`` (default: people with equal QIs in row position — the certificate takes
        that order as known and independent of the SA) or ``"random"`` (a secret random order,
        ``ordering.tie_keys``; certified exactly, but the replay of a bucketized release with
        many equal QIs searches arrangements of its classes and can be slow on Adult).
    """

    name = "sg"
    release_kind = "bucketized"
    minimality = False
    replay = "decisions"
    deterministic = True
    parameter_constraints = {"order": Options(*ORDERS), "priority": Optional(Names()), "ties": Options(*TIES)}

    def __init__(self, *, model: PrivacyModel, order: str = "lex", priority: Sequence[str] | str | None = None,
                 seed: int | None = None, ties: str = "input") -> None:
        super().__init__(model=model, seed=seed)
        self.ties = ties
        self.order = order
        self.priority = priority

    def params(self) -> dict[str, Any]:
        pr = self.priority.split(",") if isinstance(self.priority, str) else self.priority
        return {"order": self.order, "priority": None if pr is None else list(pr), "ties": self.ties}

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        order = qi_order(table, self.order, self.priority,
                         ties=tie_keys(table, self.seed) if self.ties == "random" else None)
        tree = even_split_tree(table.sa_codes[order], table.columns[table.sa_name].n_values,
                               self.model, table.sa_domain)
        n = table.n_rows
        leaf = ~tree["tree_split"]
        leaves = np.flatnonzero(leaf)
        leaves = leaves[np.argsort(tree["tree_lo"][leaves], kind="stable")]
        tree_group = np.full(tree["tree_lo"].size, -1, dtype=np.int64)
        tree_group[leaves] = np.arange(leaves.size)
        sizes = tree["tree_hi"][leaves] - tree["tree_lo"][leaves]
        by_pos = np.repeat(np.arange(leaves.size, dtype=np.int64), sizes)
        group = np.empty(n, dtype=np.int64)
        group[order] = by_pos
        prov = self.provenance() | {"n_tree_nodes": int(tree["tree_lo"].size)}
        extra = {"order": order, **tree, "tree_group": tree_group}
        return Partition(group, int(leaves.size), provenance=prov, extra=extra)


def even_split_tree(sa_sorted: np.ndarray, n_sa: int, model: PrivacyModel, domain: SADomain) -> dict[str, np.ndarray]:
    """The even-split tree SG builds over rows already in order (level by level)."""
    n = sa_sorted.size
    prefix = np.zeros((n + 1, n_sa), dtype=np.int64)
    onehot_pos = np.arange(n) * n_sa + sa_sorted.astype(np.int64)
    flat = np.zeros(n * n_sa, dtype=np.int64)
    flat[onehot_pos] = 1
    np.cumsum(flat.reshape(n, n_sa), axis=0, out=prefix[1:])
    del flat
    los = [np.array([0], dtype=np.int64)]
    his = [np.array([n], dtype=np.int64)]
    parents = [np.array([-1], dtype=np.int64)]
    splits: list[np.ndarray] = []
    base = 0
    lo, hi = los[0], his[0]
    while lo.size:
        mid = sg_split_point(lo, hi)
        cand = (hi - lo) >= 2
        ok = np.zeros(lo.size, dtype=bool)
        if cand.any():
            c = np.flatnonzero(cand)
            left = prefix[mid[c]] - prefix[lo[c]]
            right = prefix[hi[c]] - prefix[mid[c]]
            ok[c] = sg_would_split(left, right, model, domain)
        splits.append(ok)
        idx = np.flatnonzero(ok)
        ids = base + idx
        base += lo.size
        lo, hi = np.stack([lo[idx], mid[idx]], axis=1).ravel(), np.stack([mid[idx], hi[idx]], axis=1).ravel()
        if lo.size:
            los.append(lo)
            his.append(hi)
            parents.append(np.repeat(ids, 2))
    return {"tree_lo": np.concatenate(los), "tree_hi": np.concatenate(his),
            "tree_parent": np.concatenate(parents), "tree_split": np.concatenate(splits)}
