"""Mondrian on Spark, strict and relaxed (LeFevre et al. 2006; paper 000 §2.3, §3.2; docs/spark.md).

1. :func:`.mondrian_plan.plan_top` cuts the table on the driver, from exact histograms, until
   every open node holds at most ``max_fragment`` rows — the local engine's cuts at those nodes.
2. Each leaf of that plan is a *fragment*: its rows (codes, SA, input row id) are grouped on
   one executor (``groupBy(fragment).applyInArrow``), sorted by input row id, and the local
   :func:`~openbook.algorithms.mondrian.mondrian_partition` finishes it with the whole
   table's dictionaries (so its widths are normalised by the whole table's spans and domain
   sizes) and the whole table's SA domain (t-closeness compares with the whole table). A
   fragment given so is exactly the subtree the local run builds below that node, so the
   classes are the local engine's classes: the same partition, which the replay adversary
   replays unchanged. Each class's published values are computed where its rows are, by the
   local release code (a range, or the hierarchy's lowest common ancestor).
3. :func:`verify` checks the model on every class *of the whole release* on the cluster
   (grouped SA counts per class), before anything is written.

:class:`SparkMondrianResult` holds the labelled rows ``(_row, cls, <QI labels>, s)`` (``cls``
= fragment × 2^32 + the fragment's group) and the figures of the run.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..algorithms.mondrian import mondrian_partition
from ..data.grouping import group_ids
from ..errors import InfeasibleError
from ..models.base import PrivacyModel
from .encoding import ROW, SA, SparkTable, qi_col
from .mondrian_plan import DEFAULT_MAX_FRAGMENT, TopPlan, placed_batches, plan_top

CLS = "_cls"
FRAG = "_frag"


def label_col(j: int) -> str:
    """The column of QI ``j``'s published label in the labelled rows."""
    return f"g{j}"


@dataclass
class SparkMondrianResult:
    """A distributed Mondrian run (module docstring)."""

    rows: Any
    plan: TopPlan
    st: SparkTable
    model: PrivacyModel
    strict: bool

    @property
    def n_fragments(self) -> int:
        return self.plan.n_fragments


def spark_mondrian(st: SparkTable, model: PrivacyModel, *, strict: bool = True,
                   max_fragment: int = DEFAULT_MAX_FRAGMENT) -> SparkMondrianResult:
    """Mondrian on the cluster (module docstring): the labelled rows, cached."""
    import pyarrow as pa
    from pyspark import StorageLevel

    from ..release.release import group_labels

    model.validate(st.domain)
    plan = plan_top(st, model, strict=strict, max_fragment=max_fragment)
    arrays = plan.arrays()
    d = st.d
    dictionaries, domain = st.dictionaries, st.domain
    from .encoding import materialize_hierarchies

    materialize_hierarchies(dictionaries, numeric=False)  # once on the driver, shipped to the executors

    def tag(batches: Iterator[Any]) -> Iterator[Any]:
        for b, _, _, _, node in placed_batches(batches, arrays, d):
            yield b.append_column(FRAG, pa.array(arrays["fragment"][node]))

    in_schema = ", ".join([f"{ROW} long"] + [f"{qi_col(j)} int" for j in range(d)] + [f"{SA} int", f"{FRAG} long"])
    out_schema = ", ".join([f"{ROW} long", f"{CLS} long"] + [f"{label_col(j)} string" for j in range(d)]
                           + [f"{SA} int"])

    def finish(table: Any) -> Any:
        """The local Mondrian on one fragment, and its classes' published labels."""
        order = np.argsort(table.column(ROW).to_numpy(), kind="stable")
        table = table.take(pa.array(order))
        X = np.column_stack([table.column(qi_col(j)).to_numpy() for j in range(d)])
        sa = table.column(SA).to_numpy()
        frag = dictionaries_fragment(X, sa)
        res = mondrian_partition(frag, model, strict=strict, categorical="ordered", domain=domain)
        group, n_groups = res["group"], int(res["n_groups"])
        f = int(table.column(FRAG)[0].as_py())
        cols = [pa.array(table.column(ROW).to_numpy()), pa.array((np.int64(f) << 32) + group.astype(np.int64))]
        # each class's published values by the local release's label code, once per class and
        # laid out by Arrow (the model is checked globally); Mondrian publishes every row
        idx = pa.array(group.astype(np.int32))
        for name in frag.qi_names:
            words = pa.array(group_labels(frag, name, group, n_groups), pa.string())
            cols.append(pa.DictionaryArray.from_arrays(idx, words).cast(pa.string()))
        cols.append(pa.array(sa.astype(np.int32)))
        return pa.table(cols, names=[ROW, CLS] + [label_col(j) for j in range(d)] + [SA])

    def dictionaries_fragment(X: np.ndarray, sa: np.ndarray) -> Any:
        from .encoding import fragment_table

        return fragment_table(dictionaries, X, sa)

    tagged = st.df.mapInArrow(tag, in_schema)
    with warnings.catch_warnings():  # Arrow batches only: PySpark's pandas-version check does not apply
        warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas", category=FutureWarning)
        rows = tagged.groupBy(FRAG).applyInArrow(finish, out_schema).persist(StorageLevel.MEMORY_AND_DISK)
    return SparkMondrianResult(rows, plan, st, model, strict)


def verify(res: SparkMondrianResult) -> dict[str, Any]:
    """The model on every class of the whole release as a reader sees it — the rows sharing
    one tuple of published QI labels (two Mondrian groups with equal labels are one class) —
    on the cluster, from grouped SA counts, against the whole table's SA domain:
    ``{"classes", "failing", "rows"}``. Raises :class:`~openbook.errors.InfeasibleError`
    when a class fails (nothing is then written)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    model, domain, n_sa = res.model, res.st.domain, res.st.n_sa
    labels = [label_col(j) for j in range(res.st.d)]
    counts = res.rows.groupBy(*labels, SA).count().repartition(*labels)

    def check(batches: Iterator[Any]) -> Iterator[Any]:
        got = list(batches)
        if not got:
            return
        t = pa.Table.from_batches(got)
        keys = [t.column(c).to_numpy(zero_copy_only=False) for c in labels]
        ids, _ = group_ids([np.unique(k, return_inverse=True)[1] for k in keys])
        u, inv = np.unique(ids, return_inverse=True)
        mat = np.zeros((u.size, n_sa), dtype=np.int64)
        np.add.at(mat, (inv, t.column(SA).to_numpy()), t.column("count").to_numpy())
        ok = np.asarray(model.holds(mat, domain), dtype=bool) if u.size else np.zeros(0, dtype=bool)
        yield pa.RecordBatch.from_arrays([pa.array([int(u.size)]), pa.array([int((~ok).sum())]),
                                          pa.array([int(mat.sum())])], names=["classes", "failing", "rows"])

    got = counts.mapInArrow(check, "classes long, failing long, rows long").agg(
        *(F.sum(c).alias(c) for c in ("classes", "failing", "rows"))).toArrow().to_pylist()[0]
    out = {k: int(v or 0) for k, v in got.items()}
    if out["failing"]:
        raise InfeasibleError(f"mondrian --engine spark: {out['failing']} of {out['classes']} classes do not satisfy "
                              f"{model.describe() if hasattr(model, 'describe') else model}", model=model)
    return out
