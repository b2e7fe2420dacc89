"""Paper 000 (Cormode et al., VLDB 2010) examples as tests: App. B (a) GG, App. B (b) strict
vs relaxed Mondrian, Fig. 1 / Fig. 7 even-split tree of SG on 54 rows."""

import numpy as np

from openbook.algorithms import make_algorithm, mondrian_cut, sg_split_point
from openbook.algorithms.greedy import gg_would_close
from openbook.data.table import EncodedTable
from openbook.models import make_model

NEG, POS = 0, 1


def table(qi, sa):
    return EncodedTable.from_codes(qi_codes=np.asarray(qi).reshape(-1, 1), sa_codes=np.asarray(sa),
                                   qi_names=["q"], sa_name="s", sa_categories=np.array(["Negative", "Positive"]),
                                   sensitive_sets={"pos": ["Positive"]})


BINARY2 = "simple-l=2,set=pos"


def test_app_b_a_gg_forms_abcd():
    # a, b positive: bucket {a,b} is not 2-diverse, so GG merges it with {c,d}
    t = table([0, 1, 2, 3], [POS, POS, NEG, NEG])
    model = make_model(BINARY2)
    p = make_algorithm("gg", seed=0, model=model).partition(t)
    assert p.n_groups == 1 and list(p.group) == [0, 0, 0, 0]
    assert p.extra["bucket_bounds"].tolist() == [0, 2, 4]
    assert p.extra["group_first_bucket"].tolist() == [0] and p.extra["group_last_bucket"].tolist() == [1]
    # the decision an attacker replays: {a,b} with two positives would not have been closed
    assert gg_would_close(np.array([0, 2]), model, t.sa_domain) is False
    assert gg_would_close(np.array([1, 1]), model, t.sa_domain) is True


def test_app_b_a_gg_closes_ab_when_diverse():
    t = table([0, 1, 2, 3], [POS, NEG, POS, NEG])
    p = make_algorithm("gg", seed=0, model=make_model(BINARY2)).partition(t)
    assert p.n_groups == 2 and list(p.group) == [0, 0, 1, 1]


QI_B = [0, 1, 2, 2, 2, 3]  # a, b, c, c, c, d


def test_app_b_b_strict_mondrian_cut_is_ab_vs_cccd():
    m, t, left = mondrian_cut(np.array(QI_B), strict=True)
    assert m == 2 and t == 0 and left.tolist() == [True, True, False, False, False, False]


def test_app_b_b_strict_mondrian_keeps_group_when_ab_positive():
    t = table(QI_B, [POS, POS, NEG, NEG, NEG, NEG])
    p = make_algorithm("mondrian", model=make_model(BINARY2), strict=True).partition(t)
    assert p.n_groups == 1
    assert p.extra["tree_dim"].tolist() == [-1]


def test_app_b_b_strict_mondrian_splits_ab_cccd():
    t = table(QI_B, [POS, NEG, NEG, NEG, NEG, POS])  # {c,c,c}|{d} would leave d alone and positive
    p = make_algorithm("mondrian", model=make_model(BINARY2), strict=True).partition(t)
    assert p.n_groups == 2
    assert [sorted(m.tolist()) for m in p.members()] == [[0, 1], [2, 3, 4, 5]]


def test_app_b_b_relaxed_mondrian_splits_evenly():
    m, t, left = mondrian_cut(np.array(QI_B), strict=False)
    assert left.sum() == 3 and left.tolist() == [True, True, True, False, False, False]
    # with a and b positive, {a,b,c} is not 2-diverse: relaxed keeps the group as well
    p = make_algorithm("mondrian", model=make_model(BINARY2), strict=False).partition(
        table(QI_B, [POS, POS, NEG, NEG, NEG, NEG]))
    assert p.n_groups == 1
    # positives at a and the second c: the root splits 3 / 3
    p = make_algorithm("mondrian", model=make_model(BINARY2), strict=False).partition(
        table(QI_B, [POS, NEG, NEG, NEG, POS, NEG]))
    sizes = p.extra["tree_hi"] - p.extra["tree_lo"]
    kids = np.flatnonzero(p.extra["tree_parent"] == 0)
    assert sizes[kids].tolist() == [3, 3]


def test_sg_split_point_is_fig7_floor():
    # Fig. 7: t_l..t_r splits at floor((l+r)/2) (1-based, inclusive) -> left is the larger half
    for r in range(2, 60):
        assert sg_split_point(0, r) == (1 + r) // 2
    assert sg_split_point(0, 54) == 27 and sg_split_point(0, 27) == 14 and sg_split_point(14, 27) == 21


def test_sg_54_rows_even_split_tree():
    rng = np.random.default_rng(0)
    t = EncodedTable.from_codes(qi_codes=np.arange(54).reshape(-1, 1), sa_codes=rng.integers(0, 3, 54))
    p = make_algorithm("sg", seed=0, model=make_model("k=6")).partition(t)
    lo, hi, par = p.extra["tree_lo"], p.extra["tree_hi"], p.extra["tree_parent"]
    sizes = hi - lo
    depth = np.zeros(lo.size, dtype=int)
    for i in range(1, lo.size):
        depth[i] = depth[par[i]] + 1
    by_level = [sorted(sizes[depth == k].tolist(), reverse=True) for k in range(depth.max() + 1)]
    assert by_level[0] == [54]
    assert sizes[depth == 1].tolist() == [27, 27]
    assert sizes[depth == 2].tolist() == [14, 13, 14, 13]
    assert sizes[depth == 3].tolist() == [7, 7, 7, 6, 7, 7, 7, 6]
    assert len(by_level) == 4  # 7 -> 4/3 would break 6-anonymity
    assert p.sizes().tolist() == [7, 7, 7, 6, 7, 7, 7, 6]
    # every split is even (children differ by at most one row)
    for node in np.flatnonzero(p.extra["tree_split"]):
        kids = np.flatnonzero(par == node)
        assert abs(int(sizes[kids[0]]) - int(sizes[kids[1]])) <= 1
