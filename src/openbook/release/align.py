"""Which person of the original table sits in which published class — without row order.

A release's rows are in canonical order (:func:`.release.canonical_form`): the file says
nothing about which input row a published row came from. An auditor (or an adversary, who
knows every individual's QIs, paper 000 §2.4) recovers the placement from the QI values:

* the publisher's own record (:attr:`Release.source_rows`, in memory right after
  anonymization) gives it exactly;
* a **bucketized** release publishes exact QIs (Generalized Anatomy: labels, placed as below
  in the QI-table's classes, then on any row of the class): each published row is matched with a person
  of the same QI tuple (people with equal QIs are interchangeable to any adversary, so any
  consistent matching gives the same posteriors); people left over are absent;
* a **generalized** release publishes labels (:mod:`.labels`): a person can sit in every
  class whose labels cover their values. Classes are filled by a maximum flow from QI
  *types* (distinct QI tuples) to classes with the class sizes as capacities
  (``scipy.sparse.csgraph.maximum_flow``); when every type has one candidate class and no
  one is left over, the placement is unique.

``n_ambiguous`` counts the people whose class (or whether they are published at all) the QIs
alone do not determine; the attacks report it. Rows inside a class are matched by equal SA
value where possible (the auditor knows the truth), else in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.grouping import group_ids
from ..data.table import EncodedTable
from ..errors import DataError
from .labels import codes_of, label_masks, uses_ranges
from .release import GID, Release


@dataclass
class Alignment:
    """Per row of the original table: published class (``Release.classes()`` numbering,
    ``-1`` = absent) and published row (``-1`` = absent)."""

    group: np.ndarray
    row: np.ndarray
    n_ambiguous: int = 0
    exact: bool = True

    @property
    def absent(self) -> np.ndarray:
        return self.group < 0


def align(release: Release, table: EncodedTable) -> Alignment:
    """Place every person of ``table`` (the original) in ``release`` (module docstring)."""
    cls, n_cls = release.classes()
    n = table.n_rows
    src = release.source_rows
    if src is not None and int(release.meta.get("n_input", -1)) == n and (src.size == 0 or int(src.max()) < n):
        group = np.full(n, -1, dtype=np.int64)
        row = np.full(n, -1, dtype=np.int64)
        group[src] = cls
        row[src] = np.arange(src.size)
        return Alignment(group, row, 0, True)
    missing = [c for c in release.qi if c not in table.columns]
    if missing:
        raise DataError(f"the original table lacks the release's QI column {missing[0]!r}")
    types, n_types = group_ids([table.columns[c].codes for c in release.qi]) if release.kind == "generalized" or \
        release.qi_generalized else (None, 0)
    if release.kind == "bucketized" and release.qi_generalized:
        # Generalized Anatomy: people placed in the QI-table's classes by their labels, then on
        # any row of their class (the file does not say which: every such seating is one of the
        # adversary's equally likely ones, attacks/decoupled.py)
        qcls, n_q = release.qi_classes()
        assert types is not None
        al = _align_labels(release, table, qcls, n_q, types, n_types)
        group = np.where(al.row >= 0, cls[np.maximum(al.row, 0)], -1)
        return Alignment(group, al.row, int((al.row >= 0).sum()), False)
    if release.kind == "bucketized":
        return _align_exact(release, table, cls)
    assert types is not None
    return _align_labels(release, table, cls, n_cls, types, n_types)


def rows_by_sa(group: np.ndarray, cls: np.ndarray, table: EncodedTable, release: Release) -> np.ndarray:
    """Published row of each placed person: within a class, people and rows are matched by
    equal SA value where possible (the auditor knows the truth), else in order."""
    row = np.full(group.size, -1, dtype=np.int64)
    people = np.flatnonzero(group >= 0)
    p_sa = np.zeros(people.size, dtype=np.int64)
    r_sa = np.zeros(cls.size, dtype=np.int64)
    if release.sa in release.data.columns and table.sa_name == release.sa:
        cats = [str(v).strip() for v in table.columns[table.sa_name].categories]
        import pandas as pd

        r_sa = pd.Index(cats).get_indexer(release.data[release.sa].astype(str).str.strip())
        p_sa = table.sa_codes[people].astype(np.int64)
    p_order = people[np.lexsort((p_sa, group[people]))]
    r_order = np.lexsort((r_sa, cls))
    row[p_order] = r_order
    return row


def _align_exact(release: Release, table: EncodedTable, cls: np.ndarray) -> Alignment:
    """Bucketized: exact QI tuples. Each published row takes a person of its tuple."""
    n = table.n_rows
    m = len(release.data)
    # people and published rows typed in one numbering: group ids over both code matrices
    both = [np.concatenate([table.columns[c].codes.astype(np.int64), codes_of(table, c, release.data[c])])
            for c in release.qi]
    ids, _ = group_ids(both)
    person_type, row_type = ids[:n], ids[n:]
    types, n_types = person_type, int(ids.max()) + 1 if ids.size else 0
    have = np.bincount(types, minlength=n_types)
    if m and (have[row_type] == 0).any():
        i = int(np.flatnonzero(have[row_type] == 0)[0])
        bad = {c: release.data[c].iloc[i] for c in release.qi}
        raise DataError(f"the release publishes a QI tuple no person of the original table has ({bad}): it was "
                        "not made from this table")
    need = np.bincount(row_type, minlength=n_types)
    if (need > have).any():
        t = int(np.flatnonzero(need > have)[0])
        raise DataError(f"the release publishes {need[t]} rows with a QI tuple only {have[t]} people of the original "
                        "table have: it was not made from this table")
    group = np.full(n, -1, dtype=np.int64)
    row = np.full(n, -1, dtype=np.int64)
    p_order = np.argsort(types, kind="stable")
    r_order = np.lexsort((np.arange(row_type.size), cls, row_type))
    p_start = np.concatenate([[0], np.cumsum(have)])
    r_start = np.concatenate([[0], np.cumsum(need)])
    rank_in_type = np.arange(row_type.size) - r_start[row_type[r_order]]
    people = p_order[p_start[row_type[r_order]] + rank_in_type]
    group[people] = cls[r_order]
    row[people] = r_order
    classes_per_type = np.zeros(n_types, dtype=np.int64)
    pairs = np.unique(np.stack([row_type, cls], axis=1), axis=0)
    np.add.at(classes_per_type, pairs[:, 0], 1)
    ambiguous = (classes_per_type > 1) | ((need > 0) & (need < have))
    return Alignment(group, row, int(have[ambiguous].sum()), False)


def _align_labels(release: Release, table: EncodedTable, cls: np.ndarray, n_cls: int, types: np.ndarray,
                  n_types: int) -> Alignment:
    """Generalized: classes whose labels cover a person's values; a max flow fills them."""
    n = table.n_rows
    first_row = np.full(n_cls, -1, dtype=np.int64)
    if cls.size:
        first_row[cls[::-1]] = np.arange(cls.size)[::-1]
    first_person = np.full(n_types, -1, dtype=np.int64)
    first_person[types[::-1]] = np.arange(n)[::-1]
    type_codes = np.stack([table.columns[c].codes[first_person] for c in release.qi], axis=1)
    # cover[j]: (n_cls, card_j) — the codes class c's label of column j covers
    cover = []
    for j, name in enumerate(release.qi):
        labels = release.data[name].astype(str).to_numpy()[first_row] if n_cls else np.zeros(0, dtype=object)
        ulab, linv = np.unique(labels, return_inverse=True)
        cover.append(label_masks(table, name, ulab)[np.asarray(linv).ravel()])
    sizes = np.bincount(cls, minlength=n_cls)
    if n_cls == 0:
        return Alignment(np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64), 0, False)
    # candidate (type, class) pairs from the most selective column, filtered by the others
    load = [int(cov.sum(axis=0)[type_codes[:, j]].sum()) for j, cov in enumerate(cover)]
    j0 = int(np.argmin(load))
    cov0 = cover[j0].T  # (card, n_cls)
    ptr = np.concatenate([[0], np.cumsum(cov0.sum(axis=1))])
    idx = np.nonzero(cov0)[1]
    lens = ptr[type_codes[:, j0] + 1] - ptr[type_codes[:, j0]]
    pt = np.repeat(np.arange(n_types), lens)
    pc = idx[np.repeat(ptr[type_codes[:, j0]], lens) + (np.arange(pt.size) - np.repeat(np.cumsum(lens) - lens, lens))]
    keep = np.ones(pt.size, dtype=bool)
    for j, cov in enumerate(cover):
        if j != j0 and pt.size:
            keep &= cov[pc, type_codes[pt, j]]
    pt, pc = pt[keep], pc[keep]
    have = np.bincount(types, minlength=n_types)
    n_cand = np.bincount(pt, minlength=n_types)
    covered = np.bincount(pc, weights=have[pt], minlength=n_cls)
    if (covered < sizes).any():
        c = int(np.flatnonzero(covered < sizes)[0])
        raise DataError(f"the original table has {int(covered[c])} people the labels of published class {c} cover, "
                        f"but the class holds {int(sizes[c])}: the release was not made from this table")
    if (n_cand <= 1).all() and np.array_equal(covered, sizes):
        flow_pt, flow_pc, flow = pt, pc, have[pt]  # unique placement
    else:
        flow_pt, flow_pc, flow = _max_flow(pt, pc, have, sizes, n_types, n_cls)
        if int(flow.sum()) < int(sizes.sum()):
            raise DataError("no placement of the original table's people fills the release's classes: the "
                            "release was not made from this table")
    ambiguous = (n_cand > 1) | (np.bincount(flow_pt, weights=flow, minlength=n_types) < have)
    ambiguous &= n_cand > 0
    # concrete people per (type, class) flow, then rows per class
    group = np.full(n, -1, dtype=np.int64)
    p_order = np.argsort(types, kind="stable")
    p_start = np.concatenate([[0], np.cumsum(have)])
    used = np.zeros(n_types, dtype=np.int64)
    o = np.lexsort((flow_pc, flow_pt))
    for t, c, f in zip(flow_pt[o].tolist(), flow_pc[o].tolist(), flow[o].tolist()):
        if f:
            group[p_order[p_start[t] + used[t]: p_start[t] + used[t] + f]] = c
            used[t] += f
    row = rows_by_sa(group, cls, table, release)
    return Alignment(group, row, int(have[ambiguous].sum()), False)


