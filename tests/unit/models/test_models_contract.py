"""One contract every privacy model goes through (docs/design.md, "Conventions"; scikit-learn's
``parametrize_with_checks``): vectorised answers of the right shape and type, input left
untouched, levels consistent with ``holds``, monotonicity when declared, ``validate``
exactly when the whole table as one group fails."""

import numpy as np
import pytest

from openbook.errors import InfeasibleError
from openbook.models import (
    AllOf,
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KEAnonymity,
    LEligibility,
    RecursiveCLDiversity,
    SimpleLDiversity,
    TCloseness,
)

from models_testkit import make_domain, random_tree

M = 5
MODELS = [
    KAnonymity(k=3),
    DistinctLDiversity(l=2),
    DistinctLDiversity(l=3),
    EntropyLDiversity(l=2),
    EntropyLDiversity(l=1.7),
    RecursiveCLDiversity(c=2, l=2),
    RecursiveCLDiversity(c=0.75, l=3),
    RecursiveCLDiversity(c=3, l=3),
    AlphaKAnonymity(alpha=0.5, k=2),
    AlphaKAnonymity(alpha=0.3, sensitive_set="s", set_mode="total"),
    SimpleLDiversity(l=2),
    SimpleLDiversity(l=3, sensitive_set="s"),
    TCloseness(t=0.25),
    TCloseness(t=0.25, distance="ordered"),
    TCloseness(t=0.2, distance="hierarchical"),
    KEAnonymity(k=2, e=3),
    LEligibility(l=2),
    AllOf([KAnonymity(k=2), TCloseness(t=0.4)]),
]


def _domain(rng, g=None):
    g = rng.integers(0, 12, size=M) if g is None else g
    return make_domain(
        g,
        numeric=rng.permutation(M).astype(float) * 1.5,
        hierarchy=random_tree(rng, M, 3),
        sets={"s": np.array([True, False, True, False, False])},
    )


def _counts(rng, n=60):
    return rng.integers(0, 4, size=(n, M)) * (rng.random((n, M)) < 0.6)


def _threshold(model):
    """``(level -> bool)`` implied by the model's parameters, where one exists."""
    if isinstance(model, (KAnonymity, DistinctLDiversity, LEligibility, RecursiveCLDiversity)):
        ell = getattr(model, "k", None) or model.l
        return lambda lv: lv >= ell
    if isinstance(model, EntropyLDiversity):
        return lambda lv: lv >= model.l * (1 - 1e-9)
    if isinstance(model, TCloseness):
        return lambda lv: lv <= model.t + 1e-12
    return None


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_shapes_types_and_input_untouched(model):
    rng = np.random.default_rng(1)
    counts = _counts(rng)
    counts[0] = 0  # an empty group never holds
    counts[1] = [3, 3, 3, 3, 3]
    dom = _domain(rng, counts.sum(axis=0))
    before = counts.copy()
    lv = model.group_levels(counts, dom)
    ok = model.holds(counts, dom)
    assert np.array_equal(counts, before)
    assert lv.shape == ok.shape == (len(counts),)
    assert lv.dtype == np.float64 and ok.dtype == bool
    assert not ok[0]
    # int32 counts and a list give the same answers
    assert np.array_equal(model.holds(counts.astype(np.int32), dom), ok)
    assert np.array_equal(model.holds(counts.tolist(), dom), ok)
    assert model.holds(counts[:0], dom).shape == (0,)


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_levels_agree_with_holds(model):
    rng = np.random.default_rng(2)
    for _ in range(5):
        counts = _counts(rng)
        dom = _domain(rng, counts.sum(axis=0))
        lv = model.group_levels(counts, dom)
        ok = model.holds(counts, dom)
        rule = _threshold(model)
        if rule is not None:
            assert np.array_equal(rule(lv) & (counts.sum(axis=1) > 0), ok)
        if isinstance(model, AlphaKAnonymity):
            assert np.all(lv[ok] <= model.alpha + 1e-12)
        if isinstance(model, KEAnonymity):
            assert np.all(lv[ok] >= model.e)


@pytest.mark.parametrize("model", [m for m in MODELS if m.monotonic], ids=str)
def test_monotonic_models_hold_on_merged_groups(model):
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        counts = _counts(rng, 80)
        dom = _domain(rng, counts.sum(axis=0) + 1)
        ok = np.flatnonzero(model.holds(counts, dom))
        if len(ok) < 2:
            continue
        a, b = rng.choice(ok, size=(2, 30))
        merged = counts[a] + counts[b]
        merged3 = merged + counts[rng.choice(ok, size=30)]
        assert model.holds(merged, dom).all()
        assert model.holds(merged3, dom).all()
        checked += 1
    assert checked > 5


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_validate_raises_iff_whole_table_fails(model):
    rng = np.random.default_rng(4)
    for _ in range(60):
        g = rng.integers(0, 8, size=M) * (rng.random(M) < 0.7)
        if g.sum() == 0:
            g[0] = 1
        dom = _domain(rng, g)
        whole_ok = bool(model.holds(g[None, :], dom)[0])
        try:
            model.validate(dom)
            raised = False
        except InfeasibleError as exc:
            raised = True
            assert "\n" not in str(exc) and exc.model is not None
        assert raised == (not whole_ok)


@pytest.mark.parametrize("model", MODELS, ids=str)
def test_describe_params_equality(model):
    assert model.describe().startswith(model.name.split("-")[0]) or isinstance(model, AllOf)
    assert model == type(model)(**model.params()) if not isinstance(model, AllOf) else True
    assert repr(model) == model.describe()
