"""The published classes of a Spark release, aggregated on the cluster: the model check
before writing, the sidecar's ``check`` record, and the class-level figures of the
certificate (docs/spark.md, "The certificate on Spark").

A *class* is what a reader of the files sees: the rows sharing one tuple of published QI
labels. The labelled rows are counted per (labels, SA value) — and per fragment, for
Mondrian — by a ``groupBy``, repartitioned by the labels so that every class lies in one
partition, and each partition computes, with the local engine's code, on its classes' SA
count matrix:

* the publisher's gate: ``model.holds`` against the domain the algorithm ran with;
* the reader's check (:meth:`openbook.release.Release.check`): ``holds`` and the level
  (``table_level`` = the weakest class's ``group_levels``) against the *release's* SA domain
  — the published values sorted as text, their published counts (:func:`release_domain`,
  what :meth:`~openbook.release.Release.sa_counts` builds when the release is read back);
* with a :class:`Figures` request, the baseline adversary's posteriors (each class's
  frequency of every target, :func:`openbook.attacks.baseline.baseline_attack`'s formula) and
  their distances to the table's distribution (t-closeness), and the identity line's
  prosecutor risk ``1/f`` (:mod:`openbook.attacks.reidentification`): per partition the
  largest figure and the number of people above the target, summed on the driver;
* the classes whose rows lie in more than one fragment (:mod:`.replay` cannot replay them
  fragment by fragment).

Only one small record per partition reaches the driver; every figure is a max, a min or a
sum of the same per-class values the local engine computes, so it is the local figure.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ..attacks.baseline import target_counts
from ..data.grouping import group_ids
from ..models.base import SADomain
from .encoding import SA, SparkTable

FRAG = "_frag"


def release_domain(st: SparkTable, published: np.ndarray, schema: dict[str, Any]) -> tuple[SADomain, np.ndarray]:
    """The SA domain a reader of the release builds (:meth:`openbook.release.Release.sa_counts`
    without a declared reference): the published values' text sorted, their published counts,
    their numbers when every one parses, the schema's sensitive sets; and per table SA code
    its position in it (``-1``: not published). ``published``: rows per table SA code."""
    cats = st.dictionaries.columns[st.dictionaries.sa_name].categories
    used = np.flatnonzero(np.asarray(published) > 0)
    codes, uniq = pd.factorize(pd.Series([str(cats[i]) for i in used], dtype=object), sort=True)
    values = np.asarray(uniq, dtype=object)
    index = np.full(len(cats), -1, dtype=np.int64)
    index[used] = codes
    counts = np.zeros(values.size, dtype=np.int64)
    np.add.at(counts, codes, np.asarray(published, dtype=np.int64)[used])
    numeric = None
    try:
        numeric = values.astype(np.float64)
    except (TypeError, ValueError):
        pass
    sets = {}
    for name, members in (schema.get("sensitive_sets") or {}).items():
        want = {str(x) for x in members}
        sets[name] = np.array([str(v) in want for v in values], dtype=bool)
    return SADomain(values=values, global_counts=counts, numeric=numeric, sensitive_sets=sets), index


@dataclass
class Figures:
    """What the certificate asks of the classes: the baseline's target masks over the release
    domain, the attribute line's posterior target and kind, the t-closeness distance (``dm``,
    ``None`` when the targets are not the SA values) and the identity line's target."""

    masks: np.ndarray
    target: float | None
    kind: str
    dm: Any
    distance: float | None
    reid: float


def published_counts(rows: Any, n_sa: int) -> np.ndarray:
    """Published rows per table SA code (one small aggregation)."""
    out = np.zeros(n_sa, dtype=np.int64)
    t = rows.groupBy(SA).count().toArrow()
    out[t.column(SA).to_numpy()] = t.column("count").to_numpy()
    return out


