"""The experiment registry: ``openbook experiment NAME [--quick] [--out DIR]``.

Each experiment is a function ``run(quick: bool, seed: int) -> ExperimentResult`` that
returns a DataFrame (written as CSV) and draws its figure (written as PNG). The registry
adds a provenance line (command, seed, version, elapsed time) beside both. Experiment
modules register themselves with :func:`experiment`; ``EXPERIMENT_MODULES`` lists the
modules imported on first use.
"""

from __future__ import annotations

import importlib
import json
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from .. import __version__
from ..errors import ParameterError

#: modules that define experiments (imported lazily so the CLI starts fast)
EXPERIMENT_MODULES: list[str] = [
    "openbook.experiments.wong_bk",
    "openbook.experiments.skew",
    "openbook.experiments.rameshwar",
    "openbook.experiments.wong2007",
    "openbook.experiments.cormode2010_attack",
    "openbook.experiments.cormode2010",
    "openbook.experiments.wong2007_utility",
]


@dataclass
class ExperimentResult:
    """What an experiment produced: one or more tables and a function that draws the PNG."""

    tables: dict[str, pd.DataFrame]
    plot: Callable[[Path], None] | None = None
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Experiment:
    name: str
    run: Callable[..., ExperimentResult]
    description: str
    paper: str


REGISTRY: dict[str, Experiment] = {}


def experiment(name: str, *, paper: str, description: str) -> Callable:
    def deco(fn: Callable[..., ExperimentResult]) -> Callable[..., ExperimentResult]:
        REGISTRY[name] = Experiment(name, fn, description, paper)
        return fn

    return deco


def _load_all() -> None:
    for mod in EXPERIMENT_MODULES:
        importlib.import_module(mod)


def list_experiments() -> list[Experiment]:
    _load_all()
    return [REGISTRY[k] for k in sorted(REGISTRY)]


def run_experiment(name: str, *, quick: bool = False, seed: int = 0, out: Path | str = "experiments-out") -> dict[str, Any]:
    """Run one experiment and write ``NAME.csv`` (or ``NAME-<table>.csv``), ``NAME.png`` and
    ``NAME.provenance.json`` into ``out``; returns the provenance record."""
    _load_all()
    try:
        exp = REGISTRY[name]
    except KeyError:
        raise ParameterError(f"unknown experiment {name!r} (known: {', '.join(sorted(REGISTRY)) or 'none'})",
                             parameter="experiment", value=name) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = exp.run(quick=quick, seed=seed)
    elapsed = time.perf_counter() - t0
    files = []
    for key, df in result.tables.items():
        path = out / (f"{name}.csv" if key == "main" else f"{name}-{key}.csv")
        df.to_csv(path, index=False)
        files.append(path.name)
    if result.plot is not None:
        png = out / f"{name}.png"
        result.plot(png)
        files.append(png.name)
    prov = {
        "experiment": name,
        "paper": exp.paper,
        "command": shlex.join(["openbook", *sys.argv[1:]]) if sys.argv and "openbook" in sys.argv[0] else
        f"openbook experiment {name}{' --quick' if quick else ''} --seed {seed}",
        "seed": seed,
        "quick": quick,
        "version": __version__,
        "elapsed_s": round(elapsed, 3),
        "files": files,
        "notes": result.notes,
    }
    (out / f"{name}.provenance.json").write_text(json.dumps(prov, indent=2, default=str))
    return prov
