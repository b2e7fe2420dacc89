"""The baseline adversary: uniform possible worlds within each published class.

The adversary knows the release and which class a tuple is published in, but nothing about
the algorithm that made it. Every assignment of a class's published SA multiset to its
tuples is equally likely (paper 001 §4.1, the probability space before any exclusion;
paper 000 §2.4), so the posterior that a tuple carries SA value ``v`` (or a value of the
sensitive set ``s``) is the class frequency of ``v`` (of ``s``). It is the naive attacker
every algorithm-aware adversary is compared with (anonymeter's baseline; docs/design.md).

Paper 001 Theorem 1: a minimality attack changes a posterior only where it excludes
worlds; with no exclusion the credibility "is exactly the ratio of the sensitive tuples to
the total number of tuples in the generalized QID-EC" — this module's output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError, option
from ..models.base import SADomain
from ..models.promise import promised_l
from ..release.release import Release
from .base import AttackResult


def release_model(release: Release | Any, model: Any = None) -> Any:
    """The privacy model: the one given, else the one the release's sidecar records (``release``:
    a :class:`~openbook.release.Release` or anything with its ``meta``, such as Spark's view)."""
    if model is not None:
        if isinstance(model, (str, dict, list)):
            from ..models.registry import make_model

            return make_model(model)
        return model
    spec = release.meta.get("model")
    if not spec:
        return None
    from ..models.registry import make_model

    return make_model(spec)


def _find_set_model(model: Any) -> Any:
    """The (α,k)/simple-ℓ member of a model (or conjunction) that names a sensitive set."""
    if model is None:
        return None
    for sub in getattr(model, "models", None) or [model]:
        if getattr(sub, "sensitive_set", None) is not None:
            return sub
    return None


def choose_targets(domain: SADomain, model: Any = None, sensitive_set: str | None = None,
                   set_mode: str | None = None) -> tuple[list[str], np.ndarray, str | None]:
    """The adversary's targets as ``(names, masks (n_targets, n_sa) bool, set_name)``.

    A sensitive set (given, or named by the model) in mode ``"total"`` is one target
    ``"set:NAME"`` (paper 001: linkage to the set s); in mode ``"each"`` every value of the
    set is a target (paper 000 §5). Without a set every SA value is a target.
    """
    sub = _find_set_model(model)
    name = sensitive_set if sensitive_set is not None else (None if sub is None else sub.sensitive_set)
    mode = set_mode if set_mode is not None else (getattr(sub, "set_mode", None) or "total")
    n_sa = domain.n_values
    if name is None:
        names = [str(v) for v in domain.values]
        return names, np.eye(n_sa, dtype=bool), None
    mask = domain.sensitive_mask(name)
    if mask is None:
        raise ParameterError(f"unknown sensitive set {name!r} (declare it with {option('sensitive', name + '=v1|v2')})",
                             parameter="sensitive_set", value=name)
    # a declared set none of whose values is published is a target nobody can be linked to
    # (posterior 0): the release's domain holds the published values only
    mask = np.asarray(mask, dtype=bool)
    if mode == "each" and mask.sum() > 1:
        idx = np.flatnonzero(mask)
        masks = np.zeros((idx.size, n_sa), dtype=bool)
        masks[np.arange(idx.size), idx] = True
        return [str(domain.values[i]) for i in idx], masks, name
    return [f"set:{name}"], mask[None, :], name


def target_counts(counts: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``counts @ masks.T`` as float64 ``(n_classes, n_targets)``: each class's count of each
    target. Every value its own target (identity masks) needs no product; otherwise one BLAS
    product in floats (exact: counts stay far below 2^53) — an int64 product has no BLAS and
    took minutes on a 6,000-value SA (issue 25)."""
    counts = np.asarray(counts)
    masks = np.asarray(masks, dtype=bool)
    if masks.shape[0] == masks.shape[1] == counts.shape[1] and masks.sum() == masks.shape[0] \
            and bool(np.all(np.diagonal(masks))):
        return counts.astype(np.float64)
    return counts.astype(np.float64) @ masks.T.astype(np.float64)


def baseline_attack(release: Release, *, model: Any = None, sensitive_set: str | None = None,
                    set_mode: str | None = None, l: float | None = None) -> AttackResult:
    """Posterior of every published row = its class's frequency of each target.

    Works for generalized and bucketized releases (the SA-table counts). ``model`` defaults
    to the release's recorded model; it supplies the sensitive set and ℓ.
    """
    model = release_model(release, model)
    counts, domain = release.sa_counts()
    names, masks, _ = choose_targets(domain, model, sensitive_set, set_mode)
    cls, n_cls = release.classes()
    size = counts.sum(axis=1).astype(np.float64)
    per_class = target_counts(counts, masks)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = per_class / size[:, None]
    sensitive = None
    if release.kind == "generalized" and len(release.data):
        vals = pd_index(domain.values).get_indexer(release.data[release.sa].astype(str))
        if (vals >= 0).all():
            sensitive = np.asarray(masks.any(axis=0))[vals]
    return AttackResult(
        adversary="baseline", posterior=freq, rows=cls, targets=names, group=cls,
        l=promised_l(model) if l is None else l, sensitive=sensitive,
        notes={"knowledge": "release only (uniform possible worlds within each class)",
               "n_classes": int(n_cls)},
    )


def pd_index(values: np.ndarray):
    import pandas as pd

    return pd.Index([str(v) for v in values])
