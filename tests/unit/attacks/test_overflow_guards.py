"""State-count guards computed in Python ints: a class of 994 people over 14 SA values has
~10^24 DP states; an int64 product wraps (negative) and used to pass the guard, then crash
with "array is too big". Such classes are reported unresolved, never a crash."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from openbook.attacks.credibility import class_posterior_multi, minimality_attack
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models.base import SADomain
from openbook.models.registry import make_model
from openbook.release import Partition, build_release


def _domain(m: int) -> SADomain:
    return SADomain(values=np.array([f"v{i}" for i in range(m)], dtype=object),
                    global_counts=np.ones(m, dtype=np.int64))


def test_the_994_by_14_class_is_unresolved_not_a_crash():
    counts = np.array([71] * 13 + [71], dtype=np.int64)  # 994 people, 14 values
    assert int(np.prod(counts + 1)) < 0 or int(np.prod(counts + 1)) != math.prod(int(c) + 1 for c in counts)
    post, ok, excl = class_posterior_multi([(994, np.zeros(14, dtype=np.int64))], counts, make_model("l=3"),
                                           _domain(14))
    assert post is None and ok is False and math.isnan(excl)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2000), min_size=1, max_size=16), st.integers(1, 10**6))
def test_guard_agrees_with_python_integer_arithmetic(counts, budget):
    counts = np.asarray(counts, dtype=np.int64)
    if counts.sum() == 0:
        counts[0] = 1
    states = math.prod(int(c) + 1 for c in counts if c > 0)
    n = int(counts.sum())
    if states <= budget and states > 5_000:  # the DP itself is not what this test is about
        return
    post, ok, _ = class_posterior_multi([(n, np.zeros(counts.size, dtype=np.int64))], counts,
                                        make_model("k=1"), _domain(counts.size), max_states=budget)
    assert (post is None) == (states > budget)


def test_minimality_audit_marks_a_huge_class_unresolved():
    rng = np.random.default_rng(0)
    n = 994
    import pandas as pd

    df = pd.DataFrame({"q": rng.choice(["a", "b"], n), "s": np.repeat([f"v{i}" for i in range(14)], 71)})
    t = encode(df, Schema.build(qi=["q"], sa="s"), {})
    rel = build_release(t, Partition.from_labels(np.zeros(n, dtype=int)), model=make_model("l=3"))
    res = minimality_attack(rel, t, assume_minimality=True)
    s = res.summary()
    assert s.n_unresolved == n and np.isnan(res.posterior).all()
