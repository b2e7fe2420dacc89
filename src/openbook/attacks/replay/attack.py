"""The replay attack: units per algorithm, solved one by one, posteriors per person (paper 000
§2.4, §5.1; paper 001 Assumption 3).

:func:`replay_attack` takes the people (their QIs; the SA column is read only per class, as
the published multisets, and to mark who is truly sensitive), the grouping and the
algorithm. In a generalized release groups whose labels coincide are one class — what a
reader of the file sees (:func:`openbook.release.align.published_classes`) — so the attack
starts by merging them, and a world counts iff the algorithm re-run on it publishes the
observed classes. :func:`replay_release` does the same for a saved release: the algorithm
from its provenance, the people from the original table, each seated in their class by the
publisher's record — kept in memory after anonymization, or recomputed by re-running the
(deterministic) algorithm on the original table and checking that it publishes exactly the
file — else by their QIs (:func:`openbook.release.align.align`).
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import numpy as np
import pandas as pd

from ...data.table import EncodedTable
from ...errors import OpenbookError, ParameterError
from ...progress import track
from ...release import Partition
from ...release.align import Alignment, align, published_classes, rows_by_sa, seated_sa
from ..base import AttackResult, model_l
from .anatomized import anatomized_reason, anatomized_shortcut_units, anatomized_units
from .batch import batchable, chain_batchable, sample_chains, solve_batch
from .engine import Unit
from .generic import canonical, no_information, no_information_units, rerun_units, with_sa
from .gg_seating import run_seating, sg_seating
from .greedy import gg_units, settle_ties
from .lattice import lattice_reason, lattice_units
from .mondrian import mondrian_units
from .seeded import seeded_reason, seeded_units
from .solve import solve_unit
from .symmetric import sg_units

#: the replay of each algorithm whose SA-dependent decisions it models one by one (trait
#: ``replay = "decisions"``): name -> the builder of its units
DECISION_REPLAYS: dict[str, Any] = {"gg": gg_units, "rgg": gg_units, "sg": sg_units, "mondrian": mondrian_units}
#: ART and Injector: each world re-run under every order of their seeds (:mod:`.seeded`)
SEEDED = ("art", "art-exact", "injector")
#: algorithms re-run on every world ("rerun") whose worlds their own decisions weigh instead,
#: on any number of worlds: name -> units(algo, table, group, gcounts, levels) -> (units | None, why)
RERUN_SHORTCUTS: dict[str, Any] = {"full-domain-search": lattice_units,
                                   **{name: anatomized_shortcut_units for name in ("anatomize", "gg-ana", "rgg-ana", "sg-ana")}}
#: what a shortcut weighs the worlds by, as the certificate says it: name -> reason(params, over
#: rerun_limit) -> the sentence, or ``None`` when the worlds are re-run instead
SHORTCUT_REASONS: dict[str, Any] = {"full-domain-search": lattice_reason,
                                    **{name: anatomized_reason for name in ("anatomize", "gg-ana", "rgg-ana", "sg-ana")},
                                    **{name: seeded_reason for name in SEEDED}}
#: algorithms re-run on every world within ``rerun_limit`` whose weight is a probability, not a
#: yes/no (random draws): name -> units(algo, table, group, gcounts, levels) -> (units | None, why)
#: (the builders take ``levels``, ``generalized`` and ``rerun_limit`` by keyword)
RERUN_WEIGHTS: dict[str, Any] = {**{name: anatomized_units for name in ("anatomize", "gg-ana", "rgg-ana", "sg-ana")},
                                 **{name: seeded_units for name in SEEDED}}
#: a model that reads no SA (k-anonymity) makes every decision the same in every world: the
#: replay then takes the grouping as given (tests switch it off to compare with the full replay)
SHORTCUT_WITHOUT_SA = True


def replay_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray, *,
                 generalized: bool = False, levels: Any = None, rerun_limit: float | None = None) -> list[Unit]:
    """The independent units of a release made by ``algo`` (``group``: published classes;
    ``levels``: the published node of a full-domain search; ``rerun_limit``: most possible
    worlds on which a whole algorithm is re-run, ``None`` = no limit)."""
    method = type(algo).replay_method(algo.params(), algo.model)
    if method == "decisions" and SHORTCUT_WITHOUT_SA and not getattr(algo.model, "reads_sa", True):
        # every decision reads group sizes only: the grouping is the same in every world
        return no_information_units(group, gcounts)
    if method == "decisions":
        if algo.name not in DECISION_REPLAYS:
            raise ParameterError(f"the replay models no decision of {algo.name}", parameter="algorithm")
        return DECISION_REPLAYS[algo.name](algo, table, group, gcounts, generalized=generalized)
    if no_information(algo):
        return no_information_units(group, gcounts)
    if method == "rerun":
        withheld = bool(np.any(np.asarray(group) < 0))  # a re-run would need the withheld people's values
        budget = algo.name in RERUN_SHORTCUTS and float(algo.params().get("max_suppression") or 0.0) > 0
        why = ("re-running the algorithm on a world needs the withheld people's values, which the release "
               "does not give" if withheld else
               "a re-run compares groupings, not whether the chosen node is minimal (published, and with a "
               "suppression budget a function of the SA)" if budget else
               "re-running the algorithm on every world is over rerun_limit")
        # a shortcut models the algorithm's own release kind (a bucketized one written as
        # generalized merges its groups by their labels)
        shortcut = ""
        if algo.name in RERUN_SHORTCUTS and generalized == (algo.release_kind == "generalized"):
            units, shortcut = RERUN_SHORTCUTS[algo.name](algo, table, group, gcounts, levels)
            if units is not None:  # weighed by the algorithm's own decisions, on any number of worlds
                return units
            why = f"{shortcut}, and {why}"
        over = withheld or budget or (rerun_limit is not None and _log_worlds(gcounts) > np.log(rerun_limit) + 1e-9)
        if not over and algo.name in RERUN_WEIGHTS:
            units, rerun_why = RERUN_WEIGHTS[algo.name](algo, table, group, gcounts, levels=levels,
                                                        generalized=generalized, rerun_limit=rerun_limit)
            if units is not None:
                return units
            why = f"{shortcut}, and {rerun_why}" if shortcut else rerun_why  # both reasons, the shortcut's first
        if over or algo.name in RERUN_WEIGHTS:
            units = no_information_units(group, gcounts)
            units[0].unresolved = True
            units[0].unresolved_reason = why
            return units
    publish = (lambda t, part: published_classes(t, part.group)) if generalized else None
    return rerun_units(algo, table, group, gcounts, publish)


def _log_worlds(gcounts: np.ndarray) -> float:
    """Natural log of the assignments of each class's SA multiset to its members."""
    from math import lgamma

    c = np.asarray(gcounts, dtype=np.float64)
    return float(sum(lgamma(x + 1.0) for x in c.sum(axis=1)) - sum(lgamma(x + 1.0) for x in c.ravel()))


