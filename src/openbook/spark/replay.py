"""The replay adversary of a Spark Mondrian release, fragment by fragment on the executors
(paper 000 §5.1; docs/replay.md; docs/spark.md, "The certificate on Spark").

The local replay (:func:`openbook.attacks.replay.replay_attack`) walks Mondrian's tree on
the table as published and cuts the published classes into *units*: classes coupled by a
decision whose outcome depends on how the classes' SA values are arranged (a refused cut
that splits classes, a node re-run as a region). A Spark run's tree is the local one: the
driver's planned top cuts, then one local Mondrian subtree per fragment
(:mod:`.mondrian`). So:

* **inside a fragment** the walk is the local walk of that subtree — the same cuts, the same
  decisions, computed from the fragment's rows with the whole table's dictionaries (widths)
  and SA domain (t-closeness). A unit lies inside one fragment unless a class or a decision
  couples fragments (below), so each executor rebuilds its fragment's partition
  (:func:`.mondrian.finish_fragment`), builds its units and solves them with the local
  solvers (:func:`~openbook.attacks.replay.solve.solve_unit`, the batched exact solver) —
  the local engine's posteriors, person by person. Sampled units use the local run's seeds:
  the local run numbers its units (one unit of classes no decision excludes, then the
  others in the order of their first person) and draws one seed per unit from the world
  seed; a first pass on the executors lists each fragment's units by their first person,
  the driver numbers them as the local run does and hands each fragment its seeds. (With
  one fragment — every table up to ``--spark-max-fragment`` rows — there is one pass.)
* **the planned top cuts** are QI-only decisions (widths, medians, the input order of tied
  rows) except one: a cut the driver *tried and refused* before the one it took
  (:attr:`.mondrian_plan.TopPlan.refused`) — in another arrangement of the SA values it
  could have been allowable, which would exclude that world, and the classes it couples lie
  in several fragments. A taken cut never depends on the world (both children are unions of
  classes whose SA counts are published), unless a class straddles it (next point).
* **a published class in several fragments** (two groups of different fragments whose
  labels coincide: a hierarchy's common ancestor, relaxed ties) couples those fragments.

For each of the last two, the plan node that holds everything it couples — the node that
refused a cut, or the lowest node above every fragment of the class — becomes a *replay root*
(:func:`replay_roots`): its whole subtree is replayed on one executor, exactly as a fragment
is (the local Mondrian run on that node's rows builds the local subtree below it), when it
holds at most ``2 x max_fragment`` rows; above that, every person below it is **unresolved**:
the Spark replay does not re-run such a node, and unknown is not safe (the attribute line
fails and the refusal says why).

So the replay on Spark is exact where it resolves people — the local posteriors — and marks
unresolved, never underestimates, where it cannot. Only one record per replay root reaches
the driver (the figures the certificate needs: a max, counts, a flag), plus, with several
roots, each root's units' first rows (to number them as the local run does).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..attacks.baseline import target_counts
from .encoding import SparkTable

#: why people are left unresolved (the certificate's words; never a count)
REFUSED = ("a cut the driver planned was refused at a node of more than 2 x --spark-max-fragment rows, and its "
           "decision depends on the SA values of every fragment below it")
SPANS = ("a published class has rows in fragments that only a node of more than 2 x --spark-max-fragment rows "
         "holds")


@dataclass
class Roots:
    """Which rows each executor replays: per fragment its *replay root* — the fragment itself,
    or a plan node above it whose whole subtree is replayed on one executor (``key``: the
    fragment number, or ``n_fragments + node``); ``-1``: the fragment's people are left
    unresolved, ``why`` says why (reason -> people)."""

    key: np.ndarray
    why: dict[str, int] = field(default_factory=dict)
    merged: int = 0


def replay_roots(plan: Any, spans: list[list[int]]) -> Roots:
    """The replay roots (module docstring): a node the driver cut after refusing another cut,
    and the lowest node holding every fragment of a class that spans several, are each
    replayed whole on one executor when they hold at most ``2 x max_fragment`` rows (the
    subtree the local run builds below that node, as for a fragment); above that, the people
    below them are unresolved."""
    arrays = plan.arrays()
    dim, left, right, frag = arrays["dim"], arrays["left"], arrays["right"], arrays["fragment"]
    n_frag = int((frag >= 0).sum())
    parent = np.full(dim.size, -1, dtype=np.int64)
    for inner in np.flatnonzero(dim >= 0):
        parent[left[inner]] = parent[right[inner]] = inner
    tainted: dict[int, str] = {}
    for node, *_ in plan.refused:
        if dim[node] >= 0:
            tainted.setdefault(int(node), REFUSED)
    leaf_of = {int(f): int(x) for x, f in enumerate(frag) if f >= 0}
    for frags in spans:
        paths = []
        for f in frags:
            x, path = leaf_of[int(f)], []
            while x >= 0:
                path.append(x)
                x = int(parent[x])
            paths.append(path[::-1])
        lca = 0
        for depth in range(min(len(q) for q in paths)):
            if len({q[depth] for q in paths}) == 1:
                lca = paths[0][depth]
        tainted.setdefault(lca, SPANS)

    def below(node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            x = stack.pop()
            if dim[x] < 0:
                out.append(int(frag[x]))
            else:
                stack += [int(left[x]), int(right[x])]
        return out

    key = np.arange(n_frag, dtype=np.int64)
    roots = Roots(key)
    cap = 2 * int(plan.max_fragment)
    done = np.zeros(n_frag, dtype=bool)
    for node in sorted(tainted, key=lambda x: -plan.size[x]):  # the largest first: it covers the rest
        fs = below(node)
        if done[fs].any():
            continue
        done[fs] = True
        if plan.size[node] <= cap:
            key[fs] = n_frag + node
            roots.merged += 1
        else:
            key[fs] = -1
            roots.why[tainted[node]] = roots.why.get(tainted[node], 0) + int(plan.size[node])
    return roots


# ---------------------------------------------------------------------------------------
# one fragment: the local replay's units and solvers
# ---------------------------------------------------------------------------------------
def fragment_units(frag: Any, group: np.ndarray, algo: Any) -> tuple[list[Any], np.ndarray]:
    """The units of a fragment's classes, as :func:`~openbook.attacks.replay.replay_attack`
    builds them (generalized: groups with equal labels are one class), and its classes."""
    from ..attacks.replay.attack import merge_constant_units, replay_units
    from ..attacks.replay.generic import canonical
    from ..release.align import published_classes

    group = canonical(published_classes(frag, group))
    n = int(group.max()) + 1 if group.size else 0
    units = merge_constant_units(replay_units(algo, frag, group, frag.group_sa_counts(group, n), generalized=True))
    return units, group


def solve(units: list[Any], n_rows: int, masks: np.ndarray, seeds: np.ndarray, *, worlds: int,
          exact_limit: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row ``(posterior, standard error, unresolved)``: every unit solved as
    :func:`~openbook.attacks.replay.replay_attack` solves it (the small ones exactly in one
    batch, the others one by one), unit ``i`` with seed ``seeds[i]``."""
    from ..attacks.replay.batch import batchable, solve_batch
    from ..attacks.replay.solve import solve_unit

    post = np.full((n_rows, masks.shape[0]), np.nan)
    se = np.zeros((n_rows, masks.shape[0]))
    unresolved = np.zeros(n_rows, dtype=bool)
    done: dict[int, Any] = {}
    small = [i for i, u in enumerate(units) if batchable(u)]
    for i, r in zip(small, solve_batch([units[i] for i in small], masks)):
        if r is not None:
            done[i] = r
    cache: dict = {}
    for i, u in enumerate(units):
        r = done.get(i)
        if r is None:
            r = solve_unit(u, masks, worlds=worlds, seed=int(seeds[i]), exact_limit=exact_limit, cache=cache)
        post[u.rows] = r.post[u.cell]
        se[u.rows] = r.se[u.cell]
        if not r.consistent:
            unresolved[u.rows] = True
    return post, se, unresolved


