"""Deterministic synthetic census-like microdata, for benchmarks (up to 10^8 rows, streamed)
and tests.

The table has ``n_qi`` quasi-identifiers (QI) and one sensitive attribute (SA)
``occupation``.  The first nine QIs are named and census-like; their marginals are the
rounded marginals of the UCI Adult training file (30,162 complete rows), the data every
paper in ``shared/papers`` uses (e.g. Cormode et al., VLDB 2010, Table 1; Wong et al.,
VLDB 2007, Table 12):

====  ==================  ===========  ======================================================
 pos  column              kind         domain
====  ==================  ===========  ======================================================
 1    ``age``             numeric      17..90; p(a) ∝ (1 - e^{-(a-16)/2}) · e^{-((a-32)/18)²/2}
 2    ``workclass``       categorical  8 values (Private 73.9 %, ...)
 3    ``education``       ordinal      16 levels, Preschool < 1st-4th < ... < Doctorate
 4    ``marital_status``  categorical  7 values
 5    ``race``            categorical  5 values
 6    ``sex``             categorical  2 values
 7    ``native_country``  categorical  41 values, heavy head (United-States 91.2 %)
 8    ``hours_per_week``  numeric      1..99, spikes at 40 (47 %), 50, 45, 60, ...
 9    ``zip``             numeric      1,000 zip-like codes 10001 + 89·i; Zipf(0.7) popularity
                                       over a fixed shuffle of the codes
 10+  ``qi_<pos>``        categorical  cardinality 10 + (37·(pos-10) + 23) mod 91 (10..100),
                                       Zipf(0.5) over values ``v00, v01, ...``
====  ==================  ===========  ======================================================

QIs are drawn independently of each other from these marginals.

**Sensitive attribute.**  ``occupation`` takes ``sa_values`` values, labelled with Adult's 14
occupations in rank order (then ``Occupation-15``, ...).  Let ``z_a`` be the Zipf
distribution ``z_a(k) ∝ (k+1)^(-a)`` over ranks ``k = 0..V-1`` (``a = 0`` is uniform).  Each
row independently:

* with probability ``1 - correlation`` draws its SA code from ``z_alpha`` (the global Zipf);
* with probability ``correlation`` draws a rank ``k ~ z_beta`` with ``beta = max(alpha, 1)``
  (so that the dependence does not vanish when ``alpha = 0``) and maps it through the
  *per-cell permutation* ``pi_h(k) = (a_h·k + b_h) mod V``.  The cell ``h`` is the
  mixed-radix code of the row's first ``min(3, n_qi)`` QIs (age, workclass, education),
  and ``(a_h, b_h)`` — ``a_h`` uniform over the units mod ``V``, ``b_h`` uniform over
  ``0..V-1`` — is a hash of the cell keyed by ``seed`` (drawn once from
  ``default_rng([seed, 2**32-1, 0xA5A5])``).

So with ``correlation = 0`` the SA is independent of every QI and its marginal is exactly
``z_alpha``; with ``correlation = 1`` each cell has its own permuted Zipf (the SA is a noisy
function of the cell).  For ``0 < correlation`` the SA marginal is the mixture
``(1-c)·z_alpha + c·Σ_h P(h)·z_beta(pi_h^{-1}(·))``; :func:`synthetic_marginals` computes it.

**Determinism.**  Rows ``[b·2^20, (b+1)·2^20)`` (a fixed internal block of
:data:`BLOCK_ROWS` rows) are drawn from ``np.random.default_rng([seed, b])``: one row-major
``uint32`` matrix with ``n_qi + 2`` words per row (one per QI, one for the mixture choice,
one for the SA rank), mapped to codes by exact integer inverse-CDF thresholds (probabilities
quantised to 2^-32).  Since the words are consumed row by row, the output is independent
of ``chunk_rows``, and ``synthetic_census(n)`` is a prefix of ``synthetic_census(m)`` for
``n < m`` with the same parameters.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from openbook.errors import ParameterError

__all__ = [
    "BLOCK_ROWS",
    "SA_NAME",
    "iter_synthetic_census",
    "iter_synthetic_codes",
    "synthetic_census",
    "synthetic_codes",
    "synthetic_domains",
    "synthetic_marginals",
    "synthetic_schema",
]

#: Rows drawn from one ``default_rng([seed, block_index])`` stream (independent of chunk_rows).
BLOCK_ROWS = 1 << 20
#: Name of the sensitive attribute column.
SA_NAME = "occupation"

_TWO32 = 1 << 32
_GRID_SHIFT = 16  # inverse-CDF lookup table indexed by the top 16 bits of a uint32 word
_CELL_QIS = 3  # the per-cell SA distribution depends on the first three QIs

_WORKCLASS = {
    "Private": 0.7389, "Self-emp-not-inc": 0.0829, "Local-gov": 0.0685, "State-gov": 0.0424,
    "Self-emp-inc": 0.0356, "Federal-gov": 0.0313, "Without-pay": 0.0005, "Never-worked": 0.0002,
}
_EDUCATION = {  # in level order (ordinal)
    "Preschool": 0.0015, "1st-4th": 0.0050, "5th-6th": 0.0095, "7th-8th": 0.0185,
    "9th": 0.0151, "10th": 0.0272, "11th": 0.0347, "12th": 0.0125, "HS-grad": 0.3262,
    "Some-college": 0.2214, "Assoc-voc": 0.0433, "Assoc-acdm": 0.0334, "Bachelors": 0.1672,
    "Masters": 0.0539, "Prof-school": 0.0180, "Doctorate": 0.0124,
}
_MARITAL = {
    "Married-civ-spouse": 0.4663, "Never-married": 0.3225, "Divorced": 0.1397,
    "Separated": 0.0311, "Widowed": 0.0274, "Married-spouse-absent": 0.0123,
    "Married-AF-spouse": 0.0007,
}
_RACE = {
    "White": 0.8598, "Black": 0.0934, "Asian-Pac-Islander": 0.0297,
    "Amer-Indian-Eskimo": 0.0095, "Other": 0.0077,
}
_SEX = {"Male": 0.6757, "Female": 0.3243}
_COUNTRY = {
    "United-States": 0.9119, "Mexico": 0.0202, "Philippines": 0.0062, "Germany": 0.0042,
    "Puerto-Rico": 0.0036, "Canada": 0.0035, "India": 0.0033, "El-Salvador": 0.0033,
    "Cuba": 0.0031, "England": 0.0029, "Jamaica": 0.0027, "South": 0.0024, "Italy": 0.0023,
    "China": 0.0023, "Dominican-Republic": 0.0022, "Vietnam": 0.0021, "Guatemala": 0.0021,
    "Japan": 0.0020, "Poland": 0.0019, "Columbia": 0.0019, "Iran": 0.0014, "Taiwan": 0.0014,
    "Haiti": 0.0014, "Portugal": 0.0011, "Nicaragua": 0.0011, "Peru": 0.0010,
    "Greece": 0.0010, "Ecuador": 0.0009, "France": 0.0009, "Ireland": 0.0008,
    "Hong": 0.0006, "Cambodia": 0.0006, "Trinadad&Tobago": 0.0006, "Thailand": 0.0006,
    "Laos": 0.0006, "Yugoslavia": 0.0005, "Outlying-US(Guam-USVI-etc)": 0.0005,
    "Hungary": 0.0004, "Honduras": 0.0004, "Scotland": 0.0004, "Holand-Netherlands": 0.00003,
}
_OCCUPATIONS = [  # Adult's occupations, most frequent first
    "Prof-specialty", "Craft-repair", "Exec-managerial", "Adm-clerical", "Sales",
    "Other-service", "Machine-op-inspct", "Transport-moving", "Handlers-cleaners",
    "Farming-fishing", "Tech-support", "Protective-serv", "Priv-house-serv", "Armed-Forces",
]
_HOURS_SPIKES = {40: 0.472, 50: 0.090, 45: 0.058, 60: 0.047, 35: 0.039, 20: 0.035,
                 30: 0.033, 55: 0.022, 25: 0.019}
_N_NAMED = 9


@dataclass(frozen=True)
class _Column:
    name: str
    kind: str  # "numeric" | "categorical" | "ordinal"
    values: np.ndarray | list  # value of each code (numbers for numeric, labels otherwise)
    pmf: np.ndarray  # probability of each code


def _normalise(w) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    return w / w.sum()


def _zipf(n: int, alpha: float) -> np.ndarray:
    return _normalise(np.arange(1, n + 1, dtype=np.float64) ** (-float(alpha)))


def _named_column(pos: int) -> _Column:
    if pos == 0:
        a = np.arange(17, 91)
        w = (1.0 - np.exp(-(a - 16) / 2.0)) * np.exp(-0.5 * ((a - 32) / 18.0) ** 2)
        return _Column("age", "numeric", a, _normalise(w))
    if pos == 7:
        h = np.arange(1, 100)
        base = np.exp(-0.5 * ((h - 40) / 15.0) ** 2)
        w = (1.0 - sum(_HOURS_SPIKES.values())) * _normalise(base)
        for value, p in _HOURS_SPIKES.items():
            w[value - 1] += p
        return _Column("hours_per_week", "numeric", h, _normalise(w))
    if pos == 8:
        values = 10001 + 89 * np.arange(1000)
        order = np.random.default_rng(20100913).permutation(1000)  # fixed, seed-independent
        pmf = np.empty(1000)
        pmf[order] = _zipf(1000, 0.7)
        return _Column("zip", "numeric", values, pmf)
    columns: list[tuple[str, str, Any]] = [
        ("", "", None), ("workclass", "categorical", _WORKCLASS), ("education", "ordinal", _EDUCATION),
        ("marital_status", "categorical", _MARITAL), ("race", "categorical", _RACE),
        ("sex", "categorical", _SEX), ("native_country", "categorical", _COUNTRY),
    ]
    name, kind, table = columns[pos]  # pos 1..6 (0 and 7.. are handled above)
    return _Column(name, kind, list(table), _normalise(list(table.values())))


def _column(pos: int) -> _Column:
    """The ``pos``-th QI column (0-based)."""
    if pos < _N_NAMED:
        return _named_column(pos)
    card = 10 + (37 * (pos - _N_NAMED) + 23) % 91
    width = len(str(card - 1))
    labels = [f"v{k:0{width}d}" for k in range(card)]
    return _Column(f"qi_{pos + 1}", "categorical", labels, _zipf(card, 0.5))


def _sa_labels(sa_values: int) -> list[str]:
    return _OCCUPATIONS[:sa_values] + [f"Occupation-{k + 1}" for k in range(14, sa_values)]


# --------------------------------------------------------------------------- validation


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer, got {value!r}", parameter=name,
                             value=value)
    if value < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {value}", parameter=name,
                             value=value)
    return int(value)


def _check_real(name: str, value, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name} must be a number, got {value!r}", parameter=name,
                             value=value)
    v = float(value)
    if not (math.isfinite(v) and lo <= v <= hi):
        bound = f"in [{lo}, {hi}]" if math.isfinite(hi) else f">= {lo}"
        raise ParameterError(f"{name} must be a finite number {bound}, got {value!r}",
                             parameter=name, value=value)
    return v


@dataclass(frozen=True)
class _Params:
    seed: int
    n_qi: int
    sa_values: int
    zipf_alpha: float
    correlation: float


def _params(seed, n_qi, sa_values, zipf_alpha, correlation) -> _Params:
    return _Params(
        seed=_check_int("seed", seed, 0),
        n_qi=_check_int("n_qi", n_qi, 1),
        sa_values=_check_int("sa_values", sa_values, 1),
        zipf_alpha=_check_real("zipf_alpha", zipf_alpha, 0.0, math.inf),
        correlation=_check_real("correlation", correlation, 0.0, 1.0),
    )


# --------------------------------------------------------------------------- sampling


class _Sampler:
    """Exact integer inverse CDF: code = #{k : threshold_k <= u} for a uint32 word u.

    Most words are resolved by a 2^16-entry lookup on their top bits; words falling in a
    grid cell that straddles a threshold are resolved by binary search.
    """

    def __init__(self, pmf: np.ndarray) -> None:
        cdf = np.cumsum(pmf)
        thr = np.rint(cdf / cdf[-1] * _TWO32).astype(np.uint64)
        thr[-1] = _TWO32
        self.thr = thr[:-1]  # a word is always < 2^32, so the last threshold never counts
        starts = np.arange(1 << (32 - _GRID_SHIFT), dtype=np.uint64) << np.uint64(_GRID_SHIFT)
        lo = np.searchsorted(self.thr, starts, side="right")
        hi = np.searchsorted(self.thr, starts + np.uint64((1 << _GRID_SHIFT) - 1), side="right")
        self.table = lo.astype(np.int32)
        self.ambiguous = lo != hi

    def __call__(self, words: np.ndarray) -> np.ndarray:
        idx = words >> np.uint32(_GRID_SHIFT)
        out = self.table[idx]
        rows = np.flatnonzero(self.ambiguous[idx])
        if rows.size:
            out[rows] = np.searchsorted(self.thr, words[rows].astype(np.uint64), side="right")
        return out


class _Generator:
    """Everything derived from the parameters once; ``block(b, m)`` draws rows of block b."""

    def __init__(self, p: _Params) -> None:
        self.p = p
        self.columns = [_column(j) for j in range(p.n_qi)]
        self.qi_samplers = [_Sampler(c.pmf) for c in self.columns]
        v = p.sa_values
        self.global_sampler = _Sampler(_zipf(v, p.zipf_alpha))
        self.cell_sampler = _Sampler(_zipf(v, max(p.zipf_alpha, 1.0)))
        self.cell_sizes = [len(c.pmf) for c in self.columns[:_CELL_QIS]]
        n_cells = int(np.prod(self.cell_sizes))
        units = np.array([a for a in range(1, v) if math.gcd(a, v) == 1] or [1], np.int64)
        rng = np.random.default_rng([p.seed, _TWO32 - 1, 0xA5A5])
        self.cell_b = rng.integers(0, v, size=n_cells, dtype=np.int64)
        self.cell_a = units[rng.integers(0, len(units), size=n_cells)]
        mix = round(p.correlation * _TWO32)
        self.mix_threshold = np.uint64(mix)
        self._decoders: list | None = None

    def cell_index(self, qi: np.ndarray) -> np.ndarray:
        h = np.zeros(len(qi), dtype=np.int64)
        for j, size in enumerate(self.cell_sizes):
            h = h * size + qi[:, j]
        return h

    def block(self, b: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        p = self.p
        words = np.random.default_rng([p.seed, b]).integers(
            0, _TWO32, size=(m, p.n_qi + 2), dtype=np.uint32)
        qi = np.empty((m, p.n_qi), dtype=np.int32)
        for j, sampler in enumerate(self.qi_samplers):
            qi[:, j] = sampler(words[:, j])
        sa_words = words[:, p.n_qi + 1]
        if p.correlation == 0.0:
            return qi, self.global_sampler(sa_words)
        ranks = self.cell_sampler(sa_words).astype(np.int64)
        h = self.cell_index(qi)
        local = ((self.cell_a[h] * ranks + self.cell_b[h]) % p.sa_values).astype(np.int32)
        if p.correlation == 1.0:
            return qi, local
        correlated = words[:, p.n_qi].astype(np.uint64) < self.mix_threshold
        return qi, np.where(correlated, local, self.global_sampler(sa_words))

    def iter_blocks(self, n_rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for b, start in enumerate(range(0, n_rows, BLOCK_ROWS)):
            yield self.block(b, min(BLOCK_ROWS, n_rows - start))

    def decoders(self) -> list:
        """Per QI column: a value array (numeric) or a CategoricalDtype; then the SA dtype."""
        if self._decoders is None:
            out = []
            for c in self.columns:
                if c.kind == "numeric":
                    values = np.asarray(c.values)
                    out.append(values.astype(np.int16 if values.max() < 2**15 else np.int32))
                else:
                    out.append(pd.CategoricalDtype(c.values, ordered=c.kind == "ordinal"))
            out.append(pd.CategoricalDtype(_sa_labels(self.p.sa_values)))
            self._decoders = out
        return self._decoders

    def codes(self, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        qi = np.empty((n_rows, self.p.n_qi), dtype=np.int32)
        sa = np.empty(n_rows, dtype=np.int32)
        for b, (q, s) in enumerate(self.iter_blocks(n_rows)):
            qi[b * BLOCK_ROWS:b * BLOCK_ROWS + len(s)] = q
            sa[b * BLOCK_ROWS:b * BLOCK_ROWS + len(s)] = s
        return qi, sa


def _rechunk(blocks, chunk_rows: int):
    """Re-slice a stream of (qi, sa) blocks into chunks of exactly chunk_rows rows."""
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    have = 0
    for qi, sa in blocks:
        pending.append((qi, sa))
        have += len(sa)
        while have >= chunk_rows:
            qi_all = np.concatenate([q for q, _ in pending]) if len(pending) > 1 else pending[0][0]
            sa_all = np.concatenate([s for _, s in pending]) if len(pending) > 1 else pending[0][1]
            yield qi_all[:chunk_rows], sa_all[:chunk_rows]
            pending = [(qi_all[chunk_rows:], sa_all[chunk_rows:])]
            have -= chunk_rows
    if have:
        yield (np.concatenate([q for q, _ in pending]), np.concatenate([s for _, s in pending]))


# --------------------------------------------------------------------------- public API


def synthetic_schema(n_qi: int = 7) -> dict:
    """Column name -> kind (``"numeric"``, ``"categorical"`` or ``"ordinal"``) for the QIs, in
    column order, plus ``"sa"`` -> the SA column name (``"occupation"``)."""
    n_qi = _check_int("n_qi", n_qi, 1)
    schema = {c.name: c.kind for c in (_column(j) for j in range(n_qi))}
    schema["sa"] = SA_NAME
    return schema


def synthetic_domains(n_qi: int = 7, sa_values: int = 14) -> dict[str, list]:
    """Column name -> the value of each code (QIs in column order, then the SA).

    ``synthetic_codes`` returns codes into these lists; numeric columns list numbers in
    increasing order, so code order is value order."""
    n_qi = _check_int("n_qi", n_qi, 1)
    sa_values = _check_int("sa_values", sa_values, 1)
    out = {c.name: list(np.asarray(c.values).tolist()) for c in map(_column, range(n_qi))}
    out[SA_NAME] = _sa_labels(sa_values)
    return out


def synthetic_marginals(*, seed: int = 0, n_qi: int = 7, sa_values: int = 14,
                        zipf_alpha: float = 1.0, correlation: float = 0.3
                        ) -> dict[str, np.ndarray]:
    """Exact marginal probability of each code of each column (before the 2^-32
    quantisation), including the SA mixture ``(1-c)·z_alpha + c·Σ_h P(h)·z_beta∘pi_h^{-1}``."""
    gen = _Generator(_params(seed, n_qi, sa_values, zipf_alpha, correlation))
    out = {c.name: c.pmf.copy() for c in gen.columns}
    v = gen.p.sa_values
    sa = (1.0 - gen.p.correlation) * _zipf(v, gen.p.zipf_alpha)
    if gen.p.correlation > 0.0:
        p_cell = np.ones(1)
        for c in gen.columns[:_CELL_QIS]:
            p_cell = np.multiply.outer(p_cell, c.pmf).ravel()
        z_beta = _zipf(v, max(gen.p.zipf_alpha, 1.0))
        local = np.zeros(v)
        step = max(1, (1 << 22) // v)
        for lo in range(0, len(p_cell), step):
            a, b = gen.cell_a[lo:lo + step], gen.cell_b[lo:lo + step]
            target = (np.outer(a, np.arange(v)) + b[:, None]) % v
            local += np.bincount(target.ravel(), np.outer(p_cell[lo:lo + step], z_beta).ravel(),
                                 minlength=v)
        sa += gen.p.correlation * local
    out[SA_NAME] = sa
    return out


def synthetic_codes(n_rows: int, *, seed: int = 0, n_qi: int = 7, sa_values: int = 14,
                    zipf_alpha: float = 1.0, correlation: float = 0.3
                    ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The fast path: ``(qi, sa, domain_sizes)`` with ``qi`` an ``(n_rows, n_qi)`` int32 code
    matrix, ``sa`` an ``(n_rows,)`` int32 code vector and ``domain_sizes`` the number of
    codes of each QI column (the SA has ``sa_values``).  Decode with
    :func:`synthetic_domains`.  Same rows as :func:`synthetic_census`."""
    n_rows = _check_int("n_rows", n_rows, 0)
    gen = _Generator(_params(seed, n_qi, sa_values, zipf_alpha, correlation))
    qi, sa = gen.codes(n_rows)
    return qi, sa, [len(c.pmf) for c in gen.columns]