def replay_attack(table: EncodedTable, group: np.ndarray, algorithm: Any, *, worlds: int = 10_000,
                  seed: int | np.random.Generator = 0, exact_limit: float = 1e6, targets: Any = None,
                  sensitive_set: str | None = None, set_mode: str | None = None, force_sample: bool = False,
                  l: float | None = None, kind: str | None = None, piece_limit: float | None = None,
                  levels: Any = None, rerun_limit: float | None = None) -> AttackResult:
    """Per-person posteriors of the replay adversary (module docstring).

    Parameters
    ----------
    table:
        The individuals (QI values; the adversary knows them). Its SA column is read only
        per class — as the release's SA multisets — and to mark who is truly sensitive.
    group:
        Published group of each row (``Partition.group``; ``-1`` = suppressed).
    algorithm:
        The anonymizer (an :class:`~openbook.algorithms.base.Anonymizer` with its
        parameters and model), e.g. ``make_algorithm("gg", model=make_model("l=3"))``.
    worlds:
        Worlds sampled per unit too large to enumerate.
    seed:
        Seed (int or ``numpy.random.Generator``) of the sampling.
    exact_limit:
        Units with at most this many contingency tables (or chain states) are exact.
    targets, sensitive_set, set_mode:
        ``targets`` = ``(names, masks (T, n_sa))``; default from the model's sensitive set
        (:func:`.baseline.choose_targets`): ``"set:NAME"``, or every SA value.
    force_sample:
        Sample even units small enough to enumerate (used by the tests).
    kind:
        The release kind (default the algorithm's): ``"generalized"`` merges groups whose
        labels coincide, as the file does.
    piece_limit:
        Largest number of worlds of one piece of a sampled unit (default
        :data:`.solve.PIECE_LIMIT`).
    """
    from ..baseline import choose_targets

    t0 = time.perf_counter()
    if worlds < 1:
        raise ParameterError(f"worlds={worlds} must be >= 1", parameter="worlds", value=worlds)
    group = np.asarray(group, dtype=np.int64)
    if group.size != table.n_rows:
        raise ParameterError(f"group has {group.size} labels for {table.n_rows} rows", parameter="group")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    model = algorithm.model
    domain = table.sa_domain
    if targets is None:
        names, masks, _ = choose_targets(domain, model, sensitive_set, set_mode)
    else:
        names, masks = targets
    masks = np.asarray(masks, dtype=bool)
    generalized = (kind or getattr(algorithm, "release_kind", "generalized")) == "generalized" \
        and not no_information(algorithm)
    if generalized:
        group = published_classes(table, group)
    group = canonical(group)  # classes numbered by their first person: the same from every source
    n_groups = int(group.max()) + 1 if group.size else 0
    gcounts = table.group_sa_counts(group, n_groups)
    units = merge_constant_units(replay_units(algorithm, table, group, gcounts, generalized=generalized,
                                              levels=levels, rerun_limit=rerun_limit))
    cache: dict = {}
    # the compact form: one posterior row per unit cell, each person pointing at theirs
    blocks: list[np.ndarray] = []
    se_blocks: list[np.ndarray] = []
    row_of = np.full(table.n_rows, -1, dtype=np.int64)
    n_shared = 0
    unresolved = np.zeros(table.n_rows, dtype=bool)
    seeds = rng.integers(0, 2**31 - 1, size=max(1, len(units)))
    info: dict[str, list[object]] = {"group": [], "unit": [], "exact": [], "worlds": [], "accepted": [], "unit_kind": []}
    n_exact = n_sampled = n_unres = 0
    reasons: dict[str, list[int]] = {}  # why -> [units, classes, people]
    done: dict[int, Any] = {}
    if not force_sample:  # small units of decisions: exact, all at once
        small = [i for i, u in enumerate(units) if batchable(u)]
        for i, r in zip(small, solve_batch([units[i] for i in small], masks)):
            if r is not None:
                done[i] = r
    else:  # GG/RGG groups sampled, all at once
        chains = [i for i, u in enumerate(units) if chain_batchable(u)]
        for i, r in zip(chains, sample_chains([units[i] for i in chains], masks, worlds,
                                              [int(seeds[i]) for i in chains])):
            done[i] = r
    for ui, u in enumerate(track(units, "replay adversary: units")):
        r = done.get(ui)
        if r is None:
            r = solve_unit(u, masks, worlds=worlds, seed=int(seeds[ui]), exact_limit=exact_limit,
                           force_sample=force_sample, cache=cache, piece_limit=piece_limit)
        if not u.constant or u.inflate != 1.0:
            n_exact += int(r.exact)
            n_sampled += int(not r.exact)
        row_of[u.rows] = n_shared + np.asarray(u.cell, dtype=np.int64)
        blocks.append(np.asarray(r.post, dtype=np.float64).reshape(-1, len(names)))
        se_blocks.append(np.asarray(r.se, dtype=np.float64).reshape(-1, len(names)))
        n_shared += blocks[-1].shape[0]
        if not r.consistent:
            unresolved[u.rows] = True
            n_unres += 1
            why = r.reason or "no world is consistent with the release"
            reasons.setdefault(why, [0, 0, 0])
            reasons[why][0] += 1
            reasons[why][1] += int(np.unique(group[u.rows]).size)
            reasons[why][2] += int(u.rows.size)
        g = np.unique(group[u.rows])
        info["group"].extend(g.tolist())
        info["unit"].extend([ui] * g.size)
        info["exact"].extend([bool(r.exact)] * g.size)
        info["worlds"].extend([r.n_worlds] * g.size)
        info["accepted"].extend([r.accepted] * g.size)
        info["unit_kind"].extend([u.kind] * g.size)
    row_of[group < 0] = -1
    post = _stack(blocks, len(names))
    se = _stack(se_blocks, len(names))
    sens = np.asarray(masks.any(axis=0))[table.sa_codes]
    return AttackResult(
        adversary="replay", posterior=post, rows=row_of, targets=list(names), group=group,
        l=model_l(model) if l is None else l, stderr=se, sensitive=sens, unresolved=unresolved,
        group_info=pd.DataFrame(info),
        notes={"knowledge": "every QI, the algorithm and its parameters, the published classes "
                            "(paper 000 §2.4)",
               "algorithm": algorithm.name, "params": _jsonable(algorithm.params()),
               "classes": n_groups, "units": len(units), "units_exact": n_exact, "units_sampled": n_sampled,
               "units_unresolved": n_unres, "regions": sum(len(u.regions) for u in units),
               # what stays unresolved and why (those people count as failing, never as safe)
               "unresolved": [{"reason": k, "units": v[0], "classes": v[1], "people": v[2]}
                              for k, v in sorted(reasons.items(), key=lambda kv: -kv[1][2])],
               "worlds_per_unit": int(worlds), "exact_limit": float(exact_limit),
               "elapsed_s": round(time.perf_counter() - t0, 3)},
    )


