"""The top of a distributed Mondrian run, planned on the driver from exact histograms
(LeFevre, DeWitt, Ramakrishnan, ICDE 2006; paper 000 §2.3, §3.2, App. B (b); docs/spark.md).

The local planner (:mod:`openbook.algorithms.mondrian_planner`) decides a node from its rows:
the normalised width of every dimension (the node's min/max codes, or its number of
distinct values for a categorical dimension cut in code order), the median cut on the widest
dimension, and :func:`~openbook.algorithms.mondrian.allowable` on the two children's SA
counts; a refused cut makes it try the next-widest dimension. Every one of these quantities
is a function of the node's per-dimension histograms *value × SA value* — except one: a
relaxed cut whose median value is shared by both children sends the first ``t`` tied rows
(in input order) left, and their SA counts are counted on the cluster (the ``t`` smallest
row ids among the node's tied rows: one window query per round).

:func:`plan_top` runs that decision level by level over every open node of more than
``max_fragment`` rows, with histograms aggregated on the cluster (partial counts per Arrow
batch on the executors, summed by a shuffle), until every open node fits a fragment. The
widths come from the local :meth:`~openbook.algorithms.mondrian_planner.MondrianSpace.widths`
of the whole table's dictionaries, the cut rule is :func:`~openbook.algorithms.mondrian.mondrian_cut`'s
(stated on counts), the decision the local model's ``holds``: each cut the driver takes is
the cut the local engine takes at the same node. The result is a :class:`TopPlan`: the cuts,
and the leaves, each a *fragment* the local Mondrian finishes (:mod:`.mondrian`).

Only ``categorical="ordered"`` (the default: categorical values cut in code order) is
planned here; hierarchy-boundary cuts are the local engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..algorithms.mondrian import mondrian_would_split
from ..algorithms.mondrian_planner import MondrianSpace
from ..errors import ParameterError
from ..models.base import PrivacyModel
from ..models.promise import size_floor
from .encoding import ROW, SA, SparkTable

#: the default largest fragment (rows) the local Mondrian finishes on one executor
DEFAULT_MAX_FRAGMENT = 1 << 22
#: "every tied row goes left" (a row id above any)
ALL = np.iinfo(np.int64).max


@dataclass
class TopPlan:
    """The driver's cuts. Per node (id = index, the root is 0): cut dimension (``-1`` for a
    leaf), cut value ``m`` and tie threshold ``thr`` — a row goes left iff its code is below
    ``m``, or equal to ``m`` with row id at most ``thr`` — children ids, size; per leaf its
    fragment number."""

    dim: list[int] = field(default_factory=lambda: [-1])
    value: list[int] = field(default_factory=lambda: [0])
    thr: list[int] = field(default_factory=lambda: [-1])
    left: list[int] = field(default_factory=lambda: [-1])
    right: list[int] = field(default_factory=lambda: [-1])
    size: list[int] = field(default_factory=list)
    levels: int = 0
    #: the cuts the driver tried and refused, ``(node, dim, value, thr)``: at a node it then
    #: cut, their decisions depend on the SA arrangement across its fragments (:mod:`.replay`)
    refused: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: the ``max_fragment`` the plan was made with
    max_fragment: int = DEFAULT_MAX_FRAGMENT

    def cut(self, node: int, dim: int, value: int, thr: int, n_left: int) -> None:
        self.dim[node], self.value[node], self.thr[node] = int(dim), int(value), int(thr)
        for kid, size in ((0, n_left), (1, self.size[node] - n_left)):
            (self.left if kid == 0 else self.right)[node] = len(self.dim)
            self.dim.append(-1)
            self.value.append(0)
            self.thr.append(-1)
            self.left.append(-1)
            self.right.append(-1)
            self.size.append(int(size))

    def arrays(self) -> dict[str, np.ndarray]:
        """The plan as arrays (what the executors receive), with ``fragment`` per node
        (``-1`` for a cut node)."""
        dim = np.asarray(self.dim, dtype=np.int64)
        frag = np.full(dim.size, -1, dtype=np.int64)
        leaves = np.flatnonzero(dim < 0)
        frag[leaves] = np.arange(leaves.size)
        return {"dim": dim, "value": np.asarray(self.value, dtype=np.int64),
                "thr": np.asarray(self.thr, dtype=np.int64), "left": np.asarray(self.left, dtype=np.int64),
                "right": np.asarray(self.right, dtype=np.int64), "fragment": frag}

    @property
    def n_fragments(self) -> int:
        return sum(1 for x in self.dim if x < 0)


def descend(plan: dict[str, np.ndarray], X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The node of the plan each row ends in (``X``: ``(n, d)`` codes; ``rows``: row ids)."""
    n = rows.size
    node = np.zeros(n, dtype=np.int64)
    dim, value, thr = plan["dim"], plan["value"], plan["thr"]
    active = np.flatnonzero(np.full(n, dim[0] >= 0))
    while active.size:
        nd = node[active]
        v = X[active, dim[nd]]
        m = value[nd]
        go_left = (v < m) | ((v == m) & (rows[active] <= thr[nd]))
        node[active] = np.where(go_left, plan["left"][nd], plan["right"][nd])
        active = active[dim[node[active]] >= 0]
    return node


