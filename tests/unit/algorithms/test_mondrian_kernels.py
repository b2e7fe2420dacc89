"""Mondrian's kernels (:mod:`openbook.algorithms.mondrian_kernels`) against plain references,
both as plain Python and compiled by numba, with several workers: the in-place cut is the
stable partition of each node (paper 000 App. B (b): left = below the median, or among the
first ``ties`` rows equal to it), the children's ranges are exact, and the planner gives the
reference split tree when every batch is cut by several threads."""

from __future__ import annotations

import numpy as np
import pytest
from test_mondrian_reference import MODELS, assert_same_tree, random_table, reference_tree

from openbook.algorithms import make_algorithm, mondrian_kernels as mk, mondrian_planner as mp
from openbook.models import make_model

WAYS = ["plain", "numpy", "compiled"]


def kernels(way: str) -> dict:
    if way == "numpy":
        from openbook.algorithms import mondrian_numpy

        return mondrian_numpy.kernels()
    return mk.compiled() if way == "compiled" else mk._PLAIN


def random_cuts(rng: np.random.Generator, lanes: np.ndarray, n: int, d: int):
    """Random nodes tiling ``[0, n)`` (some rows outside every node) and a random cut per
    node: a dimension, a value of the node (or one past its maximum), a tie count ``t`` from
    0 to the node's rows equal to the value (so the smaller child is either side)."""
    edges = np.unique(np.concatenate([[0, n], rng.integers(0, n, size=int(rng.integers(1, 12)))]))
    lo, hi = edges[:-1], edges[1:]
    keep = rng.random(lo.size) < 0.85
    lo, hi = lo[keep].astype(np.int64), hi[keep].astype(np.int64)
    dim = rng.integers(0, d, size=lo.size).astype(np.int64)
    m, t, e, nl = (np.zeros(lo.size, np.int64) for _ in range(4))
    for i in range(lo.size):
        v = lanes[lo[i]:hi[i], dim[i]].astype(np.int64)
        m[i] = int(rng.choice(v)) + int(rng.random() < 0.1)
        e[i] = int(np.count_nonzero(v == m[i]))
        t[i] = int(rng.integers(0, e[i] + 1))
        nl[i] = int(np.count_nonzero(v < m[i])) + t[i]
    return lo, hi, dim, m, t, e, nl


