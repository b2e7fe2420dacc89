"""Injector (Li & Li, ICDE 2008), the comparator of paper 003 §5: mine *negative
association rules* ``s_A ⇒ ¬y`` from the original table and form ℓ-diverse groups in which
no tuple is grouped with an SA value a mined rule excludes for it; bucketized release.

Rules. For every QI attribute set ``A`` (all subsets up to ``max_rule_size``) and every
signature ``s_A``, the rule ``s_A ⇒ ¬y`` holds with confidence 1 when no tuple matching
``s_A`` has value ``y``; its *expectation* is ``|s_A| · p(y)`` (the number of ``y``
expected among the ``|s_A|`` tuples were QI and SA independent). Rules with confidence
``>= min_conf`` (1: the paper's default, the only value implemented) and expectation
``>= min_exp`` (0.9) are kept. ``forbidden[t, y]`` is true when some kept rule matched by
``t`` excludes ``y``; a tuple's own value is never forbidden.

Groups (the diversity requirement of paper 003 §1: in every group each *sensitive* value
occurs at most ``1/ℓ`` of the group size). Each sensitive tuple seeds a group; ``ℓ - 1``
non-sensitive tuples are added, scanning outward from the seed in QI order (for utility),
taking a candidate only when (a) no member's rules exclude the candidate's value and (b) the
candidate's rules exclude no member's value — so no rule rules out any value of the group
for any member. Non-sensitive tuples left over are published in groups of ``ℓ`` in QI
order (no sensitive value, nothing to exclude). A seed for which no compatible candidates
remain is suppressed (counted in the provenance).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any, Iterable, Iterator

import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..models.base import PrivacyModel
from ..params import Integer, Optional, Real, Text, fail
from ..release import Partition
from .base import Anonymizer
from .ordering import SeededGroups, seed_order as order_seeds


def negative_rules(table: EncodedTable, *, min_exp: float = 0.9, max_rule_size: int = 2,
                   attrs: list[int] | None = None) -> np.ndarray:
    """``(n, n_sa)`` boolean matrix: value ``y`` is excluded for tuple ``t`` by a mined
    negative association rule (confidence 1, expectation >= ``min_exp``)."""
    qc = table.qi_codes.astype(np.int64)
    sa = table.sa_codes.astype(np.int64)
    n, K = table.n_rows, table.columns[table.sa_name].n_values
    py = np.bincount(sa, minlength=K) / max(n, 1)
    card = table.qi_cardinalities
    use = list(range(qc.shape[1])) if attrs is None else list(attrs)
    forbidden = np.zeros((n, K), dtype=bool)
    for k in range(1, max_rule_size + 1):
        for A in combinations(use, k):
            if math.prod(int(card[a]) for a in A) < 2**62:  # the mixed-radix key fits in int64
                key = np.zeros(n, dtype=np.int64)
                for a in A:
                    key = key * int(card[a]) + qc[:, a]
                uniq, inv = np.unique(key, return_inverse=True)
                n_keys = uniq.size
            else:  # it would wrap: exact dense ids of the tuples instead
                inv, n_keys = group_ids([qc[:, a] for a in A])
            inv = inv.ravel().astype(np.int64)
            cnt = np.bincount(inv, minlength=n_keys)
            counts = np.bincount(inv * K + sa, minlength=n_keys * K).reshape(n_keys, K)
            rule = (counts == 0) & (cnt[:, None] * py[None, :] >= min_exp)
            forbidden |= rule[inv]
    return forbidden


class Injector(SeededGroups, Anonymizer):
    """Injector-style bucketization honouring mined negative association rules.

    Parameters
    ----------
    model: verified on the output (e.g. ``simple-l=10,set=NAME``).
    l: group size ℓ (default: the model's ℓ).
    sensitive_set: the schema's sensitive value set (default: the model's).
    min_conf: minimum confidence (only 1 is implemented, the paper's default).
    min_exp: minimum expectation (default 0.9).
    max_rule_size: largest QI itemset of a rule's body (default 2).
    """

    name = "injector"
    release_kind = "bucketized"
    minimality = False
    background_robust = True
    #: re-run on every world under every order of its seeds (:mod:`openbook.attacks.replay.seeded`)
    replay = "rerun"
    parameter_constraints = {"l": Optional(Integer(minimum=1)), "sensitive_set": Optional(Text()),
                             # only the paper's default confidence 1 is implemented
                             "min_conf": Real(1.0, 1.0), "min_exp": Real(0.0, low_open=True),
                             "max_rule_size": Integer(minimum=1, strict=True)}

    def __init__(self, *, model: PrivacyModel, l: int | None = None, sensitive_set: str | None = None,
                 min_conf: float = 1.0, min_exp: float = 0.9, max_rule_size: int = 2, seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.l = l
        self.sensitive_set = sensitive_set
        self.min_conf = min_conf
        self.min_exp = min_exp
        self.max_rule_size = max_rule_size

    def params(self) -> dict[str, Any]:
        return {"l": self.l, "sensitive_set": self.sensitive_set, "min_conf": self.min_conf,
                "min_exp": self.min_exp, "max_rule_size": self.max_rule_size}

    def sensitive_values(self, table: EncodedTable) -> np.ndarray:
        """Which SA codes are sensitive (each seeds a group)."""
        from .ordering import sensitive_set_name

        return np.asarray(table.sa_domain.sensitive_mask(sensitive_set_name(self.sensitive_set, self.model,
                                                                            self.name)), dtype=bool)

    def seeded_runs(self, table: EncodedTable, orders: Iterable[Any]) -> Iterator[Partition]:
        """The partition of each of ``orders`` on one table, its rules mined once."""
        self._validate(table)
        from ..models.promise import promised_l_int

        l = self.l if self.l is not None else promised_l_int(self.model)
        if l is None:
            raise fail(self.name, "l", l, "be given (or the model an ℓ)")
        l = int(math.ceil(l))
        sens = self.sensitive_values(table)
        forb = negative_rules(table, min_exp=self.min_exp, max_rule_size=self.max_rule_size)
        sa = table.sa_codes.astype(np.int64)
        n = table.n_rows
        order = np.lexsort(table.qi_codes.T[::-1])
        pos = np.empty(n, dtype=np.int64)
        pos[order] = np.arange(n)
        sens_row = sens[sa]
        for seed_order in orders:
            seeds = order_seeds(self.name, np.flatnonzero(sens_row), self.seed, seed_order)
            yield self._run(l, forb, sa, order, pos, sens_row, seeds)

    def _run(self, l: int, forb: np.ndarray, sa: np.ndarray, order: np.ndarray, pos: np.ndarray,
             sens_row: np.ndarray, seeds: np.ndarray) -> Partition:
        """The groups of one order of the seeds (module docstring)."""
        n = sa.size
        free = ~sens_row  # candidate non-sensitive tuples not yet grouped
        group = np.full(n, -1, dtype=np.int64)
        gid = 0
        failed = 0
        for t in seeds.tolist():
            members = [t]
            vals = {int(sa[t])}
            excl = forb[t].copy()
            p = int(pos[t])
            lo, hi = p - 1, p + 1
            limit = 200 * l
            while len(members) < l and (lo >= 0 or hi < n) and hi - lo < limit:
                for q in (hi, lo):
                    if len(members) >= l or not 0 <= q < n:
                        continue
                    c = int(order[q])
                    if free[c] and not excl[sa[c]] and not forb[c, list(vals)].any():
                        members.append(c)
                        vals.add(int(sa[c]))
                        excl |= forb[c]
                        free[c] = False
                lo -= 1
                hi += 1
            if len(members) < l:
                free[np.asarray(members[1:], dtype=np.int64)] = True
                failed += 1
                continue
            group[np.asarray(members)] = gid
            gid += 1
        left = order[free[order]]
        if left.size:
            n_chunks = max(left.size // l, 1)
            group[left] = gid + np.minimum(np.arange(left.size) // l, n_chunks - 1)
        prov = {"l": l, "n_rules_excluded_pairs": int(forb.sum()), "n_failed_seeds": failed}
        return Partition.from_labels(group, provenance=self.provenance() | prov)
