"""Benchmark: the local engine beside the Spark engine on ``local[2]`` — ``check``, Mondrian
(strict, k = 10) and full-domain search (k = 10, 1% suppression) on synthetic tables with 8
QIs, at 10^6 and 10^7 rows (``--big``: also 10^8).

    .venv/bin/python bench/bench_spark.py                   # 10^6 and 10^7 rows
    .venv/bin/python bench/bench_spark.py --sizes 1e6       # quicker
    .venv/bin/python bench/bench_spark.py --big             # also 10^8 rows (~25 GB machine)
    .venv/bin/python bench/bench_spark.py --ops mondrian    # one operation
    .venv/bin/python bench/bench_spark.py --big --big-ops check,full-domain   # 10^8: two of three

``--big-ops`` names the operations run at 10^8 rows (a machine too small for one of them can
leave it out; the local engine's Mondrian at 10^8 rows is also ``bench_mondrian.py --big``).

Every (engine, operation, size) runs in a fresh process:

* **local**: the codes (an ``(n, 8)`` int32 matrix and the int32 SA, as ``bench_mondrian``
  caches them) are loaded, the peak resident set is reset (``/proc/self/clear_refs``) and the
  operation timed; *bytes per row* is the peak (``VmHWM``) minus the resident set while
  holding the codes, per row — what the operation costs beyond its input.
* **spark**: a SparkSession on ``local[2]`` (driver JVM heap ``--driver-memory``) reads the
  same codes from one Parquet file, encodes them (``encode_raw``: dictionaries, codes, input
  row order) and runs the Spark engine's operation; both steps are timed. Memory: the
  Python driver's peak (``VmHWM``), the JVM's (the ``java`` child process — on a local
  master the executors run inside it) and the executors' Python workers (children of the
  JVM: the largest one's peak and the sum of their peaks), all read from ``/proc`` — a
  thread polls the process tree every 0.2 s so workers that exit are counted.

The result column shows each engine's answer (the levels' k, Mondrian's number of classes,
the full-domain node) and whether the two engines agree.

**Estimate for 10^9 rows on 16 executors.** From the two largest measured sizes, each Spark
step's time is fitted as ``a + b·n`` (``a``: fixed cost — session, jobs, the driver's
planning; ``b``: cost per row on the 2 cores of ``local[2]``). The estimate assumes the
per-row work is data-parallel and spreads over 16 executors of 2 cores each (16× the cores:
``a + b·10^9/16``) while the fixed cost stays; the driver-side parts that grow with the data
(Mondrian's top plan, the full-domain frequency table, which the lattice walk reads) are
inside ``b`` and so are optimistic by however much they do not parallelise — notably the
full-domain lattice walk, which runs on the driver over the frequency table (its share is
about the local engine's search time, as the local column shows). The memory of
an executor is fitted the same way (JVM + workers' peaks, ``c + e·n``) at the ``10^9/16``
rows it would hold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peers import machine, proc_status, reset_peak  # noqa: E402

N_QI = 8
CACHE = Path(tempfile.gettempdir()) / "openbook-bench-mondrian"
OPS = ("check", "mondrian", "full-domain")
K = 10
SUPPRESSION = 0.01


def _codes_path(n: int) -> tuple[Path, Path]:
    return CACHE / f"qi_{n}.npy", CACHE / f"sa_{n}.npy"


def _parquet_path(n: int) -> Path:
    return CACHE / f"spark_{n}.parquet"


def prepare(n: int) -> None:
    """The synthetic codes of ``n`` rows as ``.npy`` (``bench_mondrian``'s cache) and as one
    Parquet file (columns ``q0..q7``, ``sa``), unless already there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    qp, sp = _codes_path(n)
    if not (qp.exists() and sp.exists()):
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_mondrian.py")), "--prepare", str(n)],
                       check=True)
    pp = _parquet_path(n)
    if pp.exists():
        return
    qi = np.load(qp, mmap_mode="r")
    sa = np.load(sp, mmap_mode="r")
    names = [f"q{j}" for j in range(N_QI)] + ["sa"]
    schema = pa.schema([pa.field(c, pa.int32()) for c in names])
    tmp = Path(str(pp) + ".part")
    with pq.ParquetWriter(tmp, schema) as w:
        for a in range(0, n, 1_000_000):
            b = min(n, a + 1_000_000)
            cols = [pa.array(np.ascontiguousarray(qi[a:b, j])) for j in range(N_QI)] + [pa.array(np.asarray(sa[a:b]))]
            w.write_table(pa.table(cols, names=names))
    os.replace(tmp, pp)


# ---------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


