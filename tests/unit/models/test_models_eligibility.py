import numpy as np
import pytest

from openbook.errors import InfeasibleError, ParameterError
from openbook.models import LEligibility, explain_eligibility

from models_testkit import make_domain

# Paper 004 Example (Figure 1 / Example 4): T = {S1:10, S2:4, S3:2, S4:1, S5:1}, l = 3.
PAPER_T = [10, 4, 2, 1, 1]
VALUES = ["S1", "S2", "S3", "S4", "S5"]


def test_paper004_example_violates_3_eligibility():
    rep = explain_eligibility(PAPER_T, VALUES, 3)
    assert not rep.eligible
    assert rep.n_rows == 18 and rep.allowed == 6  # 10 > |T|/3 = 18/3
    assert [(v.value, v.count, v.allowed, v.excess) for v in rep.violations] == [
        ("S1", 10, 6, 4)
    ]
    assert rep.max_value == "S1" and rep.max_count == 10
    assert rep.eligible_l == 1  # floor(18 / 10)
    line = rep.one_line()
    assert line == (
        "the table (18 rows) is not 3-eligible: SA value 'S1' occurs 10 times but at most "
        "6 = floor(18/3) rows may share one value (excess 4); the table is at most 1-eligible"
    )
    assert str(rep) == line


def test_paper004_example_after_r_suppression_is_eligible():
    # Example 4: R-suppression returns TP = {S1':3, S2':3, S3':2, S4':1, S5':1}
    rep = explain_eligibility([3, 3, 2, 1, 1], VALUES, 3)
    assert rep.eligible and rep.allowed == 3 and rep.eligible_l == 3
    assert "is 3-eligible" in rep.one_line()


def test_several_violations_are_listed_most_frequent_first():
    rep = explain_eligibility([3, 5, 4, 0], ["a", "b", "c", "d"], 4)  # allowed 3
    assert [(v.value, v.excess) for v in rep.violations] == [("b", 2), ("c", 1)]
    assert "(and 1 more value)" in rep.one_line()


def test_model_levels_and_holds():
    dom = make_domain([10, 4, 2, 1, 1])
    counts = np.array([PAPER_T, [3, 3, 2, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0]])
    m = LEligibility(l=3)
    assert m.group_levels(counts, dom) == pytest.approx([1.8, 10 / 3, 3.0, 0.0])
    assert m.holds(counts, dom).tolist() == [False, True, True, False]
    with pytest.raises(InfeasibleError, match="not 3-eligible.*R-suppression"):
        m.validate(dom)
    LEligibility(l=1).validate(dom)


def test_bad_l():
    with pytest.raises(ParameterError) as exc:
        LEligibility(l=0)
    assert exc.value.parameter == "l"
    with pytest.raises(ParameterError):
        explain_eligibility([1, 2], ["a", "b"], 0.5)


def test_empty_table_is_not_eligible():
    rep = explain_eligibility([0, 0], ["a", "b"], 2)
    assert not rep.eligible and rep.eligible_l == 0
    assert rep.one_line() == "the table is empty, so it is not 2-eligible"
    with pytest.raises(InfeasibleError, match="empty"):
        LEligibility(l=2).validate(make_domain([0, 0]))
