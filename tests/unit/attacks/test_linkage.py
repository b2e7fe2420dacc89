"""Linkage of several releases (paper 002 §2.3): matching people to classes, the per-value
minimum, bucketized releases, cross-checked against a brute-force per-person loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from openbook.attacks.linkage import label_coverage, linkage, linkage_counts, match_release
from openbook.data.table import EncodedTable
from openbook.errors import SchemaError
from openbook.release import Partition, Release, build_release


def _table(qi: np.ndarray, sa: np.ndarray) -> EncodedTable:
    return EncodedTable.from_codes(qi_codes=qi.astype(np.int32), sa_codes=sa.astype(np.int32),
                                   qi_names=["age", "zip"], sa_name="dis",
                                   qi_categories=[np.arange(20, 20 + int(qi[:, 0].max()) + 1), np.arange(int(qi[:, 1].max()) + 1)],
                                   sa_categories=np.asarray([f"d{i}" for i in range(int(sa.max()) + 1)], dtype=object))


def test_label_coverage_forms():
    cov = label_coverage(["[20-29]", "[20-30)", "*", "35", "x"], [20, 29, 30, 35.0, "x"])
    assert cov.tolist() == [[True, True, False, False, False],
                            [True, True, False, False, False],
                            [True] * 5,
                            [False, False, False, True, False],
                            [False, False, False, False, True]]


def test_label_coverage_with_hierarchy():
    from openbook.hierarchy.builders import interval_ladder

    h = interval_ladder(list(range(0, 40)), [10, 20], column="age")
    labels = list(h.label_of(np.arange(h.n_leaves, len(h.labels))))
    cov = label_coverage(labels, [5, 15, 39], h)
    # every value is covered by exactly one label per level above the leaves
    assert (cov.sum(axis=0) == h.height).all()


def test_missing_column_is_schema_error():
    r = Release("generalized", pd.DataFrame({"a": ["1"], "s": ["x"]}), ["a"], "s")
    with pytest.raises(SchemaError):
        match_release(r, pd.DataFrame({"b": [1]}))


def _brute(releases_rows, people):
    """Per person: classes whose every row-label covers the value (exact tuples here)."""
    out = []
    for q in people:
        sets = []
        for rows, cls_sa in releases_rows:
            hit = [c for c, members in rows.items() if q in members]
            if hit:
                s = set().union(*[cls_sa[c] for c in hit])
                sets.append(s)
        out.append(len(set.intersection(*sets)) if sets else 0)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), t=st.integers(1, 4), kind=st.sampled_from(["generalized", "bucketized"]))
def test_linkage_matches_brute_force(seed, t, kind):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    qi = np.stack([rng.integers(0, 5, n), rng.integers(0, 3, n)], axis=1)
    releases, brute_in = [], []
    for _ in range(t):
        sa = rng.integers(0, 5, n)
        table = _table(qi, sa)
        if kind == "generalized":
            # group by a random coarsening of age (contiguous ranges) × zip: disjoint label boxes
            cuts = np.sort(rng.choice(np.arange(1, 5), size=int(rng.integers(0, 4)), replace=False))
            band = np.searchsorted(cuts, qi[:, 0], side="right")
            labels = band * 10 + qi[:, 1]
        else:
            labels = rng.integers(0, 4, n)
        part = Partition.from_labels(labels)
        rel = build_release(table, part, model=None, kind=kind)
        releases.append(rel)
        # brute force: class membership by QI tuples present in the class (generalized:
        # the class box = age range × zip value), SA values present
        cls, ncls = rel.classes()
        members, cls_sa = {}, {}
        if kind == "generalized":
            for g in range(part.n_groups):
                rows = np.flatnonzero(part.group == g)
                ages = qi[rows, 0]
                box = {(a, z) for a in range(ages.min(), ages.max() + 1) for z in set(qi[rows, 1])}
                members[g] = box
                cls_sa[g] = {int(x) for x in sa[rows]}
        else:
            for g in range(part.n_groups):
                rows = np.flatnonzero(part.group == g)
                members[g] = {tuple(x) for x in qi[rows]}
                cls_sa[g] = {int(x) for x in sa[rows]}
        brute_in.append((members, cls_sa))
    people_codes = [(int(a), int(z)) for a in range(6) for z in range(3)]
    people = pd.DataFrame({"age": [20 + a for a, _ in people_codes], "zip": [z for _, z in people_codes]})
    res = linkage(releases, people)
    assert res.diversity.tolist() == _brute(brute_in, people_codes)


def test_linkage_counts_min_and_ignore_unmatched():
    c1 = np.array([[2, 1, 0], [0, 3, 3]])
    c2 = np.array([[1, 0, 5]])
    out = linkage_counts(np.array([[0, 0], [1, -1], [-1, -1]]), [c1, c2])
    assert out.tolist() == [[1, 0, 0], [0, 3, 3], [0, 0, 0]]


def test_intersection_view_groups_people_by_class_combination():
    d1 = pd.DataFrame({"zip": ["[1-2]", "[1-2]", "3", "3"], "s": ["a", "b", "a", "c"]})
    d2 = pd.DataFrame({"zip": ["[1-3]"] * 3, "s": ["a", "c", "b"]})
    rels = [Release("generalized", d, ["zip"], "s") for d in (d1, d2)]
    res = linkage(rels, pd.DataFrame({"zip": [1, 2, 3, 4]}))
    assert res.diversity.tolist() == [2, 2, 2, 0]
    assert not res.in_any[3]
    view = res.intersection_view()
    assert view["n_people"].sum() == 3 and len(view) == 2
    assert {frozenset(d) for d in view["linkage"]} == {frozenset({"a", "b"}), frozenset({"a", "c"})}
