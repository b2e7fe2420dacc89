"""Generalized Anatomy: identity and attribute protected by two decisions that each exclude no
possible world — the QIs generalized by a grouping of the QIs alone, the SA published in an
SA-table by a grouping of the SA alone (paper 000 §3: "decisions taken on QIs only, or on the
SA only, exclude no possible world"; Claim 4; Anatomy, Xiao & Tao 2006).

1. **QI classes** — strict Mondrian under k-anonymity (LeFevre et al. 2006): median cuts whose
   only test is that both children keep at least ``k`` rows, a test of the QIs alone. Every row
   is published with its class's labels (local recoding, :func:`openbook.release.group_labels`),
   so every published QI combination is shared by at least ``k`` records: prosecutor risk at
   most ``1/k``. ``k`` defaults to the model's k, and at least ``1/`` the identity target
   (:func:`openbook.models.promise.identity_floor`: 5 for the default 0.2).
2. **SA groups** — SA strata (:mod:`.strata`): every group satisfies the model's attribute part
   and the certificate's attribute target (:func:`openbook.models.promise.attribute_requirement`:
   each value at most ``1/ℓ``, the sensitive set at most ``1/ℓ``, within ``t`` of the table,
   or at least two distinct values), people drawn at random within their SA value.

The release is bucketized: a QI-table (generalized labels, group id) and an SA-table (group id,
SA value, count). The two groupings are independent of each other's attribute, so an adversary
who knows the algorithm, every QI and everything but the SA and the seed learns, for a person
``p`` in QI class ``C``, exactly

    ``P(p has v) = (1/|C|) · Σ_{rows r of C} freq_v(group(r))``

(``docs/certificate.md`` derives it: the people of ``C`` are matched uniformly to ``C``'s rows,
and within a group every slot is as likely as any other), at most the largest group frequency —
the target. The adversary who knows the algorithm (:mod:`openbook.attacks.decoupled`) computes
it, and ``tests/contract/test_generalized_anatomy.py`` checks it by brute force over every
possible world and every outcome of the random draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import PrivacyModel
from ..models.k_anonymity import KAnonymity
from ..models.promise import (
    attribute_requirement,
    attribute_target,
    identity_floor,
    identity_k,
    sensitive_set_of,
)
from ..params import Integer, Optional, Options, Real
from ..release import Partition
from .base import Anonymizer
from .mondrian import CATEGORICAL, mondrian_partition
from .strata import describe_strata, sa_strata

#: stream tag of the SA draws (``default_rng([seed, SA_STREAM])``)
SA_STREAM = 0x5A6


def qi_partition(table: EncodedTable, k: int, categorical: str = "ordered") -> tuple[np.ndarray, int]:
    """``(QI class per row, n_classes)``: strict Mondrian under k-anonymity — every decision a
    function of the QIs (the public decision function the adversary re-runs)."""
    if table.n_rows < k:
        from ..errors import InfeasibleError

        raise InfeasibleError(f"generalized-anatomy: the table has {table.n_rows} rows, fewer than k = {k}",
                              model=KAnonymity(k=k))
    res = mondrian_partition(table, KAnonymity(k=k), strict=True, categorical=categorical)
    return np.asarray(res["group"], dtype=np.int64), int(res["n_groups"])


class GeneralizedAnatomy(Anonymizer):
    """QI classes of at least ``k`` (QI-only), SA groups meeting the attribute target (SA-only).

    Parameters
    ----------
    model: any privacy model; its k (if any) applies to the QI classes, the rest to the SA groups.
    k: smallest QI class (default: the model's k, and at least ``1/max_reid_risk``).
    max_risk: the posterior bound the SA groups keep (default: the model's ``1/ℓ`` or α; for a
        model with no posterior bound, nobody's value certain).
    max_reid_risk: the identity target the default ``k`` is drawn from (default 0.2 or 1/k).
    categorical: Mondrian's treatment of categorical QIs (``"ordered"`` or ``"hierarchy"``).
    seed: seed of the SA draws.
    """

    name = "generalized-anatomy"
    release_kind = "bucketized"
    minimality = False
    replay = "decoupled"
    parameter_constraints = {"k": Optional(Integer(minimum=1, strict=True)),
                             "max_risk": Optional(Real(low=0.0, high=1.0, low_open=True)),
                             "max_reid_risk": Optional(Real(low=0.0, high=1.0, low_open=True)),
                             "categorical": Options(*CATEGORICAL)}

    def __init__(self, *, model: PrivacyModel, k: int | None = None, max_risk: float | None = None,
                 max_reid_risk: float | None = None, categorical: str = "ordered", seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.k = k
        self.max_risk = max_risk
        self.max_reid_risk = max_reid_risk
        self.categorical = categorical

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "max_risk": self.max_risk, "max_reid_risk": self.max_reid_risk,
                "categorical": self.categorical}

    def qi_k(self) -> int:
        """The smallest QI class: ``k`` if given, else the model's k and ``1/max_reid_risk``."""
        if self.k is not None:
            return int(self.k)
        return max(identity_k(self.model) or 1, identity_floor(self.model, self.max_reid_risk))

    def _validate(self, table: EncodedTable) -> None:
        super()._validate(table)
        if not table.qi_names:
            raise ParameterError("generalized-anatomy: the table has no QI column", parameter="qi")

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        k = self.qi_k()
        model_k = identity_k(self.model)
        if model_k is not None and k < model_k:
            raise ParameterError(f"generalized-anatomy: k={k} is below the model's k={model_k}", parameter="k",
                                 value=k)
        qi_group, n_qi = qi_partition(table, k, self.categorical)
        target = attribute_target(self.model, self.max_risk)
        requirement = attribute_requirement(self.model, target)
        dom = table.sa_domain
        name, set_mode = sensitive_set_of(self.model)
        mask = None if name is None else dom.sensitive_mask(name)
        if target.posterior is not None:  # ℓ-eligibility (paper 004): no grouping keeps a value below its share
            counts = np.asarray(dom.global_counts, dtype=np.int64)
            watched = counts if mask is None else np.where(np.asarray(mask, bool), counts, 0)
            if mask is not None and set_mode == "total":
                watched = np.where(np.asarray(mask, bool), watched.sum(), 0)
            top = int(np.argmax(watched))
            if watched[top] > target.posterior * counts.sum() + 1e-9:
                from ..errors import InfeasibleError, option

                raise InfeasibleError(
                    f"{self.name}: SA value {dom.values[top]!r} is in {int(watched[top]):,} of {int(counts.sum()):,} "
                    f"rows, more than the target {target.posterior:.4g} allows in any group (the table is not "
                    f"{1 / target.posterior:.4g}-eligible, paper 004); withhold dominant records first with "
                    f"{option('skew', 'r-suppression')}, or relax the model", model=self.model)
        rng = np.random.default_rng(None if self.seed is None else [int(self.seed), SA_STREAM])
        group, g = sa_strata(table.sa_codes, dom, requirement, rng, sensitive_mask=mask, what=self.name)
        prov = self.provenance() | {"qi_k": k, "sa_requirement": requirement.describe(),
                                    **{f"sa_{key}": v for key, v in describe_strata(dom.global_counts, g).items()}}
        return Partition(group, g, provenance=prov, extra={"qi_group": qi_group, "n_qi_groups": n_qi})
