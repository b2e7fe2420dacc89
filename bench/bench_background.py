"""Bench (paper 003): ART on Adult (45,222 rows, 5 QIs, SA Education) — target < 60 s;
exact background-knowledge audit of an ℓ = 10 bucketization of Adult — target < 60 s.

The audited release is the simplified-ℓ-diversity Anatomy of ``experiments/wong_bk.py``
(Education is not 10-eligible, so the full-SA Anatomy of ``algorithms/anatomy.py`` is
infeasible here). Run: ``.venv/bin/python bench/bench_background.py``.
"""

import time

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.background import mine_knowledge
from openbook.attacks.robustness import audit_groups, audit_release
from openbook.data.adult import load_adult
from openbook.experiments.wong_bk import SET, anatomy_sensitive_set, paper003_table
from openbook.models.registry import make_model


def main() -> None:
    table = paper003_table(load_adult("full"), 5)
    sens = table.sa_domain.sensitive_mask(SET)
    t = time.perf_counter()
    kn = mine_knowledge(table, min_support=100)
    print(f"mine G_A, 31 attribute sets: {time.perf_counter() - t:.3f} s")
    for name in ("art", "art-exact"):
        algo = make_algorithm(name, model=make_model(f"simple-l=10,set={SET}"), min_support=100, seed=0,
                              max_suppression=1.0)  # ART withholds the seeds it cannot make robust
        t = time.perf_counter()
        part = algo.partition(table)
        el = time.perf_counter() - t
        pv = part.provenance
        extra = {k: pv[k] for k in ("certified_by_bound", "certified_by_exact_dp", "failed_undecided") if k in pv}
        print(f"{name} on Adult ({table.n_rows} rows, 5 QIs, r=10): {el:.1f} s (target < 60 s); groups "
              f"{part.n_groups}, suppressed sensitive tuples {pv['suppressed_sensitive']} of {pv['n_seeds']} {extra}")
        rel = algo.anonymize(table)
        t = time.perf_counter()
        rep = audit_release(rel, kn, r=10, sensitive=sens)
        d = rep.to_dict()
        print(f"  exact audit (audit_release) of its release: {time.perf_counter() - t:.1f} s; problematic "
              f"{d['n_problematic']}, max posterior {d['max_posterior']:.4f}, methods {d['methods']}")
    part = anatomy_sensitive_set(table, 10, 0)
    t = time.perf_counter()
    rep = audit_groups(kn, table.qi_codes, table.sa_codes, part.group, r=10, sensitive=sens)
    el = time.perf_counter() - t
    d = rep.to_dict()
    print(f"exact audit of an l=10 bucketization ({part.n_groups} groups, 31 attribute sets): {el:.1f} s "
          f"(target < 60 s); methods {d['methods']}; problematic {d['n_problematic']} "
          f"({d['problematic_fraction']:.3f} of sensitive tuples)")


if __name__ == "__main__":
    main()
