import numpy as np
import pytest

from openbook.errors import ParameterError
from openbook.models import TCloseness

from models_testkit import (
    Tree,
    emd_lp,
    hierarchical_ground,
    make_domain,
    random_parents,
    tree_from_parents,
)

# table distribution Q = (4, 2, 2) / 8 = (.5, .25, .25)
DOMAIN = make_domain([4, 2, 2], numeric=[10.0, 30.0, 20.0])
COUNTS = np.array(
    [
        [2, 1, 1],  # = Q: distance 0 under every ground distance
        [0, 2, 0],  # P = (0, 1, 0)
        [1, 0, 0],  # P = (1, 0, 0)
        [0, 0, 0],  # empty
    ]
)


def test_equal_distance_is_half_l1():
    m = TCloseness(t=0.5)
    # row 1: 1/2 (.5 + .75 + .25) = .75; row 2: 1/2 (.5 + .25 + .25) = .5
    assert m.group_levels(COUNTS, DOMAIN) == pytest.approx([0, 0.75, 0.5, 1.0])
    assert m.holds(COUNTS, DOMAIN).tolist() == [True, False, True, False]
    assert m.table_level(COUNTS[:3], DOMAIN) == pytest.approx(0.75)


def test_ordered_distance_follows_numeric_order():
    m = TCloseness(t=0.3, distance="ordered")
    # numeric order: code 0 (10), code 2 (20), code 1 (30); m - 1 = 2
    # row 1: P - Q in that order = (-.5, -.25, .75): cumsum (-.5, -.75, 0) -> 1.25 / 2
    # row 2: (.5, -.25, -.25): cumsum (.5, .25, 0) -> .75 / 2
    assert m.group_levels(COUNTS, DOMAIN) == pytest.approx([0, 0.625, 0.375, 1.0])
    # without numeric values the code order is used: row 1 (-.5, .75, -.25) -> (.5+.25)/2
    plain = make_domain([4, 2, 2])
    assert m.group_levels(COUNTS, plain) == pytest.approx([0, 0.375, 0.375, 1.0])


def test_hierarchical_distance_hand_computed():
    # leaves 0,1 under node A = 7; leaf 2 under node B = 9; root R = 10; H = 2
    tree = Tree(ancestor_table=np.array([[0, 1, 2], [7, 7, 9], [10, 10, 10]]), height=2)
    dom = make_domain([4, 2, 2], hierarchy=tree)
    m = TCloseness(t=0.4, distance="hierarchical")
    # row 1: P - Q = (-.5, .75, -.25): within A, .5 moves 0 -> 1 at cost 1/2;
    #        .25 moves from B's leaf 2 to A at cost 1 -> .25 + .25 = .5
    # row 2: (.5, -.25, -.25): .25 from 0 to 1 at 1/2, .25 from 0 to 2 at 1 -> .375
    assert m.group_levels(COUNTS, dom) == pytest.approx([0, 0.5, 0.375, 1.0])
    assert m.holds(COUNTS, dom).tolist() == [True, False, True, False]
    # the paper's formula: cost(A) = 1/2 min(.75, .5) = .25; cost(R) = 1 min(.25, .25) = .25
    # for row 1 -> .5, the same


def test_paper001_table10_equal_distance():
    # Paper 001 Table 10, 0.2-closeness; SA values (HIV, non-sensitive); 3 HIV of 6
    dom = make_domain([3, 3])
    m = TCloseness(t=0.2)
    good = np.array([[1, 1], [2, 2]])  # (a): q1 = {HIV, non}, q2 = {non, non, HIV, HIV}
    bad = np.array([[2, 0], [1, 3]])  # (b): q1 = {HIV, HIV}
    assert m.group_levels(good, dom) == pytest.approx([0, 0])
    assert m.group_levels(bad, dom) == pytest.approx([0.5, 0.25])
    assert m.holds(good, dom).all() and not m.holds(bad, dom).any()


def _random_case(rng, m):
    g = rng.integers(1, 6, size=m)
    rows = rng.integers(0, 4, size=(6, m))
    rows[rows.sum(axis=1) == 0, 0] = 1
    return g, rows


@pytest.mark.parametrize("clamp", [True, False], ids=["root-clamped", "leaf-padded"])
@pytest.mark.parametrize("seed", range(25))
def test_hierarchical_emd_matches_linear_program(seed, clamp):
    # random trees with leaves at uneven depths; ground distance height(LCA)/H
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 8))
    parents = random_parents(rng, m, int(rng.integers(1, 6)))
    tree = tree_from_parents(parents, m, clamp=clamp)
    g, rows = _random_case(rng, m)
    dom = make_domain(g, hierarchy=tree)
    ground = hierarchical_ground(parents, m)
    got = TCloseness(t=1, distance="hierarchical").group_levels(rows, dom)
    q = g / g.sum()
    want = [emd_lp(r / r.sum(), q, ground) for r in rows]
    assert got == pytest.approx(want, abs=1e-9)


