"""Mondrian multidimensional partitioning, strict and relaxed (LeFevre, DeWitt,
Ramakrishnan, ICDE 2006; paper 000 §2.3, §3.2, App. B (b)).

Mondrian treats each row's QIs as a point and splits the space top-down: a node picks the
widest dimension (width normalised by the column's whole-table span), cuts at the median,
and keeps the cut only when it is *allowable* — both children satisfy the privacy model;
otherwise the next-widest dimension is tried, and a node with no allowable cut is a group.

Cuts (``values`` are a dimension's coordinates in the node, ``r`` rows):

strict (``strict=True``)
    ``m`` = the upper median ``sorted(values)[r // 2]``; left = ``values < m``, right =
    ``values >= m`` — every point on one side of the divider goes to one child (App. B (b):
    ``a, b, c, c, c, d`` splits ``{a, b} | {c, c, c, d}``). When ``m`` is the node's minimum,
    the minimum's points go left instead (``values <= m``). A dimension whose values are all
    equal cannot be cut.
relaxed (``strict=False``)
    the left child takes the ``⌈r/2⌉`` smallest points; points equal to the median are
    shared out in the node's current row order so the children differ in size by at most 1
    (§3.2: the even-split variant, immune to the minimality attack by Theorem 5).

Categorical columns (``categorical=``):

``"ordered"`` (default)  coordinates are the codes (hierarchy leaf order, or sorted labels);
                         a strict cut then splits the node's *value set* in two (at the row
                         median in code order), and the width is, as in anonypy, the number
                         of distinct values in the node over the domain size.
``"hierarchy"``          strict cuts only at boundaries between the children of the node's
                         lowest common ancestor in the column's hierarchy (coordinates are
                         leaf positions in depth-first order); the boundary that best
                         balances the children is taken; the width is
                         ``(coverage(LCA) - 1) / (n_leaves - 1)``. Relaxed Mondrian cuts the
                         same depth-first order at the median (children differ by <= 1).

The level loop is :func:`.mondrian_planner.mondrian_plan` — one planner, breadth-first over all
open nodes at once, with a decision hook: here :func:`allowable` (the privacy model is
called once per level and dimension rank, vectorised over all nodes); the replay adversary
(paper 000 §5.1) runs the same planner with its own hook. :func:`mondrian_cut` and
:func:`mondrian_would_split` state the cut rule and the decision for one node (the reference
the tests check the planner against). The split tree is in ``Partition.extra``:
``tree_lo``/``tree_hi``/``tree_parent``/``tree_dim``/``tree_value``/``tree_ties``/
``tree_group`` (positions refer to ``extra["row_order"]``, the rows grouped by node;
``tree_dim = -1`` for a group) and ``coord_<j>`` (code → coordinate of QI ``j``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.table import EncodedTable
from ..errors import ParameterError
from ..models.base import PrivacyModel, SADomain
from ..models.promise import size_floor
from ..params import Boolean, Options
from ..release import Partition
from .base import Anonymizer
from .mondrian_planner import CandidateCuts, Decide, MondrianSpace, plan_records

CATEGORICAL = ("ordered", "hierarchy")


# ---------------------------------------------------------------------------------------
# public decision functions
# ---------------------------------------------------------------------------------------
def mondrian_cut(values: np.ndarray, strict: bool) -> tuple[int, int, np.ndarray]:
    """The cut Mondrian makes on one dimension of a node (ordered coordinates).

    Returns ``(m, t, left)``: row ``i`` goes left iff ``values[i] < m``, or
    ``values[i] == m`` and it is among the first ``t`` such rows in the given row order;
    ``left`` is that boolean mask. Raises ``ValueError`` when the node cannot be cut on
    this dimension (fewer than 2 rows, or all values equal under a strict cut).
    """
    v = np.asarray(values)
    r = v.size
    if r < 2:
        raise ValueError("a node of fewer than 2 rows cannot be cut")
    sv = np.sort(v, kind="stable")
    if strict:
        m = sv[r // 2]
        lt = int(np.searchsorted(sv, m, "left"))
        if lt > 0:
            t = 0
        else:
            le = int(np.searchsorted(sv, m, "right"))
            if le == r:
                raise ValueError("all values are equal: no strict cut")
            t = le
    else:
        h = (r + 1) // 2
        m = sv[h - 1]
        lt = int(np.searchsorted(sv, m, "left"))
        t = h - lt
    eq = v == m
    rank = np.cumsum(eq) - 1
    left = (v < m) | (eq & (rank < t))
    return int(m), int(t), left


def mondrian_would_split(left_counts: np.ndarray, right_counts: np.ndarray, model: PrivacyModel,
                         domain: SADomain) -> Any:
    """Is the cut allowable: do both children satisfy ``model``? (vector → bool,
    matrices → bool array)."""
    lc, rc = np.asarray(left_counts), np.asarray(right_counts)
    one = lc.ndim == 1
    ok = (np.asarray(model.holds(np.atleast_2d(lc), domain), dtype=bool)
          & np.asarray(model.holds(np.atleast_2d(rc), domain), dtype=bool))
    return bool(ok[0]) if one else ok


# ---------------------------------------------------------------------------------------
class Mondrian(Anonymizer):
    """Mondrian (LeFevre et al. 2006), strict or relaxed.

    Parameters
    ----------
    model: the privacy model every group must satisfy (any model of :mod:`openbook.models`).
    strict: ``True`` (default) for strict partitioning, ``False`` for relaxed (even-split).
    categorical: ``"ordered"`` (value-set cuts in code order, default) or ``"hierarchy"``.
    """

    name = "mondrian"
    release_kind = "generalized"
    minimality = True
    replay = "decisions"
    deterministic = True
    parameter_constraints = {"strict": Boolean(), "categorical": Options(*CATEGORICAL)}

    def __init__(self, *, model: PrivacyModel, strict: bool = True, categorical: str = "ordered",
                 seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.strict = strict
        self.categorical = categorical
        #: strict Mondrian follows minimality (App. B (b)); relaxed is even-split (§3.2)
        self.minimality = bool(strict)

    def params(self) -> dict[str, Any]:
        return {"strict": self.strict, "categorical": self.categorical}

    def _validate(self, table: EncodedTable) -> None:
        super()._validate(table)
        if not table.qi_names:
            raise ParameterError("mondrian: the table has no QI column to split on", parameter="qi")

    def partition(self, table: EncodedTable) -> Partition:
        self._validate(table)
        res = mondrian_partition(table, self.model, strict=bool(self.strict), categorical=self.categorical)
        prov = self.provenance() | {"n_tree_nodes": int(res["tree_lo"].size)}
        group = res.pop("group")
        n_groups = res.pop("n_groups")
        return Partition(group, n_groups, provenance=prov, extra=res)


def allowable(model: PrivacyModel, domain: SADomain) -> Decide:
    """Mondrian's decision hook: a cut is taken when it is *allowable* — both children
    satisfy ``model`` (their label counts are the SA counts)."""
    def decide(cuts: CandidateCuts) -> np.ndarray:
        return mondrian_would_split(cuts.left_counts, cuts.right_counts, model, domain)
    return decide


def mondrian_partition(table: EncodedTable, model: PrivacyModel, *, strict: bool = True,
                       categorical: str = "ordered", space: MondrianSpace | None = None,
                       domain: SADomain | None = None) -> dict[str, Any]:
    """Mondrian on ``table``: the planner (:func:`.mondrian_planner.mondrian_plan`) with the
    :func:`allowable` hook; returns group labels, the split tree and the coordinates.

    A *fragment* — the rows of one node of a larger table's run, in the larger table's row
    order, with the same column encoding (codes, categories, hierarchies) — gives exactly
    the subtree of that run below the node when ``space`` is the larger table's
    :class:`.mondrian_planner.MondrianSpace` (built with the same ``categorical``: widths
    are normalised by the whole table's spans and domain sizes) and ``domain`` its
    ``sa_domain`` (t-closeness compares with the whole table's distribution). Without them
    the fragment is a table of its own."""
    space = MondrianSpace(table, categorical) if space is None else space
    domain = table.sa_domain if domain is None else domain
    if space.d != len(table.qi_names):
        raise ParameterError("mondrian: the space has another number of QIs than the table", parameter="space")
    sa = table.sa_codes
    n_sa = domain.n_values
    if int(sa.max(initial=0)) >= n_sa:
        raise ParameterError("mondrian: the table has SA codes beyond the domain's", parameter="domain")
    # only the planner holds the records, so it can free them before labelling the rows
    tree = plan_records(space, space.table_record(table, sa, n_sa), n_sa, allowable(model, domain),
                        strict=strict, floor=size_floor(model))
    out: dict[str, Any] = {"group": tree.group, "n_groups": tree.n_groups, **tree.extra()}
    for j in range(space.d):
        out[f"coord_{j}"] = space.coord[j]
    return out
