"""The release certificate: every adversary that applies, run before a release is written,
and a verdict a publisher can act on.

openbook's promise is that a release stays private against an adversary who knows the
algorithm (paper 000 §2.4; paper 001 Assumption 3). ``anonymize`` therefore does not stop at
the syntactic model check (:mod:`openbook.release.verify`): :func:`certify` runs every
registered adversary (:mod:`openbook.attacks.adversary`) whose model fits the release and
whose knowledge is at hand — the replay adversary for GG/RGG/SG/Mondrian/full-domain, exact
credibility for minimality-following releases, worst-case background knowledge for
ART/Injector, the eligibility attack after a skew step, linkage when earlier releases are
given, and always the baseline — and records, per adversary:

* the **max posterior**, an upper bound: a sampled posterior counts with three standard
  errors added (:meth:`AttackResult.bound`);
* how many people exceed the **target** (``--max-risk``; default the model's ``1/ℓ``, or
  ``α`` of (α,k)-anonymity), and how many are **unresolved** — which count as failing,
  never as safe;
* how many **absent** people it reasoned about (absence is information, :mod:`.attacks.absence`);
* the method (exact / sampled) and the seconds it took.

Beside every adversary's max posterior the certificate records the **baseline's** max
posterior over the same people (what the release alone tells): the difference is what the
adversary's knowledge adds. Neither bounds the other person by person — an adversary who
knows the algorithm can be *less* sure than the baseline about some people — so nothing is
taken as a maximum of the two.

The **verdict** is ``pass`` when an adversary that knows the release's algorithm ran
(:func:`.attacks.awareness.awareness`: the replay for GG, RGG, SG, Mondrian, full-domain,
the Anatomy family with no base, small full-domain searches), every adversary that applies
ran, none put anyone above the target and none left anyone unresolved; ``fail`` otherwise —
in particular for an algorithm no adversary knows (MASK, ART, Injector, anatomization of an
SA-dependent base, a release that records no algorithm): unknown is not safe. ``no target``
when the model promises no posterior bound and no ``--max-risk`` was given: then only the
baseline's figures are recorded (what the model alone lets anyone learn), unless
adversaries are named. The certificate holds aggregate figures only — nothing per person,
nothing about the true SA values (the sidecar is public).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .attacks.base import TOL
from .models.promise import promised_l
from .errors import OpenbookError, ParameterError, RiskError

PASS, FAIL, NO_TARGET, SKIPPED = "pass", "fail", "no target", "not certified"


@dataclass
class Finding:
    """One adversary's figures against one release (JSON-able)."""

    adversary: str
    title: str
    paper: str
    disclosure: str
    applies: bool
    reason: str
    ran: bool = False
    target: float | None = None
    max_posterior: float | None = None
    #: people considered, absent among them (``None`` when read from a sidecar that does
    #: not publish them: they count people who were not published, docs/release-files.md)
    n_people: int | None = None
    n_absent: int | None = None
    n_above: int = 0
    n_unresolved: int = 0
    method: str = ""
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: the baseline adversary's max posterior over the people this adversary considered
    baseline_max_posterior: float | None = None
    #: this adversary's posterior is the one of an adversary who knows the algorithm
    knows_algorithm: bool = False

    @property
    def passes(self) -> bool:
        if not self.applies:
            return True
        if not self.ran:
            return False
        return self.n_unresolved == 0 and self.n_above == 0

    def line(self) -> str:
        """One line for the terminal and the refusal message."""
        if not self.applies:
            return f"{self.adversary}: does not apply ({self.reason})"
        if not self.ran:
            return f"{self.adversary}: not run ({self.error or self.reason})"
        mp = "n/a" if self.max_posterior is None else f"{self.max_posterior:.4g}"
        tgt = "" if self.target is None else f" vs target {self.target:.4g}"
        base = ("" if self.baseline_max_posterior is None or self.adversary == "baseline"
                else f" (baseline {self.baseline_max_posterior:.4g})")
        of = "" if self.n_people is None else f" of {self.n_people}"
        above, unres = ("some" if n is None else n for n in (self.n_above, self.n_unresolved))  # None: not published
        return (f"{self.adversary}: max posterior {mp}{base}{tgt}; {above}{of} people above, "
                f"{unres} unresolved ({self.method}, {self.seconds:.2f} s)")

    def what(self) -> str:
        """What this adversary found, in one clause: the people above the target, the worst
        posterior (beside the baseline's), the unresolved people (the refusal's words)."""
        if not self.ran:
            return f"the {self.adversary} adversary could not run ({self.error or self.reason})"
        mp = "unknown" if self.max_posterior is None else f"{self.max_posterior:.4g}"
        tgt = "the target" if self.target is None else f"{self.target:.4g}"
        of = "" if self.n_people is None else f" of {self.n_people}"
        out = (f"the {self.adversary} adversary puts {'some' if self.n_above is None else self.n_above}{of} people "
               f"above {tgt} "
               f"(worst posterior {mp})")
        if self.n_unresolved or self.n_unresolved is None:
            out += f" and leaves {self.n_unresolved or 'some'} unresolved (unknown is not safe)"
        if self.baseline_max_posterior is not None and self.adversary != "baseline":
            out += f"; the baseline's worst posterior for them is {self.baseline_max_posterior:.4g}"
        return out


