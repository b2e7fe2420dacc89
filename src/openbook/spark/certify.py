"""The certificate of a Spark release, computed on the cluster where the data lives
(:func:`openbook.certificate.certify`'s two lines; docs/certificate.md; docs/spark.md, "The
certificate on Spark").

The local certificate runs every registered adversary that applies and judges two lines.
Here the same adversaries are asked the same questions (:meth:`applies_to`, the algorithm-
aware one by :func:`openbook.attacks.awareness.awareness`, on the release's own record), the
same targets are set (:func:`openbook.models.promise.attribute_target`,
:func:`~openbook.models.promise.identity_target`), and each finding is built from figures
aggregated on the cluster, with the local formulas:

* **baseline** (uniform worlds in each class) and **identity** (prosecutor risk ``1/f``,
  ``f`` = the records sharing the published QI values): per published class, from its SA
  counts — one pass over the classes (:func:`.classes.class_pass`); the people a full-domain
  search withheld get the published distribution, as locally. Exact.
* **replay** (the adversary who knows Mondrian): fragment by fragment on the executors with
  the local replay's units, solvers and seeds (:mod:`.replay`) — the local posteriors where it
  resolves people; people below a planned cut the driver refused, or in a class spread over
  fragments, are unresolved (the verdict fails and says why).
* an adversary that applies and needs the table on one machine — the replay of full-domain
  *search* (it re-runs the whole search on every possible world), the minimality adversary —
  is recorded as not run, with the reason: unknown is not safe, so the verdict fails. The
  local certificate of a full-domain search release fails too once the table is not tiny (no
  adversary knows the search: re-running it needs more than ``rerun_limit`` worlds, or people
  were suppressed); the Spark certificate then names the same reason.

The lines and the verdict are the local code's (:func:`openbook.certificate.certificate_lines`), so a
Spark certificate equals the local certificate of the same partition (seconds aside) whenever
the Spark replay resolves everyone — ``tests/spark/test_spark_certify.py``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

from ..models.base import SADomain
from .classes import Figures


class ReleaseView:
    """What the adversaries' ``applies_to`` / ``knows_algorithm`` and the targets read of a
    release — its record (``meta``), kind and columns — without its rows, which stay on the
    cluster. ``counts``: the published classes' SA counts when the driver holds them (a
    full-domain search: its classes are its frequency table's), for the replay's count of
    possible worlds."""

    def __init__(self, meta: dict[str, Any], qi: list[str], sa: str, counts: tuple[np.ndarray, SADomain] | None = None):
        self.kind, self.meta, self.qi, self.sa = "generalized", meta, list(qi), sa
        self.partition = None
        self.qi_generalized = True
        self._counts = counts

    def sa_counts(self) -> tuple[np.ndarray, SADomain]:
        if self._counts is None:
            from ..errors import ParameterError

            raise ParameterError("the Spark release's classes are on the cluster", parameter="release")
        return self._counts


def targets(view: ReleaseView, *, max_risk: float | None, max_reid_risk: float | None) -> dict[str, Any]:
    """The lines' targets (as :func:`openbook.certificate.certify` sets them)."""
    from ..attacks.baseline import release_model
    from ..models.promise import attribute_target, identity_target

    model = release_model(view)
    atgt = attribute_target(model, max_risk)
    reid, reid_source = identity_target(model, max_reid_risk)
    ptarget = atgt.posterior if atgt.posterior is not None else (1.0 if atgt.certainty else None)
    pkind = "certainty" if atgt.posterior is None and atgt.certainty else "posterior"
    return {"model": model, "atgt": atgt, "reid": reid, "reid_source": reid_source, "ptarget": ptarget,
            "pkind": pkind}


def figures_for(tg: dict[str, Any]) -> Callable[[SADomain], Figures]:
    """The class pass's request (:class:`.classes.Figures`) for the baseline and identity
    findings, given the release's SA domain."""
    from ..attacks.baseline import choose_targets
    from ..models.promise import distance_model

    def make(rdom: SADomain) -> Figures:
        names, masks, _ = choose_targets(rdom, tg["model"], None)
        dm = distance_model(tg["model"]) if tg["atgt"].distance is not None else None
        if dm is not None and list(names) != [str(v) for v in rdom.values]:
            dm = None  # a sensitive set's posteriors say nothing of a distance: never safe (b_no_distance)
            tg["b_no_distance"] = True
        return Figures(masks=masks, target=tg["ptarget"], kind=tg["pkind"], dm=dm, distance=tg["atgt"].distance,
                       reid=tg["reid"])

    return make


