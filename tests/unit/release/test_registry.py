"""Release registry (folder and SQLite/DuckDB) and its linkage audit (paper 002 §2.3)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from openbook.attacks.linkage_audit import audit_registry
from openbook.data.table import EncodedTable
from openbook.errors import ParameterError, PrivacyLeakWarning, RiskError
from openbook.release import Partition, build_release
from openbook.release.registry import ReleaseRegistry


def bucketized(rows: list[tuple[str, int, str, int]]):
    """Rows (gender, zip, disease, bucket) → a bucketized release."""
    df = pd.DataFrame(rows, columns=["gender", "zip", "disease", "b"])
    g, gc = pd.factorize(df["gender"], sort=True)
    z, zc = pd.factorize(df["zip"], sort=True)
    s, sc = pd.factorize(df["disease"], sort=True)
    t = EncodedTable.from_codes(qi_codes=np.stack([g, z], axis=1).astype(np.int32), sa_codes=s.astype(np.int32),
                                qi_names=["gender", "zip"], sa_name="disease",
                                qi_categories=[np.asarray(gc, dtype=object), np.asarray(zc)],
                                sa_categories=np.asarray(sc, dtype=object), qi_kinds=["categorical", "numeric"])
    return build_release(t, Partition.from_labels(df["b"].to_numpy()), model=None, kind="bucketized")


R1 = [("Male", 560012, "Heart disease", 0), ("Male", 560011, "Lung infection", 0),
      ("Female", 560010, "Osteoporosis", 1), ("Female", 560010, "Cervical cancer", 1)]
R2 = [("Female", 560008, "Irritable bowel syndrome", 0), ("Female", 560008, "Lung infection", 0),
      ("Female", 560010, "Cervical cancer", 1), ("Female", 560010, "Amoebic dysentry", 1)]
R3 = [("Female", 560010, "Osteoporosis", 0), ("Female", 560010, "Cervical cancer", 0),
      ("Female", 560008, "Irritable bowel syndrome", 1), ("Female", 560008, "Lung infection", 1)]


@pytest.mark.parametrize("store", ["folder", "reg.sqlite", "reg.duckdb"])
def test_add_list_load_roundtrip(tmp_path, store):
    if store.endswith("duckdb"):
        pytest.importorskip("duckdb")
    path = tmp_path / store
    reg = ReleaseRegistry(path)
    assert reg.list() == []
    assert reg.add(bucketized(R1)) == "release-0001"
    assert reg.add(bucketized(R2), name="hospital-b") == "hospital-b"
    assert reg.names() == ["release-0001", "hospital-b"]
    back = ReleaseRegistry(path, create=False).load("hospital-b")
    assert back.kind == "bucketized" and len(back.data) == 4
    assert back.sa_counts()[0].sum() == 4
    with pytest.raises(ParameterError):
        reg.add(bucketized(R1), name="hospital-b")
    with pytest.raises(ParameterError):
        reg.load("nope")


@pytest.mark.parametrize("store", ["folder", "reg.sqlite"])
def test_audit_refuses_names_people_and_releases(tmp_path, store):
    reg = ReleaseRegistry(tmp_path / store)
    reg.add(bucketized(R1), name="hospital-a")
    ok = audit_registry(reg, bucketized(R3), 2)  # R3 alone with R1: (F,560010) keeps {Osteoporosis, Cervical}
    assert ok.ok and ok.n_below == 0
    with pytest.raises(RiskError) as ei:
        audit_registry(reg, bucketized(R2), 2, new_name="hospital-b")
    msg = str(ei.value)
    assert "hospital-a" in msg and "1 of 2 people" in msg and "l=2" in msg
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rep = audit_registry(reg, bucketized(R2), 2, warn_only=True)
    assert not rep.ok and rep.n_below == 1 and rep.n_disclosed == 1
    assert rep.pairwise == {"hospital-a": 1} and rep.involved == ["hospital-a"]
    assert any(issubclass(x.category, PrivacyLeakWarning) for x in w)


def test_audit_with_explicit_population(tmp_path):
    reg = ReleaseRegistry(tmp_path / "r")
    reg.add(bucketized(R1))
    pop = pd.DataFrame({"gender": ["Female", "Female", "Male"], "zip": ["560010", "560010", "560099"]})
    with pytest.warns(PrivacyLeakWarning):
        rep = audit_registry(reg, bucketized(R2), 2, population=pop, warn_only=True)
    assert rep.n_people == 2 and rep.n_below == 2  # two rows for the same QI, both in the new release
