import numpy as np
import pytest

from openbook.algorithms import anatomize_groups, make_algorithm
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError
from openbook.models import make_model


def table(sa, n_qi=1, seed=0):
    rng = np.random.default_rng(seed)
    sa = np.asarray(sa)
    return EncodedTable.from_codes(qi_codes=rng.integers(0, 5, size=(sa.size, n_qi)), sa_codes=sa)


def test_anatomy_groups_have_l_distinct_values_each_once():
    rng = np.random.default_rng(1)
    sa = rng.choice(6, size=500, p=[0.2, 0.2, 0.2, 0.15, 0.15, 0.1])
    t = table(sa)
    p = make_algorithm("anatomy", model=make_model("l=4"), seed=3).partition(t)
    counts = t.group_sa_counts(p.group, p.n_groups)
    assert counts.max() == 1  # every value at most once per group
    sizes = counts.sum(axis=1)
    assert sizes.min() >= 4 and sizes.max() <= 4 + 3
    assert (sizes > 4).sum() <= 3  # at most l-1 residue rows
    assert p.n_suppressed == 0


def test_anatomy_is_sa_only_and_seeded():
    rng = np.random.default_rng(2)
    sa = rng.integers(0, 5, 200)
    t1, t2 = table(sa, seed=1), table(sa, seed=99)  # same SA, different QIs
    a = make_algorithm("anatomy", model=make_model("l=3"), seed=7)
    assert np.array_equal(a.partition(t1).group, a.partition(t2).group)  # Definition 3: SA-only
    b = make_algorithm("anatomy", model=make_model("l=3"), seed=8).partition(t1)
    assert not np.array_equal(a.partition(t1).group, b.group)


def test_anatomy_picks_uniformly_among_rows_of_a_value():
    # 2 values x 50 rows: with l = 2 each group takes one row of each value; which row of
    # value 0 ends up grouped with row 50 (the first row of value 1)? uniform over 50
    sa = np.repeat([0, 1], 50)
    t = table(sa)
    hits = np.zeros(50)
    trials = 400
    for s in range(trials):
        g = make_algorithm("anatomy", model=make_model("l=2"), seed=s).partition(t).group
        partner = np.flatnonzero((g == g[50]) & (sa == 0))
        hits[partner] += 1
    # chi-square-like check: each cell ~ Binomial(400, 1/50); mean 8, sd ~2.8
    assert hits.sum() == trials
    assert hits.max() < 8 + 4.5 * np.sqrt(8) + 1


def test_anatomize_runs_inside_groups_and_keeps_ineligible_groups_whole():
    sa = np.array([0, 1, 2, 3, 0, 1, 0, 0, 0, 1])
    t = table(sa)
    group = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    new, n_new, parent, anat = anatomize_groups(t, group, 2, 2, np.random.default_rng(0))
    assert anat.tolist() == [True, False]  # group 1 has value 0 three times in 4 rows
    assert n_new == 4 and parent.tolist() == [0, 0, 0, 1]
    assert set(new[6:]) == {3}
    c = t.group_sa_counts(new, n_new)
    assert c[:3].max() == 1


def test_rgg_ana_and_sg_ana_are_finer_than_their_base():
    rng = np.random.default_rng(3)
    sa = rng.integers(0, 8, 800)
    t = table(sa, n_qi=2)
    m = make_model("simple-l=4")
    for base in ("rgg", "sg"):
        kw = {"p": 0.5} if base == "rgg" else {}
        bp = make_algorithm(base, model=m, seed=1, **kw).partition(t)
        ap = make_algorithm(f"{base}-ana", model=m, seed=1, **kw).partition(t)
        assert ap.n_groups > bp.n_groups
        # every anatomized group lies inside one base group
        for g in range(ap.n_groups):
            assert len(set(bp.group[ap.group == g])) == 1
        assert m.holds(t.group_sa_counts(ap.group, ap.n_groups), t.sa_domain).all()
    base_ana = make_algorithm("base-ana", model=m, seed=1).partition(t)
    assert base_ana.n_groups == 800 // 4


def test_bad_input():
    t = table(np.arange(40) % 4)
    with pytest.raises(ParameterError, match="no ℓ"):
        make_algorithm("anatomy", model=make_model("k=5")).partition(t)  # k-anonymity only
    with pytest.raises(InfeasibleError, match="above the number of SA values"):
        make_algorithm("anatomy", model=make_model("k=2"), l=5).partition(t)
    with pytest.raises(InfeasibleError):
        make_algorithm("anatomy", model=make_model("l=5")).partition(t)
    skewed = table(np.array([0] * 30 + [1, 2, 3] * 4))
    with pytest.raises(InfeasibleError, match="eligible"):
        make_algorithm("anatomy", model=make_model("entropy-l=2"), l=3).partition(skewed)
    with pytest.raises(ParameterError):
        make_algorithm("anatomy", model=make_model("l=2"), l=0).partition(t)
    with pytest.raises(ParameterError, match="anatomize: base must be one of .*, got .sg-ana.$"):
        make_algorithm("anatomize", model=make_model("l=2"), base="sg-ana").partition(t)
