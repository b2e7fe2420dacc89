"""The release certificate: every adversary that applies, run before a release is written,
and a verdict on **both** disclosures a publisher answers for.

openbook's promise is that a release stays private against an adversary who knows the
algorithm (paper 000 §2.4; paper 001 Assumption 3). ``anonymize`` therefore does not stop at
the syntactic model check (:mod:`openbook.release.verify`): :func:`certify` runs every
registered adversary (:mod:`openbook.attacks.adversary`) whose model fits the release and
whose knowledge is at hand and judges two lines, each against its own target:

* the **identity line** — can a record be re-identified from its published QIs? The
  re-identification adversary (:mod:`.attacks.reidentification`) gives every record's
  prosecutor risk (journalist risk when the population is given); the target is
  ``--max-reid-risk``, else ``1/k`` of the model's k, else 0.2
  (:func:`openbook.models.promise.identity_target`). A release that publishes exact QIs
  fails it unless the publisher accepts that explicitly (``--max-reid-risk 1``).
* the **attribute line** — what is learnt about the sensitive value. Every attribute
  adversary — the one who knows the algorithm (:func:`.attacks.awareness.awareness`), exact
  credibility, worst-case background knowledge, the eligibility attack, linkage, and always the
  baseline — gives every person's posterior; the target
  (:func:`openbook.models.promise.attribute_target`) is ``--max-risk``, else the model's
  ``1/ℓ`` or α, and for t-closeness also the distance of the posterior to the table's SA
  distribution at most ``t``; a model that bounds no posterior (k-anonymity, (k,e)) is held to
  the homogeneity bound: nobody's value certain.

Per adversary the certificate records the **max posterior** (an upper bound: a sampled
posterior counts with three standard errors, :meth:`AttackResult.bound`), the people above the
target, the people it could not evaluate (**unresolved**: they count as failing, never as
safe), the absent people it reasoned about, the method and the seconds; beside it the
baseline's max posterior over the same people (neither bounds the other person by person).

The **verdict** is ``pass`` (PUBLISHABLE) when both lines pass: an adversary that knows the
release's algorithm ran, every adversary that applies ran, nobody is above a target and nobody
is unresolved; ``fail`` otherwise — in particular for an algorithm no adversary knows (MASK,
ART, Injector, anatomization of an SA-dependent base, a release that records no algorithm):
unknown is not safe. The certificate holds aggregate figures only — nothing per person,
nothing about the true SA values (the sidecar is public).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .attacks.base import TOL
from .errors import OpenbookError, ParameterError, RiskError
from .models.promise import AttributeTarget, attribute_target, identity_target, promised_l
from .release.record import CertificateRecord, FindingRecord, Line, UncertifiedRecord, verdict_of

PASS, FAIL, NO_TARGET, SKIPPED = "pass", "fail", "no target", "not certified"
#: a posterior at least this close to 1 is certainty (the homogeneity bound)
CERTAIN = 1.0 - 1e-9


class Finding(FindingRecord):
    """One adversary's figures against one release (JSON-able): the fields are the record's
    (:class:`openbook.release.record.FindingRecord`, with what its sidecar publishes of each);
    this adds what the certificate reads from them."""

    def _figure(self) -> str:
        return "risk" if self.disclosure == "identity" else "posterior"

    def line(self) -> str:
        """One line for the terminal and the refusal message."""
        if not self.applies:
            return f"{self.adversary}: does not apply ({self.reason})"
        if not self.ran:
            return f"{self.adversary}: not run ({self.error or self.reason})"
        mp = "n/a" if self.max_posterior is None else f"{self.max_posterior:.4g}"
        tgt = "" if self.target is None else (" vs target < 1" if self.target_kind == "certainty"
                                              else f" vs target {self.target:.4g}")
        dist = ("" if self.distance_target is None else
                f"; max distance {'n/a' if self.max_distance is None else f'{self.max_distance:.4g}'} vs t "
                f"{self.distance_target:.4g}")
        base = ("" if self.baseline_max_posterior is None or self.adversary == "baseline"
                or self.disclosure != "attribute" else f" (baseline {self.baseline_max_posterior:.4g})")
        of = "" if self.n_people is None else f" of {self.n_people}"
        above, unres = ("some" if n is None else n for n in (self.n_above, self.n_unresolved))  # None: not published
        who = "records" if self.disclosure == "identity" else "people"
        return (f"{self.adversary}: max {self._figure()} {mp}{base}{tgt}{dist}; {above}{of} {who} above, "
                f"{unres} unresolved ({self.method}, {self.seconds:.2f} s)")

    def what(self) -> str:
        """What this adversary found, in one clause: the people above the target, the worst
        figure (beside the baseline's), the unresolved people (the refusal's words)."""
        if not self.ran:
            return f"the {self.adversary} adversary could not run ({self.error or self.reason})"
        mp = "unknown" if self.max_posterior is None else f"{self.max_posterior:.4g}"
        of = "" if self.n_people is None else f" of {self.n_people}"
        some = "some" if self.n_above is None else self.n_above
        if self.disclosure == "identity":
            tgt = "the target" if self.target is None else f"{self.target:.4g}"
            return (f"{some}{of} records have a re-identification risk above {tgt} (highest {mp}); every published "
                    "QI combination must be shared by more records")
        if self.target_kind == "certainty":
            out = f"the {self.adversary} adversary is certain of {some}{of} people's sensitive value"
        else:
            tgt = "the target" if self.target is None else f"{self.target:.4g}"
            out = f"the {self.adversary} adversary puts {some}{of} people above {tgt} (worst posterior {mp})"
        if self.distance_target is not None and self.max_distance is not None:
            out += f" (largest distance to the table's distribution {self.max_distance:.4g}, t = {self.distance_target:.4g})"
        if self.n_unresolved or self.n_unresolved is None:
            out += f" and leaves {self.n_unresolved or 'some'} unresolved (unknown is not safe)"
        if self.baseline_max_posterior is not None and self.adversary != "baseline":
            out += f"; the baseline's worst posterior for them is {self.baseline_max_posterior:.4g}"
        return out


def _identity_text(passes: bool, target: float, worst: float | None, above: int | None, ran: bool) -> str:
    if not ran:
        return "IDENTITY NOT CERTIFIED: the re-identification risk could not be measured"
    w = "unknown" if worst is None else f"{worst:.3g}"
    if passes and target >= CERTAIN:
        return (f"identity NOT protected, accepted by the publisher (re-identification risk up to 1 allowed): the "
                f"highest re-identification risk is {w}")
    if passes:
        floor = int(np.ceil(1.0 / target - 1e-9))
        return (f"identity protected: nobody's re-identification risk is above {target:.3g} (highest {w}); every "
                f"published QI combination is shared by at least {floor} records")
    some = "some" if above is None else f"{above:,}"
    return (f"IDENTITY DISCLOSED: {some} records have a re-identification risk above {target:.3g} (highest {w}"
            + ("; exact QIs identify them" if worst is not None and worst >= CERTAIN else "") + ")")


def _attribute_text(passes: bool, tgt: AttributeTarget, worst: float | None, wdist: float | None,
                    above: int | None, unres: int | None, aware: str | None, unaware: str | None,
                    not_run: Sequence[str] = ()) -> str:
    w = "unknown" if worst is None else f"{worst:.3g}"
    who = f"an adversary who knows the algorithm ({aware})" if aware else "no adversary who knows the algorithm"
    if passes:
        parts = []
        if tgt.posterior is not None:
            parts.append(f"nobody's posterior above {tgt.posterior:.3g}")
        if tgt.distance is not None:
            parts.append(f"nobody's posterior farther than t = {tgt.distance:.3g} from the table's distribution"
                         + ("" if wdist is None else f" (largest {wdist:.3g})"))
        if tgt.certainty and tgt.posterior is None:
            parts.append("nobody's value certain")
        return f"sensitive value protected: {who} learns {', '.join(parts)} (worst posterior {w})"
    if unaware:
        return f"SENSITIVE VALUE NOT CERTIFIED: {unaware}"
    if not_run and not above and not unres:
        return f"SENSITIVE VALUE NOT CERTIFIED: {', '.join(not_run)} could not run (unknown is not safe)"
    some = "some" if above is None else f"{above:,}"
    bits = [f"{some} people above the target (worst posterior {w}"
            + ("" if wdist is None or tgt.distance is None else f", largest distance {wdist:.3g}") + ")"]
    if unres:
        bits.append(f"{unres:,} unresolved")
    return "SENSITIVE VALUE DISCLOSED: " + "; ".join(bits)


@dataclass
class Certificate:
    """Every finding, both lines and the verdict (module docstring)."""

    verdict: str
    target: float | None
    target_source: str
    findings: list[Finding]
    knowledge: dict[str, Any]
    seconds: float = 0.0
    #: the adversary who knows the release's algorithm: ``{"adversary": NAME or None,
    #: "reason": ...}`` (``None``: no adversary knows it; the verdict cannot be ``pass``)
    aware: dict[str, Any] = field(default_factory=dict)
    #: each adversary's per-person result (in memory only: the report draws them; never
    #: written — the sidecar is public)
    results: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the identity line and the attribute line, in that order
    lines: list[Line] = field(default_factory=list)

    def failing(self) -> list[Finding]:
        return [f for f in self.findings if not f.passes]

    def line_named(self, name: str) -> Line | None:
        return next((ln for ln in self.lines if ln.name == name), None)

    def unaware(self) -> str | None:
        """Why the certificate lacks an adversary who knows the algorithm (``None``: it has
        one and it ran)."""
        if not self.aware:
            return None
        name = self.aware.get("adversary")
        if name is None:
            return f"no adversary knows the release's algorithm ({self.aware.get('reason', '')})"
        if not any(f.adversary == name and f.ran for f in self.findings):
            return f"the adversary who knows the algorithm ({name}) did not run"
        return None

    def headline(self) -> str:
        """The verdict and both lines in plain words, identity first."""
        word = {PASS: "PUBLISHABLE", FAIL: "REFUSED", NO_TARGET: "NO TARGET"}.get(self.verdict, self.verdict.upper())
        if self.lines:
            return f"{word}: " + "; ".join(ln.text for ln in self.lines)
        if self.verdict == NO_TARGET:
            return "no target: the model promises no posterior bound (a certificate of an earlier openbook)"
        worst = self.worst()
        return f"{word}: " + (worst.line() if worst is not None else "see the adversaries")

    def worst(self) -> Finding | None:
        """The failing finding to name first: identity before attribute, then the highest
        figure among those that ran (then the most people above the target and unresolved),
        else one that could not run."""
        bad = self.failing()
        if not bad:
            return None
        return max(bad, key=lambda f: (f.disclosure == "identity", f.ran,
                                       f.max_posterior if f.max_posterior is not None else -1.0,
                                       f.n_above or 0, f.n_unresolved or 0))

    def to_pandas(self) -> Any:
        """One row per adversary: what it found (the certificate's findings as a table)."""
        import pandas as pd

        return pd.DataFrame([asdict(f) for f in self.findings])

    def to_dict(self) -> CertificateRecord:
        return {"verdict": self.verdict, "headline": self.headline(), "lines": [ln.to_dict() for ln in self.lines],
                "target": self.target, "target_source": self.target_source,
                "knowledge": dict(self.knowledge), "algorithm_aware": dict(self.aware),
                "seconds": round(self.seconds, 3), "adversaries": [asdict(f) for f in self.findings]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Certificate":
        names = set(Finding.__dataclass_fields__)
        findings = [Finding(**{k: v for k, v in f.items() if k in names}) for f in d.get("adversaries", [])]
        lnames = set(Line.__dataclass_fields__)
        lines = [Line(**{k: v for k, v in ln.items() if k in lnames}) for ln in d.get("lines") or []]
        return cls(verdict=d["verdict"], target=d.get("target"), target_source=d.get("target_source", ""),
                   findings=findings, knowledge=dict(d.get("knowledge") or {}), seconds=float(d.get("seconds", 0.0)),
                   aware=dict(d.get("algorithm_aware") or {}), lines=lines)


def skipped(reason: str) -> UncertifiedRecord:
    """The sidecar record of a release written without certification (``--no-certify``)."""
    return {"verdict": SKIPPED, "reason": reason, "adversaries": []}


def model_target(model: Any) -> float | None:
    """The posterior bound a model promises: ``α`` of (α,k)-anonymity, ``1/ℓ`` of every
    ℓ-diversity variant, ``None`` for k-anonymity, t-closeness and (k,e)-anonymity (their
    attribute line is the distance ``t`` or the homogeneity bound: :func:`attribute_target`)."""
    l = promised_l(model)
    return None if l is None else 1.0 / l


def _distances(result: Any, release: Any, model: Any, evaluated: np.ndarray) -> np.ndarray | None:
    """Per person, an upper bound of the distance of their posterior distribution to the table's
    SA distribution under the model's t-closeness distance (3 standard errors added where
    sampled); ``None`` when the result's targets are not the SA values (a sensitive set)."""
    from .models.promise import distance_model

    dm = distance_model(model)
    counts, domain = release.sa_counts()
    names = [str(v) for v in domain.values]
    if dm is None or list(result.targets) != names:
        return None
    out = np.full(evaluated.size, np.nan)
    rows = np.flatnonzero(evaluated)
    if not rows.size:
        return out
    if result.compact:  # one distance per shared posterior row, never a row per person (a wide SA)
        post_rows, se_rows, row_of = result.compact_parts()
        used = np.unique(row_of[rows])
        p = np.nan_to_num(post_rows[used], nan=0.0)
        e = np.zeros_like(p) if se_rows is None else np.nan_to_num(se_rows[used], nan=0.0)
        per_row = dm.distance_bound(p, 3.0 * e, domain)
        out[rows] = per_row[np.searchsorted(used, row_of[rows])]
        return out
    post = np.nan_to_num(result.posterior[rows], nan=0.0)
    se = np.zeros_like(post) if result.stderr is None else np.nan_to_num(result.stderr[rows], nan=0.0)
    out[rows] = dm.distance_bound(post, 3.0 * se, domain)
    return out


def _finding_from(adv: Any, result: Any, target: float | None, seconds: float, reason: str, *,
                  baseline: Any = None, knows: bool = False, target_kind: str = "posterior",
                  distance_target: float | None = None, release: Any = None, model: Any = None) -> Finding:
    bound = result.max_bound()
    unresolved = result.unresolved_mask()
    published = result.group >= 0
    considered = published | ~np.isnan(bound) | unresolved
    evaluated = considered & ~unresolved & ~np.isnan(bound)
    mx = float(np.nanmax(bound[evaluated])) if evaluated.any() else None
    if target is None:
        above_mask = np.zeros(bound.size, dtype=bool)
    elif target_kind == "certainty":
        above_mask = evaluated & (bound >= CERTAIN)
    else:
        above_mask = evaluated & (bound > target + TOL)
    max_distance = None
    if distance_target is not None and adv.disclosure == "attribute":
        dist = _distances(result, release, model, evaluated)
        if dist is None:  # the posteriors of a sensitive set say nothing of a distance: never safe
            unresolved = unresolved | evaluated
        else:
            ok = ~np.isnan(dist)
            max_distance = float(dist[ok].max()) if ok.any() else None
            above_mask = above_mask | (ok & (dist > distance_target + 1e-9))
    worst_se = result.max_stderr(evaluated) if evaluated.any() and len(result.targets) else None
    sampled = worst_se is not None and bool(worst_se > 0)  # read on the compact form: no per-person copy
    bounded = bool(result.notes.get("bound")) and sampled  # an upper bound stated as 3 "s.e." (MASK)
    method = "upper bound" if bounded else "sampled (3-SE bound)" if sampled else "exact"
    return Finding(adversary=adv.name, title=adv.title, paper=adv.paper, disclosure=adv.disclosure, applies=True,
                   reason=reason, ran=True, target=target, max_posterior=mx,
                   n_people=int(considered.sum()), n_absent=int((considered & ~published).sum()),
                   n_above=int(above_mask.sum()), n_unresolved=int(unresolved.sum()), method=method,
                   seconds=round(seconds, 3), params=adv.params(),
                   baseline_max_posterior=_baseline_beside(baseline, result, evaluated)
                   if adv.disclosure == "attribute" else None,
                   knows_algorithm=knows, target_kind=target_kind, distance_target=distance_target,
                   max_distance=max_distance)


def _baseline_beside(baseline: Any, result: Any, evaluated: np.ndarray) -> float | None:
    """The baseline's max posterior (its 3-SE bound; it is exact) over the people ``result``
    evaluated — when both are per person of the same table — else over everyone it saw."""
    if baseline is None:
        return None
    bb = baseline.max_bound()
    rows = ~np.isnan(bb)
    if result.n_tuples == baseline.n_tuples and result.adversary != "eligibility":
        rows &= evaluated
    return float(bb[rows].max()) if rows.any() else None


def certificate_lines(findings: list[Finding], atgt: AttributeTarget, reid: float, reid_source: str,
           aware: str | None, unaware: str | None) -> list[Line]:
    ident = [f for f in findings if f.disclosure == "identity" and f.applies]
    ran = [f for f in ident if f.ran]
    ok_i = bool(ran) and all(f.passes for f in ident)
    worst_i = max((f.max_posterior for f in ran if f.max_posterior is not None), default=None)
    above_i = None if any(f.n_above is None for f in ran) else sum(f.n_above or 0 for f in ran)
    identity = Line("identity", ok_i, reid, reid_source, worst_i, above_i, 0, [f.adversary for f in ident],
                    _identity_text(ok_i, reid, worst_i, above_i, bool(ran)))
    attr = [f for f in findings if f.disclosure == "attribute" and f.judged]
    ok_a = bool(attr) and all(f.passes for f in attr) and unaware is None
    ran_a = [f for f in attr if f.ran]
    worst_a = max((f.max_posterior for f in ran_a if f.max_posterior is not None), default=None)
    wdist = max((f.max_distance for f in ran_a if f.max_distance is not None), default=None)
    above_a = None if any(f.n_above is None for f in ran_a) else max((f.n_above or 0 for f in ran_a), default=0)
    unres_a = None if any(f.n_unresolved is None for f in ran_a) else max((f.n_unresolved or 0 for f in ran_a),
                                                                         default=0)
    ptarget = atgt.posterior if atgt.posterior is not None else (1.0 if atgt.certainty else None)
    attribute = Line("attribute", ok_a, ptarget, atgt.source, worst_a, above_a, unres_a,
                     [f.adversary for f in attr],
                     _attribute_text(ok_a, atgt, worst_a, wdist, above_a, unres_a, aware, unaware,
                                     [f"the {f.adversary} adversary" for f in attr if not f.ran]),
                     distance_target=atgt.distance, worst_distance=wdist, certainty=atgt.certainty)
    return [identity, attribute]


def certify(release: Any, *, original: Any = None, earlier: Sequence[Any] = (), max_risk: float | None = None,
            max_reid_risk: float | None = None, adversaries: Sequence[str] | None = None,
            params: Mapping[str, Mapping[str, Any]] | None = None,
            on_step: Callable[[str], None] | None = None) -> Certificate:
    """Run every adversary that applies to ``release`` (or the named ones) and judge both lines.

    Parameters
    ----------
    original:
        The original table (:class:`~openbook.data.table.EncodedTable`): every individual's
        QIs (the adversary's knowledge) and their SA (the auditor's truth).
    earlier:
        Earlier releases of the same population (the linkage adversary).
    max_risk:
        The attribute line's posterior target; default the model's
        (:func:`openbook.models.promise.attribute_target`).
    max_reid_risk:
        The identity line's target (prosecutor risk, or journalist risk when
        ``params["reidentification"]`` gives the population); default ``1/k`` or 0.2.
    adversaries:
        Names to run (default: every registered adversary that applies); the baseline and the
        re-identification adversary always run. The attribute line passes only when the
        adversary who knows the algorithm is among them.
    params:
        Per adversary keyword parameters, e.g. ``{"replay": {"worlds": 2000}}`` (default:
        each adversary's own, e.g. :data:`.attacks.adversary.DEFAULT_WORLDS`).
    on_step:
        Called with each adversary's name before it runs (progress display).
    """
    from .attacks.awareness import awareness
    from .attacks.baseline import release_model
    from .attacks.registry import adversaries as registry, make_adversary
    from .progress import track

    t0 = time.perf_counter()
    if max_risk is not None and not (0.0 < float(max_risk) <= 1.0):
        raise ParameterError(f"max_risk={max_risk} must be in (0, 1]", parameter="max-risk", value=max_risk)
    if max_reid_risk is not None and not (0.0 < float(max_reid_risk) <= 1.0):
        raise ParameterError(f"max_reid_risk={max_reid_risk} must be in (0, 1]", parameter="max-reid-risk",
                             value=max_reid_risk)
    reid_kw = dict((params or {}).get("reidentification") or {})
    size = reid_kw.get("population_size")
    if size is not None and float(size) < release.n_published:  # bad input, not a risk: exit 2
        raise ParameterError(f"--population-size {size:g} is below the {release.n_published} published records: the "
                             "population must contain the data", parameter="population-size", value=size)
    model = release_model(release)
    atgt = attribute_target(model, max_risk)
    reid, reid_source = identity_target(model, max_reid_risk)
    ptarget = atgt.posterior if atgt.posterior is not None else (1.0 if atgt.certainty else None)
    pkind = "certainty" if atgt.posterior is None and atgt.certainty else "posterior"
    params = dict(params or {})
    names = (list(dict.fromkeys(["baseline", *adversaries, "reidentification"])) if adversaries
             else list(registry()))
    aware_name, why = awareness(release, params)
    aware = {"adversary": aware_name, "reason": why}
    findings: list[Finding] = []
    results: dict[str, Any] = {}
    plan = []
    for name in names:
        kw = dict(params.get(name, {}))
        if name == "linkage" and atgt.posterior is not None:  # the post-linkage ℓ of the target
            kw.setdefault("l", 1.0 / atgt.posterior)
        adv = make_adversary(name, **kw)
        applies = adv.applies_to(release)
        if not applies:
            if adversaries and name in adversaries:  # asked for by name: say it does not fit
                findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, False, applies.reason))
            continue
        missing = adv.missing_knowledge(original=original, earlier=earlier)
        if missing:
            if "earlier" in missing and not (adversaries and name in adversaries):
                continue  # no earlier releases: nothing to link with
            findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, True, applies.reason,
                                    error=f"needs the {missing[0]} table (--original)",
                                    knows_algorithm=adv.name == aware["adversary"]))
            continue
        plan.append((adv, applies))
    # one bar over the adversaries (with an ETA) on a terminal; the long ones draw their own
    # bar inside it (units, classes, groups)
    for adv, applies in track(plan, "certificate: adversaries"):
        if on_step is not None:
            on_step(adv.name)
        identity = adv.disclosure == "identity"
        t1 = time.perf_counter()
        try:
            result = adv.run(release, original=original, earlier=earlier)
        except OpenbookError as exc:  # e.g. a state space beyond every method: unresolved, fails
            findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, True, applies.reason,
                                    error=str(exc), seconds=round(time.perf_counter() - t1, 3),
                                    knows_algorithm=adv.name == aware["adversary"],
                                    target=reid if identity else ptarget,
                                    target_kind="re-identification" if identity else pkind))
            continue
        findings.append(_finding_from(
            adv, result, reid if identity else ptarget, time.perf_counter() - t1, applies.reason,
            baseline=results.get("baseline"), knows=adv.name == aware["adversary"],
            target_kind="re-identification" if identity else pkind,
            distance_target=None if identity else atgt.distance, release=release, model=model))
        results[adv.name] = result
    cert = Certificate(verdict=FAIL, target=atgt.posterior, target_source=atgt.source, findings=findings,
                       knowledge={"original": original is not None, "earlier_releases": len(earlier),
                                  "max_reid_risk": max_reid_risk, "identity_target": reid,
                                  "attribute_target": atgt.to_dict()},
                       seconds=time.perf_counter() - t0, results=results, aware=aware)
    cert.lines = certificate_lines(findings, atgt, reid, reid_source, aware_name, cert.unaware())
    cert.verdict = verdict_of(ln.passes for ln in cert.lines)
    return cert