def unit_firsts(units: list[Any], rows: np.ndarray) -> tuple[bool, list[int]]:
    """Whether the fragment has the unit no decision excludes (first), and the input row of
    each other unit's first person (the local run orders them so)."""
    const = bool(units) and units[0].constant
    return const, [int(rows[u.rows].min()) for u in units[int(const):]]


def global_seeds(firsts: dict[int, tuple[bool, list[int]]], world_seed: int) -> dict[int, np.ndarray]:
    """Per fragment, the seed of each of its units in the local run (module docstring): the
    unit no decision excludes is the local run's first (there is one for the whole table),
    the others are numbered by their first person across every fragment."""
    any_const = any(c for c, _ in firsts.values())
    keys = sorted((r, f, i) for f, (_, rs) in firsts.items() for i, r in enumerate(rs))
    n = int(any_const) + len(keys)
    seeds = np.random.default_rng(world_seed).integers(0, 2**31 - 1, size=max(1, n))
    out = {f: np.zeros(int(c) + len(rs), dtype=np.int64) for f, (c, rs) in firsts.items()}
    for f, (c, _) in firsts.items():
        if c:
            out[f][0] = seeds[0]
    for g, (_, f, i) in enumerate(keys):
        out[f][int(firsts[f][0]) + i] = seeds[int(any_const) + g]
    return out


