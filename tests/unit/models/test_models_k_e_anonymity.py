import numpy as np
import pytest

from openbook.errors import InfeasibleError, ParameterError
from openbook.models import KEAnonymity

from models_testkit import make_domain

# Paper 001 Table 11: Income, k = 2, e = 5k; values 10k, 20k, 30k, 40k
DOMAIN = make_domain(
    [1, 2, 2, 1], values=["10k", "20k", "30k", "40k"], numeric=[10e3, 20e3, 30e3, 40e3]
)


def test_paper001_table11():
    m = KEAnonymity(k=2, e=5000)
    good = np.array([[0, 1, 1, 0], [0, 1, 1, 1]])  # (a) q1 = {30k, 20k}; q2 = {30k, 20k, 40k}
    bad = np.array([[0, 0, 2, 0], [1, 1, 0, 1]])  # (b) q1 = {30k, 30k}; q2 = {20k, 10k, 40k}
    assert m.group_levels(good, DOMAIN).tolist() == [10e3, 20e3]
    assert m.holds(good, DOMAIN).tolist() == [True, True]
    assert m.group_levels(bad, DOMAIN).tolist() == [0.0, 30e3]
    assert m.holds(bad, DOMAIN).tolist() == [False, True]


def test_distinct_and_range_both_needed():
    counts = np.array([[5, 0, 0, 1], [0, 3, 3, 0], [0, 0, 0, 0]])
    # ranges 30k, 10k, 0; distinct 2, 2, 0
    assert KEAnonymity(k=2, e=20000).holds(counts, DOMAIN).tolist() == [True, False, False]
    assert KEAnonymity(k=3, e=0).holds(counts, DOMAIN).tolist() == [False, False, False]
    # the numeric order need not follow the codes
    shuffled = make_domain([1, 1, 1], numeric=[5.0, -2.0, 1.0])
    three = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])
    assert KEAnonymity(k=1, e=0).group_levels(three, shuffled).tolist() == [7.0, 3.0, 4.0]


def test_non_numeric_sa_is_a_parameter_error():
    with pytest.raises(ParameterError, match="declared categorical: declare it numeric") as exc:
        KEAnonymity(k=2, e=1).holds(np.array([[1, 1]]), make_domain([1, 1]))
    assert exc.value.parameter == "numeric"
    with pytest.raises(ParameterError, match="declared categorical: declare it numeric"):
        KEAnonymity(k=2, e=1).validate(make_domain([1, 1]))


@pytest.mark.parametrize("kwargs, param", [({"k": 0, "e": 1}, "k"), ({"k": 2, "e": -1}, "e")])
def test_bad_parameters(kwargs, param):
    with pytest.raises(ParameterError) as exc:
        KEAnonymity(**kwargs)
    assert exc.value.parameter == param


def test_infeasible():
    with pytest.raises(InfeasibleError, match=r"k=5 is larger than the number of distinct"):
        KEAnonymity(k=5, e=0).validate(DOMAIN)
    with pytest.raises(InfeasibleError, match=r"e=40000 is larger than the SA range .* \(30000\)"):
        KEAnonymity(k=2, e=40000).validate(DOMAIN)
    KEAnonymity(k=4, e=30000).validate(DOMAIN)