class TreePeaks:
    """Polls this process's descendants: the peak (``VmHWM``) of every java process and of
    every Python process below one."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.jvm: dict[int, int] = {}
        self.workers: dict[int, int] = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _poll(self) -> None:
        kids = _children()
        stack = [(p, False) for p in kids.get(os.getpid(), [])]
        while stack:
            pid, under_java = stack.pop()
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                hwm = proc_status("VmHWM", pid)
            except OSError:
                continue
            if comm == "java":
                self.jvm[pid] = max(self.jvm.get(pid, 0), hwm)
            elif under_java and comm.startswith("python"):
                self.workers[pid] = max(self.workers.get(pid, 0), hwm)
            stack.extend((c, under_java or comm == "java") for c in kids.get(pid, []))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._poll()
            self._stop.wait(self.every)

    def start(self) -> "TreePeaks":
        self._t.start()
        return self

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._t.join()
        self._poll()
        return {"jvm": sum(self.jvm.values()), "worker_max": max(self.workers.values(), default=0),
                "workers_sum": sum(self.workers.values()), "n_workers": len(self.workers)}


# ---------------------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------------------
def _local_op(op: str, table):
    from openbook.models.registry import make_model

    model = make_model(f"k={K}")
    if op == "check":
        from openbook.data.frequency import FrequencyTable
        from openbook.models.levels import compute_levels

        freq = FrequencyTable.from_table(table)
        return {"k": int(compute_levels(freq.sa_counts, freq.sa_domain, c=2.0)["k"])}
    if op == "mondrian":
        from openbook.algorithms.mondrian import Mondrian

        p = Mondrian(model=model, strict=True).partition(table)
        return {"classes": int(p.n_groups)}
    from openbook.algorithms.lattice import FullDomainSearch

    p = FullDomainSearch(model=model, max_suppression=SUPPRESSION).partition(table)
    return {"levels": p.provenance["levels"], "suppressed": int(p.n_suppressed)}


def _spark_op(op: str, st):
    from openbook.models.registry import make_model

    model = make_model(f"k={K}")
    if op == "check":
        from openbook.spark.check import spark_levels

        return {"k": int(spark_levels(st)[0]["k"])}
    if op == "mondrian":
        from openbook.spark.mondrian import spark_mondrian, verify

        res = spark_mondrian(st, model, strict=True)
        return {"classes": int(verify(res)["classes"])}
    from openbook.algorithms.lattice import FullDomainSearch
    from openbook.spark import full_domain as sfd

    res = sfd.search(st, FullDomainSearch(model=model, max_suppression=SUPPRESSION))
    check = sfd.verify(sfd.release_rows(st, res, model))
    return {"levels": res.levels, "suppressed": st.n_rows - int(check["rows"])}


def run_one(engine: str, op: str, n: int, driver_memory: str) -> None:
    """One configuration in this (fresh) process; prints one JSON line."""
    if engine == "local":
        from openbook.data.table import EncodedTable

        qp, sp = _codes_path(n)
        qi = np.load(qp)
        sa = np.load(sp)
        table = EncodedTable.from_codes(qi_codes=qi, sa_codes=sa)
        for name in table.qi_names:  # the automatic hierarchies, outside the timing (as the encoder builds them)
            table.hierarchy(name)
        base = proc_status("VmRSS")
        exact = reset_peak()
        t = time.perf_counter()
        result = _local_op(op, table)
        dt = time.perf_counter() - t
        peak = proc_status("VmHWM")
        print(json.dumps({"seconds": dt, "result": result, "extra_bytes_per_row": (peak - base) / n,
                          "codes_bytes_per_row": (qi.nbytes + sa.nbytes) / n, "exact_peak": exact}))
        return
    from openbook.data.schema import Schema
    from openbook.spark.encoding import encode_raw, read_raw
    from openbook.spark.session import spark_session

    peaks = TreePeaks().start()
    reset_peak()
    t0 = time.perf_counter()
    spark = spark_session("local[2]", {"spark.driver.memory": driver_memory, "spark.sql.shuffle.partitions": "8"},
                          app="openbook-bench")
    t1 = time.perf_counter()
    schema = Schema.build(qi=[f"q{j}:numeric" for j in range(N_QI)], sa="sa")
    path = str(_parquet_path(n))
    st = encode_raw(spark, read_raw(spark, path), schema, {}, source=path)
    t2 = time.perf_counter()
    result = _spark_op(op, st)
    t3 = time.perf_counter()
    mem = peaks.stop()
    spark.stop()
    print(json.dumps({"start": t1 - t0, "encode": t2 - t1, "seconds": t3 - t2, "result": result,
                      "driver": proc_status("VmHWM"), **mem}))


def _config(engine: str, op: str, n: int, driver_memory: str) -> dict | str:
    out = subprocess.run([sys.executable, __file__, "--one", engine, op, str(n), driver_memory],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return (out.stderr.strip().splitlines() or ["failed"])[-1][:200]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _gb(x: float) -> str:
    return f"{x / 2**30:.2f} GB"


def _result(r: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in r.items())


def estimate(fits: dict[str, list[tuple[int, float]]]) -> list[str]:
    """The 10^9-row, 16-executor estimate (module docstring) from ``(n, seconds)`` points."""
    lines = []
    for op, pts in fits.items():
        pts = sorted(pts)[-2:]
        if len(pts) < 2:
            continue
        (n1, t1), (n2, t2) = pts
        b = max((t2 - t1) / (n2 - n1), 0.0)
        a = max(t1 - b * n1, 0.0)
        est = a + b * 1e9 / 16
        lines.append(f"- {op}: fixed {a:.1f} s + {b * 1e9:.0f} ns/row on local[2] (from {n1:.0e} and {n2:.0e} rows) "
                     f"→ 10^9 rows on 16 executors × 2 cores ≈ {a:.1f} + {b * 1e9 / 16:.0f} = **{est / 60:.1f} min**")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="comma-separated row counts")
    ap.add_argument("--big", action="store_true", help="also 10^8 rows")
    ap.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {', '.join(OPS)}")
    ap.add_argument("--big-ops", default=",".join(OPS),
                    help="the operations run at 10^8 rows (default: --ops); see the module docstring")
    ap.add_argument("--driver-memory", default="8g", help="the Spark driver JVM's heap (local[2]: also the executors')")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    if args.big and 10**8 not in sizes:
        sizes.append(10**8)
    ops = [o for o in args.ops.split(",") if o]
    rows = []
    fits: dict[str, list[tuple[int, float]]] = {}
    mem_fit: dict[str, list[tuple[int, float]]] = {}
    for n in sizes:
        subprocess.run([sys.executable, __file__, "--prepare", str(n)], check=True)
        for op in (ops if n < 10**8 else [o for o in args.big_ops.split(",") if o in ops]):
            loc = _config("local", op, n, args.driver_memory)
            spk = _config("spark", op, n, args.driver_memory)
            name = f"{op}, {n:,} rows × {N_QI} QIs"
            if isinstance(loc, str):
                rows.append((name, "local", "failed", loc))
            else:
                rows.append((name, "local", f"{loc['seconds']:.2f} s",
                             f"{loc['extra_bytes_per_row']:.1f} bytes/row beyond the codes ({loc['codes_bytes_per_row']:.0f})"
                             f"{'' if loc['exact_peak'] else ' (ru_maxrss)'}; {_result(loc['result'])}"))
            if isinstance(spk, str):
                rows.append((name, "spark local[2]", "failed", spk))
                continue
            same = "" if isinstance(loc, str) else ("; **same as local**" if spk["result"] == loc["result"]
                                                     else "; **DIFFERS from local**")
            rows.append((name, "spark local[2]", f"{spk['seconds']:.2f} s (+ encode {spk['encode']:.1f} s)",
                         f"driver {_gb(spk['driver'])}, JVM {_gb(spk['jvm'])}, Python workers max "
                         f"{_gb(spk['worker_max'])} / sum {_gb(spk['workers_sum'])} ({spk['n_workers']}); "
                         f"{_result(spk['result'])}{same}"))
            fits.setdefault(op, []).append((n, spk["seconds"] + spk["encode"]))
            mem_fit.setdefault(op, []).append((n, float(spk["jvm"] + spk["workers_sum"])))
    print(f"## Spark local[2] beside the local engine\n\ncommand: `{' '.join([Path(sys.executable).name, *sys.argv])}`"
          f"\n\nmachine: {machine()}\n")
    print("| run | engine | time | memory, result |\n| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {' | '.join(r)} |")
    print("\n**10^9 rows on a 16-executor cluster** (encode + operation; the method is in bench/bench_spark.py's "
          "docstring: a linear fit on the two largest sizes, the per-row part divided by 16):\n")
    for line in estimate(fits):
        print(line)
    print("- full-domain: the lattice walk runs on the driver and does not divide by 16 (about the local engine's "
          "time at the same size, which grows with the distinct (QI, SA) tuples, not the rows)")
    for op, pts in mem_fit.items():
        pts = sorted(pts)[-2:]
        if len(pts) < 2:
            continue
        (n1, m1), (n2, m2) = pts
        bpr = max((m2 - m1) / (n2 - n1), 0.0)
        print(f"- {op} memory: JVM + workers {_gb(m1)} at {n1:.0e}, {_gb(m2)} at {n2:.0e}: {bpr:.0f} bytes per "
              f"additional row → an executor holding 10^9/16 rows ≈ {_gb(m1 + bpr * (1e9 / 16 - n1))} (the same "
              "fit; Spark spills cached rows to disk beyond its memory)")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--prepare":
        prepare(int(sys.argv[2]))
    elif len(sys.argv) >= 2 and sys.argv[1] == "--one":
        run_one(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main()