@dataclass
class ReplaySpec:
    """What each executor needs to replay and judge its fragment (shipped with the task)."""

    dictionaries: Any
    domain: Any
    model: Any
    strict: bool
    d: int
    worlds: int
    world_seed: int
    exact_limit: float
    masks: np.ndarray            # the replay's targets (the table's SA values, or the set)
    names: list[str]
    target: float | None
    kind: str
    dm: Any                      # t-closeness: the distance model, else None
    distance: float | None
    rdom: Any                    # the release's SA domain (the baseline's, and the distances')
    rindex: np.ndarray           # table SA code -> release domain position
    bmasks: np.ndarray           # the baseline's targets over the release domain


def judge(spec: ReplaySpec, frag: Any, group: np.ndarray, post: np.ndarray, se: np.ndarray,
          unres: np.ndarray) -> dict[str, Any]:
    """A fragment's share of the replay finding (:func:`openbook.certificate.certify`'s
    ``_finding_from`` on these people): the largest bound among the evaluated, the people
    above the target, unresolved, whether a posterior was sampled, the baseline's largest
    posterior among the evaluated, the largest distance (t-closeness)."""
    from ..attacks.base import TOL, AttackResult
    from ..certificate import CERTAIN

    res = AttackResult(adversary="replay", posterior=post, targets=list(spec.names), group=group, stderr=se,
                       unresolved=unres)
    bound = res.max_bound()
    unresolved = res.unresolved_mask()
    evaluated = ~unresolved & ~np.isnan(bound)
    if spec.target is None:
        above = np.zeros(bound.size, dtype=bool)
    elif spec.kind == "certainty":
        above = evaluated & (bound >= CERTAIN)
    else:
        above = evaluated & (bound > spec.target + TOL)
    out: dict[str, Any] = {"n": int(bound.size), "max": float(np.nanmax(bound[evaluated])) if evaluated.any() else None,
                           "dmax": None}
    if spec.dm is not None:
        if list(spec.names) != [str(v) for v in spec.rdom.values]:  # a set's posteriors: no distance, never safe
            unresolved = unresolved | evaluated
        else:
            rows = np.flatnonzero(evaluated)
            dist = np.full(bound.size, np.nan)
            if rows.size:
                p = np.nan_to_num(post[rows], nan=0.0)
                s = np.nan_to_num(se[rows], nan=0.0)
                dist[rows] = spec.dm.distance_bound(p, 3.0 * s, spec.rdom)
            ok = ~np.isnan(dist)
            out["dmax"] = float(dist[ok].max()) if ok.any() else None
            assert spec.distance is not None  # a distance target comes with its metric
            above = above | (ok & (dist > spec.distance + 1e-9))
    out["above"] = int(above.sum())
    out["unresolved"] = int(unresolved.sum())
    out["sampled"] = bool(np.nanmax(np.where(evaluated[:, None], se, 0.0), initial=0.0) > 0)
    # the baseline beside: each person's class frequency of the baseline's targets
    n_cls = int(group.max()) + 1 if group.size else 0
    rmat = np.zeros((n_cls, spec.rdom.n_values), dtype=np.int64)
    np.add.at(rmat, (group, spec.rindex[frag.sa_codes]), 1)
    size = rmat.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = target_counts(rmat, spec.bmasks) / size[:, None]
    bb = freq.max(axis=1)[group] if freq.shape[1] else np.full(group.size, np.nan)
    keep = evaluated & ~np.isnan(bb)
    out["beside"] = float(bb[keep].max()) if keep.any() else None
    return out


