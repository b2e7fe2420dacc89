"""A run: one privacy model and one algorithm on the table as declared, with the
certificate's targets — what the page asks for (:func:`plan` checks every request as
``anonymize`` checks its flags before any work: the model's spec, the algorithm's name and
parameters, the targets), and what the page shows of it while it runs and after
(:meth:`Run.brief`). :mod:`.worker` runs it."""

from __future__ import annotations

import copy
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: what ``--skew`` takes
SKEW = ("none", "r-suppression", "safe-d", "unsafe-d")


@dataclass
class Run:
    """One candidate release: its settings, its table, its progress and, once done, its
    release, certificate and utility (``result``) and the comparison's view (``summary``)."""

    id: int
    model: str
    algorithm: str
    params: dict[str, Any]
    targets: dict[str, Any]
    cfg: Any
    table: Any
    data_name: str
    choices: dict[str, Any]
    inputs: list[str]
    table_key: str = ""
    warnings: list[str] = field(default_factory=list)
    status: str = "queued"  # queued, running, done, failed, cancelled
    steps: list[dict[str, Any]] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    error: str | None = None
    result: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    report: str | None = None
    commands: list[str] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def label(self) -> str:
        return f"#{self.id} {self.algorithm} · {self.model}"

    def step(self, name: str) -> None:
        now = time.time()
        if self.steps and self.steps[-1]["end"] is None:
            self.steps[-1]["end"] = now
        self.steps.append({"name": name, "start": now, "end": None})

    def _close_steps(self) -> None:
        if self.steps and self.steps[-1]["end"] is None:
            self.steps[-1]["end"] = time.time()

    def brief(self) -> dict[str, Any]:
        """What the page's history and comparison show."""
        now = time.time()
        end = self.finished or now
        return {"id": self.id, "label": self.label, "model": self.model, "algorithm": self.algorithm,
                "params": {k: v for k, v in self.params.items()}, "targets": dict(self.targets),
                "data": self.data_name, "status": self.status, "error": self.error, "warnings": self.warnings,
                "seconds": None if self.started is None else round(end - self.started, 1),
                "steps": [{"name": s["name"], "seconds": round((s["end"] or now) - s["start"], 1),
                           "done": s["end"] is not None} for s in self.steps],
                "choices": self.choices, "commands": self.commands, "summary": self.summary}


def _value(text: str) -> Any:
    """An algorithm parameter written ``key=value``: true/false, an integer, a number, a
    comma-separated list of those, else the text."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", t):
        return float(t)
    if "," in t:
        return [_value(x) for x in t.split(",") if x.strip()]
    return t


def parse_params(text: str) -> dict[str, Any]:
    """``key=value`` items, separated by spaces or new lines (``max_suppression=0.02
    strict=false levels=1,0,2``)."""
    from ..errors import ParameterError

    out: dict[str, Any] = {}
    for item in str(text or "").split():
        key, sep, val = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key or not val.strip():
            raise ParameterError(f"algorithm parameter {item!r}: write key=value (e.g. max_suppression=0.02)",
                                 parameter="params", value=item)
        out[key] = _value(val)
    return out


def number(body: dict[str, Any], key: str, flag: str, kind: type, lo: float, hi: float | None = None,
            lo_open: bool = False) -> Any:
    """An optional number of the request, checked as the command line checks its flag."""
    from ..errors import ParameterError

    raw = body.get(key)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        v = kind(str(raw).strip())
    except ValueError:
        raise ParameterError(f"{flag} {raw!r} is not {'an integer' if kind is int else 'a number'}",
                             parameter=flag.lstrip("-"), value=raw) from None
    if v != v or v in (float("inf"), float("-inf")) or (v <= lo if lo_open else v < lo) or (hi is not None and v > hi):
        bound = f"above {lo}" if lo_open else f"at least {lo}"
        raise ParameterError(f"{flag} {raw}: must be {bound}" + (f" and at most {hi}" if hi is not None else ""),
                             parameter=flag.lstrip("-"), value=raw)
    return v


def plan(body: dict[str, Any], cfg: Any) -> list[tuple[str, str, dict[str, Any], dict[str, Any], Any]]:
    """The runs a request asks for — every model (one a line) with every algorithm — each as
    ``(model, algorithm, params, targets, cfg)``, each checked now as ``anonymize`` checks it
    before any work (the model's spec, the algorithm's name and parameters, the targets)."""
    from ..algorithms.registry import algorithm_class
    from ..errors import ParameterError
    from ..pipeline import algorithm_from, model_from

    models = [m.strip() for m in str(body.get("models") or "").splitlines() if m.strip()]
    algorithms = [str(a) for a in body.get("algorithms") or []]
    if not models:
        raise ParameterError("give a privacy model (-m), e.g. l=3 or k=5,l=3", parameter="model")
    if not algorithms:
        raise ParameterError("choose at least one algorithm (the default is generalized-anatomy)",
                             parameter="algorithm")
    params = parse_params(body.get("params", ""))
    seed = number(body, "seed", "--seed", int, 0)
    targets = {"max_risk": number(body, "max_risk", "--max-risk", float, 0.0, 1.0, lo_open=True),
               "max_reid_risk": number(body, "max_reid_risk", "--max-reid-risk", float, 0.0, 1.0, lo_open=True),
               "worlds": number(body, "worlds", "--worlds", int, 1),
               "population_size": number(body, "population_size", "--population-size", float, 1.0),
               "skew": str(body.get("skew") or "none")}
    if targets["skew"] not in SKEW:
        raise ParameterError(f"--skew {targets['skew']!r}: use one of {', '.join(SKEW)}", parameter="skew")
    accepted = {a: set(algorithm_class(a).constraints()) for a in algorithms}
    for key in params:
        if not any(key in acc for acc in accepted.values()):
            raise ParameterError(f"algorithm parameter {key!r} is not a parameter of {', '.join(algorithms)}",
                                 parameter="params", value=key)
    out = []
    for model in models:
        for algo in algorithms:
            mine = {k: v for k, v in params.items() if k in accepted[algo]}
            if seed is not None:
                mine["seed"] = seed
            c = copy.deepcopy(cfg)
            c.model = {"spec": model}
            c.algorithm = {"name": algo, **mine}
            m = model_from(c)
            algorithm_from(c, m, max_risk=targets["max_risk"], max_reid_risk=targets["max_reid_risk"])
            out.append((model, algo, mine, targets, c))
    return out
