"""The vectorised privacy models agree with a straightforward row-by-row reference.

Tables are drawn as *rows* — a DataFrame of group labels and SA values whose index is
shuffled and does not run 0..n−1 (pyCANON reads rows by label and gets ℓ wrong on such a
frame). The reference groups the rows with a dict, counts with ``collections.Counter`` and
evaluates each model's definition per group in pure Python, exactly (``fractions``) where the
definition is a rational comparison; the models get counts built with ``np.bincount`` from
factorized codes. Every model's levels and predicate, and ``compute_levels``, must agree.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from openbook.models import (
    AllOf,
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KEAnonymity,
    LEligibility,
    RecursiveCLDiversity,
    SADomain,
    SimpleLDiversity,
    TCloseness,
    compute_levels,
)

TOL = 1e-12


@dataclass(frozen=True)
class Tree:
    ancestor_table: np.ndarray
    height: int


# ---------------------------------------------------------------------------- drawing
@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    n_labels = draw(st.integers(1, 8))
    label = st.sampled_from([f"g{i}" for i in range(n_labels)])
    labels = draw(st.lists(label, min_size=n, max_size=n))
    sa = draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n))
    start = draw(st.integers(-50, 1000))
    index = draw(st.permutations(list(range(start, start + 3 * n, 3))))
    df = pd.DataFrame({"group": labels, "sa": sa}, index=pd.Index(index))
    values = sorted(set(sa))
    sensitive = {v for v in values if draw(st.booleans())}
    # a random tree over the SA values, leaves at uneven depths: internal node ("n", 0) is
    # the root, ("n", i) hangs under an earlier internal node, each value under any of them
    n_internal = draw(st.integers(1, 5))
    parent = {("n", i): ("n", draw(st.integers(0, i - 1))) for i in range(1, n_internal)}
    chain = {}
    for v in values:
        node, path = ("n", draw(st.integers(0, n_internal - 1))), [("leaf", v)]
        while node is not None:
            path.append(node)
            node = parent.get(node)
        chain[v] = path  # leaf, its parent, ..., the root
    clamp = draw(st.booleans())  # how shallow leaves fill their column of the table
    return df, sensitive, chain, clamp


def fractions(max_den=4, low=1, high=8):
    return st.builds(Fraction, st.integers(low, high), st.integers(1, max_den))


# ------------------------------------------------------------------ vectorised side
def encode(df, sensitive, chain, clamp):
    g_codes, _ = pd.factorize(df["group"].to_numpy())
    s_codes, values = pd.factorize(df["sa"].to_numpy())
    m = len(values)
    counts = np.bincount(g_codes * m + s_codes, minlength=(g_codes.max() + 1) * m).reshape(-1, m)
    # the hierarchy as openbook.hierarchy writes it: leaves = SA codes, internal ids >= m
    ids = {("leaf", v): code for code, v in enumerate(values)}
    for v in values:
        for node in chain[v][1:]:
            ids.setdefault(node, len(ids))  # m, m+1, ... (the m leaves come first)
    height = max(len(chain[v]) for v in values) - 1
    table = np.empty((height + 1, m), dtype=np.int64)
    for code, v in enumerate(values):
        col = [ids[node] for node in chain[v]]
        pad = height + 1 - len(col)
        table[:, code] = col + [col[-1]] * pad if clamp else [code] * pad + col
    domain = SADomain.from_codes(
        s_codes,
        np.asarray(values),
        numeric=np.asarray(values, dtype=np.float64),
        hierarchy=Tree(ancestor_table=table, height=height),
        sensitive_sets={"s": np.array([v in sensitive for v in values])},
    )
    return counts, domain


# ------------------------------------------------------------------- reference side
def reference_groups(df):
    groups = defaultdict(list)
    for label, value in zip(df["group"], df["sa"]):
        groups[label].append(value)
    return [Counter(groups[k]) for k in dict.fromkeys(df["group"])]  # first-seen order


def ref_entropy(cnt):
    n = sum(cnt.values())
    return -sum(c / n * math.log(c / n) for c in cnt.values())


def ref_recursive_level(cnt, c):
    r = sorted(cnt.values(), reverse=True)
    level = 0
    for ell in range(1, len(r) + 1):
        if r[0] < c * sum(r[ell - 1 :]):
            level = ell
    return level


def ref_alpha(cnt, sensitive, mode):
    n = sum(cnt.values())
    if sensitive is None:
        return Fraction(max(cnt.values()), n)
    if mode == "total":
        return Fraction(sum(c for v, c in cnt.items() if v in sensitive), n)
    return Fraction(max([c for v, c in cnt.items() if v in sensitive], default=0), n)


def ref_dists(cnt, table):
    n, total = sum(cnt.values()), sum(table.values())
    return {v: Fraction(cnt.get(v, 0), n) - Fraction(table[v], total) for v in table}


def ref_emd_equal(cnt, table):
    return sum(abs(d) for d in ref_dists(cnt, table).values()) / 2


def ref_emd_ordered(cnt, table):
    d = ref_dists(cnt, table)
    vals = sorted(table)
    if len(vals) < 2:
        return Fraction(0)
    run, out = Fraction(0), Fraction(0)
    for v in vals:
        run += d[v]
        out += abs(run)
    return out / (len(vals) - 1)


def ref_emd_hierarchical(cnt, table, chain):
    """Li et al.: Σ over internal nodes N of height(N)/H · min(pos_extra, neg_extra), with
    height(N) the longest path from N down to a leaf and H the root's height."""
    d = ref_dists(cnt, table)
    extra = defaultdict(Fraction)
    children = defaultdict(set)
    height = defaultdict(int)
    for v in table:
        path = chain[v]
        for up, node in enumerate(path):
            extra[node] += d[v]
            height[node] = max(height[node], up)
            if up:
                children[node].add(path[up - 1])
    root_height = max(height.values())
    out = Fraction(0)
    for node, kids in children.items():
        pos = sum(extra[k] for k in kids if extra[k] > 0)
        neg = -sum(extra[k] for k in kids if extra[k] < 0)
        out += Fraction(height[node], root_height) * min(pos, neg)
    return out


