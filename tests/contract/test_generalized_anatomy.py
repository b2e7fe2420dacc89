"""Generalized Anatomy against a brute force over possible worlds (:mod:`possible_worlds`):
every assignment of the published SA multiset to the people, and for each every outcome of the
algorithm's random draws (a uniform random order within each SA value), re-run end to end; a
world counts with the probability that it publishes **every byte the observed release
publishes** — the QI-table, the SA-table and the sidecar. The exact posterior read off that
enumeration must equal the formula the adversary who knows the algorithm computes
(:mod:`openbook.attacks.decoupled`: a person's posterior is their QI class's average of its
rows' group frequencies), be at most the certificate's target, and the certificate made with
the release must equal the one recomputed from its saved files. Exact fractions throughout.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.registry import make_adversary
from openbook.certificate import certify
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model
from openbook.models.promise import attribute_target
from openbook.release import load_release, save_release
from openbook.release.sidecar import public_record

from possible_worlds import KeyRng, posterior, with_sa, within_cell_orders


@contextmanager
def _rng_is(factory):
    """Every ``numpy.random.default_rng(...)`` call made while re-running the algorithm returns
    ``factory()``: its random draws come from the enumeration."""
    real = np.random.default_rng
    np.random.default_rng = lambda *a, **k: factory()
    try:
        yield
    finally:
        np.random.default_rng = real


def _table(ages, sexes, sa, sets=None):
    df = pd.DataFrame({"age": ages, "sex": sexes, "disease": sa})
    return encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease", sensitive_sets=sets or {}))


def _published(release) -> tuple:
    """Every byte a reader gets: the QI-table, the SA-table and the sidecar's record."""
    rec = public_record({k: v for k, v in release.meta.items() if k not in ("certificate",)})
    return (release.data.astype(str).to_csv(index=False), release.sa_table.astype(str).to_csv(index=False),
            repr(sorted((k, repr(v)) for k, v in rec.items())))


def _distinct_permutations(values: list[int]):
    return sorted(set(itertools.permutations(values)))


def _brute(t, model, observed, params):
    """Exact posterior of every person: worlds are the permutations of the published SA
    multiset; each is weighted by the share of the algorithm's draws that publish exactly
    ``observed``."""
    target = _published(observed)

    def worlds():
        for perm in _distinct_permutations(t.sa_codes.tolist()):
            w = np.asarray(perm, dtype=np.int64)
            tw = with_sa(t, w)
            hit = tot = 0
            for key in within_cell_orders(w):
                with _rng_is(lambda key=key: KeyRng(key)):
                    try:
                        rel = make_algorithm("generalized-anatomy", model=model, seed=0, **params).anonymize(tw)
                        same = _published(rel) == target
                    except Exception:  # noqa: BLE001 - the algorithm refuses this world: no release
                        same = False
                tot += 1
                hit += same
            yield w, Fraction(hit, tot)

    return posterior(worlds(), t.n_rows, t.sa_domain.n_values)


def _formula(release, t, targets_masks) -> np.ndarray:
    """The decoupled formula in exact fractions: per QI class, the average over its rows of
    their group's frequency of each target."""
    counts, _ = release.sa_counts()
    gid, _ = release.classes()
    qcls, n_q = release.qi_classes()
    out = []
    for c in range(n_q):
        rows = np.flatnonzero(qcls == c)
        acc = [Fraction(0)] * targets_masks.shape[0]
        for r in rows:
            g = counts[gid[r]]
            for j, m in enumerate(targets_masks):
                acc[j] += Fraction(int(g[m].sum()), int(g.sum()))
        out.append([a / len(rows) for a in acc])
    return out


CASES = [
    # (ages, sexes, SA, model, params, sets)
    ([21, 22, 35, 36, 50, 51], list("FMFMFM"), ["flu", "hiv", "flu", "cold", "hiv", "cold"], "l=2", {"k": 2}, None),
    ([21, 22, 23, 40, 41, 42], list("FFFMMM"), ["flu", "flu", "hiv", "cold", "hiv", "cold"], "k=3", {}, None),
    ([30, 31, 32, 33, 60, 61], list("MFMFMF"), ["flu", "hiv", "flu", "flu", "hiv", "cold"], "simple-l=2,set=s",
     {"k": 2}, {"s": ["hiv"]}),
    ([20, 21, 40, 41, 60, 61], list("FFMMFF"), ["a", "b", "a", "b", "a", "b"], "t=0.2", {"k": 2}, None),
    ([20, 25, 30, 35, 40], list("FMFMF"), ["x", "y", "z", "x", "y"], "entropy-l=2", {"k": 2}, None),
]


