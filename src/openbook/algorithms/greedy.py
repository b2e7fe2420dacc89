"""Greedy Grouping (GG) and Randomized Greedy Grouping RGG(p) — paper 000 §2.3, §4.1
(Fig. 2), §4.3.

GG sorts the rows by QI (:mod:`.ordering`), cuts the order into *buckets* of ``ℓ``
consecutive rows ("each group is formed from the union of such buckets", §4.1), and grows
each group bucket by bucket from the first ungrouped bucket "until the resulting group meets
a given privacy requirement, at which point the group is complete" (Fig. 2, lines 4–7).
RGG(p) changes line 6 to "if either G_i does not satisfy the requirement *or* a random event
with probability p occurs" (§4.3): once the group holds, the next bucket is added with
probability ``p`` (one uniform draw of the seeded generator per such decision), and growth
then continues until the group holds again.

The last bucket holds the ``n mod ℓ`` leftover rows when ``ℓ`` does not divide ``n``.
**Tail.** Buckets left after the last complete group may not satisfy the model. The paper
"choose[s] to ignore any tuples which remain" (§2.3 footnote 1, §4.1): ``tail="drop"``
suppresses them. The default ``tail="merge"`` merges them into the previous group (and, for
a model that is not monotonic, keeps merging backwards until the merged group holds; the
whole table holds, as ``validate`` checks first).

Decision functions an algorithm-aware adversary replays (paper 000 §5.1, paper 001 §3):
:func:`gg_would_close` (does GG close the group with these SA counts?) and
:func:`rgg_close_probability`. The bucket structure is in ``Partition.extra``:
``order`` (row positions in sort order), ``bucket_bounds`` (bucket ``b`` is
``order[bucket_bounds[b]:bucket_bounds[b+1]]``), ``group_first_bucket`` and
``group_last_bucket`` (group ``g`` — numbered along the order — is the union of buckets
``first..last``); the tail's buckets are in provenance ``tail_buckets``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..data.table import EncodedTable
from ..models.base import PrivacyModel, SADomain
from ..models.promise import promised_l_int, size_floor
from ..params import Integer, Names, Optional, Options, Real
from ..release import Partition
from .base import Anonymizer
from .ordering import ORDERS, TIES, qi_order, tie_keys

TAILS = ("merge", "drop")


def gg_would_close(counts: np.ndarray, model: PrivacyModel, domain: SADomain) -> Any:
    """GG's decision (Fig. 2, line 6): the group with these SA counts is closed iff it
    satisfies ``model``. ``counts`` is one count vector (→ bool) or a matrix (→ bool array)."""
    c = np.asarray(counts)
    ok = model.holds(c if c.ndim == 2 else c[None, :], domain)
    return bool(ok[0]) if c.ndim == 1 else ok


def rgg_close_probability(holds: Any, p: float, has_next_bucket: Any = True) -> Any:
    """RGG(p)'s decision (§4.3): the probability that a group in this state is closed —
    0 when it fails the model, ``1 - p`` when it holds and a bucket follows, 1 at the end."""
    holds = np.asarray(holds, dtype=bool)
    nxt = np.asarray(has_next_bucket, dtype=bool)
    out = np.where(holds, np.where(nxt, 1.0 - p, 1.0), 0.0)
    return float(out) if out.ndim == 0 else out


def bucket_bounds(n: int, size: int) -> np.ndarray:
    """Boundaries (positions in the order) of buckets of ``size`` rows; the last bucket
    holds the remainder."""
    b = np.arange(0, n, size, dtype=np.int64)
    return np.append(b, n)


class BucketedOrder:
    """Per-bucket SA prefix sums over a sorted order, and vectorised "first bucket at which
    the group started at bucket s holds" queries."""

    def __init__(self, table: EncodedTable, order: np.ndarray, bounds: np.ndarray, model: PrivacyModel) -> None:
        self.model, self.domain = model, table.sa_domain
        n_sa = table.columns[table.sa_name].n_values
        self.n_buckets = len(bounds) - 1
        bucket_of_pos = np.repeat(np.arange(self.n_buckets, dtype=np.int64), np.diff(bounds))
        sa = table.sa_codes[order].astype(np.int64)
        cnt = np.bincount(bucket_of_pos * n_sa + sa, minlength=self.n_buckets * n_sa).reshape(self.n_buckets, n_sa)
        self.prefix = np.zeros((self.n_buckets + 1, n_sa), dtype=np.int64)
        np.cumsum(cnt, axis=0, out=self.prefix[1:])

    def counts(self, s: np.ndarray, e: np.ndarray) -> np.ndarray:
        """SA counts of the unions of buckets ``s..e`` (inclusive)."""
        return self.prefix[np.asarray(e) + 1] - self.prefix[np.asarray(s)]

    def holds(self, s: np.ndarray, e: np.ndarray) -> np.ndarray:
        s, e = np.atleast_1d(s), np.atleast_1d(e)
        if s.size == 0:
            return np.zeros(0, dtype=bool)
        return np.asarray(self.model.holds(self.counts(s, e), self.domain), dtype=bool)

    def window(self, width: int) -> np.ndarray:
        """``H[s, j]``: do buckets ``s..s+j`` satisfy the model (False past the end)?"""
        nb = self.n_buckets
        H = np.zeros((nb, width), dtype=bool)
        for j in range(min(width, nb)):
            s = np.arange(nb - j, dtype=np.int64)
            H[: nb - j, j] = self.holds(s, s + j)
        return H

    def first_hold(self, s: np.ndarray, e0: np.ndarray, window: int = 8) -> np.ndarray:
        """For each query, the smallest ``e >= e0`` with buckets ``s..e`` satisfying the model,
        or ``n_buckets`` when none does."""
        s = np.asarray(s, dtype=np.int64).copy()
        e0 = np.asarray(e0, dtype=np.int64).copy()
        out = np.full(s.shape, self.n_buckets, dtype=np.int64)
        pending = np.flatnonzero(e0 < self.n_buckets)
        w = window
        while pending.size:
            ps, pe = s[pending], e0[pending]
            steps = np.arange(w, dtype=np.int64)
            ee = pe[:, None] + steps[None, :]
            valid = ee < self.n_buckets
            ss = np.broadcast_to(ps[:, None], ee.shape)
            ok = np.zeros(ee.shape, dtype=bool)
            ok[valid] = self.holds(ss[valid], ee[valid])
            found = ok.any(axis=1)
            first = np.argmax(ok, axis=1)
            out[pending[found]] = pe[found] + first[found]
            nxt = pe + w
            more = ~found & (nxt < self.n_buckets)
            e0[pending[more]] = nxt[more]
            pending = pending[more]
            w *= 2
        return out