@dataclass
class Certificate:
    """Every finding and the verdict (module docstring)."""

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

    def failing(self) -> list[Finding]:
        return [f for f in self.findings if not f.passes]

    def unaware(self) -> str | None:
        """Why the certificate lacks an adversary who knows the algorithm (``None``: it has
        one, it ran, or no posterior target is certified)."""
        if self.target is None or not self.aware:
            return None
        name = self.aware.get("adversary")
        if name is None:
            return f"no adversary knows the release's algorithm ({self.aware.get('reason', '')})"
        if not any(f.adversary == name and f.ran for f in self.findings):
            return f"the adversary who knows the algorithm ({name}) did not run"
        return None

    def headline(self) -> str:
        if self.verdict == PASS:
            ran = [f"{f.adversary} (target {f.target:.4g})" for f in self.findings if f.ran and f.target is not None]
            aware = self.aware.get("adversary") if self.aware else None
            return (f"pass: no adversary puts anyone above its target: {', '.join(ran)}"
                    + (f"; {aware} knows the algorithm" if aware else ""))
        if self.verdict == NO_TARGET:
            return "no target: the model promises no posterior bound (give --max-risk to certify against one)"
        parts = []
        unaware = self.unaware()
        if unaware:
            parts.append(f"not certified against the algorithm: {unaware}")
        worst = self.worst()
        if worst is not None:
            parts.append(worst.line())
        return "fail: " + ("; ".join(parts) or "an adversary that applies could not run")

    def worst(self) -> Finding | None:
        """The failing finding to name first: the highest posterior among those that ran
        (then the most people above the target and unresolved), else one that could not run."""
        bad = self.failing()
        if not bad:
            return None
        return max(bad, key=lambda f: (f.ran, f.max_posterior if f.max_posterior is not None else -1.0,
                                       f.n_above or 0, f.n_unresolved or 0))

    def to_pandas(self) -> Any:
        """One row per adversary: what it found (the certificate's findings as a table)."""
        import pandas as pd

        return pd.DataFrame([asdict(f) for f in self.findings])

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "target": self.target, "target_source": self.target_source,
                "headline": self.headline(), "knowledge": dict(self.knowledge),
                "algorithm_aware": dict(self.aware),
                "seconds": round(self.seconds, 3), "adversaries": [asdict(f) for f in self.findings]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Certificate":
        names = set(Finding.__dataclass_fields__)
        findings = [Finding(**{k: v for k, v in f.items() if k in names}) for f in d.get("adversaries", [])]
        return cls(verdict=d["verdict"], target=d.get("target"), target_source=d.get("target_source", ""),
                   findings=findings, knowledge=dict(d.get("knowledge") or {}), seconds=float(d.get("seconds", 0.0)),
                   aware=dict(d.get("algorithm_aware") or {}))


def skipped(reason: str) -> dict[str, Any]:
    """The sidecar record of a release written without certification (``--no-certify``)."""
    return {"verdict": SKIPPED, "reason": reason, "adversaries": []}


def model_target(model: Any) -> float | None:
    """The posterior bound a model promises: ``α`` of (α,k)-anonymity, ``1/ℓ`` of every
    ℓ-diversity variant (for distinct/entropy ℓ the *certificate* holds the release to it —
    the syntactic model alone does not bound a posterior), ``None`` for k-anonymity,
    t-closeness and (k,e)-anonymity."""
    l = promised_l(model)
    return None if l is None else 1.0 / l


