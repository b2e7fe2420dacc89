"""ℓ-eligibility of a table: no SA value is shared by more than |T|/ℓ of its rows.

Paper 004 §1.1/§2: "T is ℓ-eligible if no more than |T|/ℓ of the records shares a common
SA value, i.e. F1 <= |T|/ℓ". It is the condition under which a table can be published
simple-ℓ-diverse at all: for the frequency form of ℓ-diversity (every SA value in every
group at most a 1/ℓ fraction; paper 000 §2.2, paper 001 §2 with α = 1/ℓ) the bound is
linear, so summing it over the groups of any partition gives F1 <= |T|/ℓ (necessary), and
the whole table as one group shows it is sufficient. When a table is not ℓ-eligible, paper
004's remedy is to suppress dominant records first with **R-suppression** (§4.1), which
resists the eligibility attack (§1.2) that deterministic D-suppression suffers.

ℓ-eligibility is *not* necessary for distinct, entropy or recursive (c,ℓ)-diversity: the
table {A: 8, B: 1, C: 1} is not 2-eligible, yet as one group it has 3 >= 2 distinct values;
{A: 6, B: 1, C: 1, D: 1, E: 1} is not 2-eligible, yet exp(H) = 3.41 >= 2 and
6 < 2 * (1 + 1 + 1 + 1) (recursive (2,2)-diversity). Those models check their own
whole-table condition instead (see :mod:`openbook.models.l_diversity`).

References
----------
Paper 004 (ℓ-eligibility, eligibility attack, D-/R-suppression), §1.1, §2, §4.1; the
condition itself is paper 004's ref. [6] (bucketization).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InfeasibleError, option
from ._checks import Ratio, check_real, fmt_num, fmt_value, ratio_or, sizes_and_top
from .base import PrivacyModel, SADomain

#: The CLI option naming the remedy, quoted in every ℓ-ineligibility message.
REMEDY = "suppress dominant records first with R-suppression ({skew})"


def remedy() -> str:
    """The remedy of an ineligible table, in the reader's spelling (``--skew r-suppression``
    on the command line, ``skew='r-suppression'`` in Python)."""
    return REMEDY.format(skew=option("skew", "r-suppression"))


@dataclass(frozen=True)
class EligibilityViolation:
    """One SA value shared by more rows than ℓ-eligibility allows."""

    value: Any
    count: int
    allowed: int

    @property
    def excess(self) -> int:
        """Rows of this value to suppress (at least) to bring it down to ``allowed``."""
        return self.count - self.allowed


@dataclass(frozen=True)
class EligibilityReport:
    """Which SA values break ℓ-eligibility of a table, and by how much (paper 004 §2).

    ``allowed = floor(n/ℓ)`` is the most rows one SA value may have; ``violations`` lists
    the violating values, most frequent first. ``eligible_l = floor(n / F1)`` is the largest
    integer ℓ for which the table is ℓ-eligible.
    """

    l: float
    n_rows: int
    allowed: int
    max_value: Any
    max_count: int
    violations: tuple[EligibilityViolation, ...] = ()

    @property
    def eligible(self) -> bool:
        """ℓ-eligible: no violating value (an empty table is eligible for nothing)."""
        return self.n_rows > 0 and not self.violations

    @property
    def eligible_l(self) -> int:
        return self.n_rows // self.max_count if self.max_count else 0

    def one_line(self) -> str:
        """The report as one line (for a CLI error or a log)."""
        ell = fmt_num(self.l)
        if self.n_rows == 0:
            return f"the table is empty, so it is not {ell}-eligible"
        if self.eligible:
            return (
                f"the table ({self.n_rows} rows) is {ell}-eligible: its most frequent SA value "
                f"{fmt_value(self.max_value)} occurs {self.max_count} times <= "
                f"{self.allowed} = floor({self.n_rows}/{ell})"
            )
        worst = self.violations[0]
        more = len(self.violations) - 1
        others = f" (and {more} more value{'s' if more > 1 else ''})" if more else ""
        return (
            f"the table ({self.n_rows} rows) is not {ell}-eligible: SA value "
            f"{fmt_value(worst.value)} occurs {worst.count} times but at most {self.allowed} = "
            f"floor({self.n_rows}/{ell}) rows may share one value (excess {worst.excess})"
            f"{others}; the table is at most {self.eligible_l}-eligible"
        )

    def __str__(self) -> str:
        return self.one_line()


def explain_eligibility(global_counts: Any, values: Any, l: float) -> EligibilityReport:
    """Check ℓ-eligibility of a table given its SA counts (paper 004 §2).

    Parameters
    ----------
    global_counts:
        Count of each SA value in the table (1-D, integer).
    values:
        The SA value of each position of ``global_counts`` (for the report).
    l:
        ℓ >= 1 (a real number is accepted; the bound is ``count <= floor(n/ℓ)``).
    """
    ell: float = check_real("l", l, model="l-eligibility", low=1.0)
    if ell.is_integer():
        ell = int(ell)
    counts = np.asarray(global_counts, dtype=np.int64).ravel()
    values = np.asarray(values)
    n = int(counts.sum())
    allowed = Ratio(ell).floor_divide(n)
    if n == 0:
        return EligibilityReport(l=ell, n_rows=0, allowed=0, max_value=None, max_count=0)
    order = np.argsort(-counts, kind="stable")
    top = int(order[0])
    bad = [int(i) for i in order if counts[i] > allowed]
    violations = tuple(
        EligibilityViolation(value=_py(values[i]), count=int(counts[i]), allowed=allowed)
        for i in bad
    )
    return EligibilityReport(
        l=ell,
        n_rows=n,
        allowed=allowed,
        max_value=_py(values[top]),
        max_count=int(counts[top]),
        violations=violations,
    )


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


class LEligibility(PrivacyModel):
    """ℓ-eligibility (paper 004 §2): at most ``|T|/ℓ`` rows share one SA value.

    A table-level notion: ``holds(counts)`` treats each row of ``counts`` as a whole table
    and tests ``F1 * ℓ <= n`` exactly. The level of a row is ``n / F1``, the largest real ℓ
    for which it is ℓ-eligible (``0`` for an empty row); higher is stronger. Monotonic: the
    union of two ℓ-eligible tables is ℓ-eligible (the bound is linear).

    Parameters
    ----------
    l:
        ℓ >= 1.

    References
    ----------
    Paper 004 §1.1 and §2 (definition; necessary and sufficient for an ℓ-diverse T*).
    """

    name: ClassVar[str] = "l-eligibility"
    monotonic: ClassVar[bool] = True
    higher_is_stronger: ClassVar[bool] = True

    def __init__(self, *, l: float) -> None:  # noqa: E741 - the papers' name
        x = check_real("l", l, model=self.name, low=1.0)
        self.l = int(x) if x.is_integer() else x
        self._ratio = Ratio(self.l)

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        n, top = sizes_and_top(counts, domain)
        return ratio_or(n, top, empty=0.0)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        n, top = sizes_and_top(counts, domain)
        # F1 * l <= n  <=>  F1 <= n / l
        return self._ratio.times_le(top, n) & (n > 0)

    def validate(self, domain: SADomain) -> None:
        report = explain_eligibility(domain.global_counts, domain.values, self.l)
        if not report.eligible:
            raise InfeasibleError(f"{report.one_line()}; {remedy()}", model=self)

    def params(self) -> dict[str, Any]:
        return {"l": self.l}
