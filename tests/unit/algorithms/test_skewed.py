"""The skew step as a wrapper algorithm (``openbook.algorithms.skewed``, paper 004)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from openbook.algorithms.registry import make_algorithm
from openbook.algorithms.skewed import Skewed, with_skew
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model


def _table():
    df = pd.DataFrame({"age": np.arange(20, 44), "sex": ["F", "M"] * 12,
                       "disease": ["flu"] * 14 + ["hiv"] * 4 + ["cold"] * 4 + ["cancer"] * 2})
    return encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease"))


def test_no_skew_is_the_algorithm_itself():
    algo = make_algorithm("anatomy", model=make_model("l=3"), seed=1)
    assert with_skew(algo, None) is algo and with_skew(algo, "none") is algo
    assert isinstance(with_skew(algo, "safe-d", 1), Skewed)


def test_the_wrapped_release_is_the_base_on_the_kept_rows():
    """The wrapper withholds rows (the table is not 3-eligible), runs the base on the others,
    and the release is the base's: its provenance names the base with the step beside it,
    nothing is lost (published + withheld = input), and the same seeds give the same release."""
    t = _table()
    model = make_model("l=3")
    runs = []
    for _ in range(2):
        algo = Skewed(make_algorithm("anatomy", model=model, seed=1), skew="r-suppression", seed=4)
        runs.append(algo.anonymize(t))
    rel = runs[0]
    assert rel.meta["algorithm"]["algorithm"] == "anatomy" and rel.meta["algorithm"]["skew"]["method"]
    assert rel.meta["skew"]["n_suppressed"] > 0
    assert rel.n_published + rel.meta["n_suppressed"] == t.n_rows
    np.testing.assert_array_equal(runs[0].partition.group, runs[1].partition.group)
    kept = np.flatnonzero(rel.partition.group >= 0)
    assert kept.size == rel.n_published