def _finding_from(adv: Any, result: Any, target: float | None, seconds: float, reason: str,
                  baseline: Any = None, knows: bool = False) -> Finding:
    bound = result.max_bound()
    unresolved = result.unresolved_mask()
    published = result.group >= 0
    considered = published | ~np.isnan(bound) | unresolved
    evaluated = considered & ~unresolved & ~np.isnan(bound)
    mx = float(np.nanmax(bound[evaluated])) if evaluated.any() else None
    above = int((evaluated & (bound > target + TOL)).sum()) if target is not None else 0
    sampled = result.stderr is not None and bool(np.nanmax(np.where(evaluated[:, None], result.stderr, 0.0),
                                                         initial=0.0) > 0)
    method = "sampled (3-SE bound)" if sampled else "exact"
    return Finding(adversary=adv.name, title=adv.title, paper=adv.paper, disclosure=adv.disclosure, applies=True,
                   reason=reason, ran=True, target=target, max_posterior=mx,
                   n_people=int(considered.sum()), n_absent=int((considered & ~published).sum()), n_above=above,
                   n_unresolved=int(unresolved.sum()), method=method, seconds=round(seconds, 3), params=adv.params(),
                   baseline_max_posterior=_baseline_beside(baseline, result, evaluated), knows_algorithm=knows)


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


def certify(release: Any, *, original: Any = None, earlier: Sequence[Any] = (), max_risk: float | None = None,
            max_reid_risk: float | None = None, adversaries: Sequence[str] | None = None,
            params: Mapping[str, Mapping[str, Any]] | None = None,
            on_step: Callable[[str], None] | None = None) -> Certificate:
    """Run every adversary that applies to ``release`` (or the named ones) and judge.

    Parameters
    ----------
    original:
        The original table (:class:`~openbook.data.table.EncodedTable`): every individual's
        QIs (the adversary's knowledge) and their SA (the auditor's truth).
    earlier:
        Earlier releases of the same population (the linkage adversary).
    max_risk:
        The target posterior; default the model's (:func:`model_target`).
    max_reid_risk:
        The target of identity disclosure (the re-identification adversary runs only
        with it, or when named): prosecutor risk, or journalist risk when
        ``params["reidentification"]`` gives the population.
    adversaries:
        Names to run (default: every registered adversary that applies); the baseline
        always runs, for the figures beside every other adversary's. A posterior target is
        certified only when the adversary who knows the algorithm is among them.
    params:
        Per adversary keyword parameters, e.g. ``{"replay": {"worlds": 2000}}`` (default:
        each adversary's own, e.g. :data:`.attacks.adversary.DEFAULT_WORLDS`).
    on_step:
        Called with each adversary's name before it runs (progress display).
    """
    from .attacks.adversary import adversaries as registry
    from .attacks.adversary import make_adversary
    from .attacks.baseline import release_model
    from .attacks.awareness import awareness
    from .progress import track

    t0 = time.perf_counter()
    if max_risk is not None and not (0.0 < float(max_risk) <= 1.0):
        raise ParameterError(f"max_risk={max_risk} must be in (0, 1]", parameter="max-risk", value=max_risk)
    if max_reid_risk is not None and not (0.0 < float(max_reid_risk) <= 1.0):
        raise ParameterError(f"max_reid_risk={max_reid_risk} must be in (0, 1]", parameter="max-reid-risk",
                             value=max_reid_risk)
    model = release_model(release)
    target = float(max_risk) if max_risk is not None else model_target(model)
    source = "--max-risk" if max_risk is not None else ("the model's 1/ℓ" if target is not None else "none")
    params = dict(params or {})
    names = list(dict.fromkeys(["baseline", *adversaries])) if adversaries else list(registry())
    if target is None and not adversaries:
        # no target, no verdict to reach: the baseline's figures are recorded (what the model
        # alone lets anyone learn); the algorithm-aware adversaries run when asked by name or
        # against a target (--max-risk)
        names = ["baseline", "reidentification"]
    aware_name, why = awareness(release, params)
    aware = {"adversary": aware_name, "reason": why}
    findings: list[Finding] = []
    results: dict[str, Any] = {}
    plan = []
    for name in names:
        kw = dict(params.get(name, {}))
        if name == "linkage" and target is not None:  # the post-linkage ℓ of the target
            kw.setdefault("l", 1.0 / target)
        adv = make_adversary(name, **kw)
        goal = target if adv.disclosure == "attribute" else max_reid_risk
        if adv.disclosure != "attribute" and max_reid_risk is None and not adversaries:
            continue  # identity risk is certified against its own target (--max-reid-risk)
        applies = adv.applies_to(release)
        if not applies:
            if adversaries:  # asked for by name: say it does not fit
                findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, False, applies.reason))
            continue
        missing = adv.missing_knowledge(original=original, earlier=earlier)
        if missing:
            if "earlier" in missing and not adversaries:
                continue  # no earlier releases: nothing to link with
            findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, True, applies.reason,
                                    error=f"needs the {missing[0]} table (--original)",
                                    knows_algorithm=adv.name == aware["adversary"]))
            continue
        plan.append((adv, goal, applies))
    # one bar over the adversaries (with an ETA) on a terminal; the long ones draw their own
    # bar inside it (units, classes, groups)
    for adv, goal, applies in track(plan, "certificate: adversaries"):
        if on_step is not None:
            on_step(adv.name)
        t1 = time.perf_counter()
        try:
            result = adv.run(release, original=original, earlier=earlier)
        except OpenbookError as exc:  # e.g. a state space beyond every method: unresolved, fails
            findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, True, applies.reason,
                                    error=str(exc), seconds=round(time.perf_counter() - t1, 3),
                                    knows_algorithm=adv.name == aware["adversary"]))
            continue
        findings.append(_finding_from(adv, result, goal, time.perf_counter() - t1, applies.reason,
                                      baseline=results.get("baseline"),
                                      knows=adv.name == aware["adversary"]))
        results[adv.name] = result
    cert = Certificate(verdict=NO_TARGET, target=target, target_source=source, findings=findings,
                       knowledge={"original": original is not None, "earlier_releases": len(earlier),
                                  "max_reid_risk": max_reid_risk},
                       seconds=time.perf_counter() - t0, results=results, aware=aware)
    if target is not None or max_reid_risk is not None:
        judged = [f for f in findings if f.target is not None or not f.ran]
        ok = all(f.passes for f in judged) and cert.unaware() is None
        cert.verdict = PASS if ok else FAIL
    return cert


