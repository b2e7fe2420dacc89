"""Brute force over possible worlds on tiny tables: the reference every adversary of
:mod:`openbook.attacks.adversary` is checked against (tests/contract/test_adversary_contract.py).

A *possible world* gives every person an SA value. The adversary who sees only the release
weighs equally every assignment of each published class's SA multiset to its members (the
baseline, paper 001 §4.1). The adversary who knows the algorithm (paper 000 §2.4, paper 001
Assumption 3) weighs each such world by the probability that the algorithm, **re-run** on it
— over every outcome of its random choices — publishes exactly the observed grouping; for
an algorithm that changes SA values (MASK) the worlds are every SA vector, weighted by a prior,
and the algorithm must reproduce the published classes. The posterior of a person is the
weighted fraction of worlds giving them each value. Everything is exact (``Fraction``).

Random choices are enumerated, never sampled: :class:`ScriptedRng` replays a fixed script of
outcomes and :func:`every_outcome` walks the tree of scripts depth-first, so each outcome of
``run(rng)`` comes with its exact probability.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from openbook.algorithms.mask import with_sa_codes


# ---------------------------------------------------------------------------------------
# worlds and groupings
# ---------------------------------------------------------------------------------------
def worlds_within(sa: np.ndarray, group: np.ndarray) -> Iterator[np.ndarray]:
    """Every distinct assignment of each group's SA multiset to its members (people with
    ``group < 0`` keep ``sa``)."""
    sa = np.asarray(sa, dtype=np.int64)
    groups = [np.flatnonzero(group == g) for g in np.unique(group[group >= 0])]
    per = [sorted(set(itertools.permutations(sa[rows].tolist()))) for rows in groups]
    for combo in itertools.product(*per):
        world = sa.copy()
        for rows, vals in zip(groups, combo):
            world[rows] = vals
        yield world


def every_world(n: int, n_values: int) -> Iterator[np.ndarray]:
    """Every SA vector of ``n`` people over ``n_values`` codes."""
    for w in itertools.product(range(n_values), repeat=n):
        yield np.asarray(w, dtype=np.int64)


def with_sa(table: Any, sa: np.ndarray) -> Any:
    """``table`` with its SA codes replaced (QIs, schema and hierarchies unchanged)."""
    return with_sa_codes(table, np.asarray(sa, dtype=np.int32))


def same_grouping(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal partitions of the people (labels may differ; ``-1`` = absent must agree)."""
    a, b = np.asarray(a), np.asarray(b)
    if not np.array_equal(a < 0, b < 0):
        return False
    return pd.factorize(a[a >= 0])[0].tolist() == pd.factorize(b[b >= 0])[0].tolist()


def posterior(weighted: Iterator[tuple[np.ndarray, Fraction]], n_people: int, n_values: int) -> np.ndarray:
    """``(n_people, n_values)`` array of Fractions: the weighted fraction of worlds giving
    each person each value (``weighted`` yields ``(world, weight)``)."""
    num = [[Fraction(0)] * n_values for _ in range(n_people)]
    den = Fraction(0)
    for world, w in weighted:
        if w == 0:
            continue
        den += w
        for i, v in enumerate(world.tolist()):
            num[i][v] += w
    if den == 0:
        raise AssertionError("no possible world reproduces the release")
    return np.array([[x / den for x in row] for row in num], dtype=object)


# ---------------------------------------------------------------------------------------
# enumerating an algorithm's random choices
# ---------------------------------------------------------------------------------------
class _Branch(Exception):
    """The script ran out: the options of the next random call, with their probabilities."""

    def __init__(self, options: list[tuple[Any, Fraction]]) -> None:
        super().__init__()
        self.options = options


