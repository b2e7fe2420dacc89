"""Anatomy (Xiao & Tao, VLDB 2006) and the "anatomization of large groups" (paper 000 §2.3,
§3.1, §5.3: ``RGG(Ana)``, ``SG(Ana)``, ``Base(Ana)``).

Anatomy forms groups from the sensitive attribute alone: "repeatedly identifying the current
top-ℓ (i.e. most frequent) SA values among the ungrouped rows. For each top-ℓ value, it picks
an ungrouped row with this value at random, and forms the ℓ picked rows into a new group. The
process terminates when there are fewer than ℓ remaining ungrouped rows, and these are
assigned to existing groups while maintaining ℓ-diversity" (§2.3). Random picks are made by
shuffling each SA value's rows once with the seeded generator and taking them in that order;
ties among equally frequent values go to the smaller SA code; a residue row joins the first
group (in creation order) that lacks its value. Every group then holds ℓ (or ℓ+1, ...)
distinct SA values, each once: distinct, entropy, recursive (c>1) and simple ℓ-diversity
all hold. Being SA-only, Anatomy is safe from the minimality attack (Claim 4).

Anatomy needs an ℓ-eligible table — no SA value in more than ``n/ℓ`` rows (paper 004 §2;
Xiao & Tao Lemma 1): otherwise :class:`InfeasibleError`.

**Anatomization** runs Anatomy inside every group of another algorithm's partition (§3.1):
"provided a group is ℓ-diverse, executing the Anatomy algorithm on the group partitions it
further in groups of size (approximately) ℓ". A group that is not ℓ-eligible (possible under
distinct ℓ-diversity, which does not bound frequencies) is kept whole. Groups are numbered
by input group, then creation order; ``Partition.extra["parent_group"]`` maps each output
group to the input group it came from.

The grouping is *bucketized* (QI-table + SA-table): paper 000 §5 uses permutation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..catalog import CATALOG
from ..data.table import EncodedTable
from ..errors import InfeasibleError, ParameterError
from ..models.base import PrivacyModel
from ..models.promise import promised_l_int
from ..params import Integer, Optional, Options
from ..release import Partition
from .base import Anonymizer
from .registry import make_algorithm

#: anonymizers that anatomize already (no base of anatomization)
ANATOMIZED_NAMES = ("anatomize", "rgg-ana", "gg-ana", "sg-ana", "base-ana", "anatomy")


@njit(cache=True)
def _anatomy_kernel(sorted_sa, grp_start, n_sa, l, out):  # pragma: no cover - compiled
    """Anatomy inside each input group. ``sorted_sa`` are the SA codes of the rows sorted
    by (input group, SA code, random key); ``grp_start`` the input groups' boundaries.
    Writes a group id per sorted position into ``out``; returns (n_groups, status per input
    group: 1 anatomized, 0 kept whole)."""
    n_in = grp_start.size - 1
    status = np.zeros(n_in, np.int64)
    next_gid = 0
    cnt = np.zeros(n_sa, np.int64)
    ptr = np.zeros(n_sa, np.int64)
    for g in range(n_in):
        a, b = grp_start[g], grp_start[g + 1]
        size = b - a
        cnt[:] = 0
        for q in range(a, b):
            cnt[sorted_sa[q]] += 1
        mx = 0
        distinct = 0
        for v in range(n_sa):
            if cnt[v] > mx:
                mx = cnt[v]
            if cnt[v] > 0:
                distinct += 1
        if l <= 1 or mx * l > size or distinct < l:
            for q in range(a, b):
                out[q] = next_gid
            next_gid += 1
            continue
        # start of each value's rows
        acc = a
        for v in range(n_sa):
            ptr[v] = acc
            acc += cnt[v]
        first_gid = next_gid
        members = np.empty(size, np.int64)  # sorted positions in creation order
        nm = 0
        remaining = size
        chosen = np.empty(l, np.int64)
        while True:
            # top-l values by remaining count (ties: smaller code)
            nz = 0
            for v in range(n_sa):
                if cnt[v] > 0:
                    nz += 1
            if nz < l:
                break
            used = np.zeros(n_sa, np.bool_)
            for s in range(l):
                best = -1
                for v in range(n_sa):
                    if not used[v] and cnt[v] > 0 and (best < 0 or cnt[v] > cnt[best]):
                        best = v
                used[best] = True
                chosen[s] = best
            for s in range(l):
                v = chosen[s]
                q = ptr[v]
                ptr[v] += 1
                cnt[v] -= 1
                out[q] = next_gid
                members[nm] = q
                nm += 1
            next_gid += 1
            remaining -= l
        okg = True
        n_made = next_gid - first_gid
        has = np.zeros((n_made, n_sa), np.bool_)
        for k in range(n_made):
            for s in range(l):
                has[k, sorted_sa[members[k * l + s]]] = True
        for v in range(n_sa):
            while cnt[v] > 0:
                q = ptr[v]
                ptr[v] += 1
                cnt[v] -= 1
                placed = False
                for k in range(n_made):
                    if not has[k, v]:
                        has[k, v] = True
                        out[q] = first_gid + k
                        placed = True
                        break
                if not placed:
                    okg = False
        if not okg or n_made == 0:
            for q in range(a, b):
                out[q] = first_gid
            next_gid = first_gid + 1
            continue
        status[g] = 1
    return next_gid, status


def anatomize_groups(table: EncodedTable, group: np.ndarray, n_groups: int, l: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Run Anatomy inside every group of ``group`` (``-1`` rows stay suppressed).

    Returns ``(new_group, n_new, parent_group, anatomized)``: ``parent_group[h]`` is the
    input group of output group ``h``; ``anatomized[g]`` says whether input group ``g`` was
    split (False: kept whole, not ℓ-eligible)."""
    n = table.n_rows
    keep = np.flatnonzero(group >= 0)
    sa = table.sa_codes[keep].astype(np.int64)
    g = group[keep]
    key = rng.random(keep.size)
    order = np.lexsort((key, sa, g))
    sorted_sa = sa[order]
    starts = np.searchsorted(g[order], np.arange(n_groups + 1))
    out = np.empty(keep.size, dtype=np.int64)
    n_sa = table.columns[table.sa_name].n_values
    n_new, status = _anatomy_kernel(sorted_sa, starts.astype(np.int64), n_sa, int(l), out)
    new_group = np.full(n, -1, dtype=np.int64)
    new_group[keep[order]] = out
    parent = np.zeros(int(n_new), dtype=np.int64)
    parent[out] = g[order]
    return new_group, int(n_new), parent, status.astype(bool)