def run_fragments(st: SparkTable, res: Any, spec: ReplaySpec, roots: Roots) -> list[dict[str, Any]]:
    """The replay of every replay root (:func:`replay_roots`) on the executors (module
    docstring): one record per root — its share of the finding (:func:`judge`)."""
    import pyarrow as pa

    from ..algorithms.registry import make_algorithm
    from .mondrian import FRAG, finish_fragment, tagged_rows

    algo = make_algorithm("mondrian", model=spec.model, strict=spec.strict)
    key = roots.key
    n_keys = int(np.unique(key[key >= 0]).size)
    tagged = tagged_rows(st, res.plan)

    def rekey(batches: Iterator[Any]) -> Iterator[Any]:
        for b in batches:
            k = key[b.column(FRAG).to_numpy()]
            keep = np.flatnonzero(k >= 0)
            if keep.size:
                b = b.take(pa.array(keep))
                yield b.set_column(b.schema.get_field_index(FRAG), FRAG, pa.array(k[keep]))

    rooted = tagged.mapInArrow(rekey, tagged.schema)

    def local(table: Any) -> tuple[Any, np.ndarray, np.ndarray, list[Any], int]:
        frag, rows, group, _ = finish_fragment(table, spec.dictionaries, spec.domain, spec.model, spec.strict, spec.d)
        frag.__dict__["sa_domain"] = spec.domain  # the whole table's SA domain (t-closeness), as the local run's
        units, group = fragment_units(frag, group, algo)
        return frag, rows, group, units, int(table.column(FRAG)[0].as_py())

    def one(out: dict[str, Any]) -> Any:
        return pa.table({"out": pa.array([json.dumps(out)], pa.string())})

    seeds: dict[int, np.ndarray] = {}
    if n_keys > 1 or (key < 0).any():  # the local run numbers the units of the whole table
        def firsts(table: Any) -> Any:
            _, rows, _, units, f = local(table)
            const, rs = unit_firsts(units, rows)
            return one({"frag": f, "const": const, "firsts": rs})

        got = [json.loads(x) for x in rooted.groupBy(FRAG).applyInArrow(firsts, "out string").toArrow()
               .column("out").to_pylist()]
        seeds = global_seeds({g["frag"]: (g["const"], g["firsts"]) for g in got}, spec.world_seed)
    shipped = st.df.sparkSession.sparkContext.broadcast(seeds)

    def replay(table: Any) -> Any:
        frag, _, group, units, f = local(table)
        mine = shipped.value.get(f)
        if mine is None:  # one root, the whole table: the local run's own numbering
            mine = np.random.default_rng(spec.world_seed).integers(0, 2**31 - 1, size=max(1, len(units)))
        post, se, unres = solve(units, frag.n_rows, spec.masks, mine, worlds=spec.worlds,
                                exact_limit=spec.exact_limit)
        return one({"frag": f, **judge(spec, frag, group, post, se, unres)})

    return [json.loads(x) for x in rooted.groupBy(FRAG).applyInArrow(replay, "out string").toArrow()
            .column("out").to_pylist()]
