import math

import numpy as np
import pytest

from openbook.errors import InfeasibleError, ParameterError
from openbook.models import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity

from models_testkit import make_domain

DOMAIN = make_domain([6, 4, 3, 2])
COUNTS = np.array(
    [
        [2, 2, 2, 0],  # 3 distinct; uniform over 3 -> exp(H) = 3 exactly
        [5, 1, 0, 0],  # 2 distinct; H = log 6 - 5 log 5 / 6
        [1, 1, 1, 1],  # 4 distinct; exp(H) = 4
        [3, 0, 0, 0],  # 1 distinct; exp(H) = 1
        [0, 0, 0, 0],  # empty
    ]
)


def test_distinct_levels():
    m = DistinctLDiversity(l=3)
    assert m.group_levels(COUNTS, DOMAIN).tolist() == [3, 2, 4, 1, 0]
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, False, True, False, False]


def test_entropy_levels():
    m = EntropyLDiversity(l=3)
    lv = m.group_levels(COUNTS, DOMAIN)
    h2 = math.log(6) - 5 * math.log(5) / 6  # 0.4506...
    assert lv == pytest.approx([3.0, math.exp(h2), 4.0, 1.0, 0.0])
    # group 0 is exactly entropy 3-diverse: the 1e-12 tolerance keeps it
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, False, True, False, False]
    assert EntropyLDiversity(l=1.5).holds(COUNTS, DOMAIN).tolist() == [
        True, True, True, False, False,
    ]  # exp(h2) = 1.569 >= 1.5


def test_recursive_levels_hand_computed():
    m = RecursiveCLDiversity(c=2, l=2)
    # row 0: r = (2,2,2): l=1: 2 < 2*6; l=2: 2 < 2*4; l=3: 2 < 2*2 -> level 3
    # row 1: r = (5,1):   l=1: 5 < 12;   l=2: 5 < 2*1 no -> level 1
    # row 2: r = (1,1,1,1): tails 4,3,2,1 -> 1 < 2 for all -> level 4
    # row 3: r = (3): l=1: 3 < 6 -> level 1
    # row 4: empty -> 0
    assert m.group_levels(COUNTS, DOMAIN).tolist() == [3, 1, 4, 1, 0]
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, False, True, False, False]
    # c = 1: row 0 l=3: 2 < 1*2 fails; l=2: 2 < 4 -> level 2; row 2: l=4: 1 < 1 fails
    # -> level 3; row 3: 3 < 3 fails -> 0
    assert RecursiveCLDiversity(c=1, l=2).group_levels(COUNTS, DOMAIN).tolist() == [
        2, 1, 3, 0, 0,
    ]
    # strict inequality decided exactly for a fractional c: row 1 l=1: 5 < 6*(5/6) = 5 fails
    assert RecursiveCLDiversity(c=5 / 6, l=1).holds(COUNTS, DOMAIN)[1] == False  # noqa: E712


def test_recursive_l_beyond_number_of_values_fails():
    assert not RecursiveCLDiversity(c=10, l=5).holds(COUNTS, DOMAIN).any()


def test_paper001_table9_recursive_33_diversity():
    # Paper 001 Table 9 ((3,3)-diversity). Values: Diabetics, HIV, Lung Cancer, Ulcer,
    # Alzhema, Gallstones.
    dom = make_domain([1, 2, 1, 1, 1, 1])
    m = RecursiveCLDiversity(c=3, l=3)
    good = np.array([[1, 1, 1, 0, 0, 0], [0, 1, 0, 1, 1, 1]])  # (a): q1, q2
    bad = np.array([[1, 2, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1]])  # (b): q1 has 2 HIV
    assert m.holds(good, dom).tolist() == [True, True]
    assert m.holds(bad, dom).tolist() == [False, True]
    # (c) the global recoding Q: 2 < 3 * (1 + 1 + 1 + 1)
    assert m.holds(bad.sum(axis=0)[None, :], dom).tolist() == [True]