def _stack(blocks: list[np.ndarray], width: int) -> np.ndarray:
    """The units' posterior rows one above the other (one unit's without a copy)."""
    if len(blocks) == 1:
        return blocks[0]
    return np.concatenate(blocks) if blocks else np.zeros((0, width))


def merge_constant_units(units: list[Unit]) -> list[Unit]:
    """Units whose weight is constant (no world excluded) merged into one: their posterior
    is the class frequency, computed for all of them at once."""
    const = [u for u in units if u.constant and not u.unresolved and u.inflate == 1.0]
    if len(const) < 2:
        return units
    rest = [u for u in units if not (u.constant and not u.unresolved and u.inflate == 1.0)]
    cell_off = np.cumsum([0] + [u.n_cells for u in const])
    leaf_off = np.cumsum([0] + [u.leaf_counts.shape[0] for u in const])
    merged = Unit(np.concatenate([u.rows for u in const]),
                  np.concatenate([u.cell + cell_off[i] for i, u in enumerate(const)]).astype(np.int64),
                  np.concatenate([u.cell_leaf + leaf_off[i] for i, u in enumerate(const)]).astype(np.int64),
                  np.concatenate([u.leaf_counts for u in const]), None, const[0].kind)
    return [merged] + rest


def _jsonable(d: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}