def refusal(cert: Certificate, *, api: bool = False) -> RiskError:
    """The one-line refusal of a failing certificate: the line that fails first (identity before
    attribute), the adversary, how many are above the target, the worst figure (beside the
    baseline's), the unresolved people, what else failed, and what to do — in the CLI's flags,
    or (``api``) the Python API's keywords. Identity and attribute figures are never compared
    in one sentence."""
    worst = cert.worst()
    parts = []
    unaware = cert.unaware()
    if unaware and (worst is None or worst.disclosure != "identity"):
        parts.append(f"not certified against an adversary who knows the algorithm: {unaware}")
    if worst is None:  # only the algorithm-aware adversary is missing: name what did run
        ran = [f for f in cert.findings if f.ran and f.disclosure == "attribute"]
        best = max(ran, key=lambda f: f.max_posterior if f.max_posterior is not None else -1.0, default=None)
        if best is not None:
            parts.append(best.what())
    else:
        parts.append(worst.what())
        others = [f for f in cert.failing() if f is not worst]
        if others:
            parts.append("also failing: " + ", ".join(
                (f"{f.adversary} ({'identity' if f.disclosure == 'identity' else 'sensitive value'}: "
                 f"{f.n_above} above, {f.n_unresolved} unresolved)") if f.ran
                else f"{f.adversary} (could not run)" for f in others))
    if not parts:
        parts.append("the certificate failed")
    identity = worst is not None and worst.disclosure == "identity"
    if identity:
        remedy = ("generalize the QIs further — the default algorithm, generalized-anatomy, publishes QI classes "
                  "of at least 1/target records — or accept the risk explicitly with "
                  + ("max_reid_risk=1" if api else "--max-reid-risk 1"))
    else:
        remedy = ("choose another algorithm (the default, generalized-anatomy, is certified by construction), "
                  + ("max_risk=R" if api else "--max-risk R") + " to change the target")
    if api:
        todo = f"no release was returned ({remedy}, or certify=False)"
    else:
        todo = f"nothing was written ({remedy}, or --no-certify)"
    return RiskError(f"refusing to write the release: {'; '.join(parts)}; {todo}",
                     adversary=None if worst is None else worst.adversary,
                     n_people=0 if worst is None else (worst.n_above or 0) + (worst.n_unresolved or 0),
                     worst=None if worst is None else worst.max_posterior)


def certify_release(release: Any, *, original: Any, earlier: Sequence[Any] = (), max_risk: float | None = None,
                    max_reid_risk: float | None = None, enabled: bool = True, enforce: bool = True,
                    params: Mapping[str, Mapping[str, Any]] | None = None,
                    on_step: Callable[[str], None] | None = None, api: bool = False) -> Certificate | None:
    """Certify ``release`` before it is written and record the certificate in its sidecar
    (``meta["certificate"]``); with ``enforce`` a failing certificate raises
    :class:`RiskError` (exit code 3) and nothing is written. ``enabled=False``
    (``--no-certify``) records that the release was not certified. ``api``: the refusal
    names the Python API's keywords rather than the CLI's flags."""
    if not enabled:
        release.meta["certificate"] = skipped("certification skipped by the publisher (--no-certify)")
        return None
    cert = certify(release, original=original, earlier=earlier, max_risk=max_risk, max_reid_risk=max_reid_risk,
                   params=params, on_step=on_step)
    release.meta["certificate"] = cert.to_dict()
    if enforce and cert.verdict == FAIL:
        raise refusal(cert, api=api)
    return cert
