"""One contract every registered anonymizer honours (docs/design.md, "Conventions"; after scikit-learn's
``parametrize_with_checks``): same seed → same partition; the input table is left
untouched; every row is in exactly one group or suppressed; the release it returns is
verified against its model and counts every input row; the seed never reaches the release.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import all_algorithms, make_algorithm
from openbook.catalog import CATALOG
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model
from openbook.release import save_release

NAMES = sorted(all_algorithms())
SEED = 987_654_320  # distinctive, so finding it in a sidecar cannot be a coincidence
EXTRA = {"full-domain": {"levels": [1, 1, 1], "max_suppression": 0.3}, "mask": {"k": 4}}
#: MASK protects a sensitive value set (paper 001 §6); every other algorithm runs under ℓ = 2
MODELS = {"mask": "simple-l=2,set=sens,set-mode=total",
          # ART protects the sensitive set against r-robustness; its output is verified as
          # simple ℓ-diversity of the set with ℓ = r (paper 003 §4.2)
          "art": "simple-l=2,set=sens", "art-exact": "simple-l=2,set=sens", "injector": "simple-l=2,set=sens",
          "set-anatomy": "simple-l=2,set=sens"}


def table(seed: int):
    rng = np.random.default_rng(seed)
    n = 120
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "zip": rng.choice(["a", "b", "c", "d", "e"], n),
        "sex": rng.choice(["F", "M"], n),
        "disease": rng.choice(["flu", "hiv", "cold", "cancer", "none"], n, p=[0.3, 0.2, 0.2, 0.15, 0.15]),
    })
    df.index = rng.permutation(n) + 1000
    return encode(df, Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease",
                                   sensitive_sets={"sens": ["hiv", "cancer"]}))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_contract(name, seed, tmp_path):
    t = table(seed)
    before = {n: c.codes.copy() for n, c in t.columns.items()}
    model = make_model(MODELS.get(name, "l=2"))
    algo = make_algorithm(name, model=model, seed=SEED + seed, **EXTRA.get(name, {}))
    p1 = algo.partition(t)
    p2 = make_algorithm(name, model=model, seed=SEED + seed, **EXTRA.get(name, {})).partition(t)
    assert np.array_equal(p1.group, p2.group), "same seed, different partition"
    for n, c in t.columns.items():
        assert np.array_equal(c.codes, before[n]), f"{name} modified column {n}"
    p1.check(t.n_rows)
    assert p1.n_published + p1.n_suppressed == t.n_rows
    rel = algo.anonymize(t)
    assert rel.meta["n_input"] == t.n_rows == rel.meta["n_published"] + rel.meta["n_suppressed"]
    assert rel.verify(model).holds
    save_release(rel, tmp_path / "r.csv")
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    text = json.dumps(meta)
    assert str(SEED + seed) not in text and '"seed"' not in text


def test_catalog_matches_the_classes():
    """The lazy catalog names each class, its module and release kind correctly."""
    for name, cls in all_algorithms().items():
        assert cls.name == name
        assert cls.__name__ == CATALOG[name].cls
        assert cls.__module__.endswith("." + CATALOG[name].module)
        if name != "mask":  # MASK publishes either kind (--kind)
            assert cls.release_kind == CATALOG[name].kind, name


def test_every_algorithm_declares_its_parameters():
    """Every keyword-only parameter of every anonymizer (but the model) has a declared
    constraint, and a value outside it is refused in the one message form."""
    import inspect

    from openbook.errors import ParameterError

    t = table(0)
    for name, cls in all_algorithms().items():
        declared = cls.constraints()
        params = [p for p in inspect.signature(cls.__init__).parameters.values()
                  if p.kind == p.KEYWORD_ONLY and p.name != "model"]
        missing = [p.name for p in params if p.name not in declared]
        assert not missing, f"{name}: no declared constraint for {missing}"
        algo = make_algorithm(name, model=make_model(MODELS.get(name, "l=2")), seed=-1, **EXTRA.get(name, {}))
        with pytest.raises(ParameterError, match=rf"^{name}: seed must be an integer >= 0 \(or be omitted\), got -1$"):
            algo.partition(t)
