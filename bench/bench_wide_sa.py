"""Certification on a wide SA domain (issue 25): a synthetic table of the issue's shape — 28,000
rows, QIs ``edu:numeric, exp:numeric, eth, region``, SA ``wage`` with 6,000 values —
anonymized with strict Mondrian under k = 5 and certified (``max_risk=1``), each side in a
fresh process: ``before`` (``--baseline REV``, default the code at the start of this stop) and
``now``. Seconds of the anonymization and of the certificate, peak resident memory.

command: .venv/bin/python bench/bench_wide_sa.py [--baseline REV] [--rows N] [--values V]
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
from _baseline import baseline_env  # noqa: E402

CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np, pandas as pd
from openbook.algorithms.registry import make_algorithm
from openbook.certificate import certify
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model
n, v = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
df = pd.DataFrame({"edu": rng.integers(0, 16, n), "exp": rng.integers(0, 40, n), "eth": rng.choice(list("ABCDE"), n),
                   "region": rng.choice(list("NSEW"), n), "wage": rng.integers(0, v, n).astype(str)})
t = encode(df, Schema.build(qi=["edu:numeric", "exp:numeric", "eth", "region"], sa="wage"))
t0 = time.perf_counter(); rel = make_algorithm("mondrian", model=make_model("k=5")).anonymize(t)
ta = time.perf_counter() - t0
t0 = time.perf_counter(); cert = certify(rel, original=t, max_risk=1.0); tc = time.perf_counter() - t0
print(json.dumps({"anonymize_s": ta, "certify_s": tc, "verdict": cert.verdict,
                  "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6}))
"""


def run(env: dict[str, str] | None, rows: int, values: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(values)], capture_output=True, text=True,
                          env=env, timeout=3600)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["killed"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="dd6c74b", help="the 'before' commit (default: the start of this stop)")
    ap.add_argument("--rows", type=int, default=28_000)
    ap.add_argument("--values", type=int, default=6_000)
    args = ap.parse_args()
    env_now = dict(os.environ)
    env_now.pop("PYTHONPATH", None)
    sides = [("before", run(baseline_env(args.baseline), args.rows, args.values)),
             ("now", run(env_now, args.rows, args.values))]
    print(f"## Wide SA domain: {args.rows:,} rows, {args.values:,} SA values, Mondrian k = 5 (issue 25)\n")
    print(f"Command: `.venv/bin/python bench/bench_wide_sa.py` (before = commit {args.baseline}; each side a fresh "
          "process). Target of the issue: certification under a second, memory rows + classes × values present.\n")
    print("| code | anonymize s | certify s | certify / anonymize | peak resident GB | verdict |")
    print("|---|---|---|---|---|---|")
    for name, r in sides:
        if "error" in r:
            print(f"| {name} | error: {r['error']} | | | | |")
            continue
        print(f"| {name} | {r['anonymize_s']:.2f} | {r['certify_s']:.2f} | {r['certify_s'] / r['anonymize_s']:.1f}× | "
              f"{r['peak_gb']:.2f} | {r['verdict']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
