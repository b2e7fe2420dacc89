"""Replaying GG and RGG(p) (paper 000 §2.3, §4.1 Fig. 2, §4.3, App. C.4; §5.1).

GG sorts the rows by QI, cuts the order into buckets and grows each group bucket by bucket
until it satisfies the model; RGG(p) then extends a satisfying group with probability ``p``.
Every published class is a union of whole buckets. Consecutive buckets of one class form a
*run*; a run's first bucket starts a group (the class before it ended there) and its last
ends one. Within a run the groups' boundaries are observed only when their labels differ:
in a generalized release GG may have closed several groups inside a run, each with the
class's labels (``A[s, e]``: buckets ``s..e`` carry them).

* A run that can only be one group is a chain of per-prefix factors — ``p`` (0 for GG) per
  satisfying prefix before the last, then "holds" and the stop ``1 - p`` when a bucket
  follows — solved exactly by forward–backward (:mod:`.chain`); the run that ends the table
  under ``tail="merge"`` sums over every tail merged back into it.
* Any other class — several runs, or a run that may hold several groups — weighs a world by
  the product over its runs of :func:`.kernels.gg_run_likelihood` (every way GG/RGG could
  have grown groups with the class's labels through the run).

A class is one unit (its buckets are the cells); classes never share a run.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator

import numpy as np

from ...algorithms.greedy import bucket_bounds
from ...algorithms.ordering import qi_order
from ...data.grouping import group_ids
from ...data.table import EncodedTable
from ...errors import VerificationError
from ...release.align import label_keys
from ..absence import compares_with_table
from .engine import Unit, holds
from .generic import set_only_mask
from .kernels import box_points, gg_run_likelihood


def order_of(algo: Any, table: EncodedTable) -> np.ndarray:
    """The QI order GG/RGG/SG sort the rows in."""
    pr = algo.priority.split(",") if isinstance(algo.priority, str) else algo.priority
    return qi_order(table, algo.order, pr)


#: arrangements of the classes inside runs of equal QIs tried per release (:func:`tie_orders`)
TIE_ORDERS = 720


def tie_orders(algo: Any, table: EncodedTable, group: np.ndarray, limit: int = TIE_ORDERS) -> Iterator[np.ndarray]:
    """Orders of the rows GG/RGG/SG could have sorted them in, given the seating ``group``.

    People with equal QIs are told apart by no file, so which of them sits in which class is
    the seating's choice, not the adversary's knowledge (a seating from the saved files is
    one of many). The first order is the algorithm's own (:func:`order_of`; not with random
    ties, whose order is nobody's); then, in each run
    of rows with equal QIs, the class of the row before the run first, a class going on into
    the next run last, absent rows at the end, and the classes wholly inside the run between
    them — first by class number, then (up to ``limit`` orders, enumerated lazily) every other
    arrangement of those. Permuting rows within a run of equal QIs relabels interchangeable
    people: each row keeps its class and SA."""
    group = np.asarray(group, dtype=np.int64)
    base = order_of(algo, table)
    # with random ties the input's order is nobody's: the arrangement below comes first, the
    # one the saved files are seated in (a row-order arrangement may publish the classes in
    # a structure no world gives)
    random_ties = bool(getattr(algo, "ties_at_random", False))
    if not random_ties:
        yield base
    key, _ = group_ids(table.qi_codes)
    k = key[base]
    n = base.size
    if n == 0:
        if random_ties:
            yield base
        return
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], n]
    out = base.copy()
    inner: list[tuple[int, int, np.ndarray, np.ndarray]] = []
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        if b - a < 2:
            continue
        seg = group[out[a:b]]
        prev = int(group[out[a - 1]]) if a > 0 else -2
        nxt = set(group[out[b:ends[i + 1]]].tolist()) - {-1} if i + 1 < starts.size else set()
        rank = np.where(seg < 0, 3, np.where(seg == prev, 0, np.where(np.isin(seg, list(nxt)), 2, 1)))
        o = np.lexsort((seg, rank))
        out[a:b] = out[a:b][o]
        mid = np.unique(seg[rank == 1])
        if mid.size > 1:
            inner.append((a, b, rank[o], mid))
    if random_ties or not np.array_equal(out, base):
        yield out
    done = 0
    for combo in _arrangements([mid.tolist() for _, _, _, mid in inner]):
        if done >= limit:
            return
        if all(list(c) == mid.tolist() for c, (_, _, _, mid) in zip(combo, inner)):
            continue
        alt = out.copy()
        for c, (a, b, rank, _) in zip(combo, inner):
            pos = {cls: j for j, cls in enumerate(c)}
            rk = np.array([pos[int(x)] if r == 1 else 0 for x, r in zip(group[out[a:b]], rank)], dtype=np.int64)
            alt[a:b] = out[a:b][np.lexsort((rk, rank))]
        done += 1
        yield alt


def _arrangements(lists: list[list[int]]) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Every choice of one permutation per list, lazily, the last list's changing fastest
    (``itertools.product`` would build every list's permutations first: n! tuples; a
    recursion would be as deep as the lists are many — thousands of runs on Adult)."""
    if not lists:
        yield ()
        return
    iters = [itertools.permutations(x) for x in lists]
    current = [next(it) for it in iters]
    yield tuple(current)
    while True:
        i = len(lists) - 1
        while i >= 0:
            nxt = next(iters[i], None)
            if nxt is not None:
                current[i] = nxt
                break
            iters[i] = itertools.permutations(lists[i])  # exhausted: start again, carry left
            current[i] = next(iters[i])
            i -= 1
        if i < 0:
            return
        yield tuple(current)


