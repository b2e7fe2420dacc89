import numpy as np
import pytest

from openbook.algorithms import make_algorithm, mondrian_cut, mondrian_would_split
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError
from openbook.models import make_model


def random_table(n=60, d=2, n_sa=4, seed=0, card=8):
    rng = np.random.default_rng(seed)
    qi = rng.integers(0, card, size=(n, d))
    sa = rng.integers(0, n_sa, size=n)
    sa[:n_sa] = np.arange(n_sa)
    return EncodedTable.from_codes(qi_codes=qi, sa_codes=sa)


def brute_force_mondrian(t, model, strict):
    """Reference: recursive Python Mondrian with the same cut and dimension rules."""
    X = t.qi_codes.astype(np.int64)
    card = t.qi_cardinalities
    span = np.maximum(card - 1, 1)
    groups = []

    def rec(rows):
        ok_cut = None
        if rows.size >= 2:
            w = (X[rows].max(axis=0) - X[rows].min(axis=0)) / span
            for j in np.argsort(-w, kind="stable"):
                if w[j] <= 0:
                    break
                try:
                    _, _, left = mondrian_cut(X[rows, j], strict)
                except ValueError:
                    continue
                lc = np.bincount(t.sa_codes[rows[left]], minlength=t.sa_domain.n_values)
                rc = np.bincount(t.sa_codes[rows[~left]], minlength=t.sa_domain.n_values)
                if mondrian_would_split(lc, rc, model, t.sa_domain):
                    ok_cut = left
                    break
        if ok_cut is None:
            groups.append(frozenset(rows.tolist()))
        else:
            rec(rows[ok_cut])
            rec(rows[~ok_cut])

    rec(np.arange(t.n_rows))
    return set(groups)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("spec", ["k=3", "l=2", "entropy-l=2", "t=0.4"])
@pytest.mark.parametrize("seed", range(6))
def test_matches_recursive_reference(strict, spec, seed):
    t = random_table(n=80, d=3, seed=seed, card=[5, 9, 30][seed % 3])
    m = make_model(spec)
    p = make_algorithm("mondrian", model=m, strict=strict).partition(t)
    got = {frozenset(g.tolist()) for g in p.members()}
    assert got == brute_force_mondrian(t, m, strict)


def test_cut_rules():
    # strict: upper median, all of a value to one side
    assert mondrian_cut(np.array([3, 1, 2, 2]), True)[2].tolist() == [False, True, False, False]
    # the median is the minimum: the minimum's points go left
    assert mondrian_cut(np.array([0, 0, 0, 1]), True)[2].tolist() == [True, True, True, False]
    with pytest.raises(ValueError):
        mondrian_cut(np.array([2, 2, 2]), True)
    # relaxed: ceil(r/2) smallest, ties in row order
    m, t, left = mondrian_cut(np.array([2, 2, 2, 2, 2]), False)
    assert left.tolist() == [True, True, True, False, False] and (m, t) == (2, 3)


def test_wide_numeric_range_uses_the_sort_path():
    rng = np.random.default_rng(2)
    qi = np.column_stack([rng.permutation(5000)[:300], rng.integers(0, 3, 300)])
    t = EncodedTable.from_codes(qi_codes=qi, sa_codes=rng.integers(0, 4, 300))
    for strict in (True, False):
        m = make_model("k=4")
        p = make_algorithm("mondrian", model=m, strict=strict).partition(t)
        assert {frozenset(g.tolist()) for g in p.members()} == brute_force_mondrian(t, m, strict)


def test_k_anonymity_groups_between_k_and_2k_minus_1_on_distinct_points():
    rng = np.random.default_rng(0)
    t = EncodedTable.from_codes(qi_codes=rng.permutation(1000).reshape(-1, 1), sa_codes=rng.integers(0, 3, 1000))
    p = make_algorithm("mondrian", model=make_model("k=10"), strict=True).partition(t)
    s = p.sizes()
    assert s.min() >= 10 and s.max() <= 19


def test_hierarchy_cuts_follow_children():
    from openbook.hierarchy import from_levels

    leaves = ["a1", "a2", "a3", "b1", "b2", "c1"]
    h = from_levels([[x, x[0].upper(), "*"] for x in leaves], column="c")
    codes = np.repeat(np.arange(6), 10)
    sa = np.tile(np.arange(5), 12)
    t = EncodedTable.from_codes(qi_codes=codes.reshape(-1, 1), sa_codes=sa, qi_names=["c"],
                                qi_categories=[np.array(leaves, dtype=object)], qi_kinds=["categorical"],
                                hierarchies={"c": h})
    p = make_algorithm("mondrian", model=make_model("k=5"), categorical="hierarchy").partition(t)
    # every group's values lie under one child of the root (A, B or C) or are a single leaf
    for g in p.members():
        tops = {leaves[c][0] for c in codes[g]}
        assert len(tops) == 1
    assert p.n_groups == 6