@pytest.mark.parametrize(
    "ctor, kwargs, param",
    [
        (DistinctLDiversity, {"l": 0}, "l"),
        (DistinctLDiversity, {"l": 2.5}, "l"),
        (EntropyLDiversity, {"l": 0.5}, "l"),
        (EntropyLDiversity, {"l": float("inf")}, "l"),
        (RecursiveCLDiversity, {"c": 0, "l": 2}, "c"),
        (RecursiveCLDiversity, {"c": -1, "l": 2}, "c"),
        (RecursiveCLDiversity, {"c": 2, "l": 0}, "l"),
    ],
)
def test_bad_parameters(ctor, kwargs, param):
    with pytest.raises(ParameterError) as exc:
        ctor(**kwargs)
    assert exc.value.parameter == param


@pytest.mark.parametrize(
    "model",
    [DistinctLDiversity(l=5), EntropyLDiversity(l=5), RecursiveCLDiversity(c=3, l=5)],
)
def test_l_larger_than_distinct_values_is_infeasible(model):
    msg = r"l=5 is larger than the number of distinct SA values in the table \(4\)"
    with pytest.raises(InfeasibleError, match=msg):
        model.validate(DOMAIN)


def test_distinct_does_not_need_l_eligibility():
    # {A: 8, B: 1, C: 1} is not 2-eligible (8 > 10/2) but one group has 3 distinct values
    dom = make_domain([8, 1, 1])
    DistinctLDiversity(l=3).validate(dom)
    RecursiveCLDiversity(c=5, l=2).validate(dom)  # 8 < 5 * 2
    # {A: 6, B..E: 1} is not 2-eligible but exp(H) = 3.41 >= 2
    EntropyLDiversity(l=2).validate(make_domain([6, 1, 1, 1, 1]))


def test_entropy_and_recursive_whole_table_infeasibility():
    dom = make_domain([8, 1, 1])  # exp(H) = 1.89
    with pytest.raises(InfeasibleError, match=r"exp\(H\) = 1.895 < l=2"):
        EntropyLDiversity(l=2).validate(dom)
    with pytest.raises(InfeasibleError, match=r"r1 = 8 >= c \* \(r_l \+ ... \+ r_m\) = 2 \* 2"):
        RecursiveCLDiversity(c=2, l=2).validate(dom)


def test_empty_table_is_infeasible():
    with pytest.raises(InfeasibleError, match="empty"):
        DistinctLDiversity(l=1).validate(make_domain([0, 0]))


@pytest.mark.parametrize("spec", ["l={l}", "simple-l={l},set=s", "simple-l={l},set=s,set-mode=total",
                                  "alpha=0.5,k={l}", "simple-l={l}", "entropy-l={l}", "entropy-l=1.5"])
@pytest.mark.parametrize("seed", range(3))
def test_box_verdict_is_sound_against_every_point(spec, seed):
    """``box_verdict`` (distinct ℓ, entropy ℓ, simple ℓ and (α,k), each set mode): 1 only if every count
    vector in the box (summing to the total) holds, 0 only if none does — checked against
    every point of 400 random small boxes."""
    import itertools

    from openbook.models import make_model
    from openbook.models.base import SADomain

    rng = np.random.default_rng(seed)
    decided = 0
    for _ in range(400):
        v = int(rng.integers(2, 5))
        model = make_model(spec.format(l=int(rng.integers(1, v + 1))))
        lo = rng.integers(0, 3, v)
        hi = lo + rng.integers(0, 3, v)
        total = int(rng.integers(lo.sum(), hi.sum() + 1))
        domain = SADomain(values=np.arange(v), global_counts=np.maximum(hi, 1),
                          sensitive_sets={"s": np.arange(v) < max(1, v // 2)})
        pts = [p for p in itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi)]) if sum(p) == total]
        verdict = int(model.box_verdict(lo[None], hi[None], np.array([total]), domain)[0])
        held = model.holds(np.array(pts, dtype=np.int64), domain)
        if verdict == 1:
            assert held.all()
        elif verdict == 0:
            assert not held.any()
        decided += verdict >= 0
    assert decided > 50
