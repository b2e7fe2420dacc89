"""The exact posterior of every person, by brute force over possible worlds, reading every byte.

A *world* gives every person of the table an SA value. The adversary's prior is the
certificate's: each person's SA i.i.d. from the published SA distribution π (for the published
people that is uniform over the arrangements of the published multisets; an absent person may
hold any published value); :func:`exact_posterior` also gives the posterior under a uniform
prior over the table's SA domain, which differs only for absent people. Each world is weighed
by its prior times the probability, over every outcome of the algorithm's random choices
(enumerated, never sampled: :mod:`possible_worlds`), that the algorithm re-run on it — exactly
as ``anonymize`` runs it: partition, suppression budget, recoding, verification — publishes
**every byte** the observed release publishes: the data file, the SA-table and the sidecar's
public record (``public_record`` of the release's meta without the certificate). Exact
fractions throughout.

Worlds enumerated are every SA vector whose value counts contain the published counts (any
other world publishes other counts). A world's bytes depend on the world only through the
partition, the SA multiset of each group, the table's SA counts and the provenance
(``build_release`` sorts rows canonically and renumbers groups from their content), so
releases are built once per such key (:class:`Publisher`); every ``recheck``-th reuse is
rebuilt from scratch and must give the same bytes.
"""

from __future__ import annotations

import itertools
import math
import sys
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

_CONTRACT = str(Path(__file__).resolve().parents[1] / "contract")
if _CONTRACT not in sys.path:  # the contract tests' brute-force helpers (they import it the same way)
    sys.path.insert(0, _CONTRACT)

from openbook.errors import OpenbookError  # noqa: E402

from possible_worlds import KeyRng, ScriptedRng, coin_sequences, every_outcome, with_sa, within_cell_orders  # noqa: E402


class TooBig(Exception):
    """The case's worlds times outcomes exceed the budget: not brute-forced."""


def published_bytes(release: Any) -> tuple[str, str, str]:
    """Every byte a reader gets: the data file, the SA-table and the sidecar's public record
    (the certificate excluded: it is computed from these)."""
    from openbook.release.sidecar import public_record

    rec = public_record({k: v for k, v in release.meta.items() if k != "certificate"})
    sa = "" if release.sa_table is None else release.sa_table.astype(str).to_csv(index=False)
    return (release.data.astype(str).to_csv(index=False), sa, repr(sorted((k, repr(v)) for k, v in rec.items())))


@contextmanager
def rng_is(factory: Callable[[], Any]) -> Iterator[None]:
    """Every ``numpy.random.default_rng(...)`` made while re-running the algorithm is
    ``factory()``: its random choices come from the enumeration."""
    real = np.random.default_rng
    np.random.default_rng = lambda *a, **k: factory()
    try:
        yield
    finally:
        np.random.default_rng = real


@contextmanager
def ties_are(key: np.ndarray) -> Iterator[None]:
    """GG and SG order rows with equal QIs by ``key`` (one of the orders their secret tie keys
    can draw, :func:`openbook.algorithms.ordering.tie_keys`)."""
    from openbook.algorithms import greedy, symmetric

    real = greedy.tie_keys, symmetric.tie_keys
    greedy.tie_keys = symmetric.tie_keys = lambda table, seed: key.copy()
    try:
        yield
    finally:
        greedy.tie_keys, symmetric.tie_keys = real


def tie_classes(table: Any) -> np.ndarray:
    """People with equal QI values (the algorithms order them at random)."""
    from openbook.data.grouping import group_ids

    return group_ids([table.columns[c].codes for c in table.qi_names])[0]


def _canonical(group: np.ndarray) -> tuple[int, ...]:
    seen: dict[int, int] = {}
    return tuple(-1 if g < 0 else seen.setdefault(int(g), len(seen)) for g in group.tolist())


