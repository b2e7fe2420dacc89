"""Releases: what is published.

* a **generalized** table (paper 001 §2): each QI value replaced by its group's
  generalization — the lowest common ancestor in the column's hierarchy (categorical, or
  numeric with a declared hierarchy), ``[min-max]`` for a numeric column without one, or
  the ancestor at a fixed level for full-domain recoding — plus the SA and kept columns;
* a **bucketized** release (Anatomy; paper 003 §1): a QI-table (original QI values + GID)
  and an SA-table (GID, SA value, count).

Suppressed rows are not published; the publisher's in-memory record holds ``n_input =
n_published + n_suppressed`` (docs/design.md, "Nothing lost, nothing leaked"), checked before anything is
written; the sidecar publishes those counts only when the publisher opts in
(:mod:`.sidecar`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

import numpy as np
import pandas as pd

from .. import __version__
from ..data.table import EncodedTable, sa_counts
from ..errors import DataError, ParameterError, VerificationError, option
from ..models.base import PrivacyModel, SADomain
from .labels import group_labels
from .partition import Partition
from .record import ReleaseMeta
from .verify import ModelCheck, check_bucketized, check_counts, require, require_bucketized

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
    #: what is known about it (:class:`.record.ReleaseMeta`: every key declared, with what its
    #: sidecar publishes of it)
    meta: ReleaseMeta = field(default_factory=lambda: cast(ReleaseMeta, {}))
    #: the input row of each published row (in memory only, never written; ``None`` for a
    #: loaded release): the publisher's exact alignment for the certificate
    source_rows: np.ndarray | None = field(default=None, repr=False)
    #: the publisher's partition of the input (in memory only, never written): which input
    #: row sits in which group — what the certificate's adversaries are entitled to know
    #: (paper 000 §2.4: "which individuals form each group"); ``None`` for a loaded release
    partition: Partition | None = field(default=None, repr=False)
    #: ``(data, class ids, count)``: the published classes as :func:`build_release` ranked them
    #: group by group (:mod:`.local_frame`) — what :meth:`classes` computes from ``data`` —
    #: used while ``data`` is that frame (a release's frame is replaced, never edited in place)
    _classes: tuple[Any, np.ndarray, int] | None = field(default=None, repr=False)

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
        if self._classes is not None and self._classes[0] is self.data:
            return self._classes[1], self._classes[2]
        from ..data.grouping import group_ids

        # classes numbered in the lexicographic order of their values' ranks (a categorical
        # column's categories in their order, as pd.factorize(..., sort=True) ranks them)
        ids, n = group_ids([_order_key(self.data[c]) + 1 for c in self.qi], sort=True)
        return ids.astype(np.int64, copy=False), n

    @property
    def qi_generalized(self) -> bool:
        """Does the QI-table of a bucketized release publish generalized labels (Generalized
        Anatomy) rather than exact QIs? (Always true of a generalized release.)"""
        return self.kind == "generalized" or self.meta.get("qi_recoding") == "local"

    def qi_classes(self) -> tuple[np.ndarray, int]:
        """Class id of each published row by its published QI values, and the number of
        classes: what identifies a record (the identity line). Generalized: the classes
        themselves; bucketized: the QI-table's rows with equal QI values (exact tuples, or
        generalized labels)."""
        if self.kind == "generalized":
            return self.classes()
        if len(self.data) == 0 or not self.qi:
            return np.zeros(len(self.data), dtype=np.int64), int(len(self.data) > 0)
        from ..data.grouping import group_ids

        # each value's text rank (a categorical column's through its categories), then the
        # rows' tuples ranked: what np.unique(axis=0) of the text ranks gives, without a sort
        keys = [_sorted_codes(self.data[c]) if isinstance(self.data[c].dtype, pd.CategoricalDtype)
                else pd.factorize(self.data[c].astype(str), sort=True)[0].astype(np.int64) for c in self.qi]
        inv, n = group_ids([k - k.min(initial=0) for k in keys], sort=True)
        return inv.astype(np.int64, copy=False), n

    def qi_class_sizes(self) -> np.ndarray:
        """Records per published QI combination (:meth:`qi_classes`)."""
        cls, n = self.qi_classes()
        return np.bincount(cls, minlength=n).astype(np.int64)

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
            n = len(uniq_g)
            # one row per (group, value): its COUNT, under each distinct value of the SA-table
            row_code, distinct = pd.factorize(self.sa_table[self.sa], use_na_sentinel=False)
            by_value = np.zeros((n, len(distinct)), dtype=np.int64)
            np.add.at(by_value, (gids, row_code), self.sa_table[COUNT].to_numpy(np.int64))
        else:
            gids, n = self.classes()
            col = self.data[self.sa]
            codes = col.cat.codes.to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) else None
            if codes is not None and not (codes < 0).any():
                row_code, distinct = codes, col.cat.categories  # no pass over the rows' text
            else:
                row_code, distinct = pd.factorize(col, use_na_sentinel=False)
            by_value = sa_counts(gids, row_code, n, len(distinct))
        # each distinct value present, as text (a categorical's unused categories are no value)
        present = by_value.any(axis=0)
        sa_text = pd.Series(np.asarray(distinct, dtype=object)[present]).astype(str)
        by_value = by_value[:, present]
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
        counts = np.zeros((n, len(values)), dtype=np.int64)
        if np.unique(vals).size == vals.size:
            counts[:, vals] = by_value
        else:  # two values of one text (1 and "1") add up
            for j, v in enumerate(vals):
                counts[:, v] += by_value[:, j]
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
        if self.kind == "bucketized":
            return check_bucketized(model, counts, domain, self.qi_class_sizes())
        return check_counts(model, counts, domain)

    def verify(self, model: PrivacyModel) -> ModelCheck:
        """Raise unless the release satisfies ``model`` and its row counts add up."""
        m = self.meta
        n_in, n_pub, n_sup = m.get("n_input"), m.get("n_published"), m.get("n_suppressed")
        published = len(self.data)
        if n_pub is not None and n_pub != published:
            raise VerificationError(f"release says {n_pub} published rows but holds {published}")
        if n_in is not None and n_pub is not None and n_sup is not None and n_in != n_pub + n_sup:
            raise VerificationError(f"rows lost: input {n_in} != published {n_pub} + suppressed {n_sup}")
        if self.kind == "bucketized" and self.sa_table is not None:
            if int(self.sa_table[COUNT].sum()) != published:
                raise VerificationError("the SA-table counts do not add up to the QI-table rows")
        counts, domain = self.sa_counts()
        try:
            if self.kind == "bucketized":
                return require_bucketized(model, counts, domain, self.qi_class_sizes())
            return require(model, counts, domain)
        except VerificationError as exc:
            # the hint is for the SA groups' half (a bucketized release's QI-table may fail instead)
            sa_half = self.kind != "bucketized" or not check_counts(model, counts, domain).holds
            if sa_half and "sa_reference" not in self.meta and _uses_reference(model) and self.n_suppressed:
                raise VerificationError(
                    f"{exc} (t-closeness is checked against the published rows' distribution, the only one "
                    f"a reader can see; declare the input's distribution public with {option('t_reference', 'input')})",
                    model=model, failing_groups=exc.failing_groups) from None
            raise

    def input_schema(self) -> Any:
        """The schema the release was made under (its sidecar's ``schema``): how an original
        table is read to be compared with it (``--original``, ``certify``, the adversaries)."""
        from ..data.schema import Schema

        return Schema.from_dict(self.meta["schema"])

    @property
    def n_published(self) -> int:
        return len(self.data)

    @property
    def n_suppressed(self) -> int:
        """Rows the publisher withheld: known to the publisher, and to an auditor holding the
        original (:meth:`learn_input_size`); a loaded release whose sidecar does not publish
        the count (the default) says 0 until then."""
        return int(self.meta.get("n_suppressed", 0))

    @property
    def counts_known(self) -> bool:
        """Are the input and suppressed row counts known (publisher, opt-in, or original)?"""
        return "n_input" in self.meta and "n_suppressed" in self.meta

    def learn_input_size(self, n_input: int) -> None:
        """An auditor holding the original table knows ``|T|``, hence how many rows the
        release withheld: complete the in-memory record (never written back unless the
        publisher opted in). A count the sidecar publishes must agree."""
        n_input = int(n_input)
        if n_input < self.n_published:
            raise DataError(f"the original table holds {n_input} rows, fewer than the {self.n_published} the "
                            "release publishes: it is not this release's input")
        if self.counts_known:
            if int(self.meta["n_input"]) != n_input:
                raise DataError(f"the original table holds {n_input} rows; the release's sidecar says its input "
                                f"held {self.meta['n_input']}")
            return
        self.meta["n_input"] = n_input
        self.meta["n_suppressed"] = n_input - self.n_published

    # -- the pandas-first API --------------------------------------------------------------
    def to_pandas(self, table: str = "data") -> pd.DataFrame:
        """A copy of a published table: ``"data"`` (the generalized table, or the QI-table of
        a bucketized release, with its group ids) or ``"sa"`` (the SA-table of a bucketized
        release: group id, SA value, count)."""
        if table == "data":
            return self.data.copy()
        if table == "sa":
            if self.sa_table is None:
                raise ParameterError(f"a {self.kind} release has no SA-table (use table='data')",
                                     parameter="table", value=table)
            return self.sa_table.copy()
        from ..params import check_choice

        check_choice("table", table, ("data", "sa"), model="Release.to_pandas")
        raise AssertionError("unreachable")

    @property
    def certificate(self) -> Mapping[str, Any] | None:
        """The certificate recorded when the release was made (``None`` without one)."""
        return self.meta.get("certificate")

    def save(self, path: str | os.PathLike, *, force: bool = False, publish_suppressed_count: bool | None = None,
             publish_identifier_names: bool | None = None) -> list[Path]:
        """Write the release (data, SA-table, sidecar bound by digests; crash-safe): see
        :func:`openbook.release.io.save_release` — by default the sidecar holds no count of
        suppressed rows and no dropped identifier names; ``publish_suppressed_count`` /
        ``publish_identifier_names`` opt in. Returns the files written."""
        from .io import save_release

        return save_release(self, path, force=force, publish_suppressed_count=publish_suppressed_count,
                            publish_identifier_names=publish_identifier_names)


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
    t_reference: Any = "published",
) -> Release:
    """Recode ``table`` by ``partition`` into a release, verified against ``model``.

    ``levels`` (one hierarchy level per QI) selects full-domain (global) recoding;
    otherwise each group is generalized to its own LCA / range (local recoding).
    ``t_reference`` is the distribution t-closeness is verified against by every reader
    (:func:`_reference`; default: the published rows' own).
    The partition itself is checked first (every row in one group or suppressed), then
    the model on the partition's groups, then the model on the published classes.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown release kind {kind!r}")
    if kind == "bucketized":  # the QI-table's GID column and the SA-table's COUNT column are ours
        kept = [] if table.kept is None else list(table.kept.columns)
        for name in [*table.qi_names, table.sa_name, *kept]:
            if name in (GID, COUNT):
                raise ParameterError(f"column {name!r} has the name of a bucketized release's own column ({GID!r} "
                                     f"in the QI-table, {COUNT!r} in the SA-table): rename it", parameter="qi",
                                     value=name)
    partition.check(table.n_rows)
    qi_group = (partition.extra or {}).get("qi_group") if kind == "bucketized" else None
    if qi_group is not None:
        qi_group = np.asarray(qi_group, dtype=np.int64)
        if qi_group.shape != partition.group.shape or (qi_group[partition.group >= 0] < 0).any():
            raise ValueError("partition.extra['qi_group'] must give every published row a QI class")
    if model is not None and verify:
        gcounts = table.group_sa_counts(partition.group, partition.n_groups)
        if kind == "bucketized":
            keep_rows = partition.group >= 0
            if qi_group is not None:
                sizes = np.bincount(qi_group[keep_rows])
                sizes = sizes[sizes > 0]
            else:
                from ..data.grouping import group_ids

                ids, _ = group_ids(table.qi_codes[keep_rows]) if table.qi_names else (np.zeros(0, np.int64), 0)
                sizes = np.bincount(ids) if ids.size else np.zeros(0, np.int64)
            require_bucketized(model, gcounts, table.sa_domain, sizes, what="partition")
        else:
            require(model, gcounts, table.sa_domain, what="partition")
    keep = partition.group >= 0
    n_published = int(np.count_nonzero(keep))
    # nothing suppressed: the rows 0..n-1 are never materialised (8 bytes a row)
    rows = None if n_published == table.n_rows else np.flatnonzero(keep)
    del keep
    if n_published == 0 and table.n_rows:
        from ..errors import InfeasibleError

        raise InfeasibleError(f"every one of the {table.n_rows} rows would be suppressed: there is nothing to publish "
                              "(relax the model, generalize more, or allow less suppression)", model=model)
    at = slice(None) if rows is None else rows  # the published rows of every column
    group = partition.group[at]
    out: dict[str, Any] = {}
    fast = None
    if kind == "generalized" and levels is None:  # local recoding: labels per group, on codes
        from .local_frame import local_frame

        fast = local_frame(table, group, partition.n_groups, rows)
    if fast is not None:
        sa_table = None
    elif kind == "generalized":
        for j, name in enumerate(table.qi_names):
            out[name] = _generalized_column(table, name, group, partition.n_groups, at,
                                            None if levels is None else int(levels[j]))
        from .local_frame import sa_column

        out[table.sa_name] = sa_column(table.columns[table.sa_name], table.sa_codes[at])
        sa_table = None
    else:
        if qi_group is not None:  # Generalized Anatomy: each row under its QI class's labels
            _, qg = np.unique(qi_group[at], return_inverse=True)
            qg = qg.ravel().astype(np.int64)
            n_qg = int(qg.max()) + 1 if qg.size else 0
        for name in table.qi_names:
            if qi_group is not None:
                out[name] = _generalized_column(table, name, qg, n_qg, at, None)
            else:
                out[name] = table.decode(name, table.columns[name].codes[at])
        out[GID] = group + 1
        counts = table.group_sa_counts(partition.group, partition.n_groups)
        g, s = np.nonzero(counts)
        sa_table = pd.DataFrame({GID: g + 1, table.sa_name: table.columns[table.sa_name].categories[s],
                                 COUNT: counts[g, s]})
    if fast is not None:  # already in canonical order
        data, order, n_classes, class_ids = fast
    else:
        data = pd.DataFrame(out)
        if table.kept is not None:
            for c in table.kept.columns:
                data[c] = table.kept[c].to_numpy()[at]
        # the file must be a function of the published rows alone: canonical row order and GIDs
        # (the SA ranked through its codes: its categories' order, not its rows' values, is sorted)
        sa_col = table.columns[table.sa_name]
        sa_rank = pd.factorize(pd.Series(sa_col.categories), sort=True)[0].astype(np.int64)
        data, sa_table, order = canonical_form(data, sa_table, kind=kind, sa=table.sa_name,
                                               keys={table.sa_name: sa_rank[sa_col.codes[at]]})
    meta: ReleaseMeta = {
        "openbook_version": __version__,
        "kind": kind,
        "schema": table.schema.to_dict(),
        "model": None if model is None else model.to_dict(),
        "algorithm": dict(partition.provenance),
        "n_input": table.n_rows,
        "n_published": n_published,
        "n_suppressed": partition.n_suppressed,
        "n_groups": partition.n_groups,
        "levels": None if levels is None else [int(x) for x in levels],
    }
    if qi_group is not None:
        meta["qi_recoding"] = "local"
    if table.source in _BUILTIN_SOURCES:  # a built-in dataset's name is public; a file path is not
        meta["source"] = table.source
    reference = _reference(table, t_reference)
    if reference is not None:
        meta["sa_reference"] = reference
    release = Release(kind, data, list(table.qi_names), table.sa_name, sa_table, meta, partition=partition,
                      source_rows=order if rows is None else rows[order], _classes=None if fast is None else (data, class_ids, n_classes))
    # the number of classes the files show — a generalized release shows groups whose labels
    # coincide as one class — never the algorithm's own group count: every published number is
    # something a reader could count (docs/release-files.md)
    meta["n_groups"] = n_classes if fast is not None else release.classes()[1]
    if model is not None and verify:
        meta["check"] = release.verify(model).to_dict()
    return release


def _uses_reference(model: Any) -> bool:
    """Does the model compare groups with a table-wide distribution (t-closeness)?"""
    from ..models.t_closeness import TCloseness

    return any(isinstance(m, TCloseness) for m in (getattr(model, "models", None) or [model]))


#: built-in dataset names (their names, unlike a file's path, reveal nothing)
_BUILTIN_SOURCES = ("adult", "adult-train", "synthetic")
#: ``t_reference`` values: the reference distribution of t-closeness a reader checks against
T_REFERENCES = ("published", "input")


def _reference(table: EncodedTable, t_reference: Any) -> dict[str, Any] | None:
    """The SA distribution t-closeness is checked against, when the publisher declares one
    public (``"input"``: the input table's counts — they reveal the suppressed rows' SA
    values; a mapping value -> count: a distribution from elsewhere, e.g. census totals).
    ``"published"`` (the default) records nothing: the reference is the published rows'
    own distribution, which reveals nothing beyond them."""
    if t_reference is None or t_reference == "published":
        return None
    dom = table.sa_domain
    values = [str(v) for v in dom.values]
    if t_reference == "input":
        counts = [int(c) for c in dom.global_counts]
    elif isinstance(t_reference, dict):
        unknown = sorted(set(map(str, t_reference)) - set(values))
        if unknown:
            raise ParameterError(f"--t-reference names SA value {unknown[0]!r} that the table lacks",
                                 parameter="t-reference", value=unknown[0])
        counts = [int(t_reference.get(v, 0)) for v in values]
        if any(c < 0 for c in counts) or sum(counts) <= 0:
            raise ParameterError("--t-reference counts must be non-negative with a positive total",
                                 parameter="t-reference")
    else:
        raise ParameterError(f"t_reference={t_reference!r} must be 'published', 'input' or value -> count",
                             parameter="t-reference", value=t_reference)
    return {"values": values, "counts": counts, "declared_public": True,
            "numeric": None if dom.numeric is None else [float(x) for x in dom.numeric]}


def _sorted_codes(values: Any) -> np.ndarray:
    """Rank of each value in the natural order of the column's values (a categorical column's
    by their text): equal values, equal ranks; ranks need not be dense. A categorical column
    is ranked through its codes — its categories' text ranked once — never its rows' text."""
    v = pd.Series(values)
    if isinstance(v.dtype, pd.CategoricalDtype):
        codes = v.cat.codes.to_numpy()
        if not (codes < 0).any():
            # Categorical.astype(str) is the categories' astype(str) taken by the codes
            rank = pd.factorize(pd.Series(v.cat.categories).astype(str), sort=True)[0]
            return rank.astype(np.int64)[codes]
        v = v.astype(str)
    return pd.factorize(v, sort=True)[0].astype(np.int64)


def _order_key(column: pd.Series) -> np.ndarray:
    """Integer keys of a column in the order ``pd.factorize(column, sort=True)`` ranks its
    values (``-1`` missing): a categorical column's codes (categories rank in their order),
    without hashing its rows."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64)
    return pd.factorize(column, sort=True)[0].astype(np.int64)


def _lexsort_rows(columns: list[np.ndarray], n: int) -> np.ndarray:
    """Row order sorting by the columns, first column most significant, equal rows in their
    order (as ``np.lexsort``): the rows' dense tuple ranks, then one stable sort of them."""
    if not columns:
        return np.arange(n)
    from ..data.grouping import group_ids

    ids, g = group_ids([c - c.min(initial=0) for c in columns], sort=True)
    return stable_argsort(ids, g)


def stable_argsort(ids: np.ndarray, g: int) -> np.ndarray:
    """``np.argsort(ids, kind="stable")`` of integer ids in ``0..g-1``, by radix sorts of
    16-bit digits (numpy's stable sort is a radix sort for 16-bit keys only: ~10x faster),
    int32 below 2^31 ids. The digits are read in place (the ids' bytes seen as 16-bit words)
    and the order between passes is kept in int32: at 10^7 ids the sort's temporaries are
    ~20 bytes an id, not ~40."""
    ids = np.asarray(ids)
    n = ids.size
    if g > 1 << 48 or ids.dtype.kind not in "iu" or sys.byteorder != "little":
        return np.argsort(ids, kind="stable")
    if ids.dtype.itemsize < 2:
        ids = ids.astype(np.uint16)
    words = np.ascontiguousarray(ids).view(np.uint16).reshape(n, -1)  # little-endian: low word first
    small = np.int32 if n < 1 << 31 else np.int64
    order = None
    for d in range(min(max(-(-int(g - 1).bit_length() // 16), 1), words.shape[1])):
        digit = words[:, d]
        if order is None:
            step = np.argsort(digit, kind="stable")
            order = step.astype(small, copy=False)
        else:
            step = np.argsort(digit[order], kind="stable")
            order = order[step]
        del step
    assert order is not None  # the loop runs at least once
    return order


def canonical_form(data: pd.DataFrame, sa_table: pd.DataFrame | None, *, kind: str, sa: str,
                   keys: dict[str, np.ndarray] | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None, np.ndarray]:
    """The release's rows in an order that is a function of the published content alone.

    Row order and group numbering are channels: kept in input order, they hand the hidden
    order (a table sorted by the SA, by a region that is not published) to every reader.
    Generalized: rows sorted by their published values (QI labels, SA, kept columns) and
    categories sorted. Bucketized: GIDs renumbered from each group's content — its size, its
    members' QI tuples (sorted) and its SA counts — so only equal groups can swap numbers;
    the QI-table sorted by (GID, QI values), the SA-table by (GID, SA value). Returns the
    data, the SA-table and ``order`` (``order[i]``: the position before sorting of row ``i``).
    ``keys`` may give, for some columns, integer keys in their values' order (equal values,
    equal keys: what :func:`_sorted_codes` computes, known to the caller from codes).
    """
    keys = keys or {}
    data = data.copy()
    n = len(data)
    for c in data.columns:  # category order is written by Parquet: sorted, not first-seen
        if isinstance(data[c].dtype, pd.CategoricalDtype):
            data[c] = data[c].cat.reorder_categories(sorted(data[c].cat.categories, key=str))
    if kind == "generalized":
        cols = [keys[c] if c in keys else _sorted_codes(data[c]) for c in data.columns]
        order = _lexsort_rows(cols, n)
        return data.iloc[order].reset_index(drop=True), None, order
    assert sa_table is not None
    other = [c for c in data.columns if c != GID]
    rank = np.zeros(n, dtype=np.int64)
    if n:
        cols = [keys[c] if c in keys else _sorted_codes(data[c]) for c in other]
        o = _lexsort_rows(cols, n)
        row_keys = np.stack(cols, axis=1)[o] if cols else np.zeros((n, 0), dtype=np.int64)
        new = np.ones(n, dtype=bool)
        if n > 1 and row_keys.shape[1]:
            new[1:] = (row_keys[1:] != row_keys[:-1]).any(axis=1)
        rank[o] = np.cumsum(new) - 1
    gids, g = np.unique(data[GID].to_numpy(np.int64), return_inverse=True)
    g = g.ravel().astype(np.int64)
    n_groups = gids.size
    sizes = np.bincount(g, minlength=n_groups)
    # SA counts per group, values in name order, from the SA-table
    st_g = np.searchsorted(gids, sa_table[GID].to_numpy(np.int64))
    st_v = _sorted_codes(sa_table[sa])
    n_sa = int(st_v.max()) + 1 if len(sa_table) else 0
    counts = np.zeros((n_groups, max(n_sa, 1)), dtype=np.int64)
    np.add.at(counts, (st_g, st_v), sa_table[COUNT].to_numpy(np.int64))
    by_group = np.lexsort((rank, g))
    width = int(sizes.max(initial=0))
    if n_groups * max(width, 1) <= 50_000_000:
        mat = np.full((n_groups, width), -1, dtype=np.int64)
        start = np.cumsum(sizes) - sizes
        pos = np.arange(n) - np.repeat(start, sizes)
        mat[g[by_group], pos] = rank[by_group]
        group_keys = [sizes] + [mat[:, j] for j in range(width)] + [counts[:, j] for j in range(counts.shape[1])]
        gorder = np.lexsort(group_keys[::-1])
    else:  # very wide groups: compare member sequences in Python
        seqs = np.split(rank[by_group], np.cumsum(sizes)[:-1])
        gorder = np.array(sorted(range(n_groups), key=lambda j: (int(sizes[j]), tuple(seqs[j].tolist()),
                                                                  tuple(counts[j].tolist()))), dtype=np.int64)
    new_gid = np.empty(n_groups, dtype=np.int64)
    new_gid[gorder] = np.arange(n_groups)
    data[GID] = new_gid[g] + 1
    order = np.lexsort((rank, new_gid[g]))
    data = data.iloc[order].reset_index(drop=True)
    st = sa_table.copy()
    st[GID] = new_gid[st_g] + 1
    st = st.iloc[np.lexsort((st_v, st[GID].to_numpy()))].reset_index(drop=True)
    return data, st, order


def _generalized_column(table: EncodedTable, name: str, group: np.ndarray, n_groups: int,
                        rows: np.ndarray | slice, level: int | None) -> pd.Categorical:
    col = table.columns[name]
    codes = col.codes[rows]
    if level is not None:
        h = table.hierarchy(name)
        nodes = h.generalize(codes, level)
        uniq, inv = np.unique(nodes, return_inverse=True)
        return pd.Categorical.from_codes(inv, categories=pd.Index(_unique_labels(h.label_of(uniq))))
    if group.size == 0:
        return pd.Categorical([])
    per_group = group_labels(table, name, group, n_groups, codes)
    # the groups' labels numbered once, then the rows' codes (no label per row is made)
    label_of_group, uniq = pd.factorize(per_group)
    label_codes = label_of_group[group]
    used = np.bincount(label_codes, minlength=len(uniq)) > 0
    if not used.all():  # labels of groups without a published row are no category
        renumber = np.cumsum(used) - 1
        label_codes, uniq = renumber[label_codes], uniq[used]
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
