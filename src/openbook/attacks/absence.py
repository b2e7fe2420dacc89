"""Absence is information: the posterior of the people a release withholds.

The adversary of paper 000 §2.4 knows every individual's QI values, so it knows who is
*absent* from a release (no published class covers them), and, knowing the algorithm, it
knows every rule by which the algorithm withholds people **and every rule by which it would
have refused to publish at all**. When those rules depend on the SA, absence alone is a
disclosure. This module computes the absent people's posterior per target.

The adversary's prior for an absent person's SA is the release's published SA distribution
(public by construction; the sidecar publishes nothing about the suppressed rows), values
independent across people. The rules condition it jointly — a whole-table check couples
every absent person with every other (issue 26: a withheld person with ``v1`` would have made
the table ineligible, so the release itself says they do not hold ``v1``):

* **full-domain with a suppression budget** (paper 001 §4.1; Samarati): at the published
  levels the suppressed people form whole classes, computable from the QIs. The release is
  published iff the table as a whole passes the model's feasibility check (``validate``: e.g.
  ℓ-eligibility for simple ℓ-diversity), the algorithm's decision
  (:func:`openbook.algorithms.full_domain.suppressed_classes`) suppresses exactly these
  classes — each fails the model; for t-closeness, judged against a distribution the
  suppressed rows are part of — and the budget holds (fixed by the number absent);
* **full-domain search with a suppression budget**: the same classes, failing the model, but
  no whole-table check (the search publishes wherever some node satisfies within the budget:
  ``full_domain_problem(validated=False)``) — exact only when no node the search could have
  preferred satisfies in any world (:mod:`openbook.attacks.replay.lattice`), else bounded by
  the probability that a world rules them all out (``Problem.inflate``) or unresolved;
* **GG with ``tail="drop"``** (paper 000 §2.3 footnote 1): the dropped tail is the buckets
  after the last group; GG drops them because **no prefix** of them (bucket by bucket)
  satisfies the model, and the table as a whole passed ``validate``. RGG's last group could
  have grown into the tail, and a model compared with the table's distribution makes every
  group's decision depend on the tail: both left unresolved;
* **ART / art-exact** (paper 003 §4.2 as implemented here): only sensitive seed tuples are
  ever suppressed, so the absent are sensitive with certainty;
* rules the module does not know (or absence after both a skew step and the algorithm's own
  suppression) leave the absent people *unresolved* — which the certificate counts as failing.

A :class:`Problem` states a rule as the absent people's *cells* (people the rule treats alike:
a suppressed class, a bucket of the tail), their *blocks* (a suppressed class, the tail) and
the acceptance ``accept(counts)`` of a joint assignment of SA counts to the cells.
:func:`solve` enumerates every joint assignment when there are at most ``EXACT_LIMIT``;
beyond, when the acceptance is a product over blocks (the whole-table check cannot fail —
:func:`validate_constant` — and no decision compares with the table's distribution) each
block is enumerated alone; otherwise worlds are sampled from the prior and weighted by the
acceptance (a standard error per posterior; too few accepted: unresolved).

The skew step's suppression (D-/R-suppression, paper 004) is the eligibility adversary's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from math import lgamma
from typing import Any, Callable

import numpy as np

from ..errors import InfeasibleError, OpenbookError
from ..models.base import SADomain

#: largest number of joint SA count assignments enumerated exactly
EXACT_LIMIT = 200_000
#: worlds sampled beyond that
SAMPLES = 50_000
#: a sampled problem with fewer accepted worlds is unresolved
MIN_ACCEPTED = 200
#: largest number of whole-table count vectors checked one by one (:func:`validate_constant`)
TOTALS_LIMIT = 20_000
#: worlds per chunk of a joint enumeration (memory)
CHUNK = 20_000


@dataclass
class AbsencePosterior:
    """Per absent person: posterior per target, its standard error, and unresolved flags."""

    posterior: np.ndarray
    stderr: np.ndarray
    unresolved: np.ndarray
    method: str
    rule: str


@dataclass
class Problem:
    """The absent people's SA as the algorithm constrained it (module docstring).

    ``cell``: cell of each absent person; ``sizes``: people per cell; ``block``: block of each
    cell; ``accept(counts (W, C, m)) -> (W,) bool``: does the joint assignment publish the
    release? ``block_accept(b, counts (W, C_b, m))``: the part of the acceptance that is block
    ``b``'s own, when ``separable`` (the acceptance is their product)."""

    cell: np.ndarray
    sizes: np.ndarray
    block: np.ndarray
    accept: Callable[[np.ndarray], np.ndarray]
    block_accept: Callable[[int, np.ndarray], np.ndarray] | None = None
    separable: bool = False
    notes: dict[str, Any] = field(default_factory=dict)
    #: the solved posterior is only bounded: times this factor (``1 / P(A)``, a lower bound on
    #: the probability that a further decision of the algorithm excludes no world) an upper bound
    inflate: float = 1.0


