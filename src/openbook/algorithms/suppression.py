"""Restoring ℓ-eligibility by suppressing dominant records: D-suppression (Safe / Unsafe),
R-suppression and other members of the R*-suppression family (paper 004 §3-§5).

A table whose most frequent SA value ``S1`` has ``F1 > |T|/ℓ`` is not ℓ-eligible, so no
ℓ-diverse release of it exists (paper 004 §1.1). These functions split ``T`` into a published
part ``T_P`` (ℓ-eligible, to be anonymized by any ℓ-diversity algorithm) and a withheld part
``T_S``; ``|T_S|`` is reported, and the paper's adversary knows ``|T|`` (knowledge K2, §2).

Everything works on the SA **counts** first — ``O(m log m)`` for the sort plus one ``O(1)``
step per level the top of ``T_P`` descends (numba) — and only then maps the per-value
suppression counts to rows, choosing uniformly at random (seeded) which rows of each value
are withheld (:func:`suppress_rows`).

Ranks (part of the algorithm, hence of the adversary's knowledge K1). The paper ranks values
by frequency alone and treats tied values symmetrically (Property 1; ``S1'``, ``S2'`` of
Example 5); so do we — **ties are broken uniformly at random** (seeded), never by code:

* **rank** in ``T``: count descending, ties in a uniformly random order (``S1`` = rank 1);
* D-suppression (Fig. 2) removes a record of the lowest-ranked value in ``top(T_P)`` ("the
  lowest rank first", ranks in ``T`` as in Example 2) — literally the paper's rule, with the
  ties among equal frequencies of ``T``, which the paper leaves open, in a random order; it
  preserves the order of ranks (Property 1), so it is a water level descending over the
  sorted counts, and only *which* of several equally frequent values end one record lower
  depends on the tie order;
* R-suppression (Fig. 3) STEP-1 draws ``h`` uniformly from ``1..ℓ`` and the level ``F``
  uniformly from ``[F_{h+1}, F_h]`` (``F_{m+1} = 0``) and suppresses ``S1`` to ``F``;
  STEP-2 runs D-suppression on the result — "Apply D-suppression to T_P": ranked by the
  counts of its input, ties in a fresh uniformly random order — until P-Eligibility and
  ℓ-candidacy hold for the first time. Reading the ranks of the base table ``T`` into
  STEP-2 instead (``S1`` keeps rank 1 and loses records last among the values it meets)
  gives other posteriors; ``docs/skew.md`` shows where, and why openbook ranks STEP-2's
  input.

How many records are withheld never depends on the tie order (every decision reads the
sorted counts), only which values lose them; the exact eligibility posterior
(:mod:`openbook.attacks.eligibility`) averages over the tie orders (``docs/skew.md``).

Why functions and not an :class:`~openbook.algorithms.base.Anonymizer`: these algorithms
decide *which rows are withheld*, not how rows are grouped, and they run *before* an
anonymizer (ℓ-eligibility first, then ℓ-diversity). :func:`restore_eligibility` is the
pipeline step; ``openbook anonymize --skew r-suppression`` runs it and then the anonymizer on
the kept rows.

References
----------
Paper 004: §2 (ℓ-dichotomy: P-Eligibility, S-Ambiguity; ℓ-candidacy, Def. 2), §3 (Fig. 2,
Property 1, Theorems 1-2), §4.1 (Fig. 3, Example 4), §5 (R*-suppression family, Theorem 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numba import njit

from ..errors import InfeasibleError, ParameterError

METHODS = ("safe-d", "unsafe-d", "r-suppression")
#: Members of the R*-suppression family besides R-suppression itself (§5).
RSTAR_MEMBERS = ("r-suppression", "rstar-wide", "rstar-skip1", "rstar-safe2")


# ---------------------------------------------------------------------------------------
# the two conditions of ℓ-dichotomy that can be tested on counts (§2)
# ---------------------------------------------------------------------------------------
def p_eligible(published: np.ndarray, l: int) -> bool:
    """P-Eligibility (Def. 1): ``F1' <= |T_P|/ℓ``, i.e. ``ℓ·max <= sum``."""
    c = np.asarray(published, dtype=np.int64)
    return bool(l * int(c.max(initial=0)) <= int(c.sum()))


