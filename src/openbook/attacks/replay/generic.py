"""Replay units that need no algorithm-specific structure (paper 000 §5.1; Claim 4).

* **No information** — SA-only or QI-only groupings (Anatomy, fixed-level full-domain
  generalization, paper 000 Claim 4): no world is excluded, the posterior is the class
  frequency (one constant unit).
* **Re-run** — any other algorithm with ``partition``: one unit, the whole table, one cell
  per row; every world is re-run through ``algorithm.partition`` and kept iff it publishes
  the observed classes (small tables only; the reference the other units are tested against).

Also the helpers every unit builder shares: a table with another SA column, groupings
compared up to label names, and the sensitive-set mask of set-based models.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...data.table import EncodedColumn, EncodedTable
from ...errors import OpenbookError, ParameterError
from ...progress import silenced, track
from .engine import Unit


def no_information(algo: Any) -> bool:
    """Does ``algo``'s grouping ignore the QI→SA association inside a group (paper 000
    Claim 4: trait ``replay`` ``"sa-only"``, or ``"qi-only"``)?"""
    return type(algo).replay_method(algo.params(), algo.model) in ("sa-only", "qi-only")


def with_sa(table: EncodedTable, sa: np.ndarray) -> EncodedTable:
    """``table`` with its SA codes replaced by ``sa`` (a possible world)."""
    cols = dict(table.columns)
    c = cols[table.sa_name]
    cols[table.sa_name] = EncodedColumn(c.name, c.kind, np.asarray(sa, dtype=np.int32), c.categories, c.numeric)
    return EncodedTable(table.schema, cols, dict(table.hierarchies), table.kept, table.dropped_columns, table.source)


def canonical(group: np.ndarray) -> np.ndarray:
    """Group labels renumbered by first appearance (compare groupings, not label names)."""
    _, first, inv = np.unique(group, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    out = rank[inv.ravel()]
    return np.where(group < 0, -1, out)


def set_only_mask(model: Any, domain: Any) -> np.ndarray | None:
    """SA values a set-based model (simple/binary ℓ-diversity, (α,k)-anonymity with a
    sensitive set, with k-anonymity) looks at one by one; ``None`` for other models."""
    from ...models.alpha_k import AlphaKAnonymity
    from ...models.k_anonymity import KAnonymity

    mask = None
    for sub in getattr(model, "models", None) or [model]:
        if isinstance(sub, KAnonymity):
            continue
        if isinstance(sub, AlphaKAnonymity) and sub.sensitive_set is not None:
            m = np.asarray(domain.sensitive_mask(sub.sensitive_set), dtype=bool)
            mask = m if mask is None else (mask | m)
            continue
        return None
    return mask


def no_information_units(group: np.ndarray, gcounts: np.ndarray) -> list[Unit]:
    rows = np.argsort(group, kind="stable")
    rows = rows[group[rows] >= 0]
    g = group[rows]
    return [Unit(rows, g.astype(np.int64), np.arange(gcounts.shape[0]), gcounts, None, "no-information")]


def rerun_units(algo: Any, table: EncodedTable, group: np.ndarray, gcounts: np.ndarray,
                publish: Any = None) -> list[Unit]:
    """One unit, the whole table, one cell per row; each world re-run through
    ``algo.partition`` and kept iff its published classes (``publish(table, partition)``,
    default the groups themselves) are the observed ones."""
    if np.any(group < 0):
        raise ParameterError(f"{algo.name} replay: the release suppressed rows (their SA is unknown)",
                             parameter="release")
    n = table.n_rows
    rows = np.argsort(group, kind="stable")
    leaf = group[rows]
    ref = canonical(group)

    def lik(c: np.ndarray) -> np.ndarray:
        out = np.zeros(c.shape[0])
        sa = np.empty(n, dtype=np.int32)
        for w in track(range(c.shape[0]), f"replay adversary: {algo.name} re-run on each world"):
            sa[rows] = np.argmax(c[w], axis=1)
            t = with_sa(table, sa)
            try:
                with silenced():
                    part = algo.partition(t)
            except OpenbookError:  # an infeasible world cannot produce the release
                continue
            got = part.group if publish is None else publish(t, part)
            out[w] = float(np.array_equal(canonical(got), ref))
        return out
    return [Unit(rows, np.arange(n, dtype=np.int64), leaf.astype(np.int64), gcounts, lik, "rerun")]
