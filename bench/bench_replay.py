"""Replay adversary's long audits (issue 16, "Long audits"; paper 000 §5.1), now against
openbook's earlier code, measured side by side in one run:

* the replay of a GG release of Adult (45,222 rows, paper 000's six QIs; binary 6-diversity of
  Tech-support, then Craft-repair; the last failing group dropped): the default engine (exact
  forward-backward over each group's prefix counts) and the sampled audit of 10^4 worlds per
  group (``force_sample``; target for Craft-repair: at most 2 s);
* the full ``openbook experiment cormode2010-fig3`` (GG, SG, Anatomy, relaxed and strict
  Mondrian at ℓ = 2..7, the t-closeness panel; target: at most 2 minutes), with the people the
  Mondrian replays leave unresolved (counted as failing, never as safe).

    .venv/bin/python bench/bench_replay.py [--repeat 3] [--baseline REV] [--no-fig3]

Each side runs in a fresh process (``before`` = ``--baseline``, default the code before this
round's speed work, ``bench/_baseline.py``); the replay audits are the best of ``--repeat``
warm runs, wall and CPU (process) time; the experiment (the CLI, in a process of its own) runs
once per side.
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

#: run in a child process: one JSON line per measurement
CHILD = r"""
import json, sys, time
from openbook.algorithms.registry import make_algorithm
from openbook.attacks.replay import replay_attack
from openbook.experiments.cormode2010_attack import adult_table
from openbook.models.registry import make_model
table = adult_table()
small = adult_table(2000)  # numba caches
a = make_algorithm("gg", model=make_model("simple-l=6,set=tech-support"), tail="drop")
replay_attack(small, a.partition(small).group, a, worlds=100, force_sample=True)
for sv in ("tech-support", "craft-repair"):
    # seeded: GG draws the order of people with equal QIs, so both sides replay one release
    algo = make_algorithm("gg", model=make_model(f"simple-l=6,set={{sv}}"), tail="drop", seed=1)
    part = algo.partition(table)
    for mode, kw in (("exact", {{}}), ("sampled", {{"force_sample": True}})):
        best = cpu = float("inf")
        for _ in range({repeat}):
            t0, c0 = time.perf_counter(), time.process_time()
            res = replay_attack(table, part.group, algo, worlds=10_000, seed=0, **kw)
            best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
        s = res.summary()
        print(json.dumps({{"what": "gg", "sv": sv, "mode": mode, "time": best, "cpu": cpu,
                          "groups": int(part.n_groups), "vulnerable": s.vulnerable_fraction,
                          "max_risk": s.max_risk_multiple, "max_se": float(s.max_stderr or 0.0)}}), flush=True)
if {fig3}:  # the CLI as a user runs it, in a process of its own
    import os, subprocess, tempfile
    import pandas as pd
    with tempfile.TemporaryDirectory() as out:
        cli = "import sys; from openbook.cli import main; sys.exit(main(sys.argv[1:]))"
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", cli, "experiment", "cormode2010-fig3", "--out", out, "--quiet"],
                           capture_output=True, text=True, env=os.environ)
        dt = time.perf_counter() - t0
        import resource
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI process: its CPU time
        if p.returncode:
            raise SystemExit("cormode2010-fig3 failed: " + p.stderr[-2000:])
        oth = pd.read_csv(os.path.join(out, "cormode2010-fig3-others.csv"))
    mond = oth[oth["algorithm"].astype(str).str.startswith("mondrian")]
    print(json.dumps({{"what": "fig3", "time": dt, "cpu": ru.ru_utime + ru.ru_stime, "mondrian_unresolved": int(mond["n_unresolved"].fillna(0).sum()) if "n_unresolved" in mond else None,
                      "mondrian_runs": int(len(mond))}}), flush=True)
"""


def measure(env: dict[str, str], repeat: int, fig3: bool) -> list[dict]:
    code = CHILD.format(repeat=repeat, fig3=fig3)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"bench_replay: a measurement failed:\n{p.stderr[-3000:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE, help=f"git revision timed as 'before' (default {BASELINE})")
    ap.add_argument("--no-fig3", action="store_true", help="skip the full cormode2010-fig3 run")
    args = ap.parse_args()
    now_env = dict(os.environ)
    now_env["PYTHONPATH"] = str(HERE.parent / "src")
    runs = {"before": baseline_env(args.baseline), "now": now_env}
    for env in runs.values():  # BLAS threads spin when the cores are busy
        env["OPENBLAS_NUM_THREADS"] = "1"
    res = {name: measure(env, args.repeat, not args.no_fig3) for name, env in runs.items()}
    print("## Replay adversary: long audits (issue 16), before/after\n")
    print(f"Adult, 45,222 rows, paper 000's six QIs, GG with binary 6-diversity, last failing group dropped. "
          f"`before` = commit {args.baseline}, `now` = this tree, each in a fresh process; replay: best of "
          f"{args.repeat} warm runs, wall and CPU (process) time; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the end.\n")
    print("| replay of GG ℓ = 6 | mode | before s | now s | before / now | CPU before s | CPU now s | target | "
          "now: vulnerable, max risk × 1/ℓ, max s.e. |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    gg = {(r["sv"], r["mode"]): r for r in res["now"] if r["what"] == "gg"}
    old = {(r["sv"], r["mode"]): r for r in res["before"] if r["what"] == "gg"}
    for key, now in gg.items():
        b = old.get(key)
        target = "≤ 2 s: " + ("OK" if now["time"] <= 2 else "SLOW") if key == ("craft-repair", "sampled") else ""
        mode = "exact" if key[1] == "exact" else "sampled, 10^4 worlds/group"
        print(f"| {key[0]} | {mode} | {b['time']:.2f} | {now['time']:.2f} | {b['time'] / now['time']:.2f} | "
              f"{b['cpu']:.2f} | {now['cpu']:.2f} | {target} | {now['vulnerable']:.4f}, {now['max_risk']:.3f}, "
              f"{now['max_se']:.3f} |")
    f_now = [r for r in res["now"] if r["what"] == "fig3"]
    f_old = [r for r in res["before"] if r["what"] == "fig3"]
    if f_now and f_old:
        n, b = f_now[0], f_old[0]
        print("\n| `openbook experiment cormode2010-fig3` (full, the CLI) | before | now | before / now | target |")
        print("| --- | --- | --- | --- | --- |")
        print(f"| wall s | {b['time']:.0f} | {n['time']:.0f} | {b['time'] / n['time']:.2f} | ≤ 120 s: "
              f"{'OK' if n['time'] <= 120 else 'SLOW'} |")
        print(f"| CPU s (the CLI process, every thread) | {b['cpu']:.0f} | {n['cpu']:.0f} | "
              f"{b['cpu'] / n['cpu']:.2f} | |")
        unres = ["not reported" if x["mondrian_unresolved"] is None else f"{x['mondrian_unresolved']:,}" for x in (b, n)]
        print(f"| people left unresolved by the {n['mondrian_runs']} Mondrian replays (summed) | "
              f"{unres[0]} | {unres[1]} | | counted as failing |")


if __name__ == "__main__":
    main()