def _max_flow(pt: np.ndarray, pc: np.ndarray, have: np.ndarray, sizes: np.ndarray, n_types: int,
              n_cls: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source -> type (cap: its people) -> class (cap: unbounded) -> sink (cap: class size)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    s, t = n_types + n_cls, n_types + n_cls + 1
    big = int(have.sum()) + 1
    src = np.concatenate([np.full(n_types, s), pt, n_types + np.arange(n_cls)])
    dst = np.concatenate([np.arange(n_types), n_types + pc, np.full(n_cls, t)])
    cap = np.concatenate([have, np.full(pt.size, big), sizes]).astype(np.int32)
    graph = csr_matrix((cap, (src, dst)), shape=(t + 1, t + 1))
    res = maximum_flow(graph, s, t)
    fl = res.flow.tocsr()
    f = np.asarray(fl[pt, n_types + pc]).ravel().astype(np.int64)
    return pt, pc, np.maximum(f, 0)


def seated_sa(release: Release, table: EncodedTable, al: Alignment) -> np.ndarray:
    """SA code of every person, consistent with the release: a published person takes an SA
    value of their class's published multiset (their own where it fits — always, with the
    publisher's record), an absent person keeps their own. Attacks that read per-class SA
    counts off the original table then see exactly the release's counts."""
    sa = table.sa_codes.astype(np.int64).copy()
    cats = [str(v).strip() for v in table.columns[table.sa_name].categories]
    import pandas as pd

    lookup = pd.Index(cats)
    placed = np.flatnonzero(al.group >= 0)
    if release.kind == "generalized":
        sa[placed] = lookup.get_indexer(release.data[release.sa].astype(str).str.strip().to_numpy()[al.row[placed]])
        return sa
    st = release.sa_table
    assert st is not None  # a bucketized release
    gid_of_class = np.unique(release.data[GID].to_numpy())  # class k <-> k-th smallest GID
    k = np.searchsorted(gid_of_class, st[GID].to_numpy())
    vals = np.repeat(lookup.get_indexer(st[release.sa].astype(str).str.strip()), st["count"].to_numpy())
    cls_of_val = np.repeat(k, st["count"].to_numpy())
    # people of each class sorted by their own SA, values sorted: equal values meet first
    p_order = placed[np.lexsort((sa[placed], al.group[placed]))]
    v_order = np.lexsort((vals, cls_of_val))
    sa[p_order] = vals[v_order]
    return sa


def label_keys(table: EncodedTable, group: np.ndarray, n_groups: int, rows: np.ndarray | None = None) -> np.ndarray:
    """``(n_groups, n_qi, 2)`` integer keys of the values local recoding publishes for each
    group (:func:`.release._generalized_column`): per QI the members' lowest common ancestor
    in the column's hierarchy (twice), or the members' (min, max) code for a numeric column
    published as ranges. Two groups publish the same labels iff their keys are equal.
    ``rows`` (default every row, in order) are the rows ``group`` labels; they may repeat;
    rows of group ``-1`` (suppressed) are left out."""
    group = np.asarray(group, dtype=np.int64)
    rows = np.arange(group.size) if rows is None else np.asarray(rows, dtype=np.int64)
    keep = group >= 0
    group, rows = group[keep], rows[keep]
    out = np.zeros((n_groups, len(table.qi_names), 2), dtype=np.int64)
    for j, name in enumerate(table.qi_names):
        codes = table.columns[name].codes[rows].astype(np.int64)
        if uses_ranges(table, name):
            lo = np.full(n_groups, np.iinfo(np.int64).max)
            hi = np.full(n_groups, -1, dtype=np.int64)
            np.minimum.at(lo, group, codes)
            np.maximum.at(hi, group, codes)
            out[:, j, 0], out[:, j, 1] = lo, hi
        else:
            node = table.hierarchy(name).group_lca(codes, group, n_groups)
            out[:, j, 0] = out[:, j, 1] = node
    return out


def published_classes(table: EncodedTable, group: np.ndarray) -> np.ndarray:
    """The classes a reader of a generalized release sees: groups whose published labels
    are equal (:func:`label_keys`) form one class (as :meth:`Release.classes` reads the
    file). Each class is numbered by its smallest group; ``-1`` (suppressed) stays."""
    group = np.asarray(group, dtype=np.int64)
    pub = group >= 0
    n_groups = int(group.max()) + 1 if pub.any() else 0
    if n_groups == 0:
        return group.copy()
    keys = label_keys(table, group[pub], n_groups, np.flatnonzero(pub)).reshape(n_groups, -1)
    _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    cls_of_group = np.asarray(first)[np.asarray(inv).ravel()]
    rank = np.full(n_groups, -1, dtype=np.int64)
    used = np.unique(cls_of_group)
    rank[used] = np.arange(used.size)
    out = np.full(group.size, -1, dtype=np.int64)
    out[pub] = rank[cls_of_group[group[pub]]]
    return out


def class_label_keys(release: Release, table: EncodedTable) -> np.ndarray:
    """The :func:`label_keys` of the release's generalized classes (``Release.classes()``
    numbering), read from the file's labels against ``table``'s hierarchies and codes."""
    from .labels import RANGE

    cls, n_cls = release.classes()
    first = np.full(n_cls, -1, dtype=np.int64)
    if cls.size:
        first[cls[::-1]] = np.arange(cls.size)[::-1]
    out = np.zeros((n_cls, len(table.qi_names), 2), dtype=np.int64)
    for j, name in enumerate(table.qi_names):
        labels = release.data[name].astype(str).str.strip().to_numpy()[first]
        if uses_ranges(table, name):
            num = np.asarray(table.columns[name].numeric, dtype=np.float64)
            for i, lab in enumerate(labels):
                m = RANGE.match(lab)
                try:
                    lo, hi = (float(m.group(1)), float(m.group(2))) if m else (float(lab), float(lab))
                    out[i, j] = (int(np.flatnonzero(num == lo)[0]), int(np.flatnonzero(num == hi)[0]))
                except (ValueError, IndexError):
                    from ..errors import HierarchyError

                    raise HierarchyError(
                        f"published value {lab!r} of column {name!r} is not a range of the original's values: the "
                        f"release was made with a hierarchy of {name!r}; give it with --hierarchy {name}=PATH",
                        column=name, value=lab) from None
        else:
            node = table.hierarchy(name).nodes_of(labels)
            out[:, j, 0] = out[:, j, 1] = node
    return out


__all__ = ["Alignment", "align", "class_label_keys", "label_keys", "published_classes", "rows_by_sa", "seated_sa",
           "GID"]
