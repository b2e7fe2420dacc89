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
3. every person's figure is their tuple's, so the audit's figures are aggregated on the
   cluster by weighting each tuple with its number of people: per class of the new release
   and post-linkage diversity the people (the per-class detail and every count of the
   summary), the diversity distribution, the people below ℓ and at diversity 1, and which
   earlier releases are involved — small tables, never one row per person.
   :class:`SparkLinkageResult` gives the same :class:`~openbook.attacks.base.AuditSummary`
   as the local adversary's result (``tests/spark/test_spark_linkage.py``).

A per-person file (``audit --posteriors-out``) is one row per person on one machine: with
``--engine spark`` it is refused in one line. The releases themselves are read on the driver
(as ``load_release`` reads them) and must fit each executor. Without an original table the
population is the QI tuples the releases publish ungeneralized — already in the driver's
memory — and the local adversary runs.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from ..attacks.families import LinkageAdversary
from ..attacks.linkage import linkage
from ..errors import ParameterError, SchemaError
from ..models.promise import promised_l
from .encoding import SparkTable

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


def attack(adv: LinkageAdversary, release: Any, original: SparkTable, earlier: Sequence[Any]) -> "SparkLinkageResult":
    """The local ``adv.run(release, original=…, earlier=…)`` with the population ``original``
    on the cluster, aggregated there (module docstring)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

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
    per_tuple = tuple_linkage(st, rels, qi).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        l = float(adv.l) if adv.l is not None else promised_l(_release_model(release))
        below = F.col(_NEW) & (F.col(_DIV) < F.lit(l - 1e-12)) if l is not None else F.lit(False)
        agg = per_tuple.agg(
            F.sum(F.when(below, F.col(_W)).otherwise(0)).alias("below"),
            F.sum(F.when(F.col(_NEW) & (F.col(_DIV) == 1), F.col(_W)).otherwise(0)).alias("disclosed"),
            F.sum(F.col(_W)).alias("people"),
            *[F.max(F.when(below & F.col(_MATCHED)[j], 1).otherwise(0)).alias(f"e{j}") for j in range(len(earlier))],
        ).toArrow().to_pylist()[0]
        dist_t = (per_tuple.where(F.col(_ANY)).groupBy(_DIV).agg(F.sum(_W).alias(_W)).orderBy(_DIV).toArrow())
        # the new release's class and diversity of every person in it: people per (class, diversity)
        cls_t = (per_tuple.where(F.col(_NEW))
                 .select(F.when(F.col(_CLS) < 0, F.lit(0)).otherwise(F.col(_CLS)).alias(_CLS), _DIV, _W)
                 .groupBy(_CLS, _DIV).agg(F.sum(_W).alias(_W)).toArrow())
    finally:
        per_tuple.unpersist()
    if int(agg["people"] or 0) != st.n_rows:  # every person has a tuple
        raise AssertionError(f"linkage aggregation counted {agg['people']} of {st.n_rows} people")
    dw = dist_t.column(_W).to_numpy().astype(np.int64)
    dist = {int(v): int(w) for v, w in zip(dist_t.column(_DIV).to_numpy().tolist(), dw.tolist()) if w}
    notes = {"knowledge": f"{len(earlier)} earlier release(s) and every person's QI",
             "figure": "1/post-linkage diversity (paper 002): exact at diversity 1, a lower "
                       "bound of the exact posterior above it; people at diversity >= 2 not "
                       "below l are unresolved",
             "population": f"{st.n_rows} people of the original table",
             "diversity_distribution": dist,
             "n_below_l": int(agg["below"] or 0),
             "earlier_involved": [j for j in range(len(earlier)) if agg[f"e{j}"]],
             "n_disclosed": int(agg["disclosed"] or 0)}
    notes["seconds"] = round(time.perf_counter() - t0, 3)
    notes["paper"] = adv.paper
    return SparkLinkageResult(l, st.n_rows, cls_t.column(_CLS).to_numpy().astype(np.int64),
                              cls_t.column(_DIV).to_numpy().astype(np.int64),
                              cls_t.column(_W).to_numpy().astype(np.int64), notes)


class SparkLinkageResult:
    """The linkage adversary's result aggregated on the cluster: the people of the new release
    per (class, post-linkage diversity) — every person's figure is ``1/diversity`` — and the
    notes. :meth:`summary` is :func:`openbook.attacks.base.summarize` on those weighted rows:
    the same summary as the local adversary's per-person result."""

    adversary = "linkage"
    targets = ["1/diversity"]

    def __init__(self, l: float | None, n_people: int, cls: np.ndarray, div: np.ndarray, weight: np.ndarray,
                 notes: dict[str, Any]) -> None:
        self.l, self.n_tuples, self.notes = l, int(n_people), notes
        self.cls, self.div, self.weight = cls, div, weight

    def summary(self, *, l: float | None = None, m: float | None = None) -> Any:
        """The audit summary at threshold ``1/l`` (module docstring)."""
        from ..attacks.base import TOL, AuditSummary

        l = self.l if l is None else l
        if l is None:
            raise ParameterError("the audit needs ℓ (the release records no ℓ-type model): pass l=", parameter="l")
        l = float(l)
        if not l >= 1.0:
            raise ParameterError(f"l={l} must be >= 1", parameter="l", value=l)
        m = l if m is None else float(m)
        d, w = self.div.astype(np.float64), self.weight
        with np.errstate(divide="ignore"):
            mx = np.where(d > 0, 1.0 / d, 1.0)
        below = d < self.l - 1e-12 if self.l is not None else np.zeros(d.size, dtype=bool)
        unresolved = (d >= 2) & ~below
        evaluated = ~unresolved
        vuln = evaluated & (mx > 1.0 / l + TOL)
        n_pub, n_v, n_unres = int(w.sum()), int(w[vuln].sum()), int(w[unresolved].sum())
        n_fail = int(w[vuln | unresolved].sum())
        mmax = float(mx[evaluated & (w > 0)].max()) if (evaluated & (w > 0)).any() else float("nan")
        n_groups = int(self.cls.max()) + 1 if self.cls.size else 0
        size = np.bincount(self.cls, weights=w, minlength=n_groups).astype(np.int64)
        nv = np.bincount(self.cls, weights=np.where(vuln, w, 0), minlength=n_groups).astype(np.int64)
        gmax = np.full(n_groups, -np.inf)
        ev = evaluated & (w > 0)
        np.maximum.at(gmax, self.cls[ev], mx[ev])
        gmax[np.isinf(gmax)] = np.nan
        per = pd.DataFrame({"group": np.arange(n_groups), "size": size, "n_vulnerable": nv, "max_posterior": gmax})
        per = per[per["size"] > 0].reset_index(drop=True)
        return AuditSummary(
            adversary="linkage", l=l, m=m, n_tuples=self.n_tuples, n_published=n_pub, n_absent_evaluated=0,
            n_unresolved=n_unres, n_sensitive=None, n_vulnerable=n_v, n_failing=n_fail,
            vulnerable_fraction=n_fail / n_pub if n_pub else 0.0, vulnerable_sensitive_fraction=None,
            vulnerable_per_sensitive=None, max_posterior=mmax, max_risk_multiple=mmax * l,
            avg_credibility_problematic=float((mx[vuln] * w[vuln]).sum() / n_v) if n_v else None,
            m_confidential=bool(not (evaluated & (w > 0)).any() or mmax <= 1.0 / m + TOL) and not n_unres,
            max_stderr=None, per_group=per, notes=dict(self.notes))

    def frame(self) -> Any:
        """One row per person is what ``--posteriors-out`` writes: not with the Spark engine."""
        raise ParameterError("--posteriors-out writes one row per person on this machine; the Spark engine's "
                             "linkage audit aggregates on the cluster (use --engine local for the per-person file)",
                             parameter="posteriors-out")


def _release_model(release: Any) -> Any:
    from ..attacks.baseline import release_model

    return release_model(release)
