"""Injector's rule mining keys QI itemsets by mixed radix; where the product of the
cardinalities passes int64 the key must not wrap (two distinct tuples would merge and a
negative association rule would be lost). Checked against a brute force over Python tuples,
on sizes built so the wrapped int64 keys of two tuples do collide."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from openbook.algorithms.injector import negative_rules
from openbook.data.table import EncodedTable

CARD, D = 10_000, 5  # 10^20 > 2^63: a 5-attribute key wraps


def _colliding_pair() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """t1 = (x, 0, 0, 0, 0) and t2 whose mixed-radix key is t1's key mod 2^64."""
    for x in range(1, CARD):
        r = (x * CARD ** (D - 1)) % 2**64
        if r < CARD ** (D - 1):
            digits = [(r // CARD ** (D - 1 - j)) % CARD for j in range(1, D)]
            return (x, 0, 0, 0, 0), (0, *digits)
    raise AssertionError("no colliding pair")


def _brute(qc: np.ndarray, sa: np.ndarray, k_sa: int, min_exp: float, max_rule_size: int) -> np.ndarray:
    n = qc.shape[0]
    py = np.bincount(sa, minlength=k_sa) / n
    out = np.zeros((n, k_sa), dtype=bool)
    for k in range(1, max_rule_size + 1):
        for A in combinations(range(qc.shape[1]), k):
            groups: dict[tuple[int, ...], list[int]] = {}
            for i in range(n):
                groups.setdefault(tuple(int(v) for v in qc[i, list(A)]), []).append(i)
            for rows in groups.values():
                counts = np.bincount(sa[rows], minlength=k_sa)
                rule = (counts == 0) & (len(rows) * py >= min_exp)
                out[rows] |= rule
    return out


def test_rules_survive_keys_beyond_int64():
    t1, t2 = _colliding_pair()
    naive = [np.int64(0), np.int64(0)]
    with np.errstate(over="ignore"):
        for j in range(D):
            naive = [k * np.int64(CARD) + np.int64(t[j]) for k, t in zip(naive, (t1, t2))]
    assert naive[0] == naive[1] and t1 != t2  # the unguarded key merges them
    rows, sa = [t1] * 5 + [t2] * 5, [0] * 5 + [1] * 5
    fresh = iter(range(100, 10_000))
    # every proper subset of t1's (t2's) values also occurs with the other SA value: the rule
    # excluding it holds for the full 5-attribute tuple only
    for base, other in ((t1, 1), (t2, 0)):
        for size in range(1, D):
            for S in combinations(range(D), size):
                rows.append(tuple(base[j] if j in S else next(fresh) for j in range(D)))
                sa.append(other)
    qc = np.asarray(rows, dtype=np.int32)
    sa_codes = np.asarray(sa, dtype=np.int32)
    table = EncodedTable.from_codes(qi_codes=qc, sa_codes=sa_codes, qi_names=[f"q{j}" for j in range(D)],
                                    sa_name="s", qi_categories=[np.arange(CARD) for _ in range(D)],
                                    sa_categories=np.array(["a", "b"], dtype=object),
                                    qi_kinds=["categorical"] * D)
    assert int(np.prod([float(c) for c in table.qi_cardinalities])) > 2**63
    got = negative_rules(table, min_exp=0.9, max_rule_size=D)
    want = _brute(qc, sa_codes, 2, 0.9, D)
    assert want[0, 1] and want[5, 0]  # the rules found at the full tuple only
    np.testing.assert_array_equal(got, want)
