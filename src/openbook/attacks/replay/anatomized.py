"""The replay of anatomization over a base algorithm (paper 000 §3.1, §5.3: ``SG(Ana)``,
``GG(Ana)``, ``anatomize`` over any deterministic base): the probability that the algorithm,
re-run on a possible world, publishes the observed groups.

A world ``W`` assigns each published group's SA multiset to its members. The base algorithm
re-run on ``W`` (deterministic: the same groups every time) gives its groups ``β(W)``; Anatomy
then splits each base group ``b`` with a uniformly random order of each SA value's rows
(:mod:`openbook.algorithms.anatomy`). Which *values* each of Anatomy's groups receives —
the top-ℓ rounds, the residue rows, a group kept whole — is a function of ``b``'s SA counts
``c`` alone; which *rows* of value ``v`` go to which of its slots is one of ``c_v!`` equally
likely orders. So the published groups (unordered: the files number groups by content) come
out of ``b`` with probability

    [every published group inside ``b`` has a group of Anatomy's structure with its values,
     one to one]  ·  Π_S mult(S)!  /  Π_v c_v!

(``mult(S)``: how many of the structure's groups hold the value set ``S`` — they may be
matched with the published ones in any order), and ``1`` when Anatomy keeps ``b`` whole and
``b`` is one published group. The world's weight is the product over ``β(W)``'s groups, ``0``
when a published group straddles two base groups.

Over a **strict Mondrian** base the replay needs no re-run (:func:`anatomized_mondrian_units`).
The base's groups are unions of the published groups, and each of its decisions compares a
cut's two sides: a cut that parts no published group has sides whose SA counts every world
shares (sums of published multisets), so it comes out as it did; a cut that parts one must
have been refused (else the group would straddle two base groups). So every world of positive
weight gives the base the same groups ``β`` — the adversary reads them off the file — and
Anatomy's factor, a function of ``β``'s counts, is the same for all of them: a world's weight is
``[every cut that parts a published group is refused in it]``, the decisions of
:mod:`.mondrian`'s walk with the published groups as its classes, on any number of worlds.
Strict cuts never part people with equal QIs, and Anatomy seats each base group's rows by
uniform random keys, so people with equal QIs are interchangeable: each one's posterior is the
mean over their set's seats (trait ``interchangeable_ties``; :func:`.attack.tie_average`).

Over other bases the worlds are enumerated exactly within the replay's ``rerun_limit`` (the
base algorithm is re-run on each); past it — or when people with equal QIs make the seating
unknowable — the unit is unresolved. ``tests/contract/test_adversary_brute_force.py``
checks the posteriors against a brute force that re-runs the whole algorithm on every world
over every order of Anatomy's draws.
"""

from __future__ import annotations

from collections import Counter
from math import lgamma
from typing import Any

import numpy as np

from ...algorithms.anatomy import anatomy_value_sets
from ...data.table import EncodedTable
from ...errors import OpenbookError
from ...progress import silenced, track
from .generic import with_sa
from .splits import SplitWalk, assemble_units


def anatomy_log_probability(sa: np.ndarray, base_group: np.ndarray, group: np.ndarray, l: int,
                            n_sa: int) -> float:
    """Natural log of the probability that Anatomy inside each group of ``base_group``
    publishes the (unordered) groups ``group``, the rows' SA codes being ``sa`` (module
    docstring); ``-inf`` when it cannot."""
    sa = np.asarray(sa, dtype=np.int64)
    base_group = np.asarray(base_group, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    if np.any((base_group < 0) != (group < 0)):
        return float("-inf")
    out = 0.0
    keep = base_group >= 0
    order = np.lexsort((group[keep], base_group[keep]))
    rows = np.flatnonzero(keep)[order]
    bg = base_group[rows]
    starts = np.flatnonzero(np.r_[True, bg[1:] != bg[:-1]]) if rows.size else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], rows.size]
    owner: dict[int, int] = {}
    for a, b in zip(starts.tolist(), ends.tolist()):
        r = rows[a:b]
        gids = group[r]
        for g in np.unique(gids).tolist():  # a published group in two base groups: impossible
            if owner.setdefault(int(g), int(bg[a])) != int(bg[a]):
                return float("-inf")
        counts = np.bincount(sa[r], minlength=n_sa)
        structure = anatomy_value_sets(counts, l)
        published = Counter(tuple(sorted(sa[r][gids == g].tolist())) for g in np.unique(gids).tolist())
        if structure is None:  # kept whole: the base group is one published group
            if len(published) != 1 or sum(published.values()) != 1:
                return float("-inf")
            continue
        if Counter(structure) != published:
            return float("-inf")
        out += sum(lgamma(m + 1.0) for m in published.values()) - sum(lgamma(float(c) + 1.0) for c in counts)
    return out


