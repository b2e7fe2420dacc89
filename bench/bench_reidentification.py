"""Identity disclosure (issue 15): every re-identification measure on raw Adult (7 QIs)
in-process (target < 0.1 s), the identity summary of a 10,000-row table (target < 5 ms), and
10^7 synthetic rows (target < 5 s); the sample figures of Adult are exact, the journalist and
marketer figures without a population table are upper bounds, checked here against the truth
on a 10 % sample of Adult whose population (Adult itself) is known.

command: .venv/bin/python bench/bench_reidentification.py   (prints its section of bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from openbook.attacks.reidentification import class_size_summary, reidentification_risk  # noqa: E402
from openbook.data.datasets import load_dataset  # noqa: E402
from openbook.data.synthetic import synthetic_census, synthetic_schema  # noqa: E402

#: the population Adult is a sample of: US civilian non-institutional population aged 16+,
#: 1994 annual average (BLS, Current Population Survey): 196,814,000
US_1994 = 196_814_000


def _best(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _figures(s: dict) -> str:
    j = s["journalist"]
    return f"{j['highest_risk']:.4g} / {j['records_at_risk']:.2%} / {s['marketer']['success_rate']:.2%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="synthetic rows of the scale run (default 10^7)")
    args = ap.parse_args()
    table = load_dataset("adult").encode()
    reidentification_risk(table, population_size=US_1994)  # warm-up
    t_pop, r = _best(lambda: reidentification_risk(table))
    t_est, e = _best(lambda: reidentification_risk(table, population_size=US_1994))
    s, se = r.summary(), e.summary()
    pu = se["population_uniqueness"]
    print("## Identity disclosure: re-identification risk (issue 15)\n")
    print("`.venv/bin/python bench/bench_reidentification.py` — "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}.\n")
    print("Raw Adult, 45,222 rows, 7 QIs (age, workclass, education, marital-status, race, sex, native-country):\n")
    print("| measure | value |")
    print("| --- | --- |")
    print(f"| equivalence classes | {s['classes']:,} |")
    print(f"| sample uniques | {s['sample_uniques']:,} ({s['sample_uniqueness']:.2%}) |")
    print(f"| prosecutor: highest risk / records above 0.2 / success rate | {s['prosecutor']['highest_risk']:.4g} / "
          f"{s['prosecutor']['records_at_risk']:.2%} / {s['prosecutor']['success_rate']:.2%} |")
    print(f"| population uniques (N = {US_1994:,}, US civilian non-institutional population 16+, 1994, BLS) | "
          f"Dankar's rule: {pu['dankar']:.4%} ({pu['dankar_model']}); Zayatz {pu['zayatz']:.4%}, "
          f"Pitman {pu['pitman'] if pu['pitman'] is None else format(pu['pitman'], '.4%')}, "
          f"SNB {pu['snb'] if pu['snb'] is None else format(pu['snb'], '.4%')} |")
    print(f"| journalist upper bounds (no population table): highest / above 0.2 / marketer | {_figures(se)} |")
    # a 10 % sample whose population is known: the exact figures against the bounds
    rng = np.random.default_rng(0)
    sample = table.take(rng.choice(table.n_rows, table.n_rows // 10, replace=False))
    exact = reidentification_risk(sample, population=table.to_frame()[table.qi_names]).summary()
    bound = reidentification_risk(sample, population_size=table.n_rows).summary()
    print(f"| 10 % sample, population = Adult: exact (population table) highest / above 0.2 / marketer | "
          f"{_figures(exact)} |")
    print(f"| the same, upper bounds from the sample alone | {_figures(bound)} |")
    print(f"\nTime, all measures, in-process (best of 5): {t_pop * 1000:.1f} ms with the data as the population, "
          f"{t_est * 1000:.1f} ms with the population estimators and bounds (target < 100 ms).")
    ten = table.take(np.random.default_rng(1).choice(table.n_rows, 10_000, replace=False))
    summary = lambda: reidentification_risk(ten, population_size=table.n_rows).summary()  # noqa: E731
    sizes = np.unique(ten.qi_codes, axis=0, return_counts=True)[1]
    block = lambda: class_size_summary(sizes, population_size=table.n_rows)  # noqa: E731
    load = os.getloadavg()[0]
    # single calls, many of them: on a shared machine the minimum is a call no other process
    # interrupted, the median what a call costs under the load of the moment
    for what, fn in (("`reidentification_risk(table).summary()`", summary),
                     ("the check's identity block (`class_size_summary` of the class sizes)", block)):
        fn()
        runs = np.array(timeit.repeat(fn, number=1, repeat=300)) * 1000
        print(f"Identity summary of a 10,000-row table (Adult rows, N = 45,222: estimators and bounds), {what}: "
              f"min {runs.min():.2f} ms, median {np.median(runs):.2f} ms over 300 calls, load average "
              f"{load:.1f} on {os.cpu_count()} cores (target < 5 ms).")
    spec = synthetic_schema()
    qi = [c for c in spec if c != "sa" and c != spec["sa"]]
    for n in (args.rows,):
        frame = synthetic_census(n, seed=0)
        from openbook.data.schema import Schema
        from openbook.data.table import encode

        t = encode(frame, Schema.build(qi=[f"{c}:{spec[c]}" for c in qi], sa=spec["sa"]))
        del frame
        t_big, rb = _best(lambda: reidentification_risk(t, sampling_fraction=0.05), repeat=2)
        print(f"\n{n:,} synthetic rows, {len(qi)} QIs: {t_big:.2f} s for every measure (target < 5 s); "
              f"{rb.summary()['sample_uniqueness']:.2%} sample uniques.\n")


if __name__ == "__main__":
    main()