class Publisher:
    """``anonymize`` on a world, step by step, with the release's bytes built once per key."""

    def __init__(self, make: Callable[[], Any], kind: str | None, recheck: int = 16) -> None:
        self.make, self.kind, self.recheck = make, kind, recheck
        self.memo: dict[Any, Any] = {}
        self.hits = 0
        self.builds = 0

    def bytes_of(self, algo: Any, world: Any) -> tuple[str, str, str] | None:
        """The bytes ``algo`` publishes on ``world`` (``None``: it refuses the world)."""
        from openbook.release import build_release

        try:
            published, part = algo.recode(world)
            algo.check_budget(part, world.n_rows)
        except OpenbookError:
            return None
        sa = np.asarray(published.sa_codes, dtype=np.int64)
        group = np.asarray(part.group, dtype=np.int64)
        canon = _canonical(group)
        ids = sorted(set(canon) - {-1})
        multisets = tuple(tuple(sorted(sa[np.asarray(canon) == g].tolist())) for g in ids)
        levels = algo.release_levels()
        qg = (part.extra or {}).get("qi_group")
        key = (canon, multisets, None if levels is None else tuple(levels),
               tuple(np.bincount(sa, minlength=world.columns[world.sa_name].n_values).tolist()),
               repr(sorted((k, repr(v)) for k, v in part.provenance.items())),
               None if qg is None else _canonical(np.asarray(qg)))
        hit = self.memo.get(key, "miss")
        if hit != "miss":
            self.hits += 1
            if self.recheck and self.hits % self.recheck:
                return hit
        try:
            rel = build_release(published, part, model=algo.release_model(), kind=self.kind or algo.release_kind,
                                levels=levels, t_reference="published")
            out = published_bytes(rel)
        except OpenbookError:
            out = None
        self.builds += 1
        if hit != "miss" and out != hit:
            raise AssertionError("a release's bytes are not a function of its partition and group multisets")
        self.memo[key] = out
        return out


def outcomes(case: Any, algo_factory: Callable[[], Any], world: Any, publisher: Publisher,
             w: np.ndarray) -> Iterator[tuple[Any, Fraction]]:
    """Every release the algorithm can publish on ``world`` with its probability over the
    algorithm's random choices (``case.coins`` says how they are enumerated)."""
    from .tables import coins_of

    coins = coins_of(case)
    if coins == "none":
        yield publisher.bytes_of(algo_factory(), world), Fraction(1)
    elif coins in ("ties", "rgg"):
        # the order of rows with equal QIs: a uniform random key per row, read only within
        # each set of equal QIs (every order equally likely); RGG's coins on top
        keys = list(within_cell_orders(tie_classes(world)))
        p = Fraction(str(case.params.get("p", 0.5)))
        for key in keys:
            with ties_are(key):
                if coins == "ties":
                    yield publisher.bytes_of(algo_factory(), world), Fraction(1, len(keys))
                    continue

                def run(coin: Callable[[], bool]) -> Any:
                    a = algo_factory()
                    a._extend = lambda rng: coin()  # RGG's one random decision, from the enumeration
                    return publisher.bytes_of(a, world)
                for out, q in coin_sequences(run, p):
                    yield out, q / len(keys)
    elif coins in ("ana-ties", "ana-rgg"):
        # anatomization over GG/RGG: every order of the equal QIs, every order of Anatomy's
        # keys within each SA value, and (RGG) every sequence of the base's coins
        from openbook.algorithms.greedy import RandomizedGreedyGrouping

        tkeys = list(within_cell_orders(tie_classes(world)))
        akeys = list(within_cell_orders(w))
        p = Fraction(str(case.params.get("p", 0.5)))
        share = Fraction(1, len(tkeys) * len(akeys))
        for tk in tkeys:
            with ties_are(tk):
                for ak in akeys:
                    with rng_is(lambda ak=ak: KeyRng(ak)):
                        if coins == "ana-ties":
                            yield publisher.bytes_of(algo_factory(), world), share
                            continue

                        def run_coins(coin: Callable[[], bool]) -> Any:
                            real = RandomizedGreedyGrouping._extend
                            RandomizedGreedyGrouping._extend = lambda self, rng: coin()  # type: ignore[method-assign]
                            try:
                                return publisher.bytes_of(algo_factory(), world)
                            finally:
                                RandomizedGreedyGrouping._extend = real  # type: ignore[method-assign]
                        for out, q in coin_sequences(run_coins, p):
                            yield out, q * share
    elif coins == "keys":
        keys = list(within_cell_orders(w))
        for key in keys:
            with rng_is(lambda key=key: KeyRng(key)):
                out = publisher.bytes_of(algo_factory(), world)
            yield out, Fraction(1, len(keys))
    elif coins in ("script", "mask", "seeds"):
        def run_script(rng: ScriptedRng) -> Any:
            with rng_is(lambda: rng):
                return publisher.bytes_of(algo_factory(), world)
        yield from every_outcome(run_script)
    else:
        raise ValueError(f"no enumeration of {case.algorithm}'s random choices")


def _arrangements(counts: list[int]) -> Iterator[tuple[int, ...]]:
    """Every distinct sequence with ``counts[v]`` copies of ``v``."""
    n = sum(counts)
    out = [0] * n
    c = list(counts)

    def rec(i: int) -> Iterator[tuple[int, ...]]:
        if i == n:
            yield tuple(out)
            return
        for v in range(len(c)):
            if c[v]:
                c[v] -= 1
                out[i] = v
                yield from rec(i + 1)
                c[v] += 1
    yield from rec(0)


