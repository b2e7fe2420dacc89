import numpy as np
import pytest

from openbook.algorithms import make_algorithm, qi_order
from openbook.algorithms.greedy import bucket_bounds, gg_would_close, rgg_close_probability
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError
from openbook.models import make_model


def random_table(n=60, d=2, n_sa=4, seed=0, card=8):
    rng = np.random.default_rng(seed)
    qi = rng.integers(0, card, size=(n, d))
    sa = rng.integers(0, n_sa, size=n)
    sa[:n_sa] = np.arange(n_sa)
    return EncodedTable.from_codes(qi_codes=qi, sa_codes=sa, sensitive_sets={"s": [0]})


def test_bucket_bounds_last_bucket_holds_remainder():
    assert bucket_bounds(10, 3).tolist() == [0, 3, 6, 9, 10]
    assert bucket_bounds(9, 3).tolist() == [0, 3, 6, 9]


def test_lex_order_follows_priority():
    t = EncodedTable.from_codes(qi_codes=np.array([[1, 0], [0, 1], [0, 0], [1, 1]]), sa_codes=np.array([0, 1, 0, 1]))
    assert qi_order(t, "lex").tolist() == [2, 1, 0, 3]
    assert qi_order(t, "lex", ["qi1", "qi0"]).tolist() == [2, 0, 1, 3]
    for method in ("zorder", "hilbert"):
        o = qi_order(t, method)
        assert sorted(o.tolist()) == [0, 1, 2, 3]


def test_hilbert_order_is_a_path_of_unit_steps():
    # on a full 4x4 grid the Hilbert order visits neighbours only
    g = np.array([(x, y) for x in range(4) for y in range(4)])
    t = EncodedTable.from_codes(qi_codes=g, sa_codes=np.arange(16) % 2)
    pts = g[qi_order(t, "hilbert")]
    assert (np.abs(np.diff(pts, axis=0)).sum(axis=1) == 1).all()


def test_gg_groups_close_at_first_satisfying_bucket():
    # l=2, buckets of 2 in QI order: {0,0} fails, {0,0,1,2}: holds -> group; {1,1} fails, +{2,3} holds
    t = EncodedTable.from_codes(qi_codes=np.arange(8).reshape(-1, 1), sa_codes=np.array([0, 0, 1, 2, 1, 1, 2, 3]))
    p = make_algorithm("gg", seed=0, model=make_model("l=2")).partition(t)
    assert p.group.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert p.provenance["bucket_size"] == 2 and p.provenance["n_buckets"] == 4


def test_gg_tail_merge_and_drop():
    # last bucket {5} alone cannot be 2-diverse
    t = EncodedTable.from_codes(qi_codes=np.arange(5).reshape(-1, 1), sa_codes=np.array([0, 1, 0, 1, 1]))
    merged = make_algorithm("gg", seed=0, model=make_model("l=2")).partition(t)
    assert merged.group.tolist() == [0, 0, 1, 1, 1] and merged.n_suppressed == 0
    dropped = make_algorithm("gg", seed=0, model=make_model("l=2"), tail="drop").partition(t)
    assert dropped.group.tolist() == [0, 0, 1, 1, -1]
    assert dropped.provenance["tail_dropped_rows"] == 1 and dropped.provenance["tail_buckets"] == [2, 3]


def test_rgg_p0_is_gg_and_p1_gives_larger_groups():
    t = random_table(n=200, n_sa=5, seed=3)
    m = make_model("l=2")
    gg = make_algorithm("gg", model=m, seed=1).partition(t)  # the seed also draws the order of equal QIs
    assert np.array_equal(make_algorithm("rgg", model=m, p=0.0, seed=1).partition(t).group, gg.group)
    big = make_algorithm("rgg", model=m, p=0.9, seed=1).partition(t)
    assert big.n_groups < gg.n_groups
    assert big.provenance["voluntary_merges"] > 0


def test_rgg_voluntary_merge_rate_matches_p():
    # k=1 with buckets of 1 row: every bucket holds, so every decision is a coin flip
    t = EncodedTable.from_codes(qi_codes=np.arange(4000).reshape(-1, 1), sa_codes=np.arange(4000) % 3)
    p = make_algorithm("rgg", model=make_model("k=1"), p=0.3, seed=5).partition(t)
    # groups are geometric: mean size 1/(1-p); decisions = n - 1 coin flips, n_groups - 1 closes
    closes = p.n_groups - 1
    flips = t.n_rows - 1
    rate = 1 - closes / flips
    se = np.sqrt(0.3 * 0.7 / flips)
    assert abs(rate - 0.3) < 4 * se


def test_rgg_same_seed_same_output_different_seed_differs():
    t = random_table(n=300, seed=1)
    m = make_model("k=2")
    a = make_algorithm("rgg", model=m, p=0.5, seed=11).partition(t)
    b = make_algorithm("rgg", model=m, p=0.5, seed=11).partition(t)
    c = make_algorithm("rgg", model=m, p=0.5, seed=12).partition(t)
    assert np.array_equal(a.group, b.group) and not np.array_equal(a.group, c.group)


def test_decision_functions():
    t = random_table()
    m = make_model("l=2")
    assert gg_would_close(np.array([1, 1, 0, 0]), m, t.sa_domain) is True
    assert gg_would_close(np.array([[2, 0, 0, 0], [1, 0, 1, 0]]), m, t.sa_domain).tolist() == [False, True]
    assert rgg_close_probability(True, 0.25) == 0.75
    assert rgg_close_probability(False, 0.25) == 0.0
    assert rgg_close_probability(True, 0.25, has_next_bucket=False) == 1.0


@pytest.mark.parametrize("kwargs, param", [
    ({"p": 1.5}, "p"), ({"p": -0.1}, "p"), ({"p": "x"}, "p"), ({"order": "spiral"}, "order"),
    ({"tail": "keep"}, "tail"), ({"bucket_size": 0}, "bucket_size"), ({"priority": []}, "priority"),
    ({"priority": ["nope"]}, "priority"),
])
def test_bad_parameters(kwargs, param):
    with pytest.raises(ParameterError) as e:
        make_algorithm("rgg", seed=0, model=make_model("l=2"), **kwargs).partition(random_table())
    assert e.value.parameter == param


def test_l_above_number_of_sa_values_is_infeasible():
    with pytest.raises(InfeasibleError):
        make_algorithm("gg", seed=0, model=make_model("l=5")).partition(random_table(n_sa=4))


def test_unknown_keyword_is_a_parameter_error():
    with pytest.raises(ParameterError, match="levels"):
        make_algorithm("gg", seed=0, model=make_model("l=2"), levels=[1])
