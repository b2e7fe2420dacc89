"""Wide SA domains (issue 25: a 6,000-value SA took minutes and 24 GB to certify): the
products that were ``n_classes × n_values × n_targets`` are computed without that array, and
give the same figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.baseline import target_counts
from openbook.attacks.replay import replay_attack
from openbook.attacks.replay.solve import to_targets
from openbook.data.table import EncodedTable
from openbook.models import make_model


@pytest.mark.parametrize("seed", range(4))
def test_to_targets_is_the_per_leaf_product(seed):
    rng = np.random.default_rng(seed)
    n_leaves, v, t, cells = 5, 7, 4, 11
    cell_leaf = rng.integers(0, n_leaves, cells)
    x = rng.random((3, cells, v))
    per_leaf = rng.random((n_leaves, v, t))
    one = np.broadcast_to(rng.random((1, v, t)), (n_leaves, v, t))
    for tm in (per_leaf, one):
        want = np.einsum("wcv,cvt->wct", x, tm[cell_leaf])
        np.testing.assert_allclose(to_targets(x, tm, cell_leaf), want, rtol=1e-12, atol=1e-12)


def test_to_targets_on_a_wide_identity_uses_no_dense_cube():
    """2,000 values, each its own target, 300 cells: the sparse path equals the product, and
    its peak allocation (tracemalloc, which numpy reports to) stays far below the 9.6 GB of a
    cells x values x targets array."""
    import tracemalloc

    rng = np.random.default_rng(1)
    v = 2000
    tm = np.broadcast_to(np.eye(v)[None], (40, v, v))
    x = rng.random((300, v))
    cell = rng.integers(0, 40, 300)
    tracemalloc.start()
    try:
        got = to_targets(x, tm, cell)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, x)
    assert peak < 200 * 2**20, peak  # the dense cube: 300 * 2000 * 2000 * 8 bytes


def test_to_targets_of_a_unit_without_leaves_is_zeros():
    """No leaf, no weight: zeros of the targets' width (it indexed ``tm[0]`` and raised)."""
    got = to_targets(np.zeros((2, 0, 3)), np.zeros((0, 3, 4)), np.zeros(0, dtype=np.int64))
    assert got.shape == (2, 0, 4) and not got.any()


@pytest.mark.parametrize("seed", range(3))
def test_target_counts_equals_the_integer_product(seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 50, (9, 6))
    for masks in (np.eye(6, dtype=bool), rng.random((3, 6)) < 0.5):
        np.testing.assert_array_equal(target_counts(counts, masks), counts @ masks.T.astype(np.int64))


@pytest.mark.parametrize("name, params", [("mondrian", {"strict": True}), ("mondrian", {"strict": False}),
                                          ("gg", {}), ("sg", {})])
def test_a_model_that_reads_no_sa_replays_as_class_frequencies(name, params):
    """k-anonymity reads group sizes only: the replay's shortcut (every world equally likely)
    gives exactly what replaying every decision gives."""
    from openbook.attacks.replay import attack

    rng = np.random.default_rng(7)
    t = EncodedTable.from_codes(qi_codes=rng.integers(0, 6, (60, 2)), sa_codes=rng.integers(0, 5, 60))
    algo = make_algorithm(name, model=make_model("k=3"), **params)
    part = algo.partition(t)
    fast = replay_attack(t, part.group, algo)
    try:
        attack.SHORTCUT_WITHOUT_SA = False  # no shortcut: every decision replayed
        slow = replay_attack(t, part.group, algo)
    finally:
        attack.SHORTCUT_WITHOUT_SA = True
    np.testing.assert_allclose(fast.posterior, slow.posterior, rtol=0, atol=1e-12)


def test_k_anonymity_on_a_wide_sa_is_certified():
    """The issue's shape, smaller: 3,000 people, an SA of 1,500 values, k = 5 — certified (it
    ran out of memory at 8,000 people and 2,000 values)."""
    import openbook

    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"edu": rng.integers(0, 16, n), "exp": rng.integers(0, 40, n),
                       "region": rng.choice(list("NSEW"), n), "wage": rng.integers(0, 1500, n).astype(str)})
    for algorithm in ("mondrian", None):
        kw = {} if algorithm is None else {"algorithm": algorithm}
        out = openbook.anonymize(df, qi=["edu:numeric", "exp:numeric", "region"], sa="wage", model="k=5",
                                 max_risk=1.0, **kw)
        assert out.certificate["verdict"] == "pass"


