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
from openbook.attacks.replay import anatomized_order, anatomized_tree
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
    monkeypatch.setattr(anatomized_order, "WORK_LIMIT", 10)
    monkeypatch.setattr(anatomized_tree, "WORK_LIMIT", 10)
    _, (units, why) = _units(name, t)
    assert units is None and "more than 10 steps" in why
