"""``audit --adversary linkage --engine spark``: the linkage adversary of paper 002 §2.3
(Rameshwar & Tandon) against a registry of earlier releases, over a population on the
cluster.

The adversary knows every person's QI and intersects the classes that contain them across
the earlier releases and the new one; the figure is ``1 / post-linkage diversity``
(:class:`openbook.attacks.families.LinkageAdversary`, docs/linkage.md). Which classes of a
release contain a person depends on the person's QI values only, so the work is per
*distinct QI tuple*, and the population — the original table, one person per row — is
joined to it on the QIs:

1. the cluster aggregates the population into its distinct QI code tuples with their
   number of people (a ``groupBy``);
2. each partition of those tuples decodes them with the table's dictionaries and runs the
   local :func:`openbook.attacks.linkage.linkage` on them against the releases (broadcast
   to the executors): per tuple its post-linkage diversity, the releases that match it and
   its class in the new release;
3. a join on the QI codes gives every person their tuple's figures; the driver collects
   them in input order and builds the same :class:`~openbook.attacks.base.AttackResult` as
   the local adversary (``tests/spark/test_spark_linkage.py``: equal per-person
   posteriors, classes, unresolved flags and notes on random cases).

The releases themselves are read on the driver (as ``load_release`` reads them) and must fit
each executor. Without an original table the population is the QI tuples the releases
publish ungeneralized — already in the driver's memory — and the local adversary runs.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from ..attacks.base import AttackResult
from ..attacks.families import LinkageAdversary
from ..attacks.linkage import linkage
from ..errors import ParameterError, SchemaError
from ..models.promise import promised_l
from .encoding import ROW, SparkTable

_DIV, _CLS, _NEW, _ANY, _W, _MATCHED = "_div", "_cls", "_new", "_any", "_w", "_matched"


def _population_columns(st: SparkTable, release: Any) -> list[tuple[str, str]]:
    """``(QI name, Spark column)`` of each QI the release publishes."""
    names = st.qi_names
    out = []
    for c in release.qi:
        if c not in names:
            raise SchemaError(f"the original table has no QI column {c!r} of the release", column=c)
        out.append((c, st.qi_cols[names.index(c)]))
    return out


def tuple_linkage(st: SparkTable, releases: Sequence[Any], qi: list[tuple[str, str]]) -> Any:
    """Per distinct QI tuple of the population (``q..`` codes, ``_w`` people): its
    post-linkage diversity ``_div``, its class in the last release ``_cls`` (``-1`` none,
    ``-2`` several), whether the last release and any release match it (``_new``,
    ``_any``) and which releases match it (``_matched``), computed on the executors."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    spark = st.df.sparkSession
    cols = [c for _, c in qi]
    names = [n for n, _ in qi]
    dictionaries = st.dictionaries
    hier = dict(dictionaries.hierarchies)
    shared = spark.sparkContext.broadcast((list(releases), hier))
    tuples = st.df.groupBy(*cols).agg(F.count(F.lit(1)).alias(_W))

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        rels, hierarchies = shared.value
        for b in batches:
            if b.num_rows == 0:
                continue
            codes = [b.column(c).to_numpy(zero_copy_only=False) for c in cols]
            pop = pd.DataFrame({n: dictionaries.decode(n, np.asarray(x, dtype=np.int64)) for n, x in zip(names, codes)})
            res = linkage(rels, pop, hierarchies=hierarchies)
            matched = res.matched
            out = {c: pa.array(np.asarray(x, dtype=np.int32)) for c, x in zip(cols, codes)}
            out[_W] = b.column(_W)
            out[_DIV] = pa.array(res.diversity.astype(np.int64))
            out[_CLS] = pa.array(res.class_ids[:, -1].astype(np.int64))
            out[_NEW] = pa.array(matched[:, -1])
            out[_ANY] = pa.array(matched.any(axis=1))
            out[_MATCHED] = pa.array([row.tolist() for row in matched], pa.list_(pa.bool_()))
            yield pa.RecordBatch.from_pydict(out)

    schema = ", ".join([f"{c} int" for c in cols] + [f"{_W} long", f"{_DIV} long", f"{_CLS} long",
                                                       f"{_NEW} boolean", f"{_ANY} boolean",
                                                       f"{_MATCHED} array<boolean>"])
    return tuples.mapInArrow(run, schema)


