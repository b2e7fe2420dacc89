"""Linkage of several releases (paper 002, Rameshwar & Tandon, §2.3 and Table 2).

An adversary holds ``t`` releases ``D̄_1..D̄_t`` in which a person of interest participates
and knows the person's quasi-identifier ``q``. In release ``j`` they find the equivalence
class ``q̄_j`` that contains ``q`` and form the *linkage*

    n^(q)_[t](s) = min_j n^(q̄_j)(s),        L^(q)_[t] = {(s, n^(q)_[t](s)) : n^(q)_[t](s) > 0},

whose number of distinct values is the *post-linkage diversity* of the person (the ℓ of the
post-linkage dataset ``D̄^(q)_[t]``, whose records are identified by ``∩_j q̄_j``).

What this module computes, vectorised over a whole population of people:

* :func:`match_release` — for each person, the class(es) of one release that contain them:
  a generalized release by its labels (a value equal to the label, a numeric range
  ``[a-b]`` / ``[a-b)``, ``*``, or a node of the column's hierarchy when the hierarchy is
  given), a bucketized release through its QI-table (the buckets whose QI-table rows carry
  exactly the person's QI values). When a person's ``q`` lies in several classes of one
  release (a bucketized QI value that appears in several buckets, or overlapping local
  recodings) the adversary cannot tell them apart: the counts of those classes are added
  (the union of their SA values is what the adversary learns). A release in which no class
  contains ``q`` is ignored for that person (the person cannot be in it).
* :func:`linkage` — the per-SA-value minimum over the matched releases, the post-linkage
  diversity per person, its distribution, the fraction of people below ℓ and at 1
  (disclosure), the pairwise linkage with each release, and the composition/intersection
  view (:meth:`LinkageResult.intersection_view`: one row per combination of matched
  classes, i.e. per post-linkage class ``∩_j q̄_j``).
* :func:`linkage_counts` — the same minimum from ready-made class assignments (the fast path
  used by the simulations of ``algorithms.ldelta``).
* :func:`bucket_shares`, :func:`published_multiplicity` — what the exact posterior of
  :mod:`.linkage_posterior` needs besides the matching: how many records of a bucketized
  QI-table carry a person's QI values in each bucket, and how many people a QI tuple of the
  default population stands for.

The worst case over all ℓ-diverse releases (Proposition 3.1, Corollary 3.3) is in
:mod:`openbook.attacks.worst_case_linkage`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from numba import njit

from ..data.grouping import group_ids
from ..errors import HierarchyError, ParameterError, SchemaError
from ..release.release import GID, Release

_RANGE = re.compile(r"^\[\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*-\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*([\])])$")
_TOP = "*"


# ---------------------------------------------------------------------------------------
# label coverage
# ---------------------------------------------------------------------------------------
def _norm(v: Any) -> str:
    """Text form of a value that compares equal to a release label (``39.0`` → ``"39"``)."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    s = str(v).strip()
    try:
        f = float(s)
    except ValueError:
        return s
    return str(int(f)) if f.is_integer() and "." in s and s.replace(".", "", 1).lstrip("+-").isdigit() else s


def _norm_array(values: Any) -> np.ndarray:
    """Normalised text of every value, computing :func:`_norm` once per distinct value."""
    codes, uniq = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    normed = np.array([_norm(v) for v in uniq], dtype=object)
    return normed[codes] if len(codes) else np.zeros(0, dtype=object)


def label_coverage(labels: Sequence[str], values: Sequence[Any], hierarchy: Any = None) -> np.ndarray:
    """Boolean ``(n_labels, n_values)``: does published label ``k`` contain raw value ``v``?

    A label contains a value when it equals the value's text, is ``*``, is a numeric range
    ``[a-b]`` (inclusive) or ``[a-b)`` (half-open) around it, or — when ``hierarchy`` is
    given — is a node of the hierarchy whose leaves include the value.
    """
    labs = np.asarray([str(x).strip() for x in labels], dtype=object)
    vals = _norm_array(values)
    cov = labs[:, None] == vals[None, :]
    cov[labs == _TOP, :] = True
    num = np.full(len(vals), np.nan)
    for i, v in enumerate(vals):
        try:
            num[i] = float(v)
        except ValueError:
            pass
    for k, lab in enumerate(labs):
        m = _RANGE.match(lab)
        if m:
            lo, hi = float(m.group(1)), float(m.group(2))
            cov[k] |= (num >= lo) & ((num <= hi) if m.group(3) == "]" else (num < hi))
    if hierarchy is not None:
        leaf_text = _norm_array(hierarchy.leaves)
        codes = pd.Index(leaf_text).get_indexer(vals)
        known = codes >= 0
        for k, lab in enumerate(labs):
            try:
                node = int(hierarchy.nodes_of([lab])[0])
            except HierarchyError:
                continue
            mask = hierarchy.leaf_mask(node)
            cov[k, known] |= mask[codes[known]]
    return cov