def first_order(build: Callable[[np.ndarray], Any], algo: Any, table: EncodedTable, group: np.ndarray) -> Any:
    """``build(order)`` for the first of :func:`tie_orders` whose structure publishes the
    classes (``build`` raises :class:`VerificationError` otherwise); the first error when
    none does."""
    err: VerificationError | None = None
    for order in tie_orders(algo, table, group):
        try:
            return build(order)
        except VerificationError as exc:
            err = err or exc
    assert err is not None
    raise err


def gg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
             generalized: bool = False) -> list[Unit]:
    """The units of a GG/RGG release (module docstring): ``group`` is the published class
    of every row (``-1``: a dropped tail); ``generalized``: classes are told apart only by
    their labels."""
    if np.any(group < 0) and compares_with_table(algo.model):
        # every decision compared a group with the table's distribution, which the dropped
        # tail is part of: its values, which the adversary does not know, moved every decision
        return [Unit(np.flatnonzero(group == c), np.zeros(int((group == c).sum()), dtype=np.int64),
                     np.zeros(1, dtype=np.int64), gcounts[c:c + 1], None, algo.name, unresolved=True)
                for c in range(gcounts.shape[0]) if np.any(group == c)]
    return first_order(lambda order: _gg_units(algo, table, group, gcounts, generalized, order), algo, table, group)