@pytest.mark.parametrize("seed", range(3))
def test_max_bound_and_max_posterior_in_one_pass_equal_the_definitions(seed):
    """``max_posterior``/``max_bound`` reduce with ``fmax`` (no copy; in blocks of rows when
    sampled): the same as the nan-aware maximum of :meth:`bound` per row, NaN rows NaN."""
    from openbook.attacks.base import AttackResult

    rng = np.random.default_rng(seed)
    n, t = 500, 7
    post = rng.random((n, t))
    post[rng.random((n, t)) < 0.2] = np.nan
    post[rng.random(n) < 0.1] = np.nan  # whole rows not evaluated
    se = rng.random((n, t)) * 0.1
    se[rng.random((n, t)) < 0.05] = np.nan
    for stderr in (None, se):
        r = AttackResult("x", post, [str(i) for i in range(t)], np.arange(n), stderr=stderr)
        b = r.bound()
        rows = ~np.all(np.isnan(b), axis=1)
        want = np.full(n, np.nan)
        want[rows] = np.nanmax(b[rows], axis=1)
        np.testing.assert_array_equal(r.max_bound(), want)
        wantp = np.full(n, np.nan)
        wantp[~np.all(np.isnan(post), axis=1)] = np.nanmax(post[~np.all(np.isnan(post), axis=1)], axis=1)
        np.testing.assert_array_equal(r.max_posterior(), wantp)


def _compact_and_dense(seed: int, with_se: bool):
    """A random compact result (shared rows, tuples pointing at them, some at -1) and the
    same figures laid out per tuple."""
    from openbook.attacks.base import AttackResult

    rng = np.random.default_rng(seed)
    k, n, t = 9, 60, 5
    shared = rng.random((k, t))
    shared[rng.random(k) < 0.2] = np.nan  # a class nobody could evaluate
    se = rng.random((k, t)) * 0.05 if with_se else None
    rows = rng.integers(-1, k, n)
    group = np.where(rows >= 0, rng.integers(0, 4, n), -1)
    unres = rng.random(n) < 0.1
    dense = np.full((n, t), np.nan)
    dense[rows >= 0] = shared[rows[rows >= 0]]
    dse = None
    if se is not None:
        dse = np.zeros((n, t))
        dse[rows >= 0] = se[rows[rows >= 0]]
    names = [str(i) for i in range(t)]
    compact = AttackResult("x", shared, names, group, l=2.0, stderr=se, unresolved=unres.copy(), rows=rows)
    plain = AttackResult("x", dense, names, group, l=2.0, stderr=dse, unresolved=unres.copy())
    return compact, plain, rng


