"""Benchmark: the whole ``openbook anonymize`` of a Parquet file beside its partition (issue 28).

    .venv/bin/python bench/bench_anonymize.py            # 10^6 rows
    .venv/bin/python bench/bench_anonymize.py --big      # also 10^7 rows

The input is the ``synthetic`` census table (seed 0, 8 QIs: age, workclass, education,
marital status, race, sex, native country, hours; SA occupation) written once to a Parquet
file with plain string columns, as Arrow, DuckDB and Spark write text (cached in the temp
folder). Strict Mondrian, k = 10, local engine, no certification (``--no-certify``: the
certificate is timed apart below).

Each size runs ``--pairs`` pairs, in turn, of two fresh processes:

* **phases** — the pipeline's steps timed inside one process, as ``anonymize`` runs them:
  read and encode (:func:`openbook.data.table.encode` of the file), the partition
  (``Mondrian.partition``, first call: numba's code loads inside it), the release (labels,
  canonical order, verification: :func:`openbook.release.build_release`) and the write
  (:func:`openbook.release.save_release`);
* **whole** — ``openbook anonymize FILE ... --no-certify -o OUT`` as a whole process: its wall
  time and peak resident set (``wait4``'s ``ru_maxrss``).

and reports, over the pairs, the min and median of every figure and of the ratio of the
whole process to the partition timed in its pair (target: at most 3x; peak at most 100
bytes per row). The load average when the size started is printed: the machine is shared.
Certification: ``openbook certify`` of the written release, once, at the smallest size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _peers import machine, proc_status  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "openbook-bench-anonymize"
QI = "age:numeric,workclass,education:ordinal,marital_status,race,sex,native_country,hours_per_week:numeric"
SA = "occupation"


def parquet(n: int) -> Path:
    """The synthetic table of ``n`` rows as Parquet (plain string columns), written once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from openbook.data.synthetic import iter_synthetic_census

    path = CACHE / f"synthetic_{n}.parquet"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    writer = None
    for df in iter_synthetic_census(n, seed=0, n_qi=8, chunk_rows=1_000_000):
        t = pa.Table.from_pandas(df, preserve_index=False)
        t = pa.table({c: t[c].cast(pa.string()) if pa.types.is_dictionary(t[c].type) else t[c]
                      for c in t.column_names})
        if writer is None:
            writer = pq.ParquetWriter(part, t.schema)
        writer.write_table(t)
    writer.close()
    os.replace(part, path)
    return path


def phases(path: str, out: str) -> None:
    """The pipeline's steps in this fresh process; prints one JSON line."""
    t0 = time.perf_counter()
    from openbook.cli import configure_process

    configure_process()  # as the openbook command's process
    from openbook.algorithms import make_algorithm
    from openbook.data.arrow import FileSource
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.models import make_model
    from openbook.release import build_release, save_release

    _remove(out)
    floor = proc_status("VmRSS")  # the interpreter and the pipeline's modules (numba loads later, in the partition)
    t1 = time.perf_counter()
    table = encode(FileSource(Path(path), "parquet"), Schema.build(qi=QI.split(","), sa=SA), source=path)
    t2 = time.perf_counter()
    model = make_model("k=10")
    algo = make_algorithm("mondrian", model=model)
    part = algo.partition(table)
    t3 = time.perf_counter()
    release = build_release(table, part, model=model)
    t4 = time.perf_counter()
    save_release(release, out, force=True)
    t5 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "read_encode": t2 - t1, "partition": t3 - t2, "release": t4 - t3,
                      "write": t5 - t4, "classes": release.meta["n_groups"], "peak": proc_status("VmHWM"),
                      "floor": floor}))


def _remove(out: str | Path) -> None:
    """An earlier run's release at ``out``, removed: ``--force`` over an existing release
    first loads and verifies it (it replaces only a release openbook wrote), a cost of
    overwriting, not of anonymizing."""
    for f in (Path(out), Path(f"{out}.json")):
        f.unlink(missing_ok=True)


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("openbook")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from openbook.cli import command; sys.exit(command())"]


def timed(cmd: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, int, str]:
    """Wall seconds, peak resident bytes (``wait4``) and stdout of one process (an exit code
    outside ``ok`` raises)."""
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=so, stderr=se)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        if proc.returncode not in ok:
            raise RuntimeError(f"{' '.join(cmd[:3])} ... failed: {se.read().decode()[-800:]}")
        return wall, usage.ru_maxrss * 1024, so.read().decode()


def _stats(xs: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(min(xs))} / {fmt.format(statistics.median(xs))}"


