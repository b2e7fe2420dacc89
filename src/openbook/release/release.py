"""Releases: what is published.

* a **generalized** table (paper 001 §2): each QI value replaced by its group's
  generalization — the lowest common ancestor in the column's hierarchy (categorical, or
  numeric with a declared hierarchy), ``[min-max]`` for a numeric column without one, or
  the ancestor at a fixed level for full-domain recoding — plus the SA and kept columns;
* a **bucketized** release (Anatomy; paper 003 §1): a QI-table (original QI values + GID)
  and an SA-table (GID, SA value, count).

Suppressed rows are not published; the release records ``n_input = n_published +
n_suppressed`` (DESIGN.md, "Nothing is lost").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import __version__
from ..data.table import EncodedTable
from ..errors import DataError, VerificationError
from ..models.base import PrivacyModel, SADomain
from .partition import Partition
from .verify import ModelCheck, check_counts, require

KINDS = ("generalized", "bucketized")
GID = "gid"
COUNT = "count"


@dataclass(eq=False)
class Release:
    """A published table (or table pair) and what is known about how it was made."""

    kind: str
    data: pd.DataFrame
    qi: list[str]
    sa: str
    sa_table: pd.DataFrame | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: the publisher's partition of the input (in memory only, never written): which input
    #: row sits in which group — what the certificate's adversaries are entitled to know
    #: (paper 000 §2.4: "which individuals form each group"); ``None`` for a loaded release
    partition: Partition | None = field(default=None, repr=False)

    # -- the published classes, as a reader of the files sees them ------------------------
    def classes(self) -> tuple[np.ndarray, int]:
        """Class id of each published row of ``data`` and the number of classes.

        Generalized: rows with identical generalized QI values form one class (what any
        reader sees). Bucketized: the GID column.
        """
        if self.kind == "bucketized":
            codes, uniq = pd.factorize(self.data[GID], sort=True)
            return codes.astype(np.int64), len(uniq)
        if len(self.data) == 0:
            return np.zeros(0, dtype=np.int64), 0
        keys = [pd.factorize(self.data[c], sort=True)[0].astype(np.int64) for c in self.qi]
        combined = keys[0]
        for k in keys[1:]:
            _, combined = np.unique(combined * (int(k.max()) + 1) + k, return_inverse=True)
        codes, uniq = pd.factorize(combined, sort=True)
        return codes.astype(np.int64), len(uniq)

    def sa_counts(self) -> tuple[np.ndarray, SADomain]:
        """``(n_classes, n_sa)`` SA counts of the published classes and the SA domain.

        The domain is the one recorded at publication (``meta["sa_reference"]``: the input
        table's SA values in code order, their counts — the reference distribution of
        t-closeness, so suppressing rows does not move it — and numeric values for ordered
        distance); a release without that record falls back to the published rows.
        """
        if self.kind == "bucketized":
            assert self.sa_table is not None
            gids, uniq_g = pd.factorize(self.sa_table[GID], sort=True)
            sa_text, weights, n = self.sa_table[self.sa].astype(str), self.sa_table[COUNT].to_numpy(np.int64), len(uniq_g)
        else:
            gids, n = self.classes()
            sa_text, weights = self.data[self.sa].astype(str), None
        ref = self.meta.get("sa_reference")
        if ref:
            values = np.asarray(ref["values"], dtype=object)
            vals = pd.Index(values).get_indexer(sa_text)
            if (vals < 0).any():
                bad = sa_text.iloc[int(np.flatnonzero(vals < 0)[0])]
                raise DataError(f"release holds SA value {bad!r} that its sidecar's SA domain lacks")
            global_counts = np.asarray(ref["counts"], dtype=np.int64)
            numeric = None if ref.get("numeric") is None else np.asarray(ref["numeric"], dtype=np.float64)
        else:
            vals, uniq_v = pd.factorize(sa_text, sort=True)
            values = np.asarray(uniq_v, dtype=object)
            global_counts = None
            numeric = None
            try:
                numeric = values.astype(np.float64)
            except (TypeError, ValueError):
                pass
        m = len(values)
        flat = np.bincount(np.asarray(gids, dtype=np.int64) * m + vals, weights=weights, minlength=n * m)
        counts = flat.astype(np.int64).reshape(n, m)
        if global_counts is None:
            global_counts = counts.sum(axis=0)
        sets = {}
        for name, members in self.meta.get("schema", {}).get("sensitive_sets", {}).items():
            want = {str(x) for x in members}
            sets[name] = np.array([str(v) in want for v in values], dtype=bool)
        domain = SADomain(values=values, global_counts=global_counts, numeric=numeric, sensitive_sets=sets)
        return counts, domain

    def check(self, model: PrivacyModel) -> ModelCheck:
        counts, domain = self.sa_counts()
        return check_counts(model, counts, domain)

    def verify(self, model: PrivacyModel) -> ModelCheck:
        """Raise unless the release satisfies ``model`` and its row counts add up."""
        n_in, n_pub, n_sup = (self.meta.get(k) for k in ("n_input", "n_published", "n_suppressed"))
        published = len(self.data)
        if n_pub is not None and n_pub != published:
            raise VerificationError(f"release says {n_pub} published rows but holds {published}")
        if None not in (n_in, n_pub, n_sup) and n_in != n_pub + n_sup:
            raise VerificationError(f"rows lost: input {n_in} != published {n_pub} + suppressed {n_sup}")
        if self.kind == "bucketized" and self.sa_table is not None:
            if int(self.sa_table[COUNT].sum()) != published:
                raise VerificationError("the SA-table counts do not add up to the QI-table rows")
        counts, domain = self.sa_counts()
        return require(model, counts, domain)

    @property
    def n_published(self) -> int:
        return len(self.data)

    @property
    def n_suppressed(self) -> int:
        return int(self.meta.get("n_suppressed", 0))


# ---------------------------------------------------------------------------------------
# Building releases from a table and a partition
# ---------------------------------------------------------------------------------------
def build_release(
    table: EncodedTable,
    partition: Partition,
    *,
    model: PrivacyModel | None,
    kind: str = "generalized",
    levels: Sequence[int] | None = None,
    verify: bool = True,
) -> Release:
    """Recode ``table`` by ``partition`` into a release, verified against ``model``.

    ``levels`` (one hierarchy level per QI) selects full-domain (global) recoding;
    otherwise each group is generalized to its own LCA / range (local recoding).
    The partition itself is checked first (every row in one group or suppressed), then
    the model on the partition's groups, then the model on the published classes.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown release kind {kind!r}")
    partition.check(table.n_rows)
    if model is not None and verify:
        require(model, table.group_sa_counts(partition.group, partition.n_groups), table.sa_domain, what="partition")
    keep = partition.group >= 0
    rows = np.flatnonzero(keep)
    group = partition.group[rows]
    out: dict[str, Any] = {}
    if kind == "generalized":
        for j, name in enumerate(table.qi_names):
            out[name] = _generalized_column(table, name, group, partition.n_groups, rows,
                                            None if levels is None else int(levels[j]))
        out[table.sa_name] = table.decode(table.sa_name, table.sa_codes[rows])
        sa_table = None
    else:
        for name in table.qi_names:
            out[name] = table.decode(name, table.columns[name].codes[rows])
        out[GID] = group + 1
        counts = table.group_sa_counts(partition.group, partition.n_groups)
        g, s = np.nonzero(counts)
        sa_table = pd.DataFrame({GID: g + 1, table.sa_name: table.columns[table.sa_name].categories[s],
                                 COUNT: counts[g, s]})
    data = pd.DataFrame(out)
    if table.kept is not None:
        for c in table.kept.columns:
            data[c] = table.kept[c].to_numpy()[rows]
    meta = {
        "openbook_version": __version__,
        "kind": kind,
        "schema": table.schema.to_dict(),
        "model": None if model is None else model.to_dict(),
        "algorithm": dict(partition.provenance),
        "n_input": table.n_rows,
        "n_published": int(rows.size),
        "n_suppressed": partition.n_suppressed,
        "n_groups": partition.n_groups,
        "levels": None if levels is None else [int(x) for x in levels],
        "sa_reference": _sa_reference(table),
        "dropped_columns": list(table.dropped_columns),
        "source": table.source,
    }
    release = Release(kind, data, list(table.qi_names), table.sa_name, sa_table, meta, partition=partition)
    if model is not None and verify:
        meta["check"] = release.verify(model).to_dict()
    return release


