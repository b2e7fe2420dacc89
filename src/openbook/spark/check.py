"""``check --engine spark``: every level of a table (k, distinct/entropy/recursive ℓ, α, the
sensitive sets' α, t under every distance, e) and its identity-disclosure figures, by grouped
aggregation on the cluster.

The rows are counted per (QI tuple, SA value) — a ``groupBy`` — and the counts are
repartitioned by QI tuple, so every equivalence class lies in one partition. Each partition
builds its classes' SA-count matrix in chunks and runs the local engine's
:func:`openbook.models.levels.compute_levels` on each chunk with the *whole table's* SA domain
(the reference of t-closeness); the driver combines the chunks' levels by their minimum or
maximum. Every level is the weakest class's, and each class's value is computed by the same
row-wise code as in the local engine, so the combined levels are the local levels exactly
(``tests/spark/test_check.py``: equal on random tables). ``n_rows``, ``n_groups`` and
``eligible_l`` are totals. The re-identification figures (:mod:`openbook.attacks.reidentification`)
come from the classes' frequencies of frequencies, which every partition also returns; its
rates that are sums of per-class fractions (the journalist's and marketer's success under a
sampling fraction) may differ from the local engine's in the last bits of the float sum.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

import numpy as np

from ..data.grouping import group_ids
from ..errors import ParameterError
from ..models.base import SADomain
from ..models.levels import compute_levels
from .encoding import SA, SparkTable
from .session import shuffle_partitions

#: classes per chunk a partition hands to compute_levels (bounds the count matrix)
CHUNK_CLASSES = 1 << 18
_MIN_KEYS = ("k", "distinct_l", "entropy_l", "recursive_l", "e")
_SUM_KEYS = ("n_rows", "n_groups")


def partial_levels(counts: np.ndarray, domain: SADomain, c: float) -> dict[str, Any]:
    """The levels of a set of classes (one chunk), to be combined by :func:`combine_levels`."""
    return compute_levels(counts, domain, c=c)


def _better(key: str, a: Any, b: Any) -> Any:
    if isinstance(a, float) and math.isnan(a):
        return b
    if isinstance(b, float) and math.isnan(b):
        return a
    return min(a, b) if key in _MIN_KEYS else max(a, b)


def combine_levels(parts: list[dict[str, Any]], domain: SADomain) -> dict[str, Any]:
    """The whole table's levels from its chunks' (module docstring): the weakest value of every
    level, the totals of rows and classes, ℓ-eligibility from the table's SA counts."""
    if not parts:
        raise ParameterError("the table has no rows", parameter="input")
    out = dict(parts[0])
    for p in parts[1:]:
        for key, v in p.items():
            if key in _SUM_KEYS:
                out[key] += v
            elif key != "recursive_c" and key != "eligible_l":
                out[key] = _better(key, out[key], v)
    top = int(domain.global_counts.max(initial=0))
    out["eligible_l"] = out["n_rows"] // top if top else 0
    return out


def class_counts(st: SparkTable) -> Any:
    """``(q0.., s, count)`` per (QI tuple, SA value), partitioned by QI tuple."""
    spark = st.df.sparkSession
    return st.df.groupBy(*st.qi_cols, SA).count().repartition(shuffle_partitions(spark), *st.qi_cols)


def chunks_of(table: Any, qi_cols: list[str], n_sa: int) -> Iterator[np.ndarray]:
    """The SA-count matrices of the classes in ``table`` (rows ``q0.., s, count`` of whole
    classes), at most :data:`CHUNK_CLASSES` classes each."""
    if table.num_rows == 0:
        return
    cols = [table.column(c).to_numpy() for c in qi_cols]
    sa = table.column(SA).to_numpy().astype(np.int64)
    cnt = table.column("count").to_numpy().astype(np.int64)
    cls, m = group_ids(cols) if cols else (np.zeros(sa.size, dtype=np.int64), 1)
    order = np.argsort(cls, kind="stable")
    cls, sa, cnt = cls[order], sa[order], cnt[order]
    bounds = np.searchsorted(cls, np.arange(0, m + CHUNK_CLASSES, CHUNK_CLASSES))
    for a, lo in enumerate(range(0, m, CHUNK_CLASSES)):
        i, j = bounds[a], bounds[a + 1]
        k = min(CHUNK_CLASSES, m - lo)
        mat = np.zeros((k, n_sa), dtype=np.int64)
        mat[cls[i:j] - lo, sa[i:j]] = cnt[i:j]
        yield mat


def spark_levels(st: SparkTable, *, c: float = 2.0) -> tuple[dict[str, Any], dict[int, int]]:
    """Every level of ``st`` (as :func:`compute_levels` reports them) and the class-size
    histogram ``{size: number of classes}``, computed on the cluster."""
    import pyarrow as pa

    compute_levels(np.zeros((0, st.n_sa), dtype=np.int64), st.domain, c=c)  # bad c fails here, in one line
    domain, qi_cols, n_sa = st.domain, st.qi_cols, st.n_sa

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        got = list(batches)
        if not got:  # an empty partition (fewer classes than partitions)
            return
        table = pa.Table.from_batches(got)
        out = []
        for mat in chunks_of(table, qi_cols, n_sa):
            sizes, freq = np.unique(mat.sum(axis=1), return_counts=True)
            out.append(json.dumps({"levels": partial_levels(mat, domain, c),
                                   "sizes": [[int(a), int(b)] for a, b in zip(sizes, freq)]}))
        if out:
            yield pa.RecordBatch.from_arrays([pa.array(out, pa.string())], names=["partial"])

    rows = class_counts(st).mapInArrow(run, "partial string").toArrow().column("partial").to_pylist()
    parts = [json.loads(r) for r in rows]
    hist: dict[int, int] = {}
    for p in parts:
        for size, k in p["sizes"]:
            hist[size] = hist.get(size, 0) + k
    return combine_levels([p["levels"] for p in parts], domain), dict(sorted(hist.items()))


def identity_summary(hist: dict[int, int], *, population_size: float | None = None,
                     sampling_fraction: float | None = None, threshold: float = 0.2) -> dict[str, Any]:
    """The re-identification summary of a raw table (the keys of
    :meth:`openbook.attacks.reidentification.ReidentificationResult.summary`) from its
    class-size histogram ``{size: number of classes}`` aggregated on the cluster."""
    from ..attacks.reidentification import class_size_summary

    sizes = np.array(sorted(hist), dtype=np.int64)
    counts = np.array([hist[s] for s in sizes.tolist()], dtype=np.int64)
    return class_size_summary(sizes, counts, population_size=population_size, sampling_fraction=sampling_fraction,
                              threshold=threshold)
