"""Utility metrics that compare a release with its input align each published row with the input
row it publishes (``Release.source_rows``), never by position: the files are in canonical order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.models import make_model
from openbook.release import load_release
from openbook.utility.metrics import release_sa_distortion, sa_distortion


def test_sa_distortion_of_an_exact_sa_is_zero_and_needs_the_publishers_record(tmp_path):
    """Mondrian publishes every SA value exactly: its SA distortion is 0 — read by position
    (input order against canonical order) it would not be, which this checks too; a loaded
    release does not record which input row each published row is, and says so."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 60, 200), "zip": rng.choice(list("abc"), 200),
                       "disease": rng.choice(["flu", "cold", "hiv"], 200)})
    t = encode(df, Schema.build(qi=["age:numeric", "zip"], sa="disease"))
    rel = make_algorithm("mondrian", model=make_model("k=5")).anonymize(t)
    assert release_sa_distortion(rel, t) == 0.0
    h = t.hierarchy(t.sa_name)
    pub = h.nodes_of(rel.data[rel.sa].astype(str).to_numpy()).astype(np.int64)
    assert sa_distortion(t.sa_codes, pub, h) > 0  # by position: misaligned
    rel.save(tmp_path / "r.csv")
    with pytest.raises(ParameterError, match="cannot align"):
        release_sa_distortion(load_release(tmp_path / "r.csv"), t)
