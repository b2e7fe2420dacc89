"""The pandas-first API beyond its doctests: a refused release names the API's keywords
(not the CLI's flags), the identity target, releases as DataFrames, and saving."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import openbook as ob
from openbook.errors import ParameterError, RiskError


def _frame(n=300, seed=2):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.choice(list("abcdef"), n),
                         "disease": rng.choice(["flu", "cold", "hiv", "none"], n)})


def test_refusal_names_the_api_keywords():
    df = _frame()
    with pytest.raises(RiskError) as exc:
        ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="mondrian",
                     strict=True, max_risk=0.3, max_reid_risk=1)
    msg = str(exc.value)
    assert "max_risk=R" in msg and "certify=False" in msg and "--" not in msg
    with pytest.raises(RiskError) as exc:  # identity first, with its own keyword
        ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="mondrian", strict=True)
    msg = str(exc.value)
    assert "re-identification risk" in msg and "max_reid_risk=1" in msg and "--" not in msg


def test_identity_target_refuses_exact_qis():
    df = _frame()
    with pytest.raises(RiskError, match="max_reid_risk=1"):
        ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="anatomy", seed=1,
                     max_reid_risk=0.5)


def test_release_as_dataframes_and_saved(tmp_path):
    df = _frame()
    rel = ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="anatomy", seed=1,
                       max_reid_risk=1)  # exact QIs, accepted explicitly
    qi_table, sa_table = rel.to_pandas(), rel.to_pandas("sa")
    assert list(qi_table.columns) == ["age", "zip", "gid"] and len(qi_table) == len(df)
    assert list(sa_table.columns) == ["gid", "disease", "count"] and sa_table["count"].sum() == len(df)
    qi_table.iloc[0, 0] = -1  # a copy: the release is untouched
    assert rel.data.iloc[0, 0] != -1
    with pytest.raises(ParameterError, match="table must be one of 'data', 'sa'"):
        rel.to_pandas("other")
    files = rel.save(tmp_path / "r.parquet")
    assert [f.name for f in files][-1] == "r.parquet.json"
    back = ob.load_release(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(back.to_pandas("sa"), rel.to_pandas("sa"))
    gen = ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="k=5", algorithm="mondrian", strict=True)
    with pytest.raises(ParameterError, match="generalized release has no SA-table"):
        gen.to_pandas("sa")
