"""Partitions, releases (generalized / bucketized / suppressed rows), verification, file I/O.

``Release``, ``build_release``, ``save_release`` and ``load_release`` are imported on first
use (they need pandas; an anonymizer that only builds a ``Partition`` does not)."""

from importlib import import_module
from typing import Any

from .partition import Partition
from .verify import ModelCheck, check_counts, require

_LAZY = {"load_release": ".io", "save_release": ".io", "Release": ".release", "build_release": ".release",
         "group_labels": ".labels"}

__all__ = ["Partition", "Release", "build_release", "group_labels", "save_release", "load_release", "ModelCheck",
           "check_counts", "require"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
