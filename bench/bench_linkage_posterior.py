"""Benchmark of the exact linkage posterior (issue 25, item 3; docs/linkage.md).

A registry of three Mondrian releases of one random 5,000-row table (QIs age, zip, sex;
SA of 6 values): the linkage adversary (:mod:`openbook.attacks.linkage_posterior`) against
the earlier two, with the original table as the population — target: a few seconds. Also
the same with three releases of differing QI sets, and two Anatomy releases (whose classes
chain into components too large to count: the bound).

Run:  .venv/bin/python bench/bench_linkage_posterior.py [--rows N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def table(n: int, seed: int = 0):
    from openbook.data.schema import Schema
    from openbook.data.table import encode

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(17, 90, n), "zip": rng.choice([f"z{i}" for i in range(12)], n),
                       "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold", "cancer", "asthma", "ulcer"], n,
                                             p=[0.3, 0.1, 0.25, 0.1, 0.15, 0.1])})
    return encode(df, Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease"))


def run(label: str, releases, t) -> None:
    from openbook.attacks.registry import make_adversary

    adv = make_adversary("linkage")
    adv.run(releases[-1], original=t, earlier=releases[:-1])  # warm-up (numba matching kernel)
    t0 = time.perf_counter()
    res = adv.run(releases[-1], original=t, earlier=releases[:-1])
    dt = time.perf_counter() - t0
    n = int((res.group >= 0).sum())
    mx = float(np.nanmax(res.max_bound()))
    print(f"{label}: {dt:.2f} s for {n:,} people; methods {res.notes['methods']}; max posterior {mx:.3f}; "
          f"max 1/diversity {res.notes['one_over_diversity']['max']:.3f}; counting {res.notes['counting']}")


def main() -> None:
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5000)
    n = ap.parse_args().rows
    t = table(n)
    mondrian = [make_algorithm("mondrian", model=make_model(m)).anonymize(t) for m in ("k=5", "k=10", "l=2")]
    run(f"3 Mondrian releases (k=5, k=10, l=2) of {n:,} rows", mondrian, t)
    relaxed = [make_algorithm("mondrian", model=make_model(m), strict=False).anonymize(t) for m in ("k=4", "k=7", "k=12")]
    run(f"3 relaxed Mondrian releases (k=4, k=7, k=12) of {n:,} rows", relaxed, t)
    anatomy = [make_algorithm("anatomy", model=make_model("l=3"), seed=s).anonymize(t) for s in (1, 2)]
    run(f"2 Anatomy releases (l=3) of {n:,} rows", anatomy, t)


if __name__ == "__main__":
    main()