def anatomized_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
                     levels: Any = None, generalized: bool = False,
                     rerun_limit: float | None = None) -> tuple[list | None, str]:
    """One unit, the whole table, one cell per row (as :func:`.generic.rerun_units`), each
    world weighed by the probability that the base algorithm re-run on it and Anatomy inside
    its groups publish the observed groups — relative to the true world's, a constant of the
    unit (the posterior does not depend on it; it keeps the weights in floating range).
    ``(None, why)`` when the base cannot be re-run as it ran (people with equal QIs, whom
    nothing published tells apart; withheld rows). The caller has checked the worlds against
    ``rerun_limit`` (Anatomy's draws are weighed in closed form, not re-run); groups that a
    release written as generalized merges are refused (the true world does not publish them)."""
    from ...algorithms.anatomy import anatomy_l
    from ...algorithms.registry import make_algorithm
    from ...data.grouping import group_ids
    from .engine import Unit
    from .generic import canonical

    if np.any(group < 0):
        return None, "the release withheld rows (their values, and so the base's groups, are unknown)"
    base = make_algorithm(algo.base, model=algo.model, seed=algo.seed, **algo.base_params)
    if not base.deterministic:
        return None, f"{algo.base} draws at random: a re-run is not its law"
    if group_ids(table.qi_codes)[1] < table.n_rows:
        # which of the people with equal QIs sits in which published group is Anatomy's secret draw
        # (the files tell them apart by nothing), and the base orders them by position or at
        # random: the seating — in memory the publisher's, from the files one of many — would
        # decide the posterior; not replayed (found by tests/soundness: a pass in memory, a
        # failure from the files)
        return None, "people with equal QIs: which of them sits in which group is not known"
    l = anatomy_l(algo.name, algo.l, algo.model, table)
    n, n_sa = table.n_rows, table.sa_domain.n_values
    rows = np.argsort(group, kind="stable")
    leaf = group[rows]
    ref_group = canonical(group)

    def log_weight(sa: np.ndarray) -> float:
        try:
            bg = base.partition(with_sa(table, sa)).group
        except OpenbookError:  # the base refuses this world: no release
            return float("-inf")
        return anatomy_log_probability(sa, bg, ref_group, l, n_sa)

    ref = log_weight(np.asarray(table.sa_codes, dtype=np.int64))
    if not np.isfinite(ref):
        return None, "re-run on the true values, the base algorithm and Anatomy do not publish these groups"

    def lik(c: np.ndarray) -> np.ndarray:
        out = np.zeros(c.shape[0])
        sa = np.empty(n, dtype=np.int64)
        for w in track(range(c.shape[0]), f"replay adversary: {algo.base} re-run on each world"):
            sa[rows] = np.argmax(c[w], axis=1)
            with silenced():
                lw = log_weight(sa)
            out[w] = np.exp(lw - ref) if np.isfinite(lw) else 0.0
        return out
    return [Unit(rows, np.arange(n, dtype=np.int64), leaf.astype(np.int64), gcounts, lik, "anatomized")], ""


class _UnionWalk(SplitWalk):
    """The Mondrian walk whose leaves are unions of the published groups: a cut that parts a
    group is refused (module docstring); any other cut decides as on the seated table, whose
    sides' counts are every world's."""

    def __init__(self, model: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray) -> None:
        super().__init__(model, table, group, gcounts, False, follow_classes=True)
        self._suspect = np.zeros(0, dtype=np.int64)

    def _as_published(self, cuts: Any, truth: np.ndarray) -> np.ndarray:
        pos, cut = cuts.segments()
        self._suspect = np.zeros(0, dtype=np.int64)
        if pos.size == 0:
            return truth
        key = cut.astype(np.int64) * self.n_cls + self.group[cuts.rows[pos]]
        left = cuts.left_mask()
        parted = np.intersect1d(key[left], key[~left]) // self.n_cls
        # a parted cut the seated table takes: that arrangement is no world of the release —
        # perhaps none is (a file no run publishes): always a constraint, never a constant
        self._suspect = parted[truth[parted]]
        out = truth.copy()
        out[parted] = False
        return out

    def _constant(self, dep: np.ndarray, *args: Any) -> np.ndarray:
        out = super()._constant(dep, *args)
        # a walk without regions reads every cut: ``dep`` indexes the cuts _as_published saw
        out[np.isin(dep, self._suspect)] = False
        return out


#: bases whose anatomization is replayed along their order (:mod:`.anatomized_order`; SG's
#: even-split tree over it, :mod:`.anatomized_tree`)
ORDER_BASES = ("gg", "rgg", "sg")


