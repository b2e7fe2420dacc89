"""Levels on Adult agree with pyCANON 1.3.6 where pyCANON is right, and stay right where
it is not (a frame whose index is not 0..n-1).

pyCANON lives in its own virtual environment (its pins clash with ours): bench/_peers.py
builds it on first use (one `pip install pycanon==1.3.6`), and the comparison runs there.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _peers import run_peer  # noqa: E402

from openbook.algorithms import FullDomainGeneralization  # noqa: E402
from openbook.data.datasets import load_dataset  # noqa: E402
from openbook.data.grouping import group_ids  # noqa: E402
from openbook.data.schema import Schema  # noqa: E402
from openbook.data.table import encode  # noqa: E402
from openbook.models import make_model  # noqa: E402
from openbook.models.levels import compute_levels  # noqa: E402

PEER = r"""
import json, sys
import pandas as pd
from pycanon import anonymity
df = pd.read_csv(sys.argv[1], dtype=str)
qi = sys.argv[2].split(","); sa = [sys.argv[3]]
out = {"k": int(anonymity.k_anonymity(df, qi)), "l": int(anonymity.l_diversity(df, qi, sa)),
       "entropy_l": float(anonymity.entropy_l_diversity(df, qi, sa))}
shuffled = df.sample(frac=1.0, random_state=0)
out["l_shuffled_index"] = int(anonymity.l_diversity(shuffled, qi, sa))
out["k_shuffled_index"] = int(anonymity.k_anonymity(shuffled, qi))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def generalized_adult(adult_dir, tmp_path_factory):
    ds = load_dataset("adult", path=adult_dir)
    table = ds.encode()
    rel = FullDomainGeneralization(model=make_model("l=3"), levels=[2, 1, 1, 1, 1, 1, 2],
                                   max_suppression=0.2).anonymize(table)
    path = tmp_path_factory.mktemp("pycanon") / "generalized.csv"
    rel.data.to_csv(path, index=False)
    return rel, path, table


@pytest.mark.slow  # several seconds per case: run by .ci/run (pytest -m slow)
def test_levels_agree_with_pycanon_on_generalized_adult(generalized_adult):
    rel, path, table = generalized_adult
    ours = compute_levels(*rel.sa_counts())
    peer = run_peer("pycanon", PEER, str(path), ",".join(table.qi_names), table.sa_name)
    assert ours["k"] == peer["k"]
    assert ours["distinct_l"] == peer["l"] >= 3
    # pyCANON reports entropy ℓ as the largest integer ℓ with H >= log ℓ
    assert math.floor(ours["entropy_l"] + 1e-12) == peer["entropy_l"]
    # ... and with the rows reindexed, pyCANON's ℓ goes wrong (k survives)
    assert peer["k_shuffled_index"] == peer["k"]
    assert peer["l_shuffled_index"] != peer["l"]


def test_ours_is_index_proof(generalized_adult):
    rel, _, table = generalized_adult
    df = rel.data.sample(frac=1.0, random_state=0)  # shuffled index, rows reordered
    schema = Schema.build(qi=table.qi_names, sa=table.sa_name)
    t2 = encode(df, schema)
    cls, n = group_ids(t2.qi_codes)
    again = compute_levels(t2.group_sa_counts(cls, n), t2.sa_domain)
    ours = compute_levels(*rel.sa_counts())
    for key in ("k", "distinct_l", "entropy_l", "n_groups"):
        assert np.isclose(again[key], ours[key]), key


def test_raw_adult_levels_agree(adult_dir, tmp_path):
    """Raw (ungeneralized) Adult on three QIs: pyCANON is slow per class, so fewer QIs keep
    this test short; the 7-QI raw table is compared in bench/bench_check.py."""
    ds = load_dataset("adult", path=adult_dir)
    qi = ["workclass", "race", "sex"]
    table = encode(ds.frame, Schema.build(qi=qi, sa="occupation"))
    path = tmp_path / "raw.csv"
    ds.frame[[*qi, "occupation"]].to_csv(path, index=False)
    cls, n = group_ids(table.qi_codes)
    ours = compute_levels(table.group_sa_counts(cls, n), table.sa_domain)
    peer = run_peer("pycanon", PEER, str(path), ",".join(qi), "occupation")
    assert (ours["k"], ours["distinct_l"]) == (peer["k"], peer["l"])
    assert math.floor(ours["entropy_l"] + 1e-12) == peer["entropy_l"]
