"""ℓ-diversity of the groups: distinct, entropy and recursive (c,ℓ) (Machanavajjhala et al.).

Paper 001 (Wong et al., VLDB 2007) §2 recalls ℓ-diversity and §5 recursive (c,ℓ)-diversity:
"in each QID-EC, let v be the most frequent sensitive value, if we remove the next ℓ−2 most
frequent sensitive values, the frequency of v must be less than c times the total count of
the remaining values", i.e. with the group's counts sorted r1 >= r2 >= ... >= rm,
``r1 < c (r_ℓ + r_{ℓ+1} + ... + r_m)``. The frequency ("simple") form of ℓ-diversity, every
value at most a 1/ℓ fraction, is (α,k)-anonymity with α = 1/ℓ and lives in
:mod:`openbook.models.alpha_k`.

Feasibility (``validate``). All three models are monotonic (Machanavajjhala et al.):
merging two groups that satisfy one gives a group that does — for entropy by concavity
(proofs: ``docs/algorithms.md``; ``tests/unit/models/test_models_monotonic_exhaustive.py``
checks every pair of small groups). So a table admits a satisfying partition iff
the whole table, as one group, satisfies the model; that is what ``validate`` checks, after
the quick test "ℓ larger than the number of distinct SA values in the table".
ℓ-eligibility (paper 004) is **not** necessary for any of them (see
:mod:`openbook.models.eligibility` for counter-examples), so they do not require it.

Empty groups (a row of zeros) never hold and get level 0.

References
----------
A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam. ℓ-diversity: privacy
beyond k-anonymity. TKDD 1(1), 2007 (ICDE 2006), §4 (distinct, entropy and recursive
(c,ℓ)-diversity, monotonicity).
Paper 001 (Wong et al., VLDB 2007) §2, §5 (recursive (c,ℓ)-diversity, Table 9).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..errors import InfeasibleError
from ._checks import TOL, Ratio, as_counts, check_int, check_real, fmt_num
from .base import PrivacyModel, SADomain


def distinct_counts(counts: np.ndarray) -> np.ndarray:
    """Number of SA values present in each group."""
    return np.count_nonzero(counts, axis=1)


def xlogx_table(top: int) -> np.ndarray:
    x = np.arange(top + 1, dtype=np.float64)
    out = np.zeros(top + 1)
    np.multiply(x, np.log(x, out=np.zeros_like(x), where=x > 0), out=out, where=x > 0)
    return out


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each group's SA distribution (0 for an empty group).

    ``H = log n − Σ c log c / n`` over the counts ``c`` of a group of size ``n``; ``c log c``
    is looked up in a table over 0..max count (counts are small integers).
    """
    n = counts.sum(axis=1)
    top = int(counts.max(initial=0))
    if top <= 1 << 22:
        clogc = xlogx_table(top)[counts].sum(axis=1)
    else:  # huge counts: compute directly
        c = counts.astype(np.float64)
        clogc = np.where(c > 0, c * np.log(np.where(c > 0, c, 1.0)), 0.0).sum(axis=1)
    h = np.zeros(len(counts))
    nz = n > 0
    nf = n[nz].astype(np.float64)
    h[nz] = np.log(nf) - clogc[nz] / nf
    return np.maximum(h, 0.0)


