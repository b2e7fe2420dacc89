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

The **verdict** is ``pass`` when every adversary that applies ran, none put anyone above
the target and none left anyone unresolved; ``fail`` otherwise; ``no target`` when the
model promises no posterior bound and no ``--max-risk`` was given: then only the baseline's
figures are recorded (what the model alone lets anyone learn), unless adversaries are named. The certificate holds aggregate figures only — nothing per person, nothing about
the true SA values (the sidecar is public).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .attacks.base import TOL, model_l
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
    n_people: int = 0
    n_absent: int = 0
    n_above: int = 0
    n_unresolved: int = 0
    method: str = ""
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

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
        return (f"{self.adversary}: max posterior {mp}{tgt}; {self.n_above} of {self.n_people} people above, "
                f"{self.n_unresolved} unresolved ({self.method}, {self.seconds:.2f} s)")


@dataclass
class Certificate:
    """Every finding and the verdict (module docstring)."""

    verdict: str
    target: float | None
    target_source: str
    findings: list[Finding]
    knowledge: dict[str, Any]
    seconds: float = 0.0
    #: each adversary's per-person result (in memory only: the report draws them; never
    #: written — the sidecar is public)
    results: dict[str, Any] = field(default_factory=dict, repr=False)

    def failing(self) -> list[Finding]:
        return [f for f in self.findings if not f.passes]

    def headline(self) -> str:
        if self.verdict == PASS:
            ran = [f"{f.adversary} (target {f.target:.4g})" for f in self.findings if f.ran and f.target is not None]
            return f"pass: no adversary puts anyone above its target: {', '.join(ran)}"
        if self.verdict == NO_TARGET:
            return "no target: the model promises no posterior bound (give --max-risk to certify against one)"
        worst = self.worst()
        return "fail: " + (worst.line() if worst is not None else "an adversary that applies could not run")

    def worst(self) -> Finding | None:
        """The failing finding to name first: unresolved or above target, highest posterior."""
        bad = self.failing()
        if not bad:
            return None
        return max(bad, key=lambda f: (f.ran, f.n_unresolved > 0, f.max_posterior or 0.0))

    def to_pandas(self) -> Any:
        """One row per adversary: what it found (the certificate's findings as a table)."""
        import pandas as pd

        return pd.DataFrame([asdict(f) for f in self.findings])

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "target": self.target, "target_source": self.target_source,
                "headline": self.headline(), "knowledge": dict(self.knowledge),
                "seconds": round(self.seconds, 3), "adversaries": [asdict(f) for f in self.findings]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Certificate":
        names = set(Finding.__dataclass_fields__)
        findings = [Finding(**{k: v for k, v in f.items() if k in names}) for f in d.get("adversaries", [])]
        return cls(verdict=d["verdict"], target=d.get("target"), target_source=d.get("target_source", ""),
                   findings=findings, knowledge=dict(d.get("knowledge") or {}), seconds=float(d.get("seconds", 0.0)))


def skipped(reason: str) -> dict[str, Any]:
    """The sidecar record of a release written without certification (``--no-certify``)."""
    return {"verdict": SKIPPED, "reason": reason, "adversaries": []}


def model_target(model: Any) -> float | None:
    """The posterior bound a model promises: ``α`` of (α,k)-anonymity, ``1/ℓ`` of every
    ℓ-diversity variant (for distinct/entropy ℓ the *certificate* holds the release to it —
    the syntactic model alone does not bound a posterior), ``None`` for k-anonymity,
    t-closeness and (k,e)-anonymity."""
    l = model_l(model)
    return None if l is None else 1.0 / l


