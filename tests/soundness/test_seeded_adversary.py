"""The adversary who knows ART and Injector (:mod:`openbook.attacks.replay.seeded`) against the
brute force.

Both algorithms grow a group from each sensitive row, in a secret random order, out of tuples
chosen for that seed; the replay re-runs every arrangement of the published values over the
people under every order of the seeds. The brute force (:mod:`.brute`, coins ``seeds``) re-runs
every SA vector and every permutation the algorithm can draw and compares the bytes the files
would hold. The random tables run in ``test_soundness.py`` (the slice and, slow, seeds 100–111);
here the hand-made cases and the limits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.certificate import certify
from openbook.errors import ParameterError
from openbook.models import make_model

from .brute import exact_posterior
from .judge import judge, make
from .tables import Case

#: eight people, four zips, two sexes; flu is the sensitive set (Injector's seeds)
FRAME = pd.DataFrame({"zip": ["z4", "z4", "z1", "z4", "z1", "z3", "z4", "z3"],
                      "sex": ["M", "F", "F", "M", "F", "F", "M", "M"],
                      "disease": ["flu", "hiv", "flu", "hiv", "hiv", "hiv", "hiv", "flu"]})


def _case(algorithm: str = "injector", frame: pd.DataFrame = FRAME, seed: int = 300) -> Case:
    return Case(frame, ["zip", "sex"], algorithm, {}, "simple-l=2,set=s", "simple-l-set", max_risk=0.67, seed=seed,
                sets={"s": ["flu"]})


def test_an_adversary_who_knows_injector_tells_its_seed_better_than_the_baseline():
    """Injector seeds a group with each flu row and adds the next compatible rows in QI order.
    The man of z3 shares his group with the woman of z4, one flu between them: the baseline says
    1/2 each; an adversary who knows Injector — which rows it would have added to which seed, in
    every world and every order of the seeds — puts him at 3/4. The replay's figure is the brute
    force's, exactly (judge (c)), and the release fails its 0.67 target."""
    case = _case()
    table = case.table()
    release, factory = make(case, table)
    cert = certify(release, original=table, max_risk=case.max_risk, max_reid_risk=1.0)
    replay, base = cert.results["replay"], cert.results["baseline"]
    man = 7  # z3, M
    assert cert.aware["adversary"] == "replay" and cert.verdict == "fail"
    assert replay.posterior[man, 0] == pytest.approx(0.75) and base.posterior[man, 0] == pytest.approx(0.5)
    ex = exact_posterior(case, table, release, factory, budget=10**6)
    flu = [str(v) for v in table.columns[table.sa_name].categories].index("flu")
    assert float(ex["cert"][man][flu]) == pytest.approx(0.75)
    out = judge(case, budget=10**6)
    assert out.brute and not out.replay_wrong and not out.false_pass and not out.disagreement, out.explain()


@pytest.mark.parametrize("algorithm", ["art", "art-exact", "injector"])
def test_the_replay_of_a_seeded_release_is_the_brute_force(algorithm):
    """Six people (fewer worlds × seed orders than rerun_limit): every figure exact and equal to
    the brute force of the files, in memory and read back."""
    frame = FRAME.iloc[:6].reset_index(drop=True)
    out = judge(_case(algorithm, frame, seed=1), budget=10**6)
    assert out.status == "done" and out.brute and out.unresolved == 0, out.explain()
    assert not out.replay_wrong and not out.false_pass and not out.disagreement, out.explain()


def test_past_rerun_limit_everyone_is_unresolved_with_the_reason():
    case = _case()
    table = case.table()
    release, _ = make(case, table)
    cert = certify(release, original=table, max_risk=1.0, max_reid_risk=1.0,
                   params={"replay": {"rerun_limit": 100}})
    (f,) = [f for f in cert.findings if f.adversary == "replay"]
    assert cert.verdict == "fail" and f.n_unresolved == table.n_rows
    (why,) = cert.results["replay"].notes["unresolved"]
    assert "every order of its 3 seeds" in why["reason"] and "rerun_limit" in why["reason"]


@pytest.mark.parametrize("algorithm", ["art", "injector"])
def test_a_given_seed_order_is_the_one_the_seed_draws(algorithm):
    """The replay's hook is the algorithm's own law: the order the seed's generator draws, given
    explicitly, publishes the same groups; an order of other rows is refused."""
    table = _case(algorithm).table()
    algo = make_algorithm(algorithm, model=make_model("simple-l=2,set=s"), seed=5)
    seeds = np.flatnonzero(algo.sensitive_values(table)[table.sa_codes])
    order = np.random.default_rng(5).permutation(seeds)
    assert np.array_equal(algo.partition(table).group, algo.partition(table, seed_order=order).group)
    with pytest.raises(ParameterError, match="seed_order"):
        algo.partition(table, seed_order=np.arange(seeds.size))