def iter_synthetic_codes(n_rows: int, *, seed: int = 0, n_qi: int = 7, sa_values: int = 14,
                         zipf_alpha: float = 1.0, correlation: float = 0.3,
                         chunk_rows: int = 1_000_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream ``(qi, sa)`` code chunks of ``chunk_rows`` rows (the last may be shorter);
    their concatenation equals :func:`synthetic_codes` whatever ``chunk_rows`` is."""
    n_rows = _check_int("n_rows", n_rows, 0)
    chunk_rows = _check_int("chunk_rows", chunk_rows, 1)
    gen = _Generator(_params(seed, n_qi, sa_values, zipf_alpha, correlation))
    return _rechunk(gen.iter_blocks(n_rows), chunk_rows)


def _frame(gen: _Generator, qi: np.ndarray, sa: np.ndarray, start: int) -> pd.DataFrame:
    data = {}
    for j, (c, decode) in enumerate(zip(gen.columns, gen.decoders())):
        if c.kind == "numeric":
            data[c.name] = decode[qi[:, j]]
        else:
            data[c.name] = pd.Categorical.from_codes(qi[:, j], dtype=decode)
    data[SA_NAME] = pd.Categorical.from_codes(sa, dtype=gen.decoders()[-1])
    return pd.DataFrame(data, index=pd.RangeIndex(start, start + len(sa)))


def iter_synthetic_census(n_rows: int, *, seed: int = 0, n_qi: int = 7, sa_values: int = 14,
                          zipf_alpha: float = 1.0, correlation: float = 0.3,
                          chunk_rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
    """Stream the table of :func:`synthetic_census` as DataFrames of ``chunk_rows`` rows
    (the last may be shorter; ``n_rows = 0`` gives one empty frame), indexed by global row
    number.  ``pd.concat(chunks)`` equals ``synthetic_census(n_rows, ...)`` exactly, for any
    ``chunk_rows``."""
    n_rows = _check_int("n_rows", n_rows, 0)
    chunk_rows = _check_int("chunk_rows", chunk_rows, 1)
    gen = _Generator(_params(seed, n_qi, sa_values, zipf_alpha, correlation))
    return _iter_frames(gen, n_rows, chunk_rows)


def _iter_frames(gen: _Generator, n_rows: int, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if n_rows == 0:
        empty = np.empty((0, gen.p.n_qi), dtype=np.int32)
        yield _frame(gen, empty, np.empty(0, dtype=np.int32), 0)
        return
    start = 0
    for qi, sa in _rechunk(gen.iter_blocks(n_rows), chunk_rows):
        yield _frame(gen, qi, sa, start)
        start += len(sa)


def synthetic_census(n_rows: int, *, seed: int = 0, n_qi: int = 7, sa_values: int = 14,
                     zipf_alpha: float = 1.0, correlation: float = 0.3,
                     chunk_rows: int = 1_000_000) -> pd.DataFrame:
    """A deterministic census-like table of ``n_rows`` rows: ``n_qi`` QI columns (see the
    module docstring; categorical ones are pandas ``Categorical``, education ordered) and the
    SA ``occupation``.  Same ``(n_rows, seed, parameters)`` -> identical output.  The data
    never depend on ``chunk_rows``; it is accepted (and validated) for symmetry with
    :func:`iter_synthetic_census`, which is the way to stream tables too large for memory.

    Raises :class:`~openbook.errors.ParameterError` (naming the parameter) when
    ``n_rows < 0``, ``n_qi < 1``, ``sa_values < 1``, ``zipf_alpha < 0``,
    ``correlation`` outside ``[0, 1]``, ``seed < 0`` or ``chunk_rows < 1``."""
    n_rows = _check_int("n_rows", n_rows, 0)
    chunk_rows = _check_int("chunk_rows", chunk_rows, 1)
    gen = _Generator(_params(seed, n_qi, sa_values, zipf_alpha, correlation))
    return _frame(gen, *gen.codes(n_rows), 0)