def test_uneven_depth_uses_subtree_heights():
    # root 9 -> {leaf 0, node 8}; node 8 -> {leaf 1, node 7}; node 7 -> {leaves 2, 3}
    # heights: 7 -> 1, 8 -> 2, 9 -> 3. d(1, 2) = height(8)/3 = 2/3 (not 1, which reading
    # the root-clamped table level by level would give)
    parents = {9: None, 8: 9, 7: 8, 0: 9, 1: 8, 2: 7, 3: 7}
    tree = tree_from_parents(parents, 4)
    assert tree.ancestor_table.tolist() == [[0, 1, 2, 3], [9, 8, 7, 7], [9, 9, 8, 8], [9, 9, 9, 9]]
    dom = make_domain([0, 1, 1, 0], hierarchy=tree)  # Q = (0, .5, .5, 0)
    # P = (0, 1, 0, 0): .5 moves from leaf 2 to leaf 1 at cost 2/3 -> 1/3
    got = TCloseness(t=1, distance="hierarchical").group_levels(np.array([[0, 1, 0, 0]]), dom)
    assert got == pytest.approx([1 / 3])


@pytest.mark.parametrize("seed", range(25))
def test_ordered_emd_matches_linear_program(seed):
    rng = np.random.default_rng(1000 + seed)
    m = int(rng.integers(2, 9))
    numeric = rng.permutation(m) * 3.5 - 4  # values in shuffled code order
    g, rows = _random_case(rng, m)
    dom = make_domain(g, numeric=numeric)
    rank = np.argsort(np.argsort(numeric))
    ground = np.abs(rank[:, None] - rank[None, :]) / (m - 1)
    got = TCloseness(t=1, distance="ordered").group_levels(rows, dom)
    q = g / g.sum()
    want = [emd_lp(r / r.sum(), q, ground) for r in rows]
    assert got == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_equal_emd_matches_linear_program(seed):
    rng = np.random.default_rng(2000 + seed)
    m = int(rng.integers(2, 9))
    g, rows = _random_case(rng, m)
    ground = 1.0 - np.eye(m)
    got = TCloseness(t=1).group_levels(rows, make_domain(g))
    want = [emd_lp(r / r.sum(), g / g.sum(), ground) for r in rows]
    assert got == pytest.approx(want, abs=1e-9)


def test_one_level_hierarchy_equals_equal_distance():
    rng = np.random.default_rng(7)
    g, rows = _random_case(rng, 5)
    flat = Tree(ancestor_table=np.stack([np.arange(5), np.full(5, 5)]), height=1)
    a = TCloseness(t=1, distance="hierarchical").group_levels(rows, make_domain(g, hierarchy=flat))
    b = TCloseness(t=1).group_levels(rows, make_domain(g))
    assert a == pytest.approx(b)


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"t": -0.1}, "t"),
        ({"t": 1.01}, "t"),
        ({"t": "x"}, "t"),
        ({"t": 0.2, "distance": "l2"}, "distance"),
    ],
)
def test_bad_parameters(kwargs, param):
    with pytest.raises(ParameterError) as exc:
        TCloseness(**kwargs)
    assert exc.value.parameter == param


def test_hierarchical_needs_a_hierarchy():
    m = TCloseness(t=0.2, distance="hierarchical")
    with pytest.raises(ParameterError, match="needs a hierarchy"):
        m.group_levels(COUNTS, DOMAIN)
    with pytest.raises(ParameterError, match="needs a hierarchy"):
        m.validate(DOMAIN)


def test_malformed_hierarchies_are_rejected():
    m = TCloseness(t=0.2, distance="hierarchical")
    wrong_shape = Tree(ancestor_table=np.zeros((2, 4), dtype=int), height=1)
    with pytest.raises(ParameterError, match="shape"):
        m.validate(make_domain([1, 1, 1], hierarchy=wrong_shape))
    # root listed first
    upside_down = Tree(ancestor_table=np.array([[5, 5, 5], [0, 1, 2]]), height=1)
    with pytest.raises(ParameterError, match="leaves .* at level 0"):
        m.validate(make_domain([1, 1, 1], hierarchy=upside_down))
    # node 5 under 7 for leaf 0 but under 8 for leaf 1
    table = np.array([[0, 1, 2], [5, 5, 6], [7, 8, 8], [9, 9, 9]])
    two_parents = Tree(ancestor_table=table, height=3)
    with pytest.raises(ParameterError, match="not a tree: node 5 has two parents"):
        m.validate(make_domain([1, 1, 1], hierarchy=two_parents))
    leaf_above = Tree(ancestor_table=np.array([[0, 1, 2], [1, 5, 5]]), height=1)
    with pytest.raises(ParameterError, match="not a tree"):
        m.validate(make_domain([1, 1, 1], hierarchy=leaf_above))


