"""Benchmark: memory of reading and checking a large Parquet (or CSV) file — peak RSS of a fresh
process per mode, in one run, with the bytes per row above the interpreter's floor.

    .venv/bin/python bench/bench_outofcore.py [--rows 10000000] [--batch-rows 1048576] [--csv]

The file: ``--rows`` synthetic census-like rows, 8 QIs (two numeric, six text) and a text SA;
each row's QIs are one of ``--profiles`` QI tuples picked with Zipf-like frequencies (so the
table has far fewer classes than rows, as a population register does), written in row
groups of 2^20 rows. Modes, each in its own process:

* ``floor``: the interpreter with numpy and pyarrow imported — subtracted from the others;
* ``pandas``: the reference path — ``read_table`` (a DataFrame of the whole file), then
  ``encode_frame``, then the levels (what ``openbook check`` did before out-of-core reading);
* ``arrow-codes``: ``encode(read_source(file))`` — Arrow batches straight to int32 codes, the
  ``EncodedTable`` every algorithm uses (9 columns: 36 bytes of codes per row), then the levels;
* ``frequency``: ``openbook check FILE --batch-rows N``'s path — the file in batches, only the
  distinct (QI, SA) tuples kept, the levels from the frequency table.

Every mode must give the same levels (checked). Figures: peak RSS (MiB), (peak − floor) / rows,
wall seconds. Issue 17's target: bounded memory for ``check`` (independent of the rows).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
QI = ["age:numeric", "hours:numeric", "zip", "education", "marital", "race", "sex", "country"]
SA = "occupation"

CHILD = r"""
import json, sys, time
mode, path, batch_rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
import numpy, pyarrow, pyarrow.parquet
out = {}
t = time.perf_counter()
if mode != "floor":
    from openbook.data.schema import Schema
    from openbook.models.levels import compute_levels
    schema = Schema.build(qi=QI, sa=SA)
    if mode == "pandas":
        from openbook.data.frame_encoding import encode_frame
        from openbook.data.frequency import FrequencyTable
        from openbook.data.loaders import read_table
        f = FrequencyTable.from_table(encode_frame(read_table(path), schema))
    elif mode == "arrow-codes":
        from openbook.data.frequency import FrequencyTable
        from openbook.data.loaders import read_source
        from openbook.data.table import encode
        table = encode(read_source(path), schema, batch_rows=batch_rows)
        out["codes_bytes"] = sum(c.codes.nbytes for c in table.columns.values())
        f = FrequencyTable.from_table(table)
    else:
        from openbook.data.frequency import frequency_table
        from openbook.data.loaders import read_source
        f = frequency_table(read_source(path), schema, batch_rows=batch_rows, fallback=False)
    out["levels"] = compute_levels(f.sa_counts, f.sa_domain, c=2.0)
    out["classes"] = f.n_classes
out["seconds"] = time.perf_counter() - t
# VmHWM: this process image's peak resident set (ru_maxrss would also count the parent's pages
# that the fork shared before exec)
out["peak_kib"] = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
print(json.dumps(out))
"""


def write_table(path: Path, rows: int, csv: bool, profiles: int, seed: int = 0) -> None:
    """Synthetic rows: each row's QIs are one of ``profiles`` QI tuples (drawn once, with skewed
    value frequencies), picked with Zipf-like frequencies; the SA is drawn per row. Written
    2^20 rows at a time."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    text = {"zip": [f"{z:05d}" for z in range(10000, 10400)], "education": [f"edu-{i}" for i in range(16)],
            "marital": [f"m{i}" for i in range(7)], "race": [f"race-{i}" for i in range(5)], "sex": ["F", "M"],
            "country": [f"country-{i}" for i in range(41)]}
    occupations = [f"occ-{i}" for i in range(14)]

    def skewed(n: int, k: int) -> np.ndarray:
        p = 1.0 / np.arange(1, k + 1) ** 1.1
        return rng.choice(k, size=n, p=p / p.sum())

    prof = {"age": 17 + skewed(profiles, 74), "hours": 1 + skewed(profiles, 99)}
    prof.update({name: skewed(profiles, len(values)).astype(np.int32) for name, values in text.items()})
    writer = None
    step = 1 << 20
    for start in range(0, rows, step):
        n = min(step, rows - start)
        pick = skewed(n, profiles)
        cols = {"age": pa.array(prof["age"][pick]), "hours": pa.array(prof["hours"][pick])}
        for name, values in text.items():
            cols[name] = pa.DictionaryArray.from_arrays(pa.array(prof[name][pick]), pa.array(values)).cast(pa.string())
        cols[SA] = pa.DictionaryArray.from_arrays(pa.array(skewed(n, 14).astype(np.int32)),
                                                  pa.array(occupations)).cast(pa.string())
        batch = pa.table(cols)
        if csv:
            if writer is None:
                writer = pcsv.CSVWriter(path, batch.schema)
            writer.write_table(batch)
        else:
            if writer is None:
                writer = pq.ParquetWriter(path, batch.schema)
            writer.write_table(batch, row_group_size=step)
    writer.close()


def child(mode: str, path: Path, batch_rows: int) -> dict:
    code = f"QI = {QI!r}\nSA = {SA!r}\n" + CHILD
    out = subprocess.run([sys.executable, "-c", code, mode, str(path), str(batch_rows)], capture_output=True,
                         text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--batch-rows", type=int, default=1 << 20)
    ap.add_argument("--csv", action="store_true", help="a CSV file instead of Parquet")
    ap.add_argument("--profiles", type=int, default=200_000, help="distinct QI tuples the rows are drawn from")
    ap.add_argument("--modes", default="floor,frequency,arrow-codes,pandas")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("t.csv" if args.csv else "t.parquet")
        t = time.perf_counter()
        write_table(path, args.rows, args.csv, args.profiles)
        print(f"# {args.rows:,} rows, {'CSV' if args.csv else 'Parquet'} {path.stat().st_size / 2**20:.0f} MiB "
              f"(written in {time.perf_counter() - t:.1f} s); batches of {args.batch_rows:,} rows; "
              f"QIs {', '.join(QI)}; SA {SA}\n")
        results = {m: child(m, path, args.batch_rows) for m in args.modes.split(",")}
    floor = results["floor"]["peak_kib"] * 1024 if "floor" in results else 0
    print("| mode | peak RSS MiB | (peak - floor) bytes/row | seconds | classes |")
    print("| --- | --- | --- | --- | --- |")
    for mode, r in results.items():
        peak = r["peak_kib"] * 1024
        per_row = "" if mode == "floor" else f"{(peak - floor) / args.rows:.1f}"
        print(f"| {mode} | {peak / 2**20:.0f} | {per_row} | {r['seconds']:.1f} | {r.get('classes', '')} |")
    levels = [json.dumps(r["levels"], sort_keys=True) for r in results.values() if "levels" in r]
    print(f"\nthe same levels in every mode: {len(set(levels)) == 1}")
    if "arrow-codes" in results:
        print(f"codes of the EncodedTable: {results['arrow-codes']['codes_bytes'] / args.rows:.0f} bytes/row")
    if len(set(levels)) != 1:
        raise SystemExit("the modes disagree")


if __name__ == "__main__":
    main()
