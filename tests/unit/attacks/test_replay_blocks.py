"""Units the joint sampler cannot resolve, against exhaustive enumeration (paper 000 §5.1):

* the sequential importance sampler of a unit's tables under its decisions
  (``replay/sequential.py``): its importance weights average to the share of worlds keeping
  the decisions, and its posterior lies within 3 standard errors of weighing every table;
* a unit with regions solved through its blocks (``replay/blocks.py``): with every coarse
  table listed and every region's arrangements enumerated it *equals* weighing every table
  with each region re-run (the brute force); with the coarse tables drawn and the
  arrangements drawn it lies within 3 standard errors of it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_replay import _interleaved_table, _mondrian_run
from test_replay_engine import _random_case

from openbook.attacks.replay import blocks, sequential, solve
from openbook.attacks.replay.attack import replay_units
from openbook.attacks.replay.generic import canonical
from openbook.attacks.replay.solve import classes, to_targets
from openbook.release.align import published_classes


def test_sequential_weights_average_to_the_share_of_worlds_keeping_the_decisions():
    """``E_q[w] = Σ_kept π(t)``: the mean importance weight of the sequential draws is the
    probability, under the uniform law of worlds, that a world keeps every decision — the
    check that the proposal and its weights are right, not just the self-normalised ratio."""
    rng = np.random.default_rng(5)
    z, done = [], 0
    while done < 150:
        unit, masks, K, (tabs, logw, keep) = _random_case(rng)
        rep, _, _ = classes(unit, masks)
        n_sa = unit.leaf_counts.shape[1]
        share = float(np.exp(logw - logw.max())[keep].sum() / np.exp(logw - logw.max()).sum())
        draws = list(sequential.sis_chunks(unit, K, rep, n_sa, 4000, done))
        assert sum(g[2] for g in draws) == 4000  # every draw counted; only the kept ones returned
        kept = np.exp(np.concatenate([g[1] for g in draws]))
        w = np.concatenate([kept, np.zeros(4000 - kept.size)])
        m, se = w.mean(), w.std(ddof=1) / math.sqrt(w.size)
        if share == 0:
            assert np.all(w == 0)
        elif se > 1e-9 * m:
            z.append(abs(m - share) / se)
        else:  # every draw has the same weight (to rounding): it is exact
            assert m == pytest.approx(share, rel=1e-9, abs=1e-12)
        done += 1
    z = np.asarray(z)
    assert z.size >= 20 and (z > 3).mean() <= 0.02 and z.max() < 5


def test_sequential_posterior_within_three_standard_errors_of_every_table():
    rng = np.random.default_rng(6)
    z, done, none = [], 0, 0
    while done < 80:
        unit, masks, K, (tabs, logw, keep) = _random_case(rng)
        rep, _, tm = classes(unit, masks)
        n_sa = unit.leaf_counts.shape[1]
        r = sequential.solve_sis(unit, K, rep, tm, n_sa, unit.cell_size.astype(float), 3000, done)
        done += 1
        if not keep.any():
            assert r is None  # no draw keeps what no table keeps
            none += 1
            continue
        if r is None:  # too few effective draws: no answer (never a wrong one)
            continue
        w = np.exp(logw[keep] - logw[keep].max())
        post = np.einsum("n,ncv->cv", w, tabs[keep].astype(float)) / w.sum() / unit.cell_size[:, None]
        want = to_targets(post, tm, unit.cell_leaf)
        d = np.abs(r.post - want)
        pos = r.se > 1e-12
        assert np.all(d[~pos] < 1e-9)
        z.extend((d[pos] / r.se[pos]).tolist())
    z = np.asarray(z)
    assert none >= 1 and z.size >= 50 and (z > 3).mean() <= 0.02 and z.max() < 5


def _two_qi_table(codes, sa, n_sa):
    """Two QIs like :func:`_interleaved_table`'s: a cut refused on one and taken on the other
    can part a region's rows by a decision above it (blocks split by decision sides)."""
    from openbook.data.table import EncodedTable
    from openbook.hierarchy import from_levels

    leaves = ["a1", "b1", "a2", "b2"]
    hs = {c: from_levels([[x, x[0].upper(), "*"] for x in leaves], column=c) for c in ("c", "d")}
    return EncodedTable.from_codes(qi_codes=np.asarray(codes), sa_codes=np.asarray(sa), sa_categories=np.arange(n_sa),
                                   qi_names=["c", "d"], qi_categories=[np.array(leaves, dtype=object)] * 2,
                                   qi_kinds=["categorical", "categorical"], hierarchies=hs, sensitive_sets={"s": [0]})


