"""The anonymizer interface and registry.

An anonymizer stores its keyword-only parameters unchanged, declares what each may hold in
``parameter_constraints`` (checked in one place, :func:`openbook.params.validate_params`, with
one message form; table-dependent checks follow in ``_validate``), and turns an :class:`~openbook.data.table.EncodedTable` into a
:class:`~openbook.release.Partition` (``partition``) carrying the provenance an
algorithm-aware adversary is entitled to. ``anonymize`` adds recoding and verification:
nothing unverified leaves it (docs/design.md; scikit-learn's estimator conventions).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..data.table import EncodedTable
from ..errors import InfeasibleError, ParameterError, option
from ..models.base import PrivacyModel
from ..params import Constraint, Integer, Optional, validate_params
from ..release import Partition

if TYPE_CHECKING:  # a Release needs pandas: imported by anonymize() only
    from ..release import Release


class Anonymizer(ABC):
    """Base class: ``partition(table)`` decides groups; ``anonymize(table)`` publishes."""

    name: ClassVar[str]
    release_kind: str = "generalized"  # (an instance may write another: MASK's ``kind=``)
    #: True when the algorithm follows the minimality principle (paper 001 §3): a
    #: deterministic algorithm that never generalizes more than the model needs.
    minimality: bool = False  # (per instance where it depends on a parameter: strict Mondrian)
    #: largest fraction of rows the algorithm may suppress; algorithms that can suppress
    #: take it as a parameter (``max_suppression=``), every other one suppresses nothing
    max_suppression: float = 0.0
    #: how the algorithm orders people with equal QIs: ``"random"`` (a secret draw — to the
    #: adversary such people are interchangeable, and a re-run on the same table need not
    #: publish the same rows), ``"input"`` (row position), or ``None`` (the order never
    #: matters). Adversaries read this trait (``ties_at_random``), not algorithm names.
    ties: str | None = None
    #: what each keyword-only parameter may hold (merged along the class hierarchy)
    parameter_constraints: ClassVar[dict[str, Constraint]] = {"seed": Optional(Integer(minimum=0, strict=True))}

    # -- traits the adversaries read (never the algorithm's name; docs/certificate.md) ------
    #: how the replay adversary knows the algorithm (paper 000 §5.1; :mod:`openbook.attacks.awareness`):
    #: ``"decisions"`` (its SA-dependent decisions replayed one by one: GG, RGG, SG, Mondrian),
    #: ``"sa-only"`` (grouping by the SA and random draws alone, paper 000 Claim 4),
    #: ``"qi-only"`` (grouping by the QIs alone), ``"decoupled"`` (QI classes by the QIs, SA
    #: groups by the SA), ``"rerun"`` (the whole algorithm re-run on every possible world), or
    #: ``None``: no adversary knows it, and :attr:`unaware` says why
    replay: ClassVar[str | None] = None
    #: why no adversary knows the algorithm (read when :meth:`replay_method` is ``None``)
    unaware: ClassVar[str] = "no adversary replays this algorithm"
    #: a run is fixed by the table (no random draw, no secret order): re-run on the original
    #: table it publishes the same rows, so an auditor can recover who sits where
    deterministic: ClassVar[bool] = False
    #: claims robustness to worst-case QI-based background knowledge (paper 003): the
    #: background adversary audits it
    background_robust: ClassVar[bool] = False

    @classmethod
    def replay_method(cls, params: dict[str, Any], model: Any = None) -> str | None:
        """How the replay adversary knows a run with ``params`` under ``model`` (the run's
        privacy model, when known) — trait :attr:`replay`."""
        return cls.replay

    @classmethod
    def withholds(cls, params: dict[str, Any]) -> str:
        """How a run with ``params`` chooses whom to suppress, as the absence adversary
        models it (:mod:`openbook.attacks.absence`): ``"fails-model"`` (the classes failing
        the model), ``"search-fails-model"`` (those of the node a lattice search chose, no
        whole-table check), ``"gg-tail"`` (GG's last buckets), ``"sensitive-only"`` (rows of the
        sensitive set), or ``"unknown"`` (the absent people stay unresolved)."""
        return "unknown"

    def __init__(self, *, model: PrivacyModel, seed: int | None = None) -> None:
        self.model = model
        self.seed = seed

    @property
    def ties_at_random(self) -> bool:
        """Are people with equal QIs ordered by a secret random draw (trait ``ties``)?"""
        return self.ties == "random"

    @property
    def interchangeable_ties(self) -> bool:
        """Are people with equal QIs interchangeable to an adversary who knows the algorithm
        — the files tell them apart by nothing and the run treats them alike through its
        secret draws, so each one's posterior is the mean over their set's seats? By
        default when their order is a secret draw (:attr:`ties_at_random`)."""
        return self.ties_at_random

    def params(self) -> dict[str, Any]:
        """Parameters as given (JSON-serialisable), for the release's provenance."""
        return {}

    def _validate(self, table: EncodedTable) -> None:
        """Raise on parameters or a model this algorithm cannot honour on this table."""
        if not isinstance(self.model, PrivacyModel):
            raise ParameterError(f"{self.name}: model must be a privacy model, got {self.model!r}", parameter="model")
        self.check_params()
        self.model.validate(table.sa_domain)

    @classmethod
    def constraints(cls) -> dict[str, Constraint]:
        """Every declared constraint of this class and its bases."""
        out: dict[str, Constraint] = {}
        for klass in reversed(cls.__mro__):
            out.update(getattr(klass, "parameter_constraints", None) or {})
        return out

    def check_params(self) -> None:
        """Check every declared parameter (one message form: ``<name>: <param> must ..., got ...``)."""
        validate_params(self.name, self.constraints(),
                        {k: getattr(self, k) for k in self.constraints() if hasattr(self, k)})

    @abstractmethod
    def partition(self, table: EncodedTable) -> Partition:
        """Group the rows (suppressed rows get group -1)."""

    def provenance(self) -> dict[str, Any]:
        """What the release may tell an adversary: algorithm, parameters, model (Kerckhoffs:
        assume they know it anyway). Never the seed — whoever knows it can replay every
        random choice (RGG's coin flips, Anatomy's draws, R-suppression's level) and undo
        the protection randomization gives."""
        return {"algorithm": self.name, "params": self.params(),
                "model": self.model.to_dict(), "minimality": self.minimality}

    def release_levels(self) -> list[int] | None:
        """Hierarchy levels for global (full-domain) recoding, or None for local recoding."""
        return None

    def check_budget(self, part: Partition, n_rows: int) -> None:
        """Refuse a partition that suppresses more rows than ``max_suppression`` allows,
        naming the budget it would need (every algorithm honours the budget)."""
        allowed = int(np.floor(float(self.max_suppression) * n_rows + 1e-9))
        if part.n_suppressed > allowed:
            need = part.n_suppressed / max(n_rows, 1)
            raise InfeasibleError(
                f"{self.name} suppresses {part.n_suppressed} of {n_rows} rows ({need:.2%}), above "
                f"{option('max_suppression', float(self.max_suppression))}; allow at least "
                f"{option('max_suppression', float(np.ceil(need * 10000) / 10000))} or choose another algorithm",
                model=self.model)

    def recode(self, table: EncodedTable) -> tuple[EncodedTable, Partition]:
        """The table whose values are published and its partition: the input itself for every
        algorithm that only groups rows; MASK publishes an SA-distorted copy (paper 001 §6)."""
        return table, self.partition(table)

    def default_kind(self) -> str:
        """The kind of release this anonymizer writes unless told otherwise (``release_kind``)."""
        return self.release_kind

    def release_model(self) -> PrivacyModel:
        """The model the release is verified against (MASK adds its k-anonymity step's)."""
        return self.model

    def anonymize(self, table: EncodedTable, *, kind: str | None = None, t_reference: Any = "published") -> Release:
        """Partition, recode and verify (``t_reference``: see :func:`openbook.release.build_release`)."""
        from ..release import build_release
        published, part = self.recode(table)
        self.check_budget(part, table.n_rows)
        return build_release(published, part, model=self.release_model(), kind=kind or self.default_kind(),
                             levels=self.release_levels(), t_reference=t_reference)