def _compositions(n: int, m: int) -> np.ndarray:
    """All vectors of ``m`` non-negative ints summing to ``n`` (stars and bars), ``(C, m)``."""
    if m == 1:
        return np.array([[n]], dtype=np.int64)
    out = []
    for first in range(n, -1, -1):
        rest = _compositions(n - first, m - 1)
        out.append(np.concatenate([np.full((rest.shape[0], 1), first, dtype=np.int64), rest], axis=1))
    return np.concatenate(out, axis=0)


def _n_compositions(n: int, k: int) -> float:
    return float(np.exp(lgamma(n + k) - lgamma(n + 1) - lgamma(k)))


def _cell_table(size: int, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every SA count vector of a cell of ``size`` people over the prior's support, and its
    log prior probability (multinomial)."""
    support = np.flatnonzero(prior > 0)
    comp = _compositions(size, support.size)
    counts = np.zeros((comp.shape[0], prior.size), dtype=np.int64)
    counts[:, support] = comp
    lf = np.array([lgamma(x + 1.0) for x in range(size + 1)])
    logw = lgamma(size + 1.0) - lf[comp].sum(axis=1) + (comp * np.log(prior[support])).sum(axis=1)
    return counts, logw


def with_counts(domain: SADomain, counts: np.ndarray) -> SADomain:
    """``domain`` with another table distribution (``global_counts``)."""
    return dataclasses.replace(domain, global_counts=np.asarray(counts, dtype=np.int64))


def validate_ok(model: Any, domain: SADomain, total: np.ndarray, cache: dict | None = None) -> bool | None:
    """Does the table with SA counts ``total`` pass the model's feasibility check (the one
    every algorithm runs on the whole table first)? ``None``: the check cannot be evaluated
    on the release's domain."""
    key = tuple(int(x) for x in total)
    if cache is not None and key in cache:
        return cache[key]
    try:
        model.validate(with_counts(domain, total))
        ok: bool | None = True
    except InfeasibleError:
        ok = False
    except OpenbookError:
        ok = None
    if cache is not None:
        cache[key] = ok
    return ok


def _quasi_concave(model: Any) -> bool:
    """Models whose feasibility check holds on a convex set of table distributions, so that it
    holds for every table whose counts lie between ``P`` and ``P + n·e_v`` once it holds at
    every vertex ``P + n·e_v``: k (the size), distinct ℓ (the support), entropy ℓ (concave),
    recursive (c,ℓ) (a concave function of the counts), (α,k) and simple ℓ (linear), (k,e) and
    ℓ-eligibility, t-closeness (the table against itself), and their conjunctions."""
    from ..models import composite, k_anonymity, k_e_anonymity, l_diversity, t_closeness
    from ..models.alpha_k import AlphaKAnonymity
    from ..models.eligibility import LEligibility

    known = (k_anonymity.KAnonymity, l_diversity.DistinctLDiversity, l_diversity.EntropyLDiversity,
             l_diversity.RecursiveCLDiversity, AlphaKAnonymity, t_closeness.TCloseness, k_e_anonymity.KEAnonymity,
             LEligibility)
    if isinstance(model, composite.AllOf):
        return all(_quasi_concave(m) for m in model.models)
    return isinstance(model, known)