def anatomy_value_sets(counts: np.ndarray, l: int) -> list[tuple[int, ...]] | None:
    """The value sets (sorted SA codes) of the groups Anatomy makes from one input group whose
    SA counts are ``counts``, in creation order — a function of the counts alone (the top-ℓ
    rounds, the residue rows) — or ``None`` when it keeps the group whole. Which rows of a
    value fill which of its slots is the random part (the adversary's replay,
    :mod:`openbook.attacks.replay.anatomized`)."""
    counts = np.asarray(counts, dtype=np.int64)
    sa = np.repeat(np.arange(counts.size), counts)
    out = np.empty(sa.size, dtype=np.int64)
    _, status = _anatomy_kernel(sa, np.array([0, sa.size], dtype=np.int64), counts.size, int(l), out)
    if not status[0]:
        return None
    groups: dict[int, list[int]] = {}
    for g, v in zip(out.tolist(), sa.tolist()):
        groups.setdefault(g, []).append(v)
    return [tuple(sorted(vs)) for _, vs in sorted(groups.items())]


def anatomy_l(name: str, l: Any, model: PrivacyModel, table: EncodedTable) -> int:
    """Anatomy's ℓ for a run named ``name``: ``l`` or the model's, checked against the table
    (:class:`InfeasibleError` when it is not ℓ-eligible)."""
    return _check_l(name, l, model, table)


