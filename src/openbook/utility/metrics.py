"""Utility metrics of a release: information loss (paper 001 Def. 5–6), SA distortion
(paper 001 §7.2), NCP, discernibility, class statistics, suppression rate.

Everything works on a :class:`ClassView`: the published classes of a release in code space
— for each class and QI, the *set of ground values* (leaf codes) its published value stands
for, plus the class's SA counts. A view is built either from the anonymizer's output
(:func:`view_from_partition`: an :class:`~openbook.data.table.EncodedTable` and a
:class:`~openbook.release.Partition`, with hierarchy levels for full-domain/global recoding)
or from a published :class:`~openbook.release.Release` and the original table, which supplies
the hierarchies and the numeric domains (:func:`view_from_release`).

Information loss (paper 001 Def. 6)::

    IL(t*) = Σ_A weight(A) · (coverage[v*] − 1) / (base(T_A) − 1)
    Dist(T, T*) = Σ_t* IL(t*) / |T*|

``v*`` is the nearest common ancestor of ``t.A`` and ``f(t).A``; the published value is an
ancestor of the original, so ``v*`` is the published value and ``coverage[v*]`` is the number
of ground values under it (Def. 5; paper 001's example: coverage["university"] = 2, base = 9).
A numeric column published as ``[lo-hi]`` ranges (no declared hierarchy) has the distinct
values of the column as ground values: coverage = number of them inside the range. Weights
default to ``1/|QID|`` (paper 001 §7.2) and are normalised to sum 1, so IL ∈ [0, 1].
Suppressed rows are charged IL = 1 by default (``suppressed="one"``: published as the root);
``suppressed="exclude"`` averages over the published rows only, as Def. 6 does for ``T*``.

SA distortion is Def. 6 applied to the SA (paper 001 §7.2: "The distortion of sensitive
attribute is calculated by the information loss formula in Definition 6"): each published
SA value is compared with the original one through their nearest common ancestor in the SA's
taxonomy (MASK step 4 changes SA values).

NCP (normalized certainty penalty, Xu et al. 2006, the measure paper 001 adapts): numeric
``(max − min) / (domain max − domain min)`` over the published range, categorical
``(coverage − 1) / (base − 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.table import EncodedTable
from ..errors import HierarchyError, ParameterError
from ..release import Partition, Release
from ..release.labels import codes_of, label_masks, uses_ranges

__all__ = [
    "ClassView",
    "view_from_partition",
    "view_from_release",
    "information_loss",
    "ncp",
    "discernibility",
    "class_stats",
    "sa_distortion",
    "release_sa_distortion",
    "utility_summary",
    "release_utility",
]


@dataclass(eq=False)
class ClassView:
    """Published classes of a release in code space.

    ``value_masks[j]`` is an ``(n_values_j, card_j)`` boolean matrix: row ``v`` marks the
    ground values (codes of QI ``j``) that published value ``v`` stands for;
    ``class_values[g, j]`` is the published value of class ``g`` on QI ``j``;
    ``sa_counts[g]`` the class's SA counts (SA in the table's code order).
    ``bucketized`` views have one class per (group, distinct QI tuple): every value is a
    single ground value.
    """

    qi_names: list[str]
    value_masks: list[np.ndarray]
    class_values: np.ndarray
    class_sizes: np.ndarray
    sa_counts: np.ndarray | None  # generalized: (n_classes, n_sa); bucketized: None
    n_input: int
    n_suppressed: int
    bucketized: bool = False
    group_of_class: np.ndarray | None = None  # bucketized: the SA-table group of each class
    group_sa_counts: np.ndarray | None = None  # bucketized: SA counts per group
    #: Generalized Anatomy: each class is a (QI class, group) pair — its labels the QI class's,
    #: its SA counts the pair's rows times the group's distribution (Anatomy's estimator); the
    #: QI class of each pair (what class statistics count)
    qi_class_of_class: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.class_values.shape[0])

    @property
    def n_published(self) -> int:
        return int(self.class_sizes.sum())

    def coverage(self, j: int) -> np.ndarray:
        """Ground values under each class's published value of QI ``j`` (Def. 5)."""
        return self.value_masks[j].sum(axis=1)[self.class_values[:, j]]