def validate_constant(model: Any, domain: SADomain, published: np.ndarray, n_absent: int,
                      prior: np.ndarray) -> bool:
    """Does the whole-table check pass for every way the absent people can hold values of the
    prior's support? Every table distribution is checked when there are few; else, for the
    models of :func:`_quasi_concave`, the vertices (all absent people holding one value)."""
    support = np.flatnonzero(prior > 0)
    published = np.asarray(published, dtype=np.int64)
    if n_absent == 0:
        return bool(validate_ok(model, domain, published))
    if _n_compositions(n_absent, support.size) <= TOTALS_LIMIT:
        comp = _compositions(n_absent, support.size)
        tot = np.zeros((comp.shape[0], published.size), dtype=np.int64)
        tot[:, support] = comp
        return all(validate_ok(model, domain, published + t) is True for t in tot)
    if not _quasi_concave(model):
        return False
    for v in support:
        t = published.copy()
        t[v] += n_absent
        if validate_ok(model, domain, t) is not True:
            return False
    return True


def compares_with_table(model: Any) -> bool:
    """Does the model judge a group against the table's distribution (t-closeness)?"""
    from ..models.t_closeness import TCloseness

    return any(isinstance(m, TCloseness) for m in (getattr(model, "models", None) or [model]))


# ---------------------------------------------------------------------------------------
# solving a problem
# ---------------------------------------------------------------------------------------
def _enumerate(tables: list[tuple[np.ndarray, np.ndarray]], accept: Callable[[np.ndarray], np.ndarray],
               sizes: np.ndarray, m: int) -> tuple[np.ndarray, bool]:
    """Exact ``E[counts_c / size_c | accepted]`` per cell ``(C, m)`` over the product of the
    cells' count tables; ``(nan, False)`` when no assignment is accepted."""
    shape = tuple(t[0].shape[0] for t in tables)
    total = int(np.prod(shape, dtype=np.float64))
    C = len(tables)
    num = np.zeros((C, m))
    den = 0.0
    chunks = []
    for start in range(0, total, CHUNK):
        idx = np.unravel_index(np.arange(start, min(total, start + CHUNK)), shape)
        counts = np.stack([tables[c][0][idx[c]] for c in range(C)], axis=1)
        logw = np.asarray(sum(tables[c][1][idx[c]] for c in range(C)))
        acc = np.asarray(accept(counts), dtype=bool)
        chunks.append((counts[acc], logw[acc]))
    lw = np.concatenate([lwc for _, lwc in chunks]) if chunks else np.zeros(0)
    if lw.size == 0:
        return np.full((C, m), np.nan), False
    top = lw.max()
    for counts, lwc in chunks:
        w = np.exp(lwc - top)
        num += np.einsum("w,wcm->cm", w, counts)
        den += w.sum()
    return num / (den * sizes[:, None]), True