def _finding(adv: Any, applies: Any, **kw: Any) -> Any:
    from ..certificate import Finding

    return Finding(adversary=adv.name, title=adv.title, paper=adv.paper, disclosure=adv.disclosure, applies=True,
                   reason=applies.reason, **kw)


def spark_certificate(view: ReleaseView, classes: dict[str, Any], tg: dict[str, Any], *, n_people: int,
                      n_absent: int = 0, absent_baseline: dict[str, Any] | None = None,
                      replay: Callable[[], dict[str, Any]] | None = None,
                      max_reid_risk: float | None = None, params: Mapping[str, Mapping[str, Any]] | None = None,
                      on_step: Callable[[str], None] | None = None) -> Any:
    """The certificate (module docstring). ``classes``: the class pass's figures;
    ``n_people``: the original table's rows; ``n_absent`` people withheld, whose baseline
    posterior is ``absent_baseline`` (``{"max", "above", "dmax"}``); ``replay()``: the replay
    finding's figures (:mod:`.replay`), ``None`` when the algorithm's replay cannot run here —
    except for a grouping by the QIs or the SA alone (the replay's ``"qi-only"``/``"sa-only"``:
    no world excluded), whose replay posterior is the class frequency: the baseline's figures."""
    from ..attacks.awareness import awareness
    from ..attacks.registry import adversaries as registry, make_adversary
    from ..certificate import FAIL, PASS, Certificate, certificate_lines

    t0 = time.perf_counter()
    params = dict(params or {})
    atgt, reid, ptarget, pkind = tg["atgt"], tg["reid"], tg["ptarget"], tg["pkind"]
    aware_name, why = awareness(view, params)
    from ..attacks.awareness import replay_method

    as_baseline = replay_method(view) in ("qi-only", "sa-only")
    plan = []
    for name in registry():
        kw = dict(params.get(name, {}))
        if name == "linkage" and atgt.posterior is not None:
            kw.setdefault("l", 1.0 / atgt.posterior)
        adv = make_adversary(name, **kw)
        applies = adv.applies_to(view)
        if not applies or adv.missing_knowledge(original=True, earlier=()):
            continue  # (the linkage adversary: no earlier releases to link with)
        plan.append((adv, applies))
    findings = []
    base_figures: dict[str, Any] | None = None
    for adv, applies in plan:
        if on_step is not None:
            on_step(adv.name)
        t1 = time.perf_counter()
        knows = adv.name == aware_name
        identity = adv.disclosure == "identity"
        common = {"target": reid if identity else ptarget,
                  "target_kind": "re-identification" if identity else pkind, "knows_algorithm": knows}
        if adv.name == "baseline":
            classes = {**classes, "b_no_distance": tg.get("b_no_distance", False)}
            mx = classes.get("b_max")
            above = classes.get("b_above", 0)
            dmax = classes.get("b_dmax")
            if n_absent and absent_baseline is not None:
                mx = absent_baseline["max"] if mx is None else max(mx, absent_baseline["max"])
                above += absent_baseline["above"]
                if absent_baseline.get("dmax") is not None:
                    dmax = absent_baseline["dmax"] if dmax is None else max(dmax, absent_baseline["dmax"])
            f = _finding(adv, applies, ran=True, max_posterior=mx, n_people=n_people, n_absent=n_absent,
                         n_above=above, n_unresolved=n_people if classes.get("b_no_distance") else 0,
                         method="exact", params=adv.params(), distance_target=atgt.distance,
                         max_distance=dmax if atgt.distance is not None else None, **common)
            base_figures = {"max": mx, "above": above, "dmax": dmax,
                            "unresolved": n_people if classes.get("b_no_distance") else 0}
        elif adv.name == "replay" and replay is None and as_baseline and base_figures is not None:
            # no world excluded: the replay's posterior is the class frequency (the withheld people's
            # as the baseline's — the classes failing the model are withheld whatever their values)
            f = _finding(adv, applies, ran=True, max_posterior=base_figures["max"], n_people=n_people,
                         n_absent=n_absent, n_above=base_figures["above"], n_unresolved=base_figures["unresolved"],
                         method="exact", params=adv.params(), baseline_max_posterior=base_figures["max"],
                         distance_target=atgt.distance,
                         max_distance=base_figures["dmax"] if atgt.distance is not None else None, **common)
        elif adv.name == "reidentification":
            f = _finding(adv, applies, ran=True, max_posterior=classes.get("id_max"),
                         n_people=n_people - n_absent, n_absent=0, n_above=classes.get("id_above", 0),
                         n_unresolved=0, method="exact", params=adv.params(), **common)
        elif adv.name == "replay" and replay is not None:
            r = replay()
            f = _finding(adv, applies, ran=True, max_posterior=r["max"], n_people=n_people, n_absent=0,
                         n_above=r["above"], n_unresolved=r["unresolved"],
                         method="sampled (3-SE bound)" if r["sampled"] else "exact", params=adv.params(),
                         baseline_max_posterior=r["beside"], distance_target=atgt.distance,
                         max_distance=r["dmax"], **common)
            f.error = r.get("why")
        else:
            f = _finding(adv, applies, error=f"the Spark engine does not run the {adv.name} adversary (it needs the "
                         "table on one machine): certify the release with --engine local where it fits",
                         **common)
        f.seconds = round(time.perf_counter() - t1, 3)
        findings.append(f)
    cert = Certificate(verdict=FAIL, target=atgt.posterior, target_source=atgt.source, findings=findings,
                       knowledge={"original": True, "earlier_releases": 0, "max_reid_risk": max_reid_risk,
                                  "identity_target": reid, "attribute_target": atgt.to_dict()},
                       seconds=time.perf_counter() - t0, aware={"adversary": aware_name, "reason": why})
    cert.lines = certificate_lines(findings, atgt, reid, tg["reid_source"], aware_name, cert.unaware())
    cert.verdict = PASS if all(ln.passes for ln in cert.lines) else FAIL
    return cert


