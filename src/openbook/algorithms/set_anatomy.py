"""Set Anatomy: Anatomy's SA-only grouping for models that protect a *sensitive value set*.

Simple / binary ℓ-diversity of a set (paper 000 §2.1, §5: "Tech-support and Craft-repair")
and (α,k)-anonymity of a set bound how often the set's values occur in a group, not how many
distinct values a group holds. Anatomy (Xiao & Tao) needs the whole SA to be ℓ-eligible and
forms groups of ℓ distinct values; where a common non-sensitive value makes the table
ineligible (Adult-like occupations with one value above 1/ℓ), it cannot run although the
set itself is rare. Set Anatomy groups by sensitivity alone:

1. shuffle the sensitive rows and the other rows, each with the seeded generator;
2. group ``i`` takes the ``i``-th sensitive row and the next ``g - 1`` other rows, with
   ``g = max(⌈ℓ⌉, k)`` (ℓ = 1/α for (α,k));
3. the other rows left over join the groups round-robin (in a shuffled group order).

Every group holds at most one sensitive row among at least ``g`` rows, so each value of the
set (and the set as a whole) has frequency at most ``1/ℓ``. The grouping depends on which
rows are sensitive and on the random draws only — never on the QIs — so, as for Anatomy
(paper 000 Claim 4), every assignment of a group's published SA values to its members is
equally likely to have produced it: the replay adversary learns nothing the baseline does not.
The release is bucketized. Infeasible when more than ``n / g`` rows are sensitive (the set
is not ℓ-eligible; paper 004 — restore eligibility with ``--skew r-suppression``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..data.table import EncodedTable
from ..errors import InfeasibleError, option
from ..models.base import PrivacyModel
from ..models.promise import promised_l_int
from ..params import Optional, Text, fail
from ..release import Partition
from .base import Anonymizer
from .ordering import sensitive_set_name


class SetAnatomy(Anonymizer):
    """SA-only groups with at most one sensitive row each (module docstring).

    Parameters
    ----------
    model: a model naming a sensitive set (``simple-l=6,set=NAME``, ``alpha=0.2,k=5,set=NAME``).
    sensitive_set: the set (default: the model's ``set=``).
    seed: seed of the shuffles.
    """

    name = "set-anatomy"
    release_kind = "bucketized"
    minimality = False
    replay = "sa-only"
    parameter_constraints = {"sensitive_set": Optional(Text())}

    def __init__(self, *, model: PrivacyModel, sensitive_set: str | None = None, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.sensitive_set = sensitive_set

    def params(self) -> dict[str, Any]:
        return {"sensitive_set": self.sensitive_set}

    def _group_size(self) -> int:
        l = promised_l_int(self.model)
        if l is None:
            raise fail(self.name, "model", self.model.describe(), "bound a frequency (an ℓ or α)")
        k = max([int(getattr(m, "k", 1) or 1) for m in (getattr(self.model, "models", None) or [self.model])])
        return max(math.ceil(float(l) - 1e-12), k, 1)

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        name = sensitive_set_name(self.sensitive_set, self.model, self.name)
        mask = table.sa_domain.sensitive_mask(name)
        g = self._group_size()
        sens = np.asarray(mask, dtype=bool)[table.sa_codes]
        n, s = table.n_rows, int(sens.sum())
        if n < g:
            raise InfeasibleError(f"{self.name}: {n} rows cannot form one group of {g}", model=self.model)
        if s * g > n:
            raise InfeasibleError(
                f"{self.name}: {s} of {n} rows hold a value of the sensitive set {name!r}, more than n/{g} = "
                f"{n / g:.1f}: the set is not {g}-eligible (paper 004; {option('skew', 'r-suppression')} withholds some)",
                model=self.model)
        rng = np.random.default_rng(self.seed)
        sens_rows = rng.permutation(np.flatnonzero(sens))
        other = rng.permutation(np.flatnonzero(~sens))
        n_groups = max(s, n // g)
        group = np.full(n, -1, dtype=np.int64)
        group[sens_rows] = np.arange(s)
        # fill every group to g rows with other rows, then the rest round-robin
        need = np.full(n_groups, g, dtype=np.int64)
        need[:s] -= 1
        fill = np.repeat(np.arange(n_groups), need)
        group[other[:fill.size]] = fill
        rest = other[fill.size:]
        group[rest] = rng.permutation(n_groups)[np.arange(rest.size) % n_groups]
        part = Partition(group, n_groups, provenance=self.provenance() | {"group_size": g, "sensitive_set": name})
        ok = np.asarray(self.model.holds(table.group_sa_counts(part.group, n_groups), table.sa_domain), dtype=bool)
        if not ok.all():
            raise InfeasibleError(f"{self.name}: {int((~ok).sum())} of {ok.size} groups violate "
                                  f"{self.model.describe()}, which asks more than the sensitive set's frequency",
                                  model=self.model)
        return part