def run_size(n: int, pairs: int, work: Path) -> tuple[list[str], Path]:
    path = parquet(n)
    load = os.getloadavg()[0]
    out = work / f"release_{n}.parquet"
    whole_cmd = [*_cli(), "anonymize", str(path), "--qi", QI, "--sa", SA, "-m", "k=10", "--algorithm", "mondrian",
                 "--no-certify", "--quiet", "-o", str(out), "--force"]
    ph, whole, peak = [], [], []
    for _ in range(pairs):
        _, _, text = timed([sys.executable, __file__, "--phases", str(path), str(work / f"phases_{n}.parquet")])
        ph.append(json.loads(text.strip().splitlines()[-1]))
        _remove(out)
        wall, rss, _ = timed(whole_cmd)
        whole.append(wall)
        peak.append(rss)
    part = [p["partition"] for p in ph]
    ratio = [w / p for w, p in zip(whole, part)]
    rows = [f"| {n:,} rows: whole `anonymize --no-certify` (wall s) | {_stats(whole)} |",
            f"| {n:,} rows: partition, first call in a fresh process (s) | {_stats(part)} |",
            f"| {n:,} rows: **whole / partition**, pair by pair (target <= 3) | **{_stats(ratio)}** |",
            f"| {n:,} rows: peak resident set of the whole process, bytes/row (target <= 100) | "
            f"{_stats([p / n for p in peak], '{:.0f}')} |"]
    for key, what in (("read_encode", "read + encode"), ("release", "release: labels, canonical order, verify"),
                      ("write", "write + digests"), ("import", "imports")):
        rows.append(f"| {n:,} rows: phase {what} (s) | {_stats([p[key] for p in ph])} |")
    rows.append(f"| {n:,} rows: phases' peak resident set, bytes/row | "
                f"{_stats([p['peak'] / n for p in ph], '{:.0f}')} |")
    rows.append(f"| {n:,} rows: resident set before the table is read (interpreter and modules), bytes/row; "
                f"whole process's peak less it | {_stats([p['floor'] / n for p in ph], '{:.0f}')}; "
                f"{_stats([(k - p['floor']) / n for k, p in zip(peak, ph)], '{:.0f}')} |")
    rows.append(f"| {n:,} rows: classes published; load average at the start | {ph[0]['classes']:,}; {load:.1f} |")
    return rows + check_rows(path, n, pairs), out


def check_rows(path: Path, n: int, runs: int) -> list[str]:
    """``openbook check`` of the raw file as a whole process: the whole table encoded, and
    ``--batch-rows 2^20`` (memory bounded by the distinct (QI, SA) tuples)."""
    base = [*_cli(), "check", str(path), "--qi", QI, "--sa", SA, "--json"]
    out = []
    for what, extra in (("check", []), ("check --batch-rows 1048576", ["--batch-rows", str(1 << 20)])):
        walls, peaks, text = [], [], ""
        for _ in range(runs):
            wall, rss, text = timed([*base, *extra])
            walls.append(wall)
            peaks.append(rss)
        tuples = json.loads(text)["levels"].get("n_groups", "?")
        out.append(f"| {n:,} rows: `{what}` wall s; ns/row; peak bytes/row ({tuples:,} classes) | "
                   f"{_stats(walls)}; {_stats([w / n * 1e9 for w in walls], '{:.0f}')}; "
                   f"{_stats([p / n for p in peaks], '{:.0f}')} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big", action="store_true", help="also 10^7 rows")
    ap.add_argument("--sizes", default=None, help="comma-separated row counts (default 1e6, and 1e7 with --big)")
    ap.add_argument("--pairs", type=int, default=3, help="pairs of (phases, whole) runs per size")
    ap.add_argument("--check-sizes", default="", help="row counts checked only (e.g. 1e8: linear in the rows)")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in (args.sizes or ("1e6,1e7" if args.big else "1e6")).split(",") if s]
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        first_out = None
        for n in sizes:
            r, out = run_size(n, args.pairs, work)
            rows += r
            first_out = first_out or (n, out)
        for m in [int(float(x)) for x in args.check_sizes.split(",") if x]:
            rows += check_rows(parquet(m), m, 1)
        n, out = first_out
        wall, rss, _ = timed([*_cli(), "certify", str(out), "--quiet"], ok=(0, 3)) if out.exists() else (float("nan"), 0, "")
        rows.append(f"| {n:,} rows: certification apart (`openbook certify` of the release; wall s, peak bytes/row) "
                    f"| {wall:.2f}; {rss / n:.0f} |")
    print("## The whole `anonymize` of a Parquet file beside its partition (issue 28)\n")
    print(f"Machine: {machine()}. Synthetic table (seed 0, 8 QIs), strict Mondrian k = 10, local engine, "
          f"{args.pairs} pairs per size, each pair a phases process then a whole process; min / median.\n")
    print("| measure | min / median |\n| --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--phases":
        phases(sys.argv[2], sys.argv[3])
    else:
        main()
