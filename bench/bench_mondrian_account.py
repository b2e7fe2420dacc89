"""Benchmark: where strict Mondrian's time goes at 10^7 rows x 8 QIs against the one-pass
floor, the thread count on a shared machine, and small tables without numba (issue 28).

    .venv/bin/python bench/bench_mondrian_account.py
    .venv/bin/python bench/bench_mondrian_account.py --rows 1e6 --pairs 3   # quicker

1. **Account** (one fresh process per thread setting, the codes of ``bench_mondrian.py``):
   every kernel of the planner wrapped in a timer for warm strict partitions (k = 10; the
   best of ``--runs``),
   on one thread and on numba's threads; beside it the floor, one ``min``/``max`` pass over
   the codes' columns, and the planner's levels and record passes.
2. **Threads on Adult** (45,222 rows, 7 QIs): the warm partition (best of 5 in a process),
   fresh processes interleaved: the default now (threads by size and load), one thread
   (``NUMBA_NUM_THREADS=1``) and the former default (every thread at every size).
3. **Small tables**: the first partition of a fresh process (synthetic, 8 QIs), which
   kernels ran and whether numba was imported, beside the compiled kernels' first call.

The load average is printed with each part: the machine is shared, so pairs run in turn and
min / median are given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _peers import machine  # noqa: E402

N_QI = 8

ACCOUNT = """
import json, sys, time, numpy as np
sys.path.insert(0, __HERE__)
from bench_mondrian import _codes_path
from openbook.algorithms import make_algorithm
from openbook.algorithms import mondrian_kernels as mk, mondrian_planner as mp
from openbook.data.table import EncodedTable
from openbook.models import make_model
qp, sp = _codes_path(__N__)
qi, sa = np.load(qp), np.load(sp)
table = EncodedTable.from_codes(qi_codes=qi, sa_codes=sa)
algo = make_algorithm("mondrian", model=make_model("k=10"))
mk.FORCE = "compiled"
m = min(__N__, 1 << 16)
algo.partition(EncodedTable.from_codes(qi_codes=np.asfortranarray(qi[:m]), sa_codes=sa[:m].copy()))
if __THREADS__ == "all":  # every thread numba has, whatever the size and load
    mp._THREAD_ROWS = 0
    mp.os.getloadavg = lambda: (0.0, 0.0, 0.0)
K = mk.compiled()
spent = {}
def wrap(name, f):
    def g(*a):
        t = time.perf_counter(); r = f(*a); spent[name] = spent.get(name, 0.0) + time.perf_counter() - t; return r
    return g
for name in ("ranges", "distinct", "plan", "apply", "leaf_order", "label_leaves"):
    K[name] = wrap(name, K[name])
floor = []
for _ in range(3):
    t = time.perf_counter()
    for j in range(qi.shape[1]):
        qi[:, j].min(); qi[:, j].max()
    floor.append(time.perf_counter() - t)
threads = []
real = mp._workers
mp._workers = lambda lo, hi, n: (threads.append(n), real(lo, hi, n))[1]
best = None
for _ in range(__RUNS__):  # the best run's account: the machine is shared
    spent.clear(); threads.clear()
    t = time.perf_counter()
    p = algo.partition(table)
    total = time.perf_counter() - t
    if best is None or total < best["total"]:
        best = {"total": total, "kernels": dict(spent), "threads": max(threads) if threads else 1}
    groups, nodes = int(p.n_groups), int(p.extra["tree_lo"].size)
    del p
print(json.dumps({**best, "floor": min(floor), "groups": groups, "nodes": nodes, "runs": __RUNS__}))
"""

ADULT = """
import json, time
from openbook.algorithms import make_algorithm
from openbook.algorithms import mondrian_kernels as mk, mondrian_planner as mp
from openbook.data.datasets import load_dataset
from openbook.models import make_model
t = load_dataset("adult").encode()
if __MODE__ == "former":  # every thread numba has, whatever the size and load
    mp._THREAD_ROWS = 0
    mp.os.getloadavg = lambda: (0.0, 0.0, 0.0)
mk.FORCE = "compiled"
algo = make_algorithm("mondrian", model=make_model("k=5"))
algo.partition(t)
best = []
for _ in range(5):
    a = time.perf_counter(); algo.partition(t); best.append(time.perf_counter() - a)
print(json.dumps({"best": min(best)}))
"""

SMALL = """
import json, sys, time, numpy as np
from openbook.data.synthetic import synthetic_codes
from openbook.data.table import EncodedTable
from openbook.models import make_model
from openbook.algorithms import mondrian_kernels as mk
from openbook.algorithms import make_algorithm
qi, sa, _ = synthetic_codes(__N__, seed=0, n_qi=8)
t = EncodedTable.from_codes(qi_codes=qi, sa_codes=sa)
mk.FORCE = __WAY__
algo = make_algorithm("mondrian", model=make_model("k=10"))
a = time.perf_counter(); algo.partition(t); first = time.perf_counter() - a
ran = "compiled" if mk._COMPILED is not None else ("numpy" if "openbook.algorithms.mondrian_numpy" in sys.modules
                                                  else "plain")
