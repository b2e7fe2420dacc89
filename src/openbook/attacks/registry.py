"""Adversaries by name: the classes of :data:`openbook.catalog.ADVERSARIES`, imported on first
use — as :mod:`openbook.algorithms.registry` is for the anonymizers. Adding an adversary is its
own module plus one catalog line; the certificate runs every registered adversary that applies.
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

from ..catalog import ADVERSARIES
from ..errors import ParameterError
from .adversary import Adversary

#: the registered names, in registry order (the CLI lists them without importing the engines)
ADVERSARY_NAMES = tuple(ADVERSARIES)


def adversary_class(name: str) -> type[Adversary]:
    """The adversary class catalogued as ``name`` (its module imported on first use)."""
    if name not in ADVERSARIES:
        raise ParameterError(f"unknown adversary {name!r} (known: {', '.join(ADVERSARIES)})",
                             parameter="adversary", value=name)
    entry = ADVERSARIES[name]
    return getattr(importlib.import_module(entry.module, __package__), entry.cls)


def adversaries() -> dict[str, type[Adversary]]:
    """Registry: name -> adversary class, in the catalog's order."""
    return {name: adversary_class(name) for name in ADVERSARIES}


def make_adversary(name: str, **params: Any) -> Adversary:
    """The adversary registered as ``name`` with its keyword parameters."""
    return adversary_class(name)(**params)


def parse_adversaries(spec: str | Sequence[str] | None) -> list[str]:
    """``"baseline,replay"`` (or a list) -> checked names; ``None``/``"auto"`` -> ``[]``."""
    if spec is None:
        return []
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if str(s).strip()]
    if names == ["auto"]:
        return []
    for n in names:
        if n not in ADVERSARIES:
            raise ParameterError(f"unknown adversary {n!r} (known: {', '.join(ADVERSARIES)}, auto)",
                                 parameter="adversary", value=n)
    return names