class GreedyGrouping(Anonymizer):
    """GG (paper 000 Fig. 2): sort, cut into buckets of ℓ, grow each group until it holds.

    Parameters
    ----------
    model: the privacy model each group must satisfy.
    order: ``"lex"`` (default), ``"zorder"`` or ``"hilbert"`` (:mod:`.ordering`).
    priority: QI names, most significant first (default: schema order).
    bucket_size: rows per bucket; default the model's ℓ (``l`` or ``1/alpha``), else its
        smallest allowed group size (k for k-anonymity), else 1.
    tail: ``"merge"`` (default) or ``"drop"`` (suppress, as the paper does).
    """

    name = "gg"
    release_kind = "bucketized"
    minimality = True
    replay = "decisions"
    deterministic = True

    parameter_constraints = {"order": Options(*ORDERS), "priority": Optional(Names()),
                             "bucket_size": Optional(Integer(minimum=1, strict=True)), "tail": Options(*TAILS),
                             "max_suppression": Real(0.0, 1.0), "ties": Options(*TIES)}

    @classmethod
    def withholds(cls, params: dict[str, Any]) -> str:
        return "gg-tail" if params.get("tail") == "drop" else "unknown"

    def __init__(self, *, model: PrivacyModel, order: str = "lex", priority: Sequence[str] | str | None = None,
                 bucket_size: int | None = None, tail: str = "merge", max_suppression: float = 0.0,
                 seed: int | None = None, ties: str = "random") -> None:
        super().__init__(model=model, seed=seed)
        self.ties = ties
        self.max_suppression = max_suppression
        self.order = order
        self.priority = priority
        self.bucket_size = bucket_size
        self.tail = tail

    def params(self) -> dict[str, Any]:
        pr = self.priority.split(",") if isinstance(self.priority, str) else self.priority
        return {"order": self.order, "priority": None if pr is None else list(pr),
                "bucket_size": self.bucket_size, "tail": self.tail, "max_suppression": self.max_suppression,
                "ties": self.ties}

    def _p(self) -> float:
        return 0.0

    def effective_bucket_size(self) -> int:
        if self.bucket_size is not None:
            return int(self.bucket_size)
        return promised_l_int(self.model) or size_floor(self.model)

    def _extend(self, rng: np.random.Generator | None) -> bool:
        return False

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        n = table.n_rows
        order = qi_order(table, self.order, self.priority,
                         ties=tie_keys(table, self.seed) if self.ties == "random" else None)
        size = self.effective_bucket_size()
        bounds = bucket_bounds(n, size)
        bo = BucketedOrder(table, order, bounds, self.model)
        nb = bo.n_buckets
        rng = np.random.default_rng(self.seed) if self._p() > 0 else None
        width = int(min(32, nb))
        H = bo.window(width)

        def next_hold(s: int, e0: int) -> int:
            j0 = e0 - s
            if j0 < width:
                row = H[s, j0:]
                if row.any():
                    return s + j0 + int(np.argmax(row))
                if s + width >= nb:
                    return nb
                e0 = s + width
            return int(bo.first_hold(np.array([s]), np.array([e0]))[0])

        firsts: list[int] = []
        lasts: list[int] = []
        s = 0
        n_voluntary = 0
        while s < nb:
            e = next_hold(s, s)
            if e >= nb:
                break
            while e + 1 < nb and self._extend(rng):
                n_voluntary += 1
                e2 = next_hold(s, e + 1)
                if e2 >= nb:  # ran out of buckets: close at the last holding point
                    break
                e = e2
            firsts.append(s)
            lasts.append(e)
            s = e + 1
        tail_start = s
        firsts_a = np.asarray(firsts, dtype=np.int64)
        lasts_a = np.asarray(lasts, dtype=np.int64)
        tail_buckets = [int(tail_start), int(nb)]
        dropped = 0
        if tail_start < nb:
            if self.tail == "drop":
                dropped = int(bounds[nb] - bounds[tail_start])
            else:
                firsts_a, lasts_a = _merge_tail(bo, firsts_a, lasts_a, tail_start)
        # group id per bucket, then per row
        n_groups = int(firsts_a.size)
        gid_of_bucket = np.full(nb, -1, dtype=np.int64)
        for g, (a, b) in enumerate(zip(firsts_a, lasts_a)):
            gid_of_bucket[a:b + 1] = g
        bucket_of_pos = np.repeat(np.arange(nb, dtype=np.int64), np.diff(bounds))
        group = np.empty(n, dtype=np.int64)
        group[order] = gid_of_bucket[bucket_of_pos]
        prov = self.provenance() | {
            "bucket_size": size, "n_buckets": int(nb), "tail_buckets": tail_buckets,
            "tail_rows": int(bounds[nb] - bounds[tail_start]), "tail_dropped_rows": dropped,
            "voluntary_merges": n_voluntary,
        }
        extra = {"order": order, "bucket_bounds": bounds, "group_first_bucket": firsts_a,
                 "group_last_bucket": lasts_a}
        return Partition(group, n_groups, provenance=prov, extra=extra)