print(json.dumps({"first": first, "numba": "numba" in sys.modules, "ran": ran}))
"""


def _run(code: str, env: dict | None = None, **subs: object) -> dict:
    for k, v in subs.items():
        code = code.replace(k, repr(v) if isinstance(v, str) else str(v))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-1500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mm(xs: list[float], scale: float = 1000.0, unit: str = "ms") -> str:
    return f"{min(xs) * scale:.0f} / {statistics.median(xs) * scale:.0f} {unit}"


def account(n: int, runs: int) -> list[str]:
    subprocess.run([sys.executable, str(HERE / "bench_mondrian.py"), "--prepare", str(n)], check=True)
    lines = [f"### Strict Mondrian, k = 10, {n:,} rows x {N_QI} QIs: where the time goes, the best of {runs} warm "
             f"partitions in one process (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)\n",
             "| threads | partition | floor: min/max pass | ratio | ranges | distinct | plan | apply | leaf order + "
             "labels | Python (levels, hook, tree) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for threads in ("default", "all"):
        r = _run(ACCOUNT, __HERE__=str(HERE), __N__=n, __THREADS__=threads, __RUNS__=runs)
        k = r["kernels"]
        py = r["total"] - sum(k.values())
        lines.append(f"| {threads} ({r['threads']}) | {r['total']:.2f} s | {r['floor'] * 1000:.0f} ms | "
                     f"{r['total'] / r['floor']:.0f}x | {k.get('ranges', 0):.2f} s | {k.get('distinct', 0):.2f} s | "
                     f"{k.get('plan', 0):.2f} s | {k.get('apply', 0):.2f} s | "
                     f"{k.get('leaf_order', 0) + k.get('label_leaves', 0):.2f} s | {py:.2f} s |")
    lines.append(f"\n{r['groups']:,} groups, {r['nodes']:,} tree nodes.")
    return lines


def adult_threads(pairs: int) -> list[str]:
    env1 = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    got: dict[str, list[float]] = {"default": [], "one": [], "former": []}
    load = os.getloadavg()[0]
    for _ in range(pairs):
        got["default"].append(_run(ADULT, __MODE__="default")["best"])
        got["one"].append(_run(ADULT, env=env1, __MODE__="default")["best"])
        got["former"].append(_run(ADULT, __MODE__="former")["best"])
    ratio = [a / b for a, b in zip(got["default"], got["one"])]
    former = [a / b for a, b in zip(got["former"], got["one"])]
    return [f"### Adult (45,222 rows, 7 QIs), strict k = 5: warm partition, {pairs} interleaved rounds (load average "
            f"{load:.1f} on {os.cpu_count()} cores)\n", "| threads | warm partition, min / median |", "| --- | --- |",
            f"| default (threads by size and load) | {_mm(got['default'])} |",
            f"| one (`NUMBA_NUM_THREADS=1`) | {_mm(got['one'])} |",
            f"| former default (every thread at every size) | {_mm(got['former'])} |",
            f"| **default / one**, round by round | **{min(ratio):.2f} / {statistics.median(ratio):.2f}** |",
            f"| former / one, round by round | {min(former):.2f} / {statistics.median(former):.2f} |"]


def small(sizes: list[int]) -> list[str]:
    lines = [f"### The first partition of a fresh process (synthetic, 8 QIs, k = 10; load average "
             f"{os.getloadavg()[0]:.1f})\n", "| rows | kernels | first call | numba imported | compiled kernels' "
             "first call (numba loaded) |", "| --- | --- | --- | --- | --- |"]
    for n in sizes:
        a = _run(SMALL, __N__=n, __WAY__=None)
        b = _run(SMALL, __N__=n, __WAY__="compiled")
        lines.append(f"| {n:,} | {a['ran']} | {a['first'] * 1000:.0f} ms | {'yes' if a['numba'] else 'no'} | "
                     f"{b['first'] * 1000:.0f} ms |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="1e7", help="rows of the account (default 10^7)")
    ap.add_argument("--pairs", type=int, default=5, help="interleaved rounds on Adult")
    ap.add_argument("--runs", type=int, default=3, help="partitions per thread setting in the account (the best one's account is shown)")
    args = ap.parse_args()
    out = ["## Mondrian: the account against the one-pass floor, threads, small tables (issue 28)\n",
           f"Machine: {machine()}.\n"]
    out += account(int(float(args.rows)), args.runs) + [""]
    out += adult_threads(args.pairs) + [""]
    out += small([2_000, 20_000, 100_000, 300_000])
    print("\n".join(out))


if __name__ == "__main__":
    main()
