"""(α,k)-anonymity and simple (binary) ℓ-diversity: a frequency bound on sensitive values.

Paper 001 (Wong et al., VLDB 2007) §2: "T is said to satisfy (α,k)-anonymity if T is
k-anonymous and the proportion of each sensitive value in every equivalence class is at most
α ... If we set α = 1/ℓ and k = 1, the (α,k)-anonymity model becomes the simplified model of
ℓ-diversity" (also §7: α = 1/ℓ, k = 1). Paper 000 (Cormode et al., VLDB 2010) §2.2:
"(simple) ℓ-diversity ... insisting that in each group no distinct SA value occurs more than
a 1/ℓ fraction of the time ... only certain values of the SA are deemed sensitive, and only
these values must obey the 1/ℓ fraction. An extreme case is binary ℓ-diversity".

Each value or the whole set. The two papers read a set of sensitive values differently:

``set_mode="each"`` (default)
    every value of the set, separately, has frequency <= α in every group. This is paper
    000 §2.2 ("only these values must obey the 1/ℓ fraction"; its §5.1 experiments designate
    two Occupation values and report the risk of each separately) and the definition of
    (α,k)-anonymity in paper 001 §2 ("the proportion of each sensitive value").
``set_mode="total"``
    the proportion of the whole set s — the sum of its values' counts — is <= α. This is
    paper 001 §3–§7 with a *sensitive value set* s: credibility is the probability that an
    individual is linked to s (Definition 2), ``|Ci(s)|`` counts all tuples with values in s
    (§4.1), and "each QID-EC contains at most 1/m occurrences of the sensitive value set"
    (§7, the Education set of 1,566 tuples). Use it to reproduce paper 001.

The two agree for a one-value set (binary ℓ-diversity); "total" is the stronger one. Without
a set every SA value is sensitive and only "each" makes sense.

Comparisons are exact integers (``count * ℓ <= size``) whenever α is a simple fraction.
The level of a group is the α it achieves: the largest frequency of a (set) value, or the
set's total frequency (lower is stronger; 1 for an empty group, which never holds).

Feasibility: the bound is linear, so summing it over any partition's groups shows the whole
table must satisfy it — for α = 1/ℓ over all values this is ℓ-eligibility (paper 004 §2),
which is therefore necessary and sufficient; ``validate`` says so and names R-suppression.

References
----------
R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang. (α,k)-anonymity. KDD 2006.
Paper 001 (Wong et al., VLDB 2007) §2, §4.1, §7; paper 000 (Cormode et al., VLDB 2010)
§2.2; paper 004 §2 (ℓ-eligibility).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..errors import InfeasibleError, ParameterError
from ._checks import (
    Ratio,
    check_choice,
    check_group_size,
    check_int,
    check_real,
    fmt_num,
    fmt_value,
    ratio_or,
    sizes_and_top,
)
from .base import PrivacyModel, SADomain
from .eligibility import remedy

SET_MODES = ("each", "total")


def sensitive_counts(
    counts: np.ndarray, domain: SADomain, sensitive_set: str | None, set_mode: str
) -> np.ndarray:
    """Per group, the count the frequency bound applies to: the largest count of a
    (sensitive) value ("each") or the sensitive set's total count ("total")."""
    mask = domain.sensitive_mask(sensitive_set)
    if mask is None:
        return counts.max(axis=1, initial=0)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (counts.shape[1],):
        raise ParameterError(
            f"sensitive set {sensitive_set!r} has {mask.size} entries but the SA domain has "
            f"{counts.shape[1]} values",
            parameter="sensitive_set",
            value=sensitive_set,
        )
    if set_mode == "total":
        return counts @ mask.astype(np.int64)
    return counts[:, mask].max(axis=1, initial=0)


