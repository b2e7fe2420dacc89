"""Benchmarks of paper 002's machinery (issue 6).

1. Greedy-Generalize (Algorithm 2) on |Q| = 10^6 QIs × |S| = 50 — target < 5 s.
2. Linkage audit of 10 Adult-sized releases (45,222 rows each: full-domain generalizations
   of Adult at 10 different level vectors, ℓ = 2 with suppression), for all 45,222 people —
   target < 10 s; then the same 10 releases through a release registry audit (9 earlier + 1 new).

Run:  .venv/bin/python bench/bench_linkage.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings

import numpy as np


def bench_greedy() -> float:
    from openbook.algorithms.ldelta import greedy_generalize, p_l

    rng = np.random.default_rng(0)
    P = rng.random((10**6, 50))
    P /= P.sum()
    p = 0.01 * p_l(P, 10)
    greedy_generalize(P[:1000] / P[:1000].sum(), l=10, p=p_l(P[:1000] / P[:1000].sum(), 10))  # numba warm-up (cached)
    t0 = time.perf_counter()
    cls, R = greedy_generalize(P, l=10, p=p)
    dt = time.perf_counter() - t0
    print(f"greedy-generalize |Q|=10^6 x |S|=50, l=10, beta=0.01: {R} classes in {dt:.3f} s (target < 5 s)")
    return dt


def adult_releases(n: int = 10):
    from openbook.algorithms import FullDomainGeneralization
    from openbook.data.adult import load_adult
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.errors import InfeasibleError
    from openbook.models.registry import make_model

    df = load_adult("full")
    qi = ["age:numeric", "sex", "race", "marital-status", "education", "native-country", "workclass"]
    table = encode(df, Schema.build(qi=qi, sa="occupation"))
    model = make_model("l=2")
    rng = np.random.default_rng(1)
    releases, tried = [], set()
    while len(releases) < n:
        levels = tuple([int(rng.integers(1, 5))] + [int(x) for x in rng.integers(0, 2, len(qi) - 1)])
        if levels in tried:
            continue
        tried.add(levels)
        try:
            releases.append(FullDomainGeneralization(model=model, levels=list(levels), max_suppression=0.3).anonymize(table))
        except InfeasibleError:
            continue
    hier = {n: table.hierarchy(n) for n in table.qi_names}
    population = df[[c.split(":")[0] for c in qi]]
    return releases, population, hier


def bench_linkage() -> float:
    from openbook.attacks.linkage import linkage
    from openbook.attacks.linkage_audit import audit_registry
    from openbook.release.registry import ReleaseRegistry

    t0 = time.perf_counter()
    releases, population, hier = adult_releases()
    print(f"built 10 Adult releases ({[r.n_published for r in releases]} rows published) in {time.perf_counter() - t0:.1f} s")
    linkage(releases[:1], population.iloc[:100], hierarchies=hier)  # numba warm-up
    t0 = time.perf_counter()
    res = linkage(releases, population, hierarchies=hier)
    dt = time.perf_counter() - t0
    s = res.summary(l=2)
    print(f"linkage of 10 releases x {len(population)} people: {dt:.3f} s (target < 10 s); "
          f"min single-release diversity {s['min_single_release_diversity']}, post-linkage min {s['min_diversity']}, "
          f"below l=2: {s['n_below_l']} ({s['fraction_below_l']:.2%}), distribution {dict(list(s['distribution'].items())[:6])}")
    with tempfile.TemporaryDirectory() as d:
        reg = ReleaseRegistry(d)
        for r in releases[:-1]:
            reg.add(r)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = audit_registry(reg, releases[-1], 2, population=population, hierarchies=hier, warn_only=True)
        dt2 = time.perf_counter() - t0
    print(f"registry audit (load 9 earlier + linkage + before-linkage + 9 pairwise linkages): {dt2:.3f} s; {rep.message()}")
    return dt


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.strip().splitlines()[0]).parse_args()
    print("command: .venv/bin/python bench/bench_linkage.py")
    g = bench_greedy()
    lk = bench_linkage()
    sys.exit(0 if g < 5 and lk < 10 else 1)
