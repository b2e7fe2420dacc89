"""Benchmark: start-up of ``openbook check --dataset adult --json`` as a whole process, side by
side in one run with ``python -c pass`` and ``python -c "import numpy"`` (the floor any numpy
program pays), best and median of N runs in turn (hyperfine-style, interleaved so a drift of
the machine's speed hits every command alike).

    .venv/bin/python bench/bench_startup.py [--runs 15] [--baseline REV]

The command is also timed as committed at git revision ``--baseline REV`` (default: the
code before this round's speed work, ``bench/_baseline.py``; ``--baseline none`` skips it),
its ``src/`` extracted with ``git archive`` (the work tree is not touched), so before and
after are measured in the same run. Bytecode is compiled first, as an installed
package has it. Target (issue 16): at most 0.3 s for the check, whole process.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from _baseline import BASELINE, baseline_src  # noqa: E402

CHECK = "from openbook.cli import main; import sys; sys.exit(main(['check', '--dataset', 'adult', '--json']))"
HEAVY = ("import sys\nfrom openbook.cli import main\nimport io, contextlib\n"
         "with contextlib.redirect_stdout(io.StringIO()): main(['check', '--dataset', 'adult', '--json'])\n"
         "print(' '.join(m for m in ('pandas', 'scipy', 'numba', 'matplotlib', 'pyarrow') if m in sys.modules))")


def run(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--baseline", default=BASELINE, help=f"git revision to time as 'before' (default {BASELINE}; 'none')")
    args = ap.parse_args()
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    env = {**os.environ, "OPENBOOK_PROGRESS": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = sys.executable
    commands = {
        "python -c pass": ([py, "-c", "pass"], env),
        "python -c 'import numpy'": ([py, "-c", "import numpy"], env),
        "openbook check --dataset adult --json": ([py, "-c", CHECK], {**env, "PYTHONPATH": str(ROOT / "src")}),
    }
    if args.baseline != "none":
        src = baseline_src(args.baseline)
        compileall.compile_dir(str(src), quiet=1)
        commands[f"the same before (commit {args.baseline})"] = ([py, "-c", CHECK], {**env, "PYTHONPATH": str(src)})
    for cmd, e in commands.values():  # warm-up: caches, bytecode
        run(cmd, e)
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.runs):
        for name, (cmd, e) in commands.items():
            times[name].append(run(cmd, e))
    loaded = subprocess.run([py, "-c", HEAVY], env={**env, "PYTHONPATH": str(ROOT / "src")}, capture_output=True,
                            text=True, check=True).stdout.split()
    numpy_med = statistics.median(times["python -c 'import numpy'"])
    print("## CLI start-up: `openbook check --dataset adult` as a whole process\n")
    print(f"{args.runs} runs each, interleaved; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}. "
          "Target (issue 16): at most 0.3 s for the check, whole process.\n")
    print("| command | best s | median s | median / numpy import |")
    print("| --- | --- | --- | --- |")
    for name, ts in times.items():
        print(f"| {name} | {min(ts):.3f} | {statistics.median(ts):.3f} | {statistics.median(ts) / numpy_med:.2f} |")
    print(f"\nmodules the check loads of pandas, scipy, numba, matplotlib, pyarrow: {', '.join(loaded) or 'none'}")


if __name__ == "__main__":
    main()