def test_forest_is_rejected():
    forest = Tree(ancestor_table=np.array([[0, 1, 2], [5, 5, 6]]), height=1)
    with pytest.raises(ParameterError, match="single root"):
        model = TCloseness(t=0.2, distance="hierarchical")
        model.validate(make_domain([1, 1, 1], hierarchy=forest))


def test_with_openbook_hierarchy():
    hierarchy = pytest.importorskip("openbook.hierarchy")
    # the uneven tree of test_uneven_depth_uses_subtree_heights, in Hierarchy's numbering:
    # leaves a, b, c, d = 0..3; node 4 = {c, d}; node 5 = {b, 4}; root 6 = {a, 5}
    h = hierarchy.Hierarchy(
        ["a", "b", "c", "d"], ["cd", "bcd", "*"], [6, 5, 4, 4, 5, 6, None]
    )
    dom = make_domain([0, 1, 1, 0], hierarchy=h)
    got = TCloseness(t=1, distance="hierarchical").group_levels(np.array([[0, 1, 0, 0]]), dom)
    assert got == pytest.approx([1 / 3])


def test_layout_is_cached_per_hierarchy():
    m = TCloseness(t=0.5, distance="hierarchical")
    tree = Tree(ancestor_table=np.array([[0, 1, 2], [7, 7, 9], [10, 10, 10]]), height=2)
    dom = make_domain([4, 2, 2], hierarchy=tree)
    m.holds(COUNTS, dom)
    first = m._cache
    m.holds(COUNTS, dom)
    assert m._cache is first
    other = Tree(ancestor_table=np.array([[0, 1, 2], [7, 9, 9], [10, 10, 10]]), height=2)
    m.holds(COUNTS, make_domain([4, 2, 2], hierarchy=other))
    assert m._cache is not first and m._cache[0] is other


def test_validate_whole_table_always_feasible():
    TCloseness(t=0).validate(DOMAIN)


@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
@pytest.mark.parametrize("seed", range(3))
def test_box_verdict_is_sound_against_every_point(distance, seed):
    """``box_verdict`` for each ground distance: 1 only if every count vector in the box
    (summing to the total) holds, 0 only if none does — against every point of 400 random
    small boxes, with t drawn near the box's distances so both verdicts occur."""
    import itertools

    rng = np.random.default_rng(seed)
    decided = {0: 0, 1: 0}
    for _ in range(400):
        v = int(rng.integers(2, 6))
        parents = random_parents(rng, v, int(rng.integers(1, 4)))
        dom = make_domain(rng.integers(1, 6, size=v), numeric=rng.permutation(v).astype(float),
                          hierarchy=tree_from_parents(parents, v, clamp=bool(rng.integers(0, 2))))
        lo = rng.integers(0, 3, v)
        hi = lo + rng.integers(0, 3, v)
        total = int(rng.integers(lo.sum(), hi.sum() + 1))
        pts = np.array([p for p in itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi)])
                        if sum(p) == total], dtype=np.int64)
        dist = TCloseness(t=1, distance=distance).group_levels(pts, dom)
        t = float(np.clip(rng.choice([dist.min(), dist.max(), dist.mean()]) + rng.normal(0, 0.05), 0, 1))
        model = TCloseness(t=t, distance=distance)
        verdict = int(model.box_verdict(lo[None], hi[None], np.array([total]), dom)[0])
        held = model.holds(pts, dom)
        if verdict == 1:
            assert held.all()
        elif verdict == 0:
            assert not held.any()
        if verdict >= 0:
            decided[verdict] += 1
    assert decided[0] > 30 and decided[1] > 30


