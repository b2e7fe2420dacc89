"""Replay adversary on a GG release of Adult (paper 000 §5.1): the sampled audit of 10^4
worlds per group in at most 2 s (issue 16, "Long audits"); with ``--fig3`` also the full
``openbook experiment cormode2010-fig3`` run (target at most 2 minutes).

command: .venv/bin/python bench/bench_replay.py [--fig3]

Runs GG with binary 6-diversity (Tech-support, Craft-repair) on Adult (45,222 rows, paper
000's six QIs) and replays it twice: the default engine (exact forward-backward over each
group's prefix counts — no sampling needed) and forced sampling of 10^4 worlds per group
(every group at once: numba draws each bucket's count, one model call for every reachable
prefix).
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from openbook.algorithms.registry import make_algorithm  # noqa: E402
from openbook.attacks.replay import replay_attack  # noqa: E402
from openbook.experiments.cormode2010_attack import adult_table  # noqa: E402
from openbook.models.registry import make_model  # noqa: E402


def main() -> None:
    print("command: .venv/bin/python bench/bench_replay.py")
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    table = adult_table()
    # warm the numba caches
    small = adult_table(2000)
    a = make_algorithm("gg", model=make_model("simple-l=6,set=tech-support"), tail="drop")
    replay_attack(small, a.partition(small).group, a, worlds=100, force_sample=True)
    for sv in ("tech-support", "craft-repair"):
        algo = make_algorithm("gg", model=make_model(f"simple-l=6,set={sv}"), tail="drop")
        part = algo.partition(table)
        for mode, kw in (("exact", {}), ("sampled 10^4 worlds/group", {"force_sample": True})):
            t0 = time.perf_counter()
            res = replay_attack(table, part.group, algo, worlds=10_000, seed=0, **kw)
            dt = time.perf_counter() - t0
            s = res.summary()
            print(f"| gg l=6 {sv} | {mode} | {dt:.1f} s | {part.n_groups} groups, vulnerable "
                  f"{s.vulnerable_fraction:.4f}, max risk {s.max_risk_multiple:.3f}/l, max s.e. "
                  f"{(s.max_stderr or 0):.3f} | {'OK' if dt <= 2 else 'SLOW'} (<= 2 s)")
    if "--fig3" in sys.argv:
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory() as out:
            cmd = [sys.executable, "-c", "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))",
                   "experiment", "cormode2010-fig3", "--out", out, "--quiet"]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True,
                           env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})
            dt = time.perf_counter() - t0
        print(f"| cormode2010-fig3 full | openbook experiment cormode2010-fig3 | {dt:.0f} s | "
              f"{'OK' if dt <= 120 else 'SLOW'} (<= 120 s)")


if __name__ == "__main__":
    main()
