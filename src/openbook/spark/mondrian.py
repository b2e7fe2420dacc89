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


def tagged_rows(st: SparkTable, plan: TopPlan) -> Any:
    """The table's rows ``(_row, q.., s, _frag)``, each with the fragment of the plan it
    descends to (on the executors)."""
    import pyarrow as pa

    arrays = plan.arrays()
    d = st.d

    def tag(batches: Iterator[Any]) -> Iterator[Any]:
        for b, _, _, _, node in placed_batches(batches, arrays, d):
            yield b.append_column(FRAG, pa.array(arrays["fragment"][node]))

    schema = ", ".join([f"{ROW} long"] + [f"{qi_col(j)} int" for j in range(d)] + [f"{SA} int", f"{FRAG} long"])
    return st.df.mapInArrow(tag, schema)


def finish_fragment(table: Any, dictionaries: Any, domain: Any, model: PrivacyModel, strict: bool,
                    d: int) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """The local Mondrian on one fragment (an Arrow table of its rows ``(_row, q.., s, ..)``):
    ``(fragment table, input row ids, group of each row, number of groups)``, rows in input
    order, with the whole table's dictionaries and SA ``domain`` (module docstring)."""
    from .encoding import fragment_table

    rows = table.column(ROW).to_numpy()
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    X = np.column_stack([table.column(qi_col(j)).to_numpy()[order] for j in range(d)])
    sa = table.column(SA).to_numpy()[order]
    frag = fragment_table(dictionaries, X, sa)
    res = mondrian_partition(frag, model, strict=strict, categorical="ordered", domain=domain)
    return frag, rows, res["group"], int(res["n_groups"])


def spark_mondrian(st: SparkTable, model: PrivacyModel, *, strict: bool = True,
                   max_fragment: int = DEFAULT_MAX_FRAGMENT) -> SparkMondrianResult:
    """Mondrian on the cluster (module docstring): the labelled rows, cached."""
    import pyarrow as pa
    from pyspark import StorageLevel

    from ..release.labels import group_labels

    model.validate(st.domain)
    plan = plan_top(st, model, strict=strict, max_fragment=max_fragment)
    d = st.d
    dictionaries, domain = st.dictionaries, st.domain
    from .encoding import materialize_hierarchies

    materialize_hierarchies(dictionaries, numeric=False)  # once on the driver, shipped to the executors
    out_schema = ", ".join([f"{ROW} long", f"{CLS} long"] + [f"{label_col(j)} string" for j in range(d)]
                           + [f"{SA} int"])

    def finish(table: Any) -> Any:
        """The local Mondrian on one fragment, and its classes' published labels."""
        frag, rows, group, n_groups = finish_fragment(table, dictionaries, domain, model, strict, d)
        f = int(table.column(FRAG)[0].as_py())
        cols = [pa.array(rows), pa.array((np.int64(f) << 32) + group.astype(np.int64))]
        # each class's published values by the local release's label code, once per class and
        # laid out by Arrow (the model is checked globally); Mondrian publishes every row
        idx = pa.array(group.astype(np.int32))
        for name in frag.qi_names:
            words = pa.array(group_labels(frag, name, group, n_groups), pa.string())
            cols.append(pa.DictionaryArray.from_arrays(idx, words).cast(pa.string()))
        cols.append(pa.array(frag.sa_codes.astype(np.int32)))
        return pa.table(cols, names=[ROW, CLS] + [label_col(j) for j in range(d)] + [SA])

    tagged = tagged_rows(st, plan)
    with warnings.catch_warnings():  # Arrow batches only: PySpark's pandas-version check does not apply
        warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas", category=FutureWarning)
        rows = tagged.groupBy(FRAG).applyInArrow(finish, out_schema).persist(StorageLevel.MEMORY_AND_DISK)
    return SparkMondrianResult(rows, plan, st, model, strict)


def verify(res: SparkMondrianResult, figures: Any = None) -> dict[str, Any]:
    """The model on every class of the whole release as a reader sees it — the rows sharing
    one tuple of published QI labels (two Mondrian groups with equal labels are one class) —
    on the cluster, from grouped SA counts (:func:`.classes.class_pass`): against the whole
    table's SA domain (the run's), and as a reader re-checks it (the release's domain), which
    gives the sidecar's ``check``. Returns ``{"classes", "failing", "rows", "check", ...}``
    (with ``figures(release domain)`` also the certificate's class figures, and the classes
    that span fragments). Raises :class:`~openbook.errors.InfeasibleError` when a class fails
    (nothing is then written)."""
    from pyspark.sql import functions as F

    from .classes import FRAG as CFRAG, check_record, class_pass, published_counts, release_domain

    model, st = res.model, res.st
    labels = [label_col(j) for j in range(st.d)]
    rdom, rindex = release_domain(st, published_counts(res.rows, st.n_sa), st.dictionaries.schema.to_dict())
    rows = res.rows.select(*labels, SA, F.shiftright(F.col(CLS), 32).alias(CFRAG))
    out = class_pass(rows, labels, st, model, gate=st.domain, rdom=rdom, rindex=rindex,
                     figures=None if figures is None else figures(rdom), fragments=True)
    out["failing_gate"], out["failing_release"] = out["failing_gate"], out["failing"]
    out["failing"] = max(out["failing_gate"], out["failing_release"])
    out["check"] = check_record(model, {**out, "failing": out["failing_release"]})
    out["release_domain"], out["release_index"] = rdom, rindex
    if out["failing"]:
        raise InfeasibleError(f"mondrian --engine spark: {out['failing']} of {out['classes']} classes do not satisfy "
                              f"{model.describe() if hasattr(model, 'describe') else model}", model=model)
    return out