# ---------------------------------------------------------------------------------------
# people → classes
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _match_kernel(u_vals, pivot, cand_ptr, cand_idx, class_lab, cov_flat, offs, nvals):  # pragma: no cover - numba
    n_u, d = u_vals.shape
    cnt = np.zeros(n_u + 1, dtype=np.int64)
    for pass_ in range(2):
        if pass_ == 1:
            for i in range(n_u):
                cnt[i + 1] += cnt[i]
            out = np.empty(cnt[n_u], dtype=np.int64)
            pos = cnt[:-1].copy()
        else:
            out = np.empty(0, dtype=np.int64)
            pos = np.zeros(0, dtype=np.int64)
        for u in range(n_u):
            v = u_vals[u, pivot]
            for k in range(cand_ptr[v], cand_ptr[v + 1]):
                c = cand_idx[k]
                ok = True
                for j in range(d):
                    if j == pivot:
                        continue
                    if not cov_flat[offs[j] + class_lab[c, j] * nvals[j] + u_vals[u, j]]:
                        ok = False
                        break
                if ok:
                    if pass_ == 0:
                        cnt[u + 1] += 1
                    else:
                        out[pos[u]] = c
                        pos[u] += 1
    return cnt, out


def _expand_csr(ptr_u: np.ndarray, idx_u: np.ndarray, u_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR over distinct tuples → CSR over people (people share their tuple's classes)."""
    lens = np.diff(ptr_u)[u_of]
    ptr = np.zeros(len(u_of) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    starts = ptr_u[:-1][u_of]
    total = int(ptr[-1])
    if total == 0:
        return ptr, np.zeros(0, dtype=np.int64)
    rep = np.repeat(np.arange(len(u_of)), lens)
    offset = np.arange(total) - ptr[:-1][rep]
    return ptr, idx_u[starts[rep] + offset]


def _people_column(people: pd.DataFrame, col: str, memo: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """Codes and normalised distinct values of one population column (memoised)."""
    if memo is not None and col in memo:
        return memo[col]
    codes, uniq = pd.factorize(np.asarray(people[col].to_numpy(), dtype=object), use_na_sentinel=False)
    normed = np.array([_norm(v) for v in uniq], dtype=object)
    c2, vals = pd.factorize(normed)
    out = (c2[codes].astype(np.int64), np.asarray(vals, dtype=object))
    if memo is not None:
        memo[col] = out
    return out


def match_release(release: Release, people: pd.DataFrame, *,
                  hierarchies: Mapping[str, Any] | None = None,
                  memo: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Classes of ``release`` containing each person, as CSR ``(indptr, class_ids)``.

    ``people`` holds the raw QI values (one row per person, the release's QI columns);
    class ids are those of :meth:`Release.classes` / :meth:`Release.sa_counts`.
    """
    missing = [c for c in release.qi if c not in people.columns]
    if missing:
        raise SchemaError(f"the population lacks QI column {missing[0]!r} of the release", column=missing[0])
    if release.kind == "bucketized":
        return _match_bucketized(release, people)
    hierarchies = dict(hierarchies or {})
    cls, n_cls = release.classes()
    if n_cls == 0 or len(people) == 0:
        return np.zeros(len(people) + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first = np.full(n_cls, -1, dtype=np.int64)
    order = np.arange(len(cls))[::-1]
    first[cls[order]] = order  # smallest row of each class
    d = len(release.qi)
    class_lab = np.empty((n_cls, d), dtype=np.int64)
    val_ids = np.empty((len(people), d), dtype=np.int64)
    covs, nvals = [], []
    for j, col in enumerate(release.qi):
        lab_codes, labs = pd.factorize(np.asarray([str(x) for x in release.data[col].to_numpy()[first]], dtype=object))
        class_lab[:, j] = lab_codes
        v_codes, vals = _people_column(people, col, memo)
        val_ids[:, j] = v_codes
        covs.append(label_coverage(list(labs), list(vals), hierarchies.get(col)))
        nvals.append(len(vals))
    u_of, n_u = group_ids([val_ids[:, j] for j in range(d)])
    rep = np.zeros(n_u, dtype=np.int64)
    rep[u_of[::-1]] = np.arange(len(u_of))[::-1]
    u_vals = val_ids[rep]
    # pivot: the column whose label test leaves the fewest candidate classes per person
    freq_cost = [float((covs[j][class_lab[:, j]].sum(axis=0)[u_vals[:, j]]).sum()) for j in range(d)]
    pivot = int(np.argmin(freq_cost))
    a = covs[pivot][class_lab[:, pivot]].T  # (n_values_pivot, n_classes)
    vv, cc = np.nonzero(a)
    cand_ptr = np.zeros(a.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(vv, minlength=a.shape[0]), out=cand_ptr[1:])
    offs = np.zeros(d, dtype=np.int64)
    offs[1:] = np.cumsum([c.size for c in covs])[:-1]
    cov_flat = np.concatenate([c.ravel() for c in covs]).astype(np.bool_)
    ptr_u, idx_u = _match_kernel(u_vals, pivot, cand_ptr, cc.astype(np.int64), class_lab, cov_flat,
                                 offs, np.asarray(nvals, dtype=np.int64))
    return _expand_csr(ptr_u, idx_u, u_of)


def _match_bucketized(release: Release, people: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    n_rel = len(release.data)
    gid_codes, _ = pd.factorize(release.data[GID], sort=True)
    cols = []
    for col in release.qi:
        both = np.concatenate([_norm_array(release.data[col].to_numpy()), _norm_array(people[col].to_numpy())])
        cols.append(pd.factorize(both)[0])
    key, _ = group_ids(cols)
    rk, pk = key[:n_rel], key[n_rel:]
    pairs = np.unique(np.stack([rk, gid_codes.astype(np.int64)], axis=1), axis=0)  # sorted by key, then gid
    lo = np.searchsorted(pairs[:, 0], pk, side="left")
    hi = np.searchsorted(pairs[:, 0], pk, side="right")
    lens = hi - lo
    ptr = np.zeros(len(pk) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    rep = np.repeat(np.arange(len(pk)), lens)
    idx = pairs[lo[rep] + (np.arange(int(ptr[-1])) - ptr[:-1][rep]), 1] if ptr[-1] else np.zeros(0, dtype=np.int64)
    return ptr, idx.astype(np.int64)


def bucket_shares(release: Release, people: pd.DataFrame, ptr: np.ndarray,
                  idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a bucketized release's QI-table tells of each person beyond their buckets
    (:mod:`.linkage_posterior`): the id of their QI values, how many QI-table rows carry them
    in each of their buckets (aligned with ``idx`` of :func:`match_release`) and in all."""
    n_rel = len(release.data)
    gid, uniq = pd.factorize(release.data[GID], sort=True)
    cols = [pd.factorize(np.concatenate([_norm_array(release.data[c].to_numpy()),
                                         _norm_array(people[c].to_numpy())]))[0] for c in release.qi]
    key, n_keys = group_ids(cols)
    rk, pk = key[:n_rel], key[n_rel:]
    pair = rk * len(uniq) + gid.astype(np.int64)
    vals, cnt = np.unique(pair, return_counts=True)
    want = np.repeat(pk, np.diff(ptr)) * len(uniq) + idx
    at = np.clip(np.searchsorted(vals, want), 0, max(len(vals) - 1, 0))
    share = np.where(vals[at] == want, cnt[at], 0) if len(vals) else np.zeros(len(want), dtype=np.int64)
    return pk.astype(np.int64), share.astype(np.int64), np.bincount(rk, minlength=n_keys)[pk].astype(np.int64)


def published_multiplicity(releases: Sequence[Release], population: pd.DataFrame) -> np.ndarray:
    """How many people each row of ``population`` (QI tuples) stands for: the most records
    any release with these QI columns publishes with exactly those values (a bucketized
    QI-table, a generalized release's single-value labels), at least 1 — the fewest people
    consistent with every release."""
    qi = list(population.columns)
    out = np.ones(len(population), dtype=np.int64)
    for r in releases:
        if set(r.qi) != set(qi) or not len(r.data) or not len(population):
            continue
        both = [pd.factorize(np.concatenate([_norm_array(r.data[c].to_numpy()),
                                             _norm_array(population[c].to_numpy())]))[0] for c in qi]
        key, n_keys = group_ids(both)
        out = np.maximum(out, np.bincount(key[:len(r.data)], minlength=n_keys)[key[len(r.data):]])
    return out


# ---------------------------------------------------------------------------------------
# the linkage
# ---------------------------------------------------------------------------------------
def _person_counts(counts: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per-person SA counts of one release: the sum over the classes that contain them."""
    n = len(ptr) - 1
    lens = np.diff(ptr)
    out = np.zeros((n, counts.shape[1]), dtype=np.int64)
    if (lens <= 1).all():
        has = lens == 1
        out[has] = counts[idx]
        return out
    rows = np.repeat(np.arange(n), lens)
    np.add.at(out, rows, counts[idx])
    return out


def linkage_counts(class_of: np.ndarray, counts: Sequence[np.ndarray]) -> np.ndarray:
    """``n^(q)_[t](s)`` from ready-made assignments: ``class_of`` is ``(n_people, t)`` (class
    of each person in each release, ``-1`` = not in that release, which is then ignored),
    ``counts[j]`` the ``(n_classes_j, n_sa)`` counts of release ``j`` over one SA vocabulary.
    People in no release get all-zero counts."""
    class_of = np.asarray(class_of, dtype=np.int64)
    if class_of.ndim != 2 or class_of.shape[1] != len(counts):
        raise ParameterError("class_of must be (n_people, t) with one counts matrix per release", parameter="class_of")
    n, t = class_of.shape
    n_sa = counts[0].shape[1]
    big = np.iinfo(np.int64).max
    out = np.full((n, n_sa), big, dtype=np.int64)
    for j in range(t):
        c = class_of[:, j]
        has = c >= 0
        out[has] = np.minimum(out[has], np.asarray(counts[j], dtype=np.int64)[c[has]])
    out[out == big] = 0
    return out


@dataclass
class LinkageResult:
    """The linkage of ``t`` releases for every person of a population (paper 002 §2.3).

    ``counts[i, s]`` is ``n^(q_i)_[t](s)``; ``matched[i, j]`` whether release ``j`` has a
    class containing person ``i``; ``class_ids[i, j]`` that class (``-1`` none, ``-2``
    several, in which case their counts were added); ``pairwise[i, j]`` the diversity of
    release ``j`` alone for person ``i`` (0 where unmatched).
    """

    counts: np.ndarray
    sa_values: np.ndarray
    matched: np.ndarray
    class_ids: np.ndarray
    per_release: np.ndarray
    release_names: list[str]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_people(self) -> int:
        return int(self.counts.shape[0])

    @property
    def diversity(self) -> np.ndarray:
        """Post-linkage diversity ``|L^(q)_[t]|`` per person (0 for people in no release)."""
        return (self.counts > 0).sum(axis=1)

    @property
    def in_any(self) -> np.ndarray:
        return np.asarray(self.matched.any(axis=1))

    def below(self, l: int) -> np.ndarray:
        """People in at least one release whose post-linkage diversity is below ``l``."""
        return self.in_any & (self.diversity < l)

    def disclosed(self) -> np.ndarray:
        """People whose SA value the linkage reveals exactly (diversity 1)."""
        return self.in_any & (self.diversity == 1)

    def distribution(self) -> dict[int, int]:
        d = self.diversity[self.in_any]
        vals, cnt = np.unique(d, return_counts=True)
        return {int(v): int(c) for v, c in zip(vals, cnt)}

    def summary(self, l: int | None = None) -> dict[str, Any]:
        inn = self.in_any
        n = int(inn.sum())
        d = self.diversity[inn]
        single = self.per_release[inn]
        single = np.where(self.matched[inn], single, np.iinfo(np.int64).max)
        out: dict[str, Any] = {
            "releases": list(self.release_names),
            "n_people": n,
            "n_people_in_no_release": int((~inn).sum()),
            "min_diversity": int(d.min()) if n else None,
            "min_single_release_diversity": int(single.min()) if n else None,
            "mean_diversity": float(d.mean()) if n else None,
            "distribution": self.distribution(),
            "n_disclosed": int((d == 1).sum()),
            "fraction_disclosed": float((d == 1).mean()) if n else 0.0,
        }
        if l is not None:
            out["l"] = int(l)
            b = d < l
            out["n_below_l"] = int(b.sum())
            out["fraction_below_l"] = float(b.mean()) if n else 0.0
            out["n_below_l_in_a_single_release"] = int((single < l).sum())
        return out

    def intersection_view(self) -> pd.DataFrame:
        """Composition / intersection view: one row per post-linkage class ``∩_j q̄_j``
        (distinct combination of matched classes), with its number of people, diversity and
        linked counts ``{s: n_[t](s)}``."""
        keep = np.flatnonzero(self.in_any)
        if keep.size == 0:
            return pd.DataFrame(columns=["classes", "n_people", "diversity", "linkage"])
        gid, n = group_ids([self.class_ids[keep, j] + 2 for j in range(self.class_ids.shape[1])])
        first = np.full(n, -1, dtype=np.int64)
        first[gid[::-1]] = keep[::-1]
        sizes = np.bincount(gid, minlength=n)
        rows = []
        for g in range(n):
            i = first[g]
            nz = np.flatnonzero(self.counts[i])
            rows.append({
                "classes": tuple(int(x) for x in self.class_ids[i]),
                "n_people": int(sizes[g]),
                "diversity": int(nz.size),
                "linkage": {str(self.sa_values[s]): int(self.counts[i, s]) for s in nz},
            })
        return pd.DataFrame(rows).sort_values(["diversity", "n_people"], ascending=[True, False]).reset_index(drop=True)


def linkage(releases: Sequence[Release], population: pd.DataFrame, *,
            hierarchies: Mapping[str, Any] | None = None,
            names: Sequence[str] | None = None, cache: dict | None = None) -> LinkageResult:
    """Link ``releases`` for every person of ``population`` (raw QI values, one row each).

    All releases must publish the same SA column; their QI columns must be present in
    ``population`` (the releases may differ in which QIs they publish). ``hierarchies``
    (column → :class:`openbook.hierarchy.Hierarchy`) lets hierarchy labels such as
    ``Married`` be matched to the leaves they cover. ``cache`` (a dict, for repeated calls on
    the same population) keeps each release's person → class matching.
    """
    if not releases:
        raise ParameterError("linkage needs at least one release", parameter="releases")
    sa = {r.sa for r in releases}
    if len(sa) != 1:
        raise SchemaError(f"the releases publish different sensitive attributes: {sorted(sa)}", column=sorted(sa)[0])
    names = list(names) if names is not None else [f"release {j + 1}" for j in range(len(releases))]
    memo = cache.setdefault("__people__", {}) if cache is not None else {}
    per_counts, per_domains = [], []
    for r in releases:
        c, dom = r.sa_counts()
        per_counts.append(c)
        per_domains.append(np.asarray([str(v) for v in dom.values], dtype=object))
    vocab = np.asarray(sorted(set().union(*[set(v) for v in per_domains])), dtype=object)
    pos = pd.Index(vocab)
    n, t = len(population), len(releases)
    big = np.iinfo(np.int64).max
    out = np.full((n, len(vocab)), big, dtype=np.int64)
    matched = np.zeros((n, t), dtype=bool)
    class_ids = np.full((n, t), -1, dtype=np.int64)
    per_release = np.zeros((n, t), dtype=np.int64)
    for j, r in enumerate(releases):
        g = np.zeros((per_counts[j].shape[0], len(vocab)), dtype=np.int64)
        g[:, pos.get_indexer(per_domains[j])] = per_counts[j]
        if cache is not None and id(r) in cache:
            ptr, idx = cache[id(r)]
        else:
            ptr, idx = match_release(r, population, hierarchies=hierarchies, memo=memo)
            if cache is not None:
                cache[id(r)] = (ptr, idx)
        lens = np.diff(ptr)
        pc = _person_counts(g, ptr, idx)
        has = lens > 0
        matched[:, j] = has
        one = lens == 1
        class_ids[one, j] = idx[ptr[:-1][one]]
        class_ids[lens > 1, j] = -2
        per_release[:, j] = (pc > 0).sum(axis=1)
        out[has] = np.minimum(out[has], pc[has])
    out[out == big] = 0
    return LinkageResult(out, vocab, matched, class_ids, per_release, names)


def pairwise_below(releases: Sequence[Release], population: pd.DataFrame, l: int, *,
                   new: int = -1, hierarchies: Mapping[str, Any] | None = None,
                   names: Sequence[str] | None = None, cache: dict | None = None) -> dict[str, int]:
    """For each release other than ``releases[new]``: how many people the linkage of that
    release with the new one alone drops below ``l`` (people matched in both)."""
    names = list(names) if names is not None else [f"release {j + 1}" for j in range(len(releases))]
    new = new % len(releases)
    cache = {} if cache is None else cache
    out = {}
    for j, r in enumerate(releases):
        if j == new:
            continue
        res = linkage([r, releases[new]], population, hierarchies=hierarchies, names=[names[j], names[new]],
                      cache=cache)
        both = res.matched.all(axis=1)
        out[names[j]] = int((both & (res.diversity < l)).sum())
    return out