def _sample(sizes: np.ndarray, prior: np.ndarray, accept: Callable[[np.ndarray], np.ndarray], samples: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Worlds drawn from the prior, kept when accepted: mean and standard error of
    ``counts_c / size_c`` per cell, and the number accepted."""
    C, m = sizes.size, prior.size
    counts = np.stack([rng.multinomial(int(s), prior, size=samples) for s in sizes], axis=1)
    acc = np.asarray(accept(counts), dtype=bool)
    k = int(acc.sum())
    if k == 0:
        return np.full((C, m), np.nan), np.full((C, m), np.inf), 0
    x = counts[acc] / sizes[None, :, None]
    se = x.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else np.full((C, m), np.inf)
    return x.mean(axis=0), se, k


def solve(problem: Problem, prior: np.ndarray, *, exact_limit: int = EXACT_LIMIT, samples: int = SAMPLES,
          rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(E[share of each SA value] per cell (C, m), standard error (C, m), unresolved (C,),
    method)`` for the absent people's cells (module docstring)."""
    prior = np.asarray(prior, dtype=np.float64)
    sizes = np.asarray(problem.sizes, dtype=np.int64)
    C, m = sizes.size, prior.size
    rng = rng if rng is not None else np.random.default_rng(0)
    post = np.full((C, m), np.nan)
    se = np.zeros((C, m))
    unres = np.zeros(C, dtype=bool)
    k = int((prior > 0).sum())
    if C == 0:
        return post, se, unres, "none"
    if k == 0:
        return post, se, ~unres, "no published value to draw from"
    n_joint = float(np.prod([_n_compositions(int(s), k) for s in sizes]))
    if n_joint <= exact_limit:
        tables = [_cell_table(int(s), prior) for s in sizes]
        p, ok = _enumerate(tables, problem.accept, sizes, m)
        if not ok:
            return post, se, ~unres, "exact (enumeration): no assignment publishes the release"
        return p, se, unres, "exact (joint enumeration)"
    if problem.separable and problem.block_accept is not None:
        exact = True
        cache: dict[tuple, Any] = {}
        for b in np.unique(problem.block):
            cells = np.flatnonzero(problem.block == b)
            bs = sizes[cells]
            key = (tuple(bs.tolist()), problem.notes.get("block_key", lambda b: None)(b))
            if key not in cache:
                acc = lambda c, b=b: problem.block_accept(int(b), c)  # noqa: E731
                if np.prod([_n_compositions(int(s), k) for s in bs]) <= exact_limit:
                    p, ok = _enumerate([_cell_table(int(s), prior) for s in bs], acc, bs, m)
                    cache[key] = (p, np.zeros_like(p), not ok, True)
                else:
                    p, e, n_acc = _sample(bs, prior, acc, samples, rng)
                    cache[key] = (p, e, n_acc < MIN_ACCEPTED, False)
            p, e, bad, ex = cache[key]
            exact &= ex
            post[cells], se[cells], unres[cells] = p, e, bad
        return post, se, unres, "exact (per block)" if exact else "sampled (per block)"
    p, e, n_acc = _sample(sizes, prior, problem.accept, samples, rng)
    if n_acc < MIN_ACCEPTED:
        return post, se, ~unres, f"sampled: {n_acc} of {samples} worlds publish the release (too few)"
    return p, e, unres, "sampled (joint)"


# ---------------------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------------------
def full_domain_problem(model: Any, domain: SADomain, published: np.ndarray, blocks: np.ndarray,
                        prior: np.ndarray, validated: bool = True) -> Problem:
    """Full-domain recoding with a suppression budget: ``published`` are the published classes'
    SA counts ``(K, m)``, ``blocks`` the suppressed class of each absent person. ``validated``:
    the algorithm refuses a table failing the model's whole-table check (full-domain at fixed
    levels); a lattice search with a budget does not (it publishes wherever a node satisfies
    within the budget)."""
    from ..algorithms.full_domain import suppressed_classes

    _, cell = np.unique(blocks, return_inverse=True)
    cell = cell.ravel().astype(np.int64)
    sizes = np.bincount(cell)
    B = sizes.size
    P = np.asarray(published, dtype=np.int64)
    total_pub = P.sum(axis=0)
    n_abs = int(sizes.sum())
    vcache: dict = {}
    ref = compares_with_table(model)
    want = np.r_[np.zeros(P.shape[0], dtype=bool), np.ones(B, dtype=bool)]

    def accept(counts: np.ndarray) -> np.ndarray:
        W = counts.shape[0]
        tot = counts.sum(axis=1) + total_pub[None, :]
        ok = (np.array([validate_ok(model, domain, t, vcache) is True for t in tot], dtype=bool) if validated
              else np.ones(W, dtype=bool))
        if not ref:  # the decision reads each class alone: every suppressed class fails
            fails = ~np.asarray(model.holds(counts.reshape(W * B, -1), domain), dtype=bool).reshape(W, B)
            return ok & fails.all(axis=1)
        out = np.zeros(W, dtype=bool)
        for w in np.flatnonzero(ok):
            dom = with_counts(domain, tot[w])
            out[w] = np.array_equal(suppressed_classes(np.concatenate([P, counts[w]]), dom, model), want)
        return out

    def block_accept(b: int, counts: np.ndarray) -> np.ndarray:
        return ~np.asarray(model.holds(counts.reshape(counts.shape[0], -1), domain), dtype=bool)

    separable = not ref and (not validated or validate_constant(model, domain, total_pub, n_abs, prior))
    return Problem(cell=cell, sizes=sizes, block=np.arange(B), accept=accept, block_accept=block_accept,
                   separable=separable)


def gg_tail_problem(model: Any, domain: SADomain, published_total: np.ndarray, bucket: np.ndarray,
                    prior: np.ndarray) -> Problem:
    """GG's dropped tail: ``bucket`` is each absent person's bucket along GG's order (the
    tail's buckets, consecutive to the table's end). Accepted iff no prefix of the tail
    satisfies the model and the whole table passes ``validate``."""
    _, cell = np.unique(bucket, return_inverse=True)
    cell = cell.ravel().astype(np.int64)
    sizes = np.bincount(cell)
    C = sizes.size
    total_pub = np.asarray(published_total, dtype=np.int64)
    vcache: dict = {}

    def prefixes_fail(counts: np.ndarray) -> np.ndarray:
        W = counts.shape[0]
        cum = np.cumsum(counts, axis=1).reshape(W * counts.shape[1], -1)
        return np.asarray(~np.asarray(model.holds(cum, domain), dtype=bool).reshape(W, -1).any(axis=1))

    def accept(counts: np.ndarray) -> np.ndarray:
        tot = counts.sum(axis=1) + total_pub[None, :]
        ok = np.array([validate_ok(model, domain, t, vcache) is True for t in tot], dtype=bool)
        return ok & prefixes_fail(counts)

    separable = validate_constant(model, domain, total_pub, int(sizes.sum()), prior)
    return Problem(cell=cell, sizes=sizes, block=np.zeros(C, dtype=np.int64), accept=accept,
                   block_accept=lambda b, c: prefixes_fail(c), separable=separable)


def absence_posterior(problem: Problem | None, prior: np.ndarray, masks: np.ndarray, *, rule: str,
                      sensitive_mask: np.ndarray | None = None, n_absent: int | None = None,
                      seed: int = 0, why: str = "unknown suppression rule") -> AbsencePosterior:
    """Posterior of the absent people (per target ``masks (T, m)``) under ``rule``:
    ``"sensitive-only"`` (ART: closed form), else ``problem`` solved (:func:`solve`); without a
    problem every absent person is unresolved (``why``)."""
    prior = np.asarray(prior, dtype=np.float64)
    prior = prior / prior.sum() if prior.sum() > 0 else prior
    fmask = np.asarray(masks, dtype=np.float64)
    n_abs = int(problem.cell.size) if problem is not None else int(n_absent or 0)
    n_t = fmask.shape[0]
    post = np.full((n_abs, n_t), np.nan)
    se = np.zeros((n_abs, n_t))
    unresolved = np.zeros(n_abs, dtype=bool)
    if n_abs == 0:
        return AbsencePosterior(post, se, unresolved, "none", rule)
    if rule == "sensitive-only" and sensitive_mask is not None and np.asarray(sensitive_mask).any():
        s = np.asarray(sensitive_mask, dtype=bool)
        cond = np.where(s, prior, 0.0)
        if cond.sum() > 0:
            post[:] = (cond / cond.sum()) @ fmask.T
            return AbsencePosterior(post, se, unresolved, "exact (closed form)", rule)
        # no published sensitive value: the prior restricted to the set is unknown, but the
        # set itself is certain
        set_targets = (fmask[:, s].sum(axis=1) == s.sum())
        post[:, set_targets] = 1.0
        unresolved[:] = ~set_targets.any()
        return AbsencePosterior(post, se, unresolved, "exact (closed form)", rule)
    if problem is None:
        unresolved[:] = True
        return AbsencePosterior(post, se, unresolved, why, rule)
    share, share_se, unres, method = solve(problem, prior, rng=np.random.default_rng(seed))
    cell = problem.cell
    post[:] = share[cell] @ fmask.T
    # a target's share is a sum of values' shares: its standard error at most the sum of theirs
    se[:] = np.nan_to_num(share_se[cell], nan=0.0, posinf=1.0) @ fmask.T
    unresolved[:] = unres[cell] | np.isnan(post).any(axis=1)
    if problem.inflate > 1.0:  # an upper bound, stated as the posterior plus three standard errors
        se[:] = (np.minimum(1.0, (post + 3.0 * se) * problem.inflate) - post) / 3.0
        method = f"{method}, bounded: divided by a lower bound ({1.0 / problem.inflate:.4f}) on P(no world excluded)"
    return AbsencePosterior(post, se, unresolved, method, rule)