def _merge_tail(bo: BucketedOrder, firsts: np.ndarray, lasts: np.ndarray, tail_start: int):
    """Merge buckets ``tail_start..end`` into the previous group; while the merged group
    fails (a non-monotonic model), absorb the group before it."""
    end = bo.n_buckets - 1
    f = list(firsts)
    la = list(lasts)
    start = tail_start
    while f:
        start = f.pop()
        la.pop()
        if bo.holds(np.array([start]), np.array([end]))[0]:
            break
    else:
        start = 0
    f.append(start)
    la.append(end)
    return np.asarray(f, dtype=np.int64), np.asarray(la, dtype=np.int64)


class RandomizedGreedyGrouping(GreedyGrouping):
    """RGG(p) (paper 000 §4.3): GG, but a group that holds takes the next bucket with
    probability ``p`` (then grows until it holds again). ``p = 0`` is GG.

    Parameters: those of :class:`GreedyGrouping`, plus ``p`` in [0, 1] and ``seed``.
    """

    name = "rgg"
    minimality = False
    deterministic = False  # its coin flips
    parameter_constraints = {"p": Real(0.0, 1.0)}

    def __init__(self, *, model: PrivacyModel, p: float = 0.5, order: str = "lex",
                 priority: Sequence[str] | str | None = None, bucket_size: int | None = None,
                 tail: str = "merge", max_suppression: float = 0.0, seed: int | None = None,
                 ties: str = "random") -> None:
        super().__init__(model=model, order=order, priority=priority, bucket_size=bucket_size, tail=tail,
                         max_suppression=max_suppression, seed=seed, ties=ties)
        self.p = p

    def params(self) -> dict[str, Any]:
        return {"p": self.p, **super().params()}

    def _p(self) -> float:
        return float(self.p)

    def _extend(self, rng: np.random.Generator | None) -> bool:
        p = float(self.p)
        if p <= 0.0 or rng is None:
            return False
        return bool(rng.random() < p)
