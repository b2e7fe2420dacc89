"""Benchmark: Mondrian (k = 10, strict and relaxed) on synthetic tables with 8 QIs, side by
side with a plain numpy pass over the same codes, plus the first Mondrian call of a fresh
process.

    .venv/bin/python bench/bench_mondrian.py                  # 10^6 and 10^7 rows
    .venv/bin/python bench/bench_mondrian.py --sizes 1e6      # quicker
    .venv/bin/python bench/bench_mondrian.py --big            # also 10^8 rows (~25 GB machine)

Every configuration runs in a fresh process that loads the codes (an ``(n, 8)`` int32 matrix
in column order, plus the int32 SA codes) into a table (which holds each column in its
domain's type, ``data.table.code_dtype``: int8 here; the matrix is then dropped), warms numba up on its first 65,536 rows (the threaded kernels load there), and then times

* the numpy pass: ``min()`` and ``max()`` of every QI column of the table's codes (best of 3),
  what reading the codes costs on this machine (a ``np.bincount`` would time the int64
  copy it makes), and
* Mondrian (``algorithm.partition``; best of ``--repeat`` runs up to 10^7 rows, one run above;
  the first run is reported too: in a fresh process it also pays the first touch of the
  memory it allocates, which on this virtual machine varies from run to run — up to about a
  second at 10^7 rows),

and reports Mondrian's time, its ratio to the numpy pass, and its peak memory beyond the
codes: the process's peak resident set (``VmHWM``, reset just before the run through
``/proc/self/clear_refs``, else ``ru_maxrss``) minus its resident set while holding the codes,
per row.

Before/after: every configuration up to 10^7 rows also runs, in the same way and in the same
run, on openbook's code before this round of speed work (:mod:`_baseline`, commit
``BASELINE``: ``import openbook`` from an exported copy of that commit's ``src``), and the
table gives the speed-up and whether both computed the same partition (a digest of the group
labels).

The first-call latency is measured in a fresh process with a warm numba cache: the time of
the first ``partition`` call on a 200-row table after the imports, and the import of the
Mondrian module itself (the codes and the table class are imported before).

Targets (issues 16, 17): <= 2 s at 10^7 rows x 8 QIs (strict and relaxed, k = 10) with its
ratio to the numpy pass; <= 40 bytes per row beyond the codes at 10^7 and 10^8; <= 100 ms for the first
Mondrian call.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _baseline import BASELINE, baseline_env  # noqa: E402
from _peers import machine, proc_status, reset_peak  # noqa: E402

N_QI = 8
CACHE = Path(tempfile.gettempdir()) / "openbook-bench-mondrian"


def _codes_path(n: int) -> tuple[Path, Path]:
    return CACHE / f"qi_{n}.npy", CACHE / f"sa_{n}.npy"


def prepare(n: int) -> None:
    """Write the synthetic codes of ``n`` rows (column order) unless already there."""
    from openbook.data.synthetic import iter_synthetic_codes

    qp, sp = _codes_path(n)
    if qp.exists() and sp.exists():
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    qi = np.lib.format.open_memmap(str(qp) + ".part", mode="w+", dtype=np.int32, shape=(n, N_QI),
                                   fortran_order=True)
    sa = np.lib.format.open_memmap(str(sp) + ".part", mode="w+", dtype=np.int32, shape=(n,))
    a = 0
    for q, s in iter_synthetic_codes(n, n_qi=N_QI, seed=0, chunk_rows=1_000_000):
        qi[a:a + q.shape[0]] = q
        sa[a:a + q.shape[0]] = s
        a += q.shape[0]
    qi.flush()
    sa.flush()
    del qi, sa
    os.replace(str(qp) + ".part", qp)
    os.replace(str(sp) + ".part", sp)


def run_one(n: int, strict: bool, repeat: int) -> None:
    """One configuration in this (fresh) process; prints one JSON line."""
    from openbook.algorithms import make_algorithm
    from openbook.data.table import EncodedTable
    from openbook.models import make_model

    qp, sp = _codes_path(n)
    qi = np.load(qp)  # (n, 8) int32, column order
    sa = np.load(sp)
    table = EncodedTable.from_codes(qi_codes=qi, sa_codes=sa)  # columns in their domain's type (or views)
    algo = make_algorithm("mondrian", model=make_model("k=10"), strict=strict)
    # a warm-up table large enough for the kernels' threaded variants (numba loads them per type)
    m = min(n, 1 << 16)
    small = EncodedTable.from_codes(qi_codes=np.asfortranarray(qi[:m]), sa_codes=sa[:m].copy())
    try:
        from openbook.algorithms import mondrian_kernels
    except ImportError:  # the code before this round compiles on any call
        mondrian_kernels = None
    if mondrian_kernels is not None:
        mondrian_kernels.FORCE = "compiled"  # load numba's code for these types outside the timing
    algo.partition(small)
    if mondrian_kernels is not None:
        mondrian_kernels.FORCE = None
    cols = [table.columns[nm].codes for nm in table.qi_names]  # the codes the partition reads
    del qi, small  # only the table's codes stay

    def numpy_pass() -> None:
        for c in cols:
            c.min()
            c.max()

    np_times = []
    for _ in range(3):
        t = time.perf_counter()
        numpy_pass()
        np_times.append(time.perf_counter() - t)
    base = proc_status("VmRSS")
    exact = reset_peak()
    times, groups, digest = [], 0, ""
    for _ in range(repeat):
        t = time.perf_counter()
        p = algo.partition(table)
        times.append(time.perf_counter() - t)
        groups = p.n_groups
        digest = hashlib.sha256(np.ascontiguousarray(p.group, dtype=np.int64).data).hexdigest()[:16]
        del p
    peak = proc_status("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": min(times), "first": times[0], "runs": len(times), "numpy_seconds": min(np_times),
                      "groups": int(groups), "digest": digest, "extra_bytes_per_row": (peak - base) / n,
                      "codes_bytes_per_row": sum(c.codes.nbytes for c in table.columns.values()) / n,
                      "exact_peak": exact}))


FIRST_CALL = """
import json, time
t0 = time.perf_counter()
import numpy as np
from openbook.data.table import EncodedTable
from openbook.models import make_model
t1 = time.perf_counter()
from openbook.algorithms.mondrian import Mondrian
t2 = time.perf_counter()
small = EncodedTable.from_codes(qi_codes=np.arange(200 * 8, dtype=np.int32).reshape(200, 8) % 7,
                                sa_codes=np.arange(200) % 3)