# ---------------------------------------------------------------------------------------
# building views
# ---------------------------------------------------------------------------------------
def _dedupe_masks(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique rows of a boolean matrix and each row's index among them."""
    packed = np.packbits(masks, axis=1)
    _, first, inv = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    return masks[first], inv.ravel().astype(np.int32)


def _interval_masks(lo: np.ndarray, hi: np.ndarray, card: int) -> tuple[np.ndarray, np.ndarray]:
    pairs, inv = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    ar = np.arange(card)
    masks = (ar[None, :] >= pairs[:, :1]) & (ar[None, :] <= pairs[:, 1:])
    return masks, inv.ravel().astype(np.int32)


def _node_masks(h: Any, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inv = np.unique(nodes, return_inverse=True)
    masks = np.stack([h.leaf_mask(int(v)) for v in uniq]) if uniq.size else np.zeros((0, h.n_leaves), bool)
    return masks, inv.ravel().astype(np.int32)


def view_from_partition(table: EncodedTable, partition: Partition, *, levels: Sequence[int] | None = None,
                        kind: str = "generalized") -> ClassView:
    """The classes a release built from ``partition`` publishes (``build_release``'s recoding).

    ``levels`` (one per QI) selects global (full-domain) recoding: each value is its
    hierarchy ancestor at that level, and rows with equal generalized tuples form one class.
    ``kind="bucketized"`` gives the Anatomy-style view (QI values published as they are).
    """
    partition.check(table.n_rows)
    keep = np.flatnonzero(partition.group >= 0)
    group = partition.group[keep]
    n_sa = table.columns[table.sa_name].n_values
    if kind == "bucketized":
        return _bucketized_view(table.qi_codes[keep], group, table.sa_codes[keep], partition.n_groups,
                                n_sa, [table.columns[n].n_values for n in table.qi_names], table.qi_names,
                                table.n_rows, partition.n_suppressed)
    if kind != "generalized":
        raise ParameterError(f"unknown release kind {kind!r}", parameter="kind", value=kind)
    G, d = partition.n_groups, len(table.qi_names)
    masks: list[np.ndarray] = []
    per_group = np.zeros((G, d), dtype=np.int32)
    row_vals = np.zeros((keep.size, d), dtype=np.int32)
    for j, name in enumerate(table.qi_names):
        codes = table.columns[name].codes[keep]
        if levels is not None:  # full-domain: each row's value is its ancestor at the level
            h = table.hierarchy(name)
            m, inv = _node_masks(h, h.generalize(codes, int(levels[j])))
            masks.append(m)
            row_vals[:, j] = inv
            continue
        if keep.size == 0:
            masks.append(np.zeros((0, table.columns[name].n_values), bool))
            continue
        if uses_ranges(table, name):
            lo = np.full(G, np.iinfo(np.int64).max)
            hi = np.full(G, -1)
            np.minimum.at(lo, group, codes)
            np.maximum.at(hi, group, codes)
            m, inv = _interval_masks(lo, hi, table.columns[name].n_values)
        else:
            h = table.hierarchy(name)
            m, inv = _node_masks(h, h.group_lca(codes, group, G))
        masks.append(m)
        per_group[:, j] = inv
    if levels is not None:
        if keep.size == 0:
            cls_vals, row_cls = np.zeros((0, d), np.int32), np.zeros(0, np.int64)
        else:
            cls_vals, row_cls = np.unique(row_vals, axis=0, return_inverse=True)
        counts = _counts(row_cls.ravel(), table.sa_codes[keep], len(cls_vals), n_sa)
        return _generalized(table.qi_names, masks, cls_vals, counts, table.n_rows, partition.n_suppressed)
    # local recoding: two groups may publish the same tuple; they are one class to a reader
    if G:
        cls_vals, g2c = np.unique(per_group, axis=0, return_inverse=True)
    else:
        cls_vals, g2c = per_group, np.zeros(0, np.int64)
    counts = _counts(g2c.ravel()[group], table.sa_codes[keep], len(cls_vals), n_sa)
    return _generalized(table.qi_names, masks, cls_vals, counts, table.n_rows, partition.n_suppressed)


def _generalized(names, masks, vals, counts, n_input, n_sup) -> ClassView:
    return ClassView(list(names), masks, np.asarray(vals, np.int32), counts.sum(axis=1).astype(np.int64),
                     counts, n_input, n_sup)


def _counts(cls: np.ndarray, sa: np.ndarray, n_cls: int, n_sa: int) -> np.ndarray:
    flat = np.bincount(np.asarray(cls, np.int64) * n_sa + sa, minlength=n_cls * n_sa)
    return flat.reshape(n_cls, n_sa).astype(np.int64)


def _bucketized_view(qi: np.ndarray, group: np.ndarray, sa: np.ndarray, n_groups: int, n_sa: int,
                     cards: list[int], names: list[str], n_input: int, n_suppressed: int) -> ClassView:
    """One class per (group, QI tuple); every published value is one ground value."""
    d = qi.shape[1]
    key = np.column_stack([group.astype(np.int64), qi.astype(np.int64)]) if qi.size else np.zeros((0, d + 1), np.int64)
    if key.shape[0]:
        uk, inv = np.unique(key, axis=0, return_inverse=True)
    else:
        uk, inv = key, np.zeros(0, np.int64)
    inv = inv.ravel()
    sizes = np.bincount(inv, minlength=len(uk)).astype(np.int64)
    gcounts = _counts(group, sa, n_groups, n_sa)
    masks = [np.eye(c, dtype=bool) for c in cards]
    return ClassView(list(names), masks, uk[:, 1:].astype(np.int32), sizes, None, n_input, n_suppressed, True,
                     uk[:, 0].astype(np.int64), gcounts)




def _sa_index(table: EncodedTable, values: Sequence[Any]) -> np.ndarray:
    cats = pd.Index([str(v).strip() for v in table.columns[table.sa_name].categories])
    idx = cats.get_indexer([str(v).strip() for v in values])
    if (idx < 0).any():
        bad = values[int(np.flatnonzero(idx < 0)[0])]
        raise HierarchyError(f"SA value {bad!r} of the release does not occur in the original table",
                             column=table.sa_name, value=bad)
    return idx


def view_from_release(release: Release, table: EncodedTable) -> ClassView:
    """The classes of a published release; ``table`` (the original data, or any table with
    the same schema and hierarchies) supplies hierarchies and numeric domains."""
    missing = [c for c in release.qi if c not in table.columns]
    if missing:
        raise ParameterError(f"the original table lacks the release's QI column {missing[0]!r}",
                             parameter="original", value=missing[0])
    n_sa = table.columns[table.sa_name].n_values
    n_input = int(release.meta.get("n_input", release.n_published))
    n_sup = release.n_suppressed
    cards = [table.columns[n].n_values for n in release.qi]
    if release.kind == "bucketized" and release.qi_generalized:
        return _decoupled_view(release, table, n_sa, n_input, n_sup)
    if release.kind == "bucketized":
        gid_codes, gids = pd.factorize(release.data["gid"], sort=True)
        qi = np.column_stack([codes_of(table, n, release.data[n]) for n in release.qi])
        st = release.sa_table
        assert st is not None
        sg = pd.Index(gids).get_indexer(st["gid"])
        flat = np.bincount(sg.astype(np.int64) * n_sa + _sa_index(table, list(st[release.sa])),
                           weights=st["count"].to_numpy(np.float64), minlength=len(gids) * n_sa)
        view = _bucketized_view(qi, gid_codes.astype(np.int64), np.zeros(len(qi), np.int64), len(gids), n_sa,
                                cards, list(release.qi), n_input, n_sup)
        view.group_sa_counts = flat.reshape(len(gids), n_sa).astype(np.int64)
        return view
    cls, n_cls = release.classes()
    first = np.full(n_cls, -1, dtype=np.int64)
    if n_cls:
        first[cls[::-1]] = np.arange(len(cls))[::-1]
    masks, vals = [], np.zeros((n_cls, len(release.qi)), dtype=np.int32)
    for j, name in enumerate(release.qi):
        labels = release.data[name].astype(str).to_numpy()[first] if n_cls else np.zeros(0, object)
        uniq, inv = np.unique(labels, return_inverse=True)
        masks.append(label_masks(table, name, uniq))
        vals[:, j] = inv.ravel()
    sa = _sa_index(table, list(release.data[release.sa].astype(str))) if len(release.data) else np.zeros(0, np.int64)
    counts = _counts(cls, sa, n_cls, n_sa)
    return _generalized(release.qi, masks, vals, counts, n_input, n_sup)


def _decoupled_view(release: Release, table: EncodedTable, n_sa: int, n_input: int, n_sup: int) -> ClassView:
    """A Generalized Anatomy release (bucketized, generalized QI-table): one class per (QI class,
    group) pair under the QI class's labels, holding the pair's rows spread over the group's SA
    distribution — Anatomy's estimator on generalized QIs."""
    qcls, n_q = release.qi_classes()
    gid_codes, gids = pd.factorize(release.data["gid"], sort=True)
    st = release.sa_table
    assert st is not None
    sg = pd.Index(gids).get_indexer(st["gid"])
    gcounts = np.bincount(sg.astype(np.int64) * n_sa + _sa_index(table, list(st[release.sa])),
                          weights=st["count"].to_numpy(np.float64), minlength=len(gids) * n_sa).reshape(len(gids), n_sa)
    pair = qcls.astype(np.int64) * max(len(gids), 1) + gid_codes.astype(np.int64)
    up, pinv = np.unique(pair, return_inverse=True)
    pinv = pinv.ravel()
    pq, pg = up // max(len(gids), 1), up % max(len(gids), 1)
    npair = np.bincount(pinv, minlength=up.size).astype(np.int64)
    first = np.full(n_q, -1, dtype=np.int64)
    if n_q:
        first[qcls[::-1]] = np.arange(len(qcls))[::-1]
    masks, vals = [], np.zeros((n_q, len(release.qi)), dtype=np.int32)
    for j, name in enumerate(release.qi):
        labels = release.data[name].astype(str).to_numpy()[first] if n_q else np.zeros(0, object)
        uniq, inv = np.unique(labels, return_inverse=True)
        masks.append(label_masks(table, name, uniq))
        vals[:, j] = inv.ravel()
    freq = gcounts / np.maximum(gcounts.sum(axis=1), 1.0)[:, None]
    return ClassView(list(release.qi), masks, vals[pq], npair, npair[:, None] * freq[pg], n_input, n_sup, False,
                     pg.astype(np.int64), gcounts.astype(np.int64), pq.astype(np.int64))


# ---------------------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------------------
def _weights(view: ClassView, weights: Mapping[str, float] | Sequence[float] | None) -> np.ndarray:
    d = len(view.qi_names)
    if weights is None:
        return np.full(d, 1.0 / d)
    if isinstance(weights, Mapping):
        unknown = set(weights) - set(view.qi_names)
        if unknown:
            name = sorted(unknown)[0]
            raise ParameterError(f"weight given for {name!r}, which is not a QI", parameter="weights", value=name)
        w = np.array([float(weights.get(n, 0.0)) for n in view.qi_names])
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (d,):
            raise ParameterError(f"weights must have one entry per QI ({d}), got {w.size}", parameter="weights")
    if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
        raise ParameterError("weights must be finite, non-negative and not all zero", parameter="weights")
    return w / w.sum()


def _per_attribute_loss(view: ClassView, j: int, spans: np.ndarray | None = None) -> np.ndarray:
    """Per-class loss of QI ``j`` in [0, 1]: ``(coverage − 1)/(base − 1)``, or the given
    normalised spans."""
    if spans is not None:
        return spans
    base = view.value_masks[j].shape[1]
    if base <= 1:
        return np.zeros(view.n_classes)
    return (view.coverage(j) - 1.0) / (base - 1.0)


def _average(view: ClassView, per_class: np.ndarray, suppressed: str) -> float:
    if suppressed not in ("one", "exclude"):
        raise ParameterError(f"suppressed={suppressed!r} must be 'one' or 'exclude'", parameter="suppressed",
                             value=suppressed)
    sizes = view.class_sizes
    total = float((per_class * sizes).sum())
    n = view.n_published
    if suppressed == "one":
        total += view.n_suppressed
        n += view.n_suppressed
    return total / n if n else 0.0


def information_loss(view: ClassView, *, weights: Mapping[str, float] | Sequence[float] | None = None,
                     suppressed: str = "one", per_attribute: bool = False) -> Any:
    """Dist(T, T*) of paper 001 Def. 6 (in [0, 1]); with ``per_attribute=True`` a dict
    ``{"total": ..., QI name: unweighted loss of that QI}``. Bucketized views lose nothing
    on the QIs (paper 001 §7.2, case B)."""
    w = _weights(view, weights)
    per = [_per_attribute_loss(view, j) for j in range(len(view.qi_names))]
    total = _average(view, sum(wj * pj for wj, pj in zip(w, per)) if per else np.zeros(view.n_classes), suppressed)
    if not per_attribute:
        return total
    out: dict[str, float] = {"total": total}
    for name, p in zip(view.qi_names, per):
        out[name] = _average(view, p, suppressed)
    return out


def ncp(view: ClassView, table: EncodedTable, *, weights: Mapping[str, float] | Sequence[float] | None = None,
        suppressed: str = "one", per_attribute: bool = False) -> Any:
    """Normalized certainty penalty: numeric QIs ``(max − min)/(domain range)`` of the values
    a published value stands for; categorical ``(coverage − 1)/(base − 1)``."""
    w = _weights(view, weights)
    per = []
    for j, name in enumerate(view.qi_names):
        col = table.columns[name]
        if col.kind == "numeric" and col.numeric is not None and col.numeric.size > 1:
            num = col.numeric
            dom = float(num.max() - num.min())
            m = view.value_masks[j]
            hi = np.where(m, num[None, :], -np.inf).max(axis=1)
            lo = np.where(m, num[None, :], np.inf).min(axis=1)
            span = np.where(np.isfinite(hi - lo), hi - lo, 0.0) / (dom if dom > 0 else 1.0)
            per.append(span[view.class_values[:, j]])
        else:
            per.append(_per_attribute_loss(view, j))
    total = _average(view, sum(wj * pj for wj, pj in zip(w, per)), suppressed)
    if not per_attribute:
        return total
    return {"total": total, **{n: _average(view, p, suppressed) for n, p in zip(view.qi_names, per)}}


def discernibility(view: ClassView) -> float:
    """Discernibility metric (Bayardo & Agrawal 2005): Σ |E|² over published classes plus
    ``n_input`` for each suppressed row. A bucketized release is charged by its groups."""
    sizes = _class_sizes(view)
    return float((sizes.astype(np.float64) ** 2).sum() + view.n_suppressed * view.n_input)


def _class_sizes(view: ClassView) -> np.ndarray:
    """The sizes class statistics count: groups of a bucketized view, QI classes of a
    Generalized Anatomy view, else the classes."""
    if view.qi_class_of_class is not None:
        return np.bincount(view.qi_class_of_class, weights=view.class_sizes).astype(np.int64)
    if view.bucketized and view.group_sa_counts is not None:
        return view.group_sa_counts.sum(axis=1)
    return view.class_sizes


def class_stats(view: ClassView) -> dict[str, float]:
    """Number of classes (groups for a bucketized release, QI classes for Generalized Anatomy),
    average class size, suppression rate."""
    sizes = _class_sizes(view)
    n = int(sizes.size)
    return {"n_classes": n, "avg_class_size": float(sizes.sum() / n) if n else 0.0,
            "min_class_size": int(sizes.min()) if n else 0,
            "suppression_rate": view.n_suppressed / view.n_input if view.n_input else 0.0}


def sa_distortion(original: np.ndarray, published: np.ndarray, hierarchy: Any) -> float:
    """Paper 001 §7.2 distortion: Def. 6 on the SA. ``original`` are leaf codes,
    ``published`` node ids of the SA hierarchy (leaf codes when values were swapped, as
    MASK does, internal nodes when generalized). Per tuple ``(coverage[v*] − 1)/(base − 1)``
    with ``v*`` the nearest common ancestor of both; averaged over the tuples."""
    original = np.asarray(original, dtype=np.int64).ravel()
    published = np.asarray(published, dtype=np.int64).ravel()
    if original.shape != published.shape:
        raise ParameterError(f"original has {original.size} SA values, published {published.size}",
                             parameter="published")
    n = original.size
    if n == 0:
        return 0.0
    base = hierarchy.n_leaves
    if base <= 1:
        return 0.0
    changed = original != published
    if not changed.any():
        return 0.0
    rows = np.flatnonzero(changed)
    pub = published[rows]
    internal = pub >= base
    # expand each published node to its leaves: NCA(t.S, v) = LCA({t.S} ∪ leaves(v))
    leaf_sets = {int(v): np.flatnonzero(hierarchy.leaf_mask(int(v))) for v in np.unique(pub[internal])}
    sizes = np.where(internal, 0, 1)
    if internal.any():
        sizes[internal] = [leaf_sets[int(v)].size for v in pub[internal]]
    codes = [original[rows]]
    gids = [np.arange(rows.size)]
    leaf_rows = np.flatnonzero(~internal)
    codes.append(pub[leaf_rows])
    gids.append(leaf_rows)
    for v, leaves in leaf_sets.items():
        who = np.flatnonzero(pub == v)
        codes.append(np.tile(leaves, who.size))
        gids.append(np.repeat(who, leaves.size))
    nca = hierarchy.group_lca(np.concatenate(codes), np.concatenate(gids), rows.size)
    cov = hierarchy.coverage[nca]
    return float(((cov - 1.0) / (base - 1.0)).sum() / n)


def release_sa_distortion(release: Release, table: EncodedTable) -> float:
    """SA distortion of a generalized release made from ``table``: each published SA label
    against the original SA of the input row it publishes (``Release.source_rows``, the
    publisher's record; the files are in canonical order, not the input's)."""
    h = table.hierarchy(table.sa_name)
    labels = release.data[release.sa].astype(str).to_numpy()
    pub = h.nodes_of(labels).astype(np.int64)
    n_pub = len(labels)
    if n_pub != table.n_rows and release.n_suppressed == 0:
        raise ParameterError("the release and the original table have different row counts",
                             parameter="original")
    rows = release.source_rows
    if rows is None or np.asarray(rows).size != n_pub:
        raise ParameterError("cannot align the release's rows with the original table (a loaded release does not "
                             "record which input row each published row is)", parameter="original")
    orig = table.sa_codes[np.asarray(rows)]
    return sa_distortion(orig, pub, h)


def utility_summary(view: ClassView, table: EncodedTable | None = None, *,
                    weights: Mapping[str, float] | Sequence[float] | None = None) -> dict[str, Any]:
    """All metrics of a view as one JSON-able dict."""
    out: dict[str, Any] = class_stats(view)
    out["discernibility"] = discernibility(view)
    il = information_loss(view, weights=weights, per_attribute=True)
    out["information_loss"] = il.pop("total")
    out["information_loss_per_qi"] = il
    if table is not None:
        out["ncp"] = ncp(view, table, weights=weights)
    return out


def release_utility(release: Release, table: EncodedTable, **kw: Any) -> dict[str, Any]:
    """:func:`utility_summary` of a published release against its original table."""
    return utility_summary(view_from_release(release, table), table, **kw)
