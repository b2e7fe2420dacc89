import numpy as np
import pytest

from openbook.errors import InfeasibleError, ParameterError
from openbook.models import KAnonymity

from models_testkit import make_domain

DOMAIN = make_domain([4, 3, 1])
# group sizes: 3, 5, 0 (empty)
COUNTS = np.array([[2, 1, 0], [2, 2, 1], [0, 0, 0]])


def test_levels_are_group_sizes():
    m = KAnonymity(k=3)
    assert m.group_levels(COUNTS, DOMAIN).tolist() == [3.0, 5.0, 0.0]
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, True, False]
    assert m.table_level(COUNTS[:2], DOMAIN) == 3.0
    assert KAnonymity(k=4).holds(COUNTS, DOMAIN).tolist() == [False, True, False]


def test_integral_float_k_accepted_and_stored_as_int():
    assert KAnonymity(k=5.0).k == 5
    assert KAnonymity(k=np.int64(2)).params() == {"k": 2}


@pytest.mark.parametrize("bad", [0, -1, 2.5, "5", None, True, float("nan")])
def test_bad_k(bad):
    with pytest.raises(ParameterError) as exc:
        KAnonymity(k=bad)
    assert exc.value.parameter == "k"
    assert "k" in str(exc.value) and "\n" not in str(exc.value)


def test_k_larger_than_table_is_infeasible():
    with pytest.raises(InfeasibleError, match=r"k=9 is larger than the table \(8 rows\)"):
        KAnonymity(k=9).validate(DOMAIN)
    KAnonymity(k=8).validate(DOMAIN)


def test_keyword_only():
    with pytest.raises(TypeError):
        KAnonymity(3)  # type: ignore[misc]
