"""Benchmark: 10,000 COUNT queries over an Adult release (target < 5 s for exact answers plus
the estimates of one bucketized and one generalized release).

    .venv/bin/python bench/bench_queries.py [--n 10000] [--qd 3] [--sel 0.05]
"""

from __future__ import annotations

import argparse
import time

from openbook.algorithms import make_algorithm
from openbook.data.datasets import load_dataset
from openbook.models import make_model
from openbook.utility.metrics import view_from_partition
from openbook.utility.queries import answer_all, average_relative_error, estimate_answers, make_workload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--qd", type=int, default=3)
    ap.add_argument("--sel", type=float, default=0.05)
    a = ap.parse_args()
    table = load_dataset("adult").encode()
    model = make_model("l=6")
    rgg = view_from_partition(table, make_algorithm("rgg", model=model, p=0.65, seed=1).partition(table),
                              kind="bucketized")
    mon = view_from_partition(table, make_algorithm("mondrian", model=model, strict=False).partition(table))
    small = make_workload(table, n=10, qd=a.qd, sel=a.sel, seed=9)  # compile the kernels
    answer_all(small, table, [rgg])
    estimate_answers(small, mon, table)
    t0 = time.perf_counter()
    wl = make_workload(table, n=a.n, qd=a.qd, sel=a.sel, seed=1)
    t1 = time.perf_counter()
    act, (est_b,) = answer_all(wl, table, [rgg])
    t2 = time.perf_counter()
    est_g = estimate_answers(wl, mon, table)
    t3 = time.perf_counter()
    print(f"{a.n} queries, qd={a.qd}, sel={a.sel} on Adult ({table.n_rows} rows)")
    print(f"  workload            {t1 - t0:6.2f} s")
    print(f"  exact + RGG (bkt)   {t2 - t1:6.2f} s   ARE {average_relative_error(est_b, act):.4f}")
    print(f"  Mondrian (gen)      {t3 - t2:6.2f} s   ARE {average_relative_error(est_g, act):.4f}")
    total = t3 - t0
    print(f"  total               {total:6.2f} s   (target < 5 s) {'OK' if total < 5 else 'SLOW'}")


if __name__ == "__main__":
    main()
