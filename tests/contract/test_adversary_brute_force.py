"""Every registered adversary, through ``make_adversary``, against a brute force over possible
worlds on tiny tables (:mod:`possible_worlds`): enumerate every assignment of the published
SA multisets to the people (or, where the algorithm changes values, every SA vector under a
prior), keep — for an adversary who knows the algorithm — only the worlds in which the
algorithm, re-run over every outcome of its random choices, produces the observed release,
and read off each person's weighted fraction. Exact fractions throughout.

Where the adversary's figure is by design not the exact posterior (linkage: paper 002's
``1/diversity``; minimality: Lemma 1's class-local exclusion; the eligibility attack: paper
004's ``Pr(S_i' = S1)``), the brute force checks it against its own definition and the test
states the relation to the exact posterior. For MASK the brute force shows the baseline is *not*
the algorithm-aware posterior, and the replay's bound (:mod:`openbook.attacks.distortion`) lies
above it (tests/soundness/test_mask_adversary.py checks it on random tables)."""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.registry import make_adversary
from openbook.attacks.replay.generic import canonical
from openbook.certificate import certify
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import OpenbookError
from openbook.models import make_model

from possible_worlds import (
    KeyRng,
    ScriptedRng,
    coin_sequences,
    every_outcome,
    every_world,
    posterior,
    same_grouping,
    with_sa,
    within_cell_orders,
    worlds_within,
)


def _tiny(seed: int, n: int = 8, values=("flu", "hiv", "cold"), p=(0.45, 0.25, 0.3), sets=None):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.permutation(np.arange(20, 20 + n)), "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(list(values), n, p=list(p))})
    return encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease", sensitive_sets=sets or {}))


def _columns(result, table) -> np.ndarray:
    """The adversary's posterior in the table's SA code order."""
    return result.posterior[:, [result.targets.index(str(v)) for v in table.sa_domain.values]]


def _float(brute: np.ndarray) -> np.ndarray:
    return np.asarray(brute, dtype=np.float64)


@contextmanager
def _rng_is(factory):
    """Every ``numpy.random.default_rng(...)`` call made while re-running an algorithm returns
    ``factory()``: the algorithm's random choices come from the enumeration."""
    real = np.random.default_rng
    np.random.default_rng = lambda *a, **k: factory()
    try:
        yield
    finally:
        np.random.default_rng = real


# ---------------------------------------------------------------------------------------
# the replay adversary: the algorithm re-run on every world, over all its random choices
# ---------------------------------------------------------------------------------------
def _deterministic(table, part, make):
    for w in worlds_within(table.sa_codes, part):
        try:
            g = make().partition(with_sa(table, w)).group
        except Exception:  # noqa: BLE001 - the algorithm refuses this world: it yields no release
            continue
        yield w, Fraction(int(same_grouping(g, part)))