def replay_partition(table: EncodedTable, partition: Partition, algorithm: Any, **kw: Any) -> AttackResult:
    """:func:`replay_attack` on a :class:`Partition` the algorithm produced."""
    return replay_attack(table, partition.group, algorithm, **kw)


def algorithm_from_provenance(prov: dict[str, Any], model: Any = None) -> Any:
    """The anonymizer a release's provenance (``meta["algorithm"]``) describes."""
    from ...algorithms.registry import make_algorithm
    from ...models.registry import make_model

    if not prov or "algorithm" not in prov:
        raise ParameterError("the release records no algorithm: replay needs the provenance "
                             "(algorithm, params, model)", parameter="release")
    spec = model if model is not None else prov.get("model")
    if spec is None:
        raise ParameterError("the release records no privacy model", parameter="model")
    mdl = make_model(spec) if isinstance(spec, (str, dict, list)) else spec
    params = dict(prov.get("params") or {})
    from ...algorithms.registry import algorithm_class

    if "ties" not in params and "ties" in algorithm_class(prov["algorithm"]).constraints():
        params["ties"] = "input"  # written before ties were drawn at random: by row position
    return make_algorithm(prov["algorithm"], model=mdl, **params)


def publisher_release(algo: Any, release: Any, knowledge: EncodedTable) -> Any:
    """The release recomputed with the publisher's record: a deterministic algorithm re-run
    on the original table must publish exactly the release's rows (QIs and SA; the rows of
    a release are in canonical order, so equal releases have equal tables) — then the
    re-run knows who sits where; ``None`` otherwise (a randomized algorithm, another table,
    another version)."""
    if algo is None or not algo.deterministic or algo.ties_at_random:
        return None  # a random order of equal QIs: a re-run need not publish the same rows
    if type(algo).replay_method(algo.params(), algo.model) != "decisions":
        return None  # the other methods seat people by their QIs exactly: they need no record
    try:
        again = algo.anonymize(knowledge, kind=release.kind)
    except OpenbookError:
        return None
    cols = [*release.qi, release.sa]
    a, b = again.data, release.data
    if len(a) != len(b) or any(c not in a.columns or c not in b.columns for c in cols):
        return None
    for c in cols:
        if not np.array_equal(a[c].astype(str).str.strip().to_numpy(), b[c].astype(str).str.strip().to_numpy()):
            return None
    if release.kind == "bucketized":
        sa_a, sa_b = again.sa_table, release.sa_table
        if sa_a is None or sa_b is None or not np.array_equal(sa_a.astype(str).to_numpy(), sa_b.astype(str).to_numpy()):
            return None
    return again


