"""Checking a partition or a release against a privacy model — the same code ``openbook
check`` and ``openbook audit`` use, run before any release is written (docs/design.md, "A
release proves itself").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import VerificationError, option
from ..models.base import PrivacyModel, SADomain


@dataclass(frozen=True)
class ModelCheck:
    model: str
    holds: bool
    level: float
    n_groups: int
    failing_groups: int

    def to_dict(self) -> dict[str, Any]:
        # a level that is not a number (no group at all) is written as null: NaN is not JSON
        level = self.level if self.level is None or np.isfinite(self.level) else None
        return {"model": self.model, "holds": self.holds, "level": level,
                "n_groups": self.n_groups, "failing_groups": self.failing_groups}


def check_counts(model: PrivacyModel, counts: np.ndarray, domain: SADomain) -> ModelCheck:
    ok = model.holds(counts, domain)
    return ModelCheck(
        model=model.describe(),
        holds=bool(ok.all()),
        level=model.table_level(counts, domain) if counts.shape[0] else float("nan"),
        n_groups=int(counts.shape[0]),
        failing_groups=int((~ok).sum()),
    )


def require(model: PrivacyModel, counts: np.ndarray, domain: SADomain, *, what: str = "release") -> ModelCheck:
    """Raise :class:`VerificationError` unless every group satisfies the model."""
    result = check_counts(model, counts, domain)
    if not result.holds:
        raise VerificationError(
            f"the {what} violates {result.model}: {result.failing_groups} of {result.n_groups} "
            "groups fail; nothing was written",
            model=model,
            failing_groups=result.failing_groups,
        )
    return result


def check_bucketized(model: PrivacyModel, counts: np.ndarray, domain: SADomain, qi_sizes: np.ndarray) -> ModelCheck:
    """A bucketized release against ``model``: its k (:func:`~openbook.models.promise.identity_k`)
    is a promise about identity and holds of the QI-table's classes (``qi_sizes``: records per
    published QI combination — with exact QIs, per exact tuple), the rest
    (:func:`~openbook.models.promise.attribute_part`) of the SA-table's groups (``counts``)."""
    from ..models.promise import attribute_part, identity_k

    k = identity_k(model)
    attr = attribute_part(model)
    sizes = np.asarray(qi_sizes, dtype=np.int64)
    small = int((sizes < k).sum()) if k is not None else 0
    if attr is not None:
        ok = np.asarray(attr.holds(counts, domain), dtype=bool)
        level = attr.table_level(counts, domain) if counts.shape[0] else float("nan")
    else:
        ok = np.ones(counts.shape[0], dtype=bool)
        level = float(sizes.min()) if sizes.size else float("nan")
    return ModelCheck(model=model.describe(), holds=bool(ok.all()) and small == 0, level=level,
                      n_groups=int(counts.shape[0]), failing_groups=int((~ok).sum()) + small)


def require_bucketized(model: PrivacyModel, counts: np.ndarray, domain: SADomain, qi_sizes: np.ndarray, *,
                       what: str = "release") -> ModelCheck:
    """:func:`check_bucketized`, raising :class:`VerificationError` (naming which half fails)."""
    from ..models.promise import identity_k

    result = check_bucketized(model, counts, domain, qi_sizes)
    if not result.holds:
        k = identity_k(model)
        sizes = np.asarray(qi_sizes, dtype=np.int64)
        if k is not None and sizes.size and int(sizes.min()) < k:
            n_small = int((sizes < k).sum())
            raise VerificationError(
                f"the {what} violates {result.model}: {n_small} of {sizes.size} published QI combinations are "
                f"shared by fewer than k = {k} records (the QI-table of a bucketized release carries the model's "
                f"k); nothing was written — publish generalized QIs instead ({option('kind', 'generalized')})",
                model=model, failing_groups=result.failing_groups)
        raise VerificationError(
            f"the {what} violates {result.model}: {result.failing_groups} of {result.n_groups} groups of its "
            "SA-table fail; nothing was written", model=model, failing_groups=result.failing_groups)
    return result
