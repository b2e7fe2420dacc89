"""The skew step as a wrapper algorithm (paper 004; ``--skew``): restore ℓ-eligibility first
— R-suppression, or Safe/Unsafe D-suppression (:mod:`.suppression`) — then run the wrapped
anonymizer on the kept rows, as :class:`~.anatomy.Anatomized` wraps its base.

Withheld rows are group -1 of the final partition, so ``n_input = n_published +
n_suppressed`` still holds; the release records the step (``meta["skew"]``: method, ℓ, |T|,
|T_S|, rate) — in memory: its sidecar keeps the method and ℓ only, unless the publisher opts
in to the counts (:mod:`openbook.release.sidecar`). The provenance is the wrapped
algorithm's, with the step under ``"skew"``: the adversary who knows the algorithm replays
the wrapped one on the kept people (:mod:`openbook.attacks.families`). Not a catalog entry:
``Skewed(base, skew=...)`` wraps any anonymizer; :func:`with_skew` is how the pipeline, the
Python API and the studio apply ``skew=``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.table import EncodedTable
from ..release import Partition, Release
from .base import Anonymizer

#: stream tag of the skew step's generator (``default_rng([seed, SKEW_STREAM])``)
SKEW_STREAM = 0x5CE


class Skewed(Anonymizer):
    """``base`` run on the rows the skew step keeps (module docstring).

    Parameters
    ----------
    base: the wrapped anonymizer (its model is the release's).
    skew: ``"r-suppression"``, ``"safe-d"`` or ``"unsafe-d"`` (paper 004).
    seed: seed of the skew step's draws — a stream of its own, independent of the wrapped
        anonymizer's (one ``--seed`` never feeds the same draws to both).
    """

    name = "skewed"

    def __init__(self, base: Anonymizer, *, skew: str, seed: int | None = None) -> None:
        super().__init__(model=base.model, seed=seed)
        self.base = base
        self.skew = skew
        self.step: Any = None  # the last run's SuppressionPlan

    def params(self) -> dict[str, Any]:
        return {"skew": self.skew, **self.base.params()}

    def release_model(self) -> Any:
        return self.base.release_model()

    def release_levels(self) -> list[int] | None:
        return self.base.release_levels()

    def default_kind(self) -> str:
        return self.base.default_kind()

    def check_budget(self, part: Partition, n_rows: int) -> None:
        """The wrapped anonymizer's budget is checked on the kept rows (:meth:`recode`); the
        withheld rows are the skew step's, not its suppression."""

    def partition(self, table: EncodedTable) -> Partition:
        return self.recode(table)[1]

    def recode(self, table: EncodedTable) -> tuple[EncodedTable, Partition]:
        from .suppression import l_for_model, restore_eligibility

        rng = np.random.default_rng(None if self.seed is None else [int(self.seed), SKEW_STREAM])
        step = restore_eligibility(table.sa_codes, l_for_model(self.model), method=self.skew, seed=rng,
                                   n_values=table.columns[table.sa_name].n_values)
        self.step = step
        kept = table.take(step.kept_rows)
        published, part = self.base.recode(kept)
        self.base.check_budget(part, step.kept_rows.size)
        if published is not kept:  # MASK distorts the SA of the rows it publishes
            sa = np.array(table.sa_codes, copy=True)
            sa[step.kept_rows] = published.sa_codes
            table = table.with_codes(table.sa_name, sa)
        group = np.full(table.n_rows, -1, dtype=np.int64)
        group[step.kept_rows] = part.group
        extra = dict(part.extra)
        if "qi_group" in extra:  # Generalized Anatomy's QI classes, on the kept rows
            qg = np.full(table.n_rows, -1, dtype=np.int64)
            qg[step.kept_rows] = extra["qi_group"]
            extra["qi_group"] = qg
        prov = {**part.provenance, "skew": step.provenance()}
        return table, Partition(group, part.n_groups, provenance=prov, extra=extra)

    def anonymize(self, table: EncodedTable, *, kind: str | None = None, t_reference: Any = "published") -> Release:
        release = super().anonymize(table, kind=kind, t_reference=t_reference)
        release.meta["skew"] = self.step.provenance()
        if self.skew == "r-suppression":  # its rate is random: what one run should expect (never in the sidecar)
            from .suppression import l_for_model, r_suppression_spread

            counts = np.bincount(table.sa_codes, minlength=table.columns[table.sa_name].n_values)
            release.meta["skew_spread"] = r_suppression_spread(counts, l_for_model(self.model))
        return release


def with_skew(algo: Anonymizer, skew: str | None, seed: int | None = None) -> Anonymizer:
    """``algo`` wrapped in the skew step (``skew`` a method), or itself (``None``/``"none"``)."""
    if not skew or skew == "none":
        return algo
    return Skewed(algo, skew=skew, seed=seed)