_SEATINGS: "weakref.WeakKeyDictionary[Any, tuple[int, Any, Any]]" = weakref.WeakKeyDictionary()


def seating(release: Any, knowledge: EncodedTable) -> Any:
    """Which published class and row each person of ``knowledge`` sits in (an
    :class:`~openbook.release.align.Alignment`): the publisher's record when the release
    holds it; else, for a deterministic algorithm, the record recomputed by
    :func:`publisher_release`; for a generalized GG/RGG release, the groups grown again
    along the QI order (:func:`.gg_seating.run_seating`); else matched by QI values
    (:func:`~openbook.release.align.align`).
    Remembered per release and table."""
    hit = _SEATINGS.get(release)
    if hit is not None and hit[0] == id(knowledge) and hit[1] is knowledge:
        return hit[2]
    al = align(release, knowledge)
    if not al.exact:
        prov = release.meta.get("algorithm") or {}
        try:
            algo = algorithm_from_provenance(prov, release.meta.get("model")) if prov else None
        except OpenbookError:
            algo = None
        again = publisher_release(algo, release, knowledge)
        if again is not None:
            al = align(again, knowledge)
        elif algo is not None and algo.name == "sg" and algo.ties_at_random and release.kind == "generalized":
            group = sg_seating(algo, release, knowledge)  # a random order of equal QIs: grown again
            if group is not None:
                al = Alignment(group, rows_by_sa(group, release.classes()[0], knowledge, release), 0, False)
        elif algo is not None and algo.name in ("gg", "rgg") and release.kind == "generalized":
            group = run_seating(algo, release, knowledge)  # a randomized run: grown again
            if group is not None:
                # random ties: who of equal QIs sits where, and so the values, are not known
                al = Alignment(group, rows_by_sa(group, release.classes()[0], knowledge, release), 0,
                               not algo.ties_at_random)
    _SEATINGS[release] = (id(knowledge), knowledge, al)
    return al