def class_pass(rows: Any, labels: list[str], st: SparkTable, model: Any, *, gate: SADomain, rdom: SADomain,
               rindex: np.ndarray, figures: Figures | None = None, fragments: bool = False) -> dict[str, Any]:
    """One pass over the classes of ``rows`` (``labels`` columns, ``SA``, and ``FRAG`` when
    ``fragments``): the module docstring's figures, combined on the driver."""
    import pyarrow as pa

    from ..attacks.base import TOL
    from ..certificate import CERTAIN
    from .session import shuffle_partitions

    n_sa, m = st.n_sa, rdom.n_values
    keys = [*labels, SA] + ([FRAG] if fragments else [])
    grouped = rows.groupBy(*keys).count().repartition(shuffle_partitions(rows.sparkSession), *labels)
    higher = bool(model.higher_is_stronger)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        got = [b for b in batches if b.num_rows]
        if not got:
            return
        t = pa.Table.from_batches(got)
        cols = [np.unique(t.column(c).to_numpy(zero_copy_only=False), return_inverse=True)[1].ravel()
                for c in labels]
        cls, n = group_ids(cols) if cols else (np.zeros(t.num_rows, dtype=np.int64), 1)
        u, cls = np.unique(cls, return_inverse=True)
        n = u.size
        sa = t.column(SA).to_numpy().astype(np.int64)
        cnt = t.column("count").to_numpy().astype(np.int64)
        mat = np.zeros((n, n_sa), dtype=np.int64)
        np.add.at(mat, (cls, sa), cnt)
        rmat = np.zeros((n, m), dtype=np.int64)
        np.add.at(rmat, (cls, rindex[sa]), cnt)
        size = rmat.sum(axis=1)
        ok_r = np.asarray(model.holds(rmat, rdom), dtype=bool)
        lv = model.group_levels(rmat, rdom)
        out: dict[str, Any] = {
            "classes": int(n), "rows": int(size.sum()),
            "failing_gate": int((~np.asarray(model.holds(mat, gate), dtype=bool)).sum()),
            "failing": int((~ok_r).sum()), "level": float(lv.min() if higher else lv.max()),
            "min_size": int(size.min())}
        if fragments:
            f = t.column(FRAG).to_numpy().astype(np.int64)
            pairs = np.unique(np.stack([cls, f], axis=1), axis=0)
            multi = np.flatnonzero(np.bincount(pairs[:, 0], minlength=n) > 1)
            out["spans"] = [pairs[pairs[:, 0] == c, 1].tolist() for c in multi.tolist()]
        if figures is not None:
            out.update(_figures(rmat, size.astype(np.float64), rdom, figures, TOL, CERTAIN))
        yield pa.RecordBatch.from_arrays([pa.array([json.dumps(out)], pa.string())], names=["part"])

    parts = [json.loads(x) for x in grouped.mapInArrow(run, "part string").toArrow().column("part").to_pylist()]
    return combine(parts, higher)


def _figures(rmat: np.ndarray, size: np.ndarray, rdom: SADomain, fg: Figures, tol: float,
             certain: float) -> dict[str, Any]:
    """A partition's baseline and identity figures (module docstring); per person, so each
    class counts its size."""
    per_class = target_counts(rmat, fg.masks)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = per_class / size[:, None]
    bound = post.max(axis=1) if post.shape[1] else np.full(post.shape[0], np.nan)
    if fg.target is None:
        above = np.zeros(bound.size, dtype=bool)
    elif fg.kind == "certainty":
        above = bound >= certain
    else:
        above = bound > fg.target + tol
    out: dict[str, Any] = {"b_max": float(np.nanmax(bound)) if bound.size else None}
    if fg.dm is not None:
        dist = fg.dm.distances(post, rdom) + fg.dm.error_bound(np.zeros_like(post), rdom)
        out["b_dmax"] = float(dist.max()) if dist.size else None
        assert fg.distance is not None  # a distance target comes with its metric
        above = above | (dist > fg.distance + 1e-9)
    out["b_above"] = int(size[above].sum())
    risk = 1.0 / size
    out["id_max"] = float(risk.max()) if risk.size else None
    out["id_above"] = int(size[risk > fg.reid + tol].sum())
    return out


def _max(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else max(a, b)


def combine(parts: list[dict[str, Any]], higher: bool) -> dict[str, Any]:
    """The partitions' records as the whole release's (min / max / sum, spans listed)."""
    out: dict[str, Any] = {"classes": 0, "rows": 0, "failing_gate": 0, "failing": 0, "level": float("nan"),
                           "min_size": 0, "spans": []}
    levels = [p["level"] for p in parts]
    if levels:
        out["level"] = float(np.min(levels) if higher else np.max(levels))  # NaN if one is (as table_level)
        out["min_size"] = min(p["min_size"] for p in parts)
    for p in parts:
        for k in ("classes", "rows", "failing_gate", "failing"):
            out[k] += p[k]
        out["spans"] += p.get("spans", [])
        for k in ("b_max", "b_dmax", "id_max"):
            if k in p:
                out[k] = _max(out.get(k), p[k])
        for k in ("b_above", "id_above"):
            if k in p:
                out[k] = out.get(k, 0) + p[k]
    return out


def check_record(model: Any, got: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's ``check`` (:class:`openbook.release.verify.ModelCheck`) from a pass."""
    return {"model": model.describe(), "holds": got["failing"] == 0,
            "level": got["level"] if got["classes"] else float("nan"), "n_groups": got["classes"],
            "failing_groups": got["failing"]}


def gate_domain(st: SparkTable, published: np.ndarray | None = None) -> SADomain:
    """The domain the algorithm's model was checked against: the whole table's, or (full-domain
    search, which verifies against what it publishes) the published rows' distribution."""
    if published is None:
        return st.domain
    return dataclasses.replace(st.domain, global_counts=np.asarray(published, dtype=np.int64))
