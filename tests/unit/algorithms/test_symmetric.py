import numpy as np
import pytest

from openbook.algorithms import make_algorithm, sg_would_split
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError
from openbook.models import make_model


def random_table(n=60, d=2, n_sa=4, seed=0, card=8):
    rng = np.random.default_rng(seed)
    qi = rng.integers(0, card, size=(n, d))
    sa = rng.integers(0, n_sa, size=n)
    sa[:n_sa] = np.arange(n_sa)
    return EncodedTable.from_codes(qi_codes=qi, sa_codes=sa, sensitive_sets={"s": [0]})


def test_sg_groups_are_contiguous_in_order_and_tree_is_even():
    t = random_table(n=101, n_sa=5, seed=4)
    p = make_algorithm("sg", seed=0, model=make_model("l=2"), order="zorder").partition(t)
    order = p.extra["order"]
    # groups are consecutive runs of the order, numbered along it
    assert (np.diff(p.group[order]) >= 0).all()
    lo, hi, par, split = (p.extra[k] for k in ("tree_lo", "tree_hi", "tree_parent", "tree_split"))
    for node in np.flatnonzero(split):
        kids = np.flatnonzero(par == node)
        sizes = hi[kids] - lo[kids]
        assert sizes[0] - sizes[1] in (0, 1)  # the left half is the larger
    # replay: an unsplit node's halves do not both satisfy the model; split nodes' do
    m, dom = make_model("l=2"), t.sa_domain
    for node in range(lo.size):
        r = hi[node] - lo[node]
        if r < 2:
            continue
        mid = lo[node] + (r + 1) // 2
        lc = np.bincount(t.sa_codes[order[lo[node]:mid]], minlength=5)
        rc = np.bincount(t.sa_codes[order[mid:hi[node]]], minlength=5)
        assert sg_would_split(lc, rc, m, dom) == bool(split[node])


def test_sg_whole_table_when_no_split_is_allowed():
    t = random_table(n=10, n_sa=4)
    p = make_algorithm("sg", seed=0, model=make_model("k=6")).partition(t)
    assert p.n_groups == 1


def test_sg_bad_input():
    with pytest.raises(ParameterError):
        make_algorithm("sg", seed=0, model=make_model("k=2"), order="nope").partition(random_table())
    with pytest.raises(InfeasibleError):
        make_algorithm("sg", seed=0, model=make_model("l=9")).partition(random_table(n_sa=4))