@pytest.mark.parametrize("with_se", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_a_compact_result_reads_as_its_per_tuple_matrix(seed, with_se):
    """The compact form (one posterior row per class, each tuple pointing at its row; issue 25)
    gives every summary the per-tuple matrix gives — max posterior, bound, unresolved, the
    largest standard error, the audit summary — without expanding, and expands to that
    matrix when read."""
    compact, plain, rng = _compact_and_dense(seed, with_se)
    np.testing.assert_array_equal(compact.max_posterior(), plain.max_posterior())
    np.testing.assert_array_equal(compact.max_bound(), plain.max_bound())
    np.testing.assert_array_equal(compact.unresolved_mask(), plain.unresolved_mask())
    mask = rng.random(plain.n_tuples) < 0.5
    a, b = compact.max_stderr(mask), plain.max_stderr(mask)
    assert (a is None and b is None) or np.isclose(a, b, equal_nan=True) or (np.isnan(a) and b in (0.0,))
    sa, sb = compact.summary().to_dict(groups=None), plain.summary().to_dict(groups=None)
    assert sa == sb
    assert compact.compact  # nothing above expanded it
    np.testing.assert_array_equal(compact.posterior, plain.posterior)
    assert not compact.compact
    if with_se:
        np.testing.assert_array_equal(compact.stderr, plain.stderr)


@pytest.mark.parametrize("seed", range(4))
def test_set_rows_on_a_compact_result_equals_assigning_the_matrix(seed):
    """Absent people's posteriors (one row for all, or one each, with or without errors) given
    to a compact result without expanding it: the same matrices as assigning per tuple."""
    compact, plain, rng = _compact_and_dense(seed, bool(seed % 2))
    t = len(plain.targets)
    for _ in range(2):
        mask = rng.random(plain.n_tuples) < 0.3
        if rng.random() < 0.5:
            p, se = rng.random(t), None
        else:
            p, se = rng.random((int(mask.sum()), t)), rng.random((int(mask.sum()), t)) * 0.01
        compact.set_rows(mask, p, se)
        assert compact.compact
        plain.set_rows(mask, p, se)
    np.testing.assert_array_equal(compact.max_bound(), plain.max_bound())
    np.testing.assert_array_equal(compact.posterior, plain.posterior)
    if plain.stderr is None:
        assert compact.stderr is None
    else:
        np.testing.assert_array_equal(compact.stderr, plain.stderr)


def test_a_compact_result_refuses_rows_outside_its_matrix():
    from openbook.attacks.base import AttackResult

    with pytest.raises(ValueError, match="outside"):
        AttackResult("x", np.zeros((2, 1)), ["v"], np.zeros(3, dtype=np.int64), rows=np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="rows has shape"):
        AttackResult("x", np.zeros((2, 1)), ["v"], np.zeros(3, dtype=np.int64), rows=np.array([0, 1]))


def _certified_without_expanding(monkeypatch, *, seed: int, n: int, wages: int, model: str,
                                 **kw) -> tuple[dict, dict]:
    """A Mondrian release of a synthetic wage table (``wages`` SA values) certified twice: as
    usual, then with expanding a compact result made to fail — both certificates, timings
    dropped."""
    from openbook.attacks.base import AttackResult
    from openbook.certificate import certify
    from openbook.data.schema import Schema
    from openbook.data.table import encode

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"edu": rng.integers(0, 16, n), "exp": rng.integers(0, 40, n),
                       "region": rng.choice(list("NSEW"), n), "wage": rng.integers(0, wages, n).astype(str)})
    t = encode(df, Schema.build(qi=["edu:numeric", "exp:numeric", "region"], sa="wage"))
    rel = make_algorithm("mondrian", model=make_model(model)).anonymize(t)
    want = certify(rel, original=t, max_risk=1.0, **kw).to_dict()

    def refuse(self):
        if self.rows is not None:
            raise AssertionError("the per-person matrix was built")

    monkeypatch.setattr(AttackResult, "_expand", refuse)
    got = certify(rel, original=t, max_risk=1.0, **kw).to_dict()
    for d in (want, got):
        d.pop("seconds", None)
        for f in d.get("adversaries", []):
            f.pop("seconds", None)
    return want, got


def test_certifying_k_anonymity_on_a_wide_sa_never_expands_the_posteriors(monkeypatch):
    """The baseline and the replay keep one posterior row per class, and the certificate reads
    them so: no per-person × per-value matrix is ever built (what took 8 GB on the issue's
    28,000 × 6,000 case). Expanding is made to fail; the certificate is unchanged."""
    want, got = _certified_without_expanding(monkeypatch, seed=3, n=2000, wages=800, model="k=5")
    assert got == want and got["verdict"] == "pass"


def test_absent_people_given_to_a_compact_result_leave_the_release_untouched():
    """The baseline's compact result points its people at their classes through the release's
    own class array; adding absent people (``set_rows``) must not write into it."""
    from openbook.attacks.base import AttackResult

    cls = np.array([0, 1, 1, -1, 0], dtype=np.int64)
    keep = cls.copy()
    r = AttackResult("x", np.array([[0.5], [1.0]]), ["v"], cls, rows=cls)
    r.set_rows(cls < 0, np.array([0.25]))
    np.testing.assert_array_equal(cls, keep)
    np.testing.assert_array_equal(r.max_posterior(), [0.5, 1.0, 1.0, 0.25, 0.5])


def test_certifying_t_closeness_reads_one_distance_per_shared_row(monkeypatch):
    """Under t-closeness the attribute line measures each person's posterior distribution
    against the table's: computed once per shared posterior row of a compact result, never
    on a per-person × per-value matrix (expanding is made to fail; the certificate, distances
    included, is unchanged)."""
    want, got = _certified_without_expanding(monkeypatch, seed=5, n=1500, wages=60, model="k=5,t=0.5",
                                             adversaries=["baseline"])
    assert got == want
    base = next(f for f in got["adversaries"] if f["adversary"] == "baseline")
    assert base["distance_target"] == 0.5 and base["max_distance"] is not None and 0 < base["max_distance"] <= 0.5