def batch_codes(b: Any, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, sa, rows)`` of an Arrow batch of a :class:`SparkTable`'s frame."""
    X = np.empty((b.num_rows, d), dtype=np.int64)
    for j in range(d):
        X[:, j] = b.column(f"q{j}").to_numpy(zero_copy_only=False)
    return X, b.column(SA).to_numpy(zero_copy_only=False).astype(np.int64), \
        b.column(ROW).to_numpy(zero_copy_only=False).astype(np.int64)


def placed_batches(batches: Iterator[Any], plan: dict[str, np.ndarray], d: int) -> Iterator[tuple]:
    """Each non-empty Arrow batch of a :class:`SparkTable`'s frame as ``(batch, X, sa, rows,
    node)``: its codes (:func:`batch_codes`) and the node of ``plan`` each row descends to."""
    for b in batches:
        if b.num_rows:
            X, sa, rows = batch_codes(b, d)
            yield b, X, sa, rows, descend(plan, X, rows)


def _histograms(st: SparkTable, plan: dict[str, np.ndarray], open_nodes: np.ndarray) -> list[list[np.ndarray]]:
    """Per open node, per dimension, the exact ``(card_j, n_sa)`` counts of its rows."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    d, n_sa, card = st.d, st.n_sa, st.cardinalities
    k = open_nodes.size
    if max(k * c * n_sa for c in card) >= 1 << 62:
        raise ParameterError("mondrian --engine spark: too many open nodes × values × SA values for one "
                             "histogram pass; raise --spark-max-fragment", parameter="max-fragment")
    where = np.full(len(plan["dim"]), -1, dtype=np.int64)
    where[open_nodes] = np.arange(k)

    def count(batches: Iterator[Any]) -> Iterator[Any]:
        for _, X, sa, _, node in placed_batches(batches, plan, d):
            idx = where[node]
            keep = idx >= 0
            if not keep.any():
                continue
            idx, X, sa = idx[keep], X[keep], sa[keep]
            for j in range(d):
                key = (idx * card[j] + X[:, j]) * n_sa + sa
                u, c = np.unique(key, return_counts=True)
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.full(u.size, j, dtype=np.int32)), pa.array(u), pa.array(c.astype(np.int64))],
                    names=["j", "key", "cnt"])

    got = (st.df.mapInArrow(count, "j int, key long, cnt long").groupBy("j", "key")
           .agg(F.sum("cnt").alias("cnt")).toArrow())
    out = [[np.zeros((card[j], n_sa), dtype=np.int64) for j in range(d)] for _ in range(k)]
    js = got.column("j").to_numpy()
    keys = got.column("key").to_numpy()
    cnts = got.column("cnt").to_numpy()
    for j in range(d):
        sel = js == j
        key, cnt = keys[sel], cnts[sel]
        s = key % n_sa
        v = (key // n_sa) % card[j]
        node = key // n_sa // card[j]
        for i in np.unique(node):
            w = node == i
            out[int(i)][j][v[w], s[w]] = cnt[w]
    return out


def _tied_first(st: SparkTable, plan: dict[str, np.ndarray], nodes: np.ndarray, dims: np.ndarray,
                values: np.ndarray, ties: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each node ``nodes[i]``: the SA counts of the ``ties[i]`` first rows (in input
    order) whose dimension ``dims[i]`` equals ``values[i]``, and the largest of their row ids."""
    import pyarrow as pa
    from pyspark.sql import Window, functions as F

    d, n_sa = st.d, st.n_sa
    where = np.full(len(plan["dim"]), -1, dtype=np.int64)
    where[nodes] = np.arange(nodes.size)

    def tied(batches: Iterator[Any]) -> Iterator[Any]:
        for _, X, sa, rows, node in placed_batches(batches, plan, d):
            idx = where[node]
            sel = np.flatnonzero(idx >= 0)
            i = idx[sel]
            sel = sel[X[sel, dims[i]] == values[i]]
            if sel.size:
                yield pa.RecordBatch.from_arrays([pa.array(idx[sel]), pa.array(rows[sel]), pa.array(sa[sel])],
                                                 names=["i", "r", "s"])

    spark = st.df.sparkSession
    need = spark.createDataFrame(pa.table({"i": pa.array(np.arange(nodes.size, dtype=np.int64)),
                                           "t": pa.array(np.asarray(ties, dtype=np.int64))}))
    rn = F.row_number().over(Window.partitionBy("i").orderBy("r"))
    got = (st.df.mapInArrow(tied, "i long, r long, s long").withColumn("rn", rn).join(F.broadcast(need), "i")
           .where(F.col("rn") <= F.col("t")).groupBy("i", "s").agg(F.count(F.lit(1)).alias("cnt"),
                                                                     F.max("r").alias("top")).toArrow())
    counts = np.zeros((nodes.size, n_sa), dtype=np.int64)
    thr = np.full(nodes.size, -1, dtype=np.int64)
    i = got.column("i").to_numpy()
    counts[i, got.column("s").to_numpy()] = got.column("cnt").to_numpy()
    np.maximum.at(thr, i, got.column("top").to_numpy())
    return counts, thr


