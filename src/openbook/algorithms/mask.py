"""MASK — Minimality Attack Safe K-anonymity (paper 001, Wong et al., VLDB 2007, §6,
Algorithm 1).

1. k-anonymize the table with an algorithm that looks at the QI only (here: strict Mondrian
   with k-anonymity, or full-domain lattice search if Mondrian is unavailable). Because the
   groups do not depend on the SA, the published grouping carries no minimality signal
   about it ("the blinding effect", §6).
2. ``V`` = the classes that violate the ℓ-diversity requirement; ``L`` = the
   ``u = (ℓ-1)·|V|`` ℓ-diverse classes with the highest proportions of the sensitive set
   ``s`` (all ℓ-diverse classes if fewer).
3. ``D`` = the distribution of the ``s``-proportions ``p_i`` of the classes in ``L``.
4. For each ``E ∈ V``, draw ``p_E`` from ``D`` and distort the SA of ``E`` so that its
   proportion of ``s`` becomes ``p_E``: ``c_E - round(p_E·|E|)`` randomly chosen tuples of
   ``E`` with a value in ``s`` get a non-sensitive value (drawn from ``E``'s own
   non-sensitive values, else from the table's), capped so that ``E`` satisfies the model.

Theorem 3: the output is m-confidential (m = ℓ) because MASK does not follow minimality —
the adversary cannot exclude worlds (the release records ``minimality = False``; the
minimality adversary of :mod:`openbook.attacks.credibility` then excludes nothing).

Outputs: a single generalized table or two tables (bucketized: QI-table + SA-table, §6
"Generation of Two Tables"), built from the *distorted* table and verified against
``k``-anonymity and the model on the published data. Provenance reports the distortion:
classes in ``V`` and ``L``, tuples changed, and the SA distortion of Definition 6 (mean over
tuples of ``(coverage[lca(old, new)] - 1)/(base - 1)`` in the SA taxonomy; a changed value
counts 1 without one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.table import EncodedTable
from ..errors import InfeasibleError, ParameterError
from ..models.alpha_k import AlphaKAnonymity, sensitive_counts
from ..models.composite import AllOf
from ..models.k_anonymity import KAnonymity
from ..params import Integer, Options, fail
from ..release import Partition, Release
from .base import Anonymizer


@dataclass
class MaskResult:
    """The k-anonymous partition, the distorted table and the distortion report."""

    partition: Partition
    table: EncodedTable
    report: dict[str, Any]


def _set_model(model: Any) -> AlphaKAnonymity:
    for sub in getattr(model, "models", None) or [model]:
        if isinstance(sub, AlphaKAnonymity) and sub.sensitive_set is not None:
            return sub
    raise ParameterError(
        "mask: the model must bound a sensitive value set (e.g. 'simple-l=2,set=NAME,set-mode=total'); "
        f"got {getattr(model, 'describe', lambda: model)()}", parameter="model")


def with_sa_codes(table: EncodedTable, sa_codes: np.ndarray) -> EncodedTable:
    """A copy of ``table`` whose SA codes are replaced (same decode map and schema)."""
    return table.with_codes(table.sa_name, sa_codes)


def sa_distortion(table: EncodedTable, old: np.ndarray, new: np.ndarray) -> float:
    """Definition 6 applied to the SA: mean over tuples of (coverage[lca] - 1)/(base - 1)."""
    changed = old != new
    if not changed.any():
        return 0.0
    h = table.hierarchies.get(table.sa_name)
    if h is None:
        return float(changed.mean())
    pair = np.stack([old[changed], new[changed]], axis=1).ravel()
    gid = np.repeat(np.arange(int(changed.sum())), 2)
    nodes = h.group_lca(pair, gid, int(changed.sum()))
    cov = np.asarray(h.coverage, dtype=np.float64)[nodes]
    return float(((cov - 1.0) / max(h.n_leaves - 1, 1)).sum() / old.size)


def mask_distort(table: EncodedTable, partition: Partition, model: Any, *, l: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Steps 2-4 of Algorithm 1 on a given (k-anonymous) partition: new SA codes + report."""
    sm = _set_model(model)
    dom = table.sa_domain
    mask = np.asarray(dom.sensitive_mask(sm.sensitive_set), dtype=bool)
    counts = table.group_sa_counts(partition.group, partition.n_groups)
    size = counts.sum(axis=1)
    s_cnt = sensitive_counts(counts, dom, sm.sensitive_set, "total")
    ok = np.asarray(model.holds(counts, dom), dtype=bool)
    V = np.flatnonzero(~ok)
    prop = np.where(size > 0, s_cnt / np.maximum(size, 1), 0.0)
    good = np.flatnonzero(ok)
    u = int(round((l - 1) * V.size))
    L = good[np.lexsort((good, -prop[good]))][:u]
    sa = np.array(table.sa_codes, dtype=np.int32, copy=True)
    if V.size and L.size == 0:
        raise InfeasibleError("mask: no class of the k-anonymous table satisfies the model, so the "
                              "distribution D of Algorithm 1 is empty", model=model)
    drawn = rng.choice(prop[L], size=V.size, replace=True) if V.size else np.zeros(0)
    glob_ns = np.flatnonzero(~mask & (dom.global_counts > 0))
    if V.size and glob_ns.size == 0:
        raise InfeasibleError("mask: the SA has no non-sensitive value to distort to", model=model)
    members = partition.members()
    n_changed = 0
    for E, p in zip(V, drawn):
        rows = members[E]
        n = rows.size
        target = min(int(np.floor(p * n + 0.5)), int(s_cnt[E]))
        sens_rows = rows[mask[sa[rows]]]
        ns_vals = sa[rows][~mask[sa[rows]]]
        pool = ns_vals if ns_vals.size else glob_ns
        while True:
            k = int(s_cnt[E]) - target
            pick = rng.choice(sens_rows, size=k, replace=False) if k else np.zeros(0, dtype=np.int64)
            trial = sa.copy()
            trial[pick] = rng.choice(pool, size=k, replace=True)
            c = np.bincount(trial[rows], minlength=dom.n_values)[None, :]
            if bool(model.holds(c, dom)[0]) or target == 0:
                break
            target -= 1
        sa = trial
        n_changed += k
    report = {"n_classes": int(partition.n_groups), "n_violating": int(V.size), "n_l": int(L.size),
              "l_class_proportions": sorted({round(float(x), 6) for x in prop[L]}),
              "drawn_proportions": [float(x) for x in drawn], "n_distorted_tuples": int(n_changed),
              "distorted_fraction": n_changed / table.n_rows}
    return sa, report


