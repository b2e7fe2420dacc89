"""The Spark engine's run: an algorithm on the cluster, verified, certified there and written
(docs/spark.md) — what ``openbook anonymize --engine spark`` does, with no command-line
arguments in sight: :class:`SparkRun` holds the run's choices as plain values, and
:func:`publish` runs it on a table already read on the cluster (:mod:`.encoding`).

The engine runs the algorithms of :data:`ALGORITHMS`: Mondrian (each fragment a local
Mondrian run, :mod:`.mondrian`) and full-domain search (the counts aggregated on the
cluster, the lattice walk on the driver, :mod:`.full_domain`). A failing certificate raises
:class:`~openbook.errors.RiskError` and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..config import RunConfig


@dataclass(frozen=True)
class SparkRun:
    """One Spark run's choices: where the release goes (``output``, ``force`` over a release
    openbook wrote, the ``inputs`` it must never overwrite, what the sidecar may publish), the
    certificate (``certify``, its targets, the adversaries' parameters) and the algorithm's
    engine options (Mondrian's largest fragment)."""

    output: str
    force: bool = False
    inputs: tuple[str, ...] = ()
    publish_suppressed_count: bool = False
    publish_identifier_names: bool = False
    certify: bool = True
    max_risk: float | None = None
    max_reid_risk: float | None = None
    adversary_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_fragment: int | None = None


def publish(table: Any, model: Any, cfg: RunConfig, run: SparkRun, status_line: Any = None) -> dict[str, Any]:
    """Run ``cfg``'s algorithm (one of :data:`ALGORITHMS`) on ``table`` under ``model`` and
    write the release: the record of what was written (files, counts, the certificate)."""
    name = check_algorithm(cfg.algorithm.get("name"))
    return ALGORITHMS[name](table, model, cfg, run, status_line)


def check_algorithm(name: str | None) -> str:
    """``name`` when the Spark engine runs it, else a ParameterError naming those it runs."""
    if name not in ALGORITHMS:
        from ..errors import ParameterError

        raise ParameterError(f"--engine spark runs --algorithm {' or '.join(sorted(ALGORITHMS))}, not "
                             f"{name or 'the default algorithm'} (use --engine local)", parameter="engine",
                             value="spark")
    return str(name)


def _certifier(run: SparkRun, model: Any, status_line: Any) -> dict[str, Any] | None:
    """The certificate's targets and parameters (``None`` when the run is not certified): as
    the local engine's certificate sets them."""
    if not run.certify:
        return None
    from .certify import ReleaseView, figures_for, targets

    tg = targets(ReleaseView({"model": model.to_dict()}, [], ""), max_risk=run.max_risk,
                 max_reid_risk=run.max_reid_risk)
    return {"tg": tg, "figures": figures_for(tg), "params": run.adversary_params, "max_reid_risk": run.max_reid_risk,
            "on_step": lambda n: status_line.update(f"certifying on Spark: the {n} adversary")
            if status_line is not None else None}


def _verdict(cert: Any) -> dict[str, Any]:
    """The certificate's record; a failing one refuses the release (exit code 3, nothing
    written), naming what the Spark replay could not resolve when that is why."""
    from ..certificate import FAIL, refusal
    from ..errors import RiskError

    if cert.verdict == FAIL:
        err = refusal(cert)
        why = next((f.error for f in cert.findings if f.adversary == "replay" and f.ran and f.error), None)
        if why:
            err = RiskError(f"{err} ({why})", adversary=err.adversary, n_people=err.n_people, worst=err.worst)
        raise err
    return cert.to_dict()


def _not_certified() -> dict[str, Any]:
    from .output import NOT_CERTIFIED

    return dict(NOT_CERTIFIED)


def _mondrian(table: Any, model: Any, cfg: RunConfig, run: SparkRun, status_line: Any = None) -> dict[str, Any]:
    """Mondrian on the cluster (:mod:`.mondrian`), verified, certified on the cluster
    (:func:`.certify.mondrian_certificate`) and written."""
    from .mondrian import spark_mondrian, verify
    from .mondrian_plan import DEFAULT_MAX_FRAGMENT

    strict = bool(cfg.algorithm.get("strict", True))
    res = spark_mondrian(table, model, strict=strict, max_fragment=run.max_fragment or DEFAULT_MAX_FRAGMENT)
    check, record, files = _verify_certify_write(res, run, model, status_line, verify, "mondrian_certificate")
    return {"files": files, "algorithm": "mondrian", "engine": "spark", "strict": strict,
            "model": model.describe(), "n_input": table.n_rows, "n_published": check["rows"],
            "n_suppressed": table.n_rows - check["rows"], "n_groups": check["classes"],
            "n_fragments": res.n_fragments, "planned_levels": res.plan.levels, "certificate": record}


def _full_domain(table: Any, model: Any, cfg: RunConfig, run: SparkRun, status_line: Any = None) -> dict[str, Any]:
    """Full-domain search with the counts aggregated on the cluster, the lattice walk here
    (:mod:`.full_domain`), verified, certified from the cluster's classes
    (:func:`.certify.full_domain_certificate`) and written."""
    from ..pipeline import algorithm_from
    from . import full_domain as sfd

    algo = algorithm_from(cfg, model)
    res = sfd.search(table, algo)
    rel = sfd.release_rows(table, res, model)
    check, record, files = _verify_certify_write(rel, run, model, status_line, sfd.verify, "full_domain_certificate",
                                                 meta=lambda chk, n: sfd.release_meta(rel, chk, n),
                                                 n_suppressed=res.n_suppressed)
    return {"files": files, "algorithm": "full-domain-search", "engine": "spark",
            "model": model.describe(), "levels": res.levels, "n_input": table.n_rows, "n_published": check["rows"],
            "n_suppressed": table.n_rows - check["rows"], "n_groups": check["classes"],
            "n_checked": res.provenance["n_checked"], "certificate": record}


def _verify_certify_write(rel: Any, run: SparkRun, model: Any, status_line: Any, verify: Callable[..., Any],
                          certificate: str, *, meta: Callable[[Any, int], Any] | None = None,
                          **write: Any) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The release verified on the cluster (with the certificate's figures when certified),
    certified (``certificate``: the function of :mod:`.certify` for this algorithm; a failing
    certificate raises and nothing is written) and written (``meta(check, n)``: the sidecar's
    metadata, when the algorithm gives its own): ``(check, certificate record, files)``."""
    from .output import write_release

    cer = _certifier(run, model, status_line)
    check = verify(rel, figures=None if cer is None else cer["figures"])
    record = None
    if cer is not None:
        from . import certify

        record = _verdict(getattr(certify, certificate)(rel, check, cer["tg"], params=cer["params"],
                                                        max_reid_risk=cer["max_reid_risk"], on_step=cer["on_step"]))
    if meta is not None:
        write["meta"] = lambda n: meta(check, n)
    files = write_release(rel, check, run.output, force=run.force, inputs=list(run.inputs),
                          publish_suppressed_count=run.publish_suppressed_count,
                          publish_identifier_names=run.publish_identifier_names, certificate=record, **write)
    return check, record or _not_certified(), [str(f) for f in files]


#: the algorithms the Spark engine runs: name -> function(table, model, cfg, run, status) -> record
ALGORITHMS: dict[str, Callable[..., dict[str, Any]]] = {"mondrian": _mondrian, "full-domain-search": _full_domain}