algo = Mondrian(model=make_model("k=10"), strict=STRICT)
t3 = time.perf_counter()
algo.partition(small)
t4 = time.perf_counter()
algo.partition(small)
t5 = time.perf_counter()
print(json.dumps({"import": t2 - t1, "first": t4 - t3, "second": t5 - t4}))
"""


def first_call(strict: bool, env: dict | None = None, repeat: int = 3) -> dict:
    """Best of ``repeat`` fresh processes (after one that warms the numba cache)."""
    code = FIRST_CALL.replace("STRICT", str(strict))
    runs = []
    for _ in range(repeat + 1):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    runs = runs[1:]
    return {k: min(r[k] for r in runs) for k in runs[0]}


def _config(n: int, strict: bool, repeat: int, env: dict | None) -> dict | str:
    """One configuration in a fresh process: its JSON record, or the error's last line."""
    out = subprocess.run([sys.executable, __file__, "--one", str(n), str(int(strict)), str(repeat)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return (out.stderr.strip().splitlines() or ["failed"])[-1][:160]
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="comma-separated row counts")
    ap.add_argument("--big", action="store_true", help="also 10^8 rows, strict and relaxed (~25 GB machine)")
    ap.add_argument("--repeat", type=int, default=3, help="Mondrian runs per configuration at <= 10^7 rows")
    ap.add_argument("--baseline", default=BASELINE, help="the commit timed as 'before' (up to 10^7 rows)")
    ap.add_argument("--no-baseline", action="store_true", help="time the current code only")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    if args.big and 10**8 not in sizes:
        sizes.append(10**8)
    old_env = None if args.no_baseline else baseline_env(args.baseline)
    rows = []
    for n in sizes:
        subprocess.run([sys.executable, __file__, "--prepare", str(n)], check=True)
        for strict in (True, False):
            rep = args.repeat if n <= 10**7 else 1
            name = f"mondrian {'strict' if strict else 'relaxed'} k=10, {n:,} rows x {N_QI} QIs"
            r = _config(n, strict, rep, None)
            if isinstance(r, str):
                rows.append((name, "failed", r))
                continue
            first = f"first run {r['first']:.2f} s; " if r["runs"] > 1 else ""
            text = (f"{first}{r['seconds'] / r['numpy_seconds']:.0f}x the numpy pass ({r['numpy_seconds'] * 1000:.0f} ms); "
                    f"{r['extra_bytes_per_row']:.1f} bytes/row beyond the codes "
                    f"({r['codes_bytes_per_row']:.0f}){'' if r['exact_peak'] else ' (ru_maxrss)'}; "
                    f"{r['groups']:,} groups")
            if old_env is not None and n <= 10**7:
                o = _config(n, strict, rep, old_env)
                if isinstance(o, str):
                    text += f"; before ({args.baseline}): failed: {o}"
                else:
                    text += (f"; before ({args.baseline}): {o['seconds']:.2f} s, {o['extra_bytes_per_row']:.1f} "
                             f"bytes/row: speed-up **{o['seconds'] / r['seconds']:.2f}x**, "
                             f"{'same' if o['digest'] == r['digest'] else 'ANOTHER'} partition")
            rows.append((name, f"{r['seconds']:.2f} s" + (f" (best of {r['runs']})" if r["runs"] > 1 else ""), text))
    for strict in (True, False):
        f = first_call(strict)
        text = f"second call {f['second'] * 1000:.1f} ms; import of the module {f['import'] * 1000:.0f} ms"
        if old_env is not None:
            o = first_call(strict, old_env)
            text += (f"; before ({args.baseline}): first call {o['first'] * 1000:.0f} ms, import "
                     f"{o['import'] * 1000:.0f} ms: import + first call "
                     f"speed-up **{(o['first'] + o['import']) / (f['first'] + f['import']):.0f}x**")
        rows.append((f"first mondrian {'strict' if strict else 'relaxed'} call, fresh process, 200 rows",
                     f"{f['first'] * 1000:.0f} ms", text))
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}\n\nmachine: {machine()}\n")
    print("| run | time | result |\n| --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--prepare":
        prepare(int(sys.argv[2]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--one":
        run_one(int(sys.argv[2]), bool(int(sys.argv[3])), int(sys.argv[4]))
    else:
        main()