def _gg_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, generalized: bool,
              order: np.ndarray) -> list[Unit]:
    model, domain = algo.model, table.sa_domain
    p = float(getattr(algo, "p", 0.0) or 0.0) if algo.name == "rgg" else 0.0
    n = table.n_rows
    bounds = bucket_bounds(n, algo.effective_bucket_size())
    nb = bounds.size - 1
    bucket_of_pos = np.repeat(np.arange(nb, dtype=np.int64), np.diff(bounds))
    g_pos = group[order]
    n_cls = gcounts.shape[0]
    # every bucket inside one class (or wholly dropped)
    b_lo = np.full(nb, n_cls, dtype=np.int64)
    b_hi = np.full(nb, -2, dtype=np.int64)
    np.minimum.at(b_lo, bucket_of_pos, g_pos)
    np.maximum.at(b_hi, bucket_of_pos, g_pos)
    if np.any(b_lo != b_hi):
        raise VerificationError(f"{algo.name}: the published classes are not unions of whole buckets of "
                                f"{algo.effective_bucket_size()} rows in the QI order")
    cb = b_lo
    starts = np.flatnonzero(np.r_[True, cb[1:] != cb[:-1]])
    ends = np.r_[starts[1:], nb] - 1
    keep = cb[starts] >= 0
    starts, ends = starts[keep], ends[keep]
    run_cls = cb[starts]
    if not generalized and np.unique(run_cls).size != run_cls.size:
        raise VerificationError(f"{algo.name}: a published group is not one run of consecutive buckets")
    merge = getattr(algo, "tail", "merge") == "merge"
    smask = set_only_mask(model, domain)
    ckeys = label_keys(table, group, n_cls) if generalized else None
    # SA counts (as seated) from each bucket to the table's end
    suffix = np.zeros((nb + 1, gcounts.shape[1]), dtype=np.int64)
    np.add.at(suffix, (bucket_of_pos, np.asarray(table.sa_codes, dtype=np.int64)[order]), 1)
    suffix = np.cumsum(suffix[::-1], axis=0)[::-1]
    # a run that is a whole class seen from its start: the suffix's counts are the same in
    # every world, one model call for all of them
    suffix_holds = holds(model, domain, suffix[:nb]) if p > 0 else np.zeros(0, dtype=bool)
    dropped_after = np.r_[np.cumsum((cb < 0)[::-1])[::-1] > 0, False]
    # classes whose members all share one QI tuple (below: interchangeable under random ties)
    one_qi = np.zeros(n_cls, dtype=bool)
    if getattr(algo, "ties_at_random", False):
        qkey, _ = group_ids(table.qi_codes)
        pub = group >= 0
        q_lo = np.full(n_cls, np.iinfo(np.int64).max, dtype=np.int64)
        q_hi = np.full(n_cls, -1, dtype=np.int64)
        np.minimum.at(q_lo, group[pub], qkey[pub])
        np.maximum.at(q_hi, group[pub], qkey[pub])
        one_qi = q_lo == q_hi
    units = []
    by_cls = np.argsort(run_cls, kind="stable")
    splits = np.flatnonzero(np.diff(run_cls[by_cls])) + 1
    for runs in np.split(by_cls, splits):
        c = int(run_cls[runs[0]])
        spans = [(int(starts[k]), int(ends[k])) for k in runs]
        pos = np.concatenate([np.arange(bounds[a], bounds[b + 1]) for a, b in spans])
        rows = order[pos]
        cell = np.concatenate([np.repeat(np.arange(b - a + 1), np.diff(bounds[a:b + 2])) for a, b in spans])
        off = np.cumsum([0] + [b - a + 1 for a, b in spans])
        cell = cell + np.repeat(off[:-1], [bounds[b + 1] - bounds[a] for a, b in spans])
        n_cells = int(off[-1])
        lc = gcounts[c:c + 1]
        if one_qi[c]:
            # every member has the same QIs and GG/RGG order them by a secret draw: permuting
            # their values (and their draws alike) publishes the same files with the same
            # probability, so each has the class's frequency — exact, whatever arrangement of
            # the run's classes the order above took (with this class placed where it could
            # not have been, e.g. not last though only a merged tail explains it, the
            # likelihood would find no world)
            units.append(Unit(rows, cell.astype(np.int64), np.zeros(n_cells, dtype=np.int64), lc, None, algo.name))
            continue
        runs_spec = []
        for (a, b), o in zip(spans, off[:-1].tolist()):
            B = b - a + 1
            A = _admissible(table, order, bounds, a, b, ckeys[c]) if ckeys is not None else None
            runs_spec.append((o, B, A, b < nb - 1, merge and b == nb - 1))
        if p > 0 and not all((suffix_holds[a] and not dropped_after[b + 1]) if len(spans) == 1 and A is None
                             else _never_runs_out(model, domain, a, b, c, cb, suffix, bounds, gcounts[c], A)
                             for (a, b), (_, _, A, followed, _) in zip(spans, runs_spec) if followed):
            # RGG may close a group for want of any later satisfying bucket: that depends on
            # other classes' arrangements — left unresolved rather than guessed
            units.append(Unit(rows, cell.astype(np.int64), np.zeros(n_cells, dtype=np.int64), lc, None, algo.name,
                              unresolved=True))
            continue
        if len(runs_spec) == 1 and not _several_groups(runs_spec[0][2]):
            _, B, _, followed, final = runs_spec[0]
            lik = _one_group(model, domain, p, B, final=final, followed=followed)
            units.append(Unit(rows, cell.astype(np.int64), np.zeros(n_cells, dtype=np.int64), lc, lik["likelihood"],
                              algo.name, chain=lik.get("chain"), set_mask=smask, key=lik.get("key"),
                              chain_params=lik.get("params")))
            continue
        key = ("gg-runs", p, tuple((o, B, None if A is None else A.tobytes(), f, m) for o, B, A, f, m in runs_spec))
        units.append(Unit(rows, cell.astype(np.int64), np.zeros(n_cells, dtype=np.int64), lc,
                          _runs_likelihood(model, domain, p, runs_spec), algo.name, set_mask=smask, key=key))
    return units