def tie_average(result: AttackResult, table: EncodedTable) -> AttackResult:
    """Each person's posterior averaged over the people with equal QIs, for an algorithm that
    treats such people alike through its secret coins (Anatomy and its kin: a random key per
    row, whatever its QIs). The files tell them apart by nothing, so which of them sits in
    which group is the publisher's record, not the adversary's knowledge: the exact posterior
    of each is the average of the seated ones (issue 26: seated, one person of a pair read 0.5
    and the other 0.0 where each is 1/4 — the second understated). The average is summed in
    value order, so it is the same figure however the people were seated (the saved files
    seat them otherwise than the publisher's record). A set with an unresolved person is
    unresolved as a whole (its average is unknown); people without a figure (absent, for an
    adversary that gives them none) take the average of their set's figures, which bounds
    theirs from above."""
    from ...data.grouping import group_ids

    if not table.qi_names or result.posterior.shape[0] != table.n_rows:
        return result
    ties, n_ties = group_ids([table.columns[c].codes for c in table.qi_names])
    if n_ties == table.n_rows:
        return result
    n = table.n_rows
    post = result.posterior
    flat = post.reshape(n, -1)
    unres = np.zeros(n, dtype=bool) if result.unresolved is None else np.asarray(result.unresolved, dtype=bool)
    size = np.bincount(ties, minlength=n_ties)
    spoiled = np.bincount(ties[unres], minlength=n_ties) > 0
    se = None if result.stderr is None else np.nan_to_num(result.stderr, nan=0.0)
    se_flat = None if se is None else se.reshape(n, -1)
    by_set = np.argsort(ties, kind="stable")
    starts = np.r_[0, np.cumsum(size)[:-1]]
    for t in np.flatnonzero(size > 1).tolist():
        rows = by_set[starts[t]:starts[t] + size[t]]
        if spoiled[t]:
            flat[rows] = np.nan
            unres[rows] = True
            continue
        block = flat[rows]
        known = ~np.isnan(block).any(axis=1)
        if not known.any():
            continue
        flat[rows] = np.sort(block[known], axis=0).mean(axis=0)
        if se_flat is not None:
            se_flat[rows] = np.sort(se_flat[rows][known], axis=0).mean(axis=0)
    if result.unresolved is not None or unres.any():
        result.unresolved = unres
    result.stderr = se if se is not None else result.stderr
    result.notes["equal_qis"] = "people with equal QIs share the average of their posteriors"
    return result


def replay_release(release: Any, knowledge: EncodedTable, *, worlds: int = 10_000, seed: int = 0,
                   exact_limit: float = 1e6, sensitive_set: str | None = None,
                   partition: Partition | None = None, rerun_limit: float | None = None) -> AttackResult:
    """Replay attack on a saved release: the algorithm from its provenance, the individuals'
    QIs from ``knowledge`` (the original table; its SA marks the truly sensitive people).
    Each person sits in the class the publisher put them in (module docstring): from
    ``partition`` or the release's own record, else recomputed, else placed by QIs."""
    algo = algorithm_from_provenance(release.meta.get("algorithm") or {}, release.meta.get("model"))
    kw = {"worlds": worlds, "seed": seed, "exact_limit": exact_limit, "sensitive_set": sensitive_set,
          "kind": release.kind, "levels": release.meta.get("levels"), "rerun_limit": rerun_limit}
    n = knowledge.n_rows
    if partition is None and release.partition is not None and release.partition.n_rows == n:
        partition = release.partition
    if partition is not None and partition.n_rows == n:  # the publisher's own groups: the truth
        return replay_attack(knowledge, partition.group, algo, **kw)
    counts, dom = release.sa_counts()
    unknown = sorted(set(map(str, dom.values)) - set(map(str, knowledge.sa_domain.values)))
    if unknown:
        raise ParameterError(f"the release publishes SA value {unknown[0]!r} the knowledge table lacks",
                             parameter="knowledge")
    al = seating(release, knowledge)
    if al.exact:  # the publisher's record: every person with their own SA
        return replay_attack(knowledge, al.group, algo, **kw)
    if algo.name in ("gg", "rgg", "sg"):
        take = settle_ties(algo, knowledge, al.group)  # the published row (and so the SA) moves with the seat
        al.group, al.row = al.group[take], al.row[take]
    # the released SA multisets, placed on the knowledge rows (people with equal QIs are
    # interchangeable, so any consistent seating gives the adversary's posteriors)
    seated = with_sa(knowledge, seated_sa(release, knowledge, al))
    return replay_attack(seated, al.group, algo, **kw)
