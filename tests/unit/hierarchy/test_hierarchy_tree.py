"""Hierarchy: structure, coverage/base (paper 001 Def. 5), levels, LCA, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy import Hierarchy, adult_hierarchies, from_mapping


def node(h: Hierarchy, label: str) -> int:
    return int(h.nodes_of(label))


# ---- paper 001 Fig. 1 -------------------------------------------------------------------------
def test_fig1_coverage_and_base(fig1):
    assert fig1.base == 9 == fig1.n_leaves
    assert fig1.coverage[node(fig1, "university")] == 2  # "undergrad", "postgrad"
    assert fig1.coverage[node(fig1, "elementary")] == 3
    assert fig1.coverage[node(fig1, "post-secondary")] == 4
    assert fig1.coverage[fig1.root] == 9
    assert (fig1.coverage[: fig1.n_leaves] == 1).all()
    assert fig1.is_tree and fig1.label_of(fig1.root) == "education"


def test_fig1_depth_and_levels_non_uniform(fig1):
    # elementary values sit at depth 2, the others at depth 3
    assert fig1.height == 3 and not fig1.uniform_depth
    codes = fig1.encode(["1st-4th", "undergrad"])
    assert list(fig1.depth[codes]) == [2, 3]
    t = fig1.ancestor_table
    assert t.shape == (4, 9) and t.dtype == np.int32
    # levels counted from the leaf; a shallow leaf stays at the root past its depth
    assert list(fig1.label_of(t[:, codes[0]])) == ["1st-4th", "elementary", "education", "education"]
    assert list(fig1.label_of(t[:, codes[1]])) == ["undergrad", "university", "post-secondary", "education"]
    assert list(fig1.labels_at(1)[:3]) == ["elementary"] * 3
    assert list(fig1.label_of(fig1.generalize(codes, 2))) == ["education", "post-secondary"]


def test_fig1_lca(fig1):
    c = fig1.encode
    assert fig1.label_of(fig1.lca(c(["undergrad", "postgrad"]))) == "university"
    assert fig1.label_of(fig1.lca(c(["academic", "postgrad"]))) == "post-secondary"
    assert fig1.label_of(fig1.lca(c(["1st-4th", "postgrad"]))) == "education"
    assert fig1.label_of(fig1.lca(c(["9th-10th", "11th-12th"]))) == "secondary"
    assert fig1.lca(c(["academic", "academic"])) == c(["academic"])[0]
    g = fig1.group_lca(c(["1st-4th", "7th-8th", "undergrad", "9th-10th"]), [0, 0, 1, 3], 4)
    assert list(g) == [node(fig1, "elementary"), c(["undergrad"])[0], -1, c(["9th-10th"])[0]]
    cov = fig1.group_coverage(c(["1st-4th", "7th-8th", "undergrad"]), [0, 0, 2], 3)
    assert list(cov) == [3, 0, 1]


def test_fig1_masks(fig1):
    u = node(fig1, "university")
    assert list(fig1.leaves[fig1.leaf_mask(u)]) == ["undergrad", "postgrad"]
    assert list(fig1.covers(u, fig1.encode(["postgrad", "academic"]))) == [True, False]
    assert fig1.leaf_mask(fig1.root).all()
    assert fig1.is_leaf([0, u]).tolist() == [True, False]
    assert set(fig1.label_of(fig1.children_of(u))) == {"undergrad", "postgrad"}
    assert list(fig1.label_of(fig1.parents_of(u))) == ["post-secondary"]


def test_encode_and_labels(fig1):
    assert fig1.encode(np.array(["postgrad", "1st-4th"], dtype=object)).tolist() == [8, 0]
    with pytest.raises(HierarchyError) as e:
        fig1.encode(["undergrad", "PhD"])
    assert e.value.column == "education" and e.value.value == "PhD"
    assert "'education'" in str(e.value) and "'PhD'" in str(e.value)
    with pytest.raises(HierarchyError, match="'nope'"):
        fig1.nodes_of(["nope"])
    with pytest.raises(HierarchyError, match="9 is not a leaf code"):
        fig1.generalize([9], 1)
    with pytest.raises(ParameterError):
        fig1.generalize([0], 4)
    with pytest.raises(HierarchyError):
        fig1.label_of([-1])
    with pytest.raises(ParameterError):
        fig1.lca([])


def test_arrays_are_read_only(fig1):
    with pytest.raises(ValueError):
        fig1.coverage[0] = 5
    with pytest.raises(ValueError):
        fig1.ancestor_table[0, 0] = 1


def test_numeric_leaves_keep_their_dtype():
    h = from_mapping({1: "low", 2: "low", 30: "high", "low": "*", "high": "*"}, "n")
    assert h.leaves.dtype == np.int64 and h.encode([30, 1]).tolist() == [2, 0]
    f = from_mapping({1.5: "*", 2.5: "*"}, "x")
    assert f.leaves.dtype == np.float64


# ---- DAGs -------------------------------------------------------------------------------------
def test_disease_dag(disease_dag):
    h = disease_dag
    assert not h.is_tree and h.uniform_depth and h.height == 2 and h.base == 4
    cancer, resp = node(h, "cancer"), node(h, "respiratory disease")
    assert h.coverage[cancer] == 3 and h.coverage[resp] == 3 and h.coverage[h.root] == 4
    c = h.encode
    # both cover {nasal, lung} with coverage 3 at depth 1: tie broken by smallest id
    assert h.lca(c(["nasal cancer", "lung cancer"])) == min(cancer, resp) == cancer
    assert h.lca(c(["lung cancer", "flu"])) == resp
    assert h.lca(c(["stomach cancer", "flu"])) == h.root
    assert h.lca(c(["nasal cancer"])) == c(["nasal cancer"])[0]
    assert list(h.leaves[h.leaf_mask(resp)]) == ["nasal cancer", "lung cancer", "flu"]
    # levels follow the first-listed parent
    assert list(h.label_of(h.ancestor_table[1])) == ["cancer", "cancer", "cancer", "respiratory disease"]
    g = h.group_lca(c(["flu", "lung cancer", "stomach cancer", "nasal cancer"]), [1, 1, 0, 0], 3)
    assert list(g) == [cancer, resp, -1]


def test_calendar_dag_paths_of_different_length():
    # paper 001 §3: "day" generalizes to "week", or via "month" to "year"
    h = from_mapping(
        {"Jan 1": ["week 1", "January"], "Jan 8": ["week 2", "January"], "week 1": "2007",
         "week 2": "2007", "January": "winter", "winter": "2007"},
        "day",
    )  # fmt: skip
    assert not h.is_tree and not h.uniform_depth
    assert h.height == 3  # longest path: day -> January -> winter -> 2007
    assert list(h.label_of(h.ancestor_table[:, 0])) == ["Jan 1", "week 1", "2007", "2007"]
    assert h.label_of(h.lca(h.encode(["Jan 1", "Jan 8"]))) == "January"
    assert h.depth[node(h, "January")] == 2  # longest root path: 2007 -> winter -> January


# ---- validation ---------------------------------------------------------------------------------
def check_error(exc_info, column: str, value) -> None:
    err = exc_info.value
    assert err.column == column and err.value == value
    msg = str(err)
    assert "\n" not in msg and repr(column) in msg and repr(value) in msg


def test_cycle_is_rejected():
    with pytest.raises(HierarchyError, match="cycle") as e:
        from_mapping({"a": "x", "x": "y", "y": "x"}, "col")
    check_error(e, "col", "x")
    with pytest.raises(HierarchyError, match="cycle") as e:
        Hierarchy(["a", "b"], ["R", "P", "Q"], [2, 3, None, 4, 3], column="col")
    assert e.value.value in {"P", "Q"} and "'col'" in str(e.value)
    with pytest.raises(HierarchyError, match="cycle") as e:
        Hierarchy(["a"], ["R"], [1, 1], column="col")  # own parent
    check_error(e, "col", "R")
    with pytest.raises(HierarchyError, match="cycle") as e:
        from_mapping({"p": "q", "q": "p"}, "col")  # no leaf at all


def test_leaf_that_is_not_a_leaf():
    with pytest.raises(HierarchyError, match="not a leaf") as e:
        Hierarchy(["a", "b"], ["*"], [2, 0, None], column="col")
    check_error(e, "col", "a")


def test_more_than_one_root():
    with pytest.raises(HierarchyError, match="2 roots") as e:
        from_mapping({"a": "X", "b": "Y"}, "col")
    check_error(e, "col", "Y")


def test_unreachable_node():
    with pytest.raises(HierarchyError, match="unreachable") as e:
        Hierarchy(["a"], ["R", "dangling"], [1, None, 1], column="col")
    check_error(e, "col", "dangling")
    with pytest.raises(HierarchyError, match="no parent") as e:
        Hierarchy(["a", "b"], ["R"], [2, None, None], column="col")
    check_error(e, "col", "b")


def test_duplicate_and_missing_leaves():
    with pytest.raises(HierarchyError, match="listed twice") as e:
        Hierarchy(["a", "b", "a"], ["*"], [3, 3, 3, None], column="col")
    check_error(e, "col", "a")
    with pytest.raises(HierarchyError, match="missing"):
        Hierarchy(["a", None], ["*"], [2, 2, None], column="col")
    with pytest.raises(HierarchyError, match="missing"):
        Hierarchy([1.0, math.nan], ["*"], [2, 2, None], column="col")
    with pytest.raises(HierarchyError, match="not a node id"):
        Hierarchy(["a"], ["*"], [7, None], column="col")
    with pytest.raises(HierarchyError, match="parent entries"):
        Hierarchy(["a"], ["*"], [1], column="col")


# ---- same_structure ---------------------------------------------------------------------------------
def _mapping_of(h: Hierarchy) -> dict:
    key = lambda v: h.leaves[v] if v < h.n_leaves else h.labels[v]  # noqa: E731
    return {key(v): key(int(h.parents_of(v)[0])) for v in range(h.n_nodes) if v != h.root}


def test_same_structure(fig1, disease_dag):
    mapping = _mapping_of(fig1)
    renumbered = from_mapping(dict(reversed(list(mapping.items()))), "education", leaves=list(fig1.leaves))
    assert renumbered.same_structure(fig1)
    assert not (renumbered.labels == fig1.labels).all()  # internal nodes numbered differently
    assert not fig1.same_structure(disease_dag)
    mapping["academic"] = "university"
    assert not from_mapping(mapping, "education", leaves=list(fig1.leaves)).same_structure(fig1)


# ---- random trees and DAGs vs brute force ------------------------------------------------------
@st.composite
def graphs(draw, dag: bool):
    """(n_leaves, parents) of a random valid hierarchy: internal node i's parents have larger
    ids (acyclic), the last internal node is the root, every internal node has a child."""
    n_int = draw(st.integers(1, 7))
    int_parent = [draw(st.integers(i + 1, n_int - 1)) for i in range(n_int - 1)]
    childless = [i for i in range(n_int) if i not in int_parent]
    n_extra = draw(st.integers(0 if childless else 1, 8))
    leaf_parent = childless + [draw(st.integers(0, n_int - 1)) for _ in range(n_extra)]
    leaf_parent = draw(st.permutations(leaf_parent))
    nl = len(leaf_parent)
    parents: list = [[nl + p] for p in leaf_parent] + [[nl + p] for p in int_parent] + [None]
    if dag:
        for v in range(nl + n_int - 1):
            lo = nl if v < nl else v + 1
            extra = draw(st.lists(st.integers(lo, nl + n_int - 1), max_size=2))
            parents[v] += [q for q in dict.fromkeys(extra) if q not in parents[v]]
    return nl, parents


def brute(nl: int, parents: list):
    nn = len(parents)
    plist = [p or [] for p in parents]
    anc: list[set] = []
    for v in range(nn):
        seen, stack = {v}, [v]
        while stack:
            for p in plist[stack.pop()]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        anc.append(seen)
    depth: dict[int, int] = {}

    def d(v):
        if v not in depth:
            depth[v] = max((d(p) + 1 for p in plist[v]), default=0)
        return depth[v]

    cov = [sum(v in anc[leaf] for leaf in range(nl)) for v in range(nn)]

    def lca(codes):
        common = set.intersection(*(anc[c] for c in codes))
        return min(common, key=lambda v: (cov[v], -d(v), v))

    first_chain = []
    for leaf in range(nl):
        chain, v = [leaf], leaf
        while plist[v]:
            v = plist[v][0]
            chain.append(v)
        first_chain.append(chain)
    return anc, cov, [d(v) for v in range(nn)], lca, first_chain


@pytest.mark.parametrize("dag", [False, True], ids=["tree", "dag"])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_random_hierarchies_match_brute_force(dag, data):
    nl, parents = data.draw(graphs(dag))
    nn = len(parents)
    h = Hierarchy([f"v{i}" for i in range(nl)], [f"n{i}" for i in range(nn - nl)], parents, column="c")
    anc, cov, depth, lca, chains = brute(nl, parents)
    assert h.coverage.tolist() == cov and h.depth.tolist() == depth
    assert h.height == max(depth[:nl]) and h.base == nl
    for v in range(nn):
        assert h.leaf_mask(v).tolist() == [v in anc[leaf] for leaf in range(nl)]
    for leaf, chain in enumerate(chains):
        expect = chain + [chain[-1]] * (h.height + 1 - len(chain))
        assert h.ancestor_table[:, leaf].tolist() == expect
    n_rows = data.draw(st.integers(1, 40))
    codes = np.array(data.draw(st.lists(st.integers(0, nl - 1), min_size=n_rows, max_size=n_rows)))
    n_groups = data.draw(st.integers(1, 8))
    gids = np.array(data.draw(st.lists(st.integers(0, n_groups - 1), min_size=n_rows, max_size=n_rows)))
    got = h.group_lca(codes, gids, n_groups)
    for g in range(n_groups):
        members = codes[gids == g].tolist()
        assert got[g] == (lca(members) if members else -1)
    assert h.lca(codes) == lca(codes.tolist())
    assert h.group_coverage(codes, gids, n_groups).tolist() == [
        cov[x] if x >= 0 else 0 for x in got.tolist()
    ]


def test_group_lca_large_is_vectorised_and_correct():
    """Speed sanity (no timing assert): 45,000 rows in 45,000 groups, tree and DAG paths,
    checked against per-group brute force on a sample of groups."""
    rng = np.random.default_rng(7)
    hs = adult_hierarchies()
    for h in [hs["age"], hs["native-country"]]:
        codes = rng.integers(0, h.n_leaves, 45_000)
        gids = rng.integers(0, 45_000, 45_000)
        out = h.group_lca(codes, gids, 45_000)
        assert out.shape == (45_000,) and out.dtype == np.int32
        for g in rng.choice(45_000, 200, replace=False):
            members = codes[gids == g]
            if members.size == 0:
                assert out[g] == -1
            else:
                ok = [v for v in range(h.n_nodes) if h.leaf_mask(v)[members].all()]
                assert out[g] == min(ok, key=lambda v: (h.coverage[v], -h.depth[v], v))
    # a DAG of the same size: the age ladder with one extra parent
    age = hs["age"]
    parents = [list(age.parents_of(v)) or None for v in range(age.n_nodes)]
    parents[0] = parents[0] + [int(age.nodes_of("[20-24]"))]
    dag = Hierarchy(list(age.leaves), list(age.labels[age.n_leaves :]), parents, column="age")
    codes = rng.integers(0, 100, 45_000)
    gids = rng.integers(0, 45_000, 45_000)
    out = dag.group_lca(codes, gids, 45_000)
    sorted_out = dag.group_lca(codes[np.argsort(gids)], np.sort(gids), 45_000)
    assert (out == sorted_out).all()
    tree_out = age.group_lca(codes, gids, 45_000)
    no_leaf0 = np.bincount(gids, weights=codes == 0, minlength=45_000) == 0
    assert (out[no_leaf0] == tree_out[no_leaf0]).all()  # leaf 0's extra parent changes nothing else


def test_group_lca_argument_errors(fig1):
    with pytest.raises(ParameterError):
        fig1.group_lca([0, 1], [0], 1)
    with pytest.raises(ParameterError):
        fig1.group_lca([0, 1], [0, 5], 2)
    with pytest.raises(ParameterError):
        fig1.group_lca([0.5], [0], 1)
    assert fig1.group_lca([], [], 3).tolist() == [-1, -1, -1]