def _finding_from(adv: Any, result: Any, target: float | None, seconds: float, reason: str) -> Finding:
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
                   n_unresolved=int(unresolved.sum()), method=method, seconds=round(seconds, 3), params=adv.params())


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
        Names to run (default: every registered adversary that applies).
    params:
        Per adversary keyword parameters, e.g. ``{"replay": {"worlds": 2000}}``.
    on_step:
        Called with each adversary's name before it runs (progress display).
    """
    from .attacks.adversary import adversaries as registry
    from .attacks.adversary import make_adversary
    from .attacks.baseline import release_model

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
    names = list(adversaries) if adversaries else list(registry())
    if target is None and not adversaries:
        # no target, no verdict to reach: the baseline's figures are recorded (what the model
        # alone lets anyone learn); the algorithm-aware adversaries run when asked by name or
        # against a target (--max-risk)
        names = ["baseline", "reidentification"]
    findings: list[Finding] = []
    results: dict[str, Any] = {}
    for name in names:
        adv = make_adversary(name, **dict(params.get(name, {})))
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
                                    error=f"needs the {missing[0]} table (--original)"))
            continue
        if on_step is not None:
            on_step(name)
        t1 = time.perf_counter()
        try:
            result = adv.run(release, original=original, earlier=earlier)
        except OpenbookError as exc:  # e.g. a state space beyond every method: unresolved, fails
            findings.append(Finding(adv.name, adv.title, adv.paper, adv.disclosure, True, applies.reason,
                                    error=str(exc), seconds=round(time.perf_counter() - t1, 3)))
            continue
        findings.append(_finding_from(adv, result, goal, time.perf_counter() - t1, applies.reason))
        results[name] = result
    if target is None and max_reid_risk is None:
        verdict = NO_TARGET
    else:
        judged = [f for f in findings if f.target is not None or not f.ran]
        verdict = PASS if all(f.passes for f in judged) else FAIL
    return Certificate(verdict=verdict, target=target, target_source=source, findings=findings,
                       knowledge={"original": original is not None, "earlier_releases": len(earlier),
                                  "max_reid_risk": max_reid_risk},
                       seconds=time.perf_counter() - t0, results=results)


def refusal(cert: Certificate) -> RiskError:
    """The one-line refusal of a failing certificate: the adversary, how many people, the
    worst posterior, and what to do."""
    worst = cert.worst()
    if worst is None:
        return RiskError("refusing to write the release: the certificate failed")
    if not worst.ran:
        what = f"the {worst.adversary} adversary could not run ({worst.error or worst.reason})"
    elif worst.n_unresolved:
        what = (f"the {worst.adversary} adversary leaves {worst.n_unresolved} of {worst.n_people} people "
                f"unresolved (unknown is not safe)")
    else:
        what = (f"the {worst.adversary} adversary puts {worst.n_above} of {worst.n_people} people above "
                f"{worst.target:.4g} (worst posterior {worst.max_posterior:.4g})")
    flag = "--max-reid-risk" if worst.disclosure == "identity" else "--max-risk"
    return RiskError(f"refusing to write the release: {what}; nothing was written (choose another algorithm, "
                     f"{flag} R to change the target, or --no-certify)",
                     adversary=worst.adversary, n_people=worst.n_above or worst.n_unresolved,
                     worst=worst.max_posterior)


def certify_release(release: Any, *, original: Any, earlier: Sequence[Any] = (), max_risk: float | None = None,
                    max_reid_risk: float | None = None, enabled: bool = True, enforce: bool = True,
                    params: Mapping[str, Mapping[str, Any]] | None = None,
                    on_step: Callable[[str], None] | None = None) -> Certificate | None:
    """Certify ``release`` before it is written and record the certificate in its sidecar
    (``meta["certificate"]``); with ``enforce`` a failing certificate raises
    :class:`RiskError` (exit code 3) and nothing is written. ``enabled=False``
    (``--no-certify``) records that the release was not certified."""
    if not enabled:
        release.meta["certificate"] = skipped("certification skipped by the publisher (--no-certify)")
        return None
    cert = certify(release, original=original, earlier=earlier, max_risk=max_risk, max_reid_risk=max_reid_risk,
                   params=params, on_step=on_step)
    release.meta["certificate"] = cert.to_dict()
    if enforce and cert.verdict == FAIL:
        raise refusal(cert)
    return cert