def _never_runs_out(model: Any, domain: Any, a: int, b: int, c: int, cb: np.ndarray, counts_after: np.ndarray,
                    bounds: np.ndarray, class_counts: np.ndarray, A: np.ndarray | None) -> bool:
    """Does every group RGG could start in the run ``a..b`` of class ``c`` (its first
    bucket; with label merges, any admissible start) satisfy the model up to the table's
    end in every world? Then an extension never runs out of satisfying buckets before the
    run's last group closes, and the run's weight is its own. From a start ``s`` to the end
    lie: a part of class ``c`` of known size — any sub-multiset of its values (all tried) —
    and whole other classes (known counts); a dropped bucket after ``b`` (unknown values)
    fails the check."""
    nb = cb.size
    if np.any(cb[b + 1:] < 0):
        return False
    other = counts_after[b + 1] - _class_after(cb, bounds, c, b + 1, counts_after)
    starts = [a] if A is None else [a + s for s in range(A.shape[0]) if s == 0 or A[:s, s - 1].any()]
    K = np.asarray(class_counts, dtype=np.int64)
    for s in starts:
        size = int(sum(bounds[x + 1] - bounds[x] for x in range(s, nb) if cb[x] == c))
        lo = np.maximum(0, size - (K.sum() - K))
        hi = np.minimum(size, K)
        pts, _, over = box_points(lo[None], hi[None], np.array([size], dtype=np.int64), 4096.0)
        if over[0] or not bool(holds(model, domain, pts + other[None]).all()):
            return False
    return True


def _class_after(cb: np.ndarray, bounds: np.ndarray, c: int, x0: int, counts_after: np.ndarray) -> np.ndarray:
    """SA counts (as seated) of class ``c``'s buckets from bucket ``x0`` on."""
    out = np.zeros(counts_after.shape[1], dtype=np.int64)
    for x in np.flatnonzero(cb[x0:] == c) + x0:
        out += counts_after[x] - counts_after[x + 1]
    return out


def _admissible(table: EncodedTable, order: np.ndarray, bounds: np.ndarray, a: int, b: int,
                ckey: np.ndarray) -> np.ndarray:
    """``A[s, e]``: buckets ``a+s..a+e`` carry the class's labels. Labels only widen with
    the members, so ``A`` is monotone and each start needs its first admissible end only
    (binary search over all starts at once)."""
    B = b - a + 1
    lo = np.arange(B)
    hi = np.full(B, B)  # first admissible end in [lo, hi]; B = none
    while np.any(lo < hi):
        act = np.flatnonzero(lo < hi)
        mid = (lo[act] + hi[act]) // 2
        ok = _interval_ok(table, order, bounds, a + act, a + mid, ckey)
        hi[act[ok]] = mid[ok]
        lo[act[~ok]] = mid[~ok] + 1
    s, e = np.meshgrid(np.arange(B), np.arange(B), indexing="ij")
    return (e >= lo[:, None]) & (lo[:, None] < B)


def _interval_ok(table: EncodedTable, order: np.ndarray, bounds: np.ndarray, s: np.ndarray, e: np.ndarray,
                 ckey: np.ndarray) -> np.ndarray:
    """Do buckets ``s[i]..e[i]`` (each) carry the labels ``ckey``?"""
    lens = bounds[e + 1] - bounds[s]
    start = np.cumsum(lens) - lens
    pos = np.repeat(bounds[s] - start, lens) + np.arange(int(lens.sum()))
    gid = np.repeat(np.arange(s.size), lens)
    keys = label_keys(table, gid, s.size, order[pos])
    return (keys == ckey[None]).all(axis=(1, 2))


def _several_groups(A: np.ndarray | None) -> bool:
    """Could the run hold several groups with the class's labels?"""
    if A is None:
        return False
    B = A.shape[0]
    reach = np.zeros(B + 1, dtype=bool)
    reach[0] = True
    for s in range(1, B):
        reach[s] = bool(np.any(reach[:s] & A[:s, s - 1]))
    return bool(np.any(reach[1:B] & A[1:B, B - 1]))


def _sub_holds(model: Any, domain: Any, c: np.ndarray, p: float) -> np.ndarray:
    """``H (W, B, B)``: do buckets ``i..j`` satisfy the model, from cell counts ``(W, B, v)``.
    GG (``p = 0``) reads only each start's first satisfying end and the run to the last
    bucket (:func:`~openbook.models.base.first_and_last`; ``gg_run_likelihood`` gives the same
    answer on either matrix), so only those are asked for."""
    W, B = c.shape[0], c.shape[1]
    P = np.zeros((W, B + 1, c.shape[2]), dtype=np.int64)
    np.cumsum(c, axis=1, out=P[:, 1:])
    return model.holds_intervals(P, domain, first_only=p == 0.0)  # chunked, or one compiled pass (t-closeness)