def recursive_tails(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(r1, tails)``: the largest count of each group and, for ℓ = 1..m (column ℓ−1),
    ``r_ℓ + r_{ℓ+1} + ... + r_m`` of its counts sorted in descending order."""
    r = np.sort(counts, axis=1)
    cum = np.cumsum(r, axis=1)  # cum[:, i] = sum of the i+1 smallest = tail_{m-i}
    r1 = r[:, -1] if r.shape[1] else np.zeros(len(r), dtype=np.int64)
    return r1, cum[:, ::-1]


def recursive_level(counts: np.ndarray, c: float | Ratio) -> np.ndarray:
    """Largest ℓ for which each group is recursive (c,ℓ)-diverse (0 if none).

    The condition ``r1 < c * tail_ℓ`` gets harder as ℓ grows (the tail shrinks), so the
    level is the number of ℓ in 1..m for which it holds — the order of the tails does not
    matter, so they are taken as the ascending cumulative sums of the sorted counts.
    """
    ratio = c if isinstance(c, Ratio) else Ratio(c)
    r = np.sort(counts, axis=1)
    if r.shape[1] == 0:
        return np.zeros(len(r))
    cum = np.cumsum(r, axis=1)
    return np.count_nonzero(ratio.lt(r[:, -1:], cum), axis=1).astype(np.float64)


def _check_distinct(model: PrivacyModel, l: float, domain: SADomain) -> int:
    if domain.n_rows == 0:
        raise InfeasibleError("the table is empty", model=model)
    distinct = int(np.count_nonzero(domain.global_counts))
    if l > distinct:
        raise InfeasibleError(
            f"l={fmt_num(l)} is larger than the number of distinct SA values in the table "
            f"({distinct}): no partition can be {model.describe()}",
            model=model,
        )
    return distinct


class DistinctLDiversity(PrivacyModel):
    """Distinct ℓ-diversity: every group holds at least ℓ distinct SA values.

    Level of a group: its number of distinct SA values (higher is stronger).

    Parameters
    ----------
    l:
        ℓ, an integer >= 1.

    References
    ----------
    Machanavajjhala et al., TKDD 2007, §4; paper 001 §2.
    """

    name: ClassVar[str] = "distinct-l-diversity"
    monotonic: ClassVar[bool] = True
    absorbing: ClassVar[bool] = True  # a count that only grows
    higher_is_stronger: ClassVar[bool] = True

    def __init__(self, *, l: int) -> None:  # noqa: E741
        self.l = check_int("l", l, minimum=1, model=self.name)

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return distinct_counts(as_counts(counts, domain)).astype(np.float64)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return distinct_counts(as_counts(counts, domain)) >= self.l

    def box_verdict(self, lo: np.ndarray, hi: np.ndarray, total: np.ndarray, domain: SADomain) -> np.ndarray:
        """Every point of the box holds when ℓ values are present at every point
        (``lo >= 1``); none holds when fewer than ℓ values can be present at all
        (``hi >= 1``) or the group is smaller than ℓ."""
        lo, hi = np.asarray(lo), np.asarray(hi)
        out = np.full(lo.shape[0], -1, dtype=np.int8)
        out[(lo >= 1).sum(axis=1) >= self.l] = 1
        out[((hi >= 1).sum(axis=1) < self.l) | (np.asarray(total) < self.l)] = 0
        return out

    def validate(self, domain: SADomain) -> None:
        # Necessary and sufficient: the whole table is one admissible group.
        _check_distinct(self, self.l, domain)

    def params(self) -> dict[str, Any]:
        return {"l": self.l}


class EntropyLDiversity(PrivacyModel):
    """Entropy ℓ-diversity: every group's SA entropy is at least log ℓ.

    Level of a group: ``exp(H)``, the "effective number" of SA values (higher is stronger);
    the group holds iff ``H >= log ℓ − 1e-12`` (the tolerance absorbs float rounding when a
    group is exactly ℓ-diverse, e.g. ℓ equally frequent values).

    Parameters
    ----------
    l:
        ℓ >= 1, a real number.

    References
    ----------
    Machanavajjhala et al., TKDD 2007, §4 (entropy ℓ-diversity).
    """

    name: ClassVar[str] = "entropy-l-diversity"
    monotonic: ClassVar[bool] = True
    higher_is_stronger: ClassVar[bool] = True

    def __init__(self, *, l: float) -> None:  # noqa: E741
        x = check_real("l", l, model=self.name, low=1.0)
        self.l = int(x) if x.is_integer() else x

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        c = as_counts(counts, domain)
        level = np.exp(entropy(c))
        level[c.sum(axis=1) == 0] = 0.0
        return level

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        c = as_counts(counts, domain)
        return (entropy(c) >= np.log(self.l) - TOL) & (c.sum(axis=1) > 0)

    def box_verdict(self, lo: np.ndarray, hi: np.ndarray, total: np.ndarray, domain: SADomain) -> np.ndarray:
        """Entropy is at least the min-entropy ``-log max p`` and at most ``log`` of the number
        of values present: every point holds when no value can exceed ``n/ℓ`` of the group
        (``hi <= n/ℓ``), none when fewer than ℓ values can be present (``hi >= 1``)."""
        hi = np.asarray(hi, dtype=np.float64)
        n = np.asarray(total, dtype=np.float64)
        out = np.full(n.shape[0], -1, dtype=np.int8)
        with np.errstate(divide="ignore", invalid="ignore"):
            floor = -np.log(np.minimum(hi.max(axis=1, initial=0.0), n) / n)  # a lower bound of H
        out[(n > 0) & (floor >= np.log(self.l))] = 1
        out[(n <= 0) | ((hi >= 1).sum(axis=1) < self.l)] = 0
        return out

    def validate(self, domain: SADomain) -> None:
        _check_distinct(self, self.l, domain)
        whole = domain.global_counts[None, :]
        if not bool(self.holds(whole, domain)[0]):
            eff = float(self.group_levels(whole, domain)[0])
            raise InfeasibleError(
                f"the table's SA entropy is too low for {self.describe()}: exp(H) = {eff:.4g} "
                f"< l={fmt_num(self.l)} for the whole table, and every partition has a group "
                "with at most the table's entropy (entropy is concave)",
                model=self,
            )

    def params(self) -> dict[str, Any]:
        return {"l": self.l}


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c,ℓ)-diversity: ``r1 < c (r_ℓ + ... + r_m)`` in every group.

    With the group's SA counts sorted ``r1 >= r2 >= ... >= rm``. A group with fewer than ℓ
    distinct values fails (its tail sum is 0). Level of a group: the largest ℓ for which it
    holds with this ``c`` (0 if none; higher is stronger).

    Parameters
    ----------
    c:
        c > 0 (compared exactly when it is a simple fraction such as 2 or 0.5).
    l:
        ℓ, an integer >= 1.

    References
    ----------
    Machanavajjhala et al., TKDD 2007, §4 (recursive (c,ℓ)-diversity); paper 001 §5 (Table 9,
    (3,3)-diversity).
    """

    name: ClassVar[str] = "recursive-cl-diversity"
    monotonic: ClassVar[bool] = True
    higher_is_stronger: ClassVar[bool] = True

    def __init__(self, *, c: float, l: int) -> None:  # noqa: E741
        x = check_real("c", c, model=self.name, low=0.0, low_open=True)
        self.c = int(x) if x.is_integer() else x
        self.l = check_int("l", l, minimum=1, model=self.name)
        self._ratio = Ratio(self.c)

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return recursive_level(as_counts(counts, domain), self._ratio)

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        c = as_counts(counts, domain)
        if self.l > c.shape[1]:
            return np.zeros(len(c), dtype=bool)
        r1, tails = recursive_tails(c)
        return self._ratio.lt(r1, tails[:, self.l - 1])

    def validate(self, domain: SADomain) -> None:
        _check_distinct(self, self.l, domain)
        whole = domain.global_counts[None, :]
        if not bool(self.holds(whole, domain)[0]):
            r1, tails = recursive_tails(whole)
            raise InfeasibleError(
                f"{self.describe()} cannot hold on this table: even the whole table as one "
                f"group has r1 = {int(r1[0])} >= c * (r_l + ... + r_m) = "
                f"{fmt_num(self.c)} * {int(tails[0, self.l - 1])}",
                model=self,
            )

    def params(self) -> dict[str, Any]:
        return {"c": self.c, "l": self.l}
