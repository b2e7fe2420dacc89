"""Benchmark: R-suppression (paper 004 Fig. 3) on the SA counts + mapping the per-value
suppression counts to rows (uniformly random rows of each value, seeded) on 10^7 rows.

    .venv/bin/python bench/bench_suppression.py [--rows 10000000] [--l 6]

Target (issue 7): under 5 s for 10^7 rows. SA codes: ``openbook.data.synthetic.synthetic_codes``
(14 Zipf-distributed values, alpha = 1, so the most frequent holds ~31 % of the rows and the
table is not 6-eligible); numpy Zipf codes if that module is absent.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import numpy as np

from openbook.algorithms.suppression import r_suppression, restore_eligibility, suppress_rows, unsafe_d_suppression


def sa_codes(n: int, seed: int) -> tuple[np.ndarray, str]:
    try:
        from openbook.data.synthetic import synthetic_codes

        _, sa, _ = synthetic_codes(n, seed=seed, n_qi=1, sa_values=14, zipf_alpha=1.0)
        return np.asarray(sa), "openbook.data.synthetic.synthetic_codes(sa_values=14, zipf_alpha=1)"
    except ImportError:
        p = 1.0 / np.arange(1, 15)
        rng = np.random.default_rng(seed)
        return rng.choice(14, size=n, p=p / p.sum()).astype(np.int32), "numpy Zipf(1) over 14 values"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--l", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    sa, source = sa_codes(a.rows, a.seed)
    restore_eligibility(np.repeat(np.arange(5), [10, 4, 2, 1, 1]), 3, seed=0)  # load the numba cache untimed
    counts = np.bincount(sa, minlength=14)
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"rows: {sa.size:,}; SA source: {source}; top share {counts.max() / sa.size:.1%}; l = {a.l}")
    t0 = time.perf_counter()
    plan = r_suppression(np.bincount(sa, minlength=14), a.l, seed=a.seed)
    t1 = time.perf_counter()
    mask = suppress_rows(sa, plan.suppressed, a.seed)
    t2 = time.perf_counter()
    step = restore_eligibility(sa, a.l, seed=a.seed)
    t3 = time.perf_counter()
    kept = np.bincount(sa[~mask], minlength=14)
    assert kept.max() * a.l <= kept.sum() and mask.sum() == plan.n_suppressed
    print(f"R-suppression on counts (incl. bincount): {1e3 * (t1 - t0):8.1f} ms  "
          f"(|T_S| = {plan.n_suppressed:,}, rate {plan.rate:.2%}; Unsafe D lower bound "
          f"{unsafe_d_suppression(counts, a.l).rate:.2%})")
    print(f"mapping to rows:                          {1e3 * (t2 - t1):8.1f} ms")
    print(f"restore_eligibility end to end:           {1e3 * (t3 - t2):8.1f} ms  "
          f"({step.plan.n_suppressed:,} rows withheld)")
    total = t3 - t2
    print(f"target < 5 s: {'PASS' if total < 5 else 'FAIL'} ({total:.2f} s)")


if __name__ == "__main__":
    main()