def _runs_likelihood(model: Any, domain: Any, p: float, runs_spec: list) -> Any:
    def lik(c: np.ndarray) -> np.ndarray:
        out = np.ones(c.shape[0])
        for o, B, A, followed, final in runs_spec:
            A_ = A if A is not None else _single(B)
            out *= gg_run_likelihood(_sub_holds(model, domain, c[:, o:o + B], p), A_, p, followed, final)
        return out
    return lik


def _single(B: int) -> np.ndarray:
    A = np.zeros((B, B), dtype=bool)
    A[0, B - 1] = True
    return A


def _one_group(model: Any, domain: Any, p: float, B: int, *, final: bool, followed: bool) -> dict[str, Any]:
    """Likelihood of a run that is one GG/RGG(p) group of ``B`` buckets: the group ending
    the table under ``tail="merge"`` sums over runs (numba DP); any other group is a chain
    of prefix factors — ``p`` (RGG's voluntary merge; 0 for GG) per satisfying prefix
    before the last, then "holds" times ``1 - p`` (the stop) when a bucket follows."""
    if final and B > 1:
        A = _single(B)

        def lik_final(c: np.ndarray) -> np.ndarray:
            return gg_run_likelihood(_sub_holds(model, domain, c, p), A, p, False, True)
        return {"likelihood": lik_final, "key": ("gg-final", B, p)}
    if B == 1:
        return {"likelihood": None}  # one bucket: every world gives the same (verified) group
    stop = (1.0 - p) if followed else 1.0

    def chain(j: int, prefix_counts: np.ndarray) -> np.ndarray:
        H = holds(model, domain, prefix_counts)
        return np.where(H, p, 1.0) if j < B - 1 else H * stop
    return {"likelihood": None, "chain": chain, "key": ("gg-chain", B, stop, p), "params": (model, domain, p, stop)}


def tail_buckets(algo: Any, table: EncodedTable, group: np.ndarray) -> np.ndarray | None:
    """The bucket (along GG's order of ``table``; people with equal QIs seated as
    :func:`settle_ties` seats them, the absent last) of each absent person (``group < 0``), in
    row order — when the absent people are exactly the buckets ending the order (a dropped
    tail); else ``None``."""
    group = np.asarray(group, dtype=np.int64)
    group = group[settle_ties(algo, table, group)]
    absent = group < 0
    order = order_of(algo, table)
    bounds = bucket_bounds(table.n_rows, algo.effective_bucket_size())
    pos = np.empty(table.n_rows, dtype=np.int64)
    pos[order] = np.arange(table.n_rows)
    k = int(absent.sum())
    start = table.n_rows - k
    if k == 0 or start not in set(bounds.tolist()) or not np.all(pos[absent] >= start):
        return None
    return np.searchsorted(bounds, pos[absent], side="right") - 1


def settle_ties(algo: Any, table: EncodedTable, group: np.ndarray) -> np.ndarray:
    """People with equal QIs are interchangeable to the adversary, so which of them sits in
    which group is the auditor's choice: within each run of equal QI tuples along the
    algorithm's order, seat groups that started before the run first and groups that go on
    after it last — the seating under which the groups are consecutive, as GG/SG made them.
    Returns ``take``: person ``i`` takes the seat (group, published row, SA) of person
    ``take[i]`` — always someone with the same QIs — so every per-person record of the
    seating moves with the group (``group[take]``, ``row[take]``)."""
    order = order_of(algo, table)
    key, _ = group_ids(table.qi_codes)
    k = key[order]
    g = group[order]
    n = g.size
    take = np.arange(n)
    if n == 0:
        return take
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], n]
    pos = np.arange(n)
    valid = g >= 0
    n_groups = int(group.max()) + 1 if valid.any() else 0
    first = np.full(n_groups, n, dtype=np.int64)
    last = np.full(n_groups, -1, dtype=np.int64)
    np.minimum.at(first, g[valid], pos[valid])
    np.maximum.at(last, g[valid], pos[valid])
    along = np.arange(n)  # position i takes the seat of position along[i]
    for a, b in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist()):
        seg = g[a:b]
        rank = np.where(seg < 0, 3, np.where(first[np.maximum(seg, 0)] < a, 0,
                                              np.where(last[np.maximum(seg, 0)] >= b, 2, 1)))
        along[a:b] = a + np.lexsort((seg, rank))
    take[order] = order[along]
    return take
