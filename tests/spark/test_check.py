"""``check --engine spark``: every level equals the local engine's, exactly, on random tables
(read from Parquet and from CSV by the Spark engine's encoder)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import Phase, given, settings, strategies as st

from openbook.data.frequency import FrequencyTable
from openbook.data.table import encode
from openbook.models.levels import compute_levels
from openbook.spark.check import identity_summary, spark_levels
from openbook.spark.encoding import encode_raw, from_encoded, read_raw

from .conftest import frame_schema, random_frame


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), k
        else:
            assert x == y, (k, x, y)


def _local(frame, schema, c=2.0):
    freq = FrequencyTable.from_table(encode(frame, schema))
    return compute_levels(freq.sa_counts, freq.sa_domain, c=c), freq


#: Spark is slow: few examples, no shrinking (a failure prints its seed, enough to replay it)
SLOW = settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])


@SLOW
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), card=st.integers(1, 6),
       fmt=st.sampled_from(["parquet", "csv"]))
def test_levels_equal_local(spark, tmp_path_factory, seed, n, card, fmt):
    frame = random_frame(seed, n, card=card)
    schema = frame_schema(frame)
    want, freq = _local(frame, schema)
    path = tmp_path_factory.mktemp("in") / f"t.{fmt}"
    frame.to_parquet(path) if fmt == "parquet" else frame.to_csv(path, index=False)
    stable = encode_raw(spark, read_raw(spark, str(path)), schema, {}, source=str(path), csv=fmt == "csv")
    got, hist = spark_levels(stable, c=2.0)
    _same(got, want)
    sizes, counts = np.unique(freq.weights, return_counts=True)
    assert hist == dict(zip(sizes.tolist(), counts.tolist()))


def test_levels_with_sensitive_sets_and_numeric_sa(spark):
    """α of a sensitive set and t under the ordered distance (a numeric SA) too."""
    from openbook.data.schema import Schema

    frame = random_frame(7, 400)
    frame["sa"] = frame["sa"].str[1:].astype(int) * 10
    schema = Schema.build(qi=["q0:numeric", "q1", "q2:numeric"], sa="sa:numeric", sensitive_sets={"hi": [20, 30]})
    want, _ = _local(frame, schema, c=3.0)
    got, _ = spark_levels(from_encoded(spark, encode(frame, schema)), c=3.0)
    assert {"t_ordered", "e", "alpha_hi", "alpha_hi_total"} <= want.keys()
    _same(got, want)


def test_identity_equals_local(spark):
    from openbook.attacks.reidentification import class_size_summary as identity_of_classes

    frame = random_frame(11, 500)
    schema = frame_schema(frame)
    _, freq = _local(frame, schema)
    _, hist = spark_levels(from_encoded(spark, encode(frame, schema)))
    for kw in ({}, {"population_size": 5000.0}):
        want = identity_of_classes(freq.weights, threshold=0.2, sampling_fraction=None, **({"population_size": None} | kw))
        got = identity_summary(hist, threshold=0.2, **kw)
        assert got["records"] == want["records"] and got["classes"] == want["classes"]
        assert got["prosecutor"] == want["prosecutor"]
        assert got["sample_uniques"] == want["sample_uniques"]
