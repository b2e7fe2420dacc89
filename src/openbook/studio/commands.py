"""The command lines that repeat a run of the studio: one ``openbook hierarchy`` per hierarchy
built in the page (it writes the same ARX CSV), then ``openbook anonymize`` with the same
data, schema, hierarchies, model, algorithm, parameters and certificate targets. A publisher
can paste them into a script; a reviewer can read in them what was done. An algorithm
parameter that has no flag (``anonymize --help``) goes into the ``[algorithm]`` section of a
``--config`` file, which the last line then says."""

from __future__ import annotations

import shlex
from typing import Any

#: algorithm parameters ``anonymize`` takes as flags
FLAGS = {"seed": "--seed", "max_suppression": "--max-suppression", "levels": "--levels", "p": "--p",
         "order": "--order"}


def _q(text: Any) -> str:
    return shlex.quote(str(text))


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v).lower() if isinstance(v, bool) else str(v)


def command_lines(run: Any, *, data_arg: str, output: str = "release.csv") -> list[str]:
    """The commands that repeat ``run`` (module docstring); ``data_arg`` names the input as
    the publisher has it (``--dataset adult``, a path, the uploaded file's name)."""
    cfg = run.cfg
    out: list[str] = []
    hier_flags = []
    for col, spec in cfg.hierarchies.items():
        h = (run.choices.get("hierarchies") or {}).get(col) or {}
        if h.get("mode") == "built":
            out.append(f"openbook hierarchy {data_arg} --column {_q(col)} {h['option']} -o {_q(h['file'])}")
            hier_flags.append("--hierarchy " + _q(f"{col}={h['file']}"))
        else:
            hier_flags.append("--hierarchy " + _q(f"{col}={spec}"))
    sch = cfg.schema
    parts = ["openbook anonymize", data_arg, "--qi", _q(",".join(sch.get("qi") or [])), "--sa", _q(sch.get("sa", ""))]
    if sch.get("identifiers"):
        parts += ["--identifiers", _q(",".join(sch["identifiers"]))]
    if sch.get("keep"):
        parts += ["--keep", _q(",".join(sch["keep"]))]
    if sch.get("missing"):
        parts += ["--missing", sch["missing"]]
    for name, values in (sch.get("sensitive_sets") or {}).items():
        parts += ["--sensitive", _q(f"{name}={'|'.join(map(str, values))}")]
    parts += hier_flags
    parts += ["-m", _q(run.model), "--algorithm", run.algorithm]
    rest = {}
    for key, v in run.params.items():
        if key == "strict":
            parts.append("--strict" if v else "--no-strict")
        elif key in FLAGS:
            parts += [FLAGS[key], _q(_value(v))]
        else:
            rest[key] = v
    t = run.targets
    for key, flag in (("max_risk", "--max-risk"), ("max_reid_risk", "--max-reid-risk"), ("worlds", "--worlds"),
                      ("population_size", "--population-size")):
        if t.get(key) is not None:
            parts += [flag, _value(t[key])]
    if t.get("skew") not in (None, "none"):
        parts += ["--skew", t["skew"]]
    parts += ["-o", _q(output)]
    if rest:
        parts += ["--config", "run.toml"]
    out.append(" ".join(parts))
    if rest:
        body = "\n".join(f"{k} = {_toml(v)}" for k, v in rest.items())
        out.append("# run.toml:\n# [algorithm]\n# " + body.replace("\n", "\n# "))
    return out


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