def ref_range(cnt):
    return max(cnt) - min(cnt)


# ------------------------------------------------------------------------ the tests
@settings(max_examples=200, deadline=None)
@given(
    data=tables(),
    k=st.integers(1, 6),
    ell=st.integers(1, 5),
    ent_l=st.floats(1.0, 4.0),
    c=fractions(),
    alpha=st.integers(1, 8).flatmap(lambda d: st.integers(1, d).map(lambda n: Fraction(n, d))),
    t=st.integers(0, 20).map(lambda i: i / 20),
    e=st.integers(0, 10),
    mode=st.sampled_from(["each", "total"]),
)
def test_models_agree_with_row_by_row_reference(data, k, ell, ent_l, c, alpha, t, e, mode):
    df, sensitive, chain, clamp = data
    counts, domain = encode(df, sensitive, chain, clamp)
    groups = reference_groups(df)
    table = Counter(df["sa"].tolist())
    sizes = [sum(g.values()) for g in groups]

    def check(model, ref_levels, ref_holds, approx=False):
        got_l = model.group_levels(counts, domain)
        got_h = model.holds(counts, domain)
        if approx:
            assert got_l == pytest.approx([float(x) for x in ref_levels], abs=1e-9)
        else:
            assert got_l.tolist() == [float(x) for x in ref_levels]
        assert got_h.tolist() == list(ref_holds), model

    check(KAnonymity(k=k), sizes, [s >= k for s in sizes])
    distinct = [len(g) for g in groups]
    check(DistinctLDiversity(l=ell), distinct, [d >= ell for d in distinct])
    ent = [ref_entropy(g) for g in groups]
    check(
        EntropyLDiversity(l=ent_l),
        [math.exp(h) for h in ent],
        [h >= math.log(ent_l) - TOL for h in ent],
        approx=True,
    )
    rec = [ref_recursive_level(g, c) for g in groups]
    rec_holds = []
    for g in groups:
        r = sorted(g.values(), reverse=True)
        rec_holds.append(ell <= len(r) and r[0] < c * sum(r[ell - 1 :]))
    check(RecursiveCLDiversity(c=float(c), l=ell), rec, rec_holds)
    for s, md in ((None, "each"), ("s", mode)):
        sens = None if s is None else sensitive
        a = [ref_alpha(g, sens, md) for g in groups]
        check(
            AlphaKAnonymity(alpha=float(alpha), k=k, sensitive_set=s, set_mode=md),
            a,
            [x <= alpha and n >= k for x, n in zip(a, sizes)],
            approx=True,
        )
        check(
            SimpleLDiversity(l=ell, sensitive_set=s, set_mode=md),
            a,
            [x * ell <= 1 for x in a],
            approx=True,
        )
    for dist, ref in (
        ("equal", lambda g: ref_emd_equal(g, table)),
        ("ordered", lambda g: ref_emd_ordered(g, table)),
        ("hierarchical", lambda g: ref_emd_hierarchical(g, table, chain)),
    ):
        emd = [ref(g) for g in groups]
        check(TCloseness(t=t, distance=dist), emd, [x <= t + TOL for x in emd], approx=True)
    rng_ = [ref_range(g) for g in groups]
    check(
        KEAnonymity(k=k, e=e),
        rng_,
        [d >= k and r >= e for d, r in zip(distinct, rng_)],
    )
    check(
        LEligibility(l=ell),
        [Fraction(n, max(g.values())) for n, g in zip(sizes, groups)],
        [max(g.values()) * ell <= n for n, g in zip(sizes, groups)],
        approx=True,
    )
    both = AllOf([KAnonymity(k=k), DistinctLDiversity(l=ell)])
    assert both.holds(counts, domain).tolist() == [
        s >= k and d >= ell for s, d in zip(sizes, distinct)
    ]
    # ℓ-eligibility of the whole table, and validate() of simple ℓ-diversity, agree
    whole_ok = max(table.values()) * ell <= len(df)
    assert LEligibility(l=ell).holds(domain.global_counts[None, :], domain).tolist() == [whole_ok]


