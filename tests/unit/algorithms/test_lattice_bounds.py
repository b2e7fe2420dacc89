"""The absorbing necessary conditions full-domain search prunes on
(:mod:`openbook.algorithms.lattice_bounds`), checked exhaustively over every SA count vector
of up to 8 rows on 3 SA values: every class that satisfies the model satisfies the condition
(*necessary*), and a class that satisfies the condition still does after any rows join it
(*absorbing*)."""

import itertools

import numpy as np
import pytest

from openbook.algorithms.lattice_bounds import necessary_condition
from openbook.hierarchy import from_levels
from openbook.models import SADomain, make_model

SPECS = ["k=3", "l=2", "l=3", "entropy-l=2", "entropy-l=2.5", "recursive-l=2,c=2", "recursive-l=3,c=1",
         "alpha=0.5,k=2", "alpha=0.4,k=3", "alpha=0.5,k=2,set=s", "simple-l=2", "simple-l=2,set=s",
         "eligible-l=2", "t=0.25", "t=0.4", "t=0.25,distance=ordered", "t=0.15,distance=ordered",
         "t=0.25,distance=hierarchical", "k=2,e=15", "k=2,entropy-l=2", "k=3,t=0.3"]


def _domain(global_counts) -> SADomain:
    values = np.array([0, 10, 20], dtype=object)
    h = from_levels([[0, "lo", "*"], [10, "lo", "*"], [20, "hi", "*"]], column="sa")
    return SADomain(values=values, global_counts=np.asarray(global_counts, dtype=np.int64),
                    numeric=np.array([0.0, 10.0, 20.0]), hierarchy=h,
                    sensitive_sets={"s": np.array([True, False, False])})


VECTORS = np.array([v for v in itertools.product(range(9), repeat=3) if 0 < sum(v) <= 8], dtype=np.int64)


@pytest.mark.parametrize("global_counts", [[5, 3, 2], [1, 1, 1], [8, 1, 1]])
@pytest.mark.parametrize("spec", SPECS)
def test_condition_is_necessary_and_absorbing(spec, global_counts):
    domain = _domain(global_counts)
    model = make_model(spec)
    cond = necessary_condition(model, domain)
    if cond is None:
        return  # nothing is pruned on: nothing to check
    sizes = VECTORS.sum(axis=1)
    holds = np.asarray(model.holds(VECTORS, domain), dtype=bool)
    ok = cond.holds(sizes, VECTORS)
    assert not (holds & ~ok).any(), VECTORS[holds & ~ok][:5]
    below = (VECTORS[:, None, :] <= VECTORS[None, :, :]).all(axis=2)  # a <= b: rows join a to give b
    assert not (below & ok[:, None] & ~ok[None, :]).any()


@pytest.mark.parametrize("spec", ["k=3", "l=2", "entropy-l=2", "recursive-l=2,c=2", "alpha=0.5,k=2", "eligible-l=2",
                                  "t=0.25", "t=0.25,distance=ordered", "t=0.25,distance=hierarchical"])
def test_conditions_prune_something(spec):
    """Each family's condition fails on some class (the tests above could fail)."""
    domain = _domain([5, 3, 2])
    cond = necessary_condition(make_model(spec), domain)
    assert cond is not None and not cond.trivial
    assert not cond.holds(VECTORS.sum(axis=1), VECTORS).all()


@pytest.mark.parametrize("spec", ["k=3", "l=2", "entropy-l=2", "recursive-l=2,c=2", "alpha=0.5,k=2,set=s",
                                  "t=0.25", "eligible-l=2", "k=2,l=2"])
def test_projection_fails_only_failing_nodes(spec):
    """Every node a single QI rules out (``projection_fails``, as the search applies it: the
    model where satisfaction is upward closed, the necessary condition elsewhere) fails by
    brute force over its rows; and the rule does rule nodes out."""
    from test_lattice_minimal import BUDGETS, _brute_satisfying, _table

    from openbook.algorithms.lattice import Lattice

    model = make_model(spec)
    ruled = 0
    for seed in range(12):
        t = _table(seed)
        for ms in BUDGETS:
            lat = Lattice(t, model, ms)
            if lat.upward_closed():
                mask = lat._projection_fails(None)
            elif lat.condition is not None:
                mask = lat._projection_fails(lat.condition)
            else:
                continue
            sat = _brute_satisfying(t, model, ms)
            assert not any(tuple(v) in sat for v in lat.nodes[mask]), (seed, ms)
            ruled += int(mask.sum())
    assert ruled > 0
