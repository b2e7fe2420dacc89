"""What certification costs: on Adult (45,222 rows, 7 QIs, simple 6-diversity of Tech-support),
for every demo algorithm (src/openbook/demo.py: GG, RGG, SG, Mondrian strict and relaxed,
full-domain search, Set Anatomy; plus Anatomy), anonymize + certify (every adversary that
applies) beside anonymize + the audit the demo ran before certificates existed (replay with
2,000 worlds for GG/RGG/SG/the Anatomy family, exact credibility for the others, plus the
baseline), measured side by side in one run; target: certification at most 2x. Also the background audit of an ART
release (paper 003; r = 10, 5 QIs, SA education) — target < 10 s.

command: .venv/bin/python bench/bench_certify.py   (prints its section of bench/RESULTS.md)
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from openbook.algorithms.registry import make_algorithm  # noqa: E402
from openbook.attacks.baseline import baseline_attack  # noqa: E402
from openbook.attacks.credibility import minimality_attack  # noqa: E402
from openbook.attacks.replay import replay_release  # noqa: E402
from openbook.certificate import certify  # noqa: E402
from openbook.data.datasets import load_dataset  # noqa: E402
from openbook.models import make_model  # noqa: E402

ALGOS = [("GG", "gg", {}), ("RGG", "rgg", {"p": 0.65, "seed": 1}), ("SG", "sg", {}),
         ("Mondrian strict", "mondrian", {"strict": True}), ("Mondrian relaxed", "mondrian", {"strict": False}),
         ("Anatomy", "anatomy", {"seed": 1}), ("full-domain search 2 %", "full-domain-search", {"max_suppression": 0.02}),
         ("Set Anatomy (demo default)", "set-anatomy", {"seed": 1})]
OLD_REPLAY = {"gg", "rgg", "sg", "anatomy", "set-anatomy"}


def _old_audit(release, table, name):
    baseline_attack(release)
    if name in OLD_REPLAY:
        replay_release(release, table, worlds=2000, seed=0)
    else:
        minimality_attack(release, table)


def main() -> None:
    table = load_dataset("adult").encode()
    model = make_model("simple-l=6,set=tech-support")
    warm = table.take(range(3000))  # numba caches
    for _, name, params in ALGOS:
        r = make_algorithm(name, model=model, **params).anonymize(warm)
        certify(r, original=warm)
    print("## Certification cost (issue 12)\n")
    print("`.venv/bin/python bench/bench_certify.py` — Adult, 45,222 rows, simple 6-diversity of Tech-support; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; one run, both sides.\n")
    print("| algorithm | anonymize s | + old demo audit s | + certify s | ratio | verdict | adversaries |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, name, params in ALGOS:
        t0 = time.perf_counter()
        rel = make_algorithm(name, model=model, **params).anonymize(table)
        t_anon = time.perf_counter() - t0
        t0 = time.perf_counter()
        _old_audit(rel, table, name)
        t_old = time.perf_counter() - t0
        t0 = time.perf_counter()
        cert = certify(rel, original=table, params={"replay": {"worlds": 2000}})
        t_cert = time.perf_counter() - t0
        ratio = (t_anon + t_cert) / (t_anon + t_old)
        print(f"| {label} | {t_anon:.2f} | {t_old:.2f} | {t_cert:.2f} | {ratio:.2f} | {cert.verdict} | "
              f"{', '.join(f.adversary for f in cert.findings if f.ran)} |")
    # the background audit of an ART release
    from openbook.experiments.wong_bk import SET, paper003_table

    t3 = paper003_table(load_dataset("adult").frame, 5)
    art = make_algorithm("art", model=make_model(f"simple-l=10,set={SET}"), min_support=100, seed=0,
                         max_suppression=1.0)
    t0 = time.perf_counter()
    rel = art.anonymize(t3)
    t_art = time.perf_counter() - t0
    t0 = time.perf_counter()
    cert = certify(rel, original=t3, adversaries=["background"])
    t_bg = time.perf_counter() - t0
    (f,) = [x for x in cert.findings if x.adversary == "background"]  # the baseline runs beside it
    print(f"\nART on Adult (5 QIs, r = 10): anonymize {t_art:.1f} s; background audit {t_bg:.1f} s (target < 10 s); "
          f"max posterior {f.max_posterior}, {f.n_above} above 1/10, {f.n_unresolved} unresolved, "
          f"{f.n_absent} absent people reasoned about ({f.method}).\n")


if __name__ == "__main__":
    main()
