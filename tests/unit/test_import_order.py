"""Imports run one way: a lower layer of openbook never imports a higher one.

Every module under ``src/openbook`` is parsed with :mod:`ast`; every import — at module
level, inside functions and classes, under ``if TYPE_CHECKING``, absolute or relative — is
resolved to the openbook module it names and mapped to its *unit* (the first component
after ``openbook``: a subpackage such as ``attacks`` or a top-level module such as
``certificate``; the package root ``openbook`` itself is the unit ``__init__``) and the
unit to its layer:

    0  errors, config, progress, params, catalog, __init__ (the root: version and lazy exports)
    1  hierarchy, models
    2  data
    3  inference
    4  release
    5  algorithms
    6  attacks, utility
    7  certificate
    8  pipeline, spark, run (the typed run specification)
    9  engines (the one seam: a run published on this machine or on Spark)
    10 api, cli, report, experiments, demo, studio, testing

``params`` (declared parameter constraints, used by the models) imports only ``errors`` and
sits in layer 0. The root's lazy exports (``openbook.anonymize`` ...) go through
``importlib`` by name, not an import statement, so they are not arrows.

Rules:

1. an import may point to a lower layer or inside its own unit;
2. between two units of one layer an import is allowed only if the units' import graph
   has no cycle — except ``attacks`` and ``utility``, which may not import each other in
   either direction: neither does today, and each is a consumer of releases (a privacy
   attack, a utility measure) that must stay usable without the other;
3. no name that starts with an underscore (other than dunders) is imported from another
   unit, and no module whose path has a component starting with an underscore
   (``models._checks``, ``cli._common``) is imported from another unit.

Every module must belong to a layer (a new top-level unit has to be placed here). The rules
are checked on the package and, as a self-check, on synthetic sources with a back-arrow, a
private import and a same-layer cycle, so the test can fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC / "openbook"

LAYERS: dict[str, int] = {
    "errors": 0, "config": 0, "progress": 0, "params": 0, "catalog": 0, "__init__": 0,
    "hierarchy": 1, "models": 1,
    "data": 2,
    "inference": 3,
    "release": 4,
    "algorithms": 5,
    "attacks": 6, "utility": 6,
    "certificate": 7,
    "pipeline": 8, "spark": 8, "run": 8,
    "engines": 9,
    "api": 10, "cli": 10, "report": 10, "experiments": 10, "demo": 10, "studio": 10, "testing": 10,
}
#: same-layer pairs forbidden in both directions (rule 2)
FORBIDDEN_PAIRS = {frozenset({"attacks", "utility"})}


@dataclass(frozen=True)
class Arrow:
    source: str  # importing module, e.g. openbook.algorithms.art
    target: str  # imported openbook module, e.g. openbook.inference.knowledge
    name: str  # imported name ("*" for ``import x``)
    line: int

    @property
    def src_unit(self) -> str:
        return unit_of(self.source)

    @property
    def dst_unit(self) -> str:
        return unit_of(self.target)

    def where(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}" + ("" if self.name == "*" else f".{self.name}")


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def _is_module(dotted: str) -> bool:
    p = SRC.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def arrows_of(source: str, module: str, is_pkg: bool, *, exists=_is_module) -> list[Arrow]:
    """Every import of an openbook module in ``source`` (the code of ``module``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [Arrow(module, a.name, "*", node.lineno) for a in node.names if a.name.split(".")[0] == "openbook"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "openbook":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                if exists(sub):  # ``from openbook import inference``: the arrow points at the submodule
                    out.append(Arrow(module, sub, "*", node.lineno))
                else:
                    out.append(Arrow(module, target, a.name, node.lineno))
    return out


def package_arrows() -> tuple[list[str], list[Arrow]]:
    modules, arrows = [], []
    for path in sorted(ROOT.rglob("*.py")):
        module, is_pkg = module_name(path)
        modules.append(module)
        arrows += arrows_of(path.read_text(encoding="utf-8"), module, is_pkg)
    return modules, arrows


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Units on a cycle of the directed graph ``edges`` (one cycle listed per strongly
    connected component with more than one unit)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())

    def reach(a: str) -> set[str]:
        seen, todo = set(), [a]
        while todo:
            for b in graph[todo.pop()]:
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    r = {a: reach(a) for a in graph}
    comps = {frozenset(b for b in graph if b in r[a] and a in r[b]) | {a} for a in graph}
    return [sorted(c) for c in comps if len(c) > 1]


def violations(modules: list[str], arrows: list[Arrow]) -> list[str]:
    out = [f"{m}: unit {unit_of(m)!r} has no layer in LAYERS" for m in modules if unit_of(m) not in LAYERS]
    same_layer: set[tuple[str, str]] = set()
    for a in arrows:
        su, du = a.src_unit, a.dst_unit
        if du not in LAYERS or su not in LAYERS:
            if du not in LAYERS:
                out.append(f"{a.where()}: unit {du!r} has no layer")
            continue
        if su == du:
            continue
        if LAYERS[du] > LAYERS[su]:
            out.append(f"{a.where()}: layer {LAYERS[su]} ({su}) imports layer {LAYERS[du]} ({du})")
        elif LAYERS[du] == LAYERS[su]:
            if frozenset({su, du}) in FORBIDDEN_PAIRS:
                out.append(f"{a.where()}: {su} and {du} may not import each other")
            same_layer.add((su, du))
        parts = a.target.split(".")[1:] + ([] if a.name == "*" else [a.name])
        if any(_private(p) for p in parts):
            out.append(f"{a.where()}: private name imported from another unit ({su} -> {du})")
    out += [f"import cycle between units of one layer: {' <-> '.join(c)}" for c in _cycles(same_layer)]
    return out


def test_every_import_runs_down_the_layers():
    modules, arrows = package_arrows()
    assert len(modules) > 100 and len(arrows) > 500  # the walk found the package
    bad = violations(modules, arrows)
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def _synthetic(module: str, source: str, is_pkg: bool = False) -> list[str]:
    return violations([module], arrows_of(source, module, is_pkg))


@pytest.mark.parametrize("module, source, expect", [
    # a back-arrow hidden in a function body, relative
    ("openbook.models.fake", "def f():\n    from ..algorithms.base import Anonymizer\n",
     "layer 1 (models) imports layer 5"),
    # absolute, at module level
    ("openbook.data.fake", "import openbook.attacks.robustness\n", "layer 2 (data) imports layer 6"),
    # the package form: ``from .. import attacks`` inside inference
    ("openbook.inference.fake", "from .. import attacks\n", "layer 3 (inference) imports layer 6"),
    # a private name across units, even downwards
    ("openbook.attacks.fake", "from ..algorithms.suppression import _helper\n", "private name"),
    # a private module across units
    ("openbook.algorithms.fake", "from ..models._checks import check_int\n", "private name"),
    # attacks and utility in either direction
    ("openbook.utility.fake", "from ..attacks import baseline\n", "may not import each other"),
    # a unit without a layer
    ("openbook.newthing", "x = 1\n", "has no layer"),
])
def test_the_check_catches_synthetic_violations(module, source, expect):
    bad = _synthetic(module, source, is_pkg=False)
    assert any(expect in b for b in bad), bad


def test_the_check_allows_downward_own_unit_and_dunder_imports():
    assert _synthetic("openbook.algorithms.fake", "from ..inference.knowledge import mine_knowledge\n"
                                                  "from ._private_helper import x\nfrom .. import __version__\n") == []


def test_the_check_catches_a_same_layer_cycle():
    arrows = [Arrow("openbook.cli.a", "openbook.report.html", "render", 1),
              Arrow("openbook.report.html", "openbook.cli.a", "main", 2)]
    bad = violations(["openbook.cli.a", "openbook.report.html"], arrows)
    assert any("cycle" in b and "cli" in b and "report" in b for b in bad), bad
    assert violations(["openbook.cli.a", "openbook.report.html"], arrows[:1]) == []