@pytest.mark.parametrize("compiled", [False, True], ids=["arrays", "compiled"])
@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
@pytest.mark.parametrize("seed", range(3))
def test_holds_in_integers_equals_the_distance(distance, seed, compiled, monkeypatch):
    """``holds`` decides in integers (``scaled_excess``): the same verdict as the floating
    distance ``D <= t + 1e-12`` wherever the two are not within rounding of each other, by
    the array expressions and by the compiled loop; and a group's verdict does not depend on
    the other groups asked about with it."""
    from openbook.models import t_closeness

    if compiled:
        monkeypatch.setattr(t_closeness, "_COMPILED_ENTRIES", 0)
    rng = np.random.default_rng(seed)
    for _ in range(30):
        v = int(rng.integers(2, 7))
        parents = random_parents(rng, v, int(rng.integers(1, 4)))
        dom = make_domain(rng.integers(1, 9, size=v), numeric=rng.permutation(v).astype(float),
                          hierarchy=tree_from_parents(parents, v, clamp=bool(rng.integers(0, 2))))
        rows = rng.integers(0, 5, size=(40, v))
        rows[3] = 0  # an empty group never holds
        model = TCloseness(t=float(rng.choice([0.0, 0.1, 0.25, 0.5, 1.0])), distance=distance)
        d = TCloseness(t=1, distance=distance).group_levels(rows, dom)
        got = model.holds(rows, dom)
        clear = np.abs(d - model.t) > 1e-9
        want = (d <= model.t + 1e-12) & (rows.sum(axis=1) > 0)
        np.testing.assert_array_equal(got[clear], want[clear])
        assert not got[3]
        one_by_one = np.array([model.holds(r[None], dom)[0] for r in rows])
        np.testing.assert_array_equal(got, one_by_one)


@pytest.mark.parametrize("compiled", [False, True], ids=["arrays", "compiled"])
@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
def test_a_group_exactly_at_t_holds(distance, compiled, monkeypatch):
    """A group whose distance is exactly t (in exact arithmetic) holds — decided in integers,
    not by the rounding of a float sum: every group of a small domain, t set to its exact
    distance (a fraction), holds; every t below it by one part in 10^6 does not."""
    import itertools
    from fractions import Fraction

    from openbook.models import t_closeness

    if compiled:
        monkeypatch.setattr(t_closeness, "_COMPILED_ENTRIES", 0)
    tree = tree_from_parents({0: 4, 1: 4, 2: 5, 3: 5, 4: 6, 5: 6, 6: None}, 4)
    dom = make_domain([3, 1, 2, 4], numeric=[1.0, 2.0, 3.0, 4.0], hierarchy=tree)
    g = [Fraction(x, 10) for x in (3, 1, 2, 4)]
    for c in itertools.product(range(3), repeat=4):
        n = sum(c)
        if n == 0:
            continue
        e = [Fraction(ci, n) - gi for ci, gi in zip(c, g)]
        if distance == "equal":
            exact = sum(abs(x) for x in e) / 2
        elif distance == "ordered":
            exact = sum(abs(sum(e[:i + 1])) for i in range(3)) / 3
        else:  # leaves, then the two inner nodes {0,1} and {2,3}, H = 2
            exact = (sum(abs(x) for x in e) + abs(e[0] + e[1]) + abs(e[2] + e[3])) / 4
        rows = np.array([c])
        assert TCloseness(t=float(exact), distance=distance).holds(rows, dom)[0], (c, exact)
        if exact > 0:
            below = float(exact) * (1 - 1e-6)
            assert not TCloseness(t=below, distance=distance).holds(rows, dom)[0], (c, exact)


def test_groups_past_the_exact_range_take_the_floating_distance():
    """A table so large that ``2 m n N`` passes 2^52: those groups are decided by the floating
    distance, the others in integers, in the same call — each as it would be alone."""
    big = 10**9
    dom = make_domain([big, 2 * big, big])
    rows = np.array([[big, 2 * big, big], [2 * big, 0, 2 * big], [1, 2, 1], [4, 0, 0]], dtype=np.int64)
    m = TCloseness(t=0.3)
    d = TCloseness(t=1).group_levels(rows, dom)
    np.testing.assert_array_equal(m.holds(rows, dom), d <= 0.3 + 1e-12)
    np.testing.assert_array_equal(m.holds(rows, dom), [m.holds(r[None], dom)[0] for r in rows])


def test_box_verdict_without_the_hierarchy_decides_nothing():
    """Hierarchical distance on a domain with no hierarchy: no term can be bounded, so no box
    is decided (it said 'every point holds': an empty sum bounds nothing)."""
    dom = make_domain([2, 2, 1])
    out = TCloseness(t=0.1, distance="hierarchical").box_verdict(np.array([[0, 0, 0]]), np.array([[3, 3, 3]]),
                                                                 np.array([3]), dom)
    assert out.tolist() == [-1]


