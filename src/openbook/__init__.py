"""openbook: publish microdata that stays private when the adversary knows the algorithm.

The Python API (:mod:`openbook.api`) is three functions — :func:`anonymize`, :func:`check`,
:func:`certify` — plus :func:`load_dataset`, :func:`load_release` and :func:`make_model`, and
the run they are made of: :class:`RunSpec` (:mod:`openbook.run`) published by :func:`publish`
(:mod:`openbook.engines`, this machine or Spark); they are imported on first use, so
``import openbook`` stays instant.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "anonymize": "openbook.api", "check": "openbook.api", "certify": "openbook.api",
    "load_dataset": "openbook.data.datasets", "load_release": "openbook.release.io",
    "save_release": "openbook.release.io", "make_model": "openbook.models.registry",
    "RunSpec": "openbook.run", "publish": "openbook.engines",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'openbook' has no attribute {name!r}")
