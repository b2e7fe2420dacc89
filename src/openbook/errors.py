"""Typed errors and warnings of openbook.

Every error raised on bad input is an :class:`OpenbookError` carrying the offending
object (column, value, parameter, model), so the CLI can print one clear line and exit
with code 2 (DESIGN.md, "Examples to follow": Tumult Core's typed exceptions).
"""

from __future__ import annotations

from typing import Any


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
