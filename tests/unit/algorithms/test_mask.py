"""MASK (paper 001 §6, Algorithm 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms import make_algorithm
from openbook.algorithms.mask import Mask, mask_distort
from openbook.attacks.credibility import minimality_attack
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.models.registry import make_model
from openbook.release import Partition


def _toy(seed=0, n=400):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 20, n), "b": rng.choice(list("xyz"), n),
                       "sa": rng.choice(["s1", "s2", "n1", "n2", "n3"], n, p=[0.12, 0.08, 0.3, 0.3, 0.2])})
    return encode(df, Schema.build(qi=["a:numeric", "b"], sa="sa", sensitive_sets={"S": ["s1", "s2"]}))


M2 = "simple-l=2,set=S,set-mode=total"


def test_algorithm_1_steps_on_a_fixed_partition():
    t = _toy()
    model = make_model(M2)
    groups = np.arange(t.n_rows) % 40
    part = Partition.from_labels(groups)
    counts = t.group_sa_counts(part.group, part.n_groups)
    mask = t.sa_domain.sensitive_sets["S"]
    prop = counts[:, mask].sum(1) / counts.sum(1)
    V = np.flatnonzero(prop > 0.5)
    new, rep = mask_distort(t, part, model, l=2, rng=np.random.default_rng(3))
    assert rep["n_violating"] == V.size and rep["n_l"] == min(V.size, int((~(prop > 0.5)).sum()))
    good = np.sort(prop[prop <= 0.5])[::-1][: V.size]
    assert set(np.round(good, 6)) == set(rep["l_class_proportions"])
    assert set(np.round(rep["drawn_proportions"], 6)) <= set(rep["l_class_proportions"])
    after = np.bincount(part.group * t.sa_domain.n_values + new, minlength=part.n_groups * t.sa_domain.n_values)
    after = after.reshape(part.n_groups, -1)
    assert model.holds_all(after, t.sa_domain)
    # only sensitive tuples of violating classes change, and only to non-sensitive values
    changed = np.flatnonzero(new != t.sa_codes)
    assert np.isin(part.group[changed], V).all()
    assert mask[t.sa_codes[changed]].all() and not mask[new[changed]].any()
    assert rep["n_distorted_tuples"] == changed.size


@pytest.mark.parametrize("kind", ["generalized", "bucketized"])
def test_release_verified_seeded_and_input_untouched(kind):
    t = _toy(1)
    before = t.sa_codes.copy()
    if kind == "bucketized":  # exact QIs cannot carry MASK's k-anonymity: refused, naming the k
        from openbook.errors import VerificationError

        with pytest.raises(VerificationError, match="shared by fewer than k"):
            make_algorithm("mask", model=make_model(M2), k=5, seed=4, kind=kind).anonymize(t)
        np.testing.assert_array_equal(before, t.sa_codes)
        return
    a = make_algorithm("mask", model=make_model(M2), k=5, seed=4, kind=kind).anonymize(t)
    b = make_algorithm("mask", model=make_model(M2), k=5, seed=4, kind=kind).anonymize(t)
    np.testing.assert_array_equal(before, t.sa_codes)
    assert a.kind == kind
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.meta["algorithm"]["minimality"] is False
    assert a.meta["distortion"]["n_distorted_tuples"] >= 0
    a.verify(make_model(M2))  # the published (distorted) data satisfies the model
    assert (a.sa_counts()[0].sum(axis=1) >= 5).all()


def test_bad_parameters():
    t = _toy()
    with pytest.raises(ParameterError, match="sensitive value set"):
        Mask(model=make_model("l=2")).anonymize(t)
    with pytest.raises(ParameterError, match="mask: k must be an integer >= 1, got 0"):
        Mask(model=make_model(M2), k=0).anonymize(t)


def test_mask_is_m_confidential_on_adult_while_minimal_release_is_not(adult_frame):
    from openbook.hierarchy import adult_hierarchies

    qi = ["age:numeric", "workclass", "marital-status", "occupation", "race", "sex", "native-country",
          "salary-class"]
    schema = Schema.build(qi=qi, sa="education",
                          sensitive_sets={"low": ["Preschool", "1st-4th", "5th-6th", "7th-8th"]})
    h = {k: v for k, v in adult_hierarchies("paper001").items() if k in schema.qi_names}
    sample = adult_frame.sample(6000, random_state=0)
    t = encode(sample, schema, h)
    for l in (2, 4):
        model = make_model(f"simple-l={l},set=low,set-mode=total")
        masked = make_algorithm("mask", model=model, k=5, seed=0).anonymize(t)
        s = minimality_attack(masked, t).summary()
        assert s.m_confidential and s.max_posterior <= 1 / l + 1e-12
        assert masked.meta["distortion"]["n_violating"] > 0  # MASK had to distort
        minimal = make_algorithm("mondrian", model=model).anonymize(t)  # minimality-following
        s2 = minimality_attack(minimal, t).summary()
        assert not s2.m_confidential and s2.max_risk_multiple > 1.5 and s2.n_vulnerable > 0