def test_bad_input():
    t = random_table()
    with pytest.raises(ParameterError):
        make_algorithm("mondrian", model=make_model("k=2"), strict="yes").partition(t)
    with pytest.raises(ParameterError):
        make_algorithm("mondrian", model=make_model("k=2"), categorical="random").partition(t)
    with pytest.raises(InfeasibleError):
        make_algorithm("mondrian", model=make_model("k=1000")).partition(t)


def _candidates(t, rows, strict):
    """The left sets of every cut the reference would try on a node, in order."""
    X = t.qi_codes.astype(np.int64)
    span = np.maximum(t.qi_cardinalities - 1, 1)
    w = (X[rows].max(axis=0) - X[rows].min(axis=0)) / span
    out = []
    for j in np.argsort(-w, kind="stable"):
        if w[j] <= 0:
            break
        try:
            _, _, left = mondrian_cut(X[rows, j], strict)
        except ValueError:
            continue
        out.append(frozenset(rows[left].tolist()))
    return out


def _reference_tries(t, model, strict):
    """Every cut the recursive reference tries, per node: (rows, left rows, taken), in order."""
    tries = []

    def rec(rows):
        if rows.size < 2:
            return
        for left_set in _candidates(t, rows, strict):
            left = np.isin(rows, list(left_set))
            lc = np.bincount(t.sa_codes[rows[left]], minlength=t.sa_domain.n_values)
            rc = np.bincount(t.sa_codes[rows[~left]], minlength=t.sa_domain.n_values)
            taken = bool(mondrian_would_split(lc, rc, model, t.sa_domain))
            tries.append((frozenset(rows.tolist()), left_set, taken))
            if taken:
                rec(rows[left])
                rec(rows[~left])
                return

    rec(np.arange(t.n_rows))
    return tries


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_the_planner_offers_the_reference_cuts_to_its_hook(strict, seed):
    """The one planner (``mondrian_plan``) offers its hook exactly the cuts the recursive
    reference tries, node by node, and ``later`` lists the cuts a node would try next."""
    from openbook.algorithms.mondrian import allowable
    from openbook.algorithms.mondrian_planner import MondrianSpace, mondrian_plan

    t = random_table(n=50, d=3, seed=seed, card=[4, 7, 20][seed % 3])
    model = make_model("l=2")
    ref = _reference_tries(t, model, strict)
    seen, n_later = [], 0
    decide = allowable(model, t.sa_domain)

    def hook(cuts):
        nonlocal n_later
        taken = decide(cuts)
        pos, cut = cuts.segments()
        left = cuts.left_mask()
        nodes = []
        for i in range(len(cuts)):
            rows = np.sort(cuts.rows[pos[cut == i]])
            nodes.append(rows)
            seen.append((frozenset(rows.tolist()), frozenset(cuts.rows[pos[cut == i]][left[cut == i]].tolist()),
                         bool(taken[i])))
        # the cuts each node would try next, rank by rank, are the reference's next candidates
        nxt = {i: [] for i in range(len(cuts))}
        for batch in cuts.later(np.arange(len(cuts))):
            bpos, bcut = batch.segments()
            bleft = batch.left_mask()
            for i in range(len(batch)):
                nxt[int(batch.origin[i])].append(frozenset(batch.rows[bpos[bcut == i]][bleft[bcut == i]].tolist()))
        for i, rows in enumerate(nodes):
            cand = _candidates(t, rows, strict)
            offered = [seen[len(seen) - len(nodes) + i][1]] + nxt[i]  # this cut, then the later ones
            assert offered == cand[len(cand) - len(offered):]
            n_later += len(nxt[i])
        return taken

    space = MondrianSpace(t, "ordered")
    tree = mondrian_plan(space, space.matrix(t), np.array(t.sa_codes, dtype=np.int32), t.sa_domain.n_values, hook,
                         strict=strict)
    assert sorted(seen, key=repr) == sorted(ref, key=repr)
    assert tree.n_groups == make_algorithm("mondrian", model=model, strict=strict).partition(t).n_groups
    assert n_later > 0
