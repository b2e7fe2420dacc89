"""One contract every registered anonymizer honours (docs/design.md, "Conventions"; after scikit-learn's
``parametrize_with_checks``), run with the published checks of :mod:`openbook.testing`:
declared parameters, same seed → same partition, the input table untouched, every row in
exactly one group or suppressed, a release verified against its model that counts every input
row, no seed in the files, a certificate that decides; and the lazy catalog names its classes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import all_algorithms
from openbook.catalog import CATALOG
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.testing import check_anonymizer

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
def test_contract(name, seed):
    """The published checks (:func:`openbook.testing.check_anonymizer`) on two tables."""
    done = check_anonymizer(name, model=MODELS.get(name, "l=2"), params=EXTRA.get(name), table=table(seed))
    assert {"declared parameters", "same seed, same partition", "input untouched", "every row once", "nothing lost",
            "verified", "no seed in the files", "certificate decides"} <= set(done)


def test_catalog_matches_the_classes():
    """The lazy catalog names each class, its module and release kind correctly."""
    for name, cls in all_algorithms().items():
        assert cls.name == name
        assert cls.__name__ == CATALOG[name].cls
        assert cls.__module__.endswith(CATALOG[name].module)
        if name != "mask":  # MASK publishes either kind (--kind)
            assert cls.release_kind == CATALOG[name].kind, name