def attack(adv: LinkageAdversary, release: Any, original: SparkTable, earlier: Sequence[Any]) -> AttackResult:
    """The local ``adv.run(release, original=…, earlier=…)`` with the population ``original``
    on the cluster (module docstring)."""
    from pyspark import StorageLevel

    if not earlier:
        raise ParameterError("the linkage adversary needs the earlier releases (--against-registry DIR_OR_DB)",
                             parameter="earlier")
    t0 = time.perf_counter()
    rels = list(earlier) + [release]
    sa = {r.sa for r in rels}
    if len(sa) != 1:
        raise SchemaError(f"the releases publish different sensitive attributes: {sorted(sa)}", column=sorted(sa)[0])
    st = original
    qi = _population_columns(st, release)
    cols = [c for _, c in qi]
    per_tuple = tuple_linkage(st, rels, qi).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        l = float(adv.l) if adv.l is not None else promised_l(_release_model(release))
        # the notes: weighted by the people of each tuple
        t = per_tuple.select(_W, _DIV, _NEW, _ANY, _MATCHED).toArrow()
        w = t.column(_W).to_numpy().astype(np.int64)
        div = t.column(_DIV).to_numpy().astype(np.int64)
        new = t.column(_NEW).to_numpy(zero_copy_only=False).astype(bool)
        anym = t.column(_ANY).to_numpy(zero_copy_only=False).astype(bool)
        dist = {int(v): int(w[anym & (div == v)].sum()) for v in np.unique(div[anym]).tolist()}
        below = new & (div < l - 1e-12) if l is not None else np.zeros(len(w), dtype=bool)
        involved = []
        if below.any():
            mlist = t.column(_MATCHED).to_pylist()
            mb = np.array([mlist[i] for i in np.flatnonzero(below)], dtype=bool).reshape(-1, len(rels))
            involved = [j for j in range(len(earlier)) if bool(mb[:, j].any())]
        n_below = int(w[below].sum())
        n_disclosed = int(w[new & (div == 1)].sum())
        # every person: their tuple's figures, joined on the QI codes, in input order
        people = st.df.select(ROW, *cols).join(per_tuple.select(*cols, _DIV, _CLS, _NEW), cols, "inner")
        p = people.select(ROW, _DIV, _CLS, _NEW).orderBy(ROW).toArrow()
    finally:
        per_tuple.unpersist()
    if p.num_rows != st.n_rows:  # every person has a tuple: the join is complete
        raise AssertionError(f"linkage join gave {p.num_rows} of {st.n_rows} people")
    d = p.column(_DIV).to_numpy().astype(np.float64)
    in_new = p.column(_NEW).to_numpy(zero_copy_only=False).astype(bool)
    cls = p.column(_CLS).to_numpy().astype(np.int64)
    post = np.full((st.n_rows, 1), np.nan)
    with np.errstate(divide="ignore"):
        post[in_new, 0] = np.where(d[in_new] > 0, 1.0 / d[in_new], 1.0)
    group = np.where(in_new, cls, -1)
    group = np.where(group < -1, 0, group)
    below_p = in_new & (d < l - 1e-12) if l is not None else np.zeros(st.n_rows, dtype=bool)
    unresolved = in_new & (d >= 2) & ~below_p
    res = AttackResult(adversary="linkage", posterior=post, targets=["1/diversity"], group=group, l=l,
                       unresolved=unresolved,
                       notes={"knowledge": f"{len(earlier)} earlier release(s) and every person's QI",
                              "figure": "1/post-linkage diversity (paper 002): exact at diversity 1, a lower "
                                        "bound of the exact posterior above it; people at diversity >= 2 not "
                                        "below l are unresolved",
                              "population": f"{st.n_rows} people of the original table",
                              "diversity_distribution": dist,
                              "n_below_l": n_below, "earlier_involved": involved, "n_disclosed": n_disclosed})
    res.notes.setdefault("seconds", round(time.perf_counter() - t0, 3))
    res.notes.setdefault("paper", adv.paper)
    return res


def _release_model(release: Any) -> Any:
    from ..attacks.baseline import release_model

    return release_model(release)
