"""``anonymize --algorithm full-domain-search --engine spark``: full-domain search (Samarati
2001; LeFevre et al., Incognito, 2005; Kohlmayer et al., Flash, 2012 — the global recoding
paper 001 §4.1 attacks) with the counts aggregated on the cluster and the lattice walk on
the driver.

**One aggregation.** A node is decided from class counts, never rows
(:mod:`openbook.algorithms.lattice_counts`): its classes are the table's distinct QI code
tuples (*combinations*) rolled up to the node's levels, each with its size and SA counts. So
the cluster aggregates the table once into its frequency table — one row per distinct
(QI codes, SA code) with its count and its first row — and the driver runs the local
engine's :class:`~openbook.algorithms.lattice.Lattice` and
:func:`~openbook.algorithms.lattice.search_lattice` on it
(:class:`~openbook.algorithms.lattice_counts.LatticeData`). Every node check, bound, tag
and metric is then the local engine's, on the same counts; the combinations are put in the
local engine's order (first appearance in input order, from each combination's first
``_row``) so that even the float sums of the metric are summed in the same order — the
chosen node, the minimal nodes, their metrics and the number of nodes checked are the local
ones (``tests/spark/test_spark_full_domain.py``). The frequency table has at most
``min(n, Π cardinalities × |SA|)`` rows — small for big tables with few QIs; above
:data:`MAX_DRIVER_ROWS` the search refuses in one line (use Mondrian, which plans on
histograms and runs on the executors).

**The release.** Each combination's class at the chosen node and whether that class holds
are a small table; a broadcast join on the QI codes gives every row its class
(:func:`row_labels`, ``-1`` = suppressed), as the local
:meth:`~openbook.algorithms.lattice.FullDomainSearch.partition` labels them. The published
rows carry each QI's hierarchy label at the node's level, computed per combination on the
driver as the local release builder labels full-domain recoding
(:func:`openbook.release.release.build_release` with ``levels``); :func:`verify` checks the
model on every published class on the cluster against the published rows' SA distribution
(what every reader checks, the default ``t_reference``) before
:func:`openbook.spark.output.write_release` writes the Parquet folder and its sidecar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.lattice import FullDomainSearch, Lattice, release_provenance, search_lattice
from ..algorithms.lattice_counts import LatticeData
from ..data.grouping import group_ids
from ..errors import InfeasibleError, ParameterError
from ..models.base import PrivacyModel
from ..release import Partition
from .encoding import ROW, SA, SparkTable

#: the largest frequency table (distinct (QI tuple, SA value) rows) brought to the driver
MAX_DRIVER_ROWS = 50_000_000
#: the name of the class column :func:`row_labels` gives
GROUP = "_gid"


@dataclass(eq=False)
class FullDomainResult:
    """The search's outcome: the chosen ``levels``, the local engine's ``provenance`` keys,
    and per combination (the rows of ``combos``, QI codes) its class at the chosen node
    (``combo_class``) and whether that class is published (``combo_kept``)."""

    levels: list[int]
    provenance: dict[str, Any]
    combos: np.ndarray
    combo_class: np.ndarray
    combo_kept: np.ndarray
    n_suppressed: int
    lattice: Lattice = field(repr=False)


def frequency_data(st: SparkTable, *, max_rows: int = MAX_DRIVER_ROWS) -> LatticeData:
    """The table's combinations with their SA counts (:class:`LatticeData`), aggregated on the
    cluster, in the local engine's order (first appearance in input order)."""
    from pyspark.sql import functions as F

    qi = st.qi_cols
    from pyspark import StorageLevel

    agg = st.df.groupBy(*qi, SA).agg(F.count(F.lit(1)).alias("_n"), F.min(ROW).alias("_first"))
    agg = agg.persist(StorageLevel.MEMORY_AND_DISK)  # counted, then collected: aggregated once
    try:
        m = agg.count()
        if m > max_rows:
            raise ParameterError(f"full-domain search on Spark: the table has {m:,} distinct (QI, SA) combinations, "
                                 f"above the {max_rows:,} the driver searches; use --algorithm mondrian",
                                 parameter="algorithm", value="full-domain-search")
        t = agg.toArrow()
    finally:
        agg.unpersist()
    n_sa = st.n_sa
    hier = [st.dictionaries.hierarchy(name) for name in st.qi_names]
    if t.num_rows == 0:
        raise ParameterError("the table has no rows", parameter="input")
    cols = [t.column(c).to_numpy().astype(np.int64) for c in qi]
    sa = t.column(SA).to_numpy().astype(np.int64)
    cnt = t.column("_n").to_numpy().astype(np.int64)
    first = t.column("_first").to_numpy().astype(np.int64)
    if cols:
        cid, mc = group_ids(cols)
    else:
        cid, mc = np.zeros(len(sa), dtype=np.int64), 1
    combo_first = np.full(mc, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(combo_first, cid, first)
    order = np.argsort(combo_first, kind="stable")  # combination ids in first-appearance order
    rank = np.empty(mc, dtype=np.int64)
    rank[order] = np.arange(mc)
    r = rank[cid]
    combos = np.zeros((mc, len(qi)), dtype=np.int64)
    for j, c in enumerate(cols):
        combos[r, j] = c
    counts = np.zeros((mc, n_sa), dtype=np.int64)
    np.add.at(counts, (r, sa), cnt)
    return LatticeData(combos, counts, hier, st.domain, st.qi_names)


def _validate(algo: FullDomainSearch, st: SparkTable) -> None:
    """The local :meth:`FullDomainSearch._validate` on the table's SA domain."""
    if not isinstance(algo.model, PrivacyModel):
        raise ParameterError(f"{algo.name}: model must be a privacy model, got {algo.model!r}", parameter="model")
    algo.check_params()
    try:
        algo.model.validate(st.domain)
    except InfeasibleError:
        if float(algo.max_suppression) == 0.0:  # with a budget the lattice decides (as locally)
            raise


def search(st: SparkTable, algo: FullDomainSearch, *, max_rows: int = MAX_DRIVER_ROWS) -> FullDomainResult:
    """Full-domain search of ``st`` with ``algo``'s model, budget and metric (module docstring)."""
    _validate(algo, st)
    data = frequency_data(st, max_rows=max_rows)
    lat = Lattice(data, algo.model, float(algo.max_suppression))
    res = search_lattice(lat, algo.metric, bool(getattr(algo, "all_minimal", False)))
    levels = [int(x) for x in res["best"]]
    algo._levels = levels
    ev = lat.evaluate(levels)
    prov = release_provenance(algo, res)
    combo_class = np.asarray(ev["combo_class"], dtype=np.int64)
    kept = np.asarray(ev["holds"], dtype=bool)[combo_class]
    return FullDomainResult(levels, prov, data.combos, combo_class, kept, int(ev["suppressed"]), lat)


def row_labels(st: SparkTable, res: FullDomainResult) -> Any:
    """``(_row, q0.., s, _gid)`` of every row: its class at the chosen node, ``-1`` when the
    class is suppressed — a broadcast join on the QI codes."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    arrays = {c: pa.array(res.combos[:, j].astype(np.int32)) for j, c in enumerate(st.qi_cols)}
    arrays[GROUP] = pa.array(np.where(res.combo_kept, res.combo_class, -1).astype(np.int64))
    small = st.df.sparkSession.createDataFrame(pa.table(arrays))
    if not st.qi_cols:
        return st.df.crossJoin(F.broadcast(small))
    return st.df.join(F.broadcast(small), st.qi_cols, "inner")


@dataclass(eq=False)
class FullDomainRelease:
    """The published rows of a full-domain search on the cluster — ``(g0.., s)``: each QI's
    label at the chosen node and the SA code, suppressed rows left out — with what
    :mod:`openbook.spark.output` reads (``rows``, ``st``, ``model``)."""

    rows: Any
    st: SparkTable
    model: PrivacyModel
    result: FullDomainResult


def release_rows(st: SparkTable, res: FullDomainResult, model: PrivacyModel) -> FullDomainRelease:
    """The published rows at the chosen node (module docstring)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from ..release import build_release
    from .encoding import fragment_table
    from .mondrian import label_col

    combos = res.combos[res.combo_kept]
    arrays: dict[str, Any] = {c: pa.array(combos[:, j].astype(np.int32)) for j, c in enumerate(st.qi_cols)}
    # the local release builder's labels at the node, one row per published combination
    m = len(combos)
    probe = fragment_table(st.dictionaries, combos, np.zeros(m, dtype=np.int32))
    rel = build_release(probe, Partition(np.arange(m, dtype=np.int64), m), model=None, levels=res.levels,
                        verify=False)
    for j, name in enumerate(st.qi_names):
        lab = np.empty(m, dtype=object)
        lab[rel.source_rows] = rel.data[name].astype(str).to_numpy(dtype=object)
        arrays[label_col(j)] = pa.array(lab.tolist(), pa.string())
    small = st.df.sparkSession.createDataFrame(pa.table(arrays))
    labels = [label_col(j) for j in range(st.d)]
    rows = st.df.join(F.broadcast(small), st.qi_cols, "inner").select(ROW, *labels, SA)
    return FullDomainRelease(rows, st, model, res)


def verify(rel: FullDomainRelease, figures: Any = None) -> dict[str, Any]:
    """The model on every published class (rows sharing one tuple of labels), from grouped SA
    counts on the cluster (:func:`.classes.class_pass`), against the published rows' SA
    distribution — as the local search verifies and as a reader re-checks it (which gives
    the sidecar's ``check``): ``{"classes", "failing", "rows", "check", ...}`` (with
    ``figures(release domain)`` the certificate's class figures too);
    :class:`InfeasibleError` when a class fails (nothing is written)."""
    from .classes import check_record, class_pass, gate_domain, published_counts, release_domain
    from .mondrian import label_col

    st, model = rel.st, rel.model
    labels = [label_col(j) for j in range(st.d)]
    pub = published_counts(rel.rows, st.n_sa)
    rdom, rindex = release_domain(st, pub, st.dictionaries.schema.to_dict())
    if pub.sum() == 0:
        out: dict[str, Any] = {"classes": 0, "failing": 0, "rows": 0, "level": float("nan"), "spans": []}
    else:
        out = class_pass(rel.rows, labels, st, model, gate=gate_domain(st, pub), rdom=rdom, rindex=rindex,
                         figures=None if figures is None else figures(rdom))
        out["failing"] = max(out.pop("failing_gate"), out["failing"])
    out["check"] = check_record(model, out)
    out["release_domain"], out["release_index"] = rdom, rindex
    out["published"] = pub
    if out["failing"]:
        raise InfeasibleError(f"full-domain-search --engine spark: {out['failing']} of {out['classes']} published "
                              f"classes do not satisfy {rel.model.describe()}", model=rel.model)
    return out


def release_meta(rel: FullDomainRelease, check: dict[str, Any], n_published: int) -> dict[str, Any]:
    """The publisher's record (the keys the local :func:`build_release` records)."""
    from .. import __version__
    from ..data.datasets import DATASETS

    st, res, model = rel.st, rel.result, rel.model
    meta: dict[str, Any] = {
        "openbook_version": __version__, "kind": "generalized", "schema": st.dictionaries.schema.to_dict(),
        "model": model.to_dict(), "algorithm": res.provenance | {"engine": "spark"}, "n_input": st.n_rows,
        "n_published": n_published, "n_suppressed": st.n_rows - n_published, "n_groups": check["classes"],
        "levels": list(res.levels),
        "check": check["check"],
    }
    if st.dictionaries.source in DATASETS:  # a built-in dataset's name is public; a path is not
        meta["source"] = st.dictionaries.source
    return meta
