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
    rows:
        The compact form (issue 25: a wide SA domain): when given, ``posterior`` (and
        ``stderr``) passed in hold one row per *distinct* posterior — a class, a replay cell —
        and ``rows[i]`` is the row of tuple ``i`` (``-1``: NaN). Everybody in a class shares
        one row, so memory is rows + classes × targets, never tuples × targets. The
        summaries (:meth:`max_posterior`, :meth:`max_bound`, :meth:`unresolved_mask`) read
        the compact form; reading ``posterior`` or ``stderr`` (or assigning either) expands
        it into the per-tuple matrices once, for good.
    """

    def __init__(self, adversary: str, posterior: np.ndarray, targets: list[str], group: np.ndarray,
                 l: float | None = None, stderr: np.ndarray | None = None, sensitive: np.ndarray | None = None,
                 unresolved: np.ndarray | None = None, group_info: pd.DataFrame | None = None,
                 notes: dict[str, Any] | None = None, rows: np.ndarray | None = None) -> None:
        self.adversary = adversary
        self.targets = targets
        self.group = np.asarray(group, dtype=np.int64)
        self.l = l
        self.sensitive = sensitive
        self.unresolved = unresolved
        self.group_info = group_info
        self.notes: dict[str, Any] = {} if notes is None else notes
        post = np.asarray(posterior, dtype=np.float64)
        if post.ndim == 1:
            post = post[:, None]
        self._post: np.ndarray | None = post
        self._se: np.ndarray | None = None if stderr is None else np.asarray(stderr, dtype=np.float64)
        self.rows: np.ndarray | None = None
        if rows is not None:
            # a copy: ``rows`` is often the release's own (cached) class of each row, and
            # :meth:`set_rows` writes into it
            self.rows = np.array(rows, dtype=np.int64)
            if self.rows.shape != self.group.shape:
                raise ValueError(f"rows has shape {self.rows.shape}, expected ({self.group.size},)")
            if self.rows.size and (self.rows.max(initial=-1) >= post.shape[0] or self.rows.min() < -1):
                raise ValueError(f"rows point outside the {post.shape[0]} posterior rows")
        n_rows = post.shape[0] if rows is not None else self.group.size
        if post.shape != (n_rows, len(self.targets)):
            raise ValueError(f"posterior has shape {post.shape}, expected ({n_rows}, {len(self.targets)})")
        if self._se is not None and self._se.shape != post.shape:
            raise ValueError(f"stderr has shape {self._se.shape}, expected {post.shape}")

    # -- the per-tuple matrices (expanded from the compact form on first use) -------------
    @property
    def compact(self) -> bool:
        """Whether the posteriors are held one row per class (``rows``), not per tuple."""
        return self.rows is not None

    def compact_parts(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """The compact form: ``(posterior rows, their standard errors, row of each tuple)``."""
        if self.rows is None:
            raise ValueError("this result holds one posterior row per tuple (not compact)")
        assert self._post is not None
        return self._post, self._se, self.rows

    def _expand(self) -> None:
        if self.rows is None:
            return
        rows, self.rows = self.rows, None
        ok = rows >= 0
        assert self._post is not None
        post = np.full((rows.size, self._post.shape[1]), np.nan)
        post[ok] = self._post[rows[ok]]
        if self._se is not None:
            se = np.zeros_like(post)
            se[ok] = self._se[rows[ok]]
            self._se = se
        self._post = post

    @property
    def posterior(self) -> np.ndarray:
        self._expand()
        assert self._post is not None
        return self._post

    @posterior.setter
    def posterior(self, value: np.ndarray) -> None:
        self._expand()
        self._post = np.asarray(value, dtype=np.float64)

    @property
    def stderr(self) -> np.ndarray | None:
        self._expand()
        return self._se

    @stderr.setter
    def stderr(self, value: np.ndarray | None) -> None:
        self._expand()
        self._se = None if value is None else np.asarray(value, dtype=np.float64)

    def _per_tuple(self, per_row: np.ndarray) -> np.ndarray:
        """A per-row figure of the compact form placed on the tuples (NaN where ``rows`` is -1)."""
        assert self.rows is not None
        out = np.full(self.rows.size, np.nan)
        ok = self.rows >= 0
        out[ok] = per_row[self.rows[ok]]
        return out

    def set_rows(self, mask: np.ndarray, posterior: np.ndarray, stderr: np.ndarray | None = None) -> None:
        """Give the tuples of ``mask`` a posterior (one row, or one per tuple) and standard
        errors (``None``: exact, zero) — without expanding the compact form (absent people,
        issue 25)."""
        mask = np.asarray(mask, dtype=bool)
        n = int(mask.sum())
        if n == 0:
            return
        p = np.broadcast_to(np.asarray(posterior, dtype=np.float64), (n, len(self.targets)))
        se = None if stderr is None else np.broadcast_to(np.asarray(stderr, dtype=np.float64), p.shape)
        if self.rows is None:
            assert self._post is not None
            self._post[mask] = p
            if se is not None and self._se is None:
                self._se = np.zeros_like(self._post)
            if self._se is not None:
                self._se[mask] = 0.0 if se is None else se
            return
        assert self._post is not None
        base = self._post.shape[0]
        self._post = np.concatenate([self._post, p])
        if se is not None and self._se is None:
            self._se = np.zeros((base, p.shape[1]))
        if self._se is not None:
            self._se = np.concatenate([self._se, np.zeros_like(p) if se is None else se])
        self.rows[mask] = base + np.arange(n)

    @property
    def n_tuples(self) -> int:
        return int(self.group.size)

    def max_posterior(self) -> np.ndarray:
        """Largest posterior over the targets, per tuple (NaN where not evaluated). One pass,
        no copy of the posteriors (``fmax`` skips NaN; all-NaN rows stay NaN)."""
        p = self._post
        assert p is not None
        if p.shape[1] == 0:
            return np.full(self.group.size, np.nan)
        out = np.fmax.reduce(p, axis=1)
        return out if self.rows is None else self._per_tuple(out)

    def bound(self) -> np.ndarray:
        """Upper bound of each posterior: the posterior itself where exact, plus three
        standard errors where sampled, clipped to 1 (NaN stays NaN)."""
        if self.stderr is None:
            return self.posterior.copy()
        se = np.where(np.isfinite(self.stderr), self.stderr, 1.0)
        return np.minimum(self.posterior + 3.0 * se, 1.0)  # type: ignore[no-any-return]

    def max_bound(self) -> np.ndarray:
        """Largest :meth:`bound` over the targets, per tuple (NaN where not evaluated) —
        computed in blocks of rows, so a wide SA domain never holds a second copy of the
        posteriors (issue 25: 28,000 people × 6,000 values)."""
        p, stderr = self._post, self._se
        assert p is not None
        if p.shape[1] == 0:
            return np.full(self.group.size, np.nan)
        if stderr is None:
            out = np.fmax.reduce(p, axis=1)
        else:
            out = np.empty(p.shape[0])
            step = max(1, (1 << 22) // p.shape[1])
            for a in range(0, p.shape[0], step):
                se = stderr[a:a + step]
                b = np.minimum(p[a:a + step] + 3.0 * np.where(np.isfinite(se), se, 1.0), 1.0)
                out[a:a + step] = np.fmax.reduce(b, axis=1)
        return out if self.rows is None else self._per_tuple(out)

    def max_stderr(self, mask: np.ndarray) -> float | None:
        """The largest standard error of the tuples of ``mask`` (``None`` when exact)."""
        if self._se is None:
            return None
        mask = np.asarray(mask, dtype=bool)
        sel = self._se[mask] if self.rows is None else self._se[np.unique(self.rows[mask & (self.rows >= 0)])]
        return float(np.nanmax(sel)) if sel.size and not np.isnan(sel).all() else float("nan")

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
    se = result.max_stderr(evaluated) if evaluated.any() else None
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