def l_candidate(published: np.ndarray, n: int, l: int) -> bool:
    """ℓ-candidacy (Def. 2): ``F_ℓ' + |T_S| > |T|/ℓ`` with ``|T_S| = n - |T_P|``."""
    c = np.sort(np.asarray(published, dtype=np.int64))[::-1]
    fl = int(c[l - 1]) if l <= c.size else 0
    return bool(l * (fl + n - int(c.sum())) > n)


def is_eligible(counts: np.ndarray, l: float) -> bool:
    """ℓ-eligibility of a table from its SA counts: ``ℓ·F1 <= |T|`` (non-empty)."""
    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())
    return n > 0 and l * int(c.max(initial=0)) <= n


# ---------------------------------------------------------------------------------------
# result type
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SuppressionPlan:
    """What a suppression algorithm decided, on counts.

    ``published[v]`` / ``suppressed[v]`` are the counts of SA code ``v`` in ``T_P`` / ``T_S``
    (``published + suppressed`` = the input counts). ``choices`` holds the random choices
    (``h``, ``F``) of a randomized method: secret, never published.
    """

    method: str
    l: int
    published: np.ndarray
    suppressed: np.ndarray
    choices: dict[str, int] = field(default_factory=dict)

    @property
    def n_input(self) -> int:
        return int(self.published.sum() + self.suppressed.sum())

    @property
    def n_published(self) -> int:
        return int(self.published.sum())

    @property
    def n_suppressed(self) -> int:
        """``|T_S|`` — reported with the release (the adversary knows ``|T|``)."""
        return int(self.suppressed.sum())

    @property
    def rate(self) -> float:
        """Suppression rate ``|T_S| / |T|`` (§6)."""
        return self.n_suppressed / self.n_input if self.n_input else 0.0

    def provenance(self) -> dict[str, Any]:
        """JSON-able facts for the release sidecar (no secret random choices)."""
        return {"method": self.method, "l": self.l, "n_input": self.n_input,
                "n_suppressed": self.n_suppressed, "suppression_rate": round(self.rate, 6)}


# ---------------------------------------------------------------------------------------
# the counting core
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def descend(a: np.ndarray, n: int, l: int, s0: int) -> int:  # pragma: no cover - numba
    """D-suppression on counts ``a`` sorted by rank (non-increasing), in place, until
    P-Eligibility and ℓ-candidacy hold for the first time; ``s0`` records are already
    suppressed and ``n = |T|``. Returns the total suppressed.

    State ``(L, t)``: the ``j`` top values (indices ``0..j-1``) are at level ``L`` except the
    ``t`` lowest-ranked, already at ``L-1``. Within a level, P-Eligibility holds for
    ``t <= |T_P| - Lℓ`` and ℓ-candidacy for ``t >= t_c`` (``F_ℓ' + t`` never decreases), so
    the first valid ``t`` is ``t_c`` — one O(1) test per level.
    """
    m = a.shape[0]
    tp = 0
    for i in range(m):
        tp += a[i]
    s = s0
    L = a[0]
    j = 0
    while j < m and a[j] == L:
        j += 1
    while True:
        if L == 0:
            for i in range(j):
                a[i] = 0
            return s
        if l > j:
            x = a[l - 1] + s
            tc = (n - l * x) // l + 1
            if tc < 0:
                tc = 0
        else:
            tc = (n - l * (L + s)) // l + 1
            if tc < 0:
                tc = 0
            if tc > j - l:
                t1 = (n - l * (L - 1 + s)) // l + 1
                tc = t1 if t1 > j - l + 1 else j - l + 1
        if tc <= j - 1 and L * l <= tp - tc:
            for i in range(j - tc):
                a[i] = L
            for i in range(j - tc, j):
                a[i] = L - 1
            return s + tc
        s += j
        tp -= j
        L -= 1
        while j < m and a[j] == L:
            j += 1


