"""Builders of generalization hierarchies: flat (suppression), numeric interval ladders,
taxonomies and DAGs from a child→parent mapping, ARX-style level rows, ordinal merging, and
an automatic choice by column kind.

Paper 001 (Wong et al., VLDB 2007) §3 footnote 2: "such hierarchies can also be created for
numerical attributes by generalizing values to value range and to wider value ranges";
Table 12 lists the Adult set-up this module reproduces (Age: 5-, 10-, 20-year ranges, height
4; Sex and Salary Class: suppression, height 1; the rest: taxonomy trees).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from openbook.errors import HierarchyError, ParameterError
from openbook.hierarchy._graph import as_python, context_of
from openbook.hierarchy.tree import Hierarchy

__all__ = ["flat", "interval_ladder", "from_mapping", "from_levels", "ordinal", "auto"]


def _unique_in_order(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(as_python(v) for v in values))


def flat(values: Iterable[Any], column: str | None = None, *, top: str = "*") -> Hierarchy:
    """Suppression hierarchy of height 1: every value → ``top`` (paper 001 Table 12,
    "Suppression"). Leaves keep the order of first appearance (duplicates dropped)."""
    leaves = _unique_in_order(values)
    return Hierarchy(leaves, [top], [len(leaves)] * len(leaves) + [None], column=column)


# ---- numeric interval ladders -------------------------------------------------------------
def _fmt(x: float) -> str:
    return repr(float(x))


def _check_widths(widths: Sequence[Any], integer: bool) -> tuple[list[float], int]:
    """Validated widths and a power-of-ten scale that makes them integers."""
    ws = list(widths)
    for w in ws:
        if not isinstance(as_python(w), (int, float)) or isinstance(w, bool) or not math.isfinite(w) or w <= 0:
            raise ParameterError(
                f"interval widths must be positive numbers, got {w!r}", parameter="widths", value=tuple(ws)
            )
        if integer and float(w) != int(w):
            raise ParameterError(
                f"interval width {w!r} is not an integer, but the values are integers",
                parameter="widths",
                value=tuple(ws),
            )
    for a, b in zip(ws, ws[1:]):
        ratio = b / a
        if ratio < 1.5 or abs(ratio - round(ratio)) > 1e-9:
            raise ParameterError(
                f"interval widths must be nested multiples: {b!r} is not a multiple (>= 2x) of {a!r}",
                parameter="widths",
                value=tuple(ws),
            )
    scale = 1
    for _ in range(13):
        if all(abs(w * scale - round(w * scale)) <= 1e-9 * max(1.0, w * scale) for w in ws):
            break
        scale *= 10
    else:
        raise ParameterError(
            f"interval widths {tuple(ws)!r} need more than 12 decimals", parameter="widths", value=tuple(ws)
        )
    return [float(w) for w in ws], scale


def interval_ladder(
    values: Iterable[Any],
    widths: Sequence[float] = (5, 10, 20),
    column: str | None = None,
    top: str = "*",
) -> Hierarchy:
    """Numeric hierarchy: leaves (the sorted unique values) → aligned ranges of ``widths[0]``
    → ranges of ``widths[1]`` → ... → ``top`` (height ``len(widths) + 1``).

    Ranges are aligned at multiples of their width (``lo = floor(v / w) * w``) and only ranges
    holding at least one leaf are created, so coverage counts actual leaves. Labels: integer
    values (int dtype) give inclusive integer ranges ``[20-24]``; float values give half-open
    ranges ``[20.0-25.0)``. :attr:`Hierarchy.intervals` holds ``(lo, hi)`` per node: a leaf
    ``(v, v)``; an integer range its inclusive bounds ``(20, 24)``; a float range ``(20.0,
    25.0)`` with ``hi`` excluded; the root the hull of the top ranges. Each width must be a
    multiple (>= 2x) of the previous one (nested ranges), else :class:`ParameterError`. Float
    boundaries are compared after scaling by the widths' power of ten, so ``0.3`` falls in
    ``[0.3-0.4)`` despite binary rounding.
    """
    raw = list(values)
    for v in raw:
        v = as_python(v)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise HierarchyError(
                f"{context_of(column)}: interval ladder needs numeric values, got {v!r}", column=column, value=v
            )
        if isinstance(v, float) and not math.isfinite(v):
            raise HierarchyError(
                f"{context_of(column)}: interval ladder value {v!r} is not a finite number", column=column, value=v
            )
    arr = np.asarray([as_python(v) for v in raw])
    if arr.size == 0:
        raise HierarchyError(f"{context_of(column)}: interval ladder needs at least one value", column=column)
    integer = arr.dtype.kind in "iu"
    uniq = np.unique(arr.astype(np.int64 if integer else np.float64))
    ws, scale = _check_widths(widths, integer)
    nl = uniq.size
    if integer:
        x = uniq
    else:
        x = np.round(uniq * scale, 6)
    labels: list[str] = []
    parents: list[Any] = []
    iv: list[tuple[float, float]] = [(float(v), float(v)) for v in uniq]
    child_keys = x  # the values (scaled) whose parents are assigned next
    offset = nl
    for w in ws:
        W = int(round(w)) if integer else int(round(w * scale))
        q = np.floor_divide(child_keys, W) if integer else np.floor(child_keys / W)
        lo_keys = np.unique(q * W)
        parents.extend((offset + np.searchsorted(lo_keys, q * W)).tolist())
        for lk in lo_keys:
            if integer:
                lo = int(lk)
                labels.append(f"[{lo}-{lo + W - 1}]")
                iv.append((float(lo), float(lo + W - 1)))
            else:
                lo, hi = lk / scale, (lk + W) / scale
                labels.append(f"[{_fmt(lo)}-{_fmt(hi)})")
                iv.append((lo, hi))
        child_keys = lo_keys
        offset += lo_keys.size
    root = offset
    parents.extend([root] * int(child_keys.size))
    labels.append(top)
    parents.append(None)
    hull = np.asarray(iv[nl:] if ws else iv, dtype=np.float64)
    iv.append((float(hull[:, 0].min()), float(hull[:, 1].max())))
    leaves = uniq.tolist()
    return Hierarchy(leaves, labels, parents, column=column, intervals=np.asarray(iv))


# ---- taxonomies ------------------------------------------------------------------------------
def from_mapping(
    mapping: Mapping[Any, Any], column: str | None = None, *, leaves: Sequence[Any] | None = None
) -> Hierarchy:
    """Taxonomy tree or DAG from ``{child: parent}`` or ``{child: [parent, parent2, ...]}``.

    Leaves are the children that are never a parent, in mapping order unless ``leaves`` fixes
    the code order (it must list exactly those values). The root is the one parent that is not
    a child. A list or tuple value gives several parents; the first one defines the node's
    levels (:attr:`Hierarchy.ancestor_table`). Internal nodes are numbered by first mention.
    """
    plists: dict[Any, list[Any]] = {}
    for child, par in mapping.items():
        plists[as_python(child)] = [as_python(p) for p in par] if isinstance(par, (list, tuple)) else [as_python(par)]
    parent_set = {p for ps in plists.values() for p in ps}
    found = [c for c in plists if c not in parent_set]
    if not found and plists:
        v = next(iter(plists))
        path: list[Any] = []
        while v not in path and v in plists:
            path.append(v)
            v = plists[v][0]
        raise HierarchyError(
            f"{context_of(column)}: the mapping has no leaf: every child is also a parent (cycle through {v!r})",
            column=column,
            value=v,
        )
    if leaves is not None:
        given = [as_python(v) for v in leaves]
        missing = [v for v in found if v not in set(given)]
        extra = [v for v in given if v not in set(found)]
        if missing or extra:
            bad = missing[0] if missing else extra[0]
            what = "is a leaf of the mapping but not in leaves" if missing else "is in leaves but not a leaf of the mapping"
            raise HierarchyError(f"{context_of(column)}: value {bad!r} {what}", column=column, value=bad)
        found = given
    leaf_ids = {v: i for i, v in enumerate(found)}
    internal: dict[Any, int] = {}
    for child, ps in plists.items():
        for v in [child, *ps]:
            if v not in leaf_ids and v not in internal:
                internal[v] = len(found) + len(internal)
    ids = {**leaf_ids, **internal}
    parents = [[ids[p] for p in plists[v]] if v in plists else None for v in [*found, *internal]]
    return Hierarchy(found, [str(v) for v in internal], parents, column=column)


def from_levels(rows: Iterable[Sequence[Any]], column: str | None = None) -> Hierarchy:
    """Hierarchy from ARX-style rows ``[leaf, level1, ..., root]``, one per leaf (code order).

    Internal nodes are identified by (level, label); a label at a level must have one parent
    label at the next level. A label may repeat on consecutive levels of one chain (an ARX
    level that keeps a value unchanged, e.g. ``Private;Private;Employed;*``) - those are
    distinct unary nodes - but not elsewhere (it would name two different sets). Every row
    must have the same number of fields (ARX hierarchies have uniform depth).
    """
    rows = [list(r) for r in rows]
    if not rows:
        raise HierarchyError(f"{context_of(column)}: no rows: a hierarchy needs at least one leaf", column=column)
    width = len(rows[0])
    for r in rows:
        if len(r) != width:
            raise HierarchyError(
                f"{context_of(column)}: inconsistent depth: leaf {as_python(r[0]) if r else None!r} has {len(r)} fields "
                f"but the first leaf {as_python(rows[0][0])!r} has {width} (ARX hierarchies need uniform depth)",
                column=column,
                value=as_python(r[0]) if r else None,
            )
    if width < 2:
        raise HierarchyError(
            f"{context_of(column)}: leaf {as_python(rows[0][0])!r} has no generalization (rows need leaf;...;root)",
            column=column,
            value=as_python(rows[0][0]),
        )
    nl = len(rows)
    key_id: dict[tuple[int, str], int] = {}
    for j in range(1, width):
        for r in rows:
            lab = str(as_python(r[j]))
            if lab == "":
                raise HierarchyError(
                    f"{context_of(column)}: leaf {as_python(r[0])!r} has an empty label at level {j}",
                    column=column,
                    value=as_python(r[0]),
                )
            key_id.setdefault((j, lab), nl + len(key_id))
    parent: dict[int, int] = {}
    for r in rows:
        labs = [str(as_python(x)) for x in r]
        for j in range(1, width - 1):
            child, par = key_id[(j, labs[j])], key_id[(j + 1, labs[j + 1])]
            if parent.setdefault(child, par) != par:
                old = [k for k, v in key_id.items() if v == parent[child]][0][1]
                raise HierarchyError(
                    f"{context_of(column)}: label {labs[j]!r} at level {j} has two parents, {old!r} and {labs[j + 1]!r}",
                    column=column,
                    value=labs[j],
                )
    first_parent = {i: key_id[(1, str(as_python(r[1])))] for i, r in enumerate(rows)}
    parents: list[Any] = [first_parent[i] for i in range(nl)]
    parents += [parent.get(node) for node in range(nl, nl + len(key_id))]
    labels = [k[1] for k in key_id]  # dict order == id order
    h = Hierarchy([r[0] for r in rows], labels, parents, column=column)
    # a label repeated on several levels must be an unchanged value along one chain
    by_label: dict[str, list[tuple[int, int]]] = {}
    for i, r in enumerate(rows):
        by_label.setdefault(str(as_python(r[0])), []).append((0, i))
    for (j, lab), node in key_id.items():
        by_label.setdefault(lab, []).append((j, node))
    for lab, occ in by_label.items():
        if len(occ) < 2:
            continue
        occ.sort()
        for (j1, n1), (j2, n2) in zip(occ, occ[1:]):
            if j1 == j2 == 0:
                continue  # two distinct leaf values printing alike (1 and "1")
            up = first_parent.get(n1, parent.get(n1))
            if j2 != j1 + 1 or up != n2 or h.children_of(n2).size != 1:
                raise HierarchyError(
                    f"{context_of(column)}: label {lab!r} appears at level {j1} and at level {j2} with different "
                    "parents or members (a label may repeat only as a value kept unchanged on the next level)",
                    column=column,
                    value=lab,
                )
    return h


def ordinal(values: Sequence[Any], column: str | None = None, *, top: str = "*") -> Hierarchy:
    """Ordinal hierarchy: adjacent values merged pairwise, level by level, up to ``top``
    (balanced binary, height ``ceil(log2(n))``, uniform depth). ``values`` is the ordered list
    of categories; a merged range is labelled ``[first..last]``, and a value left alone at a
    level keeps its label (an unchanged ARX level)."""
    vals = list(values)
    if len(vals) < 2:
        return flat(vals, column, top=top)
    groups = [(i, i) for i in range(len(vals))]
    rows: list[list[Any]] = [[v] for v in vals]
    while len(groups) > 2:
        groups = [(groups[k][0], groups[min(k + 1, len(groups) - 1)][1]) for k in range(0, len(groups), 2)]
        for a, b in groups:
            lab = str(as_python(vals[a])) if a == b else f"[{as_python(vals[a])}..{as_python(vals[b])}]"
            for i in range(a, b + 1):
                rows[i].append(lab)
    for r in rows:
        r.append(top)
    return from_levels(rows, column)


def _nice_unit(span: float, integer: bool) -> float:
    """Smallest of 1, 2, 5 x 10^k such that ranges of 4 units cover ``span`` in ~4 ranges."""
    need = span / 16.0
    k = math.floor(math.log10(need)) if need > 0 else 0
    if integer:
        k = max(k, 0)
    while True:
        for m in (1, 2, 5):
            u = m * 10.0**k
            if u >= need:
                return float(round(u)) if integer else float(f"{u:.12g}")
        k += 1


def auto(values: Iterable[Any], kind: str, column: str | None = None) -> Hierarchy:
    """A default hierarchy by column kind.

    * ``"numeric"``: :func:`interval_ladder` with widths ``(u, 2u, 4u)``, ``u`` the smallest
      of 1, 2, 5 x 10^k with ``16u >= span`` (about four top ranges; Adult ages 17..90 give
      5-, 10-, 20-year ranges, height 4). Leading widths whose ranges all hold a single value
      are dropped; two or fewer distinct values give a flat ladder.
    * ``"categorical"``: :func:`flat` over the distinct values.
    * ``"ordinal"``: :func:`ordinal` over ``values`` taken as the ordered categories.

    Leaf order (= code order): first appearance for categorical and ordinal values, sorted
    for numeric ones; pass a column's categories in code order to keep its codes.
    """
    if kind == "categorical":
        return flat(values, column)
    if kind == "ordinal":
        return ordinal(_unique_in_order(values), column)
    if kind != "numeric":
        raise ParameterError(
            f"{context_of(column)}: kind must be 'numeric', 'categorical' or 'ordinal', got {kind!r}",
            parameter="kind",
            value=kind,
        )
    vals = list(values)
    probe = interval_ladder(vals, widths=(), column=column)  # validates the values
    uniq = np.asarray(probe.leaves)
    if uniq.size <= 2:
        return probe
    integer = uniq.dtype.kind in "iu"
    u = _nice_unit(float(uniq[-1] - uniq[0]), integer)
    widths = [int(w) if integer else w for w in (u, 2 * u, 4 * u)]
    while widths:
        w = widths[0]
        if np.unique(np.floor(uniq / w)).size < uniq.size:
            break
        widths.pop(0)
    return interval_ladder(uniq.tolist(), widths=widths, column=column)
