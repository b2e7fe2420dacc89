"""Benchmark: full-domain search (``full-domain-search``) on the full Adult with ARX's
hierarchies (7 QIs, 2,160 nodes) — nodes checked beside ARX 3.9.2's Flash, and warm time now
against openbook's earlier code, measured side by side in one run.

    .venv/bin/python bench/bench_lattice.py [--repeat 7] [--baseline REV]

Each configuration is timed in a child process for the current tree (``src``) and for git
revision ``--baseline`` (default: the code before this round's speed work,
``bench/_baseline.py``; ``none`` skips it), interleaved, the best of ``--repeat`` warm runs
each (one cold run first). ARX 3.9.2's figures — its "transformations checked" and warm time
for the same data, hierarchies, models and loss — are measured in the same run when ARX has
been built (``bench/bench_arx.py --build-arx``; the 15-configuration comparison is there),
else the columns say "not built". Node counts are machine-independent. Also: the same search
on the frequency table of Adult streamed from its CSV in Arrow batches
(``search_frequency``), which must return the same node.
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

#: (model, max_suppression, ARX criteria)
CONFIGS = [("k=5", 0.0, "k=5"), ("k=5", 0.05, "k=5"), ("distinct-l=6", 0.05, "distinct-l=6")]

#: run in a child process: prints one JSON line per configuration
CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r})
from bench_algorithms import QI, SA
from openbook.algorithms import make_algorithm
from openbook.data.adult import load_adult
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.hierarchy import adult_hierarchies
from openbook.models import make_model
h = adult_hierarchies("arx")
t = encode(load_adult("full"), Schema.build(qi=["age:numeric", *QI[1:]], sa=SA), {{c: h[c] for c in QI}})
for spec, ms in {configs!r}:
    a = make_algorithm("full-domain-search", model=make_model(spec), max_suppression=ms)
    a.partition(t)
    best = cpu = float("inf")
    for _ in range({repeat}):
        t0, c0 = time.perf_counter(), time.process_time()
        p = a.partition(t)
        best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    print(json.dumps({{"spec": spec, "ms": ms, "levels": p.provenance["levels"], "checked": p.provenance["n_checked"],
                      "nodes": p.provenance["n_nodes"], "loss": p.provenance["metric_value"], "time": best,
                      "cpu": cpu}}))
"""


def measure(env: dict[str, str], repeat: int) -> dict[tuple[str, float], dict]:
    code = CHILD.format(bench=str(HERE), configs=[(s, m) for s, m, _ in CONFIGS], repeat=repeat)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {(r["spec"], r["ms"]): r for r in rows}


def frequency_rows() -> list[tuple[str, float, list[int], int, float]]:
    """The search from the frequency table of Adult's CSV streamed in 8,192-row batches."""
    import tempfile
    import time

    from bench_algorithms import QI, SA

    from openbook.algorithms.lattice_frequency import search_frequency
    from openbook.data.adult import load_adult
    from openbook.data.frequency import frequency_table
    from openbook.data.loaders import read_source
    from openbook.data.schema import Schema
    from openbook.hierarchy import adult_hierarchies
    from openbook.models import make_model

    h = adult_hierarchies("arx")
    schema = Schema.build(qi=["age:numeric", *QI[1:]], sa=SA)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "adult.csv"
        load_adult("full").to_csv(csv, index=False)
        t0 = time.perf_counter()
        freq = frequency_table(read_source(csv), schema, {c: h[c] for c in QI}, batch_rows=8192, fallback=False)
        build = time.perf_counter() - t0
    out = []
    for spec, ms, _ in CONFIGS:
        t0 = time.perf_counter()
        res = search_frequency(freq, make_model(spec), ms)
        out.append((spec, ms, [int(x) for x in res["best"]], res["lattice"].n_checked, time.perf_counter() - t0))
    return [("build", 0.0, [], freq.n_classes, build)] + out