@pytest.mark.parametrize("algo, params", [("gg", {}), ("sg", {}), ("mondrian", {"strict": True}),
                                          ("mondrian", {"strict": False}), ("full-domain-search", {})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replay_of_a_deterministic_algorithm(algo, params, seed):
    t = _tiny(seed)
    model = make_model("l=2")
    release = make_algorithm(algo, model=model, **params).anonymize(t)
    part = release.partition.group
    brute = posterior(_deterministic(t, part, lambda: make_algorithm(algo, model=model, **params)),
                      t.n_rows, t.sa_domain.n_values)
    adv = make_adversary("replay")
    assert adv.knows_algorithm(release), adv.knows_algorithm(release).reason
    res = adv.run(release, original=t)
    np.testing.assert_allclose(_columns(res, t), _float(brute), atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_replay_of_rgg_weighs_every_coin_sequence(seed):
    """RGG(p) adds the next bucket with probability p once a group holds (paper 000 §4.3):
    the brute force re-runs RGG on every world along every sequence of coin flips."""
    from openbook.algorithms.greedy import RandomizedGreedyGrouping

    t = _tiny(seed, n=10)
    model = make_model("l=2")
    p = Fraction(2, 5)
    release = make_algorithm("rgg", model=model, p=float(p), seed=seed).anonymize(t)
    part = release.partition.group

    def worlds():
        for w in worlds_within(t.sa_codes, part):
            tw = with_sa(t, w)

            def run(coin):
                a = RandomizedGreedyGrouping(model=model, p=float(p))
                a._extend = lambda rng: coin()  # RGG's one random decision, from the enumeration
                return a.partition(tw).group
            yield w, sum((q for g, q in coin_sequences(run, p) if same_grouping(g, part)), Fraction(0))

    brute = posterior(worlds(), t.n_rows, t.sa_domain.n_values)
    res = make_adversary("replay").run(release, original=t)
    np.testing.assert_allclose(_columns(res, t), _float(brute), atol=1e-9)


def _anatomy_worlds(t, part, model, base: str | None, name: str, params=None):
    """Worlds weighted by the probability that ``name`` (Anatomy, or anatomization of
    ``base``) re-run on them yields ``part``: the base algorithm is deterministic; Anatomy's
    uniform random key per row matters only through the order within each (base group, SA
    value) cell, so every such order is enumerated, each equally likely."""
    for w in worlds_within(t.sa_codes, part):
        q = _anatomy_outcomes(t, w, model, base, name, params or {}, lambda g: same_grouping(g, part))
        if q is not None:
            yield w, q


def _anatomy_outcomes(t, w, model, base: str | None, name: str, params, accept):
    """The probability, over every order of Anatomy's draws (each equally likely), that
    ``name`` run on the table with SA codes ``w`` yields a grouping ``accept`` takes;
    ``None`` when the base refuses the world (no release)."""
    tw = with_sa(t, w)
    if base is None:
        bg = np.zeros(t.n_rows, dtype=np.int64)
    else:
        try:
            bg = make_algorithm(base, model=model).partition(tw).group
        except Exception:  # noqa: BLE001 - no base partition: no release
            return None
    hit = tot = 0
    for key in within_cell_orders(bg * 1000 + w):
        with _rng_is(lambda key=key: KeyRng(key)):
            try:
                g = make_algorithm(name, model=model, seed=0, **params).partition(tw).group
            except Exception:  # noqa: BLE001
                g = None
        tot += 1
        hit += g is not None and accept(g)
    return Fraction(hit, tot)


@pytest.mark.parametrize("name, params", [("anatomy", {}), ("base-ana", {}), ("anatomize", {"base": "none"})])
@pytest.mark.parametrize("seed", [0, 1])
def test_replay_of_anatomy_is_the_class_frequency(name, params, seed):
    """Anatomy groups by SA alone (paper 000 Claim 4): every world consistent with the
    published multisets is equally likely to be grouped this way, so the algorithm-aware
    posterior is the baseline's — the replay's "sa-only" method, checked here."""
    t = _tiny(seed)
    model = make_model("l=2")
    release = make_algorithm(name, model=model, seed=seed, **params).anonymize(t)
    part = release.partition.group
    brute = posterior(_anatomy_worlds(t, part, model, None, name, params), t.n_rows, t.sa_domain.n_values)
    adv = make_adversary("replay")
    assert adv.knows_algorithm(release)
    res = adv.run(release, original=t)
    np.testing.assert_allclose(_columns(res, t), _float(brute), atol=1e-9)
    base = make_adversary("baseline").run(release, original=t)
    np.testing.assert_allclose(_columns(base, t), _float(brute), atol=1e-9)


def test_replay_of_set_anatomy_every_shuffle():
    """Set Anatomy's three shuffles (sensitive rows, other rows, group order) enumerated."""
    t = _tiny(4, n=6, sets={"s": ["hiv"]}, p=(0.5, 0.3, 0.2))
    model = make_model("simple-l=3,set=s")
    release = make_algorithm("set-anatomy", model=model, seed=1).anonymize(t)
    part = release.partition.group

    def worlds():
        for w in worlds_within(t.sa_codes, part):
            tw = with_sa(t, w)

            def run(rng: ScriptedRng):
                with _rng_is(lambda: rng):
                    return make_algorithm("set-anatomy", model=model, seed=0).partition(tw).group
            yield w, sum((q for g, q in every_outcome(run) if same_grouping(g, part)), Fraction(0))

    brute = posterior(worlds(), t.n_rows, t.sa_domain.n_values)
    res = make_adversary("replay").run(release, original=t)
    np.testing.assert_allclose(res.posterior[:, 0], _float(brute)[:, list(t.sa_domain.values).index("hiv")],
                               atol=1e-9)


@pytest.mark.parametrize("base, seed", [("gg", 3), ("gg", 4), ("sg", 9), ("sg", 5), ("mondrian", 2), ("mondrian", 6)])
def test_replay_of_anatomization_over_a_deterministic_base_is_the_brute_force(base, seed):
    """GG/SG/Mondrian decide their groups from the SA; anatomizing the groups keeps that
    decision, so the baseline is not the algorithm-aware posterior (the brute force — the
    base re-run, every order of Anatomy's draws enumerated — puts someone above it). The
    replay (the base re-run on every world, Anatomy's draws weighed in closed form,
    :mod:`openbook.attacks.replay.anatomized`) gives exactly the brute force's posteriors,
    and the certificate judges by it."""
    t = _tiny(seed, n=8 if base == "gg" else 10)
    model = make_model("l=2")
    name, params = (f"{base}-ana", {}) if base != "mondrian" else ("anatomize", {"base": "mondrian"})
    release = make_algorithm(name, model=model, seed=seed, **params).anonymize(t)
    part = release.partition.group
    brute = _float(posterior(_anatomy_worlds(t, part, model, base, name, params), t.n_rows,
                             t.sa_domain.n_values))
    base_post = _columns(make_adversary("baseline").run(release, original=t), t)
    if base != "mondrian":
        assert brute.max() > base_post.max() + 1e-9  # the leak the replay must see
    adv = make_adversary("replay")
    assert adv.knows_algorithm(release), adv.knows_algorithm(release).reason
    res = adv.run(release, original=t)
    np.testing.assert_allclose(_columns(res, t), brute, atol=1e-9)
    cert = certify(release, original=t, max_risk=1.0, max_reid_risk=1.0)
    assert cert.aware["adversary"] == "replay"
    attr = next(ln for ln in cert.lines if ln.name == "attribute")
    assert attr.worst == pytest.approx(max(brute.max(), base_post.max()))


def _tied_table(seed: int, age: str, n: int):
    """``n`` people of four ages and two sexes (many with equal QIs), three values, the set
    ``s`` = {hiv}."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.choice([30, 40, 50, 60], n), "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold"], n, p=[0.4, 0.3, 0.3])})
    return encode(df, Schema.build(qi=[age, "sex"], sa="disease", sensitive_sets={"s": ["hiv"]}))


def _replay_is_brute_force_in_memory_and_from_files(release, t, brute: np.ndarray, tmp_path) -> None:
    """The replay (``rerun_limit=1``: nothing re-run) resolves everyone and equals ``brute``,
    in memory and read back from the saved files, and the certificate's worst figure is its
    maximum."""
    from openbook.release import load_release

    adv = make_adversary("replay", rerun_limit=1)
    release.save(tmp_path / "r.csv")
    back = load_release(tmp_path / "r.csv")
    for rel in (release, back):
        res = adv.run(rel, original=t)
        assert not res.unresolved.any()
        if res.targets == ["set:s"]:  # the set's one value
            got, want = res.posterior, brute[:, [list(map(str, t.sa_domain.values)).index("hiv")]]
        else:
            got, want = _columns(res, t), brute
        np.testing.assert_allclose(got, want, atol=1e-9)
        cert = certify(rel, original=t, max_risk=1.0, max_reid_risk=1.0, params={"replay": {"rerun_limit": 1}})
        (f,) = [f for f in cert.findings if f.adversary == "replay"]
        assert f.ran and not f.n_unresolved and f.max_posterior == pytest.approx(want.max())


def _anatomy_writes(t, w, bg, nbg, l, observed, memo) -> Fraction:
    """The probability that Anatomy inside the base groups ``bg`` (SA codes ``w``), over
    every order of its draws, writes the file ``observed``. Each base group's draws are its
    own rows' uniform keys, so its part of the file is drawn independently of the others, and
    rows with equal QIs and values are interchangeable in it: per base group, every distinct
    order of each value's rows' QIs (each as likely) is run once (``memo``: by the QI
    multiset of each value's rows), and the parts combined."""
    from collections import Counter

    from openbook.algorithms.anatomy import anatomize_groups

    qi = np.unique(np.stack([np.asarray(t.columns[c].codes, dtype=np.int64) for c in t.qi_names], axis=1),
                   axis=0, return_inverse=True)[1].ravel()
    tw = with_sa(t, w)
    parts = []
    for b in range(nbg):
        rows = np.flatnonzero(bg == b)
        by_v = {v: rows[w[rows] == v] for v in np.unique(w[rows]).tolist()}
        key = tuple((v, tuple(sorted(qi[r].tolist()))) for v, r in by_v.items())
        if key not in memo:
            one = np.where(bg == b, 0, -1)
            dist: Counter = Counter()
            tot = 0
            # per value, every distinct order of its rows' QIs: keys ranking one row per position
            orders = [sorted(set(itertools.permutations(sorted(qi[r].tolist())))) for r in by_v.values()]
            for combo in itertools.product(*orders):
                k = np.zeros(t.n_rows)
                for (v, r), seq in zip(by_v.items(), combo):
                    free = {q: [int(x) for x in r if qi[x] == q] for q in set(seq)}
                    for rank, q in enumerate(seq):
                        k[free[q].pop()] = rank
                g = anatomize_groups(tw, one, 1, l, KeyRng(k[rows]))[0]
                dist[frozenset(_published_file(t, g, w).items())] += 1
                tot += 1
            memo[key] = {part: Fraction(c, tot) for part, c in dist.items()}
        # only the parts the observed file holds
        parts.append([(Counter(dict(part)), q) for part, q in memo[key].items()
                      if all(observed.get(k, 0) >= v for k, v in part)])
    total = Fraction(0)
    for combo in itertools.product(*parts):
        got: Counter = Counter()
        q = Fraction(1)
        for part, qp in combo:
            got.update(part)
            q *= qp
        total += q * (got == observed)
    return total


def _order_ana_outcome(t, w, model, base: str, p, observed, memo=None) -> Fraction:
    """The probability that anatomization over GG/RGG(p)/SG — people with equal QIs in row
    order, every sequence of RGG's coins, every order of Anatomy's draws
    (:func:`_anatomy_writes`) — run on the table with SA codes ``w`` writes the file
    ``observed`` (:func:`_published_file`)."""
    from openbook.algorithms.anatomy import anatomy_l

    tw = with_sa(t, w)
    l = anatomy_l("anatomize", None, model, t)
    memo = {} if memo is None else memo

    def run(coin):
        a = make_algorithm(base, model=model, ties="input", **({"p": float(p)} if base == "rgg" else {}))
        a._extend = lambda rng: coin()  # RGG's one random decision, from the enumeration
        part = a.partition(tw)
        return part.group, part.n_groups
    total = Fraction(0)
    for (bg, nbg), q in coin_sequences(run, Fraction(p)):
        total += q * _anatomy_writes(t, w, bg, nbg, l, observed, memo)
    return total


def _order_ana_is_brute_force(base, p, params, age, model, seed, tmp_path, n: int = 8) -> None:
    """The replay of anatomization over ``base`` on a table of ``n`` with equal QIs is the brute
    force of its files (:func:`_order_ana_outcome` over every arrangement of the values over
    the *people*; the mean over people with equal QIs when the base orders them by a secret
    draw), in memory and read back from the files."""
    t = _tied_table(seed, age, n)
    model = make_model(model)
    algo = make_algorithm(f"{base}-ana", model=model, seed=seed, **params)
    release = algo.anonymize(t)
    qi = np.stack([np.asarray(t.columns[c].codes) for c in t.qi_names], axis=1)
    same, n_same = np.unique(qi, axis=0, return_inverse=True)[1].ravel(), np.unique(qi, axis=0).shape[0]
    assert n_same < n  # people with equal QIs
    sa = np.asarray(t.sa_codes, dtype=np.int64)
    observed = _published_file(t, release.partition.group, sa)
    memo: dict = {}

    def worlds():
        for perm in sorted(set(itertools.permutations(sa.tolist()))):
            w = np.asarray(perm, dtype=np.int64)
            q = _order_ana_outcome(t, w, model, base, p, observed, memo)
            if q:
                yield w, q
    brute = _float(posterior(worlds(), n, t.sa_domain.n_values))
    if algo.interchangeable_ties:
        for r in range(n_same):  # a secret order of equal QIs: the mean over them
            brute[same == r] = brute[same == r].mean(axis=0)
    assert make_adversary("replay", rerun_limit=1).applies_to(release)
    _replay_is_brute_force_in_memory_and_from_files(release, t, brute, tmp_path)


@pytest.mark.parametrize("base, p", [("gg", 0), ("rgg", Fraction(1, 2)), ("rgg", Fraction(1, 4))])
@pytest.mark.parametrize("age, model, seed", [("age", "l=2", 1), ("age:numeric", "l=2", 9), ("age", "l=2", 13),
                                              ("age", "simple-l=2,set=s", 20), ("age:numeric", "l=2", 30)])
def test_anatomization_over_gg_and_rgg_is_the_brute_force_of_the_files(base, p, age, model, seed, tmp_path):
    """Anatomization over GG or RGG(p) is replayed along the base's order on any number of
    worlds (``rerun_limit=1``: nothing is re-run; :mod:`openbook.attacks.replay.anatomized_order`).
    The brute force owns no seating: every arrangement of the values over the *people*, the
    base re-run with people of equal QIs in row order, every sequence of RGG's coins and every
    order of Anatomy's draws, kept when the files written equal the observed ones; GG/RGG
    order such people by a secret draw, so each one's exact posterior is the mean over the
    people with their QIs. Equal, in memory and read back from the files, and so is the
    certificate's worst figure."""
    _order_ana_is_brute_force(base, p, {"p": float(p)} if base == "rgg" else {}, age, model, seed, tmp_path)


_SG_TEN = pytest.mark.slow  # tables of 10: the brute force takes up to ~20 s each (8: a few seconds)


@pytest.mark.parametrize("ties", ["input", "random"])
@pytest.mark.parametrize("age, model, seed, n", [
    ("age", "l=2", 14, 8), ("age:numeric", "simple-l=2,set=s", 14, 8), ("age", "entropy-l=2", 4, 8),
    ("age", "simple-l=2,set=s", 3, 8), ("age:numeric", "l=2", 16, 8),
    pytest.param("age", "simple-l=2,set=s", 3, 10, marks=_SG_TEN),
    pytest.param("age:numeric", "entropy-l=2", 6, 10, marks=_SG_TEN),
    pytest.param("age", "l=2", 4, 10, marks=_SG_TEN), pytest.param("age", "entropy-l=2", 7, 10, marks=_SG_TEN),
    pytest.param("age:numeric", "l=2", 1, 10, marks=_SG_TEN),
    pytest.param("age", "simple-l=2,set=s", 7, 10, marks=_SG_TEN),
    pytest.param("age", "entropy-l=2", 0, 10, marks=_SG_TEN)])
def test_anatomization_over_sg_is_the_brute_force_of_the_files(ties, age, model, seed, n, tmp_path):
    """Anatomization over SG is replayed along SG's even-split tree on any number of worlds
    (:mod:`openbook.attacks.replay.anatomized_tree`). The same brute force as GG's: every
    arrangement of the values over the people, SG re-run (equal QIs in row order), every
    order of Anatomy's draws — on tables of 8 and (slow) of 10, whose SG leaves include a
    whole table of five groups, halves of several, and leaves of one row. With
    ``ties="input"`` (SG's default) each person has their own figure; with a secret tie order
    the mean over their QIs."""
    _order_ana_is_brute_force("sg", 0, {"ties": ties}, age, model, seed, tmp_path, n=n)


def test_anatomization_past_the_rerun_limit_is_unresolved():
    """More possible worlds than ``rerun_limit``: the replay does not guess — its people are
    unresolved, and the certificate fails."""
    t = _tiny(3, n=10)
    # a base re-run on every world (relaxed Mondrian: no replay by its decisions)
    release = make_algorithm("anatomize", model=make_model("l=2"), seed=3, base="mondrian", strict=False).anonymize(t)
    adv = make_adversary("replay", rerun_limit=2)
    res = adv.run(release, original=t)
    assert res.unresolved.all()
    cert = certify(release, original=t, max_risk=1.0, max_reid_risk=1.0, params={"replay": {"rerun_limit": 2}})
    assert cert.verdict == "fail"


def test_mask_leaks_beyond_the_baseline_against_an_adversary_who_knows_it():
    """Paper 001 Theorem 3 says MASK is m-confidential because it "does not follow the
    minimality principle". An adversary who knows MASK also knows that a violating class was
    distorted to look like an ℓ-diverse one. Brute force: every SA vector of four people
    (uniform prior), MASK re-run over every random draw (D, the tuples, their new values),
    kept when it publishes the observed classes. The posterior of a class that could have
    been distorted exceeds the baseline's 1/2 = 1/ℓ. By hand: k = 2 makes four classes of two
    (ages 20-21, 22-23, ...); the true table has (hiv, hiv) in the first, so MASK draws the
    proportion 1/2 of the only ℓ-diverse class with the set (the second) and publishes
    (hiv, flu), (hiv, flu), (flu, flu), (flu, flu). The worlds that publish this are the 3 × 3
    choices of the first two classes among {hf, fh, hh} but (hh, hh) — in which both violate
    and D = {0} — each with probability 1: the first person is hiv in 5 of the 8: 5/8."""
    df = pd.DataFrame({"age": np.arange(20, 28), "sex": ["F"] * 8,
                       "disease": ["hiv", "hiv", "hiv", "flu", "flu", "flu", "flu", "flu"]})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease", sensitive_sets={"s": ["hiv"]}))
    model = make_model("simple-l=2,set=s")
    release = make_algorithm("mask", model=model, k=2, seed=0).anonymize(t)

    def classes(rel):  # each published class (by its generalized QIs) and its SA multiset
        return {lab: sorted(g["disease"].tolist()) for lab, g in rel.data.groupby("age")}

    observed = classes(release)
    values = [str(v) for v in t.sa_domain.values]

    def worlds():
        for w in every_world(t.n_rows, len(values)):
            tw = with_sa(t, w)

            def run(rng):
                with _rng_is(lambda: rng):
                    return classes(make_algorithm("mask", model=model, k=2, seed=0).anonymize(tw))
            yield w, sum((q for out, q in every_outcome(run) if out == observed), Fraction(0))

    brute = posterior(worlds(), t.n_rows, len(values))
    hiv = values.index("hiv")
    base = make_adversary("baseline").run(release, original=t)
    base_hiv = base.posterior[:, base.targets.index("set:s")]
    aware = np.array([float(x) for x in brute[:, hiv]])
    assert sorted(observed.values()) == [["flu", "flu"], ["flu", "flu"], ["flu", "hiv"], ["flu", "hiv"]]
    assert brute[0, hiv] == Fraction(5, 8) and aware.max() == pytest.approx(5 / 8)
    assert base_hiv.max() == pytest.approx(1 / 2)
    # the adversary who knows MASK (attacks/distortion.py) bounds the first class by what the
    # distortion could have hidden — both people hiv — above the brute force's 5/8
    cert = certify(release, original=t)
    assert cert.verdict == "fail" and cert.aware["adversary"] == "replay"
    bound = cert.results["replay"].max_bound()
    assert np.all(bound >= aware - 1e-12) and bound[0] == 1.0


def test_absent_peoples_posterior_equals_brute_force():
    """Full-domain with a suppression budget withholds whole classes that fail the model; the
    adversary knows who is absent. Enumerate every SA assignment of everyone (i.i.d. prior =
    the published distribution), keep those the algorithm turns into this release (the same
    published classes and the same absent people), and compare the absent people's posterior."""
    from openbook.hierarchy.builders import from_mapping

    h = from_mapping({"z1": "Z", "z2": "Z", "z3": "Z", "Z": "*"}, "zip")
    df = pd.DataFrame({"zip": ["z1", "z1", "z1", "z2", "z2", "z2", "z3"],
                       "disease": ["flu", "cold", "hiv", "flu", "cold", "hiv", "hiv"]})
    schema = Schema.build(qi=["zip"], sa="disease", sensitive_sets={"s": ["hiv"]})
    t = encode(df, schema, {"zip": h})
    model = make_model("simple-l=2,set=s")
    algo = make_algorithm("full-domain", model=model, levels=[0], max_suppression=0.3)
    release = algo.anonymize(t)
    absent = np.flatnonzero(release.partition.group < 0)
    assert absent.tolist() == [6]  # the lone z3 person: a class of one fails unless not hiv
    counts, dom = release.sa_counts()
    prior = {str(v): Fraction(int(c), int(counts.sum())) for v, c in zip(dom.values, counts.sum(axis=0))}
    values = [str(v) for v in t.sa_domain.values]
    pub_classes = sorted(sorted(release.data["disease"][release.data["zip"] == z].tolist())
                         for z in release.data["zip"].unique())

    def worlds():
        for w in every_world(t.n_rows, len(values)):
            weight = Fraction(1)
            for code in w:
                weight *= prior.get(values[code], Fraction(0))
            if weight == 0:
                continue
            try:
                rel_w = make_algorithm("full-domain", model=model, levels=[0], max_suppression=0.3).anonymize(
                    with_sa(t, w))
            except Exception:  # noqa: BLE001 - over the budget: this world yields no release
                continue
            same = (rel_w.partition.group < 0).tolist() == (release.partition.group < 0).tolist() and sorted(
                sorted(rel_w.data["disease"][rel_w.data["zip"] == z].tolist()) for z in rel_w.data["zip"].unique()
            ) == pub_classes
            yield w, weight * int(same)

    brute = posterior(worlds(), t.n_rows, len(values))
    res = make_adversary("replay").run(release, original=t)
    got = dict(zip(res.targets, res.posterior[absent[0]]))
    for target, p in got.items():
        want = brute[absent[0], values.index("hiv" if target.startswith("set:") else target)]
        assert p == pytest.approx(float(want), abs=1e-12), (target, p, want)


# ---------------------------------------------------------------------------------------
# minimality: Lemma 1 (class-local), checked against its definition
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_minimality_equals_lemma_1_by_brute_force(seed):
    """Paper 001 §4.1: in each generalized class, keep the assignments of its published
    multiset in which at least one of its original QID-ECs violates the model (all, when no
    assignment does); posterior = fraction of kept assignments. That is the minimality
    adversary's definition — for full-domain search it is not the algorithm-aware posterior
    (the replay's, :func:`test_replay_of_a_deterministic_algorithm`), docs/minimality.md."""
    rng = np.random.default_rng(seed)
    n = 9
    df = pd.DataFrame({"age": rng.integers(20, 24, n), "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold"], n, p=[0.5, 0.2, 0.3])})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease"))
    model = make_model("l=2")
    release = make_algorithm("full-domain-search", model=model).anonymize(t)
    group = release.partition.group
    assert release.meta["algorithm"]["minimality"] and (group >= 0).all()
    ec = pd.factorize(pd.Series([tuple(r) for r in t.qi_codes.tolist()]))[0]
    sa = t.sa_codes.astype(np.int64)
    K = t.sa_domain.n_values
    post = np.zeros((t.n_rows, K))
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        perms = sorted(set(itertools.permutations(sa[rows].tolist())))
        generalized = len(set(ec[rows].tolist())) > 1
        kept = []
        for perm in perms:
            w = np.asarray(perm)
            violates = [not bool(model.holds(np.bincount(w[ec[rows] == e], minlength=K)[None, :],
                                             t.sa_domain)[0]) for e in np.unique(ec[rows])]
            if any(violates):
                kept.append(w)
        kept = kept if (generalized and kept) else [np.asarray(p) for p in perms]
        for w in kept:
            post[rows, w] += 1.0 / len(kept)
    res = make_adversary("minimality").run(release, original=t)
    np.testing.assert_allclose(_columns(res, t), post, atol=1e-9)


# ---------------------------------------------------------------------------------------
# linkage (paper 002): 1 / diversity against the exact posterior of linked worlds
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linkage_is_the_exact_linked_posterior(seed):
    """Worlds consistent with both releases (each release's class multisets, people matched
    by their QIs), uniform: the adversary's posterior of every value equals the brute-force
    one, nobody unresolved. With a work budget too small to count the worlds it falls back to
    a bound, which is never below the exact posterior (the safe side). Paper 002's
    ``1/diversity`` stays in the notes, a lower bound of the exact maximum."""
    t = _tiny(seed, values=("flu", "hiv", "cold", "cancer"), p=(0.3, 0.2, 0.3, 0.2))
    model = make_model("l=2")
    r1 = make_algorithm("anatomy", model=model, seed=1).anonymize(t)
    r2 = make_algorithm("anatomy", model=model, seed=2).anonymize(t)
    g1, g2 = r1.partition.group, r2.partition.group

    def worlds():
        want = [sorted(t.sa_codes[g1 == c].tolist()) for c in np.unique(g1)]
        for w in worlds_within(t.sa_codes, g2):
            yield w, Fraction(int([sorted(w[g1 == c].tolist()) for c in np.unique(g1)] == want))

    brute = _float(posterior(worlds(), t.n_rows, t.sa_domain.n_values))
    res = make_adversary("linkage").run(r2, original=t, earlier=[r1])
    assert res.targets == [str(v) for v in t.sa_domain.values]
    np.testing.assert_allclose(res.posterior, brute, atol=1e-12)
    assert not res.unresolved.any()
    if seed == 0:  # counting across classes pins every value: the exact posterior is 1 for all
        assert np.all(brute.max(axis=1) == 1.0)


def test_linkage_over_its_budget_bounds_the_exact_posterior_from_above():
    """40 people: the default budget counts every component exactly; a budget of one
    transition leaves some bounded, and each bounded figure is at least the exact one."""
    t = _tiny(5, n=40, values=("flu", "hiv", "cold", "cancer"), p=(0.3, 0.2, 0.3, 0.2))
    model = make_model("l=2")
    r1 = make_algorithm("anatomy", model=model, seed=1).anonymize(t)
    r2 = make_algorithm("anatomy", model=model, seed=2).anonymize(t)
    exact = make_adversary("linkage").run(r2, original=t, earlier=[r1])
    bounded = make_adversary("linkage", budget=1).run(r2, original=t, earlier=[r1])
    assert exact.notes["methods"]["bound"] == 0 and bounded.notes["methods"]["bound"] > 0
    assert np.all(bounded.posterior >= exact.posterior - 1e-12)
    assert not bounded.unresolved.any()


# ---------------------------------------------------------------------------------------
# background knowledge (paper 003): p(t:x) of eq. 1-3 by enumeration
# ---------------------------------------------------------------------------------------
def test_background_equals_worst_case_possible_world_probability():
    """For every attribute set A of the mined knowledge, p(t:x) = Σ over the assignments of
    the group's multiset of Π p_A(t_i : x_i) [x_t = x] / Σ Π (paper 003 eq. 1-3); the
    adversary's figures are the worst over A of the largest sensitive value and of the set."""
    from openbook.inference.knowledge import mine_knowledge

    t = _tiny(7, n=8, sets={"s": ["hiv", "cold"]})
    model = make_model("simple-l=2,set=s")
    release = make_algorithm("anatomy", model=model, seed=0).anonymize(t)
    res = make_adversary("background", min_support=1, r=2).run(release, original=t)
    kn = mine_knowledge(t, min_support=1)
    sens = np.asarray(t.sa_domain.sensitive_mask("s"), dtype=bool)
    group = release.partition.group
    sa = t.sa_codes.astype(np.int64)
    worst = np.zeros(t.n_rows)
    worst_set = np.zeros(t.n_rows)
    for ks in kn.sets:
        P = [[Fraction(x).limit_denominator(10**9) for x in row] for row in ks.row_probs(t.qi_codes).tolist()]
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            num = np.zeros((rows.size, t.sa_domain.n_values), dtype=object)
            num[:] = Fraction(0)
            den = Fraction(0)
            for perm in set(itertools.permutations(sa[rows].tolist())):
                wgt = Fraction(1)
                for i, v in zip(rows, perm):
                    wgt *= P[i][v]
                den += wgt
                for j, v in enumerate(perm):
                    num[j, v] += wgt
            p = np.array([[float(x / den) for x in r] for r in num])
            worst[rows] = np.maximum(worst[rows], np.where(sens[None, :], p, 0.0).max(axis=1))
            worst_set[rows] = np.maximum(worst_set[rows], p[:, sens].sum(axis=1))
    np.testing.assert_allclose(res.posterior[:, 0], worst, atol=1e-9)
    np.testing.assert_allclose(res.posterior[:, 1], worst_set, atol=1e-9)


# ---------------------------------------------------------------------------------------
# the eligibility attack (paper 004): which published value was S1, by re-running the step
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["r-suppression", "unsafe-d"])
def test_eligibility_equals_the_skew_step_rerun_on_every_base_table(method):
    """Every base count vector B of |T| rows (the adversary's uniform prior over count
    vectors, paper 004 Example 5), the skew step re-run over every random choice (h, F, S1
    among ties, the tie order), kept when it publishes the observed counts; the posterior
    that value v was S1 — the value whose records were withheld."""
    from openbook.algorithms.skewed import Skewed
    from openbook.algorithms.suppression import r_suppression, unsafe_d_suppression

    df = pd.DataFrame({"age": np.arange(20, 32), "sex": ["F", "M"] * 6,
                       "disease": ["flu"] * 7 + ["hiv"] * 2 + ["cold"] * 2 + ["cancer"]})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease"))
    model = make_model("l=3")
    release = Skewed(make_algorithm("anatomy", model=model, seed=1), skew=method, seed=1).anonymize(t)
    counts, dom = release.sa_counts()
    published = counts.sum(axis=0).astype(np.int64)
    n, m, l = t.n_rows, published.size, 3
    num = [Fraction(0)] * m
    for combo in itertools.combinations_with_replacement(range(m), n - int(published.sum())):
        B = published.copy()
        for i in combo:
            B[i] += 1
        if l * int(B.max()) <= n:  # eligible: nothing would have been withheld
            continue

        def run(rng, B=B):
            with _rng_is(lambda: rng):
                plan = (r_suppression(B, l, seed=None) if method == "r-suppression"
                        else unsafe_d_suppression(B, l, seed=None))
            if method == "r-suppression":
                s1 = plan.choices["s1"]
            else:  # unsafe-d: S1 is the first of the ranking by count, ties by the drawn order
                s1 = int(np.lexsort((rng.script[0], -B))[0])
            return tuple(plan.published.tolist()), s1
        for (pub, s1), q in every_outcome(run):
            if pub == tuple(published.tolist()):
                num[s1] += q
    total = sum(num, Fraction(0))
    brute = [float(x / total) for x in num]
    res = make_adversary("eligibility").run(release, original=t)
    assert res.posterior.shape[0] == int((release.partition.group < 0).sum()) > 0
    np.testing.assert_allclose(res.posterior[0], [brute[list(dom.values).index(v)] for v in res.targets],
                               atol=1e-9)


# ---------------------------------------------------------------------------------------
# identity disclosure: which person a published record is
# ---------------------------------------------------------------------------------------
def test_reidentification_is_one_over_the_people_who_match():
    """Prosecutor model: a person is one of the ``f`` people whose QIs match their published
    record's class, each equally likely: ``1/f``, counted here from the original table."""
    t = _tiny(5, n=12)
    release = make_algorithm("mondrian", model=make_model("k=3"), strict=True).anonymize(t)
    res = make_adversary("reidentification").run(release, original=t)
    group = release.partition.group
    size = np.bincount(group)
    np.testing.assert_allclose(res.posterior[:, 0], 1.0 / size[group], atol=1e-12)


@pytest.mark.parametrize("seed, replay_max, minimality_max", [(0, Fraction(2, 3), Fraction(3, 4)),
                                                              (2, Fraction(1), Fraction(4, 5))])
def test_minimality_is_not_the_algorithm_aware_posterior_of_full_domain_search(seed, replay_max, minimality_max):
    """Where paper 001's adversary and the brute force disagree: full-domain search picks one
    lattice node for the whole table, so a class can be generalized because of *another*
    class; Lemma 1's class-local exclusion then keeps worlds the search never publishes from
    and drops worlds it does. The exact posterior (the search re-run on every world: the
    replay, equal to the brute force) is above the minimality adversary's on one table — a
    certainty it misses — and below it on another. Hence the certificate never counts the
    minimality adversary as the one that knows the algorithm."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(20, 24, 9), "sex": rng.choice(["F", "M"], 9),
                       "disease": rng.choice(["flu", "hiv", "cold"], 9, p=[0.5, 0.2, 0.3])})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease"))
    model = make_model("l=2")
    release = make_algorithm("full-domain-search", model=model).anonymize(t)
    part = release.partition.group
    brute = _float(posterior(_deterministic(t, part, lambda: make_algorithm("full-domain-search", model=model)),
                             t.n_rows, t.sa_domain.n_values))
    replay = make_adversary("replay").run(release, original=t)
    minimality = make_adversary("minimality", exact=True).run(release, original=t)
    np.testing.assert_allclose(_columns(replay, t), brute, atol=1e-9)
    assert brute.max() == pytest.approx(float(replay_max))
    assert np.nanmax(minimality.posterior) == pytest.approx(float(minimality_max))
    assert not make_adversary("minimality").knows_algorithm(release)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_domain_search_with_a_budget_under_k_anonymity_is_known(seed):
    """k-anonymity reads no SA: with a suppression budget the search's verdicts, metric and
    withheld classes are functions of the QIs, so every world consistent with the release is
    turned into it (checked by re-running the search on every world, the withheld people's
    values varied too) and the algorithm-aware posterior of the published people is the class
    frequency — the replay's ``"qi-only"`` answer. Under t-closeness (every class judged against
    a distribution the withheld people are part of) the budget leaves the search unknown."""
    from openbook.hierarchy.builders import from_mapping

    rng = np.random.default_rng(seed)
    zips = ["z1", "z2", "z3", "z4"]
    h = from_mapping({"z1": "Za", "z2": "Za", "z3": "Zb", "z4": "Zb", "Za": "*", "Zb": "*"}, "zip")
    # z3 alone fails k = 3: withholding it (1 of 8, within the budget) beats generalizing
    df = pd.DataFrame({"zip": rng.permutation(["z1"] * 4 + ["z2"] * 3 + [zips[2 + seed % 2]]),
                       "disease": rng.choice(["flu", "hiv", "cold"], 8)})
    t = encode(df, Schema.build(qi=["zip"], sa="disease"), {"zip": h})
    model = make_model("k=3")

    def make():
        return make_algorithm("full-domain-search", model=model, max_suppression=0.34)

    release = make().anonymize(t)
    part = release.partition.group
    kept = part >= 0
    assert 0 < int((~kept).sum())  # the budget withholds someone
    every = 0
    for w in every_world(t.n_rows, t.sa_domain.n_values):  # everyone's values, the withheld too
        g = make().partition(with_sa(t, w)).group
        assert same_grouping(g, part)  # the same release from every world: QI-only
        every += 1
    assert every == t.sa_domain.n_values ** t.n_rows
    # every world consistent with the published classes yields the release: weight 1 each
    brute = _float(posterior(((w, Fraction(1)) for w in worlds_within(t.sa_codes, part)), t.n_rows,
                             t.sa_domain.n_values))
    adv = make_adversary("replay")
    assert adv.knows_algorithm(release), adv.knows_algorithm(release).reason
    res = adv.run(release, original=t)
    np.testing.assert_allclose(_columns(res, t)[kept], brute[kept], atol=1e-12)
    cert = certify(release, original=t, max_reid_risk=1.0)
    assert cert.aware["adversary"] == "replay"
    t_release = make_algorithm("full-domain-search", model=make_model("t=0.5"), max_suppression=0.34).anonymize(t)
    assert not adv.knows_algorithm(t_release)


def _budget_case(rng, model: str):
    """A tiny table with a zip hierarchy, searched with a 30 % suppression budget."""
    from openbook.hierarchy.builders import from_mapping

    h = from_mapping({"z1": "Za", "z2": "Za", "z3": "Zb", "z4": "Zb", "Za": "*", "Zb": "*"}, "zip")
    n = 7
    df = pd.DataFrame({"zip": rng.choice(["z1", "z2", "z3", "z4"], n), "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold"], n)})
    t = encode(df, Schema.build(qi=["zip", "sex"], sa="disease", sensitive_sets={"s": ["hiv"]}), {"zip": h})
    return t, lambda: make_algorithm("full-domain-search", model=make_model(model), max_suppression=0.3)


def _budget_brute_force(t, make, group, minimal):
    """Every world of everyone's SA (i.i.d. from the published distribution — the replay's
    prior of an absent person; conditioned on the published multisets it is uniform over
    their arrangements), kept iff the search re-run on it withholds the same people and
    publishes the same classes with the same multisets and the same provenance (whether the
    chosen node is minimal, ``minimal``: public, and with a budget a function of the SA):
    exact fractions."""
    from fractions import Fraction

    kept = group >= 0
    v = t.sa_domain.n_values
    pub = np.bincount(t.sa_codes[kept], minlength=v)
    prior = [Fraction(int(c), int(pub.sum())) for c in pub]

    def multisets(g, sa):  # per class, the classes named by first appearance (their labels differ)
        g = canonical(g)
        return [sorted(sa[g == c].tolist()) for c in range(int(g.max()) + 1)]

    want = multisets(group, t.sa_codes)

    def worlds():
        for w in every_world(t.n_rows, v):
            weight = Fraction(1)
            for c in w.tolist():
                weight *= prior[c]
            if weight == 0:
                continue
            try:
                part = make().partition(with_sa(t, w))
            except OpenbookError:  # no node satisfies within the budget: no release
                continue
            g = part.group  # the same classes, multisets and published flag "is the chosen node minimal"
            yield w, weight * int(same_grouping(g, group) and multisets(g, w) == want
                                  and part.provenance["minimality"] == minimal)

    return np.asarray(posterior(worlds(), t.n_rows, v), dtype=np.float64)


@pytest.mark.parametrize("model", ["l=2", "entropy-l=2", "simple-l=2,set=s"])
def test_with_a_budget_the_search_is_replayed_exactly_or_bounded(model):
    """A suppression budget under a model that judges each class alone: the search's choice and
    whom it withholds depend on the SA, but when every node it could have preferred (its
    metric with nothing withheld at most the published node's) is ruled out in every world —
    the absent people's values ranging over every published value — no world is excluded: the
    published people's posterior is their class frequency and the absent people's is that of
    their classes failing the model (no whole-table check: the search publishes wherever a
    node satisfies). Both equal the brute force that re-runs the search on every world, the
    absent people's values varied. Otherwise each figure is that divided by a lower bound on
    the probability that a world rules every such node out whatever the absent hold: an upper
    bound (posterior + 3 s.e.) never below the brute force."""
    rng = np.random.default_rng({"l=2": 1, "entropy-l=2": 2, "simple-l=2,set=s": 3}[model])
    exact = bounded = 0
    for _ in range(400):
        if exact >= 3 and bounded >= 2:
            break
        t, make = _budget_case(rng, model)
        try:
            release = make().anonymize(t)
        except OpenbookError:
            continue
        group = release.partition.group
        if not (group < 0).any():
            continue
        adv = make_adversary("replay")
        assert adv.knows_algorithm(release), adv.knows_algorithm(release).reason
        res = adv.run(release, original=t)
        if res.unresolved_mask().any():  # no absent value the prior allows fits, or no world rules all out
            continue
        se = np.nan_to_num(res.stderr, nan=0.0)
        brute = _budget_brute_force(t, make, group, release.meta["algorithm"]["minimality"])
        values = [str(x) for x in t.sa_domain.values]
        for j, target in enumerate(res.targets):  # a value, or the sensitive set's total
            mask = (np.asarray(t.sa_domain.sensitive_mask(target[4:]), dtype=bool) if target.startswith("set:")
                    else np.array([v == target for v in values]))
            want = brute[:, mask].sum(axis=1)
            sure = se[:, j] == 0
            np.testing.assert_allclose(res.posterior[sure, j], want[sure], atol=1e-12)
            assert np.all(res.posterior[:, j] + 3 * se[:, j] >= want - 1e-12)
        if (se > 0).any():
            bounded += 1
        else:
            exact += 1
    assert exact >= 3 and bounded >= 2, (exact, bounded)


def test_anatomization_with_people_of_equal_qis_is_unresolved_in_memory_and_from_files(tmp_path):
    """People with equal QIs: which of them sits in which published group is Anatomy's secret
    draw — in memory the publisher's seating, from the files one of many — so the replay does
    not guess: unresolved both ways, the same certificate (the soundness suite found a pass in
    memory that read back as a failure)."""
    from openbook.release import load_release

    df = pd.DataFrame({"age": [26, 23, 22, 21, 23, 23], "disease": ["flu", "cold", "hiv", "hiv", "flu", "cold"]})
    t = encode(df, Schema.build(qi=["age:numeric"], sa="disease"))
    # a base re-run on every world (relaxed Mondrian): the seating is not replayed
    release = make_algorithm("anatomize", model=make_model("entropy-l=2"), base="mondrian", strict=False).anonymize(t)
    mem = certify(release, original=t, max_risk=1.0, max_reid_risk=1.0)
    release.save(tmp_path / "r.csv")
    back = certify(load_release(tmp_path / "r.csv"), original=t, max_risk=1.0, max_reid_risk=1.0)
    for cert in (mem, back):
        (f,) = [f for f in cert.findings if f.adversary == "replay"]
        assert f.ran and f.n_unresolved and cert.verdict == "fail"


def _published_file(t, group: np.ndarray, sa: np.ndarray):
    """What a bucketized file shows of a grouping: per group, its members' QI values and its
    SA multiset (who is who inside a group, and the groups' numbers, it does not show)."""
    from collections import Counter

    qi = np.stack([np.asarray(t.columns[c].codes, dtype=np.int64) for c in t.qi_names], axis=1)
    return Counter((tuple(sorted(map(tuple, qi[group == g].tolist()))), tuple(sorted(sa[group == g].tolist())))
                   for g in np.unique(group[group >= 0]).tolist())


def _people_worlds(t, observed, model, name, params, base):
    """Worlds over *people* (every arrangement of the table's SA values), each weighed by the
    probability that the algorithm — the base re-run, then every order of Anatomy's draws —
    writes a file equal to ``observed`` (:func:`_published_file`): the adversary who reads
    the files and knows the algorithm, with no seating assumed."""
    import itertools

    for perm in sorted(set(itertools.permutations(np.asarray(t.sa_codes).tolist()))):
        w = np.asarray(perm, dtype=np.int64)
        q = _anatomy_outcomes(t, w, model, base, name, params, lambda g, w=w: _published_file(t, g, w) == observed)
        if q is not None:
            yield w, q


@pytest.mark.parametrize("age, model", [("age", "l=2"), ("age:numeric", "l=2"), ("age", "simple-l=2,set=s")])
@pytest.mark.parametrize("seed", [1, 9, 13, 20, 30])  # a leak past the baseline, seats apart, or both
def test_anatomization_over_strict_mondrian_with_equal_qis_is_the_brute_force_of_the_files(age, model, seed,
                                                                                         tmp_path):
    """Over a strict Mondrian base the replay reads the base's groups off the file and weighs
    a world by its refused cuts only (:mod:`openbook.attacks.replay.anatomized`), on any
    number of worlds (``rerun_limit=1``: nothing is re-run). People with equal QIs are
    interchangeable. The brute force owns no seating: every arrangement of the values over
    the *people*, the base re-run and every order of Anatomy's draws, kept when the files
    written would be equal to the ones observed. Equal, in memory and read back from the
    files, and so is the certificate's worst figure."""

    n = 8
    t = _tied_table(seed, age, n)
    model = make_model(model)
    params = {"base": "mondrian"}
    release = make_algorithm("anatomize", model=model, seed=seed, **params).anonymize(t)
    qi = np.stack([np.asarray(t.columns[c].codes) for c in t.qi_names], axis=1)
    assert np.unique(qi, axis=0).shape[0] < n  # people with equal QIs
    sa = np.asarray(t.sa_codes, dtype=np.int64)
    observed = _published_file(t, release.partition.group, sa)
    brute = _float(posterior(_people_worlds(t, observed, model, "anatomize", params, "mondrian"), n,
                             t.sa_domain.n_values))
    _replay_is_brute_force_in_memory_and_from_files(release, t, brute, tmp_path)


def test_anatomization_over_mondrian_written_generalized_is_not_replayed_as_bucketized():
    """Written as a generalized release, anatomization's groups are merged by their labels:
    the file's classes need not lie inside one base group, so the replay by refused cuts
    (which reads the published groups as unions of base groups' parts) does not apply — the
    certificate does not claim it, and past ``rerun_limit`` its people are unresolved."""
    rng = np.random.default_rng(2)
    n = 30
    df = pd.DataFrame({"age": rng.choice([30, 40, 50, 60], n), "sex": rng.choice(["F", "M"], n),
                       "disease": np.resize(["flu", "hiv", "cold"], n)})
    t = encode(df, Schema.build(qi=["age:numeric", "sex"], sa="disease"))
    algo = make_algorithm("anatomize", model=make_model("l=2"), base="mondrian", seed=1)
    adv = make_adversary("replay")
    bucketized = algo.anonymize(t)
    assert "strict Mondrian base" in adv.applies_to(bucketized).reason
    assert not adv.run(bucketized, original=t).unresolved.any()
    generalized = algo.anonymize(t, kind="generalized")
    assert generalized.kind == "generalized"
    assert "strict Mondrian base" not in adv.applies_to(generalized).reason
    assert adv.run(generalized, original=t).unresolved.all()