def _split(unit) -> bool:
    """Does a decision part some region's rows of one class (more blocks than region-class pairs)?"""
    co = blocks.coarsen(unit)
    return sum(b.size for b in co.block_cells) > sum(np.unique(unit.cell_leaf[f]).size for f in co.fine)


def _region_units(seed: int, want: int, qis: int = 1, keep=lambda u: True):
    """Units with regions of Mondrian releases (relaxed and strict) of small random tables
    whose QIs interleave two subtrees (label merges: regions), each small enough to weigh
    every table with every region re-run (most have classes cut across regions and outside
    them: regions whose block counts vary from table to table)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < want:
        n_sa = int(rng.integers(2, 4))
        n = int(rng.integers(8, 15))
        if qis == 1:
            t = _interleaved_table(rng.integers(0, 4, size=n), rng.integers(0, n_sa, size=n), n_sa)
        else:
            t = _two_qi_table(rng.integers(0, 4, size=(n, 2)), rng.integers(0, n_sa, size=n), n_sa)
        run = _mondrian_run(rng, t)
        if run is None:
            continue
        algo, part = run
        group = canonical(published_classes(t, part.group))
        gcounts = t.group_sa_counts(group, int(group.max()) + 1)
        for u in replay_units(algo, t, group, gcounts, generalized=True):
            if u.regions and u.log_worlds() < math.log(5e4) and keep(u):
                out.append(u)
    return out


def _brute(unit, masks):
    rep, K, tm = classes(unit, masks)
    n_sa = unit.leaf_counts.shape[1]
    ex = solve._solve_exact(unit, K, rep, n_sa, unit.cell_size.astype(float), 1e7)
    assert ex is not None
    post_cls, _, share, consistent = ex
    return (to_targets(post_cls, tm, unit.cell_leaf) if consistent else None), rep, K, tm, n_sa


@pytest.mark.parametrize("qis", [1, 2])
def test_blocks_listed_and_enumerated_equal_every_table_re_run(monkeypatch, qis):
    """Every coarse table listed, every region's arrangements enumerated: the blocks method
    is exact and equals the brute force (every table of the unit, each region re-run). With
    two QIs, only units where a refused cut above a region parts its rows of one class (the
    block split by the decision's sides)."""
    monkeypatch.setattr(blocks, "INNER_EXACT", 10**6)
    compared = inconsistent = 0
    for unit in (_region_units(11, 60) if qis == 1 else _region_units(13, 12, qis=2, keep=_split)):
        masks = np.eye(unit.leaf_counts.shape[1], dtype=bool)
        want, rep, K, tm, n_sa = _brute(unit, masks)
        r, why = blocks.solve_blocks(unit, K, rep, tm, n_sa, 1000, 3)
        assert r is not None, why  # a Mondrian unit factors into blocks
        assert r.exact
        if want is None:
            assert not r.consistent
            inconsistent += 1
            continue
        assert r.consistent and np.all(r.se == 0)
        np.testing.assert_allclose(r.post, want, rtol=0, atol=1e-9)
        compared += 1
    assert compared >= (40 if qis == 1 else 8)


def test_blocks_whose_side_tags_collide_are_refused_never_solved(monkeypatch):
    """Blocks are told apart by summed random tags of their decision sides; were two cells a
    decision parts to get equal sums (here: every tag 0), the unit is refused — it does not
    factor — and never solved with a block a decision sees part of."""
    units = _region_units(13, 4, qis=2, keep=_split)
    monkeypatch.setattr(blocks, "side_tags", lambda k: np.zeros(k, dtype=np.int64))
    for unit in units:
        assert blocks.coarsen(unit) is None
        masks = np.eye(unit.leaf_counts.shape[1], dtype=bool)
        rep, K, tm = classes(unit, masks)
        r, why = blocks.solve_blocks(unit, K, rep, tm, unit.leaf_counts.shape[1], 1000, 3)
        assert r is None and why == "its regions do not factor into blocks"


def test_blocks_drawn_within_three_standard_errors_of_every_table_re_run(monkeypatch):
    """Coarse tables drawn sequentially and every region's arrangements drawn: within 3
    standard errors of the brute force, and never exact."""
    monkeypatch.setattr(blocks, "INNER_EXACT", 0)
    monkeypatch.setattr(blocks, "OUTER_VISIT", 0)
    z, none, done = [], 0, 0
    for unit in _region_units(12, 60):
        masks = np.eye(unit.leaf_counts.shape[1], dtype=bool)
        want, rep, K, tm, n_sa = _brute(unit, masks)
        r, why = blocks.solve_blocks(unit, K, rep, tm, n_sa, 1000, done)
        done += 1
        if r is None:
            assert why
            none += 1
            continue
        assert not r.exact
        if want is None:  # nothing passes: no estimate is ever consistent
            pytest.fail("a consistent estimate of a unit no world keeps")
        d = np.abs(r.post - want)
        pos = r.se > 1e-12
        assert np.all(d[~pos] < 1e-9)
        z.extend((d[pos] / r.se[pos]).tolist())
    z = np.asarray(z)
    assert none <= 10 and z.size >= 100 and (z > 3).mean() <= 0.02 and z.max() < 5


def test_distinct_rows_partition_the_rows_as_numpy_unique_even_when_hashes_collide(monkeypatch):
    """``engine.distinct_rows`` (the re-run's de-duplication of region configurations) groups
    the rows exactly as ``np.unique(axis=0)``; when every hash collides it notices and falls
    back, never merging different rows."""
    from openbook.attacks.replay import engine

    rng = np.random.default_rng(2)
    for collide in (False, True):
        with monkeypatch.context() as m:
            if collide:
                m.setattr(engine, "row_hash", lambda x: np.zeros((x.shape[0], 2), dtype=np.int64))
            for shape in [(1, 3), (50, 1), (200, 5), (500, 40)]:
                x = rng.integers(0, 3, size=shape).astype(np.int32)
                x = np.concatenate([x, x[::3]])
                u, inv = engine.distinct_rows(x)
                want = np.unique(x, axis=0)
                assert u.shape == want.shape and np.array_equal(u[inv], x)
                assert len({r.tobytes() for r in u}) == u.shape[0]


def _block_unit(rng):
    """One class of 3–7 cells whose random decisions (random offsets, a random model) stay
    inside 2–3 random groups of cells, some cells in none."""
    from test_replay_engine import MODELS, _domain

    from openbook.attacks.replay.engine import Decisions, Unit
    from openbook.models import make_model

    n_sa = int(rng.integers(2, 5))
    C = int(rng.integers(3, 8))
    sizes = rng.integers(1, 4, size=C)
    K = np.bincount(rng.integers(0, n_sa, size=int(sizes.sum())), minlength=n_sa)[None, :]
    grp = rng.integers(0, int(rng.integers(2, 4)) + 1, size=C)  # the last group: cells no decision reads
    left, right = [], []
    for _ in range(int(rng.integers(2, 7))):
        g = int(rng.integers(0, grp.max(initial=0) + 1))
        cells = np.flatnonzero(grp == g)
        side = rng.integers(0, 3, size=cells.size)
        left.append(cells[side == 0])
        right.append(cells[side == 1])
    k = len(left)
    dec = Decisions(make_model(MODELS[int(rng.integers(len(MODELS)))]), _domain(n_sa), left, right,
                    rng.integers(0, 2, size=k).astype(bool), rng.integers(0, 3, size=(k, n_sa)),
                    rng.integers(0, 3, size=(k, n_sa)))
    cell = np.repeat(np.arange(C), sizes)
    return Unit(np.arange(cell.size), cell, np.zeros(C, dtype=np.int64), K, None, "test", decisions=dec)


def test_blocks_of_one_class_enumerated_apart_equal_every_table():
    """``replay/components.py``: a class whose decisions fall apart into blocks, each block
    enumerated alone with the rest of the class in one cell, joined by passes over the count
    vectors — equal to weighing every table of the unit (posterior and the share of worlds
    kept), and inconsistent exactly when no table keeps the decisions."""
    from test_replay_engine import _every_table

    from openbook.attacks.replay.components import solve_components

    rng = np.random.default_rng(11)
    done = none = split = 0
    while done < 300:
        unit = _block_unit(rng)
        n_sa = unit.leaf_counts.shape[1]
        rep, K, _ = classes(unit, np.eye(n_sa, dtype=bool))
        size = unit.cell_size.astype(float)
        r = solve_components(unit, K, rep, n_sa, size, 1e7)
        if r is None:  # one block and no free cell: nothing to take apart
            continue
        done += 1
        split += int(r[1] > 0)
        tabs, logw, keep = _every_table(unit, K, rep, n_sa)
        post, _, share, consistent = r
        assert consistent == bool(keep.any())
        if not keep.any():
            none += 1
            continue
        w = np.exp(logw[keep] - logw[keep].max())
        want = np.einsum("n,ncv->cv", w, tabs[keep].astype(float)) / w.sum() / size[:, None]
        np.testing.assert_allclose(post, want, rtol=0, atol=1e-9)
        all_w = np.exp(logw - logw.max())
        assert share == pytest.approx(all_w[keep].sum() / all_w.sum(), rel=1e-9)
    assert none >= 10 and split == done


def test_pass_bootstrap_has_the_law_of_the_full_poisson_bootstrap():
    """``blocks.pass_bootstrap`` draws multiplicities for the passing arrangements only and
    one Poisson(m − passes) for the failing ones' total: its replicates must have the law of
    multiplying every one of the ``m`` draws by its own Poisson(1) — pass rate and passes'
    mean shares alike, compared in mean and variance over many replicates (3 standard
    errors; with the failing draws' total left out the pass rate is ≈ 1, far off)."""
    rng = np.random.default_rng(11)
    m, reps = 40, 40_000
    x = rng.random((m, 3))
    ok = np.zeros(m, dtype=bool)
    ok[rng.choice(m, 12, replace=False)] = True
    pb, mu_b, nb = blocks.pass_bootstrap(x[ok], m, np.random.default_rng(1), reps)
    pw = np.random.default_rng(2).poisson(1.0, size=(reps, m)).astype(np.float64)  # every draw multiplied
    nb_full = pw[:, ok].sum(axis=1)
    pb_full = nb_full / np.maximum(pw.sum(axis=1), 1.0)
    keep, keep_full = nb > 0, nb_full > 0
    mu_full = (pw[:, ok] @ x[ok]) / np.maximum(nb_full, 1.0)[:, None]
    for a, b in ((pb, pb_full), (mu_b[keep, 0], mu_full[keep_full, 0]), (mu_b[keep, 2], mu_full[keep_full, 2])):
        se = math.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) <= 3 * se
        # variances: the sample variance's standard error from the fourth moment
        va, vb = a.var(), b.var()
        se_v = math.sqrt((((a - a.mean()) ** 4).mean() - va ** 2) / a.size
                         + (((b - b.mean()) ** 4).mean() - vb ** 2) / b.size)
        assert abs(va - vb) <= 3 * se_v
    # the passes' total multiplicity: a sum of 12 Poisson(1), mean and variance 12
    assert np.array_equal(nb, np.rint(nb)) and abs(nb.mean() - 12) <= 3 * math.sqrt(12 / reps)
