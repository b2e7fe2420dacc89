"""Tests of the papers' worked tables (openbook.data.paper_tables): shapes the papers state,
notes present, and the stated numbers recomputed from the transcribed rows."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb, isclose

import pandas as pd
import pytest

from openbook.data.paper_tables import (
    PaperTable,
    list_paper_tables,
    paper001_fig1_taxonomy,
    paper_table,
)
from openbook.errors import ParameterError

QD = ["qid", "disease"]

#: name -> (rows, columns, notes keys that must be present)
EXPECTED = {
    "p000_fig6a_gg": (4, ["qi", "sa"], ["l", "posterior_positive", "buckets"]),
    "p000_fig6b_mondrian": (6, ["qi", "sa"], ["l", "posterior_positive", "rejected_split"]),
    "p000_fig1_even_split": (6, ["group", "size"], ["root_size", "top_split"]),
    "p000_table1": (7, ["attribute", "type", "n_values"], ["sensitive_values", "n_tuples"]),
    "p001_table1a": (7, QD, ["credibility_q1"]),
    "p001_table1b": (7, QD, ["l"]),
    "p001_table1c": (7, QD, ["credibility_q1"]),
    "p001_table1d": (7, QD, ["credibility_q1", "l_deducible_from_release"]),
    "p001_table2a": (7, ["name", "qid"], ["qid_counts"]),
    "p001_table2b": (7, ["qid"], ["qid_counts"]),
    "p001_table2c": (9, ["name", "qid"], ["qid_counts"]),
    "p001_table2d": (9, ["qid"], ["qid_counts"]),
    "p001_table3a": (9, QD, ["l"]),
    "p001_table3b": (9, QD, ["l"]),
    "p001_table3c": (9, QD, ["credibility_q1_HIV"]),
    "p001_table3d": (9, QD, ["credibility_q1_HIV", "extraction"]),
    "p001_table4": (14, QD, ["credibility_q1_printed", "credibility_q1_exact", "class_sizes"]),
    "p001_table5": (14, QD, ["credibility_q1_printed", "total_cases"]),
    "p001_table6": (5, ["scenario", "q1", "q2", "q3", "total_cases"],
                    ["total_cases", "case1_prob_printed", "case2_prob_printed"]),
    "p001_table7": (13, QD, ["te_counts"]),
    "p001_table8": (13, QD, ["credibility_q1", "n_i", "n_i_g", "n_i_u", "n_i_u_s"]),
    "p001_table12": (9, ["attribute", "distinct_values", "generalizations", "height"],
                     ["n_sensitive_tuples"]),
    "p001_sec71_case1": (3, ["tuple", "age", "workclass", "marital_status", "education"],
                         ["credibility_tuple1", "case2"]),
    "p002_table1a": (5, ["gender", "postal_code", "disease"], []),
    "p002_table1b": (5, ["eq_class", "disease"], ["eq_class_members"]),
    "p002_table2": (8, ["release", "eq_class", "disease"], ["linkage", "l_post_linkage"]),
    "p003_table3_L1": (2, ["tuple", "name", "nationality", "gid", "disease"],
                       ["extraction", "delta"]),
    "p003_table4": (3, ["nationality", "Heart Disease", "Not Heart Disease"], ["distribution"]),
    "p003_table5": (4, ["tuple", "signature", "X"], ["p_t1_x_printed", "p_t1_x_exact"]),
    "p003_table5a": (2, ["signature", "x", "y"], ["distribution"]),
    "p003_table5b": (6, ["w", "t1", "t2", "t3", "t4", "p_w", "p_w_given_L"], ["sum_p_w"]),
    "p003_table7": (8, ["N", "r", "f_max", "delta_max"], ["extraction", "sec4_1_example"]),
    "p004_fig1": (18, ["record", "sa"], ["counts", "safe_d", "unsafe_d",
                                         "r_suppression_example4", "example5"]),
}
for _n, _rows in [(9, 7), (10, 6), (11, 5)]:
    for _part in "abcd":
        EXPECTED[f"p001_table{_n}{_part}"] = (_rows, ["qid", "income" if _n == 11 else "disease"],
                                               ["model"])


def test_every_table_is_listed_and_checked():
    names = list_paper_tables()
    assert len(names) == len(set(names))
    assert set(names) == set(EXPECTED)
    assert names.index("p001_table2a") < names.index("p001_table10a")  # natural order


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shape_columns_and_notes(name):
    rows, columns, notes = EXPECTED[name]
    t = paper_table(name)
    assert isinstance(t, PaperTable) and t.name == name
    assert len(t.df) == rows
    assert list(t.df.columns) == columns
    assert set(t.qi) <= set(t.df.columns)
    assert t.sa is None or t.sa in t.df.columns
    assert t.source.startswith(name[1:4] + "_")
    for key in notes:
        assert key in t.notes, key
    if t.sensitive_values is not None and t.sa is not None:
        assert t.sensitive_values & set(t.df[t.sa])


def test_tables_are_fresh_copies():
    a = paper_table("p001_table4")
    a.df.loc[0, "disease"] = "changed"
    assert paper_table("p001_table4").df.loc[0, "disease"] == "HIV"


def test_unknown_table():
    with pytest.raises(ParameterError) as err:
        paper_table("p009_table1")
    assert err.value.parameter == "name"


# --- paper 001 -----------------------------------------------------------------------


def _counts(t: PaperTable) -> dict:
    return t.df.groupby("qid")[t.sa].apply(lambda s: s.isin(t.sensitive_values).sum()).to_dict()


def test_p001_table1_and_2():
    assert _counts(paper_table("p001_table1a")) == {"q1": 1, "q2": 1}
    assert _counts(paper_table("p001_table1b")) == {"q1": 2, "q2": 0}
    for part in "cd":
        t = paper_table(f"p001_table1{part}")
        assert list(t.df["disease"]) == list(paper_table("p001_table1b").df["disease"])
    assert list(paper_table("p001_table1d").df["qid"]) == ["Q"] * 4 + ["q2"] * 3
    te = paper_table("p001_table2c").df
    assert list(te["name"][-2:]) == ["Tim", "Joseph"] and set(te["qid"][-2:]) == {"q4"}


def test_p001_table4_6_credibility_recomputed():
    """Table 6's case counts and the credibility 0.616 from Table 4's rows (§4.1)."""
    t4 = paper_table("p001_table4")
    sizes = t4.df["qid"].value_counts().sort_index().tolist()
    assert sizes == [2, 2, 10]
    n_s = int(t4.df["disease"].isin(t4.sensitive_values).sum())
    assert n_s == t4.notes["n_sensitive"] == 5
    cases = {}
    for j in itertools.product(*(range(n + 1) for n in sizes)):
        violates = [ji > n // 2 for ji, n in zip(j, sizes)]
        if sum(j) == n_s and (violates[0] or violates[1]):
            cases[j] = comb(sizes[0], j[0]) * comb(sizes[1], j[1]) * comb(sizes[2], j[2])
    t6 = paper_table("p001_table6").df
    assert cases == {(a, b, c): n for a, b, c, n in
                     zip(t6["q1"], t6["q2"], t6["q3"], t6["total_cases"])}
    total = sum(cases.values())
    assert total == 430
    cred = sum(Fraction(n * j[0], sizes[0]) for j, n in cases.items()) / total
    assert cred == t4.notes["credibility_q1_exact"]
    assert round(float(cred), 3) == t4.notes["credibility_q1_printed"] == 0.616
    assert round(220 / 430, 4) == paper_table("p001_table6").notes["case1_prob_printed"]


def test_p001_table8_credibility_recomputed():
    """Local recoding credibility 3/5 (§4.2) from the rows of Tables 7 and 8."""
    t7, t8 = paper_table("p001_table7"), paper_table("p001_table8")
    assert t7.df["qid"].value_counts().to_dict() == t7.notes["te_counts"]
    assert list(t7.df["disease"]) == list(t8.df["disease"])
    q1 = t8.df[t8.df["qid"] == "q1"]
    n_i = t7.notes["te_counts"]["q1"]
    n_iu, n_ius = len(q1), int(q1["disease"].isin(t8.sensitive_values).sum())
    n_ig = n_i - n_iu
    assert (n_i, n_ig, n_iu, n_ius) == (t8.notes["n_i"], t8.notes["n_i_g"], t8.notes["n_i_u"],
                                        t8.notes["n_i_u_s"])
    cred = Fraction(n_ig, n_i) * 1 + Fraction(n_iu, n_i) * Fraction(n_ius, n_iu)
    assert cred == t8.notes["credibility_q1"] == Fraction(3, 5)


def test_p001_section5_tables_violate_only_in_b():
    t = paper_table("p001_table10b")
    q1 = t.df[t.df["qid"] == "q1"]["disease"]
    assert (q1 == "HIV").all()
    t = paper_table("p001_table11b")
    assert list(t.df[t.df["qid"] == "q1"]["income"]) == ["30k", "30k"]
    assert list(paper_table("p001_table9d").df["qid"]) == ["Q"] * 4 + ["q2"] * 3


def test_p001_fig1_taxonomy():
    tree = paper001_fig1_taxonomy()
    children: dict = {}
    for child, parent in tree.items():
        children.setdefault(parent, []).append(child)
    leaves = [v for v in tree if v not in children]

    def coverage(node):
        kids = children.get(node)
        return 1 if not kids else sum(coverage(k) for k in kids)

    assert coverage("university") == 2 and len(leaves) == coverage("ANY") == 9
    assert sorted(children["elementary"]) == ["1st-4th", "5th-6th", "7th-8th"]
    assert {"1st-4th", "undergrad", "vocational", "academic", "9th-10th"} <= set(leaves)
    assert tree["ANY"] is None and tree["undergrad"] == "university"


# --- paper 000 -----------------------------------------------------------------------


def _posterior(qis, values, feasible):
    """P(qi_i is Positive) over the SA permutations (possible worlds) accepted by feasible."""
    worlds = [w for w in set(itertools.permutations(values)) if feasible(w)]
    return {q: sum(w[i] == "Positive" for w in worlds) / len(worlds) for i, q in enumerate(qis)}


def test_p000_gg_and_mondrian_examples_recomputed():
    t = paper_table("p000_fig6a_gg")
    qis, values = list(t.df["qi"]), list(t.df["sa"])

    def gg_formed_one_group(w):  # first bucket {a, b} must fail binary 2-diversity
        return sum(v == "Positive" for v in w[:2]) > 1

    post = _posterior(qis, values, gg_formed_one_group)
    assert post == {q: float(p) for q, p in t.notes["posterior_positive"].items()}

    t = paper_table("p000_fig6b_mondrian")
    qis, values = list(t.df["qi"]), list(t.df["sa"])

    def split_rejected(w):  # {a,b} | {c,c,c,d}: some side has more than half positives
        return any(2 * sum(v == "Positive" for v in side) > len(side) for side in (w[:2], w[2:]))

    post = _posterior(qis, values, split_rejected)
    assert post["a"] == post["b"] == 1.0 and post["c"] == post["d"] == 0.0
    assert t.notes["baseline_posterior_positive"] == Fraction(2, 6)


def test_p000_fig1_sizes():
    t = paper_table("p000_fig1_even_split")
    assert t.df["size"].sum() == t.notes["root_size"] == sum(t.notes["top_split"]) == 54


# --- paper 002 -----------------------------------------------------------------------


def test_p002_linkage_recomputed():
    t = paper_table("p002_table2")
    target = t.notes["target_qi"]
    counts = []
    for _, rel in t.df.groupby("release"):
        classes = [c for c in rel["eq_class"].unique()
                   if tuple(target) in map(tuple, t.notes["eq_class_members"][c])]
        assert len(classes) == 1
        counts.append(rel[rel["eq_class"] == classes[0]]["disease"].value_counts())
        assert all(g["disease"].nunique() >= t.notes["l_each"] for _, g in rel.groupby("eq_class"))
    linked = pd.concat(counts, axis=1).fillna(0).min(axis=1)
    assert linked[linked > 0].to_dict() == t.notes["linkage"] == {"Cervical cancer": 1}
    raw = paper_table("p002_table1a").df
    assert raw.groupby(["gender", "postal_code"]).size().to_dict()[("Female", "560010")] == 3


# --- paper 003 -----------------------------------------------------------------------


def test_p003_example4_recomputed():
    t = paper_table("p003_table5")
    dist = {s: {x: Fraction(str(p)) for x, p in d.items()} for s, d in t.notes["distribution"].items()}
    sig = list(t.df["signature"])
    worlds = sorted(set(itertools.permutations(t.df["X"])), reverse=True)
    weight = {}
    for w in worlds:
        p = Fraction(1)
        for s, x in zip(sig, w):
            p *= dist[s][x]
        weight[w] = p
    total = sum(weight.values())
    assert total == Fraction("0.33") and float(total) == t.notes["sum_p_w"]
    p_t1_x = sum(p for w, p in weight.items() if w[0] == "x") / total
    assert p_t1_x == t.notes["p_t1_x_exact"] == Fraction(8, 11)
    assert abs(float(p_t1_x) - t.notes["p_t1_x_printed"]) < 0.01
    t5b = paper_table("p003_table5b").df
    for _, row in t5b.iterrows():
        w = tuple(row[["t1", "t2", "t3", "t4"]])
        assert isclose(float(weight[w]), row["p_w"])
        assert abs(float(weight[w] / total) - row["p_w_given_L"]) < 0.005
    assert sorted(t.notes["p_w"], reverse=True) == sorted(map(float, weight.values()), reverse=True)


def test_p003_table7_recomputed():
    t = paper_table("p003_table7")

    def delta_max(n, r, f):
        return (n - r) * f / (f * (r - 1) / (1 - f) + n - 1)

    for n, r, f, d in t.df.itertuples(index=False):
        assert round(delta_max(n, r, f), 4) == pytest.approx(d, abs=1e-9)
    ex = t.notes["sec4_1_example"]
    assert round(delta_max(ex["N"], ex["r"], max(ex["f"])), 4) == ex["delta_max"]
    l1 = paper_table("p003_table3_L1")
    assert l1.notes["delta"] == pytest.approx(l1.notes["f1"] - l1.notes["f2"])


# --- paper 004 -----------------------------------------------------------------------


def _d_suppression(counts: list[int], l: int, stop) -> tuple[int, list[int]]:
    """D-suppression (Fig. 2): suppress one record of the lowest-ranked value among those
    at the highest level, until stop(tp, suppressed)."""
    tp, x = list(counts), 0
    while not stop(tp, x):
        top = max(tp)
        j = max(i for i, c in enumerate(tp) if c == top)
        tp[j] -= 1
        x += 1
    return x, tp


def test_p004_examples_recomputed():
    t = paper_table("p004_fig1")
    counts = t.df["sa"].value_counts().reindex(["S1", "S2", "S3", "S4", "S5"]).tolist()
    assert dict(zip(["S1", "S2", "S3", "S4", "S5"], counts)) == t.notes["counts"]
    l, n = t.notes["l"], len(t.df)
    assert counts[0] > n / l  # violates 3-eligibility

    def p_eligible(tp, _x):
        return max(tp) * l <= sum(tp)

    def candidacy(tp, x):
        return sorted(tp, reverse=True)[l - 1] + x > n / l

    x, tp = _d_suppression(counts, l, p_eligible)
    assert x == t.notes["min_suppression"] == 6 and max(tp) == 4
    x, _ = _d_suppression(counts, l, candidacy)
    assert x == t.notes["unsafe_d"]["l_candidacy_first_after"]
    x, tp = _d_suppression(counts, l, lambda tp, x: p_eligible(tp, x) and candidacy(tp, x))
    assert (x, max(tp)) == (t.notes["unsafe_d"]["suppressed"], t.notes["unsafe_d"]["level"])
    x, tp = _d_suppression(counts, l, lambda tp, x: sorted(tp, reverse=True)[:l].count(max(tp)) >= l)
    assert (x, max(tp)) == (t.notes["safe_d"]["suppressed"], t.notes["safe_d"]["level"])
    ex = t.notes["r_suppression_example4"]
    step1 = [ex["F"]] + counts[1:]
    x, tp = _d_suppression(step1, l, lambda tp, x: p_eligible(tp, x)
                           and sorted(tp, reverse=True)[l - 1] + x + counts[0] - ex["F"] > n / l)
    assert sorted(tp, reverse=True) == ex["tp_final"]
    assert n - sum(tp) == ex["suppressed"] == t.notes["example5"]["suppressed"]