def _check_l(name: str, l: Any, model: PrivacyModel, table: EncodedTable) -> int:
    if l is None:
        l = promised_l_int(model)
        if l is None:
            raise ParameterError(
                f"{name}: Anatomy guarantees ℓ-diversity, but {model.describe()} has no ℓ; "
                "use an ℓ-diversity model (e.g. 'l=3', 'simple-l=6') or give l=",
                parameter="model", value=model.describe())
    l = Integer(minimum=1, strict=True).check(name, "l", l)
    counts = table.sa_domain.global_counts
    present = int((counts > 0).sum())
    if l > present:
        raise InfeasibleError(f"{name}: l={l} is above the number of SA values present ({present})", model=model)
    n = int(counts.sum())
    if int(counts.max()) * l > n:
        v = table.sa_domain.values[int(np.argmax(counts))]
        raise InfeasibleError(
            f"{name}: the table is not {l}-eligible (paper 004): SA value {v!r} is in {int(counts.max())} "
            f"of {n} rows, more than n/ℓ = {n / l:.1f}", model=model)
    return int(l)


class Anatomy(Anonymizer):
    """Anatomy (Xiao & Tao 2006): SA-only groups of ℓ distinct values; bucketized release.

    Parameters
    ----------
    model: an ℓ-diversity-type model (its ℓ is used unless ``l`` is given); the groups are
        verified against it.
    l: group size ℓ (default: the model's).
    seed: seed of the random row picks.
    """

    name = "anatomy"
    release_kind = "bucketized"
    minimality = False
    replay = "sa-only"
    parameter_constraints = {"l": Optional(Integer(minimum=1, strict=True))}

    def __init__(self, *, model: PrivacyModel, l: int | None = None, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.l = l

    def params(self) -> dict[str, Any]:
        return {"l": self.l}

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        l = _check_l(self.name, self.l, self.model, table)
        rng = np.random.default_rng(self.seed)
        group, n_groups, _, _ = anatomize_groups(table, np.zeros(table.n_rows, dtype=np.int64), 1, l, rng)
        return _finish(self, table, group, n_groups, {"l": l})


def _finish(algo: Anonymizer, table: EncodedTable, group: np.ndarray, n_groups: int, prov: dict,
            extra: dict | None = None) -> Partition:
    part = Partition(group, n_groups, provenance=algo.provenance() | prov, extra=extra or {})
    counts = table.group_sa_counts(part.group, part.n_groups)
    ok = np.asarray(algo.model.holds(counts, table.sa_domain), dtype=bool)
    if not ok.all():
        raise InfeasibleError(f"{algo.name}: {int((~ok).sum())} of {ok.size} groups violate "
                              f"{algo.model.describe()}; Anatomy cannot honour this model", model=algo.model)
    return part


class Anatomized(Anonymizer):
    """Anatomization of large groups (paper 000 §3.1, §5.3): run ``base`` (any registered
    algorithm; ``"none"`` = the whole table as one group, i.e. ``Base(Ana)`` = Anatomy),
    then Anatomy inside each of its groups.

    Parameters
    ----------
    model: an ℓ-diversity-type model, used by the base algorithm and by Anatomy.
    base: the base algorithm's name (default ``"rgg"``).
    l: Anatomy's ℓ (default: the model's).
    seed: seed of the base algorithm and of Anatomy's picks.
    **base_params: passed to the base algorithm.
    """

    name = "anatomize"
    release_kind = "bucketized"
    minimality = False
    default_base = "rgg"
    unaware = ("anatomization keeps its base algorithm's grouping, which depends on the SA; over a randomized "
               "base other than RGG no adversary replays it yet")

    @classmethod
    def replay_method(cls, params: dict[str, Any], model: Any = None) -> str | None:
        """Anatomization of no base is Anatomy (paper 000 §5.3 footnote 4): ``"sa-only"``; over a
        deterministic base, the base re-run on every possible world and Anatomy's draws weighed
        in closed form (``"rerun"``: :mod:`openbook.attacks.replay.anatomized`, within the
        replay's ``rerun_limit``; over strict Mondrian, GG and RGG by their decisions on any
        number of worlds, :mod:`openbook.attacks.replay.anatomized_order` for the latter two, and
        over SG by its even-split tree, :mod:`openbook.attacks.replay.anatomized_tree`);
        over another randomized one no adversary knows it (:attr:`unaware`)."""
        from .registry import algorithm_class

        base = params.get("base", cls.default_base)
        if base in ("none", "base"):
            return "sa-only"
        # RGG's coins are weighed along its order without a re-run (replay/anatomized_order.py)
        return "rerun" if algorithm_class(base).deterministic or base == "rgg" else None
    parameter_constraints = {"l": Optional(Integer(minimum=1, strict=True)),
                             "base": Options("none", "base", *sorted(n for n in CATALOG if n not in ANATOMIZED_NAMES))}

    def __init__(self, *, model: PrivacyModel, base: str | None = None, l: int | None = None,
                 seed: int | None = None, **base_params: Any) -> None:
        super().__init__(model=model, seed=seed)
        self.base = base if base is not None else self.default_base
        self.l = l
        self.base_params = dict(base_params)

    def params(self) -> dict[str, Any]:
        return {"base": self.base, "l": self.l, **self.base_params}

    @property
    def interchangeable_ties(self) -> bool:
        """Over a strict Mondrian base, yes: its cuts never part people with equal QIs and
        Anatomy seats a base group's rows by uniform random keys
        (:mod:`openbook.attacks.replay.anatomized`). Over GG/RGG/SG when they order ties by a
        secret draw (``ties="random"``, GG's and RGG's default): the replay along the order
        gives each seat its posterior, and who sits where in a run is that draw
        (:mod:`openbook.attacks.replay.anatomized_order`, :mod:`~openbook.attacks.replay.anatomized_tree`)."""
        if self.base in ("gg", "rgg", "sg"):
            from .registry import make_algorithm

            return bool(make_algorithm(self.base, model=self.model, **self.base_params).ties_at_random)
        return self.base == "mondrian" and bool(self.base_params.get("strict", True))

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        l = _check_l(self.name, self.l, self.model, table)
        if self.base in ("none", "base"):
            base_part = Partition(np.zeros(table.n_rows, dtype=np.int64), 1, provenance={"algorithm": "none"})
        else:
            base_algo = make_algorithm(self.base, model=self.model, seed=self.seed, **self.base_params)
            base_part = base_algo.partition(table)
        # Anatomy's picks use a stream of their own, independent of the base algorithm's
        rng = np.random.default_rng(None if self.seed is None else [int(self.seed), 0xA7A])
        group, n_groups, parent, anat = anatomize_groups(table, base_part.group, base_part.n_groups, l, rng)
        prov = {"l": l, "base_provenance": base_part.provenance,
                "groups_kept_whole": int((~anat).sum()), "base_groups": int(base_part.n_groups)}
        extra = {"parent_group": parent, "base_group": base_part.group,
                 **{f"base_{k}": v for k, v in base_part.extra.items()}}
        return _finish(self, table, group, n_groups, prov, extra)


class RGGAnatomized(Anatomized):
    """``RGG(Ana)`` of paper 000 §5.3."""

    name = "rgg-ana"
    default_base = "rgg"


class GGAnatomized(Anatomized):
    """GG followed by anatomization."""

    name = "gg-ana"
    default_base = "gg"


class SGAnatomized(Anatomized):
    """``SG(Ana)`` of paper 000 §5.3."""

    name = "sg-ana"
    default_base = "sg"


class BaseAnatomized(Anatomized):
    """``Base(Ana)`` of paper 000 §5.3 (footnote 4: equivalent to Anatomy)."""

    name = "base-ana"
    default_base = "none"


