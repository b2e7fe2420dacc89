import numpy as np
import pytest

from openbook.errors import InfeasibleError, ParameterError
from openbook.models import AlphaKAnonymity, SimpleLDiversity

from models_testkit import make_domain

# values: flu, hiv, cancer, none; sensitive set "sens" = {hiv, cancer}
DOMAIN = make_domain(
    [5, 3, 3, 9],
    values=["flu", "hiv", "cancer", "none"],
    sets={"sens": [False, True, True, False], "hiv": [False, True, False, False]},
)
COUNTS = np.array(
    [
        [1, 1, 1, 3],  # size 6: max 3/6 = .5; sens each 1/6; sens total 2/6
        [2, 2, 2, 0],  # size 6: max 2/6;       sens each 2/6; sens total 4/6
        [0, 1, 0, 2],  # size 3: max 2/3;       sens each 1/3; sens total 1/3
        [2, 0, 0, 4],  # size 6: max 4/6;       sens each 0;   sens total 0
        [0, 0, 0, 0],  # empty
    ]
)


def test_alpha_over_all_values():
    m = AlphaKAnonymity(alpha=0.5)
    assert m.group_levels(COUNTS, DOMAIN) == pytest.approx([0.5, 1 / 3, 2 / 3, 2 / 3, 1.0])
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, True, False, False, False]
    assert m.table_level(COUNTS[:4], DOMAIN) == pytest.approx(2 / 3)
    assert not m.higher_is_stronger


def test_alpha_with_k():
    assert AlphaKAnonymity(alpha=0.7, k=4).holds(COUNTS, DOMAIN).tolist() == [
        True, True, False, True, False,
    ]


def test_sensitive_set_each_vs_total():
    each = AlphaKAnonymity(alpha=1 / 3, sensitive_set="sens")
    total = AlphaKAnonymity(alpha=1 / 3, sensitive_set="sens", set_mode="total")
    assert each.group_levels(COUNTS, DOMAIN) == pytest.approx([1 / 6, 1 / 3, 1 / 3, 0, 1])
    assert total.group_levels(COUNTS, DOMAIN) == pytest.approx([1 / 3, 2 / 3, 1 / 3, 0, 1])
    # exactly 1/3 passes: 1/3 typed as a float is compared exactly as count * 3 <= size
    assert each.holds(COUNTS, DOMAIN).tolist() == [True, True, True, True, False]
    assert total.holds(COUNTS, DOMAIN).tolist() == [True, False, True, True, False]


def test_simple_l_diversity_is_alpha_one_over_l():
    s = SimpleLDiversity(l=3)
    a = AlphaKAnonymity(alpha=1 / 3)
    assert s.holds(COUNTS, DOMAIN).tolist() == a.holds(COUNTS, DOMAIN).tolist()
    assert s.holds(COUNTS, DOMAIN).tolist() == [False, True, False, False, False]
    assert s.group_levels(COUNTS, DOMAIN) == pytest.approx(a.group_levels(COUNTS, DOMAIN))
    assert s.params() == {"l": 3, "sensitive_set": None, "set_mode": "each"}
    assert s.describe() == "simple-l-diversity(l=3, set_mode=each)"


def test_binary_l_diversity_paper000_fig6():
    # Paper 000 Appendix B, Fig. 6(b): binary 2-diversity with Mondrian; {a, b} both
    # positive fails, {c, c, c, d} with 2 positives of 4 holds.
    dom = make_domain([2, 4], values=["pos", "neg"], sets={"pos": [True, False]})
    m = SimpleLDiversity(l=2, sensitive_set="pos")
    assert m.holds(np.array([[2, 0], [0, 4], [2, 2], [1, 1]]), dom).tolist() == [
        False, True, True, True,
    ]


