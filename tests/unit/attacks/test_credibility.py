"""Exact credibility (paper 001 §4-§5) against brute force: every possible world enumerated
and re-run through a minimality-following algorithm (global recoding) or checked against
the minimality principle (local recoding), on >= 1,000 random small tables.

The global-recoding algorithm re-run on every world is the *per-block minimal recoding*:
one QI with a two-level taxonomy (leaf -> block -> *); a block is published as its leaves
when every leaf QID-EC satisfies R, else generalized to the block (global recoding: all
occurrences of the block's values become the block). It follows Definition 3 exactly, and
its acceptance condition is Lemma 1. The local-recoding worlds choose which individuals of
each QID-EC were generalized and the SA assignment inside every published class; a world
is kept when restoring the generalized class's tuples to their QID-ECs breaks R (§4.2).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from openbook.attacks.credibility import (
    class_credibility,
    class_posterior_multi,
    global_credibility,
    local_credibility,
    minimality_attack,
    sensitive_tuple_distribution,
    simple_l_sat,
)
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.hierarchy.builders import from_mapping
from openbook.models.base import SADomain
from openbook.models.registry import make_model
from openbook.release import Partition, build_release

TOL = 1e-12


# ---------------------------------------------------------------------------------------
# brute-force helpers
# ---------------------------------------------------------------------------------------
def _subset_worlds(n: int, s: int) -> np.ndarray:
    """All 0/1 vectors of length n with s ones (one world of a class per row)."""
    out = np.zeros((math.comb(n, s), n), dtype=np.int64)
    for r, c in enumerate(itertools.combinations(range(n), s)):
        out[r, list(c)] = 1
    return out


def _product_worlds(blocks: list[np.ndarray]) -> np.ndarray:
    """Cartesian product of per-class world matrices (columns concatenated)."""
    out = blocks[0]
    for b in blocks[1:]:
        out = np.concatenate([np.repeat(out, len(b), axis=0), np.tile(b, (len(out), 1))], axis=1)
    return out


def _violates(cnt: np.ndarray, size: np.ndarray, l: int) -> np.ndarray:
    return cnt * l > size


def _per_block_algorithm(world: np.ndarray, leaf_of_row: np.ndarray, block_of_leaf: np.ndarray,
                         leaf_size: np.ndarray, l: int) -> np.ndarray:
    """Vectorised over worlds (rows of ``world``, 0/1 per tuple): which blocks the per-block
    minimal recoding generalizes."""
    n_leaf = leaf_size.size
    onehot = np.zeros((world.shape[1], n_leaf), dtype=np.int64)
    onehot[np.arange(world.shape[1]), leaf_of_row] = 1
    cnt = world @ onehot
    viol = _violates(cnt, leaf_size[None, :], l)
    n_block = int(block_of_leaf.max()) + 1
    out = np.zeros((world.shape[0], n_block), dtype=bool)
    for b in range(n_block):
        out[:, b] = viol[:, block_of_leaf == b].any(axis=1)
    return out


def _random_global_table(rng: np.random.Generator):
    """Blocks of leaves with QID-EC sizes and a binary SA whose per-block release is valid."""
    while True:
        n_block = int(rng.integers(1, 3))
        block_of_leaf = np.concatenate([[b] * int(rng.integers(1, 4)) for b in range(n_block)])
        leaf_size = rng.integers(1, 5, size=block_of_leaf.size)
        leaf_of_row = np.repeat(np.arange(leaf_size.size), leaf_size)
        l = int(rng.choice([2, 3]))
        sa = (rng.random(leaf_of_row.size) < rng.uniform(0.1, 0.6)).astype(np.int64)
        gen = _per_block_algorithm(sa[None, :], leaf_of_row, block_of_leaf, leaf_size, l)[0]
        ok = True
        for b in range(n_block):  # a generalized block must itself satisfy R
            rows = block_of_leaf[leaf_of_row] == b
            if gen[b] and sa[rows].sum() * l > rows.sum():
                ok = False
        if ok:
            return block_of_leaf, leaf_size, leaf_of_row, l, sa, gen


def _global_brute_force(block_of_leaf, leaf_size, leaf_of_row, l, sa, gen):
    """Posterior of every tuple: worlds = SA multiset of each published class permuted over
    its tuples; kept = the algorithm re-run on the world publishes the same classes."""
    classes = []  # published classes as row arrays
    for b in range(int(block_of_leaf.max()) + 1):
        rows_b = np.flatnonzero(block_of_leaf[leaf_of_row] == b)
        if gen[b]:
            classes.append(rows_b)
        else:
            for leaf in np.flatnonzero(block_of_leaf == b):
                classes.append(np.flatnonzero(leaf_of_row == leaf))
    mats = [_subset_worlds(len(c), int(sa[c].sum())) for c in classes]
    n_worlds = math.prod(len(m) for m in mats)
    if n_worlds > 40_000:
        return None, n_worlds
    w = _product_worlds(mats)
    order = np.concatenate(classes)
    world = np.zeros_like(w)
    world[:, order] = w
    out = _per_block_algorithm(world, leaf_of_row, block_of_leaf, leaf_size, l)
    keep = np.all(out == gen[None, :], axis=1)
    assert keep.any()  # the true table is one of the worlds
    return world[keep].mean(axis=0), n_worlds


def _exact_global(block_of_leaf, leaf_size, leaf_of_row, l, sa, gen) -> np.ndarray:
    post = np.zeros(leaf_of_row.size)
    for b in range(int(block_of_leaf.max()) + 1):
        leaves = np.flatnonzero(block_of_leaf == b)
        if not gen[b]:
            for leaf in leaves:
                rows = leaf_of_row == leaf
                post[rows] = sa[rows].mean()
            continue
        rows = np.isin(leaf_of_row, leaves)
        S = int(sa[rows].sum())
        cred = class_credibility(leaf_size[leaves], [simple_l_sat(int(n), S, l) for n in leaf_size[leaves]], S)
        for leaf, c in zip(leaves, cred.credibility):
            post[leaf_of_row == leaf] = c
    return post


# ---------------------------------------------------------------------------------------
# global recoding, binary SA: 700 random tables
# ---------------------------------------------------------------------------------------
def test_global_recoding_matches_brute_force_on_700_tables():
    rng = np.random.default_rng(20070923)
    done = excluded_some = 0
    while done < 700:
        case = _random_global_table(rng)
        brute, n_worlds = _global_brute_force(*case)
        if brute is None:
            continue
        exact = _exact_global(*case)
        np.testing.assert_allclose(exact, brute, rtol=0, atol=TOL)
        excluded_some += int(np.abs(brute - _baseline(*case)).max() > 1e-9)
        done += 1
    assert excluded_some > 50  # the exclusion changes the posterior in many of them (94 here)


def _baseline(block_of_leaf, leaf_size, leaf_of_row, l, sa, gen):
    post = np.zeros(sa.size)
    for b in range(int(block_of_leaf.max()) + 1):
        rows_b = block_of_leaf[leaf_of_row] == b
        if gen[b]:
            post[rows_b] = sa[rows_b].mean()
        else:
            for leaf in np.flatnonzero(block_of_leaf == b):
                r = leaf_of_row == leaf
                post[r] = sa[r].mean()
    return post


def _release_for(block_of_leaf, leaf_size, leaf_of_row, l, sa, gen):
    """The same table and per-block release through the openbook pipeline."""
    leaves = [f"v{i}" for i in range(leaf_size.size)]
    mapping = {f"v{i}": f"B{block_of_leaf[i]}" for i in range(leaf_size.size)}
    mapping.update({f"B{b}": "*" for b in set(block_of_leaf.tolist())})
    h = from_mapping(mapping, "q")
    df = pd.DataFrame({"q": [leaves[i] for i in leaf_of_row], "sa": np.where(sa == 1, "s", "n")})
    if (sa == 0).all():
        df.loc[len(df)] = ["v0", "s"]  # keep 's' in the domain; dropped below
    schema = Schema.build(qi=["q"], sa="sa", sensitive_sets={"S": ["s"]})
    table = encode(df, schema, {"q": h})
    labels = np.where(gen[block_of_leaf[leaf_of_row]], leaf_size.size + block_of_leaf[leaf_of_row], leaf_of_row)
    if len(df) > sa.size:
        table = table.take(np.arange(sa.size))
    part = Partition.from_labels(labels)
    model = make_model(f"simple-l={l},set=S,set-mode=total")
    return table, build_release(table, part, model=model)


def test_global_release_pipeline_matches_brute_force():
    rng = np.random.default_rng(7)
    done = 0
    while done < 60:
        case = _random_global_table(rng)
        brute, _ = _global_brute_force(*case)
        if brute is None:
            continue
        table, release = _release_for(*case)
        res = minimality_attack(release, table)
        np.testing.assert_allclose(res.posterior[:, 0], brute, rtol=0, atol=TOL)
        exact = minimality_attack(release, table, exact=True)
        np.testing.assert_allclose(exact.posterior[:, 0], brute, rtol=0, atol=TOL)
        done += 1


# ---------------------------------------------------------------------------------------
# local recoding, binary SA: 250 random cases
# ---------------------------------------------------------------------------------------
def _random_local_case(rng):
    while True:
        u = int(rng.integers(2, 4))
        n = rng.integers(1, 5, size=u)
        ng = np.array([int(rng.integers(0, k + 1)) for k in n])
        if ng.sum() < 2 or (ng > 0).sum() < 1:
            continue
        l = int(rng.choice([2, 3]))
        G = int(ng.sum())
        S_G = int(rng.integers(0, G // l + 1))
        nu = n - ng
        us = np.array([int(rng.integers(0, k // l + 1)) for k in nu])
        return n, ng, nu, us, S_G, l


def _local_brute_force(n, ng, nu, us, S_G, l):
    """Individual-level worlds: which individuals of each QID-EC sit in C_G, the SA of C_G
    over its tuples, the SA of each ungeneralized class over its tuples."""
    u = len(n)
    ind_ec = np.repeat(np.arange(u), n)
    N = ind_ec.size
    choices = [list(itertools.combinations(np.flatnonzero(ind_ec == i), int(ng[i]))) for i in range(u)]
    num = np.zeros(N)
    cnt = 0
    fallback_num = np.zeros(N)
    fallback_cnt = 0
    for pick in itertools.product(*choices):
        in_g = np.zeros(N, dtype=bool)
        for p in pick:
            in_g[list(p)] = True
        g_rows = np.flatnonzero(in_g)
        u_rows = [np.flatnonzero(~in_g & (ind_ec == i)) for i in range(u)]
        for g_s in itertools.combinations(g_rows, S_G):
            for u_s in itertools.product(*[itertools.combinations(r, int(us[i])) for i, r in enumerate(u_rows)]):
                sens = np.zeros(N, dtype=np.int64)
                sens[list(g_s)] = 1
                for c in u_s:
                    sens[list(c)] = 1
                orig = np.bincount(ind_ec, weights=sens, minlength=u)
                fallback_num += sens
                fallback_cnt += 1
                if np.any(orig * l > n):  # Lemma 1: restoring C_G breaks R
                    num += sens
                    cnt += 1
    if cnt == 0:  # no world explains the generalization: nothing excluded
        return fallback_num / fallback_cnt
    return num / cnt


def test_local_recoding_matches_brute_force_on_250_cases():
    rng = np.random.default_rng(2007)
    for _ in range(250):
        n, ng, nu, us, S_G, l = _random_local_case(rng)
        brute = _local_brute_force(n, ng, nu, us, S_G, l)
        exact = local_credibility(list(n), list(nu), list(us), S_G, l, exact=True)
        flt = local_credibility(list(n), list(nu), list(us), S_G, l, exact=False)
        expect = np.repeat(np.array([float(x) for x in exact]), n)
        np.testing.assert_allclose(expect, brute, rtol=0, atol=TOL)
        np.testing.assert_allclose(np.repeat(flt, n), brute, rtol=0, atol=TOL)


# ---------------------------------------------------------------------------------------
# other models (§5), multi-valued SA: 120 random tables through the multivariate engine
# ---------------------------------------------------------------------------------------
MODELS = ["recursive-l=2,c=2", "t=0.3", "l=2", "alpha=0.5", "entropy-l=2"]


def _random_class(rng: np.random.Generator, spec: str, sizes: np.ndarray):
    """A class of ``sizes.sum()`` people (at most 8) with random SA values and a table domain
    around them, or ``None`` when too big or failing ``spec`` itself."""
    N = int(sizes.sum())
    if N > 8:
        return None
    n_sa = int(rng.integers(2, 4))
    sa = rng.integers(0, n_sa, size=N)
    glob = np.bincount(sa, minlength=n_sa) + rng.integers(0, 3, size=n_sa)
    dom = SADomain(values=np.array([f"v{i}" for i in range(n_sa)], dtype=object), global_counts=glob)
    model = make_model(spec)
    counts = np.bincount(sa, minlength=n_sa)
    if not model.holds(counts[None, :], dom)[0]:
        return None
    return sa, dom, model, counts


def _kept_worlds(sa: np.ndarray, ec_of: np.ndarray, base: np.ndarray, model, dom) -> np.ndarray:
    """Brute force: every distinct permutation of the class's SA multiset over its people in
    which some QID-EC (its people's values plus ``base``, its ungeneralized tuples) fails."""
    kept = []
    for perm in set(itertools.permutations(sa.tolist())):
        c = base.copy()
        np.add.at(c, (ec_of, np.array(perm)), 1)
        if not model.holds(c, dom).all():
            kept.append(perm)
    return np.array(kept, dtype=np.int64).reshape(len(kept), sa.size)


def test_multivariate_models_match_brute_force_on_120_tables():
    rng = np.random.default_rng(5)
    done = 0
    while done < 120:
        spec = MODELS[done % len(MODELS)]
        u = int(rng.integers(2, 4))
        sizes = rng.integers(1, 4, size=u)
        drawn = _random_class(rng, spec, sizes)
        if drawn is None:
            continue
        sa, dom, model, counts = drawn
        n_sa, N = counts.size, sa.size
        ec_of = np.repeat(np.arange(u), sizes)
        kept = _kept_worlds(sa, ec_of, np.zeros((u, n_sa), dtype=np.int64), model, dom)
        units = [(int(s), np.zeros(n_sa, dtype=np.int64)) for s in sizes]
        post, ok, _ = class_posterior_multi(units, counts, model, dom)
        if not kept.size:
            assert not ok
            np.testing.assert_allclose(post, np.tile(counts / N, (u, 1)), atol=TOL)
        else:
            assert ok
            for i in range(u):
                rows = ec_of == i
                brute = np.stack([(kept[:, rows] == v).mean() for v in range(n_sa)])
                np.testing.assert_allclose(post[i], brute, rtol=0, atol=TOL)
        done += 1


def test_many_units_with_repeated_keys_match_brute_force_exactly():
    """Five to seven units, keys repeating (sizes 1–2, three kinds of ungeneralized tuples: up
    to six keys, several units of one key): the leave-one-out posteriors (the DP re-run
    without each key's unit) equal the brute force over every arrangement, exactly."""
    rng = np.random.default_rng(11)
    done = 0
    while done < 25:
        spec = MODELS[done % len(MODELS)]
        sizes = rng.integers(1, 3, size=int(rng.integers(5, 8)))
        drawn = _random_class(rng, spec, sizes)
        if drawn is None:
            continue
        sa, dom, model, counts = drawn
        n_sa, u = counts.size, sizes.size
        ec_of = np.repeat(np.arange(u), sizes)
        kinds = np.eye(n_sa, dtype=np.int64)[:2].tolist() + [[0] * n_sa]
        ungen = np.array([kinds[int(k)] for k in rng.integers(0, 3, size=u)], dtype=np.int64)
        kept = _kept_worlds(sa, ec_of, ungen, model, dom)
        if not kept.size:
            continue
        units = [(int(x), ungen[i]) for i, x in enumerate(sizes)]
        assert len(set((x, tuple(g)) for x, g in zip(sizes.tolist(), ungen.tolist()))) >= 2
        post, ok, _ = class_posterior_multi(units, counts, model, dom, exact=True)
        assert ok
        for i in range(u):
            rows = ec_of == i
            for v in range(n_sa):
                assert post[i][v] == Fraction(int((kept[:, rows] == v).sum()), len(kept) * int(rows.sum()))
        done += 1


# ---------------------------------------------------------------------------------------
# properties and small facts
# ---------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=6), st.integers(0, 40), st.sampled_from([2, 3, 5]))
def test_float_engine_equals_integer_engine(sizes, S, l):
    N = sum(sizes)
    S = min(S, N)
    ex = global_credibility(sizes, S, l, exact=True)
    fl = global_credibility(sizes, S, l, exact=False)
    assert all(isinstance(x, Fraction) for x in ex)
    np.testing.assert_allclose([float(x) for x in ex], fl, rtol=1e-10, atol=1e-12)
    # the expected number of sensitive tuples is S in every kept world
    assert sum(n * x for n, x in zip(sizes, ex)) == S


def test_multiplicities_equal_repeated_units():
    sat = [simple_l_sat(2, 3, 2), simple_l_sat(5, 3, 2)]
    a = class_credibility([2, 5], sat, 3, mult=[3, 1], exact=True).credibility
    b = class_credibility([2, 2, 2, 5], [sat[0]] * 3 + [sat[1]], 3, exact=True).credibility
    assert a == [b[0], b[3]]


def test_sensitive_tuple_distribution_counts_worlds():
    df = sensitive_tuple_distribution([2, 2, 10], 5, 2)
    assert df["cases"].sum() == 430


def test_no_violation_possible_means_no_exclusion():
    cc = class_credibility([5, 5], [simple_l_sat(5, 2, 2)] * 2, 2, exact=True)
    assert not cc.consistent and cc.credibility == [Fraction(1, 5)] * 2


def test_bad_input_is_one_clear_error():
    with pytest.raises(ParameterError, match="S=9"):
        class_credibility([2, 3], [simple_l_sat(2, 9, 2), simple_l_sat(3, 9, 2)], 9)


def test_float_underflow_falls_back_to_exact_counting():
    # one tiny QID-EC can violate only in a vanishing fraction of the worlds of a huge class
    sizes = [1, 4000]
    S = 1000
    sat = [simple_l_sat(1, S, 2), simple_l_sat(4000, S, 2)]
    cc = class_credibility(sizes, sat, S)
    assert cc.consistent and cc.credibility[0] == pytest.approx(1.0)
