"""Benchmark: what an analyst keeps — the default (Generalized Anatomy, both certificate lines
passing) beside strict Mondrian (uncertified) and Anatomy, on Adult (7 QIs, SA occupation),
for distinct 3-diversity, simple 6-diversity of Tech-support, t = 0.2 and k = 5 with ℓ = 3:
information loss (paper 001 Def. 6), NCP, the COUNT-query ARE of the demo's workload (1,000
queries, qd = 3, sel = 0.05; paper 000 §5.3), the certificate's verdict on both lines and the
ratios the issue aims at (ARE against Anatomy's and against strict Mondrian's).

    .venv/bin/python bench/bench_utility.py [--dataset adult] [--queries 1000]

Prints Markdown (a ``## `` section for bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import time

from openbook.algorithms import make_algorithm
from openbook.certificate import certify
from openbook.data.datasets import load_dataset
from openbook.models import make_model
from openbook.utility.metrics import utility_summary, view_from_release
from openbook.utility.queries import answer_all, make_workload, relative_errors

MODELS = ["l=3", "simple-l=6,set=tech-support", "t=0.2", "k=5,l=3"]
ALGORITHMS = [("generalized-anatomy (default)", "generalized-anatomy", {"seed": 1}),
              ("Mondrian strict", "mondrian", {"strict": True}),
              ("Mondrian strict, classes >= 5", "mondrian+k5", {"strict": True}),
              ("Anatomy", "anatomy", {"seed": 1})]


def _lines(cert) -> str:
    out = []
    for ln in cert.lines:
        out.append(f"{ln.name[:3]} {'pass' if ln.passes else 'FAIL'}")
    return ", ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--queries", type=int, default=1000)
    a = ap.parse_args()
    ds = load_dataset(a.dataset)
    table = ds.encode()
    wl = make_workload(table, seed=0, n=a.queries, qd=3, sel=0.05)
    act, _ = answer_all(wl, table, [])
    print("## Utility side by side: the certified default beside strict Mondrian and Anatomy\n")
    print(f"{ds.description}; {a.queries} COUNT queries (qd = 3, sel = 0.05, seed 0: the demo's workload). `lines`: the "
          "certificate's identity and attribute lines (defaults: identity 1/k or 0.2, attribute 1/ℓ, t, or nobody "
          "certain). Anatomy publishes exact QIs (identity fails by default); strict Mondrian is uncertified "
          "against the algorithm-aware adversary and fails it.\n")
    print("| model | algorithm | lines | classes | info loss | NCP | ARE | ARE / Anatomy's | ARE / Mondrian's | s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for spec in MODELS:
        model = make_model(spec)
        rows, are = [], {}
        for label, name, params in ALGORITHMS:
            t0 = time.perf_counter()
            try:
                if name == "mondrian+k5":  # the same model, with the identity line's class floor
                    from openbook.models.composite import AllOf
                    from openbook.models.k_anonymity import KAnonymity

                    rel = make_algorithm("mondrian", model=AllOf([model, KAnonymity(k=5)]), **params).anonymize(table)
                else:
                    rel = make_algorithm(name, model=model, **params).anonymize(table)
            except Exception as exc:  # noqa: BLE001 - an algorithm that cannot honour the model
                rows.append((label, f"cannot run ({type(exc).__name__})", None))
                continue
            cert = certify(rel, original=table)
            view = view_from_release(rel, table)
            util = utility_summary(view, table)
            _, (est,) = answer_all(wl, table, [view])
            err, _ = relative_errors(est, act)
            are[name] = float(err.mean())
            rows.append((label, (_lines(cert), util["n_classes"], util["information_loss"], util["ncp"],
                                 are[name], time.perf_counter() - t0), name))
        for label, vals, name in rows:
            if name is None:
                print(f"| {spec} | {label} | {vals} | | | | | | | |")
                continue
            lines, ncls, il, ncp, e, dt = vals
            ra = f"{e / are['anatomy']:.2f}" if "anatomy" in are else "–"
            rm = f"{e / are['mondrian']:.2f}" if "mondrian" in are else "–"
            if name == "generalized-anatomy" and "mondrian+k5" in are:
                rm += f" ({e / are['mondrian+k5']:.2f} vs classes >= 5)"
            print(f"| {spec} | {label} | {lines} | {ncls} | {il:.4f} | {ncp:.4f} | {e:.4f} | {ra} | {rm} | {dt:.1f} |")
    print("\nAim (issue 24): the default's ARE no worse than Anatomy's and within 1.5x of strict Mondrian's, both "
          "lines passing. Against strict Mondrian whose classes also hold at least 5 records (the identity "
          "line's floor) the default is within 1.5x for every model; against strict Mondrian under the model alone "
          "it is not for simple 6-diversity of Tech-support, whose classes average under 4 records and fail the "
          "identity line. No release that generalizes the QIs reaches Anatomy's ARE on this workload: even strict "
          "Mondrian under 5-anonymity alone (no constraint on the SA) has about 3.5x Anatomy's, whose exact QIs "
          "answer every QI predicate without error (docs/algorithms.md).")


if __name__ == "__main__":
    main()
