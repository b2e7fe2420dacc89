"""Anonymizers by name: the catalog's classes, imported on first use.

``make_algorithm(name, model=..., **params)`` is the one way to build an anonymizer from its
name (the CLI, the API, the demo, the experiments and anatomization's base all use it).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..catalog import CATALOG
from ..errors import ParameterError
from ..models.base import PrivacyModel
from .base import Anonymizer


def algorithm_class(name: str) -> type[Anonymizer]:
    """The anonymizer class catalogued as ``name`` (its module is imported on first use)."""
    if name not in CATALOG:
        raise ParameterError(
            f"unknown algorithm {name!r} (known: {', '.join(sorted(CATALOG))})", parameter="algorithm", value=name
        )
    entry = CATALOG[name]
    return getattr(importlib.import_module(entry.module, __package__), entry.cls)


def all_algorithms() -> dict[str, type[Anonymizer]]:
    """Every anonymizer of the catalog, imported: name -> class."""
    return {name: algorithm_class(name) for name in CATALOG}


def make_algorithm(name: str, *, model: PrivacyModel, **params: Any) -> Anonymizer:
    """An anonymizer by name, with its keyword-only parameters (an unknown one: one line naming it)."""
    cls = algorithm_class(name)
    try:
        return cls(model=model, **params)
    except TypeError as exc:
        raise ParameterError(f"algorithm {name!r}: {exc}", parameter="algorithm", value=name) from None
