"""Injector (Li & Li ICDE 2008) as used in paper 003 §5."""

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.injector import negative_rules
from openbook.algorithms.registry import make_algorithm
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.models.registry import make_model


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"sex": rng.choice(["M", "F"], n), "b": rng.integers(0, 3, n).astype(str)})
    s = rng.choice(["flu", "cold", "hiv", "cancer"], n, p=[0.4, 0.4, 0.1, 0.1])
    s = np.where((df["sex"] == "M") & (rng.random(n) < 0.05), "ovarian", s)  # never for F... inverted below
    s = np.where(s == "ovarian", "flu", s)
    s = np.where((df["sex"] == "F") & (rng.random(n) < 0.05), "ovarian", s)
    df["s"] = s
    return encode(df, Schema.build(qi=["sex", "b"], sa="s", sensitive_sets={"sens": ["hiv", "cancer", "ovarian"]})), df


def test_rules_confidence_one_and_expectation():
    tab, df = _table()
    forb = negative_rules(tab, min_exp=0.9, max_rule_size=1)
    vals = [str(v) for v in tab.columns["s"].categories]
    ov = vals.index("ovarian")
    assert forb[(df["sex"] == "M").to_numpy(), ov].all()  # males never have ovarian cancer
    assert not forb[(df["sex"] == "F").to_numpy(), ov].any()
    assert not forb[np.arange(tab.n_rows), tab.sa_codes].any()  # own value never excluded
    # expectation filter: a huge min_exp keeps no rule
    assert not negative_rules(tab, min_exp=1e9).any()


def test_groups_honour_rules_and_diversity():
    tab, df = _table()
    model = make_model("simple-l=4,set=sens")
    algo = make_algorithm("injector", model=model, seed=0)
    rel = algo.anonymize(tab)
    assert rel.kind == "bucketized"
    part = algo.partition(tab)
    forb = negative_rules(tab)
    sa = tab.sa_codes
    sens = tab.sa_domain.sensitive_mask("sens")
    for rows in part.members():
        if sens[sa[rows]].any():
            assert not forb[np.ix_(rows, np.unique(sa[rows]))].any()
            assert sens[sa[rows]].sum() == 1 and rows.size >= 4


def test_min_conf_other_than_one_rejected():
    tab, _ = _table(200)
    with pytest.raises(ParameterError):
        make_algorithm("injector", model=make_model("simple-l=4,set=sens"), min_conf=0.9).partition(tab)