def combine_replay(parts: list[dict[str, Any]], unresolved: dict[str, int]) -> dict[str, Any]:
    """The fragments' records (:func:`.replay.judge`) as the replay finding's figures, with the
    people of the fragments left unresolved (``reason -> people``)."""
    out: dict[str, Any] = {"max": None, "above": 0, "unresolved": sum(unresolved.values()), "sampled": False,
                           "beside": None, "dmax": None}
    for p in parts:
        for k in ("max", "beside", "dmax"):
            if p[k] is not None:
                out[k] = p[k] if out[k] is None else max(out[k], p[k])
        out["above"] += p["above"]
        out["unresolved"] += p["unresolved"]
        out["sampled"] |= p["sampled"]
    if unresolved:  # the reasons, never a count (a finding's words may be published)
        out["why"] = "unresolved on Spark: " + "; ".join(unresolved)
    return out


def _replay_adversary(params: Mapping[str, Mapping[str, Any]]) -> Any:
    from ..attacks.registry import make_adversary

    return make_adversary("replay", **dict(params.get("replay", {})))


def _baseline_adversary(params: Mapping[str, Mapping[str, Any]]) -> Any:
    from ..attacks.registry import make_adversary

    return make_adversary("baseline", **dict(params.get("baseline", {})))


def mondrian_certificate(res: Any, check: dict[str, Any], tg: dict[str, Any], *,
                         params: Mapping[str, Mapping[str, Any]] | None = None, max_reid_risk: float | None = None,
                         on_step: Callable[[str], None] | None = None) -> Any:
    """The certificate of a Spark Mondrian run (``res``: :class:`.mondrian.SparkMondrianResult`;
    ``check``: :func:`.mondrian.verify`'s record with the class figures)."""
    from ..attacks.baseline import choose_targets
    from ..models.promise import distance_model
    from .output import release_meta
    from .replay import ReplaySpec, replay_roots, run_fragments

    params = dict(params or {})
    st, model = res.st, tg["model"]
    view = ReleaseView(release_meta(res, check, n_published=check["rows"]), st.qi_names, st.dictionaries.sa_name)

    def replay() -> dict[str, Any]:
        roots = replay_roots(res.plan, check.get("spans", []))
        adv = _replay_adversary(params)
        names, masks, _ = choose_targets(st.domain, model, adv.sensitive_set)
        rdom = check["release_domain"]
        _, bmasks, _ = choose_targets(rdom, model, _baseline_adversary(params).sensitive_set)
        spec = ReplaySpec(st.dictionaries, st.domain, res.model, res.strict, st.d, int(adv.worlds),
                          int(adv.world_seed), float(adv.exact_limit), masks, list(names), tg["ptarget"], tg["pkind"],
                          distance_model(model) if tg["atgt"].distance is not None else None, tg["atgt"].distance,
                          rdom, check["release_index"], bmasks)
        parts = run_fragments(st, res, spec, roots) if (roots.key >= 0).any() else []
        return combine_replay(parts, roots.why)

    return spark_certificate(view, check, tg, n_people=st.n_rows, replay=replay, max_reid_risk=max_reid_risk,
                             params=params, on_step=on_step)


