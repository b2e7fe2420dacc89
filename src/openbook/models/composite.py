"""Conjunctions of privacy models (e.g. 5-anonymity AND distinct 3-diversity).

:class:`AllOf` is itself a :class:`PrivacyModel`, so every algorithm and the release check
accept it unchanged. A group holds iff it holds for every member. The *level* of a
conjunction is not one number: ``group_levels`` returns the **first** member's levels (so
``table_level`` and the level direction follow the first model; put the model whose level
you want reported first) and :meth:`AllOf.levels` returns every member's levels by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from ..errors import ParameterError
from .base import PrivacyModel, SADomain


class AllOf(PrivacyModel):
    """The conjunction of several privacy models.

    Parameters
    ----------
    models:
        The member models (at least one). Nested conjunctions are flattened.
    """

    name: ClassVar[str] = "all-of"

    def __init__(self, models: Iterable[PrivacyModel]) -> None:
        flat: list[PrivacyModel] = []
        for m in models:
            if isinstance(m, AllOf):
                flat.extend(m.models)
            elif isinstance(m, PrivacyModel):
                flat.append(m)
            else:
                raise ParameterError(
                    f"all-of: every member must be a privacy model, got {m!r}",
                    parameter="models",
                    value=m,
                )
        if not flat:
            raise ParameterError("all-of needs at least one model", parameter="models")
        self.models: tuple[PrivacyModel, ...] = tuple(flat)

    @property
    def monotonic(self) -> bool:  # type: ignore[override]  # noqa: D102 - a conjunction of monotonic models is
        return all(m.monotonic for m in self.models)

    @property
    def absorbing(self) -> bool:  # type: ignore[override]  # noqa: D102 - so is a conjunction of absorbing models
        return all(m.absorbing for m in self.models)

    @property
    def reads_sa(self) -> bool:  # type: ignore[override]  # noqa: D102 - a conjunction reads the SA if a member does
        return any(m.reads_sa for m in self.models)

    @property
    def higher_is_stronger(self) -> bool:  # type: ignore[override]  # noqa: D102 - the first member's direction
        return self.models[0].higher_is_stronger

    def group_levels(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        return self.models[0].group_levels(counts, domain)

    def levels(self, counts: np.ndarray, domain: SADomain) -> dict[str, np.ndarray]:
        """Every member's group levels, keyed by ``describe()`` of the member."""
        return {m.describe(): m.group_levels(counts, domain) for m in self.models}

    def holds(self, counts: np.ndarray, domain: SADomain) -> np.ndarray:
        out = self.models[0].holds(counts, domain)
        for m in self.models[1:]:
            out = out & m.holds(counts, domain)
        return out

    def validate(self, domain: SADomain) -> None:
        for m in self.models:
            m.validate(domain)
        # Each member feasible does not make the conjunction feasible in general; for
        # monotonic members the whole table as one group decides it.
        if self.monotonic:
            super().validate(domain)

    def params(self) -> dict[str, Any]:
        return {"models": [m.to_dict() for m in self.models]}

    def describe(self) -> str:
        return " & ".join(m.describe() for m in self.models)