def _sa_reference(table: EncodedTable) -> dict[str, Any]:
    """The SA domain as published in the sidecar: values in code order, the input table's
    counts (t-closeness's reference distribution) and numeric values if any."""
    dom = table.sa_domain
    return {"values": [str(v) for v in dom.values], "counts": [int(c) for c in dom.global_counts],
            "numeric": None if dom.numeric is None else [float(x) for x in dom.numeric]}


def _generalized_column(table: EncodedTable, name: str, group: np.ndarray, n_groups: int,
                        rows: np.ndarray, level: int | None) -> pd.Categorical:
    col = table.columns[name]
    codes = col.codes[rows]
    if level is not None:
        h = table.hierarchy(name)
        nodes = h.generalize(codes, level)
        uniq, inv = np.unique(nodes, return_inverse=True)
        return pd.Categorical.from_codes(inv, categories=pd.Index(_unique_labels(h.label_of(uniq))))
    if group.size == 0:
        return pd.Categorical([])
    if col.kind == "numeric" and name not in table.hierarchies:
        lo = np.full(n_groups, np.iinfo(np.int64).max)
        hi = np.full(n_groups, -1)
        np.minimum.at(lo, group, codes)
        np.maximum.at(hi, group, codes)
        used = hi >= 0
        lo, hi = np.where(used, lo, 0), np.where(used, hi, 0)
        a = pd.Series(col.categories[lo]).astype(str)
        b = pd.Series(col.categories[hi]).astype(str)
        per_group = np.where(lo == hi, a, "[" + a + "-" + b + "]").astype(object)
    else:
        h = table.hierarchy(name)
        nodes = h.group_lca(codes, group, n_groups)
        per_group = np.asarray(h.label_of(nodes), dtype=object)
    label_codes, uniq = pd.factorize(per_group[group])
    return pd.Categorical.from_codes(label_codes, categories=pd.Index(uniq.astype(str)))


def _unique_labels(labels: Any) -> list[str]:
    out = [str(x) for x in labels]
    if len(set(out)) != len(out):  # two nodes with one label (a DAG): keep them apart
        seen: dict[str, int] = {}
        for i, x in enumerate(out):
            seen[x] = seen.get(x, 0) + 1
            if seen[x] > 1:
                out[i] = f"{x}#{seen[x]}"
    return out
