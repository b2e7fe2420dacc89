"""The two properties full-domain search relies on, checked exhaustively on a small SA
domain (docs/algorithms.md, "Why predictive tagging is exact where it is used"):

* ``monotonic``: two groups that hold merge into a group that holds;
* ``absorbing``: a group that holds still holds whatever rows join it.

Every group over three SA values with 0..4 rows of each (125 count vectors, 15,625 pairs)
is tried, for every model and both properties. A model declared absorbing must have no
counterexample; a model declared not absorbing must have one (the "no" column of the
table in docs/algorithms.md), so the declaration is exactly as strong as the model.
"""

import itertools

import numpy as np
import pytest

from openbook.models import (
    AllOf,
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KEAnonymity,
    LEligibility,
    RecursiveCLDiversity,
    SimpleLDiversity,
    TCloseness,
)

from models_testkit import make_domain, tree_from_parents

#: every count vector of the box, one row each
BOX = np.array(list(itertools.product(range(5), repeat=3)), dtype=np.int64)
#: (i, j) of every ordered pair of rows of BOX
PAIRS = np.array(list(itertools.product(range(len(BOX)), repeat=2)), dtype=np.int64)

DOMAIN = make_domain(
    [5, 3, 4],
    numeric=[0.0, 1.5, 4.5],
    # leaves 0 and 1 under node 3; leaf 2 and node 3 under the root 4 (uneven depth)
    hierarchy=tree_from_parents({0: 3, 1: 3, 2: 4, 3: 4, 4: None}, 3),
    sets={"s": np.array([True, False, True])},
)

MODELS = [
    KAnonymity(k=3),
    DistinctLDiversity(l=2),
    DistinctLDiversity(l=3),
    EntropyLDiversity(l=2),
    EntropyLDiversity(l=1.7),
    RecursiveCLDiversity(c=2, l=2),
    RecursiveCLDiversity(c=0.75, l=2),
    RecursiveCLDiversity(c=3, l=3),
    AlphaKAnonymity(alpha=0.5, k=2),
    AlphaKAnonymity(alpha=0.4, sensitive_set="s", set_mode="total"),
    AlphaKAnonymity(alpha=0.4, sensitive_set="s", set_mode="each"),
    SimpleLDiversity(l=2),
    SimpleLDiversity(l=3, sensitive_set="s"),
    TCloseness(t=0.25),
    TCloseness(t=0.25, distance="ordered"),
    TCloseness(t=0.25, distance="hierarchical"),
    KEAnonymity(k=2, e=3),
    LEligibility(l=2),
    AllOf([KAnonymity(k=2), DistinctLDiversity(l=2)]),
    AllOf([KAnonymity(k=2), TCloseness(t=0.4)]),
]


def _pairs(model):
    ok = model.holds(BOX, DOMAIN)
    merged = model.holds(BOX[PAIRS[:, 0]] + BOX[PAIRS[:, 1]], DOMAIN)
    return ok, merged


def test_the_box_is_not_trivial():
    for model in MODELS:
        ok = model.holds(BOX, DOMAIN)
        assert ok.any() and not ok.all(), model


def _not_monotonic(model):
    ok, merged = _pairs(model)
    return PAIRS[ok[PAIRS[:, 0]] & ok[PAIRS[:, 1]] & ~merged]


@pytest.mark.parametrize("model", [m for m in MODELS if m.monotonic], ids=str)
def test_monotonic_exhaustively(model):
    bad = _not_monotonic(model)
    assert bad.size == 0, f"{model}: {BOX[bad[0, 0]]} + {BOX[bad[0, 1]]} fails"


class _ExactlyThree(KAnonymity):
    """Not monotonic: groups of exactly three rows (3 + 3 = 6 fails)."""

    def holds(self, counts, domain):
        return np.asarray(counts).sum(axis=1) == 3


def test_the_check_finds_a_model_that_is_not_monotonic():
    bad = _not_monotonic(_ExactlyThree(k=3))
    assert bad.size > 0


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_absorbing_declared_exactly(model):
    ok, merged = _pairs(model)
    bad = PAIRS[ok[PAIRS[:, 0]] & ~merged]
    if model.absorbing:
        assert bad.size == 0, f"{model}: {BOX[bad[0, 0]]} holds, with {BOX[bad[0, 1]]} it fails"
    else:
        assert bad.size > 0, f"{model} is declared not absorbing but no group in the box loses it"
