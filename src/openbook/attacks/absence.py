"""Absence is information: the posterior of the people a release withholds.

The adversary of paper 000 §2.4 knows every individual's QI values, so it knows who is
*absent* from a release (no published class covers them), and, knowing the algorithm, it
knows the rule by which the algorithm suppresses people. When that rule depends on the SA,
absence alone is a disclosure (an ART release that withholds only sensitive tuples tells
everyone that the withheld are sensitive). This module computes the absent people's
posterior per target from the suppression rule in the release's provenance.

The adversary's prior for an absent person's SA is the release's published SA distribution
(public by construction; the sidecar publishes nothing about the suppressed rows), values
independent across people. The rule conditions it:

* **full-domain / full-domain-search with a suppression budget** (paper 001 §4.1; Samarati):
  at the published levels, the suppressed people form whole classes — computable from the
  QIs — and each suppressed class *fails the model*. A member's posterior is
  ``E[c_v / n | c fails]`` with ``c ~ Multinomial(n, prior)``: exact by enumerating the
  compositions of ``n`` when there are at most ``exact_limit`` of them, else sampled (with
  the Monte-Carlo standard error);
* **GG / RGG with ``tail="drop"``** (paper 000 §2.3 footnote 1): the dropped tail is one
  block of rows whose SA multiset fails the model (else it would have closed a group) —
  the same computation over the tail;
* **ART / art-exact** (paper 003 §4.2 as implemented here): only sensitive seed tuples are
  ever suppressed, so the absent are sensitive with certainty — posterior 1 for the
  sensitive set (and the prior restricted to the set for each of its values);
* rules the module does not know (or absence after both a skew step and the algorithm's own
  suppression) leave the absent people *unresolved* — which the certificate counts as failing.

The skew step's suppression (D-/R-suppression, paper 004) is the eligibility adversary's.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, lgamma

import numpy as np

from ..models.base import SADomain

#: largest number of compositions enumerated exactly per suppressed class
EXACT_LIMIT = 200_000
#: SA multisets sampled per suppressed class beyond that
SAMPLES = 50_000


@dataclass
class AbsencePosterior:
    """Per absent person: posterior per target, its standard error, and unresolved flags."""

    posterior: np.ndarray
    stderr: np.ndarray
    unresolved: np.ndarray
    method: str
    rule: str


def _compositions(n: int, m: int) -> np.ndarray:
    """All vectors of ``m`` non-negative ints summing to ``n`` (stars and bars), ``(C, m)``."""
    if m == 1:
        return np.array([[n]], dtype=np.int64)
    # choose the m-1 bar positions among n+m-1 slots, vectorised by recursion over values
    out = []
    for first in range(n, -1, -1):
        rest = _compositions(n - first, m - 1)
        out.append(np.concatenate([np.full((rest.shape[0], 1), first, dtype=np.int64), rest], axis=1))
    return np.concatenate(out, axis=0)


def fail_posterior(n: int, prior: np.ndarray, model, domain: SADomain, masks: np.ndarray, *,
                   exact_limit: int = EXACT_LIMIT, samples: int = SAMPLES,
                   rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """``E[c·mask / n | c fails model]`` per target, for ``c ~ Multinomial(n, prior)``.

    Returns ``(posterior (T,), stderr (T,), exact)``; the posterior is NaN when no SA
    multiset of size ``n`` fails the model (the class could not have been suppressed for
    failing it: an inconsistent release)."""
    prior = np.asarray(prior, dtype=np.float64)
    m = prior.size
    fmask = np.asarray(masks, dtype=np.float64).T  # (m, T)
    t = fmask.shape[1]
    support = np.flatnonzero(prior > 0)
    k = support.size
    if k == 0 or n <= 0:
        return np.full(t, np.nan), np.zeros(t), True
    n_comp = comb(n + k - 1, k - 1)
    if n_comp <= exact_limit:
        comp = _compositions(n, k)
        logp = np.log(prior[support])
        lfact = np.array([lgamma(x + 1.0) for x in range(n + 1)])
        logw = lgamma(n + 1.0) - lfact[comp].sum(axis=1) + (comp * logp).sum(axis=1)
        counts = np.zeros((comp.shape[0], m), dtype=np.int64)
        counts[:, support] = comp
        fails = ~np.asarray(model.holds(counts, domain), dtype=bool)
        if not fails.any():
            return np.full(t, np.nan), np.zeros(t), True
        w = np.exp(logw[fails] - logw[fails].max())
        post = (w[:, None] * (counts[fails] @ fmask)).sum(axis=0) / (w.sum() * n)
        return post, np.zeros(t), True
    rng = rng if rng is not None else np.random.default_rng(0)
    counts = rng.multinomial(n, prior, size=samples).astype(np.int64)
    fails = ~np.asarray(model.holds(counts, domain), dtype=bool)
    f = int(fails.sum())
    if f == 0:
        return np.full(t, np.nan), np.zeros(t), False
    x = (counts[fails] @ fmask) / float(n)
    post = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / np.sqrt(f) if f > 1 else np.full(t, np.inf)
    return post, se, False


def absence_posterior(rule: str, blocks: np.ndarray, prior: np.ndarray, masks: np.ndarray, *,
                      model=None, domain: SADomain | None = None, sensitive_mask: np.ndarray | None = None,
                      seed: int = 0) -> AbsencePosterior:
    """Posterior of the absent people under ``rule``.

    Parameters
    ----------
    rule:
        ``"fails-model"`` (full-domain classes, GG's dropped tail: each block of absent
        people failed the model), ``"sensitive-only"`` (ART), or anything else (unresolved).
    blocks:
        Block id of each absent person (the suppressed class / tail they were suppressed
        with), ``0..B-1``.
    prior:
        The adversary's prior over SA codes (the published distribution), shape ``(m,)``.
    masks:
        Target masks ``(n_targets, m)``.
    """
    blocks = np.asarray(blocks, dtype=np.int64)
    n_abs = blocks.size
    n_t = masks.shape[0]
    post = np.full((n_abs, n_t), np.nan)
    se = np.zeros((n_abs, n_t))
    unresolved = np.zeros(n_abs, dtype=bool)
    prior = np.asarray(prior, dtype=np.float64)
    prior = prior / prior.sum() if prior.sum() > 0 else prior
    fmask = masks.astype(np.float64)
    if n_abs == 0:
        return AbsencePosterior(post, se, unresolved, "none", rule)
    if rule == "sensitive-only" and sensitive_mask is not None and np.asarray(sensitive_mask).any():
        s = np.asarray(sensitive_mask, dtype=bool)
        cond = np.where(s, prior, 0.0)
        if cond.sum() > 0:
            cond = cond / cond.sum()
            post[:] = cond @ fmask.T
            return AbsencePosterior(post, se, unresolved, "exact (closed form)", rule)
        # no published sensitive value: the prior restricted to the set is unknown, but the
        # set itself is certain
        set_targets = (fmask[:, s].sum(axis=1) == s.sum())
        post[:, set_targets] = 1.0
        unresolved[:] = ~set_targets.any()
        return AbsencePosterior(post, se, unresolved, "exact (closed form)", rule)
    if rule == "fails-model" and model is not None and domain is not None:
        rng = np.random.default_rng(seed)
        sizes = np.bincount(blocks)
        exact_all = True
        cache: dict[int, tuple[np.ndarray, np.ndarray, bool]] = {}
        for b in np.flatnonzero(sizes):
            n = int(sizes[b])
            if n not in cache:
                cache[n] = fail_posterior(n, prior, model, domain, masks, rng=rng)
            p, e, exact = cache[n]
            exact_all &= exact
            rows = blocks == b
            if np.isnan(p).all():
                unresolved[rows] = True
                continue
            post[rows] = p
            se[rows] = e
        return AbsencePosterior(post, se, unresolved, "exact (enumeration)" if exact_all else "sampled", rule)
    unresolved[:] = True
    return AbsencePosterior(post, se, unresolved, "unknown suppression rule", rule)