@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
@pytest.mark.parametrize("seed", range(3))
def test_holds_on_every_run_of_buckets_equals_holds_run_by_run(distance, seed):
    """``holds_intervals`` (the replay's question for a GG group: does each run of consecutive
    buckets satisfy the model?) gives, in its one compiled pass (equal, ordered) or chunk by
    chunk (hierarchical), exactly ``holds`` of every run's counts — t set at some run's exact
    distance too, the knife edge where a float sum could differ; False below the diagonal.
    With ``first_only`` (GG's question) the early-exit pass keeps exactly each start's first
    satisfying run and the run to the last bucket of the full answer."""
    from openbook.models.base import PrivacyModel, first_and_last

    rng = np.random.default_rng(seed)
    for trial in range(12):
        v = int(rng.integers(2, 7))
        parents = random_parents(rng, v, int(rng.integers(1, 4)))
        dom = make_domain(rng.integers(1, 9, size=v), numeric=rng.permutation(v).astype(float),
                          hierarchy=tree_from_parents(parents, v, clamp=bool(rng.integers(0, 2))))
        W, B = int(rng.integers(1, 5)), int(rng.integers(1, 9))
        c = rng.integers(0, 3, size=(W, B, v))
        c[:, 0] = 0 if trial % 3 == 0 else c[:, 0]  # empty runs never hold
        P = np.zeros((W, B + 1, v), dtype=np.int64)
        np.cumsum(c, axis=1, out=P[:, 1:])
        d = TCloseness(t=1, distance=distance).group_levels((P[:, -1] - P[:, 0]), dom)
        t = float(d[0]) if trial % 2 else float(rng.choice([0.0, 0.1, 0.25, 0.5]))
        model = TCloseness(t=t, distance=distance)
        got = model.holds_intervals(P, dom)
        generic = PrivacyModel.holds_intervals(model, P, dom)
        np.testing.assert_array_equal(got, generic)
        # GG's question: each start's first satisfying run and the run to the end, nothing else
        first = model.holds_intervals(P, dom, first_only=True)
        np.testing.assert_array_equal(first, first_and_last(got))
        np.testing.assert_array_equal(PrivacyModel.holds_intervals(model, P, dom, first_only=True), first)
        for w in range(W):
            for i in range(B):
                for j in range(B):
                    want = bool(model.holds(P[w, j + 1][None] - P[w, i][None], dom)[0]) if i <= j else False
                    assert got[w, i, j] == want, (w, i, j)


def test_holds_on_runs_is_chunked_past_its_chunk(monkeypatch):
    """The generic path holds a chunk of runs at a time: with a chunk of one run, the same."""
    from openbook.models.base import PrivacyModel

    rng = np.random.default_rng(9)
    dom = make_domain([3, 2, 4])
    c = rng.integers(0, 3, size=(3, 6, 3))
    P = np.zeros((3, 7, 3), dtype=np.int64)
    np.cumsum(c, axis=1, out=P[:, 1:])
    model = TCloseness(t=0.2)
    want = model.holds_intervals(P, dom)
    monkeypatch.setattr(PrivacyModel, "INTERVAL_CHUNK", 1)
    np.testing.assert_array_equal(PrivacyModel.holds_intervals(model, P, dom), want)


@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
@pytest.mark.parametrize("seed", range(3))
def test_distance_bound_is_the_sampled_bound_capped_by_the_farthest_distribution(distance, seed):
    """A sampled posterior's bound (its distance plus the EMD-norm of 3 s.e.) is capped at the
    farthest any distribution is from the table's — never a distance no posterior has — and that
    cap is sound: 2,000 random distributions (and every vertex) lie at or below it."""
    rng = np.random.default_rng(seed)
    v = int(rng.integers(2, 6))
    dom = make_domain(rng.integers(1, 6, size=v), numeric=rng.permutation(v).astype(float),
                      hierarchy=tree_from_parents(random_parents(rng, v, 2), v, clamp=False))
    model = TCloseness(t=0.2, distance=distance)
    farthest = float(model.distances(np.eye(v), dom).max())
    sample = rng.dirichlet(np.full(v, 0.3), size=2000)
    assert model.distances(sample, dom).max() <= farthest + 1e-12
    post = rng.dirichlet(np.ones(v), size=50)
    small, large = np.full_like(post, 1e-3), np.full_like(post, 0.5)
    raw = model.distances(post, dom) + model.error_bound(small, dom)
    assert np.allclose(model.distance_bound(post, small, dom), np.minimum(raw, farthest))
    loose = model.distance_bound(post, large, dom)
    assert np.all(loose <= farthest + 1e-12) and np.all(loose >= model.distances(post, dom) - 1e-12)
    assert np.any(model.distances(post, dom) + model.error_bound(large, dom) > farthest)  # the cap bites