def refusal(cert: Certificate, *, api: bool = False) -> RiskError:
    """The one-line refusal of a failing certificate: the adversary, how many people are
    above the target, the worst posterior (beside the baseline's), the unresolved people,
    what else failed, and what to do — in the CLI's flags, or (``api``) the Python API's
    keywords."""
    worst = cert.worst()
    parts = []
    unaware = cert.unaware()
    if unaware:
        parts.append(f"not certified against an adversary who knows the algorithm: {unaware}")
    if worst is None:  # only the algorithm-aware adversary is missing: name what did run
        ran = [f for f in cert.findings if f.ran and f.disclosure == "attribute"]
        worst = max(ran, key=lambda f: f.max_posterior if f.max_posterior is not None else -1.0, default=None)
        if worst is not None:
            parts.append(worst.what())
    else:
        parts.append(worst.what())
        others = [f for f in cert.failing() if f is not worst]
        if others:
            parts.append("also failing: " + ", ".join(
                f"{f.adversary} ({f.n_above} above, {f.n_unresolved} unresolved)" if f.ran
                else f"{f.adversary} (could not run)" for f in others))
    if not parts:
        parts.append("the certificate failed")
    identity = worst is not None and worst.disclosure == "identity"
    if api:
        flag = "max_reid_risk=R" if identity else "max_risk=R"
        todo = f"no release was returned (choose another algorithm=, {flag} to change the target, or certify=False)"
    else:
        flag = "--max-reid-risk" if identity else "--max-risk"
        todo = f"nothing was written (choose another algorithm, {flag} R to change the target, or --no-certify)"
    return RiskError(f"refusing to write the release: {'; '.join(parts)}; {todo}",
                     adversary=None if worst is None else worst.adversary,
                     n_people=0 if worst is None else worst.n_above + worst.n_unresolved,
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
