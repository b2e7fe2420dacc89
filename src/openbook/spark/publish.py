"""The Spark engine's run: an algorithm on the cluster, verified, certified there and written
(docs/spark.md) — what :class:`openbook.engines.SparkEngine` does with a run specification
(:class:`openbook.run.RunSpec`, read here by its fields; the engine has checked it): :func:`publish`
runs it on a table already read on the cluster (:mod:`.encoding`).

The engine runs the algorithms of :data:`ALGORITHMS`: Mondrian (each fragment a local
Mondrian run, :mod:`.mondrian`) and full-domain search (the counts aggregated on the
cluster, the lattice walk on the driver, :mod:`.full_domain`). A failing certificate raises
:class:`~openbook.errors.RiskError` and nothing is written.
"""

from __future__ import annotations

from typing import Any, Callable


def publish(table: Any, spec: Any, progress: Callable[[str], None]) -> dict[str, Any]:
    """Run ``spec``'s algorithm (one of :data:`ALGORITHMS`; ``spec`` a
    :class:`~openbook.run.RunSpec`, which :class:`openbook.engines.SparkEngine` has checked) on
    ``table`` and write the release: the record of what was written (files, counts, the
    certificate)."""
    name = check_algorithm(spec.algorithm)
    return ALGORITHMS[name](table, spec, progress)


def check_algorithm(name: str | None) -> str:
    """``name`` when the Spark engine runs it, else a ParameterError naming those it runs."""
    if name not in ALGORITHMS:
        from ..errors import ParameterError

        raise ParameterError(f"--engine spark runs --algorithm {' or '.join(sorted(ALGORITHMS))}, not "
                             f"{name or 'the default algorithm'} (use --engine local)", parameter="engine",
                             value="spark")
    return str(name)


def _certifier(spec: Any, progress: Callable[[str], None]) -> dict[str, Any] | None:
    """The certificate's targets and parameters (``None`` when the run is not certified): as
    the local engine's certificate sets them."""
    c = spec.certify
    if not c.enabled:
        return None
    from .certify import ReleaseView, figures_for, targets

    tg = targets(ReleaseView({"model": spec.model.to_dict()}, [], ""), max_risk=c.max_risk,
                 max_reid_risk=c.max_reid_risk)
    return {"tg": tg, "figures": figures_for(tg), "params": c.params(), "max_reid_risk": c.max_reid_risk,
            "on_step": lambda n: progress(f"certifying on Spark: the {n} adversary")}


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


def _mondrian(table: Any, spec: Any, progress: Callable[[str], None]) -> dict[str, Any]:
    """Mondrian on the cluster (:mod:`.mondrian`), verified, certified on the cluster
    (:func:`.certify.mondrian_certificate`) and written."""
    from .mondrian import spark_mondrian, verify
    from .mondrian_plan import DEFAULT_MAX_FRAGMENT

    model = spec.model
    strict = bool(spec.params.get("strict", True))
    res = spark_mondrian(table, model, strict=strict, max_fragment=spec.max_fragment or DEFAULT_MAX_FRAGMENT)
    check, record, files = _verify_certify_write(res, spec, progress, verify, "mondrian_certificate")
    return {"files": files, "algorithm": "mondrian", "engine": "spark", "strict": strict,
            "model": model.describe(), "n_input": table.n_rows, "n_published": check["rows"],
            "n_suppressed": table.n_rows - check["rows"], "n_groups": check["classes"],
            "n_fragments": res.n_fragments, "planned_levels": res.plan.levels, "certificate": record}


def _full_domain(table: Any, spec: Any, progress: Callable[[str], None]) -> dict[str, Any]:
    """Full-domain search with the counts aggregated on the cluster, the lattice walk here
    (:mod:`.full_domain`), verified, certified from the cluster's classes
    (:func:`.certify.full_domain_certificate`) and written."""
    from . import full_domain as sfd

    model = spec.model
    res = sfd.search(table, spec.anonymizer())
    rel = sfd.release_rows(table, res, model)
    check, record, files = _verify_certify_write(rel, spec, progress, sfd.verify, "full_domain_certificate",
                                                 meta=lambda chk, n: sfd.release_meta(rel, chk, n),
                                                 n_suppressed=res.n_suppressed)
    return {"files": files, "algorithm": "full-domain-search", "engine": "spark",
            "model": model.describe(), "levels": res.levels, "n_input": table.n_rows, "n_published": check["rows"],
            "n_suppressed": table.n_rows - check["rows"], "n_groups": check["classes"],
            "n_checked": res.provenance["n_checked"], "certificate": record}


def _verify_certify_write(rel: Any, spec: Any, progress: Callable[[str], None], verify: Callable[..., Any],
                          certificate: str, *, meta: Callable[[Any, int], Any] | None = None,
                          **write: Any) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The release verified on the cluster (with the certificate's figures when certified),
    certified (``certificate``: the function of :mod:`.certify` for this algorithm; a failing
    certificate raises and nothing is written) and written (``meta(check, n)``: the sidecar's
    metadata, when the algorithm gives its own): ``(check, certificate record, files)``."""
    from .output import write_release

    cer = _certifier(spec, progress)
    check = verify(rel, figures=None if cer is None else cer["figures"])
    record = None
    if cer is not None:
        from . import certify

        record = _verdict(getattr(certify, certificate)(rel, check, cer["tg"], params=cer["params"],
                                                        max_reid_risk=cer["max_reid_risk"], on_step=cer["on_step"]))
    if meta is not None:
        write["meta"] = lambda n: meta(check, n)
    out = spec.output
    files = write_release(rel, check, out.path, force=out.force, inputs=list(spec.input_files()),
                          publish_suppressed_count=out.publish_suppressed_count,
                          publish_identifier_names=out.publish_identifier_names, certificate=record, **write)
    return check, record or _not_certified(), [str(f) for f in files]


#: the algorithms the Spark engine runs: name -> function(table, spec, progress) -> record
ALGORITHMS: dict[str, Callable[..., dict[str, Any]]] = {"mondrian": _mondrian, "full-domain-search": _full_domain}