def world_counts(published: list[int], n: int) -> list[list[int]]:
    """Every SA count vector of ``n`` people containing the published counts."""
    extra = n - sum(published)
    out = []
    for combo in itertools.combinations_with_replacement(range(len(published)), extra):
        c = list(published)
        for v in combo:
            c[v] += 1
        out.append(c)
    return out


def n_worlds(published: list[int], n: int) -> int:
    return sum(math.factorial(n) // math.prod(math.factorial(x) for x in c) for c in world_counts(published, n))


def coin_factor(case: Any, counts: list[int], table: Any = None) -> int:
    """Upper bound of the outcomes enumerated per world (the budget's estimate)."""
    from .tables import coins_of

    coins = coins_of(case)
    if coins == "keys":
        return math.prod(math.factorial(x) for x in counts)
    ties = math.prod(math.factorial(int(x)) for x in np.bincount(tie_classes(table))) if table is not None else 1
    if coins == "ana-ties":
        return ties * math.prod(math.factorial(x) for x in counts)
    if coins == "ana-rgg":
        return ties * math.prod(math.factorial(x) for x in counts) * 2 ** max(1, sum(counts) // 2)
    if coins == "ties":
        return ties
    if coins == "rgg":
        return ties * 2 ** max(1, sum(counts) // 2)
    if coins == "script":
        return math.factorial(sum(counts))
    if coins == "seeds":  # ART, Injector: every order of the rows holding a value of the set s (their seeds)
        mask = None if table is None else table.sa_domain.sensitive_mask("s")
        return math.factorial(sum(int(c) for c, on in zip(counts, mask) if on) if mask is not None else sum(counts))
    if coins == "mask":  # the drawn proportions, the distorted tuples, their values: an estimate, not a bound
        return 4 ** max(1, sum(counts) // 2)
    return 1


def exact_posterior(case: Any, table: Any, release: Any, algo_factory: Callable[[], Any], *,
                    budget: int = 200_000) -> dict[str, Any]:
    """The exact posterior of every person (rows of ``table``) over the table's SA codes,
    under the certificate's prior and (when someone is absent) a uniform prior:
    ``{"cert": (n, m) Fractions, "uniform": ... or None, "worlds": int, "builds": int}``.
    ``"cert"`` is ``None`` when no world of positive prior publishes the release (an absent
    person must hold a value the release does not publish)."""
    from .tables import coins_of

    target = published_bytes(release)
    m = table.columns[table.sa_name].n_values
    cats = [str(v) for v in table.columns[table.sa_name].categories]
    counts, dom = release.sa_counts()
    pub = counts.sum(axis=0)
    published = [0] * m
    for v, c in zip(dom.values, pub.tolist()):
        published[cats.index(str(v))] += int(c)
    n = table.n_rows
    n_pub = sum(published)
    absent = n - n_pub
    # MASK changes SA values: a world may hold any values, not only the published ones
    distorts = coins_of(case) == "mask"
    floor = [0] * m if distorts else published
    per_world = max(coin_factor(case, c, table) for c in world_counts(floor, n))
    total = n_worlds(floor, n)
    if total * per_world > budget:
        raise TooBig(f"{total} worlds x {per_world} outcomes")
    prior = [Fraction(c, n_pub) for c in published]
    publisher = Publisher(algo_factory, case.kind)
    num = {"cert": [[Fraction(0)] * m for _ in range(n)], "uniform": [[Fraction(0)] * m for _ in range(n)]}
    den = {"cert": Fraction(0), "uniform": Fraction(0)}
    worlds = 0
    for c in world_counts(floor, n):
        w_cert = math.prod((prior[v] ** c[v] for v in range(m)), start=Fraction(1))
        for arr in _arrangements(c):
            w = np.asarray(arr, dtype=np.int64)
            world = with_sa(table, w)
            worlds += 1
            like = sum((q for out, q in outcomes(case, algo_factory, world, publisher, w) if out == target),
                       Fraction(0))
            if like == 0:
                continue
            for name, wt in (("cert", w_cert * like), ("uniform", like)):
                if wt == 0:
                    continue
                den[name] += wt
                for i, v in enumerate(arr):
                    num[name][i][v] += wt
    if den["uniform"] == 0:
        raise AssertionError("no possible world reproduces the release's bytes")
    out: dict[str, Any] = {"worlds": worlds, "builds": publisher.builds, "absent": absent}
    for name in ("cert", "uniform"):
        out[name] = (np.array([[x / den[name] for x in row] for row in num[name]], dtype=object)
                     if den[name] and (name == "cert" or absent or distorts) else None)
    return out
