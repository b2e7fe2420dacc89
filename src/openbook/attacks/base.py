"""What every posterior-computing adversary returns, and the audit summary derived from it.

docs/design.md, "Posteriors, not verdicts": an attack returns, for every tuple (individual) it
considers, the adversary's posterior confidence that the tuple carries each *target* — an
SA value or a sensitive value set (paper 001 Definition 2, *credibility*) — with Monte-Carlo
standard errors where the posterior was sampled. The verdicts are derived from it:

* a tuple is **vulnerable** (paper 001 §7.1: *problematic*) when its largest posterior
  exceeds ``1/ℓ`` (paper 000 §2.4: the adversary learns more than the model promised);
  a tuple the adversary could not evaluate is **unresolved** and every share counts it as
  failing, never as safe (``vulnerable_fraction`` is the share *vulnerable or unresolved*);
* the **max risk** is the largest posterior as a multiple of ``1/ℓ`` (paper 000 §5: the
  ``e/ℓ`` bound is stated that way);
* the **average credibility of problematic tuples** (paper 001 Fig. 2(b), (d));
* **m-confidentiality** (paper 001 Definition 4): no posterior exceeds ``1/m``.

:class:`AttackResult` is shared by the baseline adversary (``attacks.baseline``), the exact
minimality adversary (``attacks.credibility``) and the algorithm-replay adversaries; the
summary is JSON-able (``AuditSummary.to_dict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError

# the ℓ a model promises is derived once, in openbook.models.promise; ``model_l`` stays importable
# here for the replay package until it imports promised_l itself
from ..models.promise import promised_l as model_l  # noqa: F401

#: posteriors within this of the threshold count as equal to it (float round-off)
TOL = 1e-12


@dataclass(eq=False)
class AttackResult:
    """Per-tuple posteriors of one adversary against one release.

    Attributes
    ----------
    adversary:
        Name of the adversary (``"baseline"``, ``"minimality"``, ``"replay"`` ...).
    posterior:
        ``(n_tuples, n_targets)`` float64: the adversary's probability that the tuple is
        linked to each target. ``NaN`` = the tuple is not published (suppressed) or the
        adversary could not evaluate it (see ``unresolved``).
    targets:
        Name of each target column: an SA value, or ``"set:NAME"`` for a sensitive set.
    group:
        Published class of each tuple (int64; ``-1`` = not published). For an adversary
        that works on individuals (who may sit in one of several classes under local
        recoding) it is the class the tuple is published in, as the auditor knows it.
        An *absent* person (``-1``) with a finite posterior is one whose absence the
        adversary reasons about (:mod:`.absence`); with NaN and not ``unresolved`` the
        adversary does not consider them.
    l:
        The ℓ whose ``1/ℓ`` bounds the posterior (from the release's model), or ``None``.
    stderr:
        Monte-Carlo standard errors, same shape as ``posterior``, or ``None`` (exact).
    sensitive:
        Boolean per tuple: does its true SA value belong to a target (known to the auditor
        only; ``None`` when the original SA is not available).
    unresolved:
        Boolean per tuple: the adversary could not compute this tuple's posterior (e.g. a
        state space over the exact-computation budget); such tuples are NaN and counted.
    group_info:
        Optional per-class facts (a DataFrame with one row per class: ``group`` and e.g.
        ``excluded_fraction``, ``consistent``), merged into the per-group detail.
    notes:
        JSON-able facts about the computation (knowledge used, assumptions, timings).
    """

    adversary: str
    posterior: np.ndarray
    targets: list[str]
    group: np.ndarray
    l: float | None = None
    stderr: np.ndarray | None = None
    sensitive: np.ndarray | None = None
    unresolved: np.ndarray | None = None
    group_info: pd.DataFrame | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.posterior = np.asarray(self.posterior, dtype=np.float64)
        if self.posterior.ndim == 1:
            self.posterior = self.posterior[:, None]
        self.group = np.asarray(self.group, dtype=np.int64)
        if self.posterior.shape != (self.group.size, len(self.targets)):
            raise ValueError(f"posterior has shape {self.posterior.shape}, expected "
                             f"({self.group.size}, {len(self.targets)})")

    @property
    def n_tuples(self) -> int:
        return int(self.group.size)

    def max_posterior(self) -> np.ndarray:
        """Largest posterior over the targets, per tuple (NaN where not evaluated). One pass,
        no copy of the posteriors (``fmax`` skips NaN; all-NaN rows stay NaN)."""
        p = self.posterior
        if p.shape[1] == 0:
            return np.full(p.shape[0], np.nan)
        return np.fmax.reduce(p, axis=1)

    def bound(self) -> np.ndarray:
        """Upper bound of each posterior: the posterior itself where exact, plus three
        standard errors where sampled, clipped to 1 (NaN stays NaN)."""
        if self.stderr is None:
            return self.posterior.copy()
        se = np.where(np.isfinite(self.stderr), self.stderr, 1.0)
        return np.minimum(self.posterior + 3.0 * se, 1.0)

    def max_bound(self) -> np.ndarray:
        """Largest :meth:`bound` over the targets, per tuple (NaN where not evaluated) —
        computed in blocks of rows, so a wide SA domain never holds a second copy of the
        posteriors (issue 25: 28,000 people × 6,000 values)."""
        p = self.posterior
        if p.shape[1] == 0:
            return np.full(p.shape[0], np.nan)
        if self.stderr is None:
            return np.fmax.reduce(p, axis=1)
        out = np.empty(p.shape[0])
        step = max(1, (1 << 22) // p.shape[1])
        for a in range(0, p.shape[0], step):
            se = self.stderr[a:a + step]
            b = np.minimum(p[a:a + step] + 3.0 * np.where(np.isfinite(se), se, 1.0), 1.0)
            out[a:a + step] = np.fmax.reduce(b, axis=1)
        return out

    def unresolved_mask(self) -> np.ndarray:
        """People the adversary could not evaluate: marked unresolved, or published with a
        NaN posterior. They count as failing, never as safe."""
        mx = self.max_posterior()
        out = (self.group >= 0) & np.isnan(mx)
        if self.unresolved is not None:
            out |= np.asarray(self.unresolved, dtype=bool)
        return out

    def frame(self) -> pd.DataFrame:
        """One row per tuple: group, the posterior of each target (and its standard error),
        the max, sensitivity (when known) — what ``--posteriors-out`` writes."""
        data: dict[str, Any] = {"tuple": np.arange(self.n_tuples), "group": self.group}
        for j, t in enumerate(self.targets):
            data[f"p[{t}]"] = self.posterior[:, j]
            if self.stderr is not None:
                data[f"se[{t}]"] = self.stderr[:, j]
        data["max_posterior"] = self.max_posterior()
        if self.sensitive is not None:
            data["sensitive"] = self.sensitive
        return pd.DataFrame(data)

    def summary(self, *, l: float | None = None, m: float | None = None) -> "AuditSummary":
        """The audit summary at threshold ``1/l`` (default: the result's ℓ) and the
        m-confidentiality verdict at ``1/m`` (default ``m = l``, as paper 001 §7)."""
        return summarize(self, l=l, m=m)


@dataclass
class AuditSummary:
    """Release-level verdicts derived from an :class:`AttackResult` (JSON-able)."""

    adversary: str
    l: float
    m: float
    n_tuples: int
    n_published: int
    n_absent_evaluated: int
    n_unresolved: int
    n_sensitive: int | None
    n_vulnerable: int
    #: vulnerable or unresolved: the people the audit cannot call safe
    n_failing: int
    #: ``n_failing`` over the people considered (unresolved count as failing)
    vulnerable_fraction: float
    vulnerable_sensitive_fraction: float | None
    vulnerable_per_sensitive: float | None
    max_posterior: float
    max_risk_multiple: float
    avg_credibility_problematic: float | None
    m_confidential: bool
    max_stderr: float | None
    per_group: pd.DataFrame
    notes: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, groups: int | None = 20) -> dict[str, Any]:
        """JSON-able dict; ``groups`` limits the per-group detail to the riskiest classes
        (``None`` = all)."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if k == "per_group":
                df = v.sort_values(["max_posterior", "group"], ascending=[False, True])
                df = df if groups is None else df.head(groups)
                out["per_group"] = [{c: _py(x) for c, x in row.items()} for row in df.to_dict("records")]
                out["n_groups"] = int(len(v))
                out["n_vulnerable_groups"] = int((v["n_vulnerable"] > 0).sum()) if len(v) else 0
            else:
                out[k] = _py(v) if not isinstance(v, dict) else {a: _py(b) for a, b in v.items()}
        return out


def _py(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return None if np.isnan(x) else x
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return [_py(v) for v in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [_py(v) for v in x]
    return x


def summarize(result: AttackResult, *, l: float | None = None, m: float | None = None) -> AuditSummary:
    """Derive the :class:`AuditSummary` (module docstring) from per-tuple posteriors."""
    l = result.l if l is None else l
    if l is None:
        raise ParameterError("the audit needs ℓ (the release records no ℓ-type model): pass l=",
                             parameter="l")
    l = float(l)
    if not l >= 1.0:
        raise ParameterError(f"l={l} must be >= 1", parameter="l", value=l)
    m = l if m is None else float(m)
    mx = result.max_posterior()
    published = result.group >= 0
    unresolved = result.unresolved_mask()
    absent_eval = ~published & ~np.isnan(mx) & ~unresolved
    evaluated = (published | absent_eval) & ~np.isnan(mx) & ~unresolved
    vuln = evaluated & (mx > 1.0 / l + TOL)
    n_pub = int(published.sum())
    n_v = int(vuln.sum())
    failing = vuln | unresolved
    n_fail = int(failing.sum())
    n_considered = int((evaluated | unresolved).sum())
    sens = None if result.sensitive is None else np.asarray(result.sensitive, dtype=bool) & published
    n_sens = None if sens is None else int(sens.sum())
    mmax = float(np.nanmax(mx[evaluated])) if evaluated.any() else float("nan")
    se = None
    if result.stderr is not None and evaluated.any():
        se = float(np.nanmax(result.stderr[evaluated]))
    # per group
    g = result.group[published]
    if g.size:
        n_groups = int(g.max()) + 1
        size = np.bincount(g, minlength=n_groups)
        nv = np.bincount(g, weights=vuln[published], minlength=n_groups).astype(np.int64)
        gmax = np.full(n_groups, -np.inf)
        ev_rows = evaluated[published]
        np.maximum.at(gmax, g[ev_rows], mx[published][ev_rows])
        gmax[np.isinf(gmax)] = np.nan
        per = pd.DataFrame({"group": np.arange(n_groups), "size": size, "n_vulnerable": nv,
                            "max_posterior": gmax})
        per = per[per["size"] > 0].reset_index(drop=True)
        if result.group_info is not None and len(result.group_info):
            per = per.merge(result.group_info, on="group", how="left")
    else:
        per = pd.DataFrame({"group": [], "size": [], "n_vulnerable": [], "max_posterior": []})
    return AuditSummary(
        adversary=result.adversary, l=l, m=m, n_tuples=result.n_tuples, n_published=n_pub,
        n_absent_evaluated=int(absent_eval.sum()),
        n_unresolved=int(unresolved.sum()), n_sensitive=n_sens, n_vulnerable=n_v, n_failing=n_fail,
        vulnerable_fraction=n_fail / n_considered if n_considered else 0.0,
        vulnerable_sensitive_fraction=(int((failing & sens).sum()) / n_sens if sens is not None and n_sens else None),
        vulnerable_per_sensitive=(n_fail / n_sens if n_sens else None),
        max_posterior=mmax, max_risk_multiple=mmax * l,
        avg_credibility_problematic=float(mx[vuln].mean()) if n_v else None,
        m_confidential=bool(not evaluated.any() or mmax <= 1.0 / m + TOL) and not unresolved.any(),
        max_stderr=se, per_group=per, notes=dict(result.notes),
    )
