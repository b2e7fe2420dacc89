"""The replay's world engine against exhaustive enumeration (paper 000 §5.1):

* the pruned enumeration (``replay/exact.py``: decisions checked cell by cell, rejected
  partial tables cut off) gives exactly the posterior, total weight and kept tables of
  weighing every contingency table;
* the lower bound on a unit's number of tables never exceeds the count;
* classes of one value class (*fixed*) are folded out of the units (constants of the
  decisions, known values in the regions) and the replay still equals brute force over
  every world re-run through Mondrian;
* the sequential importance sampler of GG/RGG groups (``replay/sis.py``) agrees with the
  exact forward–backward within 3 standard errors, on long groups too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_replay import MODELS, _interleaved_table, _mondrian_run, _table, brute_force

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.replay import Decisions, Unit, replay_attack, splits
from openbook.attacks.replay.engine import unit_tables, weight_chunked
from openbook.attacks.replay.exact import count_tables, log_all_tables, pruned
from openbook.attacks.replay.solve import classes, tables_lower_bound
from openbook.data.table import EncodedTable
from openbook.errors import OpenbookError
from openbook.models.registry import make_model
from openbook.release.align import published_classes


def _domain(n_sa: int):
    return EncodedTable.from_codes(qi_codes=np.zeros((1, 1), dtype=np.int64), sa_codes=np.zeros(1, dtype=np.int64),
                                   sa_categories=np.arange(n_sa), sensitive_sets={"s": [0]}).sa_domain


def _random_unit(rng):
    """A unit of 1–3 leaves, 1–4 cells each, 2–3 SA values, 1–5 random decisions (sides:
    random cell sets, random constant offsets) under a random model."""
    n_sa = int(rng.integers(2, 4))
    n_leaves = int(rng.integers(1, 4))
    sizes, cell_leaf, K = [], [], []
    for lf in range(n_leaves):
        n_c = int(rng.integers(1, 5))
        s = rng.integers(1, 4, size=n_c)
        sizes.extend(s.tolist())
        cell_leaf.extend([lf] * n_c)
        K.append(np.bincount(rng.integers(0, n_sa, size=int(s.sum())), minlength=n_sa))
    sizes, cell_leaf, K = np.array(sizes), np.array(cell_leaf), np.array(K)
    C = sizes.size
    cell = np.repeat(np.arange(C), sizes)
    k = int(rng.integers(1, 6))
    left, right = [], []
    for _ in range(k):
        side = rng.integers(0, 3, size=C)  # 0: left, 1: right, 2: neither
        left.append(np.flatnonzero(side == 0))
        right.append(np.flatnonzero(side == 1))
    model = make_model(MODELS[int(rng.integers(len(MODELS)))])
    dec = Decisions(model, _domain(n_sa), left, right, rng.integers(0, 2, size=k).astype(bool),
                    rng.integers(0, 3, size=(k, n_sa)), rng.integers(0, 3, size=(k, n_sa)))
    return Unit(np.arange(cell.size), cell, cell_leaf, K, None, "test", decisions=dec)


def _every_table(unit, K, rep, n_sa):
    tabs, logw = unit_tables(unit.cell_leaf, unit.cell_size, K, 10**7)
    keep = weight_chunked(unit, tabs, rep, n_sa) > 0
    return tabs, logw, keep


def _random_case(rng):
    """A random unit, its one-hot targets, its class counts and every table of it weighed
    (``tabs, logw, keep``)."""
    unit = _random_unit(rng)
    n_sa = unit.leaf_counts.shape[1]
    masks = np.eye(n_sa, dtype=bool)
    rep, K, _ = classes(unit, masks)
    return unit, masks, K, _every_table(unit, K, rep, n_sa)


def test_pruned_enumeration_equals_weighing_every_table():
    rng = np.random.default_rng(5)
    masks = np.eye(3, dtype=bool)
    done = cut = 0
    while done < 400:
        unit = _random_unit(rng)
        n_sa = unit.leaf_counts.shape[1]
        rep, K, _ = classes(unit, masks[:n_sa, :n_sa])
        tabs, logw, keep = _every_table(unit, K, rep, n_sa)
        pr = pruned(unit, K, rep, n_sa, 10**7, store_cap=10**6)
        assert pr is not None and pr.complete
        assert pr.n_kept == int(keep.sum())
        assert pr.visited <= tabs.shape[0]  # never more than every table
        cut += int(pr.visited < tabs.shape[0])
        if keep.any():
            w = np.exp(logw[keep] - logw[keep].max())
            post = np.einsum("n,ncv->cv", w, tabs[keep].astype(float)) / w.sum()
            np.testing.assert_allclose(pr.acc / pr.tot, post, rtol=0, atol=1e-12)
            # total weight of the kept tables, relative to every table's
            share = math.exp(math.log(pr.tot) + pr.ref - log_all_tables(unit.cell_leaf, unit.cell_size, K))
            all_w = np.exp(logw - logw.max())
            assert share == pytest.approx(all_w[keep].sum() / all_w.sum(), rel=1e-9)
            # the stored tables are the kept tables, with their log weights
            got = {t.tobytes(): lw for t, lw in zip(pr.tabs, pr.logw)}
            want = {t.tobytes(): lw for t, lw in zip(tabs[keep].astype(np.int32), logw[keep])}
            assert got.keys() == want.keys()
            assert all(abs(got[x] - want[x]) < 1e-9 for x in got)
        else:
            assert pr.tabs.shape[0] == 0
        done += 1
    assert cut >= 100  # partial tables were cut off, not only whole tables rejected


def test_pruned_stops_at_its_limit_and_store_cap():
    rng = np.random.default_rng(6)
    for _ in range(50):
        unit = _random_unit(rng)
        n_sa = unit.leaf_counts.shape[1]
        rep, K, _ = classes(unit, np.eye(n_sa, dtype=bool))
        tabs, _, keep = _every_table(unit, K, rep, n_sa)
        full = pruned(unit, K, rep, n_sa, 10**7)
        if full.visited > 1:
            assert not pruned(unit, K, rep, n_sa, full.visited - 1).complete
        if keep.sum() > 1:
            capped = pruned(unit, K, rep, n_sa, 10**7, store_cap=int(keep.sum()) - 1)
            assert capped.complete and capped.tabs is None


def test_table_lower_bound_never_exceeds_the_count_and_the_count_is_exact():
    rng = np.random.default_rng(7)
    for _ in range(300):
        unit = _random_unit(rng)
        K = unit.leaf_counts
        n = unit_tables(unit.cell_leaf, unit.cell_size, K, 10**7)[0].shape[0]
        lb = tables_lower_bound(unit.cell_leaf, unit.cell_size, K)
        assert 1 <= lb <= n
        assert count_tables(unit.cell_leaf, unit.cell_size, K, n) == n  # the count, at its limit
        assert count_tables(unit.cell_leaf, unit.cell_size, K, n - 1) is None  # past it
        assert tables_lower_bound(unit.cell_leaf, unit.cell_size, K, cap=lb - 0.5) > lb - 0.5


@pytest.mark.slow  # over 10 s: run by .ci/run (pytest -m slow)
def test_fixed_classes_are_folded_and_the_replay_equals_brute_force(monkeypatch):
    """Mondrian (strict and relaxed) published generalized under set models, where many
    classes hold no sensitive value: such classes leave every unit (a decision's constant,
    a region's known rows), and the posteriors still equal brute force over every world."""
    folded = {"decision": 0, "region": 0}
    fold = splits._fold_fixed

    def counting(walk, cons, fixed):
        folded["decision"] += sum(int(fixed[c[7]].any() and not fixed[c[7]].all()) for c in cons)
        folded["region"] += sum(int(fixed[walk.group[rows]].any() and not fixed[walk.group[rows]].all())
                                for rows in walk.region_rows)
        return fold(walk, cons, fixed)

    monkeypatch.setattr(splits, "_fold_fixed", counting)
    rng = np.random.default_rng(31)
    done = 0
    while done < 200:
        n, n_sa = int(rng.integers(8, 15)), int(rng.integers(2, 4))
        sa = np.where(rng.random(n) < 0.3, 0, rng.integers(1, n_sa, size=n))
        if done % 2:  # one QI whose codes interleave two subtrees
            t = _interleaved_table(rng.integers(0, 4, size=n), sa, n_sa)
            strict = bool(rng.integers(2))
        else:  # two QIs of two values: relaxed cuts share ties out, labels coincide
            t = _table(rng.integers(0, 2, size=(n, 2)), sa, n_sa)
            strict = False
        spec = ["simple-l=2,set=s", "simple-l=3,set=s"][int(rng.integers(2))]
        algo = make_algorithm("mondrian", model=make_model(spec), strict=strict)
        try:
            part = algo.partition(t)
        except OpenbookError:
            continue
        if np.bincount(published_classes(t, part.group)).max() > 7:  # brute force: 7! orders per class
            continue
        masks = np.eye(n_sa, dtype=bool)
        res = replay_attack(t, part.group, algo, targets=([str(i) for i in range(n_sa)], masks), kind="generalized")
        np.testing.assert_allclose(res.posterior, brute_force(algo, t, part.group, masks, "generalized"),
                                   rtol=0, atol=1e-12)
        done += 1
    assert folded["decision"] >= 10 and folded["region"] >= 5, folded


@pytest.mark.slow  # several seconds per case: run by .ci/run (pytest -m slow)
@pytest.mark.parametrize("name,seed", [("gg", 41), ("rgg", 42)])
def test_sequential_sampler_of_long_groups_within_three_standard_errors(name, seed):
    """GG/RGG under binary ℓ-diversity on tables whose groups run to tens of buckets: the
    sampled posteriors (each bucket drawn from its hypergeometric tilted by the chain's
    factor) against the exact forward–backward."""
    rng = np.random.default_rng(seed)
    z, long_groups = [], 0
    for case in range(12):
        n = int(rng.integers(120, 260))
        qi = rng.integers(0, 40, size=(n, 2))
        # the sensitive value (code 0) crowds the low end of the sort order: GG's groups
        # there run long before a prefix has few enough of it
        dense = rng.random(n) < np.where(qi[:, 0] < 12, 0.55, 0.12)
        sa = np.where(dense, 0, rng.integers(1, 4, size=n))
        t = EncodedTable.from_codes(qi_codes=qi, sa_codes=sa, sa_categories=np.arange(4), sensitive_sets={"s": [0]})
        kw = {"tail": "drop"} if name == "gg" else {"tail": "drop", "p": float(rng.choice([0.3, 0.6])), "seed": case}
        kw["ties"] = "input"  # the brute force re-runs a deterministic order (random ties: tests/soundness)
        algo = make_algorithm(name, model=make_model("simple-l=2,set=s"), **kw)
        try:
            part = algo.partition(t)
        except OpenbookError:
            continue
        long_groups += int(np.bincount(part.group[part.group >= 0]).max() >= 20)
        masks = np.eye(4, dtype=bool)[:1]
        exact = replay_attack(t, part.group, algo, targets=(["s"], masks))
        smp = replay_attack(t, part.group, algo, targets=(["s"], masks), worlds=3000, seed=case, force_sample=True)
        ok = ~np.isnan(exact.posterior[:, 0]) & ~exact.unresolved
        assert not np.isnan(smp.posterior[ok]).any()  # every group keeps some drawn world
        d = np.abs(smp.posterior[ok, 0] - exact.posterior[ok, 0])
        se = smp.stderr[ok, 0]
        assert np.all(d[se <= 1e-12] < 1e-9)
        z.extend((d[se > 1e-12] / se[se > 1e-12]).tolist())
    z = np.asarray(z)
    assert long_groups >= 6 and z.size > 200, (long_groups, z.size)
    assert (z > 3).mean() <= 0.02 and z.max() < 5


def test_sampled_unit_without_a_consistent_pilot_world_stops_there_unresolved(monkeypatch):
    """A sampled unit none of whose first ``max(PILOT_WORLDS, worlds // 10)`` draws keeps its
    decisions is unresolved (NaN, with the reason) after those draws, never after all of them;
    only units no world keeps (every table weighed) are picked, so stopping loses nothing."""
    from openbook.attacks.replay import solve

    weighed = []
    real = solve.weight_chunked

    def counting(unit, tabs, rep, n_sa):
        weighed.append(tabs.shape[0])
        return real(unit, tabs, rep, n_sa)

    monkeypatch.setattr(solve, "weight_chunked", counting)
    rng = np.random.default_rng(8)
    stopped = 0
    for _ in range(400):
        unit, masks, K, (_, _, keep) = _random_case(rng)
        if keep.any():
            continue  # some world keeps the decisions
        weighed.clear()
        r = solve.solve_unit(unit, masks, worlds=5000, seed=1, force_sample=True, piece_limit=1)
        assert not r.consistent and np.isnan(r.post).all() and r.reason
        if r.reason.startswith("no consistent world in the first"):
            stopped += 1
            assert r.reason == "no consistent world in the first 500 draws"
            assert sum(weighed) == 500 and r.n_worlds == 500
    assert stopped >= 10


def test_unresolved_people_are_reported_with_their_reason(monkeypatch):
    """Every unresolved person is counted once in ``notes["unresolved"]`` (reason, units,
    classes, people); with the re-run budget cut to 9,000 rows, sampled units with regions draw
    fewer worlds (never fewer than the pilot's) and stay within 3 standard errors of the exact
    replay."""
    from openbook.attacks.replay import solve

    monkeypatch.setattr(solve, "MAX_RERUN", 9000.0)
    rng = np.random.default_rng(31)
    z, capped, done = [], 0, 0
    while done < 40:
        n_sa = int(rng.integers(2, 4))
        n = int(rng.integers(5, 9))
        t = _interleaved_table(rng.integers(0, 4, size=n), rng.integers(0, n_sa, size=n), n_sa)
        run = _mondrian_run(rng, t)
        if run is None:
            continue
        algo, part = run
        masks = np.eye(n_sa, dtype=bool)
        names = [str(i) for i in range(n_sa)]
        exact = replay_attack(t, part.group, algo, targets=(names, masks), kind="generalized")
        smp = replay_attack(t, part.group, algo, targets=(names, masks), kind="generalized", worlds=3000,
                            seed=done, force_sample=True, piece_limit=1)
        for res in (exact, smp):
            assert sum(u["people"] for u in res.notes["unresolved"]) == int(res.unresolved.sum())
            assert all(u["reason"] and u["units"] >= 1 for u in res.notes["unresolved"])
        gi = smp.group_info
        pilot = max(solve.PILOT_WORLDS, 3000 // 10)  # the first draws: never fewer
        drawn = gi.loc[~gi["exact"] & (gi["worlds"] > 0), "worlds"]
        assert (drawn >= pilot).all()
        capped += int((drawn < 3000).any())
        ok = ~smp.unresolved & ~exact.unresolved
        d = np.abs(smp.posterior - exact.posterior)[ok]
        se = smp.stderr[ok]
        pos = se > 1e-12
        assert np.all(d[~pos] < 1e-12)
        z.extend((d[pos] / se[pos]).tolist())
        done += 1
    assert capped >= 5
    z = np.asarray(z)
    assert z.size > 20 and (z > 3).mean() <= 0.02 and z.max() < 5


def test_chain_transitions_are_every_pair_within_the_counts():
    """A GG/RGG chain layer's transitions (compiled, never the states × increments × values
    array): exactly the pairs, row-major, whose sum stays within the group's counts."""
    from openbook.attacks.replay.kernels import feasible_pairs

    rng = np.random.default_rng(3)
    for _ in range(20):
        V = int(rng.integers(1, 5))
        K = rng.integers(0, 4, size=V).astype(np.int64)
        S0 = rng.integers(0, 4, size=(int(rng.integers(0, 12)), V)).astype(np.int64)
        D = rng.integers(0, 3, size=(int(rng.integers(0, 9)), V)).astype(np.int64)
        i0, di = feasible_pairs(S0, D, K)
        want = np.nonzero(np.all(S0[:, None, :] + D[None, :, :] <= K, axis=2))
        assert np.array_equal(i0, want[0]) and np.array_equal(di, want[1])


def test_chain_layer_keys_are_numpy_unique():
    """A chain layer's states by their mixed-radix keys: marked in a dense array when it is
    small, ``np.unique`` otherwise — the same keys and inverse either way (so the same
    posteriors, summed in the same order)."""
    from openbook.attacks.replay.chain import _unique_keys

    rng = np.random.default_rng(4)
    for n_keys in (1, 7, 1000, 1 << 16, 1 << 20, 1 << 40):
        for size in (0, 1, 50, 5000):
            keys = rng.integers(0, n_keys, size=size).astype(np.int64)
            got, inv = _unique_keys(keys, n_keys)
            want, winv = np.unique(keys, return_inverse=True)
            assert np.array_equal(got, want) and np.array_equal(inv, winv.ravel())


def test_a_unit_no_draw_resolves_is_enumerated_within_the_fallback_budget(monkeypatch):
    """When the sampler keeps no draw (its pilot found no world keeping the decisions — rare
    among the worlds, not absent), a unit of decisions only is enumerated exactly within
    ``FALLBACK_WORK`` visited tables (one class) or ``FALLBACK_WORK_CLASSES`` (several): the
    posterior is every kept table's, weighed by its worlds; past that budget it is drawn
    sequentially, and without an answer from those draws the unit stays unresolved."""
    from openbook.attacks.replay import sequential, solve

    def no_draw(unit, K, rep, tm, n_sa, size, worlds, seed, piece_limit):
        nan = np.full((unit.n_cells, tm.shape[2]), np.nan)
        return solve.UnitResult(nan, nan.copy(), False, 500.0, 0.0, False, "no consistent world in the first 500 draws")

    monkeypatch.setattr(solve, "_solve_pieces", no_draw)
    rng = np.random.default_rng(12)
    resolved = 0
    for _ in range(300):
        unit, masks, K, (tabs, logw, keep) = _random_case(rng)
        # exact_limit=0: the first exact attempt gives up at once, so the sampler runs (and fails)
        r = solve.solve_unit(unit, masks, worlds=500, seed=1, exact_limit=0)
        if not keep.any():
            assert not r.consistent and r.reason
            continue
        assert r.exact and r.consistent and r.reason == ""
        w = np.exp(logw[keep] - logw[keep].max())
        post = np.einsum("n,ncv->cv", w, tabs[keep].astype(float)) / w.sum() / unit.cell_size[:, None]
        want = solve.to_targets(post, classes(unit, masks)[2], unit.cell_leaf)
        np.testing.assert_allclose(r.post, want, rtol=0, atol=1e-12)
        assert np.all(r.se == 0)
        with monkeypatch.context() as m:
            m.setattr(solve, "FALLBACK_WORK", 0.0)  # no budget: unresolved, as the sampler left it
            m.setattr(solve, "FALLBACK_WORK_CLASSES", 0.0)
            drawn = solve.solve_unit(unit, masks, worlds=500, seed=1, exact_limit=0)
            assert not drawn.exact  # then drawn cell by cell (test_replay_blocks.py), or unresolved
            m.setattr(sequential, "solve_sis", lambda *a, **k: None)  # no sequential answer either
            again = solve.solve_unit(unit, masks, worlds=500, seed=1, exact_limit=0)
            assert not again.consistent and again.reason.startswith("no consistent world in the first")
        resolved += 1
    assert resolved >= 50


@pytest.mark.slow  # about 10 s (every table weighed): run by .ci/run (pytest -m slow)
def test_a_side_box_counts_each_class_at_most_as_often_as_the_unit_holds_it():
    """A decision side's lookup box bounds class ``v`` by ``min(K_lv, rows of leaf l in the
    side)`` summed over leaves — not by the side's rows per cell summed (which on Adult made
    boxes of millions of points for 22 people, past ``LUT_LIMIT``, and left the unit to a
    sampler that found no consistent world). Ten people, one a cell, 80 cuts each taken as a
    random world decides them: the old boxes would pass ``LUT_LIMIT``, the unit now enumerates
    and equals weighing every table."""
    from openbook.attacks.replay.engine import holds
    from openbook.attacks.replay.exact import LUT_LIMIT

    rng = np.random.default_rng(3)
    K = np.array([[2, 2, 2, 2, 1, 1]])
    n_sa, n = K.shape[1], int(K.sum())
    cell = np.arange(n)
    model, domain = make_model("l=3"), _domain(n_sa)
    world = rng.permutation(np.repeat(np.arange(n_sa), K[0]))
    left, right, accepted = [], [], []
    for _ in range(80):
        side = rng.random(n) < rng.uniform(0.15, 0.85)
        left.append(np.flatnonzero(side))
        right.append(np.flatnonzero(~side))
        counts = [np.bincount(world[c], minlength=n_sa)[None, :] for c in (left[-1], right[-1])]
        accepted.append(bool(holds(model, domain, counts[0])[0] and holds(model, domain, counts[1])[0]))
    assert any(accepted) and not all(accepted)
    zeros = np.zeros((80, n_sa), dtype=np.int64)
    dec = Decisions(model, domain, left, right, np.array(accepted), zeros, zeros.copy())
    unit = Unit(np.arange(n), cell, np.zeros(n, dtype=np.int64), K, None, "test", decisions=dec)
    rep, Kc, _ = classes(unit, np.eye(n_sa, dtype=bool))
    old_box = sum(math.prod(int(x) + 1 for x in np.minimum(np.ones((c.size, 1), np.int64), Kc[0]).sum(axis=0)[:-1])
                  for c in [*left, *right])
    assert old_box > LUT_LIMIT  # the bound before: no enumeration at all
    pr = pruned(unit, Kc, rep, n_sa, 10**8, store_cap=0)
    assert pr is not None and pr.complete and pr.n_kept > 0
    tabs, logw, keep = _every_table(unit, Kc, rep, n_sa)
    assert pr.n_kept == int(keep.sum())
    w = np.exp(logw[keep] - logw[keep].max())
    post = np.einsum("n,ncv->cv", w, tabs[keep].astype(float)) / w.sum()
    np.testing.assert_allclose(pr.acc / pr.tot, post, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_gg_run_likelihood_reads_only_first_satisfying_runs_and_the_last(seed):
    """GG (p = 0) closes a group at its first satisfying bucket and its merged tail asks only
    whether the run to the end holds: ``gg_run_likelihood`` on ``first_and_last(H)`` (what
    the early-exit ``holds_intervals(first_only=True)`` computes) equals it on the whole
    ``H`` — for every label matrix, followed or not, merged tail or not. Not for RGG (p > 0),
    which reads every satisfying run (checked: some case differs, so the check can fail)."""
    from openbook.attacks.replay.kernels import gg_run_likelihood
    from openbook.models.base import first_and_last

    rng = np.random.default_rng(seed)
    rgg_differs = False
    for _ in range(40):
        W, B = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        H = np.triu(rng.random((W, B, B)) < rng.uniform(0.2, 0.8))
        A = np.triu(rng.random((B, B)) < 0.7)
        sparse = first_and_last(H)
        for followed in (False, True):
            for merge in (False, True):
                if merge and followed:
                    continue
                np.testing.assert_array_equal(gg_run_likelihood(sparse, A, 0.0, followed, merge),
                                              gg_run_likelihood(H, A, 0.0, followed, merge))
                rgg_differs |= not np.allclose(gg_run_likelihood(sparse, A, 0.3, followed, merge),
                                               gg_run_likelihood(H, A, 0.3, followed, merge))
    assert rgg_differs