def full_domain_certificate(rel: Any, check: dict[str, Any], tg: dict[str, Any], *,
                            params: Mapping[str, Mapping[str, Any]] | None = None,
                            max_reid_risk: float | None = None, on_step: Callable[[str], None] | None = None) -> Any:
    """The certificate of a Spark full-domain search (``rel``: :class:`.full_domain.FullDomainRelease`):
    the baseline (the withheld people given the published distribution, as locally) and the
    identity line from the classes; the search's replay and the minimality adversary, which
    need the table on one machine, recorded as not run (module docstring)."""
    from ..attacks.base import TOL
    from ..attacks.baseline import choose_targets
    from ..certificate import CERTAIN
    from ..models.promise import distance_model
    from .full_domain import release_meta

    params = dict(params or {})
    st, res, model = rel.st, rel.result, tg["model"]
    rdom, rindex = check["release_domain"], check["release_index"]
    n_sup = int(res.n_suppressed)
    # the published classes' SA counts (the lattice's classes at the node: on the driver already)
    counts = res.lattice.data.counts
    kept = np.flatnonzero(res.combo_kept)
    cc = np.zeros((int(res.combo_class.max(initial=-1)) + 1, st.n_sa), dtype=np.int64)
    np.add.at(cc, res.combo_class[kept], counts[kept])
    cc = cc[cc.sum(axis=1) > 0]
    rc = np.zeros((cc.shape[0], rdom.n_values), dtype=np.int64)
    for code in np.flatnonzero(rindex >= 0):
        rc[:, rindex[code]] += cc[:, code]
    view = ReleaseView(release_meta(rel, check, check["rows"]), st.qi_names, st.dictionaries.sa_name, (rc, rdom))
    absent = None
    if n_sup:
        _, bmasks, _ = choose_targets(rdom, model, _baseline_adversary(params).sensitive_set)
        tot = rdom.global_counts.astype(np.float64)
        post = (tot @ bmasks.T.astype(np.float64)) / max(tot.sum(), 1.0)
        bound = float(post.max()) if post.size else float("nan")
        t = tg["ptarget"]
        hit = t is not None and (bound >= CERTAIN if tg["pkind"] == "certainty" else bound > t + TOL)
        dmax = None
        if tg["atgt"].distance is not None and not tg.get("b_no_distance"):
            dm = distance_model(model)
            dmax = float((dm.distances(post[None, :], rdom) + dm.error_bound(np.zeros((1, post.size)), rdom))[0])
            hit = hit or dmax > tg["atgt"].distance + 1e-9
        absent = {"max": bound, "above": n_sup if hit else 0, "dmax": dmax}
    return spark_certificate(view, check, tg, n_people=st.n_rows, n_absent=n_sup, absent_baseline=absent,
                             replay=None, max_reid_risk=max_reid_risk, params=params, on_step=on_step)