class AlphaKAnonymity(PrivacyModel):
    """(α,k)-anonymity: groups of at least k rows, each sensitive value's (or the sensitive
    set's) frequency at most α in every group.

    Parameters
    ----------
    alpha:
        α in (0, 1].
    k:
        Minimum group size, integer >= 1 (default 1).
    sensitive_set:
        Name of a sensitive value set of the SA domain (``domain.sensitive_sets``); ``None``
        (default) makes every SA value sensitive.
    set_mode:
        ``"each"`` (default: every value of the set bounded separately; paper 000 §2.2,
        paper 001 §2) or ``"total"`` (the set's summed frequency; paper 001 §4.1, §7).
        See the module docstring.

    References
    ----------
    Wong et al., KDD 2006; paper 001 §2; paper 000 §2.2.
    """

    name: ClassVar[str] = "alpha-k-anonymity"
    monotonic: ClassVar[bool] = True
    higher_is_stronger: ClassVar[bool] = False

    def __init__(
        self,
        *,
        alpha: float,
        k: int = 1,
        sensitive_set: str | None = None,
        set_mode: str = "each",
    ) -> None:
        x = check_real("alpha", alpha, model=self.name, low=0.0, high=1.0, low_open=True)
        self.alpha = x
        self.k = check_int("k", k, minimum=1, model=self.name)
        self._init_set(sensitive_set, set_mode)
        self._ratio = Ratio(self.alpha)

    def _init_set(self, sensitive_set: str | None, set_mode: str) -> None:
        if sensitive_set is not None and not isinstance(sensitive_set, str):
            raise ParameterError(
                f"{self.name}: sensitive_set must be the name of a sensitive value set, got "
                f"{sensitive_set!r}",
                parameter="sensitive_set",
                value=sensitive_set,
            )
        self.sensitive_set = sensitive_set
        self.set_mode = check_choice("set_mode", set_mode, SET_MODES, model=self.name)
        if sensitive_set is None and self.set_mode == "total":
            raise ParameterError(
                f"{self.name}: set_mode='total' needs a sensitive_set (the total frequency of "
                "all SA values is always 1)",
                parameter="set_mode",
                value=set_mode,
            )

    def _sizes_and_top(self, counts: np.ndarray, domain: SADomain) -> tuple[np.ndarray, np.ndarray]:
        return sizes_and_top(
            counts, domain, lambda c: sensitive_counts(c, domain, self.sensitive_set, self.set_mode)
        )

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        n, top = self._sizes_and_top(counts, domain)
        return ratio_or(top, n, empty=1.0)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        n, top = self._sizes_and_top(counts, domain)
        return self._ratio.le(top, n) & (n >= self.k)

    def box_verdict(self, lo: np.ndarray, hi: np.ndarray, total: np.ndarray, domain: SADomain) -> np.ndarray:
        """The bounded count (a value's, or the set's total) is at least its value at ``lo``
        and at most its value at ``hi``; the group's size is ``total`` at every point."""
        n = np.asarray(total, dtype=np.int64)
        top_lo = sensitive_counts(np.asarray(lo, dtype=np.int64), domain, self.sensitive_set, self.set_mode)
        top_hi = np.minimum(sensitive_counts(np.asarray(hi, dtype=np.int64), domain, self.sensitive_set,
                                             self.set_mode), n)
        big = n >= self.k
        out = np.full(n.shape[0], -1, dtype=np.int8)
        out[big & np.asarray(self._ratio.le(top_hi, n), dtype=bool)] = 1
        out[~big | ~np.asarray(self._ratio.le(top_lo, n), dtype=bool)] = 0
        return out

    # -- feasibility ---------------------------------------------------------------------
    def _bound_text(self) -> str:
        return f"alpha={fmt_num(self.alpha)}"

    def validate(self, domain: SADomain) -> None:
        n = check_group_size(self, self.k, domain, self.describe())
        g = np.asarray(domain.global_counts, dtype=np.int64)
        allowed = self._ratio.floor_times(n)
        mask = domain.sensitive_mask(self.sensitive_set)
        if mask is not None and self.set_mode == "total":
            total = int(g[np.asarray(mask, dtype=bool)].sum())
            if total > allowed:
                raise InfeasibleError(
                    f"the table violates {self._bound_text()} for sensitive set "
                    f"{self.sensitive_set!r}: its values occur {total} times in total but at "
                    f"most {allowed} of {n} rows may (excess {total - allowed}); no partition "
                    f"can be {self.describe()}; {remedy()}",
                    model=self,
                )
            return
        cand = g if mask is None else np.where(np.asarray(mask, dtype=bool), g, -1)
        top = int(np.argmax(cand)) if cand.size else 0
        count = int(cand[top]) if cand.size else 0
        if count > allowed:
            which = "SA value" if mask is None else f"sensitive value (set {self.sensitive_set!r})"
            raise InfeasibleError(
                f"{self._ineligible_text()}: {which} {fmt_value(domain.values[top])} occurs "
                f"{count} times but at most {allowed} of {n} rows may share it "
                f"(excess {count - allowed}); no partition can be {self.describe()}; {remedy()}",
                model=self,
            )

    def _ineligible_text(self) -> str:
        inv = 1.0 / self.alpha
        if float(inv).is_integer():
            return f"the table is not {int(inv)}-eligible ({self._bound_text()})"
        return f"the table violates {self._bound_text()} (it is not 1/alpha-eligible)"

    def params(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "k": self.k,
            "sensitive_set": self.sensitive_set,
            "set_mode": self.set_mode,
        }


class SimpleLDiversity(AlphaKAnonymity):
    """Simple (binary) ℓ-diversity: (α,k)-anonymity with α = 1/ℓ and k = 1.

    Every (sensitive) value has frequency at most 1/ℓ in every group, decided exactly as
    ``count * ℓ <= size``. The level is the α achieved, as for :class:`AlphaKAnonymity`
    (lower is stronger; the ℓ achieved is its reciprocal). ``validate`` raises when the
    table is not ℓ-eligible (paper 004), naming R-suppression.

    Parameters
    ----------
    l:
        ℓ >= 1 (a real number is accepted).
    sensitive_set, set_mode:
        As for :class:`AlphaKAnonymity`; binary ℓ-diversity is a one-value set.

    References
    ----------
    Paper 000 §2.2 (simple / binary ℓ-diversity); paper 001 §2, §7 (α = 1/ℓ, k = 1).
    """

    name: ClassVar[str] = "simple-l-diversity"

    def __init__(
        self, *, l: float, sensitive_set: str | None = None, set_mode: str = "each"  # noqa: E741
    ) -> None:
        x = check_real("l", l, model=self.name, low=1.0)
        self.l = int(x) if x.is_integer() else x
        frac = Fraction(self.l).limit_denominator(10**6)
        self.alpha = 1.0 / self.l
        self.k = 1
        self._init_set(sensitive_set, set_mode)
        self._ratio = Ratio(1 / frac if float(frac) == float(self.l) else self.alpha)

    def _bound_text(self) -> str:
        return f"l={fmt_num(self.l)}"

    def _ineligible_text(self) -> str:
        return f"the table is not {fmt_num(self.l)}-eligible"

    def params(self) -> dict[str, Any]:
        return {"l": self.l, "sensitive_set": self.sensitive_set, "set_mode": self.set_mode}
