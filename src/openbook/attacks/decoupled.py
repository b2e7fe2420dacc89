"""The adversary who knows Generalized Anatomy (paper 000 §2.4, §3, Claim 4;
:mod:`openbook.algorithms.generalized_anatomy`).

The release's QI classes come from a grouping of the QIs alone (strict Mondrian under
k-anonymity: deterministic, so the adversary, who knows every QI, re-runs it and knows every
person's class), its SA groups from a grouping of the SA alone (SA strata: compositions fixed
by the published SA counts, people drawn uniformly within their value). Every possible world
consistent with the published files is produced with the same probability by the same number of
draws, so the adversary's posterior that person ``p`` of QI class ``C`` has value ``v`` is

    ``P(p has v) = (1/|C|) · Σ_{rows r of C} freq_v(group(r))``:

the people of ``C`` are matched uniformly to ``C``'s rows (their labels are all the file says of
them), and inside a group every member is as likely as any other to hold each published value.
docs/certificate.md gives the derivation; ``tests/contract/test_generalized_anatomy.py`` checks
it against a brute force over every world and every outcome of the random draws.

It is exact and needs no sampling. The same formula is the baseline's for this release (what a
reader who matches people to rows by their labels learns): knowing the algorithm adds nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError
from .base import AttackResult


def _published_class_key(release: Any) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """QI class id of every published row (:meth:`Release.qi_classes`) and each class's
    label tuple."""
    cls, n = release.qi_classes()
    labels: list[tuple[str, ...]] = [()] * n
    if n:
        first = np.full(n, -1, dtype=np.int64)
        first[cls[::-1]] = np.arange(cls.size)[::-1]
        cols = [release.data[c].astype(str).str.strip().to_numpy() for c in release.qi]
        labels = [tuple(col[i] for col in cols) for i in first]
    return cls, labels


def people_classes(release: Any, original: Any) -> np.ndarray | None:
    """The published QI class (``Release.qi_classes`` numbering) of every person of
    ``original``: the publisher's record when the release holds it, else the QI grouping
    re-run on ``original`` (it depends on the QIs alone) and matched to the file by labels —
    a :class:`DataError` when the file is not what the re-run publishes. ``None`` after a skew
    step, whose grouping ran on the kept people only (:func:`candidate_classes` then).""" 
    cls, labels = _published_class_key(release)
    n = original.n_rows
    src = release.source_rows
    if src is not None and int(release.meta.get("n_input", -1)) == n and (src.size == 0 or int(src.max()) < n):
        out = np.full(n, -1, dtype=np.int64)
        out[src] = cls
        return out
    from ..algorithms.generalized_anatomy import GeneralizedAnatomy, qi_partition
    from ..models.registry import make_model
    from ..release import group_labels

    prov = dict(release.meta.get("algorithm") or {})
    params = dict(prov.get("params") or {})
    spec = release.meta.get("model") or prov.get("model")
    algo = GeneralizedAnatomy(model=make_model(spec), **{k: params[k] for k in
                                                        ("k", "max_risk", "max_reid_risk", "categorical")
                                                        if k in params})
    missing = [c for c in release.qi if c not in original.columns]
    if missing:
        raise DataError(f"the original table lacks the release's QI column {missing[0]!r}")
    group, n_groups = qi_partition(original, algo.qi_k(), algo.categorical)
    per_col = [np.asarray(group_labels(original, c, group, n_groups), dtype=object) for c in release.qi]
    index = {lab: i for i, lab in enumerate(labels)}
    g2c = np.full(n_groups, -1, dtype=np.int64)
    for g in range(n_groups):
        g2c[g] = index.get(tuple(str(col[g]).strip() for col in per_col), -1)
    out = g2c[group]
    if (out < 0).any() or not np.array_equal(np.bincount(out, minlength=len(labels)),
                                             np.bincount(cls, minlength=len(labels))):
        if release.meta.get("skew") or release.n_suppressed:
            return None  # the grouping ran on the kept people only: placed by labels instead
        raise DataError("the release's QI-table is not what its algorithm publishes for this original table "
                        "(another table, other QIs or hierarchies)")
    return out


def candidate_classes(release: Any, original: Any) -> np.ndarray:
    """``(n_people, n_qi_classes)`` bool: the published QI classes whose labels cover each
    person's QI values (what the file alone says of where a person may sit)."""
    from ..release.labels import label_masks

    cls, labels = _published_class_key(release)
    ok = np.ones((original.n_rows, len(labels)), dtype=bool)
    for j, c in enumerate(release.qi):
        uniq, inv = np.unique(np.asarray([lab[j] for lab in labels], dtype=object), return_inverse=True)
        masks = label_masks(original, c, uniq)  # (n_labels, n_codes)
        ok &= masks[inv.ravel()][:, original.columns[c].codes].T
    return ok


def class_posteriors(release: Any, masks: np.ndarray) -> np.ndarray:
    """``(n_qi_classes, n_targets)``: each QI class's average over its rows of their group's
    frequency of each target (module docstring)."""
    from scipy import sparse

    from .baseline import target_counts

    counts, _ = release.sa_counts()
    gid, n_g = release.classes()
    qcls, n_q = release.qi_classes()
    size = counts.sum(axis=1).astype(np.float64)
    freq = target_counts(counts, masks) / np.maximum(size, 1.0)[:, None]
    # rows per (QI class, SA group): the average is that sparse matrix times the frequencies
    pairs = sparse.csr_matrix((np.ones(qcls.size), (qcls, gid)), shape=(n_q, freq.shape[0]))
    acc = np.asarray(pairs @ freq)
    return acc / np.maximum(np.bincount(qcls, minlength=n_q), 1)[:, None]


def decoupled_attack(release: Any, original: Any, names: list[str], masks: np.ndarray, *,
                     adversary: str, sensitive: np.ndarray | None = None, l: float | None = None) -> AttackResult:
    """Per-person posteriors of the adversary who knows Generalized Anatomy (module docstring)."""
    people = people_classes(release, original)
    post_cls = class_posteriors(release, masks)
    bound = people is None
    if people is None:  # placed by labels: a person's figure is the largest over the classes they may sit in
        cand = candidate_classes(release, original)
        post = np.full((original.n_rows, len(names)), np.nan)
        people = np.where(cand.any(axis=1), np.argmax(cand, axis=1), -1)
        for i in np.flatnonzero(cand.any(axis=1)):
            post[i] = post_cls[cand[i]].max(axis=0)
    else:
        post = np.full((people.size, len(names)), np.nan)
        pub = people >= 0
        post[pub] = post_cls[people[pub]]
    return AttackResult(adversary=adversary, posterior=post, targets=list(names), group=people, l=l,
                        stderr=np.zeros_like(post), sensitive=sensitive, unresolved=np.zeros(people.size, dtype=bool),
                        notes={"knowledge": "every QI, the algorithm (QI classes by the QIs alone, SA groups by the "
                                            "SA alone) and the published files",
                               "method": ("an upper bound: people placed by their labels, each given the largest "
                                          "figure of the QI classes they may sit in" if bound else
                                          "exact: a person's posterior is the average over their QI class's rows of "
                                          "their group's frequency (docs/certificate.md)"),
                               "qi_classes": int(post_cls.shape[0])})
