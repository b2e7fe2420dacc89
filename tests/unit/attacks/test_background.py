"""QI-based distributions G_A mined from the original table (paper 003 §2)."""

import numpy as np
import pandas as pd
import pytest

from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.inference.knowledge import attribute_sets, mine_knowledge


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 4, n).astype(str), "b": rng.integers(0, 3, n).astype(str),
                       "c": rng.integers(0, 5, n).astype(str)})
    df["s"] = np.where(rng.random(n) < 0.3, "x", rng.choice(["y", "z", "w"], n))
    return encode(df, Schema.build(qi=["a", "b", "c"], sa="s")), df


def test_all_subsets_and_frequencies_match_pandas():
    tab, df = _table()
    kn = mine_knowledge(tab, min_support=1)
    assert len(kn.sets) == 7 == len(attribute_sets(3))
    values = [str(v) for v in kn.sa_values]
    for s in kn.sets:
        cols = list(s.names)
        P = s.row_probs(tab.qi_codes)
        ref = pd.crosstab([df[c] for c in cols], df["s"], normalize="index")
        key = pd.MultiIndex.from_frame(df[cols]) if len(cols) > 1 else pd.Index(df[cols[0]])
        exp = ref.reindex(key)[values].to_numpy()
        np.testing.assert_allclose(P, exp, atol=1e-12)


def test_min_support_falls_back_to_dataset_distribution():
    tab, df = _table(n=200, seed=1)
    kn = mine_knowledge(tab, min_support=5)
    glob = df["s"].value_counts(normalize=True).reindex([str(v) for v in kn.sa_values]).to_numpy()
    full = kn.sets[-1]  # {a,b,c}: 60 signatures over 200 rows, many rare
    sig = full.signature_of(tab.qi_codes)
    rare = sig == full.n_signatures
    assert rare.any() and (~rare).any()
    np.testing.assert_allclose(full.probs[sig[rare]], np.broadcast_to(glob, (rare.sum(), glob.size)))
    assert (full.support >= 5).all()


def test_release_frames_are_coded_like_the_table_and_unseen_values_fall_back():
    tab, df = _table()
    kn = mine_knowledge(tab, min_support=1)
    np.testing.assert_array_equal(kn.encode_frame(df), tab.qi_codes)
    odd = df.head(3).copy()
    odd["a"] = "never"
    sig = kn.sets[0].signature_of(kn.encode_frame(odd))
    assert (sig == kn.sets[0].n_signatures).all()


def test_parameters_are_checked():
    tab, _ = _table()
    with pytest.raises(ParameterError):
        mine_knowledge(tab, min_support=0)
    with pytest.raises(ParameterError):
        mine_knowledge(tab, qi=["nope"])
    assert len(mine_knowledge(tab, max_size=1).sets) == 3
    assert [s.names for s in mine_knowledge(tab, sets=[["a", "c"]]).sets] == [("a", "c")]
