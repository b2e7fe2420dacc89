"""Who sits in which class of a generalized GG/RGG or SG release read from its files
(paper 000 §2.3, §4.1, App. C.3; issue 26).

A generalized release publishes each class's labels and SA multiset, not which person is
in it: where labels overlap, the seating is found by growing the groups again along the QI
order, depth-first with backtracking within a step budget.

* Ties by row position (``ties="input"``): every person has a position, and GG/RGG's
  growth is replayed on the knowledge table's values (:func:`run_seating`): a group closes
  where it satisfies the model (GG: the first bucket; RGG: any) and carries the labels of a
  class whose SA multiset still holds its members' values; the tail is dropped or merged.
* Random ties (``ties_at_random``): which of the people with equal QIs sits on each side of
  a border, and so which values, is unknown. The groups are grown by their labels and their
  classes' row counts, the model checked only where a group's values do not depend on that
  order (it starts and ends between runs of equal QIs); who of a run sits where is
  arbitrary — they are interchangeable, and the replay averages over them
  (:func:`_by_structure`; SG: node by node of its even split tree, :func:`sg_seating`).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ...algorithms.greedy import bucket_bounds
from ...data.grouping import group_ids
from ...data.table import EncodedTable
from ...release.align import label_keys
from .engine import holds
from .greedy import order_of


def run_seating(algo: Any, release: Any, knowledge: EncodedTable, budget: int = 200_000) -> np.ndarray | None:
    """The class of every person (``Release.classes()`` numbering, ``-1`` absent) in a
    generalized GG/RGG release (module docstring), found by growing the groups as GG/RGG can
    along the QI order: from each group start, a group may close at a bucket where it satisfies the
    model (GG: the first; RGG: any), and must then carry the labels of a class whose SA
    multiset still holds its members' values; the tail is dropped or merged back as the
    algorithm's ``tail`` says. Depth-first with backtracking; ``None`` when no growth, or
    none within ``budget`` steps, publishes the file."""
    import pandas as pd

    from ...release.align import class_label_keys

    model, domain = algo.model, knowledge.sa_domain
    p = float(getattr(algo, "p", 0.0) or 0.0) if algo.name == "rgg" else 0.0
    cls_rows, n_cls = release.classes()
    counts, dom = release.sa_counts()
    idx = pd.Index([str(v) for v in dom.values]).get_indexer([str(v) for v in domain.values])
    cap = np.zeros((n_cls, domain.n_values), dtype=np.int64)
    cap[:, idx >= 0] = counts[:, idx[idx >= 0]]
    if cap.sum() != counts.sum():
        return None
    keys = class_label_keys(release, knowledge).reshape(n_cls, -1)
    by_key = {k.tobytes(): c for c, k in enumerate(keys)}
    n = knowledge.n_rows
    order = order_of(algo, knowledge)
    bounds = bucket_bounds(n, algo.effective_bucket_size())
    nb = bounds.size - 1
    sa_pos = np.asarray(knowledge.sa_codes, dtype=np.int64)[order]
    P = np.zeros((nb + 1, domain.n_values), dtype=np.int64)
    np.add.at(P, (np.searchsorted(bounds, np.arange(n), side="right"), sa_pos), 1)
    np.cumsum(P, axis=0, out=P)
    span = int(np.ceil(cap.sum(axis=1).max(initial=0) / max(1, algo.effective_bucket_size()))) + 1
    published = int(cap.sum())
    if algo.ties_at_random:
        return _by_structure(algo, release, knowledge, order, bounds, span, published, budget, by_key)

    def closes(s: int) -> list[tuple[int, int]]:
        """(end, class) where a group from bucket ``s`` may close and what it would publish."""
        e = np.arange(s, min(nb, s + span))
        ok = holds(model, domain, P[e + 1] - P[s])
        e = e[ok]
        if p == 0.0:
            e = e[:1]
        if e.size == 0:
            return []
        lens = bounds[e + 1] - bounds[s]
        gid = np.repeat(np.arange(e.size), lens)
        pos = np.concatenate([np.arange(bounds[s], bounds[x + 1]) for x in e])
        k = label_keys(knowledge, gid, e.size, order[pos]).reshape(e.size, -1)
        out = []
        for i, x in enumerate(e.tolist()):
            c = by_key.get(k[i].tobytes())
            if c is not None and np.all(cap[c] >= P[x + 1] - P[s]):
                out.append((x, c))
        return out

    groups: list[tuple[int, int, int]] = []  # groups[k] leads from stack[k] to stack[k + 1]
    stack = [[0, closes(0), 0]]
    steps = 0
    done = False

    def undo() -> None:
        s0, e0, c0 = groups.pop()
        cap[c0] += P[e0 + 1] - P[s0]
    while stack:
        steps += 1
        if steps > budget:
            return None
        s, cands, i = cast(tuple[int, list[tuple[int, int]], int], tuple(stack[-1]))
        if i == 0 and not cands:  # nothing closes from s: the tail
            if _tail(s, nb, groups, cap, P, bounds, published, algo, model, domain, knowledge, order, by_key):
                done = True
                break
        elif i < len(cands):
            stack[-1][2] = i + 1
            e, c = cands[i]
            cap[c] -= P[e + 1] - P[s]
            groups.append((s, e, c))
            if e + 1 < nb:
                stack.append([e + 1, closes(e + 1), 0])
                continue
            if not cap.any():
                done = True
                break
            undo()
            continue
        stack.pop()  # every way on from s failed
        if groups:
            undo()
    if not done:
        return None
    group = np.full(n, -1, dtype=np.int64)
    for s, e, c in groups:
        group[order[bounds[s]:bounds[e + 1]]] = c
    return group


def _tail(s: int, nb: int, groups: list, cap: np.ndarray, P: np.ndarray, bounds: np.ndarray, published: int,
          algo: Any, model: Any, domain: Any, knowledge: EncodedTable, order: np.ndarray, by_key: dict) -> bool:
    """No group closes from bucket ``s``: the tail is dropped (the file must end there) or
    merged back into the groups until the merged group holds (greedy.py ``_merge_tail``);
    on success ``groups`` holds the final grouping."""
    if getattr(algo, "tail", "merge") == "drop":
        return int(bounds[s]) == published and not cap.any()
    popped = []
    start = s
    while groups:
        s0, e0, c0 = groups.pop()
        cap[c0] += P[e0 + 1] - P[s0]
        popped.append((s0, e0, c0))
        start = s0
        if holds(model, domain, (P[nb] - P[start])[None])[0]:
            break
    else:
        start = 0
    pos = np.arange(bounds[start], bounds[nb])
    k = label_keys(knowledge, np.zeros(pos.size, dtype=np.int64), 1, order[pos]).reshape(-1)
    c = by_key.get(k.tobytes())
    if c is not None and np.all(cap[c] >= P[nb] - P[start]):
        cap[c] -= P[nb] - P[start]
        if not cap.any():
            groups.append((start, nb - 1, c))
            return True
        cap[c] += P[nb] - P[start]
    for g in reversed(popped):  # restore
        groups.append(g)
        cap[g[2]] -= P[g[1] + 1] - P[g[0]]
    return False


def sg_seating(algo: Any, release: Any, knowledge: EncodedTable, budget: int = 200_000) -> np.ndarray | None:
    """The class of every person in a generalized SG release (paper 000 App. C.3) whose
    people with equal QIs were ordered at random: SG's leaves are nodes of the even split
    tree of the QI order, so the classes are grown node by node along the order, by their
    labels and row counts (:func:`_by_structure`); ``None`` when nothing publishes the file."""
    from ...algorithms.symmetric import sg_split_point
    from ...release.align import class_label_keys

    n = knowledge.n_rows
    cls_rows, n_cls = release.classes()
    if int((cls_rows >= 0).sum()) != n:
        return None  # SG publishes everyone
    keys = class_label_keys(release, knowledge).reshape(n_cls, -1)
    by_key = {k.tobytes(): c for c, k in enumerate(keys)}
    ends: dict[int, list[int]] = {}
    todo = [(0, n)] if n else []
    while todo:
        a, b = todo.pop()
        ends.setdefault(a, []).append(b - 1)  # bucket (= position) index of the node's last row
        if b - a >= 2:
            m = int(sg_split_point(a, b))
            todo += [(a, m), (m, b)]
    order = order_of(algo, knowledge)
    return _by_structure(algo, release, knowledge, order, np.arange(n + 1), n + 1, n, budget, by_key,
                         ends={a: sorted(v) for a, v in ends.items()}, checks=False)


def _by_structure(algo: Any, release: Any, knowledge: EncodedTable, order: np.ndarray, bounds: np.ndarray,
                  span: int, published: int, budget: int, by_key: dict, *, ends: dict[int, list[int]] | None = None,
                  checks: bool = True) -> np.ndarray | None:
    """The seating when people with equal QIs were ordered at random: groups grown by their
    labels and their classes' row counts, the model checked where a group's (or a GG
    prefix's) values do not depend on the unknown order inside runs of equal QIs — it
    starts and ends between runs. Which of a run's people sits in which of its groups is
    arbitrary (they are interchangeable); the values are then seated from the classes'
    published multisets (``exact=False``). ``ends``: the last bucket of each group that may
    start at a bucket (SG's tree nodes; default any within ``span``); ``checks=False``: no
    model check and no tail (SG)."""
    model, domain = algo.model, knowledge.sa_domain
    p = float(getattr(algo, "p", 0.0) or 0.0) if algo.name == "rgg" else 0.0
    n, nb = knowledge.n_rows, bounds.size - 1
    cls_rows, n_cls = release.classes()
    left = np.bincount(cls_rows[cls_rows >= 0], minlength=n_cls).astype(np.int64)
    k = group_ids(knowledge.qi_codes)[0][order] if n else np.zeros(0, dtype=np.int64)
    at_border = np.r_[True, k[1:] != k[:-1], True]  # position i starts a run (i == n: the end)
    sa_pos = np.asarray(knowledge.sa_codes, dtype=np.int64)[order]
    P = np.zeros((n + 1, domain.n_values), dtype=np.int64)
    np.add.at(P, (np.arange(1, n + 1), sa_pos), 1)
    np.cumsum(P, axis=0, out=P)

    def known(a: int, b: int) -> np.ndarray | None:
        """Counts of positions ``a..b-1`` if no run crosses either end."""
        return P[b] - P[a] if at_border[a] and at_border[b] else None

    def label_class(a: int, b: int) -> int | None:
        pos = np.arange(a, b)
        key = label_keys(knowledge, np.zeros(pos.size, dtype=np.int64), 1, order[pos]).reshape(-1)
        return by_key.get(key.tobytes())

    cache: dict[int, list[tuple[int, int]]] = {}
    tail_ok: dict[int, bool] = {}

    def closes(s: int) -> list[tuple[int, int]]:
        hit = cache.get(s)
        if hit is not None:
            return hit
        p0 = int(bounds[s])
        e_all = np.arange(s, min(nb, s + span)) if ends is None else np.asarray(ends.get(s, []), dtype=np.int64)
        if e_all.size == 0:
            cache[s], tail_ok[s] = [], checks
            return []
        lens = bounds[e_all + 1] - p0
        gid = np.repeat(np.arange(e_all.size), lens)
        pos = np.concatenate([np.arange(p0, bounds[x + 1]) for x in e_all])
        keys = label_keys(knowledge, gid, e_all.size, order[pos]).reshape(e_all.size, -1)
        out, ok_tail = [], True
        for i, e in enumerate(e_all.tolist()):
            p1 = int(bounds[e + 1])
            cnt = known(p0, p1) if checks else None
            h = None if cnt is None else bool(holds(model, domain, cnt[None])[0])
            c = by_key.get(keys[i].tobytes())
            if c is not None and h is not False:
                out.append((e, c))
            if h:
                ok_tail = False
                if p == 0.0:
                    break  # GG closes at the first satisfying bucket
        cache[s], tail_ok[s] = out, ok_tail and checks
        return out

    # the last start from which a group can carry each class's labels; a class still short of
    # rows past it is a dead end (the merged tail's possible classes aside)
    last_start = np.full(n_cls, -1, dtype=np.int64)
    for s in range(nb):
        for _, c in closes(s):
            last_start[c] = s
    longest = int(left.max(initial=0))
    for s in range(nb - 1, -1, -1):
        if not checks or n - int(bounds[s]) > longest:
            break
        tc = label_class(int(bounds[s]), n)
        if tc is not None:
            last_start[tc] = nb
    groups: list[tuple[int, int, int]] = []
    failed: set[tuple[int, bytes]] = set()  # (start, classes' rows left) from which nothing publishes the file
    stack: list[list[Any]] = [[0, 0]]
    steps = 0
    tail: tuple[int, int] | None = None  # (first position, class) of a merged tail; (-1, -1): dropped
    while stack:
        steps += 1
        if steps > budget:
            return None
        s, i = stack[-1]
        dead = bool(np.any((left > 0) & (last_start < s)))
        cands = [] if dead else [x for x in closes(s) if int(bounds[x[0] + 1] - bounds[s]) <= left[x[1]]]
        # a group that completes its class first (the common case: a class is one group)
        cands.sort(key=lambda x: (int(bounds[x[0] + 1] - bounds[s]) != left[x[1]], x[0]))
        if i < len(cands):
            stack[-1][1] = i + 1
            e, c = cands[i]
            left[c] -= bounds[e + 1] - bounds[s]
            groups.append((s, e, c))
            if e + 1 < nb and (e + 1, left.tobytes()) not in failed:
                stack.append([e + 1, 0])
                continue
            if e + 1 >= nb and not left.any():
                break
            s0, e0, c0 = groups.pop()
            left[c0] += bounds[e0 + 1] - bounds[s0]
            continue
        if i == len(cands) and not dead and tail_ok.get(s, True):
            stack[-1][1] = i + 1
            tail = _structure_tail(s, groups, left, algo, model, domain, bounds, n, published, known, label_class)
            if tail is not None:
                break
        stack.pop()
        failed.add((s, left.tobytes()))  # every way on from here failed: never again
        if groups and stack:
            s0, e0, c0 = groups.pop()
            left[c0] += bounds[e0 + 1] - bounds[s0]
    else:
        return None
    group = np.full(n, -1, dtype=np.int64)
    for s, e, c in groups:
        group[order[bounds[s]:bounds[e + 1]]] = c
    if tail is not None and tail[1] >= 0:
        group[order[tail[0]:]] = tail[1]
    return group


def _structure_tail(s: int, groups: list, left: np.ndarray, algo: Any, model: Any, domain: Any, bounds: np.ndarray,
                    n: int, published: int, known: Any, label_class: Any) -> tuple[int, int] | None:
    """:func:`_by_structure`'s tail from bucket ``s``: dropped (the file ends there) or merged
    back into the last groups until the merged group holds — each number of groups merged
    tried, the model checked where the values are known. On success ``groups`` holds the
    groups before the merged one and the tail's ``(first position, class)`` is returned
    (``(-1, -1)``: dropped); else ``None``, nothing changed."""
    if getattr(algo, "tail", "merge") == "drop":
        return (-1, -1) if int(bounds[s]) == published and not left.any() else None
    popped: list[tuple[int, int, int]] = []
    start = int(bounds[s])
    while True:
        cnt = known(start, n)
        h = None if cnt is None else bool(holds(model, domain, cnt[None])[0])
        if popped or not groups:  # the tail alone is a group only when it is the whole table
            c = label_class(start, n)
            if c is not None and h is not False and left[c] == n - start and (left > 0).sum() == 1:
                left[c] = 0
                return (start, c)
        if (popped and h) or not groups:
            break  # the merge stops at the first group after which the tail holds
        g = groups.pop()
        left[g[2]] += bounds[g[1] + 1] - bounds[g[0]]
        popped.append(g)
        start = int(bounds[g[0]])
    for g in reversed(popped):
        groups.append(g)
        left[g[2]] -= bounds[g[1] + 1] - bounds[g[0]]
    return None
