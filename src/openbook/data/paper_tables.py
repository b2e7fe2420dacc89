"""The worked tables of the five papers in ``shared/papers``, as fixtures.

Each table is a :class:`PaperTable`: the rows exactly as printed (one DataFrame row per
printed row, in the printed order, with a row-id column where the paper names tuples),
the QI and SA column names, the sensitive value set the example uses, the source (paper
file id + table/figure/section) and ``notes``: every number the paper states about the
example (expected credibilities, case counts, ...) so that regression tests elsewhere can
use them.  Where a paper prints a rounded number, ``notes`` holds the printed value and the
exact value side by side (e.g. ``p_t1_x_printed = 0.72``, ``p_t1_x_exact = 8/11``).

Conventions: in the generalized tables of paper 001 (Tables 1, 3, 5, 8-11 (c)/(d)) "the
tuples contain the generalized values of the QID arranged in the same tuple ordering as
the corresponding tuples" of the bad table (§1.1), and the SA column, not reprinted there,
is copied from the bad table.  ``non-sensitive`` is the paper's own label.

Text-extraction problems (also in each table's ``notes["extraction"]``): paper 001's Fig. 1
is lost (only "academic vocational undergrad postgrad" survives) and one row of Table 3(d)
was dropped; paper 003's Tables 1-3 are absent and the N column of Table 7 is garbled
(reconstructed here from Inequality (4)); paper 004's Figure 1 is absent (its counts are
in Example 1's text).

Use :func:`list_paper_tables` and :func:`paper_table`; paper 001's education taxonomy is
:func:`paper001_fig1_taxonomy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import pandas as pd

from openbook.errors import ParameterError

__all__ = ["PaperTable", "list_paper_tables", "paper_table", "paper001_fig1_taxonomy"]

P000 = "000_f7b01894c231df63 (Cormode, Srivastava, Li, Li, VLDB 2010)"
P001 = "001_938cdb7f3aa9a59d (Wong, Fu, Wang, Pei, VLDB 2007)"
P002 = "002_52b9571fd96da473 (Rameshwar, Tandon, (l,delta)-diversity)"
P003 = "003_507fbe67f91b14fe (Wong, Fu, Wang, Xu, Pei, Yu, worst-case distribution knowledge)"
P004 = "004_4e16de1e138e6415 (l-eligibility, D-/R-suppression)"

NS = "non-sensitive"


@dataclass(frozen=True)
class PaperTable:
    """One worked table of a paper (see the module docstring)."""

    name: str
    df: pd.DataFrame
    qi: list[str]
    sa: str | None
    sensitive_values: frozenset[str] | None
    source: str
    notes: dict = field(default_factory=dict)


_REGISTRY: dict[str, Callable[[], PaperTable]] = {}


def _table(fn: Callable[[], PaperTable]) -> Callable[[], PaperTable]:
    _REGISTRY[fn.__name__.lstrip("_")] = fn
    return fn


def _t(name, columns: dict, qi, sa, sensitive, source, /, **notes) -> PaperTable:
    return PaperTable(name, pd.DataFrame(columns), list(qi), sa,
                      None if sensitive is None else frozenset(sensitive), source, notes)


def _qd(name, qid, disease, sensitive, source, sa="disease", **notes) -> PaperTable:
    """A (QID, SA) table of paper 001."""
    assert len(qid) == len(disease), name
    return _t(name, {"qid": qid, sa: disease}, ["qid"], sa, sensitive, source, **notes)


# ------------------------------------------------------------------------------ paper 001

_T1B = ["HIV", "HIV"] + [NS] * 5
_T1_NOTES = dict(l=2, external_table="p001_table2a (worst case) or p001_table2c (superset)")


@_table
def _p001_table1a() -> PaperTable:
    return _qd("p001_table1a", ["q1"] * 2 + ["q2"] * 5, ["HIV", NS, "HIV"] + [NS] * 4, {"HIV"},
               f"{P001}, Table 1(a) 'good table', §1.1", **_T1_NOTES,
               satisfies_2_diversity=True, generalized_by_minimal_algorithm=False,
               credibility_q1=0.5, satisfies_2_confidentiality=True)


@_table
def _p001_table1b() -> PaperTable:
    return _qd("p001_table1b", ["q1"] * 2 + ["q2"] * 5, _T1B, {"HIV"},
               f"{P001}, Table 1(b) 'bad table', §1.1", **_T1_NOTES,
               satisfies_2_diversity=False, q2_max_sensitive_fraction=0.4)


@_table
def _p001_table1c() -> PaperTable:
    return _qd("p001_table1c", ["Q"] * 7, _T1B, {"HIV"},
               f"{P001}, Table 1(c) global recoding of 1(b), §1.1", **_T1_NOTES,
               recoding="global", source_table="p001_table1b", credibility_q1=1.0,
               individuals_revealed=["Andre", "Kim"])


@_table
def _p001_table1d() -> PaperTable:
    return _qd("p001_table1d", ["Q"] * 4 + ["q2"] * 3, _T1B, {"HIV"},
               f"{P001}, Table 1(d) local recoding of 1(b), §1.1", **_T1_NOTES,
               recoding="local", source_table="p001_table1b", credibility_q1=1.0,
               l_deducible_from_release=2, individuals_revealed=["Andre", "Kim"])


_T2_NAMES = ["Andre", "Kim", "Jeremy", "Victoria", "Ellen", "Sally", "Ben"]
_T2_QID = ["q1"] * 2 + ["q2"] * 5


@_table
def _p001_table2a() -> PaperTable:
    return _t("p001_table2a", {"name": _T2_NAMES, "qid": _T2_QID}, ["qid"], None, None,
              f"{P001}, Table 2(a) external table T^e, individual QID (worst case)",
              case="worst", qid_counts={"q1": 2, "q2": 5})


@_table
def _p001_table2b() -> PaperTable:
    return _t("p001_table2b", {"qid": _T2_QID}, ["qid"], None, None,
              f"{P001}, Table 2(b) external table T^e, multiset of QIDs",
              case="worst", qid_counts={"q1": 2, "q2": 5})


@_table
def _p001_table2c() -> PaperTable:
    return _t("p001_table2c", {"name": _T2_NAMES + ["Tim", "Joseph"], "qid": _T2_QID + ["q4"] * 2},
              ["qid"], None, None,
              f"{P001}, Table 2(c) external table T^e, individual QID (superset case)",
              case="superset", qid_counts={"q1": 2, "q2": 5, "q4": 2},
              q4_generalizes_to_Q=False)


@_table
def _p001_table2d() -> PaperTable:
    return _t("p001_table2d", {"qid": _T2_QID + ["q4"] * 2}, ["qid"], None, None,
              f"{P001}, Table 2(d) external table T^e, multiset of QIDs (superset case)",
              case="superset", qid_counts={"q1": 2, "q2": 5, "q4": 2})


_T3_QID = ["q1"] * 2 + ["q2"] * 5 + ["q4"] * 2
_T3_ALL = {"HIV", "Lung Cancer", "Gallstones", "Ulcer", "Alzheimer", "Diabetes"}
_T3B = ["HIV", "HIV", "Gallstones", "Lung Cancer", "Ulcer", "Alzheimer", "Diabetes", "Ulcer",
        "Alzheimer"]
_T3_NOTES = dict(l=2, all_values_sensitive=True, external_table="p001_table2c")


@_table
def _p001_table3a() -> PaperTable:
    return _qd("p001_table3a", _T3_QID, ["HIV", "Lung Cancer", "Gallstones", "HIV", "Ulcer",
                                         "Alzheimer", "Diabetes", "Ulcer", "Alzheimer"],
               _T3_ALL, f"{P001}, Table 3(a) 'good table', §1.1", **_T3_NOTES,
               satisfies_2_diversity=True)


@_table
def _p001_table3b() -> PaperTable:
    return _qd("p001_table3b", _T3_QID, _T3B, _T3_ALL, f"{P001}, Table 3(b) 'bad table', §1.1",
               **_T3_NOTES, satisfies_2_diversity=False)


@_table
def _p001_table3c() -> PaperTable:
    return _qd("p001_table3c", ["Q"] * 7 + ["q4"] * 2, _T3B, _T3_ALL,
               f"{P001}, Table 3(c) global recoding of 3(b), §1.1", **_T3_NOTES,
               recoding="global", source_table="p001_table3b", credibility_q1_HIV=1.0,
               individuals_revealed=["Andre", "Kim"])


@_table
def _p001_table3d() -> PaperTable:
    return _qd("p001_table3d", ["Q"] * 4 + ["q2"] * 3 + ["q4"] * 2, _T3B, _T3_ALL,
               f"{P001}, Table 3(d) local recoding of 3(b), §1.1", **_T3_NOTES,
               recoding="local", source_table="p001_table3b", credibility_q1_HIV=1.0,
               extraction="one of the three q2 rows is missing from the text extraction; "
                          "restored so that the table has the 9 tuples of Table 3(b)")


_T4_QID = ["q1"] * 2 + ["q2"] * 2 + ["q3"] * 10
_T4_SA = ["HIV", "HIV", "HIV", NS, "HIV", "HIV"] + [NS] * 8
_T4_NOTES = dict(l=2, class_sizes={"q1": 2, "q2": 2, "q3": 10}, n_sensitive=5,
                 credibility_q1_printed=0.616, credibility_q1_exact=Fraction(53, 86),
                 total_cases=430)


@_table
def _p001_table4() -> PaperTable:
    return _qd("p001_table4", _T4_QID, _T4_SA, {"HIV"},
               f"{P001}, Table 4 (violates 2-diversity), §3-4.1", **_T4_NOTES,
               satisfies_2_diversity=False,
               extraction="the paper prints q3's non-sensitive rows as '... ...'; q3 has 10 "
                          "tuples (§4.1), so 8 are non-sensitive")


@_table
def _p001_table5() -> PaperTable:
    return _qd("p001_table5", ["Q"] * 14, _T4_SA, {"HIV"},
               f"{P001}, Table 5 (2-diverse global recoding of Table 4), §4.1", **_T4_NOTES,
               recoding="global", source_table="p001_table4", violates_2_confidentiality=True)


@_table
def _p001_table6() -> PaperTable:
    return _t("p001_table6", {"scenario": list("abcde"), "q1": [2, 2, 2, 1, 0],
                              "q2": [0, 1, 2, 2, 2], "q3": [3, 2, 1, 2, 3],
                              "total_cases": [120, 90, 10, 90, 120]}, [], None, None,
              f"{P001}, Table 6 (sensitive tuple distribution table of Table 5), §4.1",
              total_cases=430, case1_cases=220, case1_prob_printed=0.5116,
              case2_cases=90, case2_prob_printed=0.2093, credibility_q1_printed=0.616,
              credibility_q1_exact=Fraction(265, 430),
              sec4_3_example={"q1_size": 4, "q2_size": 2, "n_sensitive": 3, "l": 2,
                              "excluded": {"q1": 2, "q2": 1}, "max_credibility_le": 0.5})


_T7_SA = ["HIV", "HIV", NS, NS, "HIV"] + [NS] * 7 + ["HIV"]
_T78_NOTES = dict(l=2, te_counts={"q1": 5, "q2": 8}, n_sensitive=4, generalizable_to_Q=["q1", "q2"])


@_table
def _p001_table7() -> PaperTable:
    return _qd("p001_table7", ["q1"] * 5 + ["q2"] * 8, _T7_SA, {"HIV"},
               f"{P001}, Table 7 (violates 2-diversity), §4.2", **_T78_NOTES,
               q1_sensitive_fraction=0.6,
               extraction="q2's non-sensitive rows are printed as '... ...'; q2 has 8 tuples "
                          "(§4.2) and there are 4 sensitive tuples, so 7 are non-sensitive")


@_table
def _p001_table8() -> PaperTable:
    return _qd("p001_table8", ["q1"] * 4 + ["Q"] * 2 + ["q2"] * 7, _T7_SA, {"HIV"},
               f"{P001}, Table 8 (2-diverse local recoding of Table 7), §4.2", **_T78_NOTES,
               recoding="local", source_table="p001_table7",
               n_i=5, n_i_g=1, n_i_u=4, n_i_u_s=2, prob_case1=0.8, prob_case2=0.2,
               credibility_q1=Fraction(3, 5), violates_2_confidentiality=True,
               rows_generalized=[4, 5],
               extraction="q2's rows printed as '... ...': 7 ungeneralized q2 tuples (6 "
                          "non-sensitive + 1 HIV); the Q rows are tuples 5 (q1, HIV) and 6 "
                          "(q2, non-sensitive) of Table 7")


def _four(n: int, title: str, qid_good, sa_good, qid_bad, sa_bad, local, sensitive, sa, **notes):
    """Tables n(a)-(d) of paper 001 §5: good, bad, global and local recoding of the bad one."""
    out = {}
    for part, qid, values, extra in [
        ("a", qid_good, sa_good, {"satisfies_model": True}),
        ("b", qid_bad, sa_bad, {"satisfies_model": False}),
        ("c", ["Q"] * len(sa_bad), sa_bad, {"recoding": "global"}),
        ("d", local, sa_bad, {"recoding": "local"}),
    ]:
        name = f"p001_table{n}{part}"
        src = f"{P001}, Table {n}({part}) {title}, §5"
        out[name] = (lambda name=name, qid=qid, values=values, src=src, extra=extra:
                     _qd(name, qid, values, sensitive, src, sa=sa, **notes, **extra))
    return out


_REGISTRY.update(_four(
    9, "anonymization for (3,3)-diversity", ["q1"] * 3 + ["q2"] * 4,
    ["Diabetics", "HIV", "Lung Cancer", "HIV", "Ulcer", "Alzhema", "Gallstones"],
    ["q1"] * 3 + ["q2"] * 4,
    ["Diabetics", "HIV", "HIV", "Lung Cancer", "Ulcer", "Alzhema", "Gallstones"],
    ["Q"] * 4 + ["q2"] * 3, {"Diabetics", "HIV", "Lung Cancer", "Ulcer", "Alzhema", "Gallstones"},
    "disease", model="recursive (c,l)-diversity", c=3, l=3,
    spelling="'Diabetics' and 'Alzhema' are the paper's spellings",
    adversary_deduces="q1 contains two HIV values"))
_REGISTRY.update(_four(
    10, "0.2-closeness anonymization", ["q1"] * 2 + ["q2"] * 4, ["HIV", NS, NS, NS, "HIV", "HIV"],
    ["q1"] * 2 + ["q2"] * 4, ["HIV", "HIV", NS, NS, NS, "HIV"], ["Q"] * 3 + ["q2"] * 3, {"HIV"},
    "disease", model="t-closeness", t=0.2, distance="D[P,Q] = 1/2 sum |p_i - q_i|",
    adversary_deduces="both q1 tuples are sensitive", credibility_q1=1.0))
_REGISTRY.update(_four(
    11, "(k,e)-anonymity for k = 2 and e = 5k", ["q1"] * 2 + ["q2"] * 3,
    ["30k", "20k", "30k", "20k", "40k"], ["q1"] * 2 + ["q2"] * 3,
    ["30k", "30k", "20k", "10k", "40k"], ["Q"] * 3 + ["q2"] * 2, None, "income",
    model="(k,e)-anonymity", k=2, e=5000, sa_numeric_values={"10k": 10000, "20k": 20000,
                                                              "30k": 30000, "40k": 40000},
    adversary_deduces="both q1 tuples have income 30k"))


@_table
def _p001_table12() -> PaperTable:
    return _t("p001_table12", {
        "attribute": ["Age", "Work Class", "Martial Status", "Occupation", "Race", "Sex",
                      "Native Country", "Salary Class", "Education"],
        "distinct_values": [74, 7, 7, 14, 5, 2, 41, 2, 16],
        "generalizations": ["5-, 10-, 20-year ranges"] + ["Taxonomy Tree"] * 4 + ["Suppression",
                            "Taxonomy Tree", "Suppression", "Taxonomy Tree"],
        "height": [4, 3, 3, 2, 2, 1, 3, 1, 4]}, [], None, None,
        f"{P001}, Table 12 (description of the Adult data set), §7",
        spelling="'Martial Status' is the paper's spelling", n_tuples=45222,
        default_qi="first eight attributes", default_sa="Education",
        sensitive_values=["1st-4th", "5th-6th", "7th-8th"],
        sensitive_values_note="'all values representing the education levels before "
                              "secondary (or 9th-10th) such as 1st-4th, 5th-6th and 7th-8th'",
        n_sensitive_tuples=1566, avg_credibility_problematic_fig2d=0.9,
        attack_seconds={"m=2": 173, "m=10": 239})


@_table
def _p001_sec71_case1() -> PaperTable:
    return _t("p001_sec71_case1", {
        "tuple": [1, 2, 3], "age": [80, 80, 80],
        "workclass": ["self-emp-not-inc", "private", "private"],
        "marital_status": ["married-spouse-absent"] * 3,
        "education": ["7th-8th", "HS-grad", "HS-grad"]},
        ["age", "workclass", "marital_status"], "education", {"1st-4th", "5th-6th", "7th-8th"},
        f"{P001}, §7.1 uncovered case (QID age, workclass, martial status; SA Education)",
        m=2, generalized_tuples=[1, 2], generalized_workclass="with-pay",
        credibility_tuple1=1.0,
        case2={"age": 33, "tuples": {"self-emp-not-inc": 1, "private": 17},
               "marital_status": "married-spouse-absent", "generalized_tuples": [1, 2],
               "generalized_workclass": "with-pay", "revealed_education": "1st-4th",
               "credibility_tuple1": 1.0})


def paper001_fig1_taxonomy() -> dict[str, str | None]:
    """Paper 001 Fig. 1, the generalization taxonomy of "Education", as child -> parent
    (the root ``ANY`` maps to ``None``).

    The figure is lost in the text extraction; only the row "academic vocational undergrad
    postgrad" survives.  Stated in the text (and guaranteed here): coverage["university"] = 2
    (undergrad, postgrad), base = 9 ground values, "elementary" covers exactly {1st-4th,
    5th-6th, 7th-8th}, "1st-4th", "undergrad", "vocational" are ground values, 9th-10th is
    the first "secondary" value.  Reconstructed (not in the text): the node name
    ``college`` over academic/vocational and the ground value ``11th-12th`` under
    ``secondary`` — chosen to match ``openbook.hierarchy.adult`` ("college: academic,
    vocational").
    """
    tree: dict[str, str | None] = {"ANY": None}
    for parent, children in {
        "elementary": ["1st-4th", "5th-6th", "7th-8th"],
        "secondary": ["9th-10th", "11th-12th"],
        "college": ["academic", "vocational"],
        "university": ["undergrad", "postgrad"],
    }.items():
        tree[parent] = "ANY"
        tree.update({child: parent for child in children})
    return tree


# ------------------------------------------------------------------------------ paper 000


@_table
def _p000_fig6a_gg() -> PaperTable:
    return _t("p000_fig6a_gg", {"qi": list("abcd"),
                                "sa": ["Negative", "Negative", "Positive", "Positive"]},
              ["qi"], "sa", {"Positive"},
              f"{P000}, App. B, Figure 6(a) 'Example for GG algorithm'",
              algorithm="GG", l=2, diversity="binary", bucket_size=2,
              buckets=[["a", "b"], ["c", "d"]], group_published_as="one group of 4",
              rows_note="the QI and SA columns of one published group (prior to recoding); "
                        "the pairing within a row is not the original mapping",
              posterior_positive={"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0},
              baseline_posterior_positive=0.5, gg_p_b1_m2="2/l",
              anatomy_groups=2)


@_table
def _p000_fig6b_mondrian() -> PaperTable:
    return _t("p000_fig6b_mondrian", {"qi": list("abcccd"),
                                      "sa": ["Negative"] * 4 + ["Positive"] * 2},
              ["qi"], "sa", {"Positive"},
              f"{P000}, App. B, Figure 6(b) 'Example for Mondrian'",
              algorithm="Mondrian (strict partitioning)", l=2, diversity="binary",
              median="c", rejected_split=[["a", "b"], ["c", "c", "c", "d"]],
              rows_note="the QI and SA columns of one published group (prior to recoding)",
              posterior_positive={"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0},
              baseline_posterior_positive=Fraction(1, 3), anatomy_groups=3)


@_table
def _p000_fig1_even_split() -> PaperTable:
    return _t("p000_fig1_even_split", {"group": list(range(1, 7)), "size": [6, 7, 14, 9, 9, 9]},
              [], None, None, f"{P000}, §3.2, Figure 1 'Example even-split partitioning'",
              root_size=54, top_split=[27, 27], output_group_sizes=[6, 7, 14, 9, 9, 9],
              extraction="Figure 1 is a graphic; only the sizes stated in §3.2 survive "
                         "(54 = 27 + 27; output groups 6, 7, 14, 9, 9, 9)",
              inferred_tree={"54": ["27a", "27b"], "27a": ["13", "14"], "13": ["6", "7"],
                             "27b": ["9", "9", "9"]},
              theorem5_bound="1/(l - 2/3) (C.2; printed 1/(l - 2/l) in §3.2)")


@_table
def _p000_table1() -> PaperTable:
    return _t("p000_table1", {
        "attribute": ["Age", "Workclass", "Education", "Marital_Status", "Race", "Gender",
                      "Occupation"],
        "type": ["Numeric"] + ["Categorical"] * 5 + ["Sensitive"],
        "n_values": [74, 8, 16, 7, 5, 2, 14]}, [], None, None,
        f"{P000}, Table 1 (description of the Adult dataset), §5",
        n_tuples=45222, sa="Occupation", sensitive_values=["Tech-Support", "Craft-Repair"],
        spelling="the paper writes Tech-Support / Craft-Repair (Adult: Tech-support, "
                 "Craft-repair)",
        fig3b_max_risk_l6={"Tech-Support": 2.52, "Craft-Repair": 2.70},
        rgg_p_values=[0.0, 0.2, 0.4, 0.6, 0.65], rgg_l=6,
        rgg_p06_craft_repair_max_risk=1.37, rgg_p065_max_risk=1.0, n_queries=1000)


# ------------------------------------------------------------------------------ paper 002

_MALE = "(Male, 560012) or (Male, 560011)"
_FEMALE = "(Female, 560010)"
_P002_CLASSES = {_MALE: [("Male", "560012"), ("Male", "560011")], _FEMALE: [("Female", "560010")],
                 "(Female, 560008)": [("Female", "560008")]}


@_table
def _p002_table1a() -> PaperTable:
    return _t("p002_table1a", {
        "gender": ["Male", "Male", "Female", "Female", "Female"],
        "postal_code": ["560012", "560011", "560010", "560010", "560010"],
        "disease": ["Heart disease", "Lung infection", "Osteoporosis", "Cervical cancer",
                    "Osteoporosis"]}, ["gender", "postal_code"], "disease", None,
        f"{P002}, Table 1(a) raw dataset, §1")


@_table
def _p002_table1b() -> PaperTable:
    return _t("p002_table1b", {
        "eq_class": [_MALE] * 2 + [_FEMALE] * 3,
        "disease": ["Heart disease", "Lung infection", "Osteoporosis", "Osteoporosis",
                    "Cervical cancer"]}, ["eq_class"], "disease", None,
        f"{P002}, Table 1(b) anonymized dataset (generalization), §1",
        k=2, l=2, eq_class_members=_P002_CLASSES)


@_table
def _p002_table2() -> PaperTable:
    return _t("p002_table2", {
        "release": ["D1"] * 4 + ["D2"] * 4,
        "eq_class": [_MALE, _MALE, _FEMALE, _FEMALE, "(Female, 560008)", "(Female, 560008)",
                     _FEMALE, _FEMALE],
        "disease": ["Heart disease", "Lung infection", "Osteoporosis", "Cervical cancer",
                    "Irritable bowel syndrome", "Lung infection", "Cervical cancer",
                    "Amoebic dysentry"]}, ["eq_class"], "disease", None,
        f"{P002}, Table 2 (anonymized datasets D1, D2 linked on (Female, 560010)), §1",
        l_each=2, target_qi=("Female", "560010"), linkage={"Cervical cancer": 1},
        revealed="Cervical cancer", l_post_linkage=1, eq_class_members=_P002_CLASSES,
        spelling="'Amoebic dysentry' is the paper's spelling",
        note="D1's (Female, 560010) class lists 2 diseases here but 3 rows in Table 1(b); "
             "transcribed as printed (paper 002 uses distinct l-diversity, Def. 2.1)")


# ------------------------------------------------------------------------------ paper 003

_P003_EXTRACTION = "Tables 1-3 (T, voter list, bucketized T*) are absent from the text extraction"


@_table
def _p003_table3_L1() -> PaperTable:
    return _t("p003_table3_L1", {"tuple": ["t1", "t2"], "name": ["Alex", "Bob"],
                                 "nationality": ["American", "Japanese"], "gid": ["L1", "L1"],
                                 "disease": ["Heart Disease", "Flu"]},
              ["nationality"], "disease", {"Heart Disease"},
              f"{P003}, A-group L1 of Table 3, Examples 1-2 and §4.1",
              extraction=_P003_EXTRACTION + "; only A-group L1 is recoverable from the text "
                         "(Zipcode values unknown); 'disease' is L1's sensitive table, "
                         "not a published pairing",
              l=2, group_size=2, f1=0.1, f2=0.003, delta_1=0.0, delta_2=0.097, delta=0.097,
              naive_probability=0.5)


@_table
def _p003_table4() -> PaperTable:
    return _t("p003_table4", {"nationality": ["American", "Japanese", "French"],
                              "Heart Disease": [0.1, 0.003, 0.05],
                              "Not Heart Disease": [0.9, 0.997, 0.95]},
              ["nationality"], None, {"Heart Disease"},
              f"{P003}, Table 4 (QI based distribution of attribute Nationality), Example 2",
              distribution={"American": {"Heart Disease": 0.1, "Not Heart Disease": 0.9},
                            "Japanese": {"Heart Disease": 0.003, "Not Heart Disease": 0.997},
                            "French": {"Heart Disease": 0.05, "Not Heart Disease": 0.95}},
              example3={"n_individuals": 100000, "n_heart_disease": 6000,
                        "dataset_based_probability": 0.06, "japanese_flu": 0.21})


_P003_DIST = {"s1": {"x": 0.5, "y": 0.5}, "s2": {"x": 0.2, "y": 0.8}}


@_table
def _p003_table5a() -> PaperTable:
    return _t("p003_table5a", {"signature": ["s1", "s2"], "x": [0.5, 0.2], "y": [0.5, 0.8]},
              ["signature"], None, None,
              f"{P003}, Table 5(a) conditional distribution, Example 4", distribution=_P003_DIST)


@_table
def _p003_table5() -> PaperTable:
    return _t("p003_table5", {"tuple": ["t1", "t2", "t3", "t4"],
                              "signature": ["s1", "s1", "s2", "s2"], "X": ["x", "x", "y", "y"]},
              ["signature"], "X", {"x"}, f"{P003}, Example 4 A-group L_k with Table 5",
              l=2, distribution=_P003_DIST, n_possible_worlds=6,
              p_w=[0.16, 0.04, 0.04, 0.04, 0.04, 0.01], sum_p_w=0.33,
              p_w1_given_L_printed=0.48, p_w1_given_L_exact=Fraction(16, 33),
              p_t1_x_printed=0.72, p_t1_x_exact=Fraction(8, 11),
              rows_note="X lists the A-group's multiset of sensitive values, not a pairing")


@_table
def _p003_table5b() -> PaperTable:
    return _t("p003_table5b", {
        "w": [f"w{i}" for i in range(1, 7)],
        "t1": list("xxxyyy"), "t2": list("xyyxxy"), "t3": list("yxyxyx"), "t4": list("yyxyxx"),
        "p_w": [0.16, 0.04, 0.04, 0.04, 0.04, 0.01],
        "p_w_given_L": [0.48, 0.12, 0.12, 0.12, 0.12, 0.03]}, [], None, None,
        f"{P003}, Table 5(b) possible worlds p(w) and p(w|L_k), Example 4",
        p_w_given_L_note="printed values (rounded); exact = p_w / 0.33",
        sum_p_w=0.33, worlds_with_t1_x=["w1", "w2", "w3"])


@_table
def _p003_table7() -> PaperTable:
    return _t("p003_table7", {"N": [3, 3, 3, 3, 4, 6, 6, 6], "r": [2, 2, 2, 2, 2, 2, 3, 4],
                              "f_max": [0.1, 0.3, 0.5, 0.9, 0.3, 0.3, 0.3, 0.3],
                              "delta_max": [0.0474, 0.1235, 0.1667, 0.0818, 0.1750, 0.2211,
                                            0.1537, 0.0955]}, [], None, None,
              f"{P003}, Table 7 (values of Delta_max), §4.1",
              formula="(N - r) f / (f (r - 1) / (1 - f) + N - 1)",
              extraction="the N column is garbled in the text extraction; N is reconstructed "
                         "as the unique integer reproducing each printed Delta_max with "
                         "Inequality (4)",
              sec4_1_example={"f": [0.1, 0.08, 0.09], "N": 3, "r": 2, "delta": 0.02,
                              "delta_max": 0.0474, "private": True})


# ------------------------------------------------------------------------------ paper 004


@_table
def _p004_fig1() -> PaperTable:
    sa = ["S1"] * 10 + ["S2"] * 4 + ["S3"] * 2 + ["S4", "S5"]
    return _t("p004_fig1", {"record": [f"r{i}" for i in range(1, 19)], "sa": sa}, [], "sa",
              {"S1", "S2", "S3", "S4", "S5"},
              f"{P004}, Figure 1 base table T (Examples 1-5, §1.2-4.2)",
              extraction="Figure 1 is absent from the text; its counts are stated in Example 1",
              counts={"S1": 10, "S2": 4, "S3": 2, "S4": 1, "S5": 1}, l=3, n=18,
              eligibility_bound=6, violates_l_eligibility=True,
              min_suppression=6, min_suppression_tp={"S1": 4, "S2": 4, "S3": 2, "S4": 1, "S5": 1},
              d_suppression_after_6={"level": 4, "top": ["S1", "S2"], "next": ["S2", "S1"]},
              l_candidacy_counterexample={"F_l_prime": 2, "TS": 6, "bound": 6},
              unsafe_d={"suppressed": 6, "level": 4, "l_candidacy_first_after": 5,
                        "p_eligibility_first_after": 6},
              safe_d={"suppressed": 10, "level": 2, "suppressed_by_value": {"S1": 8, "S2": 2}},
              r_suppression_example4={"h": 2, "F": 3, "interval": [2, 4],
                                      "tp_after_step1": [4, 3, 2, 1, 1],
                                      "tp_final": [3, 3, 2, 1, 1], "suppressed": 8},
              example5={"suppressed": 8, "candidates": ["S1'", "S2'", "S3'"],
                        "posterior": Fraction(1, 3),
                        "plausible_base_tables": [[11, 3, 2, 1, 1], [3, 11, 2, 1, 1],
                                                  [3, 3, 10, 1, 1]],
                        "plausible_base_tables_note": "frequencies of S1'..S5'; the first and "
                        "third are printed, the second ('all 8 suppressed records have S2'') "
                        "is stated in words",
                        "h1_levels": [3, 11]},
              sec6={"adult_rows": 30162, "adult_sa": "Occupation", "adult_top_frequency": 0.134,
                    "zipf_beta": 1000, "zipf_alpha": 1.0, "zipf_l": 5, "zipf_m": 20})


# ------------------------------------------------------------------------------ API


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def list_paper_tables() -> list[str]:
    """Names of all transcribed tables, in paper order (``p000_...`` to ``p004_...``)."""
    return sorted(_REGISTRY, key=_natural)


def paper_table(name: str) -> PaperTable:
    """The table called ``name`` (see :func:`list_paper_tables`), freshly built."""
    try:
        build = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ParameterError(f"unknown paper table {name!r} (known: {', '.join(list_paper_tables())})",
                             parameter="name", value=name) from None
    return build()
