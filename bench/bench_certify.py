"""What certification costs: on Adult (45,222 rows, 7 QIs, simple 6-diversity of Tech-support),
for every demo algorithm (src/openbook/demo.py: GG, RGG, SG, Mondrian strict and relaxed,
full-domain search, Set Anatomy; plus Anatomy), anonymize + certify (every adversary that
applies) beside anonymize + the audit the demo ran before certificates existed (replay with
2,000 worlds for GG/RGG/SG/the Anatomy family, exact credibility for the others, plus the
baseline), measured side by side in one run; target: certification at most 2x. Also the background audit of an ART
release (paper 003; r = 10, 5 QIs, SA education) — target < 10 s.

command: .venv/bin/python bench/bench_certify.py [--baseline REV]   (prints its section of bench/RESULTS.md)

Each side (``before`` = ``--baseline``, default the code before this round's speed work,
``bench/_baseline.py``; ``now`` = this tree) runs in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _baseline import BASELINE, baseline_env  # noqa: E402

ALGOS = [("GG", "gg", {}), ("RGG", "rgg", {"p": 0.65, "seed": 1}), ("SG", "sg", {}),
         ("Mondrian strict", "mondrian", {"strict": True}), ("Mondrian relaxed", "mondrian", {"strict": False}),
         ("Anatomy", "anatomy", {"seed": 1}), ("full-domain search 2 %", "full-domain-search", {"max_suppression": 0.02}),
         ("Set Anatomy (demo default)", "set-anatomy", {"seed": 1})]

#: run in a child process (this tree's code or an earlier commit's): one JSON line per row
CHILD = r"""
import json, time
from openbook.algorithms.registry import make_algorithm
from openbook.attacks.baseline import baseline_attack
from openbook.attacks.credibility import minimality_attack
from openbook.attacks.replay import replay_release
from openbook.certificate import certify
from openbook.data.datasets import load_dataset
from openbook.models import make_model
ALGOS = {algos!r}
OLD_REPLAY = {{"gg", "rgg", "sg", "anatomy", "set-anatomy"}}
table = load_dataset("adult").encode()
model = make_model("simple-l=6,set=tech-support")
warm = table.take(range(3000))  # numba caches
for _, name, params in ALGOS:
    certify(make_algorithm(name, model=model, **params).anonymize(warm), original=warm)
for label, name, params in ALGOS:
    t0 = time.perf_counter()
    rel = make_algorithm(name, model=model, **params).anonymize(table)
    t_anon = time.perf_counter() - t0
    t0 = time.perf_counter()
    baseline_attack(rel)  # the audit the demo ran before certificates existed
    if name in OLD_REPLAY:
        replay_release(rel, table, worlds=2000, seed=0)
    else:
        minimality_attack(rel, table)
    t_old = time.perf_counter() - t0
    t0 = time.perf_counter()
    cert = certify(rel, original=table, params={{"replay": {{"worlds": 2000}}}})
    t_cert = time.perf_counter() - t0
    unres = sum(int(f.n_unresolved or 0) for f in cert.findings if f.ran)
    print(json.dumps({{"label": label, "anon": t_anon, "old": t_old, "cert": t_cert, "verdict": str(cert.verdict),
                      "unresolved": unres, "adversaries": [f.adversary for f in cert.findings if f.ran]}}), flush=True)
# the background audit of an ART release
from openbook.experiments.wong_bk import SET, paper003_table
t3 = paper003_table(load_dataset("adult").frame, 5)
art = make_algorithm("art", model=make_model(f"simple-l=10,set={{SET}}"), min_support=100, seed=0, max_suppression=1.0)
t0 = time.perf_counter()
rel = art.anonymize(t3)
t_art = time.perf_counter() - t0
t0 = time.perf_counter()
cert = certify(rel, original=t3, adversaries=["background"])
t_bg = time.perf_counter() - t0
(f,) = [x for x in cert.findings if x.adversary == "background"]
print(json.dumps({{"label": "ART", "anon": t_art, "cert": t_bg, "max_posterior": f.max_posterior, "above": f.n_above,
                  "unresolved": f.n_unresolved, "absent": getattr(f, "n_absent", None), "method": f.method}}),
      flush=True)
"""


def measure(env: dict[str, str]) -> dict[str, dict]:
    code = CHILD.format(algos=ALGOS)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    return {r["label"]: r for r in (json.loads(x) for x in out.splitlines() if x.startswith("{"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help=f"git revision timed as 'before' (default {BASELINE})")
    args = ap.parse_args()
    now_env = dict(os.environ)
    now_env["PYTHONPATH"] = str(HERE.parent / "src")
    envs = {"now": now_env, "before": baseline_env(args.baseline)}
    for env in envs.values():  # BLAS threads spin when the cores are busy
        env["OPENBLAS_NUM_THREADS"] = "1"
    res = {name: measure(env) for name, env in envs.items()}
    print("## Certification cost (issue 12)\n")
    print("`.venv/bin/python bench/bench_certify.py` — Adult, 45,222 rows, simple 6-diversity of Tech-support; "
          f"`before` = commit {args.baseline}, `now` = this tree, each in a fresh process, one run per side; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end. Ratio = (anonymize + certify) "
          "/ (anonymize + the audit the demo ran before certificates); target at most 2.\n")
    print("| algorithm | anonymize s | + old demo audit s | certify s before | certify s now | ratio before | "
          "ratio now | verdict | people unresolved before / now | adversaries |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, _, _ in ALGOS:
        n, b = res["now"][label], res["before"][label]
        ratio = (n["anon"] + n["cert"]) / (n["anon"] + n["old"])
        ratio_b = (b["anon"] + b["cert"]) / (b["anon"] + b["old"])
        print(f"| {label} | {n['anon']:.2f} | {n['old']:.2f} | {b['cert']:.2f} | {n['cert']:.2f} | {ratio_b:.2f} | "
              f"{ratio:.2f}{'' if ratio <= 2 else ' (> 2)'} | {n['verdict']} | {b['unresolved']:,} / "
              f"{n['unresolved']:,} | {', '.join(n['adversaries'])} |")
    n, b = res["now"]["ART"], res["before"]["ART"]
    print(f"\nART on Adult (5 QIs, r = 10): anonymize {n['anon']:.1f} s; background audit {b['cert']:.1f} s before, "
          f"{n['cert']:.1f} s now (target < 10 s); max posterior {n['max_posterior']}, {n['above']} above 1/10, "
          f"{n['unresolved']} unresolved, {n['absent']} absent people reasoned about ({n['method']}).\n")


if __name__ == "__main__":
    main()