def arx_figures(repeat: int) -> dict[tuple[str, float], dict]:
    """ARX's nodes checked and warm time per configuration, when ARX is built (bench_arx)."""
    import bench_arx as ba

    info = ba.arx_built()
    if info is None:
        return {}
    from importlib import resources

    from openbook.data.adult import load_adult

    csv = ba.PEER / "adult.csv"
    load_adult("full")[list(dict.fromkeys(ba.Q9 + ["relationship"]))].to_csv(csv, sep=";", index=False)
    arx = ba.Arx(info, csv, Path(str(resources.files("openbook").joinpath("data", "hierarchies", "arx"))))
    out = {}
    try:
        for spec, ms, crit in CONFIGS:
            cfg = (spec, ba.Q7, "occupation", spec, crit, ms)
            arx.run(cfg, 10)  # JIT warm-up
            out[(spec, ms)] = arx.run(cfg, repeat)
    finally:
        arx.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline", default=BASELINE, help=f"git revision timed as 'before' (default {BASELINE}; 'none')")
    args = ap.parse_args()
    now_env = dict(os.environ)
    now_env["PYTHONPATH"] = str(HERE.parent / "src")
    runs = [("now", now_env)] + ([("before", baseline_env(args.baseline))] if args.baseline != "none" else [])
    for _, env in runs:  # BLAS threads spin when the cores are busy: time the search, not the contention
        env["OPENBLAS_NUM_THREADS"] = "1"
    res: dict[str, list[dict]] = {name: [] for name, _ in runs}
    for _ in range(2):  # interleaved: now, before, now, before; best of both rounds
        for name, env in runs:
            res[name].append(measure(env, args.repeat))

    def best_of(name: str, key, what: str) -> float:
        return min(r[key][what] for r in res[name])

    arx = arx_figures(args.repeat)

    print("## Full-domain search on Adult (ARX hierarchies): nodes checked beside ARX, time before/after\n")
    print("Adult, 45,222 rows; QIs age, workclass, education, marital-status, race, sex, native-country; SA "
          f"occupation; metric loss. Warm `partition`: best of {args.repeat} runs × 2 interleaved rounds, each "
          f"in a fresh process with one BLAS thread; wall and CPU (process) time; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end. ARX 3.9.2: "
          f"{'built from source (bench/bench_arx.py), measured in this run' if arx else 'not built here'}. "
          f"`before` = commit {args.baseline}.\n")
    print("| model | suppression | node | nodes checked | ARX | before | wall ms | before | before / now "
          "| CPU ms | before | before / now | ARX wall ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spec, ms, _ in CONFIGS:
        key = (spec, ms)
        now = res["now"][0][key]
        ax = arx.get(key)
        cells = [spec, f"{ms:.0%}", str(now["levels"]), f"{now['checked']} of {now['nodes']}",
                 str(ax["checked"]) if ax else "not built"]
        wall, cpu = best_of("now", key, "time"), best_of("now", key, "cpu")
        if "before" in res:
            bef = res["before"][0][key]
            same = "" if bef["levels"] == now["levels"] else f" (node {bef['levels']})"
            bw, bc = best_of("before", key, "time"), best_of("before", key, "cpu")
            cells += [f"{bef['checked']}{same}", f"{wall * 1e3:.0f}", f"{bw * 1e3:.0f}", f"{bw / wall:.2f}×",
                      f"{cpu * 1e3:.0f}", f"{bc * 1e3:.0f}", f"{bc / cpu:.2f}×"]
        else:
            cells += ["—", f"{wall * 1e3:.0f}", "—", "—", f"{cpu * 1e3:.0f}", "—", "—"]
        print("| " + " | ".join(cells + [f"{ax['ms']:.0f}" if ax else "not built"]) + " |")
    print("\nOut-of-core: the same searches on the frequency table of Adult's CSV read in Arrow batches of "
          "8,192 rows (`openbook.algorithms.lattice_frequency.search_frequency`):\n")
    print("| step | node | nodes checked / classes | s |")
    print("| --- | --- | --- | --- |")
    for spec, ms, levels, checked, secs in frequency_rows():
        label = "frequency table (distinct QI tuples)" if spec == "build" else f"{spec}, {ms:.0%}"
        print(f"| {label} | {levels or '—'} | {checked} | {secs:.3f} |")


if __name__ == "__main__":
    main()
