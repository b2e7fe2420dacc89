"""Checking a partition or a release against a privacy model — the same code ``openbook
check`` and ``openbook audit`` use, run before any release is written (DESIGN.md, "A
release proves itself").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import VerificationError
from ..models.base import PrivacyModel, SADomain


@dataclass(frozen=True)
class ModelCheck:
    model: str
    holds: bool
    level: float
    n_groups: int
    failing_groups: int

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "holds": self.holds, "level": self.level,
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
