"""``openbook experiment report --markdown EXPERIMENTS.md``: run every experiment and write
the comparison with the papers as one Markdown document.

The document is generated, never edited by hand: each experiment runs at its full size
(``--quick``: the CI variants, a smoke check — the repository's ``EXPERIMENTS.md`` is the full
run), its CSVs and provenance land in ``--out``, and the sections of
:mod:`.report_sections` read them back and put every number of ours beside the paper's, with
where the paper prints it (a figure's text, a table, a section). The header states the
command, date, version, machine and the runtime of each experiment and of the whole run.
``--reuse`` renders from the outputs already in ``--out`` (they must all come from one run of
the same size and seed) instead of running again.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..errors import ParameterError
from .registry import list_experiments, run_experiment


class Outputs:
    """The CSV tables and provenance of every experiment of one run, read from ``out``."""

    def __init__(self, out: Path, provenance: dict[str, dict[str, Any]]) -> None:
        self.out = Path(out)
        self.prov = provenance

    def table(self, name: str, key: str = "main") -> pd.DataFrame:
        path = self.out / (f"{name}.csv" if key == "main" else f"{name}-{key}.csv")
        if not path.exists():
            raise ParameterError(f"{path.name} is missing from {self.out}: run the experiments again",
                                 parameter="out", value=str(self.out))
        return pd.read_csv(path)

    def notes(self, name: str) -> dict[str, Any]:
        return self.prov[name].get("notes", {})

    def seconds(self, name: str) -> float:
        return float(self.prov[name]["elapsed_s"])


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def _read_provenance(out: Path, names: list[str], quick: bool, seed: int) -> dict[str, dict[str, Any]]:
    prov = {}
    for name in names:
        path = out / f"{name}.provenance.json"
        if not path.exists():
            raise ParameterError(f"--reuse: {path.name} is missing from {out}", parameter="out", value=str(out))
        p = json.loads(path.read_text())
        if bool(p.get("quick")) != quick or int(p.get("seed", -1)) != seed:
            raise ParameterError(f"--reuse: {name} in {out} was run with quick={p.get('quick')}, seed={p.get('seed')}, "
                                 f"not quick={quick}, seed={seed}", parameter="out", value=str(out))
        prov[name] = p
    return prov


def write_report(markdown: Path | str, *, quick: bool = False, seed: int = 0, out: Path | str = "experiments-out",
                 reuse: bool = False) -> dict[str, Any]:
    """Run every registered experiment (or, ``reuse``, read their outputs from ``out``) and
    write the Markdown comparison to ``markdown``. Returns a summary (files, runtimes)."""
    from .report_sections import SECTIONS

    out = Path(out)
    names = [e.name for e in list_experiments()]
    covered = [n for sec in SECTIONS for n in sec.experiments]
    missing = sorted(set(names) - set(covered))
    if missing:  # a registered experiment without a section would silently vanish from the document
        raise ParameterError(f"experiments without a report section: {', '.join(missing)}", parameter="experiment")
    t0 = time.perf_counter()
    if reuse:
        prov = _read_provenance(out, names, quick, seed)
    else:
        prov = {name: run_experiment(name, quick=quick, seed=seed, out=out) for name in covered}
    wall = time.perf_counter() - t0
    outputs = Outputs(out, prov)
    body = [sec.render(outputs) for sec in SECTIONS]
    text = _header(outputs, covered, quick=quick, seed=seed, out=out, wall=None if reuse else wall) + "\n".join(body)
    md = Path(markdown)
    tmp = md.with_name(md.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(md)
    return {"markdown": str(md), "experiments": covered, "total_s": round(sum(outputs.seconds(n) for n in covered), 1),
            "wall_s": round(wall, 1), "quick": quick, "seed": seed}


def _duration(s: float) -> str:
    from .report_sections import _dur

    return _dur(s)


def _header(o: Outputs, names: list[str], *, quick: bool, seed: int, out: Path, wall: float | None) -> str:
    total = sum(o.seconds(n) for n in names)
    cmd = "openbook experiment report --markdown EXPERIMENTS.md" + (" --quick" if quick else "") + \
        (f" --seed {seed}" if seed else "")
    size = "`--quick` CI variants: a smoke check, not the reference run" if quick else "full size"
    lines = [
        "# Reproduced experiments",
        "",
        f"Generated by `{cmd}` ({size}, seed {seed}) on {_dt.date.today().isoformat()} with openbook "
        f"{__version__}; machine: {_machine()}. Every number below is read from that run's CSVs "
        f"(written to `{out.name}/`, one `NAME.csv`, `NAME.png` and `NAME.provenance.json` per "
        "experiment); nothing here is edited by hand. Total runtime "
        f"{_duration(total)} of experiments" + (f" ({_duration(wall)} wall clock)" if wall is not None else "") + ".",
        "",
        "One experiment alone: `openbook experiment NAME [--quick] [--seed S] [--out DIR]`; "
        "`openbook experiment list` shows the registry; the `--quick` variants run in CI "
        "(`tests/cli/test_experiments_quick.py`).",
        "",
        "The papers' figures survive only as captions in our plain-text copies: the plotted values "
        "are lost. Where a paper prints a number we quote it and say where it is printed (the "
        "text on a figure, a table, a section); otherwise we quote the trend its text states and "
        "say whether ours follows it.",
        "",
        "| experiment | paper | runtime |",
        "| --- | --- | --- |",
    ]
    for n in names:
        lines.append(f"| `{n}` | {o.prov[n].get('paper', '')} | {_duration(o.seconds(n))} |")
    lines.append("")
    return "\n".join(lines) + "\n"