def reference_cut(lanes: np.ndarray, lo, hi, dim, m, t) -> np.ndarray:
    """The records after stable partitions of every node (rows outside nodes unchanged)."""
    out = lanes.copy()
    for i in range(lo.size):
        seg = lanes[lo[i]:hi[i]]
        v = seg[:, dim[i]].astype(np.int64)
        eq = v == m[i]
        left = (v < m[i]) | (eq & (np.cumsum(eq) - 1 < t[i]))
        out[lo[i]:hi[i]] = np.concatenate([seg[left], seg[~left]])
    return out


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("seed", range(24))
def test_the_in_place_cut_is_the_stable_partition(way, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    d = int(rng.integers(1, 12))
    dtype = np.uint8 if seed % 3 else np.uint16
    top = 6 if seed % 2 else 250
    L = max(8, -(-((d + 1) * np.dtype(dtype).itemsize + 4) // 8) * 8 // np.dtype(dtype).itemsize)
    B = np.zeros((n + mp._spare_rows(n), L), dtype=dtype)
    lanes = B[:n]
    lanes[:, :d] = rng.integers(0, top, size=(n, d))
    lanes.view(np.uint32)[:, -1] = rng.permutation(n)  # the row ids
    before = lanes.copy()
    lo, hi, dim, m, t, e, nl = random_cuts(rng, lanes, n, d)
    workers = int(rng.integers(1, 4))
    bounds = np.unique(np.concatenate([[0, lo.size], rng.integers(0, lo.size + 1, size=workers - 1)]))
    min_rows = int(rng.integers(1, 5))
    cmn = np.zeros((2 * lo.size, L), dtype=dtype)
    cmx = np.zeros_like(cmn)
    kernels(way)["apply"](B, B.view(np.uint64), n, lo, hi, dim, m, t, e, nl, d, min_rows, cmn, cmx,
                          bounds.astype(np.int64))
    want = reference_cut(before, lo, hi, dim, m, t)
    assert np.array_equal(lanes, want)
    for i in range(lo.size):
        for c, (a, b) in enumerate([(lo[i], lo[i] + nl[i]), (lo[i] + nl[i], hi[i])]):
            if b - a >= min_rows:
                assert np.array_equal(cmn[2 * i + c, :d], want[a:b, :d].min(axis=0))
                assert np.array_equal(cmx[2 * i + c, :d], want[a:b, :d].max(axis=0))


@pytest.mark.parametrize("way", WAYS)
def test_plan_counts_the_ties_of_its_median(way):
    """``out[:, 4]`` is the node's rows equal to the cut value, on the counting (narrow
    range) and the sorting (wide range) paths alike."""
    rng = np.random.default_rng(3)
    for top in (5, 5000):
        n = 300
        X = np.zeros((n, 8), dtype=np.uint16)
        X[:, 0] = rng.integers(0, top, size=n)
        X[:, 1] = rng.integers(0, 3, size=n)
        lo, hi = np.array([0, 120], np.int64), np.array([120, n], np.int64)
        dim = np.zeros(2, np.int64)
        mn = np.array([X[lo[i]:hi[i], 0].min() for i in range(2)], np.int64)
        mx = np.array([X[lo[i]:hi[i], 0].max() for i in range(2)], np.int64)
        for strict in (True, False):
            out = np.zeros((2, 5), np.int64)
            cc = np.zeros((2, 2, 3), np.int64)
            kernels(way)["plan"](X, 1, lo, hi, dim, mn, mx, np.zeros(2, np.int64), np.zeros((1, 1, 1), np.int64),
                                 strict, np.zeros((1, 5001), np.int64), np.zeros((1, 64), np.int64), cc, out,
                                 np.array([0, 2], np.int64))
            for i in range(2):
                assert out[i, 0] == 1
                assert out[i, 4] == np.count_nonzero(X[lo[i]:hi[i], 0] == out[i, 1])


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_many_batches_on_several_threads_give_the_reference_tree(monkeypatch, seed, strict):
    """Every batch cut by all workers, levels split into many batches: the same tree."""
    monkeypatch.setattr(mp, "_PARALLEL_ROWS", 1)
    monkeypatch.setattr(mp, "_THREAD_ROWS", 1)
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(mp, "_BATCH_ROWS", 1 << 6)
    monkeypatch.setattr(mp, "_BATCH_NODES", 3)
    monkeypatch.setattr(mk, "FORCE", "compiled")
    t = random_table(seed, n=int(np.random.default_rng(seed).integers(200, 900)))
    model = make_model(MODELS[seed % len(MODELS)])
    p = make_algorithm("mondrian", model=model, strict=strict).partition(t)
    assert_same_tree(p, reference_tree(t, model, strict, "ordered"))


def test_each_run_uses_the_thread_count_numba_has_then(monkeypatch):
    """The planner reads numba's thread count per run (the replay lowers it to one around small
    re-runs): a run inside such a section uses one worker, a run after it every thread."""
    import numba

    seen = []
    monkeypatch.setattr(mp, "_THREAD_ROWS", 1)  # threads for any size, on an idle host
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    real = mp._workers
    monkeypatch.setattr(mp, "_workers", lambda lo, hi, n: (seen.append(n), real(lo, hi, n))[1])
    monkeypatch.setattr(mk, "FORCE", "compiled")
    t = random_table(3, n=400)
    algo = make_algorithm("mondrian", model=make_model("k=3"), strict=True)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        algo.partition(t)
    finally:
        numba.set_num_threads(before)
    assert seen and set(seen) == {1}
    seen.clear()
    algo.partition(t)
    assert seen and set(seen) == {min(before, mp._MAX_WORKERS)}


def test_plain_and_compiled_runs_are_identical(monkeypatch):
    t = random_table(11, n=500)
    out = []
    for way in WAYS:
        monkeypatch.setattr(mk, "FORCE", way)
        p = make_algorithm("mondrian", model=make_model("l=2"), strict=False, seed=0).partition(t)
        out.append((p.group, p.extra["row_order"], p.extra["tree_lo"], p.extra["tree_value"]))
    for way in out[1:]:
        for a, b in zip(out[0], way):
            assert np.array_equal(a, b)


def test_records_carry_their_scratch_and_foreign_ones_are_copied():
    t = random_table(5, n=3000)
    space = mp.MondrianSpace(t, "ordered")
    R = space.table_record(t, t.sa_codes, t.sa_domain.n_values)
    B = mp._with_spare(R)
    assert B.shape[0] == R.shape[0] + mp._spare_rows(R.shape[0]) and np.shares_memory(B, R)
    assert np.array_equal(B[:R.shape[0]], R)
    plain = np.array(R)  # no scratch after it: copied once
    C = mp._with_spare(plain)
    assert not np.shares_memory(C, plain) and np.array_equal(C[:plain.shape[0]], plain)


def test_releasing_the_scratch_keeps_the_records():
    """A buffer large enough for a memory map: the scratch pages go back (they read as
    zeros again), the records stay."""
    n, width = 1 << 20, 16
    B = mp._zeros(n + mp._spare_rows(n), width, np.dtype(np.uint8))
    rng = np.random.default_rng(0)
    B[:n] = rng.integers(0, 256, size=(n, width), dtype=np.uint8)
    B[n:] = 7
    keep = B[:n].copy()
    mp._release_tail(B, n)
    assert np.array_equal(B[:n], keep)
    page = mp.mmap.PAGESIZE
    first_free = -(-n * width // page) * page // width  # first row of a released page
    assert not B[first_free:].any()


def test_threaded_and_single_thread_variants_are_cached_apart(tmp_path):
    """numba's cache keys a function by name, line and bytecode, not by ``parallel=``: the
    two variants of a kernel must be cached under names of their own, else whichever was saved
    last is loaded for both (the threaded kernels then ran on one thread)."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from openbook.algorithms import mondrian_kernels as mk\n"
            "K = mk.compiled()\n"
            "X = (np.arange(64 * 8, dtype=np.uint8) % 7).reshape(64, 8)\n"
            "lo = np.array([0, 32]); hi = np.array([32, 64])\n"
            "mn = np.empty((2, 8), np.uint8); mx = np.empty_like(mn)\n"
            "K['ranges'].serial(X, lo, hi, 8, mn, mx, np.array([0, 2]))\n"
            "K['ranges'].parallel(X, lo, hi, 8, mn, mx, np.array([0, 1, 2]))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    index = sorted(p.name.split("-")[0] for p in tmp_path.rglob("*.nbi") if ".ranges" in p.name)
    assert index == ["mondrian_kernels.ranges", "mondrian_kernels.ranges_serial"]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("categorical", ["ordered", "hierarchy"])
@pytest.mark.parametrize("seed", range(8))
def test_numpy_kernels_give_the_compiled_tree(monkeypatch, seed, strict, categorical):
    """The numpy kernels (small problems, no numba) build the compiled kernels' tree."""
    monkeypatch.setattr(mp, "_BATCH_NODES", 5)
    t = random_table(seed, n=int(np.random.default_rng(seed).integers(50, 900)))
    model = make_model(MODELS[seed % len(MODELS)])
    out = []
    for way in ("numpy", "compiled"):
        monkeypatch.setattr(mk, "FORCE", way)
        p = make_algorithm("mondrian", model=model, strict=strict, categorical=categorical, seed=0).partition(t)
        out.append([p.group, *(p.extra[k] for k in ("row_order", "tree_lo", "tree_hi", "tree_dim", "tree_value",
                                                     "tree_ties", "tree_parent"))])
    for a, b in zip(*out):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_small_run_never_imports_numba(tmp_path):
    """A small ``anonymize`` and ``check`` (Mondrian, the default algorithm) run without
    numba: the plain-Python and numpy kernels cover tables that loading numba would cost
    more than."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, pandas as pd\n"
            "from openbook.cli import main\n"
            "rng = np.random.default_rng(0)\n"
            "n = 20000\n"
            "pd.DataFrame({'age': rng.integers(18, 90, n), 'zip': rng.choice(list('abcdefgh'), n),\n"
            "              'sex': rng.choice(['F', 'M'], n), 'hours': rng.integers(1, 99, n),\n"
            "              'sa': rng.choice(['u', 'v', 'w', 'x', 'y'], n)}).to_csv(sys.argv[1] + '/t.csv', index=False)\n"
            "q = ['--qi', 'age:numeric,zip,sex,hours:numeric', '--sa', 'sa', '--quiet']\n"
            "for args in (['anonymize', sys.argv[1] + '/t.csv', *q, '-m', 'k=5', '--algorithm', 'mondrian',\n"
            "              '--no-certify', '-o', sys.argv[1] + '/m.csv'],\n"
            "             ['anonymize', sys.argv[1] + '/t.csv', *q, '-m', 'k=5', '--algorithm', 'mondrian',\n"
            "              '--no-strict', '--no-certify', '-o', sys.argv[1] + '/r.csv'],\n"
            "             ['check', sys.argv[1] + '/t.csv', *q], ['check', sys.argv[1] + '/m.csv']):\n"
            "    try:\n"
            "        rc = main(args)\n"
            "    except SystemExit as exc:\n"
            "        rc = exc.code\n"
            "    assert not rc, (args, rc)\n"
            "print(sorted(m for m in ('numba', 'llvmlite') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_threads_by_size_and_load(monkeypatch):
    """One thread below ``_THREAD_ROWS`` rows or on a host whose load leaves no processor
    idle; numba's count on an idle host."""
    monkeypatch.setattr(mp.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert mp.useful_threads(4, mp._THREAD_ROWS - 1) == 1
    assert mp.useful_threads(4, mp._THREAD_ROWS) == 4
    assert mp.useful_threads(1, 10 * mp._THREAD_ROWS) == 1
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (2.5, 0.0, 0.0))
    assert mp.useful_threads(4, mp._THREAD_ROWS) == 2
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (11.0, 0.0, 0.0))
    assert mp.useful_threads(4, mp._THREAD_ROWS) == 1
