"""Exact credibility under the minimality attack (paper 001, Wong et al., VLDB 2007, §3–§5).

The adversary ``K^min_ad`` (Assumption 3) knows the release ``T*``, every individual's QI
(the external table ``T^e``, worst case: the same individuals), the privacy requirement
``R`` and that the algorithm follows the **minimality principle** (Definition 3). For a
published class ``Q`` that merges original QID-ECs ``C_1..C_u`` (global recoding, §4.1) or
that holds ``n_{i,g}`` generalized tuples of each ``C_i`` (local recoding, §4.2),
minimality implies (Lemma 1) that **at least one** ``C_i`` violated ``R`` in the original
table: otherwise specializing ``Q`` back would give a table that still satisfies ``R``.
The adversary keeps only the possible worlds — assignments of ``Q``'s published SA
multiset to its tuples — in which some ``C_i`` violates ``R`` (the *sensitive tuple
distribution table* with its excluded combinations, Table 6), all remaining worlds equally
likely (§4.1 "General Formula"), and reads off

    Credibility(o, s, K) = Σ_j Prob(|C_i(s)| = j | K) · j / n_i            (§4.1)

and, under local recoding, for ``o ∈ C_i`` (§4.2)

    Credibility(o, s, K) = n_{i,g}/n_i · Prob(o linked to s in C_G | K) + n_{i,u}/n_i · n_{i,u}(s)/n_{i,u}

where ``C_i`` in the violation test is the original class — its ungeneralized tuples (with
their published SA) plus its tuples in ``C_G`` (Table 8: ``n_{1,u} = 4``,
``n_{1,u}(s) = 2``, ``n_{1,g} = 1``, credibility ``3/5``).

How it is counted — never by enumerating worlds — is :mod:`.credibility_counting` (the
binary convolution for models that look at one set's count, a dynamic programme over count
vectors for the others, within a state budget: a class over budget is unresolved).

Scope and disagreements (see docs/minimality.md): the exclusion is Lemma 1 — class-local
minimality. It is exact for algorithms that decide each class's generalization from that
class's own QID-ECs (a per-subtree global recoding, the local recodings of §4.2; the brute
force in ``tests/unit/attacks/test_credibility.py`` re-runs such an algorithm on every
world). For full-domain (lattice) generalization it is the paper's §7.1 adversary, not the
exact posterior: a class there may also be generalized because of *another* class. A class
for which no world satisfies Lemma 1 (a single QID-EC, or no ``C_i`` able to violate) cannot
have been generalized for its own sake; the adversary then excludes nothing there
(``consistent = False`` in the per-group detail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import SADomain
from ..models.promise import promised_l
from ..progress import track
from ..release.release import Release
from .base import AttackResult
from .baseline import choose_targets, release_model
from .credibility_counting import (  # noqa: F401 - the counting functions, re-exported with the attack
    ClassCredibility,
    class_credibility,
    class_posterior_multi,
    global_credibility,
    local_credibility,
    sensitive_tuple_distribution,
    simple_l_sat,
)


# =======================================================================================
# The attack on a release
# =======================================================================================
def _norm_str(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


@dataclass
class _Knowledge:
    """The external table as per-column codes with a text label per code."""

    codes: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    n: int
    table: EncodedTable | None


def _knowledge(knowledge: Any, qi: list[str], release: Release | None = None) -> _Knowledge:
    if isinstance(knowledge, pd.DataFrame) and release is not None:
        from ..data.table import encode

        schema = release.input_schema()
        if schema.sa.name not in knowledge.columns:
            raise ParameterError(f"knowledge table lacks the SA column {schema.sa.name!r}", parameter="knowledge")
        knowledge = encode(knowledge, schema)
    if isinstance(knowledge, EncodedTable):
        cols = knowledge.columns
        get = lambda c: (np.asarray(cols[c].codes, dtype=np.int64),  # noqa: E731
                         np.array([_norm_str(v) for v in cols[c].categories], dtype=object))
        table = knowledge
    elif isinstance(knowledge, pd.DataFrame):
        cols = knowledge.columns

        def get(c):
            codes, uniq = pd.factorize(pd.Series([_norm_str(v) for v in knowledge[c].to_numpy()]))
            return codes.astype(np.int64), np.asarray(uniq, dtype=object)
        table = None
    else:
        raise ParameterError("knowledge must be the original QI table (EncodedTable or DataFrame)",
                             parameter="knowledge")
    missing = [c for c in qi if c not in cols]
    if missing:
        raise ParameterError(f"knowledge table lacks QI column {missing[0]!r}", parameter="knowledge")
    codes, labels = {}, {}
    for c in qi:
        codes[c], labels[c] = get(c)
    n = len(next(iter(codes.values()))) if qi else 0
    return _Knowledge(codes, labels, n, table)


def _align(release: Release, kn: _Knowledge) -> np.ndarray:
    """Original row of each published row (``release.align``: the publisher's record, else
    the QI values — rows carry no order)."""
    from ..release.align import align

    assert kn.table is not None, "the aligned attacks run with the original table"
    al = align(release, kn.table)
    pub = np.full(release.n_published, -1, dtype=np.int64)
    placed = np.flatnonzero(al.row >= 0)
    pub[al.row[placed]] = placed
    return pub


def _binary_model(model: Any, target_masks: np.ndarray, set_name: str | None = None) -> bool:
    """Does the model's verdict on a class depend only on its size and count of the one
    target set — the set the model itself bounds (a target set the model does not bound,
    e.g. its complement, goes to the multivariate engine)?"""
    from ..models.alpha_k import AlphaKAnonymity
    from ..models.k_anonymity import KAnonymity

    if target_masks.shape[0] != 1:
        return False
    for sub in getattr(model, "models", None) or [model]:
        if isinstance(sub, KAnonymity):
            continue
        if isinstance(sub, AlphaKAnonymity) and sub.sensitive_set is not None and sub.sensitive_set == set_name:
            continue
        return False
    return True


def _binary_sat_fn(model: Any, set_name: str | None):
    """``sat(n_total, s_count) -> bool array`` from the model on a two-value domain."""
    name = set_name or "s"

    def sat(n_tot: np.ndarray, s: np.ndarray) -> np.ndarray:
        counts = np.stack([s, n_tot - s], axis=1).astype(np.int64)
        dom = SADomain(values=np.array(["s", "other"], dtype=object),
                       global_counts=counts.sum(axis=0), sensitive_sets={name: np.array([True, False])})
        return np.asarray(model.holds(counts, dom), dtype=bool)

    return sat


def minimality_attack(release: Release, knowledge: Any, *, model: Any = None,
                      sensitive_set: str | None = None, set_mode: str | None = None,
                      assume_minimality: bool | str = "auto",
                      exact: bool = False, max_states: int = 200_000) -> AttackResult:
    """Credibility of every individual of ``knowledge`` under ``K^min_ad`` (module docstring).

    Parameters
    ----------
    release:
        The published release (generalized or bucketized).
    knowledge:
        The adversary's external table: the original individuals' QI values (an
        :class:`EncodedTable` or a DataFrame with the release's QI columns), in the order
        the release was made from. With an :class:`EncodedTable` its SA tells the audit which
        tuples are truly sensitive.
    model:
        The requirement ``R`` (default: the release's recorded model).
    sensitive_set, set_mode:
        The target set (default: the model's); see :func:`baseline.choose_targets`.
    assume_minimality:
        ``"auto"`` (default): exclude worlds only if the release's provenance says the
        algorithm follows minimality (or says nothing — the paper's adversary); ``True`` /
        ``False`` force it.
    exact:
        Python-integer counting, posteriors converted to float at the end (small tables).
    max_states:
        Budget of the multivariate engine per class.
    """
    model = release_model(release, model)
    if model is None:
        raise ParameterError("the minimality adversary needs the privacy requirement R: the release "
                             "records no model, pass model=", parameter="model")
    counts, domain = release.sa_counts()
    names, masks, set_name = choose_targets(domain, model, sensitive_set, set_mode)
    cls, n_cls = release.classes()
    kn = _knowledge(knowledge, release.qi, release)
    n, table = kn.n, kn.table
    pub_rows = _align(release, kn)
    ec, n_ec = group_ids([kn.codes[c] for c in release.qi])
    ec = np.asarray(ec, dtype=np.int64)
    if assume_minimality == "auto":
        alg = release.meta.get("algorithm") or {}
        minimal = bool(alg.get("minimality", True))
    else:
        minimal = bool(assume_minimality)
    # which published rows are generalized (published labels != original values)
    if release.kind == "bucketized":
        gen_row = np.ones(len(pub_rows), dtype=bool)
    else:
        gen_row = np.zeros(len(pub_rows), dtype=bool)
        for c in release.qi:
            pcodes, puniq = pd.factorize(release.data[c])
            lookup = {lab: i for i, lab in enumerate(kn.labels[c])}
            as_code = np.array([lookup.get(_norm_str(v), -1) for v in puniq], dtype=np.int64)
            gen_row |= as_code[pcodes] != kn.codes[c][pub_rows]
    row_ec = ec[pub_rows]
    # per class: ungeneralized (all its rows keep their values) or generalized
    gen_cls = np.bincount(cls, weights=gen_row, minlength=n_cls) > 0
    # ungeneralized part of each EC: the (single) ungeneralized class holding it
    u_cls = np.full(n_ec, -1, dtype=np.int64)
    ung = ~gen_cls[cls]
    u_cls[row_ec[ung]] = cls[ung]
    n_pub_ec = np.bincount(row_ec, minlength=n_ec)
    # units: (class, ec) pairs in generalized classes
    gmask = gen_cls[cls]
    pair = cls[gmask] * n_ec + row_ec[gmask]
    upair, ucount = np.unique(pair, return_counts=True)
    unit_cls, unit_ec = upair // n_ec, upair % n_ec
    binary = _binary_model(model, masks, set_name)
    n_t = len(names)
    sizes = counts.sum(axis=1)
    # posterior of a tuple of unit j, per target; and per-class info
    unit_post = np.zeros((len(upair), n_t))
    unit_unres = np.zeros(len(upair), dtype=bool)
    consistent = np.ones(n_cls, dtype=bool)
    excluded = np.zeros(n_cls)
    excluded[~gen_cls] = np.nan
    tgt_counts = counts @ masks.T.astype(np.int64)  # (n_cls, n_t)
    bounds = np.searchsorted(unit_cls, np.arange(n_cls + 1))
    uc = counts[np.maximum(u_cls, 0)] * (u_cls >= 0)[:, None]  # (n_ec, n_sa) ungeneralized counts
    if binary:
        sat_fn = _binary_sat_fn(model, set_name)
        u_tot = uc.sum(axis=1)
        u_s = uc @ masks[0].astype(np.int64)
    for g in track(np.flatnonzero(gen_cls).tolist(), "minimality adversary: classes"):
        a, b = bounds[g], bounds[g + 1]
        if not minimal:
            unit_post[a:b] = tgt_counts[g] / sizes[g]
            consistent[g] = False
            excluded[g] = 0.0
            continue
        e = unit_ec[a:b]
        nG = ucount[a:b]
        if binary:
            S = int(tgt_counts[g, 0])
            keys = np.stack([nG, u_tot[e], u_s[e]], axis=1)
            if len(keys) > 1:
                kk, _ = group_ids([keys[:, 0], keys[:, 1], keys[:, 2]])  # no int64 product of sizes
                _, first, inv, mult = np.unique(kk, return_index=True, return_inverse=True, return_counts=True)
                uk = keys[first]
            else:
                uk, inv, mult = keys, np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
            inv = inv.ravel()
            lens = np.minimum(uk[:, 0], S) + 1
            rep = np.repeat(np.arange(len(uk)), lens)
            xs = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            flat_sat = sat_fn(uk[rep, 0] + uk[rep, 1], uk[rep, 2] + xs)
            sats = np.split(flat_sat, np.cumsum(lens)[:-1])
            cc = class_credibility(uk[:, 0], sats, S, mult=mult, exact=exact)
            unit_post[a:b, 0] = np.array([float(v) for v in cc.credibility])[inv]
            consistent[g], excluded[g] = cc.consistent, cc.excluded_fraction
        else:
            units = [(int(nG[j]), uc[e[j]]) for j in range(b - a)]
            post, ok, ex = class_posterior_multi(units, counts[g], model, domain, exact=exact,
                                                 max_states=max_states)
            if post is None:
                unit_unres[a:b] = True
                unit_post[a:b] = np.nan
                consistent[g], excluded[g] = False, np.nan
            else:
                unit_post[a:b] = np.asarray(post, dtype=np.float64) @ masks.T.astype(np.float64)
                consistent[g], excluded[g] = ok, ex
    # mix per individual: Σ_G n_{i,G}/n_i · post + n_{i,u}/n_i · freq(ungeneralized)
    with np.errstate(invalid="ignore", divide="ignore"):
        ec_post = np.zeros((n_ec, n_t))
        np.add.at(ec_post, unit_ec, unit_post * ucount[:, None])
        has_u = u_cls >= 0
        ec_post[has_u] += tgt_counts[u_cls[has_u]]  # n_{i,u} · n_{i,u}(s)/n_{i,u}
        ec_post /= n_pub_ec[:, None]
    ec_unres = np.zeros(n_ec, dtype=bool)
    ec_unres[unit_ec[unit_unres]] = True
    ec_post[ec_unres] = np.nan
    group = np.full(n, -1, dtype=np.int64)
    group[pub_rows] = cls
    post = np.full((n, n_t), np.nan)
    published = group >= 0
    post[published] = ec_post[ec[published]]
    sensitive = None
    truth = None
    if table is not None and table.sa_name == release.sa:
        truth = table.decode(table.sa_name)
    elif isinstance(knowledge, pd.DataFrame) and release.sa in knowledge.columns:
        truth = knowledge[release.sa].to_numpy()
    if truth is not None:
        vals = pd.Index([_norm_str(v) for v in domain.values]).get_indexer([_norm_str(v) for v in truth])
        if (vals >= 0).all():
            sensitive = np.asarray(masks.any(axis=0))[vals]
    info = pd.DataFrame({"group": np.arange(n_cls), "generalized": gen_cls, "consistent": consistent,
                         "excluded_fraction": excluded,
                         "n_qid_ecs": np.bincount(unit_cls, minlength=n_cls)})
    unres = np.zeros(n, dtype=bool)
    unres[published] = ec_unres[ec[published]]
    return AttackResult(
        adversary="minimality", posterior=post, targets=names, group=group, l=promised_l(model),
        sensitive=sensitive, unresolved=unres, group_info=info,
        notes={"knowledge": "release + every individual's QI + requirement R + minimality (paper 001 "
                            "Assumption 3, Lemma 1)",
               "model": model.describe(), "assume_minimality": minimal,
               "engine": "binary convolution" if binary else "multivariate DP",
               "exact": bool(exact), "n_generalized_classes": int(gen_cls.sum()),
               "n_inconsistent_classes": int((gen_cls & ~consistent).sum()) if minimal else None},
    )