class Mask(Anonymizer):
    """MASK (paper 001 Algorithm 1): k-anonymity on the QI, then SA distortion of the
    classes that violate the ℓ-diversity ``model``.

    Parameters
    ----------
    model: the ℓ-diversity requirement over a sensitive value set (e.g.
        ``simple-l=2,set=NAME,set-mode=total`` or ``alpha=0.5,set=NAME,set-mode=total``).
    k: k of the QI-only k-anonymization (step 1), default 5.
    kind: ``"generalized"`` (single table, default) or ``"bucketized"`` (two tables).
    seed: seed of the draws of step 4 and of the distorted tuples.
    """

    name = "mask"
    minimality = False
    #: the adversary who knows MASK bounds each posterior by what distortion could have hidden
    #: (:mod:`openbook.attacks.distortion`)
    replay = "distortion"
    parameter_constraints = {"k": Integer(minimum=1, strict=True), "kind": Options("generalized", "bucketized")}

    def __init__(self, *, model: Any, k: int = 5, kind: str = "generalized", seed: int | None = None) -> None:
        super().__init__(model=model, seed=seed)
        self.k = k
        self.kind = kind
        self.release_kind = kind

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "kind": self.kind}

    def _validate(self, table: EncodedTable) -> None:
        super()._validate(table)
        if self.k > table.n_rows:
            raise fail(self.name, "k", self.k, f"be at most the table's {table.n_rows} rows")
        _set_model(self.model)

    def l(self) -> float:
        sm = _set_model(self.model)
        return 1.0 / sm.alpha

    def k_partition(self, table: EncodedTable) -> Partition:
        """Step 1 alone: the k-anonymous partition of the QIs (what an adversary who knows the
        QIs re-runs: :mod:`openbook.attacks.distortion`)."""
        return self._k_anonymize(table)[0]

    def _k_anonymize(self, table: EncodedTable) -> tuple[Partition, str]:
        kmodel = KAnonymity(k=int(self.k))
        try:
            from .mondrian import Mondrian

            return Mondrian(model=kmodel, strict=True).partition(table), "mondrian"
        except ImportError:  # pragma: no cover - the lattice search is the fallback
            from .lattice import FullDomainSearch

            return FullDomainSearch(model=kmodel).partition(table), "full-domain-search"

    def run(self, table: EncodedTable) -> MaskResult:
        """All four steps: the k-anonymous partition, the distorted table, the report."""
        self._validate(table)
        part, step1 = self._k_anonymize(table)
        rng = np.random.default_rng(self.seed)
        new_sa, report = mask_distort(table, part, self.model, l=self.l(), rng=rng)
        distorted = with_sa_codes(table, new_sa)
        report["sa_distortion"] = sa_distortion(table, np.asarray(table.sa_codes), new_sa)
        report["step1"] = step1
        prov = self.provenance() | {"k_anonymizer": step1, "distortion": report,
                                    "k_partition": dict(part.provenance)}
        return MaskResult(Partition(part.group, part.n_groups, provenance=prov, extra=part.extra),
                          distorted, report)

    def partition(self, table: EncodedTable) -> Partition:
        return self.run(table).partition

    def recode(self, table: EncodedTable) -> tuple[EncodedTable, Partition]:
        res = self.run(table)
        return res.table, res.partition

    def release_model(self) -> Any:
        return AllOf([KAnonymity(k=int(self.k)), self.model])

    def anonymize(self, table: EncodedTable, *, kind: str | None = None, t_reference: Any = "published") -> Release:
        rel = super().anonymize(table, kind=kind or self.kind, t_reference=t_reference)
        rel.meta["distortion"] = rel.partition.provenance["distortion"]  # the publisher's report
        return rel