def test_exact_integer_comparison_for_simple_l():
    # 7 rows, l = 7: one of each of 7 values; a float 1/7 * 7 might round below 1
    dom = make_domain([1] * 7)
    assert SimpleLDiversity(l=7).holds(np.ones((1, 7), dtype=int), dom).tolist() == [True]
    assert AlphaKAnonymity(alpha=1 / 7).holds(np.ones((1, 7), dtype=int), dom).tolist() == [True]
    # alpha=0.57, 57 of 100: in floats 0.57 * 100 = 56.99999999999999 < 57
    assert 0.57 * 100 < 57
    dom100 = make_domain([57, 43])
    assert AlphaKAnonymity(alpha=0.57).holds(np.array([[57, 43], [58, 42]]), dom100).tolist() == [
        True, False,
    ]


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"alpha": 0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": -0.1}, "alpha"),
        ({"alpha": 0.5, "k": 0}, "k"),
        ({"alpha": 0.5, "set_mode": "any"}, "set_mode"),
        ({"alpha": 0.5, "set_mode": "total"}, "set_mode"),  # total needs a set
        ({"alpha": 0.5, "sensitive_set": 3}, "sensitive_set"),
    ],
)
def test_bad_alpha_parameters(kwargs, param):
    with pytest.raises(ParameterError) as exc:
        AlphaKAnonymity(**kwargs)
    assert exc.value.parameter == param


def test_alpha_one_is_allowed():
    assert AlphaKAnonymity(alpha=1).holds(COUNTS, DOMAIN).tolist() == [True] * 4 + [False]


def test_bad_l():
    with pytest.raises(ParameterError) as exc:
        SimpleLDiversity(l=0.5)
    assert exc.value.parameter == "l"


def test_unknown_sensitive_set():
    with pytest.raises(ParameterError, match="unknown sensitive value set 'nope'"):
        AlphaKAnonymity(alpha=0.5, sensitive_set="nope").holds(COUNTS, DOMAIN)


def test_ineligible_table_names_r_suppression():
    # 'none' occurs 9 of 20 times: 20/3 -> at most 6 of one value
    with pytest.raises(InfeasibleError) as exc:
        SimpleLDiversity(l=3).validate(DOMAIN)
    msg = str(exc.value)
    assert "not 3-eligible" in msg
    assert "'none' occurs 9 times but at most 6 of 20 rows" in msg
    assert "R-suppression" in msg and "skew='r-suppression'" in msg  # the API's keyword
    assert "\n" not in msg
    from openbook.errors import INTERFACE

    token = INTERFACE.set("cli")  # the command line names its flag
    try:
        with pytest.raises(InfeasibleError, match="--skew r-suppression"):
            SimpleLDiversity(l=3).validate(DOMAIN)
    finally:
        INTERFACE.reset(token)
    with pytest.raises(InfeasibleError, match="not 5-eligible.*R-suppression"):
        AlphaKAnonymity(alpha=0.2).validate(DOMAIN)
    SimpleLDiversity(l=2).validate(DOMAIN)  # 9 <= 10


def test_eligibility_restricted_to_the_sensitive_set():
    # only hiv / cancer (3 each of 20) must be eligible: 3 <= floor(20/6)
    SimpleLDiversity(l=6, sensitive_set="sens").validate(DOMAIN)
    with pytest.raises(InfeasibleError, match="value .*'hiv' occurs 3 times but at most 2"):
        SimpleLDiversity(l=7, sensitive_set="sens").validate(DOMAIN)
    # total: 6 of 20 -> l=3 allows 6, l=4 allows 5
    SimpleLDiversity(l=3, sensitive_set="sens", set_mode="total").validate(DOMAIN)
    with pytest.raises(InfeasibleError, match="6 times in total but at most 5 of 20.*R-supp"):
        SimpleLDiversity(l=4, sensitive_set="sens", set_mode="total").validate(DOMAIN)


def test_k_too_large():
    with pytest.raises(InfeasibleError, match=r"k=21 is larger than the table \(20 rows\)"):
        AlphaKAnonymity(alpha=0.9, k=21).validate(DOMAIN)