class ScriptedRng:
    """A stand-in for ``numpy.random.Generator`` whose calls return scripted outcomes
    (``choice``, ``permutation``, ``integers``); past the script it raises the call's
    options for :func:`every_outcome` to branch on."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.pos = 0

    def _next(self, options: Callable[[], list[tuple[Any, Fraction]]]) -> Any:
        if self.pos < len(self.script):
            out = self.script[self.pos]
            self.pos += 1
            return out
        raise _Branch(options())

    def choice(self, a: Any, size: int | None = None, replace: bool = True) -> Any:
        pool = np.arange(a) if isinstance(a, (int, np.integer)) else np.asarray(a)
        k = 1 if size is None else int(size)

        def options():
            n = len(pool)
            if replace:
                combos = list(itertools.product(range(n), repeat=k))
                p = Fraction(1, n**k)
            else:
                combos = list(itertools.permutations(range(n), k))
                p = Fraction(1, math.perm(n, k))
            return [(pool[list(c)] if k else pool[:0], p) for c in combos]

        out = self._next(options)
        return out[0] if size is None else out

    def integers(self, low: int, high: int | None = None, size: Any = None) -> Any:
        lo, hi = (0, int(low)) if high is None else (int(low), int(high))
        assert size is None, "scripted integers: one draw at a time"

        def options():
            return [(v, Fraction(1, hi - lo)) for v in range(lo, hi)]

        return self._next(options)

    def permutation(self, x: Any) -> np.ndarray:
        arr = np.arange(x) if isinstance(x, (int, np.integer)) else np.asarray(x)

        def options():
            perms = list(itertools.permutations(range(len(arr))))
            return [(arr[list(p)], Fraction(1, len(perms))) for p in perms]

        return self._next(options)


def every_outcome(run: Callable[[ScriptedRng], Any]) -> Iterator[tuple[Any, Fraction]]:
    """Every outcome of ``run(rng)`` over all sequences of its random choices, with the
    exact probability of the sequence (outcomes that raise are not yielded)."""
    stack: list[tuple[list[Any], Fraction]] = [([], Fraction(1))]
    while stack:
        script, p = stack.pop()
        try:
            out = run(ScriptedRng(script))
        except _Branch as b:
            stack.extend((script + [o], p * q) for o, q in b.options)
            continue
        except Exception:  # noqa: BLE001 - the algorithm refuses this world/outcome: no release
            continue
        yield out, p


def coin_sequences(run: Callable[[Callable[[], bool]], Any], p: Fraction) -> Iterator[tuple[Any, Fraction]]:
    """Every outcome of ``run(coin)`` where ``coin()`` is a Bernoulli(p) event (RGG's "add the
    next bucket"), with its exact probability."""
    stack: list[tuple[list[bool], Fraction]] = [([], Fraction(1))]
    while stack:
        script, prob = stack.pop()
        pos = [0]

        def coin() -> bool:
            if pos[0] < len(script):
                pos[0] += 1
                return script[pos[0] - 1]
            raise _Branch([(True, p), (False, 1 - p)])

        try:
            out = run(coin)
        except _Branch as b:
            stack.extend((script + [o], prob * q) for o, q in b.options)
            continue
        except Exception:  # noqa: BLE001 - infeasible: no release
            continue
        yield out, prob


def within_cell_orders(cells: np.ndarray) -> Iterator[np.ndarray]:
    """Every ordering key that ranks the rows of each cell among themselves (all rows of a
    cell exchangeable): the distinct outcomes of a uniform random key per row, each equally
    likely, as Anatomy's picks use them."""
    uniq = np.unique(cells)
    members = [np.flatnonzero(cells == c) for c in uniq]
    for perms in itertools.product(*[itertools.permutations(range(m.size)) for m in members]):
        key = np.zeros(cells.size, dtype=np.float64)
        for rows, perm in zip(members, perms):
            key[rows] = np.asarray(perm, dtype=np.float64)
        yield key


class KeyRng:
    """An rng whose ``random(n)`` returns a fixed key (Anatomy's shuffle)."""

    def __init__(self, key: np.ndarray) -> None:
        self.key = key

    def random(self, n: int) -> np.ndarray:
        assert n == self.key.size
        return self.key.copy()