def _cut_from_counts(h: np.ndarray, strict: bool) -> tuple[int, int, int, np.ndarray, bool]:
    """:func:`~openbook.algorithms.mondrian.mondrian_cut` on a node's ``(card, n_sa)``
    histogram of one dimension: ``(m, thr, n_left, left counts, partial)`` where ``partial``
    says the left child takes only some of the rows equal to ``m`` (then ``thr`` is the number
    ``t`` of them it takes, and their counts are not yet in ``left counts``)."""
    c = h.sum(axis=1)
    cum = np.cumsum(c)
    r = int(cum[-1])
    if strict:
        m = int(np.searchsorted(cum, r // 2, "right"))  # sorted(values)[r // 2]
        lt = int(cum[m] - c[m])
        if lt > 0:
            return m, -1, lt, h[:m].sum(axis=0), False
        return m, int(ALL), int(cum[m]), h[:m + 1].sum(axis=0), False
    half = (r + 1) // 2
    m = int(np.searchsorted(cum, half, "left"))  # sorted(values)[half - 1]
    lt = int(cum[m] - c[m])
    t = half - lt
    if t == int(c[m]):
        return m, int(ALL), half, h[:m + 1].sum(axis=0), False
    return m, t, half, h[:m].sum(axis=0), True


def plan_top(st: SparkTable, model: PrivacyModel, *, strict: bool,
             max_fragment: int = DEFAULT_MAX_FRAGMENT) -> TopPlan:
    """Mondrian's cuts above the fragments, decided on the driver (module docstring)."""
    if max_fragment < 1:
        raise ParameterError(f"max_fragment={max_fragment} must be at least 1", parameter="max-fragment",
                             value=max_fragment)
    space = MondrianSpace(st.dictionaries, "ordered")
    domain = st.domain
    min_split = max(2, 2 * max(1, int(size_floor(model))))
    plan = TopPlan(size=[st.n_rows], max_fragment=int(max_fragment))
    frontier = [0]
    while True:
        open_nodes = np.array([i for i in frontier if plan.size[i] > max_fragment and plan.size[i] >= min_split],
                              dtype=np.int64)
        if open_nodes.size == 0:
            return plan
        plan.levels += 1
        arrays = plan.arrays()
        H = _histograms(st, arrays, open_nodes)
        k, d = open_nodes.size, st.d
        mn = np.zeros((k, d), dtype=np.int64)
        mx = np.zeros((k, d), dtype=np.int64)
        nd = np.zeros((k, d), dtype=np.int64)
        for i in range(k):
            for j in range(d):
                present = np.flatnonzero(H[i][j].sum(axis=1))
                mn[i, j], mx[i, j], nd[i, j] = present[0], present[-1], present.size
        w, _ = space.widths(mn, mx, nd)
        rank = np.argsort(-w, axis=1, kind="stable")
        undecided = np.ones(k, dtype=bool)
        frontier = []
        for a in range(d):
            cand = [int(i) for i in np.flatnonzero(undecided) if w[i, rank[i, a]] > 0]
            if not cand:
                break
            cuts: list[list[Any]] = []  # [node index, dimension, median, threshold, n left, left counts, partial]
            for i in cand:
                j = int(rank[i, a])
                m, thr, n_left, left, partial = _cut_from_counts(H[i][j], strict)
                cuts.append([i, j, m, thr, n_left, left, partial])
            part = [c for c in cuts if c[6]]
            if part:
                counts, top = _tied_first(st, arrays, open_nodes[[c[0] for c in part]],
                                          np.array([c[1] for c in part], dtype=np.int64),
                                          np.array([c[2] for c in part], dtype=np.int64),
                                          np.array([c[3] for c in part], dtype=np.int64))
                for q, c in enumerate(part):
                    c[5] = c[5] + counts[q]
                    c[3] = int(top[q])
            left = np.stack([c[5] for c in cuts])
            total = np.stack([H[c[0]][c[1]].sum(axis=0) for c in cuts])
            ok = np.atleast_1d(mondrian_would_split(left, total - left, model, domain))
            for c, yes in zip(cuts, ok):
                node = int(open_nodes[c[0]])
                if not yes:
                    plan.refused.append((node, int(c[1]), int(c[2]), int(c[3])))
                else:
                    plan.cut(node, c[1], c[2], c[3], c[4])
                    frontier += [plan.left[node], plan.right[node]]
                    undecided[c[0]] = False
            if not undecided.any():
                break
