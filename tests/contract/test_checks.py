"""The published contract checks (:mod:`openbook.testing`): every catalogued adversary passes
them (every anonymizer: test_algorithm_contract.py), the deterministic algorithms' replay
equals the brute force, and each check fails on an implementation that breaks it — a check
that cannot fail would prove nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openbook.algorithms.base import Anonymizer
from openbook.attacks.families import BaselineAdversary
from openbook.params import Integer
from openbook.release import Partition
from openbook.testing import check_adversary, check_anonymizer

#: the algorithms whose run the table fixes: the replay is checked against the brute force
DETERMINISTIC = {"gg": {"ties": "input"}, "sg": {}, "mondrian": {"strict": True},
                 "full-domain": {"levels": [3, 1, 1], "max_suppression": 0.3}, "full-domain-search": {}}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_deterministic_algorithms_replay_as_the_brute_force(name):
    done = check_anonymizer(name, params=DETERMINISTIC[name])
    ran = [c for c in done if c.startswith("brute force (")]
    assert ran, done  # the brute force ran (not skipped) and agreed


# -- each check can fail ------------------------------------------------------------------
class _FirstQI(Anonymizer):
    """One class per value of the first QI."""

    name = "toy-first-qi"
    release_kind = "bucketized"
    replay = "qi-only"
    deterministic = True

    def params(self) -> dict[str, Any]:
        return {}

    def partition(self, table: Any) -> Partition:
        self._validate(table)
        return Partition.from_labels(np.asarray(table.columns[table.qi_names[1]].codes, dtype=np.int64),
                                     provenance=self.provenance())


def test_the_toy_passes():
    assert "brute force (" in " ".join(check_anonymizer(_FirstQI))


class _Scribbler(_FirstQI):
    def partition(self, table: Any) -> Partition:
        table.columns[table.qi_names[0]].codes[:] = 0  # writes into its input
        return super().partition(table)


class _ClaimsQIOnly(_FirstQI):
    """Groups by the SA (each person with the one half the SA order away), yet declares a
    grouping by the QIs."""

    def partition(self, table: Any) -> Partition:
        self._validate(table)
        sa = np.asarray(table.sa_codes, dtype=np.int64)
        order = np.argsort(sa, kind="stable")
        group = np.empty(sa.size, dtype=np.int64)
        group[order] = np.arange(sa.size) % max(sa.size // 2, 1)
        return Partition.from_labels(group, provenance=self.provenance())


class _Undeclared(_FirstQI):
    def __init__(self, *, model: Any, seed: int | None = None, width: int = 3) -> None:
        super().__init__(model=model, seed=seed)
        self.width = width


class _LeaksSeed(_FirstQI):
    def params(self) -> dict[str, Any]:
        return {"seed": self.seed}


class _Unaware(_FirstQI):
    replay = None
    unaware = ""


@pytest.mark.parametrize("cls, check", [(_Scribbler, "input untouched"), (_ClaimsQIOnly, "brute force"),
                                        (_Undeclared, "declared parameters"), (_LeaksSeed, "no seed in the files"),
                                        (_Unaware, "traits")])
def test_each_anonymizer_check_can_fail(cls, check):
    with pytest.raises(AssertionError, match=f"^{check}"):
        check_anonymizer(cls, model="l=2")


class _ToyBaseline(BaselineAdversary):
    name = "toy-baseline"  # not the catalogued baseline: a class of its own


class _Overconfident(_ToyBaseline):
    def attack(self, release: Any, *, original: Any = None, earlier: Any = ()) -> Any:
        res = super().attack(release, original=original, earlier=earlier)
        res.posterior = res.posterior * 1.5
        return res


class _Lambda(_ToyBaseline):
    parameters = {"sensitive_set": (None, lambda v: True)}  # type: ignore[dict-item]


class _BadDefault(_ToyBaseline):
    parameters = {"sensitive_set": (None, Integer(minimum=1)), "depth": (0, Integer(minimum=1))}


class _Meddler(_ToyBaseline):
    def attack(self, release: Any, *, original: Any = None, earlier: Any = ()) -> Any:
        release.meta["touched"] = True
        return super().attack(release, original=original, earlier=earlier)


@pytest.mark.parametrize("cls, check", [(_Overconfident, "probabilities"), (_Lambda, "declared parameters"),
                                        (_BadDefault, "declared parameters"), (_Meddler, "release untouched")])
def test_each_adversary_check_can_fail(cls, check):
    with pytest.raises(AssertionError, match=f"^{check}"):
        check_adversary(cls)
