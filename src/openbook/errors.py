"""Typed errors and warnings of openbook.

Every error raised on bad input is an :class:`OpenbookError` carrying the offending
object (column, value, parameter, model), so the CLI can print one clear line and exit
with code 2 (docs/design.md, "Conventions"; typed exceptions as Tumult Core's).
"""

from __future__ import annotations

import contextvars
from typing import Any

#: who is reading openbook's messages: ``"cli"`` (set by the command line) or ``"python"`` (the
#: Python API, the default): a message names the option the reader can give — ``--missing drop``
#: on the command line, ``missing='drop'`` in Python (:func:`option`)
INTERFACE: contextvars.ContextVar[str] = contextvars.ContextVar("openbook_interface", default="python")


def option(name: str, value: Any = None) -> str:
    """An option as the reader spells it: ``option("max_risk", 0.5)`` is ``--max-risk 0.5`` on
    the command line and ``max_risk=0.5`` in Python; without a value, the bare ``--max-risk`` /
    ``max_risk=``."""
    if INTERFACE.get() == "cli":
        flag = "--" + name.replace("_", "-")
        return flag if value is None else f"{flag} {value}"
    key = name.replace("-", "_")
    return f"{key}=" if value is None else f"{key}={value!r}"


class OpenbookError(Exception):
    """Base class of every error openbook raises on bad input or an impossible task."""

    exit_code = 2


class SchemaError(OpenbookError):
    """A column is unknown, declared twice, of the wrong kind, or has missing values."""

    def __init__(self, message: str, *, column: str | None = None) -> None:
        super().__init__(message)
        self.column = column


class HierarchyError(OpenbookError):
    """A generalization hierarchy is malformed or does not cover a value of its column."""

    def __init__(self, message: str, *, column: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.column = column
        self.value = value


class ParameterError(OpenbookError):
    """A parameter is out of its allowed range (k < 1, p outside [0, 1], ...)."""

    def __init__(self, message: str, *, parameter: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value


class InfeasibleError(OpenbookError):
    """No release can satisfy the requested privacy model on this table."""

    def __init__(self, message: str, *, model: Any = None) -> None:
        super().__init__(message)
        self.model = model


class DataError(OpenbookError):
    """An input file is missing, unreadable, truncated, empty or of an unknown format."""

    def __init__(self, message: str, *, path: Any = None) -> None:
        super().__init__(message)
        self.path = path


class VerificationError(OpenbookError):
    """A release does not satisfy the model it claims; it is never written."""

    def __init__(self, message: str, *, model: Any = None, failing_groups: int = 0) -> None:
        super().__init__(message)
        self.model = model
        self.failing_groups = failing_groups


class RiskError(OpenbookError):
    """A release the certificate fails: an adversary that applies puts someone above the
    risk target, or leaves someone unresolved. Nothing is written (exit code 3)."""

    exit_code = 3

    def __init__(self, message: str, *, adversary: str | None = None, n_people: int = 0,
                 worst: float | None = None) -> None:
        super().__init__(message)
        self.adversary = adversary
        self.n_people = n_people
        self.worst = worst


class PrivacyLeakWarning(UserWarning):
    """A choice that leaks: an undeclared column published, a minimality-following algorithm
    where an attack-resistant one exists, ... (after diffprivlib's warning of that name)."""


class DataWarning(UserWarning):
    """A fact about the input a publisher must know, printed as one ``openbook: warning:`` line:
    rows dropped for missing values (``--missing drop``), ..."""


def warn_dropped(n_dropped: int, n_rows: int, source: Any = None) -> None:
    """``--missing drop`` says how many rows it dropped (they are in no release and no count)."""
    import warnings

    if n_dropped:
        where = f" of {source}" if source else ""
        warnings.warn(f"--missing drop: {n_dropped:,} of {n_rows:,} rows{where} had a missing QI or SA value and were "
                      "dropped before anonymization (they are in no release, and not among its suppressed rows)",
                      DataWarning, stacklevel=3)
