import json

import pytest

from openbook.errors import ParameterError
from openbook.models import (
    MODELS,
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
    make_model,
)


@pytest.mark.parametrize(
    "spec, want",
    [
        ("k=5", KAnonymity(k=5)),
        ("l=3", DistinctLDiversity(l=3)),
        ("distinct-l=3", DistinctLDiversity(l=3)),
        ("entropy-l=3", EntropyLDiversity(l=3)),
        ("entropy-l=2.5", EntropyLDiversity(l=2.5)),
        ("recursive-l=3,c=2", RecursiveCLDiversity(c=2, l=3)),
        ("alpha=0.2,k=5", AlphaKAnonymity(alpha=0.2, k=5)),
        ("alpha=0.2", AlphaKAnonymity(alpha=0.2)),
        (
            "alpha=0.2,set=sens,set-mode=total",
            AlphaKAnonymity(alpha=0.2, sensitive_set="sens", set_mode="total"),
        ),
        ("t=0.2", TCloseness(t=0.2)),
        ("t=0.2,distance=ordered", TCloseness(t=0.2, distance="ordered")),
        ("t=0.15,distance=hierarchical", TCloseness(t=0.15, distance="hierarchical")),
        ("k=5,e=10000", KEAnonymity(k=5, e=10000)),
        ("simple-l=6,set=sens", SimpleLDiversity(l=6, sensitive_set="sens")),
        ("simple-l=6", SimpleLDiversity(l=6)),
        ("eligible-l=6", LEligibility(l=6)),
        (" K=5 ", KAnonymity(k=5)),
        ("t-closeness:t=0.2,distance=ordered", TCloseness(t=0.2, distance="ordered")),
        ("recursive-cl-diversity(c=3,l=3)", RecursiveCLDiversity(c=3, l=3)),
        ("simple-l-diversity:l=4,set=pos", SimpleLDiversity(l=4, sensitive_set="pos")),
        ({"model": "distinct-l-diversity", "l": 3}, DistinctLDiversity(l=3)),
        ({"model": "l-diversity", "l": 3}, DistinctLDiversity(l=3)),  # alias
    ],
)
def test_specs(spec, want):
    got = make_model(spec)
    assert type(got) is type(want) and got == want


def test_conjunctions():
    both = make_model("k=5,l=3")
    assert isinstance(both, AllOf)
    assert both.models == (KAnonymity(k=5), DistinctLDiversity(l=3))
    assert make_model("k=5 & t=0.2,distance=ordered").models == (
        KAnonymity(k=5),
        TCloseness(t=0.2, distance="ordered"),
    )
    assert make_model("k=5; entropy-l=2").models == (KAnonymity(k=5), EntropyLDiversity(l=2))
    assert make_model([{"model": "k-anonymity", "k": 2}, "l=2"]).models == (
        KAnonymity(k=2),
        DistinctLDiversity(l=2),
    )
    # alpha takes the k that follows it; a k before alpha is its own model
    assert make_model("k=5,alpha=0.5").models == (KAnonymity(k=5), AlphaKAnonymity(alpha=0.5))


@pytest.mark.parametrize(
    "model",
    [
        KAnonymity(k=5),
        DistinctLDiversity(l=3),
        EntropyLDiversity(l=2.5),
        RecursiveCLDiversity(c=0.5, l=2),
        AlphaKAnonymity(alpha=0.25, k=3, sensitive_set="s", set_mode="total"),
        SimpleLDiversity(l=6, sensitive_set="s"),
        TCloseness(t=0.3, distance="hierarchical"),
        KEAnonymity(k=3, e=2.5),
        LEligibility(l=4),
        AllOf([KAnonymity(k=5), TCloseness(t=0.1)]),
    ],
)
def test_to_dict_round_trip_through_json(model):
    spec = json.loads(json.dumps(model.to_dict()))
    back = make_model(spec)
    assert type(back) is type(model) and back == model
    assert make_model(json.dumps(spec)) == model
    assert hash(back) == hash(model)


def test_registry_names():
    assert sorted(MODELS) == [
        "all-of",
        "alpha-k-anonymity",
        "distinct-l-diversity",
        "entropy-l-diversity",
        "k-anonymity",
        "k-e-anonymity",
        "l-eligibility",
        "recursive-cl-diversity",
        "simple-l-diversity",
        "t-closeness",
    ]
    for name, cls in MODELS.items():
        assert cls.name == name


def test_unknown_model_lists_known_names():
    with pytest.raises(ParameterError) as exc:
        make_model({"model": "delta-presence", "d": 1})
    msg = str(exc.value)
    assert "unknown privacy model 'delta-presence'" in msg
    assert "k-anonymity" in msg and "t-closeness" in msg
    with pytest.raises(ParameterError, match="shorthand keys: .*alpha.*model name"):
        make_model("delta=0.3")


@pytest.mark.parametrize(
    "spec, match",
    [
        ("c=2,recursive-l=3", r"c must follow recursive-l"),
        ("recursive-l=3", r"missing parameter c"),
        ("k", r"expected key=value"),
        ("", r"empty model spec"),
        ({"l": 3}, r"needs a 'model' key"),
        ({"model": "k-anonymity", "k": 2, "l": 3}, r"unknown parameter l \(accepted: k\)"),
        ("k=abc", r"k must be an integer"),
        ("t=2", r"t must be in \[0, 1\]"),
        ("{not json", r"not valid JSON"),
        (3, r"must be a dict, a string"),
        ({"model": "all-of", "models": "k=5"}, r"'models' \(a list of specs\)"),
    ],
)
def test_bad_specs(spec, match):
    with pytest.raises(ParameterError, match=match):
        make_model(spec)


def test_all_of_semantics():
    import numpy as np

    from models_testkit import make_domain

    dom = make_domain([3, 3, 2])
    counts = np.array([[1, 1, 1], [4, 0, 0], [1, 1, 0]])
    m = AllOf([KAnonymity(k=3), DistinctLDiversity(l=2)])
    assert m.holds(counts, dom).tolist() == [True, False, False]
    assert m.group_levels(counts, dom).tolist() == [3, 4, 2]  # the first member's
    assert m.higher_is_stronger and m.monotonic
    assert {k: v.tolist() for k, v in m.levels(counts, dom).items()} == {
        "k-anonymity(k=3)": [3, 4, 2],
        "distinct-l-diversity(l=2)": [3, 1, 2],
    }
    assert m.describe() == "k-anonymity(k=3) & distinct-l-diversity(l=2)"
    nested = AllOf([m, TCloseness(t=0.5)])
    assert len(nested.models) == 3
    with pytest.raises(ParameterError):
        AllOf([])
    with pytest.raises(ParameterError):
        AllOf(["k=5"])  # type: ignore[list-item]
