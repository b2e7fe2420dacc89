"""k-anonymity: every group (QID-EC) holds at least k rows.

Paper 001 (Wong et al., VLDB 2007) §2 recalls k-anonymity as the base of the enhanced
models ((α,k)-anonymity adds a frequency bound to it, §2; (k,e)-anonymity a range, §5).

References
----------
L. Sweeney. k-anonymity: a model for protecting privacy. IJUFKS 10(5), 2002.
R. C.-W. Wong, A. W.-C. Fu, K. Wang, J. Pei. Minimality attack in privacy preserving data
publishing. VLDB 2007, §2 (paper 001).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ._checks import as_counts, check_group_size, check_int
from .base import PrivacyModel, SADomain


class KAnonymity(PrivacyModel):
    """Every group has at least ``k`` rows.

    Level of a group: its size (higher is stronger). Monotonic: merging two groups of size
    >= k gives a group of size >= k.

    Parameters
    ----------
    k:
        Minimum group size, an integer >= 1.

    References
    ----------
    Sweeney, IJUFKS 2002; Wong et al., VLDB 2007 §2 (paper 001).
    """

    reads_sa = False
    name: ClassVar[str] = "k-anonymity"
    monotonic: ClassVar[bool] = True
    absorbing: ClassVar[bool] = True  # a count that only grows
    higher_is_stronger: ClassVar[bool] = True

    def __init__(self, *, k: int) -> None:
        self.k = check_int("k", k, minimum=1, model=self.name)

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return as_counts(counts, domain).sum(axis=1).astype(np.float64)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return as_counts(counts, domain).sum(axis=1) >= self.k

    def validate(self, domain: SADomain) -> None:
        check_group_size(self, self.k, domain, f"{self.k}-anonymous")

    def params(self) -> dict[str, Any]:
        return {"k": self.k}