@pytest.mark.slow  # over 10 s: run by .ci/run (pytest -m slow)
@pytest.mark.parametrize("ages, sexes, sa, spec, params, sets", CASES)
def test_posterior_is_the_class_average_of_group_frequencies(ages, sexes, sa, spec, params, sets):
    t = _table(ages, sexes, sa, sets)
    model = make_model(spec)
    release = make_algorithm("generalized-anatomy", model=model, seed=7, **params).anonymize(t)
    n_v = t.sa_domain.n_values
    brute = _brute(t, model, release, params)
    # the adversary who knows the algorithm, and the baseline, both exact, every SA value
    eye = np.eye(n_v, dtype=bool)
    formula = _formula(release, t, eye)
    from openbook.attacks.decoupled import people_classes

    people = people_classes(release, t)
    for i in range(t.n_rows):
        assert [brute[i, v] for v in range(n_v)] == formula[people[i]], i
    for name in ("replay", "baseline"):
        res = make_adversary(name).run(release, original=t)
        cols = [res.targets.index(str(v)) for v in t.sa_domain.values] if res.targets[0] in map(
            str, t.sa_domain.values) else None
        if cols is not None:
            np.testing.assert_allclose(res.posterior[:, cols], np.asarray(brute, dtype=float), atol=1e-12)
    # the certificate: both lines pass, its worst posterior is the brute force's
    cert = certify(release, original=t, max_reid_risk=1 / release.meta["algorithm"]["qi_k"])
    assert cert.verdict == "pass", cert.headline()
    tgt = attribute_target(model)
    bmax = float(max(max(row) for row in brute))
    if tgt.posterior is not None and not sets:
        assert bmax <= tgt.posterior + 1e-12
    if tgt.certainty:
        assert bmax < 1
    replay = next(f for f in cert.findings if f.adversary == "replay")
    if not sets:
        assert replay.max_posterior == pytest.approx(bmax, abs=1e-12)


@pytest.mark.parametrize("ages, sexes, sa, spec, params, sets", CASES[:3])
def test_write_time_and_read_back_certificates_agree(tmp_path, ages, sexes, sa, spec, params, sets):
    t = _table(ages, sexes, sa, sets)
    release = make_algorithm("generalized-anatomy", model=make_model(spec), seed=3, **params).anonymize(t)
    reid = 1 / release.meta["algorithm"]["qi_k"]
    now = certify(release, original=t, max_reid_risk=reid)
    files = save_release(release, tmp_path / "r.csv")
    back = load_release(files[0])
    later = certify(back, original=t, max_reid_risk=reid)
    assert later.verdict == now.verdict == "pass"
    for a, b in zip(now.findings, later.findings):
        assert (a.adversary, a.max_posterior, a.n_above, a.n_unresolved) == (
            b.adversary, b.max_posterior, b.n_above, b.n_unresolved)
    for name in ("replay", "baseline", "reidentification"):
        np.testing.assert_array_equal(now.results[name].posterior, later.results[name].posterior)


@st.composite
def _tiny_tables(draw):
    n = draw(st.integers(4, 6))
    ages = draw(st.lists(st.integers(20, 70), min_size=n, max_size=n))
    sexes = draw(st.lists(st.sampled_from("FM"), min_size=n, max_size=n))
    sa = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    spec = draw(st.sampled_from(["l=2", "k=2", "t=0.4", "alpha=0.5"]))
    k = draw(st.integers(1, 3))
    return ages, sexes, sa, spec, k


@pytest.mark.slow  # over 10 s: run by .ci/run (pytest -m slow)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_tiny_tables())
def test_random_tiny_tables_brute_force(case):
    ages, sexes, sa, spec, k = case
    t = _table(ages, sexes, sa)
    model = make_model(spec)
    try:
        release = make_algorithm("generalized-anatomy", model=model, seed=1, k=k).anonymize(t)
    except Exception:  # noqa: BLE001 - an ineligible table: the algorithm refuses, nothing to check
        return
    brute = _brute(t, model, release, {"k": k})
    res = make_adversary("replay").run(release, original=t)
    cols = [res.targets.index(str(v)) for v in t.sa_domain.values]
    np.testing.assert_allclose(res.posterior[:, cols], np.asarray(brute, dtype=float), atol=1e-12)
    tgt = attribute_target(model)
    bmax = float(max(max(row) for row in brute))
    if tgt.posterior is not None:
        assert bmax <= tgt.posterior + 1e-12
    if tgt.certainty:
        assert bmax < 1
    if tgt.distance is not None:
        cert = certify(release, original=t, max_reid_risk=1 / k)
        assert cert.line_named("attribute").passes
