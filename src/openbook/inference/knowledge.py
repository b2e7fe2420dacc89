"""QI-based distributions ``G_A`` mined from the original table: the worst-case
distribution-based background knowledge of paper 003 (§2, §5).

For a QI attribute set ``A`` a *signature* ``s`` is a combination of values of ``A``; the
QI-based distribution ``G_A`` holds ``p(s : x)``, the probability that a tuple matching
``s`` is linked to SA value ``x``. The worst case (§1, §2) is an adversary whose knowledge is
*exact*: ``p(s : x)`` is the frequency of ``x`` among the original table's tuples matching
``s``. Only signatures with at least ``min_support`` tuples ("large samples", §5) are part
of the knowledge; a tuple whose signature is rarer gets the dataset-based distribution (the
SA distribution of the whole table, the knowledge t-closeness assumes, §1 Example 3). That
fallback is strictly positive on every value present, so every group of original tuples has
a world of positive probability (its true one).

Mining is vectorised: one mixed-radix key per row and attribute set, ``np.unique`` and one
``bincount``; all 31 subsets of Adult's five QIs take a few tens of milliseconds.

Both sides use it: ART (:mod:`openbook.algorithms.art`) grows its groups on the knowledge
mined from the table it anonymizes, and the background adversary
(:mod:`openbook.attacks.robustness`) audits a release against the knowledge mined from the
original table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from ..data.table import EncodedTable
from ..errors import DataError, ParameterError

#: default minimum number of tuples of a signature for its distribution to be "large"
DEFAULT_MIN_SUPPORT = 100


@dataclass(eq=False)
class AttributeSetKnowledge:
    """``G_A`` for one attribute set ``A``: sorted signature keys, their distributions
    (``probs[i, x] = p(s_i : x)``) and supports; ``probs[-1]`` is the fallback
    (dataset-based) distribution used for rare or unseen signatures."""

    attrs: tuple[int, ...]
    names: tuple[str, ...]
    radix: np.ndarray  # cardinality of each attribute of A (mixed-radix key)
    keys: np.ndarray  # int64, sorted, one per large signature
    probs: np.ndarray  # (n_sig + 1, n_sa) float64
    support: np.ndarray  # (n_sig,) int64

    @property
    def n_signatures(self) -> int:
        return int(self.keys.size)

    def key_of(self, qi_codes: np.ndarray) -> np.ndarray:
        key = np.zeros(qi_codes.shape[0], dtype=np.int64)
        for a, card in zip(self.attrs, self.radix.tolist()):
            key = key * int(card) + qi_codes[:, a].astype(np.int64)
        return key

    def signature_of(self, qi_codes: np.ndarray) -> np.ndarray:
        """Row index into ``probs`` for each row of ``qi_codes`` (full QI code matrix);
        ``n_signatures`` (the fallback row) when the signature is not a large sample."""
        key = self.key_of(qi_codes)
        pos = np.searchsorted(self.keys, key)
        pos_c = np.minimum(pos, max(self.keys.size - 1, 0))
        hit = (pos < self.keys.size) & (self.keys[pos_c] == key) if self.keys.size else np.zeros(key.size, bool)
        return np.where(hit, pos_c, self.keys.size).astype(np.int64)

    def row_probs(self, qi_codes: np.ndarray) -> np.ndarray:
        """``(n, n_sa)`` matrix of ``p(s(t) : x)`` for each row ``t``."""
        return self.probs[self.signature_of(qi_codes)]


@dataclass(eq=False)
class Knowledge:
    """The adversary's background knowledge: ``G_A`` for every mined attribute set."""

    qi_names: list[str]
    qi_categories: list[np.ndarray]
    sa_values: np.ndarray
    sets: list[AttributeSetKnowledge]
    global_dist: np.ndarray
    min_support: int
    n_rows: int
    params: dict = field(default_factory=dict)

    @property
    def n_sa(self) -> int:
        return int(self.sa_values.size)

    def stacked(self, qi_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All distributions stacked into one ``(R, n_sa)`` matrix plus an ``(n_sets, n)``
        matrix of row indices into it, for numba kernels."""
        offs = np.cumsum([0] + [s.probs.shape[0] for s in self.sets])
        P = np.vstack([s.probs for s in self.sets]) if self.sets else np.zeros((0, self.n_sa))
        idx = np.empty((len(self.sets), qi_codes.shape[0]), dtype=np.int64)
        for i, s in enumerate(self.sets):
            idx[i] = s.signature_of(qi_codes) + offs[i]
        return np.ascontiguousarray(P), idx

    def set_names(self) -> list[str]:
        return ["{" + ",".join(s.names) + "}" for s in self.sets]

    def encode_frame(self, frame: pd.DataFrame) -> np.ndarray:
        """QI code matrix of a frame holding the QI columns as values (e.g. a bucketized
        release's QI-table), in this knowledge's coding. Values never seen get code -1's
        stand-in: a code outside every key, hence the fallback distribution."""
        out = np.empty((len(frame), len(self.qi_names)), dtype=np.int64)
        for j, (name, cats) in enumerate(zip(self.qi_names, self.qi_categories)):
            if name not in frame.columns:
                raise DataError(f"the release lacks QI column {name!r} of the knowledge")
            codes = pd.Index(np.asarray(cats).astype(str)).get_indexer(frame[name].astype(str))
            out[:, j] = np.where(codes < 0, len(cats), codes)  # unseen value: never a large signature
        return out


def attribute_sets(n_qi: int, max_size: int | None = None) -> list[tuple[int, ...]]:
    """All non-empty subsets of ``range(n_qi)`` of size up to ``max_size`` (default all),
    by size then lexicographically."""
    if max_size is None:
        max_size = n_qi
    if not 1 <= max_size:
        raise ParameterError(f"max_size={max_size} must be >= 1", parameter="max_size", value=max_size)
    return [c for k in range(1, min(max_size, n_qi) + 1) for c in combinations(range(n_qi), k)]


def mine_knowledge(table: EncodedTable, *, max_size: int | None = None, min_support: int = DEFAULT_MIN_SUPPORT,
                   qi: Sequence[str] | None = None, sets: Sequence[Sequence[str]] | None = None) -> Knowledge:
    """Mine ``G_A`` from the original table for every attribute set (paper 003 §2, §5).

    Parameters
    ----------
    table: the original table (the adversary's knowledge is exact: the worst case).
    max_size: largest attribute set (default: all subsets; at most 2^|QI| - 1 sets).
    min_support: least number of tuples of a signature for its distribution to count as a
        large sample; rarer signatures get the dataset-based distribution.
    qi: restrict to these QI columns (default all of the table's QIs).
    sets: explicit attribute sets (lists of QI names) instead of all subsets.
    """
    if isinstance(min_support, bool) or int(min_support) != min_support or min_support < 1:
        raise ParameterError(f"min_support={min_support!r} must be an integer >= 1", parameter="min_support",
                             value=min_support)
    names = list(table.qi_names)
    use = names if qi is None else list(qi)
    for col in use:
        if col not in names:
            raise ParameterError(f"unknown QI column {col!r} (QIs: {', '.join(names)})", parameter="qi", value=col)
    if sets is None:
        if max_size is None and len(use) > 6:
            max_size = 3
        subsets = [tuple(names.index(use[i]) for i in c) for c in attribute_sets(len(use), max_size)]
    else:
        subsets = []
        for s in sets:
            for col in s:
                if col not in names:
                    raise ParameterError(f"unknown QI column {col!r} in attribute set {list(s)}", parameter="sets",
                                         value=col)
            subsets.append(tuple(names.index(col) for col in s))
    qc = table.qi_codes
    sa = table.sa_codes.astype(np.int64)
    K = table.columns[table.sa_name].n_values
    n = table.n_rows
    card = table.qi_cardinalities
    glob = np.bincount(sa, minlength=K).astype(np.float64)
    glob /= max(glob.sum(), 1.0)
    out: list[AttributeSetKnowledge] = []
    for attrs in subsets:
        radix = card[list(attrs)] + 1  # +1: room for an "unseen value" code in releases
        if np.prod(radix.astype(np.float64)) >= 2.0**62:
            raise ParameterError(f"attribute set {[names[a] for a in attrs]} has too many signatures to key",
                                 parameter="sets")
        key = np.zeros(n, dtype=np.int64)
        for a, c in zip(attrs, radix.tolist()):
            key = key * int(c) + qc[:, a].astype(np.int64)
        uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        counts = np.bincount(inv * K + sa, minlength=uniq.size * K).reshape(uniq.size, K).astype(np.float64)
        large = cnt >= min_support
        probs = counts[large] / cnt[large, None]
        out.append(AttributeSetKnowledge(
            attrs=tuple(attrs), names=tuple(names[a] for a in attrs), radix=radix.astype(np.int64),
            keys=uniq[large], probs=np.vstack([probs, glob[None, :]]), support=cnt[large].astype(np.int64)))
    return Knowledge(
        qi_names=names, qi_categories=[np.asarray(table.columns[nm].categories) for nm in names],
        sa_values=np.asarray(table.columns[table.sa_name].categories), sets=out, global_dist=glob,
        min_support=int(min_support), n_rows=n, params={"max_size": max_size, "min_support": int(min_support),
                                                         "sets": [list(s.names) for s in out]})
