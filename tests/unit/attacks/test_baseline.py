"""Baseline adversary (uniform possible worlds per class) and the audit summary."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.attacks.base import AttackResult, model_l
from openbook.attacks.baseline import baseline_attack
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.models.registry import make_model
from openbook.release import Partition, build_release


def _table():
    df = pd.DataFrame({"zip": ["a", "a", "b", "b", "b", "c", "c", "c"],
                       "d": ["hiv", "flu", "hiv", "flu", "flu", "cancer", "flu", "hiv"]})
    return encode(df, Schema.build(qi=["zip"], sa="d", sensitive_sets={"bad": ["hiv", "cancer"]}))


@pytest.mark.parametrize("kind", ["generalized", "bucketized"])
def test_posterior_is_class_frequency(kind):
    t = _table()
    rel = build_release(t, Partition.from_labels(np.array([0, 0, 1, 1, 1, 2, 2, 2])),
                        model=make_model("simple-l=1.5,set=bad,set-mode=total"), kind=kind)
    res = baseline_attack(rel)
    assert res.targets == ["set:bad"]
    cls, _ = rel.classes()
    want = np.array([1 / 2, 1 / 3, 2 / 3])[cls]
    np.testing.assert_allclose(res.posterior[:, 0], want)
    s = res.summary()
    assert s.l == pytest.approx(1.5)
    assert s.n_vulnerable == 0 and s.m_confidential
    s2 = res.summary(l=2)
    assert s2.n_vulnerable == 3 and not s2.m_confidential
    assert s2.max_risk_multiple == pytest.approx(4 / 3)
    assert s2.avg_credibility_problematic == pytest.approx(2 / 3)
    json.dumps(s2.to_dict())
    if kind == "generalized":
        # truly sensitive tuples known from the published SA
        assert s2.n_sensitive == 4 and s2.vulnerable_sensitive_fraction == pytest.approx(2 / 4)


def test_each_value_targets_without_set():
    t = _table()
    rel = build_release(t, Partition.from_labels(np.zeros(8, dtype=int)), model=make_model("l=3"))
    res = baseline_attack(rel)
    assert res.targets == ["cancer", "flu", "hiv"]
    np.testing.assert_allclose(res.posterior[0], [1 / 8, 4 / 8, 3 / 8])
    assert res.l == 3


def test_summary_needs_l_and_frame_columns():
    r = AttackResult("x", np.array([[0.2], [np.nan]]), ["v"], np.array([0, -1]))
    with pytest.raises(ParameterError, match="needs"):
        r.summary()
    s = r.summary(l=2)
    assert s.n_published == 1 and s.n_vulnerable == 0  # an absent person not reasoned about does not count
    assert s.n_unresolved == 0 and s.n_absent_evaluated == 0
    # an absent person whose absence the adversary reasons about (a finite posterior) counts
    r2 = AttackResult("x", np.array([[0.2], [0.9]]), ["v"], np.array([0, -1]))
    s2 = r2.summary(l=2)
    assert s2.n_published == 1 and s2.n_absent_evaluated == 1 and s2.n_vulnerable == 1
    assert s2.max_posterior == 0.9
    assert list(r.frame().columns) == ["tuple", "group", "p[v]", "max_posterior"]


def test_model_l():
    assert model_l(make_model("alpha=0.25")) == 4
    assert model_l(make_model("k=5,l=3")) == 3
    assert model_l(make_model("k=5")) is None