def _ranked(counts: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Codes by rank: count descending, ties by ``tiebreak`` keys ascending."""
    return np.lexsort((np.asarray(tiebreak), -counts))


def _tiebreak(tiebreak: Any, size: int, seed: Any) -> np.ndarray:
    """The tie keys to use: ``tiebreak`` if given, else a uniformly random order from
    ``seed`` — what the algorithms do (ties broken uniformly at random)."""
    if tiebreak is not None:
        key = np.asarray(tiebreak)
        if key.shape != (size,):
            raise ParameterError(f"tiebreak must hold one key per SA value ({size})", parameter="tiebreak")
        return key
    return _rng(seed).permutation(size)


def _check(counts: Any, l: Any) -> tuple[np.ndarray, int]:
    c = np.asarray(counts)
    if c.ndim != 1 or c.size == 0 or not np.issubdtype(c.dtype, np.integer) or (c < 0).any():
        raise ParameterError("counts must be a non-empty 1-D array of non-negative integers",
                             parameter="counts")
    if isinstance(l, bool) or not float(l).is_integer() or int(l) < 2:
        raise ParameterError(f"l={l!r}: the suppression algorithms need an integer l >= 2",
                             parameter="l", value=l)
    l = int(l)
    c = c.astype(np.int64)
    m = int((c > 0).sum())
    if l > m:
        raise InfeasibleError(f"only {m} distinct SA values occur, so no non-empty subset of the "
                              f"table is {l}-eligible (paper 004 assumes l <= m)")
    return c, l


def d_suppression_from(counts: np.ndarray, n: int, l: int, *, already: int = 0,
                       tiebreak: np.ndarray | None = None, seed: Any = None) -> np.ndarray:
    """The public decision function of D-suppression (Fig. 2) with the Unsafe stop: from
    the table ``counts`` (of a base table of ``n`` rows, ``already`` of them suppressed),
    suppress records of the lowest-ranked value in ``top(T_P)`` until P-Eligibility and
    ℓ-candidacy hold for the first time. Ranks are fixed at the start from ``counts``:
    count descending, ties by the ``tiebreak`` keys ascending — by default a uniformly
    random order drawn from ``seed``, as the algorithms do. Returns the published counts
    (how many records each count level loses never depends on the tie order)."""
    counts = np.asarray(counts, dtype=np.int64)
    order = _ranked(counts, _tiebreak(tiebreak, counts.size, seed))
    a = np.zeros(max(counts.size, l), dtype=np.int64)
    a[: counts.size] = counts[order]
    descend(a, int(n), int(l), int(already))
    out = np.empty_like(counts)
    out[order] = a[: counts.size]
    return out


def _plan(method: str, l: int, counts: np.ndarray, published: np.ndarray, **choices: int) -> SuppressionPlan:
    return SuppressionPlan(method, l, published, counts - published, {k: int(v) for k, v in choices.items()})


def safe_d_suppression(counts: Any, l: Any) -> SuppressionPlan:
    """Safe D-suppression (§3.2): stop at the start of level ``F_ℓ`` (Theorem 1) — every
    value is cut to ``min(F_i, F_ℓ)``; ``top(T_P)`` then holds ``S1..S_ℓ``."""
    counts, l = _check(counts, l)
    if is_eligible(counts, l):
        return _plan("safe-d", l, counts, counts.copy())
    fl = np.sort(counts)[::-1][l - 1]
    return _plan("safe-d", l, counts, np.minimum(counts, fl))


def unsafe_d_suppression(counts: Any, l: Any, *, seed: Any = None) -> SuppressionPlan:
    """Unsafe D-suppression (§3.3): stop when P-Eligibility and ℓ-candidacy first hold — the
    lower bound on suppression of Theorem 2, but open to the eligibility attack. Ties in the
    ranking are broken uniformly at random (``seed``)."""
    counts, l = _check(counts, l)
    if is_eligible(counts, l):
        return _plan("unsafe-d", l, counts, counts.copy())
    return _plan("unsafe-d", l, counts, d_suppression_from(counts, int(counts.sum()), l, seed=seed))


def r_suppression_outcome(counts: Any, l: Any, h: int, level: int, *, step2: str = "unsafe-d",
                          s1: int | None = None, tiebreak: np.ndarray | None = None,
                          seed: Any = None) -> np.ndarray:
    """R-suppression for given random choices: STEP-1 suppresses ``S1`` (the code ``s1``,
    one of the most frequent values) to ``level`` (chosen in ``[F_{h+1}, F_h]``; ``h`` is
    only informative), STEP-2 runs D-suppression (``step2="unsafe-d"``, Fig. 3) on the
    result, ranked by *its* counts with ties by the ``tiebreak`` keys ascending — or, for
    the R* member ``rstar-safe2``, D-suppression to the start of the level of the ℓ-th
    value (``step2="safe-d"``). Returns the published counts. This is the replay function
    the eligibility attack calls with every ``(s1, tiebreak)``.

    The ties are random choices of the algorithm: when ``s1`` / ``tiebreak`` is not given
    it is drawn as :func:`r_suppression` draws it — ``S1`` uniformly among the most frequent
    values, STEP-2's order uniformly at random — from ``seed``. (STEP-2 ranks its own input,
    so ``S1`` lowered to a level tied with other values is one of the tied values; the
    paper's Fig. 2 could also be read as keeping ``S1``'s rank 1 in ``T`` —
    ``docs/skew.md`` gives the example where the two readings differ.)"""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    rng = _rng(seed) if s1 is None or tiebreak is None else None
    if s1 is None:
        assert rng is not None  # drawn whenever s1 is
        s1 = int(rng.choice(np.flatnonzero(counts == counts.max())))
    elif counts[s1] != counts.max():
        raise ParameterError(f"s1={s1} is not a most frequent value", parameter="s1", value=s1)
    a = counts.copy()
    a[s1] = int(level)
    if step2 == "unsafe-d":
        return d_suppression_from(a, n, int(l), already=int(counts[s1] - level), tiebreak=tiebreak, seed=rng)
    if step2 == "safe-d":
        srt = np.sort(a)[::-1]
        top = srt[0]
        if l * top <= a.sum() and (srt >= top).sum() >= l:
            return a
        return np.minimum(a, srt[l - 1])
    raise ParameterError(f"unknown STEP-2 {step2!r} (use 'unsafe-d' or 'safe-d')", parameter="step2", value=step2)


def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _h_distribution(member: str, l: int, m: int) -> np.ndarray:
    """Pr(h = 1..m) of STEP-1 for an R*-family member; every entry <= 1/ℓ (§5)."""
    p = np.zeros(m)
    if member in ("r-suppression", "rstar-safe2"):
        p[:l] = 1.0 / l
    elif member == "rstar-wide":  # h uniform over 1..min(m, ℓ+2)
        k = min(m, l + 2)
        p[:k] = 1.0 / k
    elif member == "rstar-skip1":  # h uniform over 2..ℓ+1 (S1 never stays on top)
        if m < l + 1:
            p[:l] = 1.0 / l
        else:
            p[1:l + 1] = 1.0 / l
    else:
        raise ParameterError(f"unknown R*-suppression member {member!r} (known: {', '.join(RSTAR_MEMBERS)})",
                             parameter="member", value=member)
    return p


def _levels(counts: np.ndarray, h: int) -> tuple[int, int]:
    f = np.zeros(max(counts.size, h) + 1, dtype=np.int64)
    f[: counts.size] = np.sort(counts)[::-1]
    return int(f[h]), int(f[h - 1])  # [F_{h+1}, F_h]


def rstar_suppression(counts: Any, l: Any, *, member: str = "r-suppression", seed: Any = None) -> SuppressionPlan:
    """One run of an R*-suppression family member (§5). ``member``:

    ``r-suppression``  Fig. 3: ``h`` uniform on ``1..ℓ``, ``F`` uniform on ``[F_{h+1}, F_h]``,
                       STEP-2 Unsafe-stop D-suppression;
    ``rstar-wide``     ``h`` uniform on ``1..min(m, ℓ+2)`` (each probability ``< 1/ℓ``);
    ``rstar-skip1``    ``h`` uniform on ``2..ℓ+1``;
    ``rstar-safe2``    STEP-1 of R-suppression, STEP-2 D-suppression to the start of the
                       level of the ℓ-th value (a different deterministic STEP-2).
    """
    counts, l = _check(counts, l)
    if is_eligible(counts, l):
        return _plan(member, l, counts, counts.copy())
    rng = _rng(seed)
    m = int((counts > 0).sum())
    p = _h_distribution(member, l, m)
    h = int(rng.choice(m, p=p)) + 1 if member != "r-suppression" else int(rng.integers(1, l + 1))
    lo, hi = _levels(counts, h)
    level = int(rng.integers(lo, hi + 1))
    step2 = "safe-d" if member == "rstar-safe2" else "unsafe-d"
    s1 = int(rng.choice(np.flatnonzero(counts == counts.max())))  # S1: ties uniformly at random
    tie = rng.permutation(counts.size)  # STEP-2's ranking: ties uniformly at random
    return _plan(member, l, counts, r_suppression_outcome(counts, l, h, level, step2=step2, s1=s1, tiebreak=tie),
                 h=h, F=level, s1=s1)


def r_suppression(counts: Any, l: Any, *, seed: Any = None) -> SuppressionPlan:
    """R-suppression (Fig. 3, §4.1): ℓ-dichotomy (Theorem 3) with the least expected
    suppression in the R*-family (Theorem 4). ``seed``: int or ``numpy.random.Generator``."""
    return rstar_suppression(counts, l, member="r-suppression", seed=seed)


@njit(cache=True)
def _rsup_totals(fs: np.ndarray, n: int, l: int, hs: np.ndarray, levels: np.ndarray) -> np.ndarray:  # pragma: no cover
    """|T_S| of R-suppression for each run ``(hs[k], levels[k])``; ``fs`` = the counts sorted
    in descending order (padded with zeros). S1 moved to level F is placed before the other
    values with count <= F: any place among its equals gives the same total, because how many
    records STEP-2 withholds never depends on the tie order (only which tied values lose
    them), so this batched kernel needs no tie draw."""
    m = fs.size
    out = np.empty(hs.size, np.int64)
    a = np.empty(m, np.int64)
    for k in range(hs.size):
        f = levels[k]
        q = 0
        i = 1
        while i < m and fs[i] > f:
            a[q] = fs[i]
            q += 1
            i += 1
        a[q] = f
        q += 1
        while i < m:
            a[q] = fs[i]
            q += 1
            i += 1
        out[k] = descend(a, n, l, fs[0] - f)
    return out


def r_suppression_totals(counts: Any, l: Any, runs: int, *, seed: Any = None) -> np.ndarray:
    """``|T_S|`` of ``runs`` independent R-suppression runs on one table (batched; the same
    distribution as calling :func:`r_suppression` ``runs`` times)."""
    counts, l = _check(counts, l)
    if is_eligible(counts, l):
        return np.zeros(runs, dtype=np.int64)
    rng = _rng(seed)
    fs = np.zeros(max(counts.size, l) + 1, dtype=np.int64)
    fs[: counts.size] = np.sort(counts)[::-1]
    hs = rng.integers(1, l + 1, size=runs)
    lo, hi = fs[hs], fs[hs - 1]
    levels = lo + np.floor(rng.random(runs) * (hi - lo + 1)).astype(np.int64)
    return _rsup_totals(fs, int(counts.sum()), l, hs, levels)


def expected_suppression(counts: Any, l: Any, *, member: str = "r-suppression") -> float:
    """Exact ``E[|T_S|]`` of an R*-family member: the average over every ``(h, F)`` with
    its probability (one STEP-2 replay per level in each interval)."""
    counts, l = _check(counts, l)
    if is_eligible(counts, l):
        return 0.0
    n = int(counts.sum())
    m = int((counts > 0).sum())
    p = _h_distribution(member, l, m)
    step2 = "safe-d" if member == "rstar-safe2" else "unsafe-d"
    total = 0.0
    for h in np.flatnonzero(p) + 1:
        lo, hi = _levels(counts, int(h))
        # the total withheld does not depend on S1's identity among the tied maxima nor on
        # the tie order: one fixed choice per level
        s1 = int(np.argmax(counts))
        key = np.arange(counts.size)
        xs = [n - int(r_suppression_outcome(counts, l, int(h), f, step2=step2, s1=s1, tiebreak=key).sum())
              for f in range(lo, hi + 1)]
        total += p[h - 1] * float(np.mean(xs))
    return total


def r_suppression_spread(counts: Any, l: Any) -> dict[str, float]:
    """The exact distribution of R-suppression's ``|T_S| / |T|`` over its random choices
    (``h`` uniform on ``1..ℓ``, ``F`` uniform on ``[F_{h+1}, F_h]``; Fig. 3): its mean,
    standard deviation, least and largest value — what a publisher should expect from one run
    (two unseeded runs can differ by the whole range). Every ``(h, F)`` is replayed (batched)."""
    counts, l = _check(counts, l)
    n = int(counts.sum())
    if is_eligible(counts, l) or n == 0:
        return {"mean": 0.0, "sd": 0.0, "min": 0.0, "max": 0.0}
    fs = np.zeros(max(counts.size, l) + 1, dtype=np.int64)
    fs[: counts.size] = np.sort(counts)[::-1]
    hs, levels, weights = [], [], []
    for h in range(1, l + 1):
        lo, hi = int(fs[h]), int(fs[h - 1])
        hs.append(np.full(hi - lo + 1, h, dtype=np.int64))
        levels.append(np.arange(lo, hi + 1, dtype=np.int64))
        weights.append(np.full(hi - lo + 1, 1.0 / (l * (hi - lo + 1))))
    totals = _rsup_totals(fs, n, l, np.concatenate(hs), np.concatenate(levels)) / n
    w = np.concatenate(weights)
    mean = float(np.dot(w, totals))
    sd = float(np.sqrt(max(0.0, np.dot(w, (totals - mean) ** 2))))
    return {"mean": mean, "sd": sd, "min": float(totals.min()), "max": float(totals.max())}


def suppress_all(counts: Any, l: Any) -> SuppressionPlan:
    """The "Suppress-All" reference of §6: withhold the whole table if it is not ℓ-eligible."""
    counts, l = _check(counts, l)
    pub = counts.copy() if is_eligible(counts, l) else np.zeros_like(counts)
    return _plan("suppress-all", l, counts, pub)


SUPPRESSORS: dict[str, Callable[..., SuppressionPlan]] = {
    "safe-d": lambda c, l, seed=None: safe_d_suppression(c, l),
    "unsafe-d": lambda c, l, seed=None: unsafe_d_suppression(c, l, seed=seed),
    "r-suppression": lambda c, l, seed=None: r_suppression(c, l, seed=seed),
}


# ---------------------------------------------------------------------------------------
# from counts to rows
# ---------------------------------------------------------------------------------------
def suppress_rows(sa_codes: np.ndarray, suppressed: np.ndarray, seed: Any = None) -> np.ndarray:
    """Boolean mask of withheld rows: for each SA code ``v``, ``suppressed[v]`` of its rows
    chosen uniformly at random (without replacement). Cost: one pass over the rows per value
    that loses records."""
    sa = np.asarray(sa_codes)
    rng = _rng(seed)
    mask = np.zeros(sa.size, dtype=bool)
    for v in np.flatnonzero(np.asarray(suppressed) > 0):
        rows = np.flatnonzero(sa == v)
        k = int(suppressed[v])
        if k > rows.size:
            raise ParameterError(f"cannot suppress {k} rows of SA code {v}: only {rows.size} exist",
                                 parameter="suppressed", value=k)
        mask[rows[rng.choice(rows.size, size=k, replace=False)]] = True
    return mask


@dataclass(frozen=True)
class SkewStep:
    """The result of restoring ℓ-eligibility on a table: the plan and the kept rows."""

    plan: SuppressionPlan
    kept_rows: np.ndarray
    suppressed_mask: np.ndarray

    def provenance(self) -> dict[str, Any]:
        return {"step": "restore-l-eligibility", **self.plan.provenance()}


def restore_eligibility(sa_codes: np.ndarray, l: Any, *, method: str = "r-suppression",
                        seed: Any = None, n_values: int | None = None) -> SkewStep:
    """Pipeline step (paper 004 §1.3): suppress dominant records with ``method`` (one of
    ``safe-d``, ``unsafe-d``, ``r-suppression``) so the kept rows are ℓ-eligible. An already
    ℓ-eligible table is returned whole (``|T| = |T_P|``)."""
    if method not in SUPPRESSORS:
        raise ParameterError(f"unknown skew method {method!r} (known: {', '.join(METHODS)})",
                             parameter="skew", value=method)
    sa = np.asarray(sa_codes)
    counts = np.bincount(sa, minlength=n_values or 0).astype(np.int64)
    rng = _rng(seed)
    plan = SUPPRESSORS[method](counts, l, seed=rng)
    mask = suppress_rows(sa, plan.suppressed, rng)
    return SkewStep(plan, np.flatnonzero(~mask), mask)


def l_for_model(model: Any) -> int:
    """The ℓ to restore for a privacy model: the ℓ it promises
    (:func:`openbook.models.promise.promised_l_int`, rounded up), at least 2."""
    from ..models.promise import promised_l_int

    l = promised_l_int(model)
    if l is None:
        raise ParameterError(f"--skew needs an ℓ-type model (l=..., simple-l=..., alpha=...); "
                             f"got {model!r}", parameter="skew")
    return max(2, l)
