"""The replays of anatomization along the base's order and tree give up past their budgets
with a reason — never a figure — and the certificate leaves those people unresolved
(``openbook.attacks.replay.anatomized_order``, ``anatomized_tree``; their exact answers are
tested against a brute force in ``tests/contract/test_adversary_brute_force.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.registry import make_adversary
from openbook.attacks.replay import anatomized_order, anatomized_tree, seat_worlds
from openbook.attacks.replay.anatomized import anatomized_order_units
from openbook.certificate import certify
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model


def _one_run(n: int, seed: int = 0):
    """``n`` people with equal QIs (one run of the order), four values."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": [40] * n, "disease": rng.choice(["flu", "hiv", "cold", "acne"], n)})
    return encode(df, Schema.build(qi=["age"], sa="disease"))


def _units(name: str, t):
    algo = make_algorithm(name, model=make_model("l=2"), seed=1)
    release = algo.anonymize(t)
    g = release.partition.group
    return release, anatomized_order_units(algo, t, g, t.group_sa_counts(g, release.partition.n_groups))


def test_sg_gives_up_on_a_boundary_with_too_many_ways_to_part_its_run(monkeypatch):
    """Every boundary of SG's tree cuts the one run: its one-value groups may sit on either
    side. Within the cap the replay answers; below it, ``None`` with the reason, and the
    certificate's replay leaves everyone unresolved (nothing re-run: ``rerun_limit=1``)."""
    t = _one_run(16)
    release, (units, why) = _units("sg-ana", t)
    assert units is not None and why == ""
    monkeypatch.setattr(anatomized_tree, "MAX_STATES", 3)
    _, (units, why) = _units("sg-ana", t)
    assert units is None and "more than 3 ways to part its groups" in why
    res = make_adversary("replay", rerun_limit=1).run(release, original=t)
    assert res.unresolved.all()
    cert = certify(release, original=t, max_risk=1.0, max_reid_risk=1.0, params={"replay": {"rerun_limit": 1}})
    assert cert.verdict == "fail"


@pytest.mark.parametrize("name", ["gg-ana", "sg-ana"])
def test_the_step_budget_gives_up_with_its_reason(monkeypatch, name):
    t = _one_run(12, seed=2)
    _, (units, _) = _units(name, t)
    assert units is not None
    monkeypatch.setattr(seat_worlds, "WORK_LIMIT", 10)  # the listing's and the base groups' budget
    release, (units, why) = _units(name, t)
    assert units is None and "more than 10 steps" in why
    # the certificate's replay says why, both ways it tried: the budget, then the re-run (which
    # cannot seat people with equal QIs)
    res = make_adversary("replay").run(release, original=t)
    assert res.unresolved.all()
    (entry,) = res.notes["unresolved"]
    assert "more than 10 steps" in entry["reason"] and "people with equal QIs" in entry["reason"]


def _gg_table(rng: np.random.Generator, n: int):
    """``n`` people over few QI values (runs of equal QIs, one-value groups in them)."""
    df = pd.DataFrame({"age": rng.integers(20, 20 + max(2, n // 6), n),
                       "disease": rng.choice(["flu", "hiv", "cold", "acne"], n)})
    return encode(df, Schema.build(qi=["age"], sa="disease"))


def _enumerated_final(monkeypatch):
    """The replay as it was before the base group ending the table was weighed bucket by
    bucket: that group's seat worlds enumerated (``_base_group`` with GG's likelihood of the
    table's last group, merged tail or not), and no listing stopped early by the boxes
    (``_prefix_holds``, ``_rest_holds``)."""
    from openbook.attacks.replay.greedy import _single, _sub_holds
    from openbook.attacks.replay.kernels import gg_run_likelihood

    chain = seat_worlds._chain_group

    def old(S, E, k, k2, model, domain, p, final=False, merge=False):
        if not final:
            return chain(S, E, k, k2, model, domain, p, final, merge)
        J = k2 - k
        lik = lambda c: gg_run_likelihood(_sub_holds(model, domain, c, p), _single(J), p, False, merge)  # noqa: E731
        return seat_worlds._base_group(S, E, S.bounds[k:k2 + 1], lik)

    monkeypatch.setattr(anatomized_order, "_chain_group", old)
    monkeypatch.setattr(seat_worlds, "MAX_CONFIGS", 20_000)  # past it: not compared (kept quick)
    monkeypatch.setattr(anatomized_order, "_prefix_holds", lambda *a: False)
    monkeypatch.setattr(anatomized_order, "_rest_holds", lambda S, starts, *a: np.zeros(len(starts), dtype=bool))


@pytest.mark.parametrize("model", ["l=2", "l=3", pytest.param("entropy-l=2", marks=pytest.mark.slow)])
def test_gg_merged_tail_weighed_bucket_by_bucket_equals_its_enumeration(monkeypatch, model):
    """Anatomization over GG: the base group ending the table (the last closed group and the
    tail merged back into it) weighed by a forward–backward pass over its buckets, with the
    listing stopped where GG surely closed and nothing after it can merge back, gives every
    person the posterior the enumeration of that group's seat worlds gives (both exact; the
    brute force over the people checks them on tables of up to 30 in the contract tests); the
    last group of ``tail="drop"`` (nothing dropped), a plain chain, equals its enumeration too.
    Tables of 16 to 40 people with runs of equal QIs, both tie rules."""
    from openbook.algorithms.anatomy import anatomy_l

    rng = np.random.default_rng(11)
    compared = drops = 0
    tails: list[int] = []  # buckets of each last base group the new path weighs (a merged tail spans >= 2)
    chain = seat_worlds._chain_group

    def counted(S, E, k, k2, model, domain, p, final=False, merge=False):
        if final and merge:
            tails.append(k2 - k)
        return chain(S, E, k, k2, model, domain, p, final, merge)

    monkeypatch.setattr(anatomized_order, "_chain_group", counted)
    for _ in range(40):
        t = _gg_table(rng, int(rng.integers(16, 41)))
        ties = str(rng.choice(["input", "random"]))
        tail = {"tail": "drop", "max_suppression": 0.5} if rng.integers(4) == 0 else {}
        try:
            algo = make_algorithm("gg-ana", model=make_model(model), seed=1, ties=ties, **tail)
            release = algo.anonymize(t)
        except Exception:  # the model cannot hold on this table
            continue
        g = release.partition.group
        if np.any(g < 0):  # a dropped tail: the replay leaves its release unresolved (withheld rows)
            continue
        drops += bool(tail)
        gc = t.group_sa_counts(g, release.partition.n_groups)
        base = make_algorithm("gg", model=algo.model, seed=1, **algo.base_params)
        l = anatomy_l(algo.name, algo.l, algo.model, t)
        new, why_new = anatomized_order.greedy_posterior(base, t, np.asarray(g, dtype=np.int64), gc, l)
        with monkeypatch.context() as m:
            _enumerated_final(m)
            want, why = anatomized_order.greedy_posterior(base, t, np.asarray(g, dtype=np.int64), gc, l)
        if want is None:  # past the enumeration's budgets
            continue
        assert new is not None, why_new
        np.testing.assert_allclose(new, want, rtol=0, atol=1e-9)
        compared += 1
    assert compared >= 15 and sum(b >= 2 for b in tails) >= 10 and drops >= 2
