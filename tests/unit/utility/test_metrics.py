"""Utility metrics on hand-computed tables (paper 001 Def. 5–6, §7.2)."""

import numpy as np
import pandas as pd
import pytest

from openbook.data.paper_tables import paper001_fig1_taxonomy
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.hierarchy import builders
from openbook.release import Partition, build_release
from openbook.utility.metrics import (
    class_stats,
    discernibility,
    information_loss,
    ncp,
    release_utility,
    sa_distortion,
    utility_summary,
    view_from_partition,
    view_from_release,
)

EDU = paper001_fig1_taxonomy()
LEAVES = [v for v in EDU if v not in set(EDU.values())]


def edu_hierarchy():
    return builders.from_mapping(EDU, "education")


def test_paper001_def5_coverage_example():
    h = edu_hierarchy()
    node = int(h.nodes_of(["university"])[0])
    assert h.coverage[node] == 2  # "undergrad" and "postgrad"
    assert h.base == 9
    root = int(h.nodes_of(["ANY"])[0])
    assert h.coverage[root] == 9


def _table(rows):
    """rows: (age, education, disease)"""
    df = pd.DataFrame(rows, columns=["age", "education", "disease"])
    schema = Schema.build(qi=["age:numeric", "education"], sa="disease")
    return encode(df, schema, {"education": edu_hierarchy()})


ROWS = [(20, "undergrad", "flu"), (22, "postgrad", "hiv"), (30, "1st-4th", "flu"),
        (40, "7th-8th", "hiv"), (50, "vocational", "flu"), (50, "vocational", "flu")]


def test_information_loss_hand_computed():
    t = _table(ROWS)
    # groups: {0,1} -> education university (cov 2), age [20-22] (2 of 5 distinct ages)
    #         {2,3} -> education elementary (cov 3), age [30-40] (2 of 5)
    #         {4,5} -> vocational (cov 1), age 50 (1)
    part = Partition(np.array([0, 0, 1, 1, 2, 2]), 3)
    view = view_from_partition(t, part)
    # per-row IL: weights 1/2 each; education base 9, age base 5 distinct values
    edu = np.array([1, 1, 2, 2, 0, 0]) / 8  # (cov-1)/(base-1)
    age = np.array([1, 1, 1, 1, 0, 0]) / 4
    want = float(np.mean(0.5 * edu + 0.5 * age))
    assert information_loss(view) == pytest.approx(want)
    per = information_loss(view, per_attribute=True)
    assert per["education"] == pytest.approx(edu.mean()) and per["age"] == pytest.approx(age.mean())
    # weights are normalised: (3, 1) == (0.75, 0.25)
    assert information_loss(view, weights={"education": 3, "age": 1}) == pytest.approx(
        float(np.mean(0.75 * edu + 0.25 * age)))
    # NCP: numeric spans over the domain range 50-20 = 30
    age_ncp = np.array([2, 2, 10, 10, 0, 0]) / 30
    assert ncp(view, t) == pytest.approx(float(np.mean(0.5 * edu + 0.5 * age_ncp)))
    assert discernibility(view) == 12.0
    st = class_stats(view)
    assert st["n_classes"] == 3 and st["avg_class_size"] == 2 and st["suppression_rate"] == 0


def test_extremes_and_suppression():
    t = _table(ROWS)
    assert information_loss(view_from_partition(t, Partition(np.arange(6), 6))) == 0.0
    assert information_loss(view_from_partition(t, Partition(np.zeros(6, int), 1))) == 1.0
    part = Partition(np.array([0, 0, -1, -1, 1, 1]), 2)
    v = view_from_partition(t, part)
    il_pub = np.array([0.5 / 8 + 0.5 / 4] * 2 + [0.0] * 2)
    assert information_loss(v, suppressed="exclude") == pytest.approx(il_pub.mean())
    assert information_loss(v) == pytest.approx((il_pub.sum() + 2) / 6)  # suppressed rows at IL 1
    assert discernibility(v) == 4 + 4 + 2 * 6
    assert class_stats(v)["suppression_rate"] == pytest.approx(2 / 6)
    with pytest.raises(ParameterError):
        information_loss(v, weights={"zip": 1})


def test_full_domain_levels_view():
    t = _table(ROWS)
    # education level 1 (parents), age level 0: classes are distinct generalized tuples
    levels = [0, 1]
    h = t.hierarchy("education")
    nodes = h.generalize(t.columns["education"].codes, 1)
    keys = pd.factorize(pd.Series(list(zip(t.columns["age"].codes, nodes))))[0]
    part = Partition.from_labels(keys)
    v = view_from_partition(t, part, levels=levels)
    edu = (h.coverage[nodes] - 1) / 8
    assert information_loss(v) == pytest.approx(float(np.mean(0.5 * edu)))


def test_release_view_matches_partition_view():
    t = _table(ROWS)
    part = Partition(np.array([0, 0, 1, 1, 2, 2]), 3)
    rel = build_release(t, part, model=None)
    a, b = view_from_partition(t, part), view_from_release(rel, t)
    assert information_loss(a) == pytest.approx(information_loss(b))
    assert ncp(a, t) == pytest.approx(ncp(b, t))
    assert release_utility(rel, t)["n_classes"] == 3
    brel = build_release(t, part, model=None, kind="bucketized")
    bv = view_from_release(brel, t)
    assert information_loss(bv) == 0.0 and class_stats(bv)["n_classes"] == 3
    assert utility_summary(bv)["discernibility"] == 12.0


def test_sa_distortion_hand_computed():
    h = edu_hierarchy()
    code = dict(zip(h.leaves, range(h.n_leaves)))
    orig = np.array([code["undergrad"], code["1st-4th"], code["vocational"], code["9th-10th"]])
    pub = np.array([code["postgrad"], code["1st-4th"], code["undergrad"], code["9th-10th"]])
    # NCA(undergrad, postgrad) = university (cov 2); NCA(vocational, undergrad) = ANY (cov 9)
    assert sa_distortion(orig, pub, h) == pytest.approx(((2 - 1) / 8 + 0 + 1 + 0) / 4)
    # published as an internal node: NCA(7th-8th, elementary) = elementary (cov 3)
    pub2 = np.array([int(h.nodes_of(["elementary"])[0])])
    assert sa_distortion(np.array([code["7th-8th"]]), pub2, h) == pytest.approx(2 / 8)
    assert sa_distortion(orig, orig, h) == 0.0


def test_sa_distortion_brute_force():
    rng = np.random.default_rng(3)
    h = edu_hierarchy()
    orig = rng.integers(0, 9, 200)
    pub = np.where(rng.random(200) < 0.5, orig, rng.integers(0, h.n_nodes, 200))
    want = []
    for o, p in zip(orig, pub):
        leaves = {int(o)} | set(np.flatnonzero(h.leaf_mask(int(p))).tolist())
        # smallest-coverage node covering all
        cov = min(h.coverage[v] for v in range(h.n_nodes) if all(h.leaf_mask(v)[x] for x in leaves))
        want.append((cov - 1) / 8)
    assert sa_distortion(orig, pub, h) == pytest.approx(np.mean(want))