@settings(max_examples=200, deadline=None)
@given(data=tables(), c=fractions())
def test_compute_levels_agrees_with_reference(data, c):
    df, sensitive, chain, clamp = data
    counts, domain = encode(df, sensitive, chain, clamp)
    groups = reference_groups(df)
    table = Counter(df["sa"].tolist())
    got = compute_levels(counts, domain, c=float(c))
    want = {
        "n_rows": len(df),
        "n_groups": len(groups),
        "eligible_l": len(df) // max(table.values()),
        "k": min(sum(g.values()) for g in groups),
        "distinct_l": min(len(g) for g in groups),
        "entropy_l": min(math.exp(ref_entropy(g)) for g in groups),
        "recursive_l": min(ref_recursive_level(g, c) for g in groups),
        "recursive_c": float(c),
        "alpha": max(ref_alpha(g, None, "each") for g in groups),
        "alpha_s": max(ref_alpha(g, sensitive, "each") for g in groups),
        "alpha_s_total": max(ref_alpha(g, sensitive, "total") for g in groups),
        "t_equal": max(ref_emd_equal(g, table) for g in groups),
        "t_ordered": max(ref_emd_ordered(g, table) for g in groups),
        "t_hierarchical": max(ref_emd_hierarchical(g, table, chain) for g in groups),
        "e": min(ref_range(g) for g in groups),
    }
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(float(value), abs=1e-9), key
