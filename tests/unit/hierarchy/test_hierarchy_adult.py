"""Adult hierarchies: paper 001 Table 12 heights, the "before secondary" node, coverage of
every Adult value, and the shipped ARX variant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openbook.errors import ParameterError
from openbook.hierarchy import (
    ADULT_COLUMNS,
    EDUCATION_BEFORE_SECONDARY,
    PAPER001_HEIGHTS,
    adult_hierarchies,
)

# paper 001 Table 12, "Distinct Values" (after dropping rows with "?"); workclass has 8
# leaves here (Never-worked only occurs in rows dropped for a "?" occupation)
TABLE12_DISTINCT = {
    "workclass": 7, "marital-status": 7, "occupation": 14, "race": 5, "sex": 2,
    "native-country": 41, "salary-class": 2, "education": 16, "age": 74,
}  # fmt: skip


def test_paper001_heights_match_table12():
    hs = adult_hierarchies("paper001")
    assert tuple(hs) == ADULT_COLUMNS
    assert {c: h.height for c, h in hs.items()} == PAPER001_HEIGHTS
    for col, h in hs.items():
        assert h.column == col and h.is_tree and h.uniform_depth and h.label_of(h.root) == "*"
    assert {c: h.n_leaves for c, h in hs.items()} == {**TABLE12_DISTINCT, "workclass": 8, "age": 100}


def test_age_domain():
    age = adult_hierarchies()["age"]
    assert age.leaves.tolist() == list(range(100)) and age.base == 100
    t12 = adult_hierarchies(age_domain=(17, 90))["age"]
    assert t12.base == 74 and t12.height == 4
    assert t12.label_of(t12.generalize(t12.encode([17, 90]), 1)).tolist() == ["[15-19]", "[90-94]"]
    with pytest.raises(ParameterError):
        adult_hierarchies(age_domain=(50, 10))


def test_education_before_secondary_is_one_node():
    edu = adult_hierarchies()["education"]
    codes = edu.encode(list(EDUCATION_BEFORE_SECONDARY))
    node = edu.lca(codes)
    assert set(edu.leaves[edu.leaf_mask(node)]) == set(EDUCATION_BEFORE_SECONDARY)
    assert edu.label_of(node) == "Elementary" and edu.coverage[node] == 4
    # leaves are in educational order
    assert edu.leaves[0] == "Preschool" and edu.leaves[-1] == "Doctorate"


def test_workclass_taxonomy():
    wc = adult_hierarchies()["workclass"]
    lab = lambda values, level: wc.label_of(wc.generalize(wc.encode(values), level)).tolist()  # noqa: E731
    assert lab(["Private", "Self-emp-inc", "State-gov", "Never-worked"], 1) == [
        "Private", "Self-employed", "Government", "Unemployed",
    ]  # fmt: skip
    assert lab(["Private", "Federal-gov", "Without-pay"], 2) == ["Employed", "Employed", "Not-employed"]


def test_native_country_regions():
    nc = adult_hierarchies()["native-country"]
    lab = lambda v, level: nc.label_of(nc.generalize(nc.encode([v]), level))[0]  # noqa: E731
    assert (lab("Holand-Netherlands", 1), lab("Holand-Netherlands", 2)) == ("Western-Europe", "Europe")
    assert lab("Outlying-US(Guam-USVI-etc)", 2) == "America"
    assert lab("Trinadad&Tobago", 1) == "Caribbean"


def _adult_values(adult_dir: Path):
    pd = pytest.importorskip("pandas")
    frames = [
        pd.read_csv(adult_dir / name, header=None, skipinitialspace=True, skiprows=skip, dtype=str)
        for name, skip in (("adult.data", 0), ("adult.test", 1))
    ]
    df = pd.concat(frames, ignore_index=True)
    cols = {0: "age", 1: "workclass", 3: "education", 5: "marital-status", 6: "occupation",
            8: "race", 9: "sex", 13: "native-country", 14: "salary-class"}  # fmt: skip
    df = df[list(cols)].rename(columns=cols)
    df["salary-class"] = df["salary-class"].str.rstrip(".")
    return df


@pytest.mark.parametrize("variant", ["paper001", "arx"])
def test_every_adult_value_encodes(shared_adult_dir, variant):
    df = _adult_values(shared_adult_dir)
    clean = df[~(df == "?").any(axis=1)]
    assert len(clean) == 45_222
    hs = adult_hierarchies(variant)
    for col, h in hs.items():
        values = df[col][df[col] != "?"]
        if col == "age":
            values = values.astype(np.int64).to_numpy()
        codes = h.encode(values.to_numpy() if hasattr(values, "to_numpy") else values)
        assert codes.min() >= 0 and codes.max() < h.n_leaves
    if variant == "paper001":
        got = {c: int(clean[c].nunique()) for c in ADULT_COLUMNS}
        assert got == TABLE12_DISTINCT


def test_arx_variant_from_package_data():
    hs = adult_hierarchies("arx")
    assert tuple(hs) == ADULT_COLUMNS
    assert hs["age"].height == 4 and hs["education"].height == 3 and hs["race"].height == 1
    with pytest.raises(ParameterError, match="variant"):
        adult_hierarchies("nope")