def anatomized_reason(params: dict[str, Any], over: bool) -> str | None:
    """How the certificate says a run with ``params`` is replayed without a re-run (module
    docstring), or ``None`` (its worlds are re-run within ``rerun_limit``)."""
    if params.get("base") == "sg":
        return ("weighed along SG's even-split tree — every way the files' groups can form SG's base groups "
                "(the tree's leaves), each weighed by Anatomy's draws, every node above them split and every leaf "
                "refused, over every seating of the people and values inside (exact, no re-run)")
    if params.get("base") in ORDER_BASES:
        return ("weighed along its base's order — every way the files' groups can form GG/RGG's base groups "
                "(bucket runs), each weighed by Anatomy's draws and the probability that the base closes each "
                "group where it ends, over every seating of the people and values inside (exact, no re-run)")
    if params.get("base") != "mondrian" or not params.get("strict", True):
        return None
    return ("weighed by its strict Mondrian base's decisions — the base's groups read off the file, every cut "
            "that parts a published group refused; people with equal QIs share their seats' mean (no re-run)")


def anatomized_shortcut_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                              levels: Any = None) -> tuple[list | None, str]:
    """The units of anatomization replayed without a re-run — over a strict Mondrian base
    (:func:`anatomized_mondrian_units`), GG/RGG (:mod:`.anatomized_order`) or SG
    (:mod:`.anatomized_tree`) — or ``(None, why)``."""
    if getattr(algo, "base", None) in ORDER_BASES:
        return anatomized_order_units(algo, table, group, gcounts, levels)
    return anatomized_mondrian_units(algo, table, group, gcounts, levels)


def anatomized_order_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                           levels: Any = None) -> tuple[list | None, str]:
    """One unit whose posteriors :func:`.anatomized_order.greedy_posterior` (GG/RGG) or
    :func:`.anatomized_tree.sg_posterior` (SG) computes."""
    from ...algorithms.anatomy import anatomy_l
    from ...algorithms.registry import make_algorithm
    from .anatomized_order import greedy_posterior
    from .anatomized_tree import sg_posterior
    from .engine import Unit

    if np.any(group < 0):
        return None, "the release withheld rows (their values, and so the base's groups, are unknown)"
    base: Any = make_algorithm(algo.base, model=algo.model, seed=algo.seed, **algo.base_params)
    if base.order != "lex":
        return None, f"a {base.order} order may sort people with different QIs by the secret tie order"
    l = anatomy_l(algo.name, algo.l, algo.model, table)
    post, why = (sg_posterior if algo.base == "sg" else greedy_posterior)(base, table, np.asarray(group, dtype=np.int64), gcounts, l)
    if post is None:
        return None, why
    rows = np.argsort(group, kind="stable")
    n = rows.size
    return [Unit(rows, np.arange(n, dtype=np.int64), np.asarray(group, dtype=np.int64)[rows], gcounts, None,
                 "anatomized", posterior=post[rows])], ""


def anatomized_mondrian_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                              levels: Any = None) -> tuple[list | None, str]:
    """The units of anatomization over a strict Mondrian base (module docstring), on any
    number of worlds; ``(None, why)`` over another base."""
    from ...algorithms.anatomy import anatomy_l
    from ...algorithms.mondrian_planner import MondrianSpace, mondrian_plan
    from ...algorithms.registry import make_algorithm
    from ...models.promise import size_floor

    if getattr(algo, "base", None) != "mondrian":
        return None, "only a strict Mondrian base is replayed without re-running it"
    base: Any = make_algorithm(algo.base, model=algo.model, seed=algo.seed, **algo.base_params)
    if not base.strict:
        return None, "a relaxed Mondrian base parts people with equal QIs by row order"
    if np.any(group < 0):
        return None, "the release withheld rows (their values, and so the base's groups, are unknown)"
    n_sa = gcounts.shape[1]
    walk = _UnionWalk(base.model, table, group, gcounts)
    space = MondrianSpace(table, base.categorical)
    sa = np.asarray(table.sa_codes, dtype=np.int64)
    tree = mondrian_plan(space, space.matrix(table), sa.astype(np.int32), n_sa, walk, strict=True,
                         floor=size_floor(base.model))
    l = anatomy_l(algo.name, algo.l, algo.model, table)
    if not np.isfinite(anatomy_log_probability(sa, tree.group, group, l, n_sa)):
        return None, "Anatomy inside the base's groups does not publish these groups"

    def never(rows: np.ndarray) -> Any:  # a bucketized walk has no region
        raise AssertionError("no region in a walk whose classes are told apart")
    return assemble_units(walk, group, gcounts, "anatomized", never), ""
