"""The benchmarks (``bench/``) keep up with the code: every name a benchmark script imports from
openbook exists, and every script parses its ``--help``. (A benchmark is run by hand or by
``bench/run_all``, not by the suite; this catches a script left behind by a moved or renamed
function before someone regenerates ``bench/RESULTS.md``.)"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(BENCH.glob("bench_*.py")) + [BENCH / "run_all"]


def _openbook_imports(path: Path) -> list[tuple[str, str | None, int]]:
    """``(module, name, line)`` of every ``import openbook...`` / ``from openbook... import name``
    in the script, at any depth (benchmarks import lazily inside functions)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "openbook":
            out.extend((node.module, a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "openbook")
    return out


def test_there_are_benchmarks_to_check():
    assert len(SCRIPTS) >= 10
    assert sum(len(_openbook_imports(p)) for p in SCRIPTS) >= 50


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_openbook_name_a_benchmark_imports_exists(script):
    missing = []
    for module, name, line in _openbook_imports(script):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"line {line}: {module} ({exc})")
            continue
        if name is not None and name != "*" and not hasattr(mod, name):
            try:  # a submodule imported by name
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: {module}.{name}")
    assert not missing, f"{script.name}: " + "; ".join(missing)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_benchmark_parses_its_help(script):
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout.lower()
