"""The schema of a microdata table: which columns are quasi-identifiers (QI), which is the
sensitive attribute (SA), which value sets of the SA are sensitive, and what happens to the
other columns.

Columns that are neither QI nor SA are **dropped from releases unless kept explicitly**:
an undeclared column published as-is is a leak (docs/design.md, "Nothing lost, nothing leaked").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping

from ..errors import ParameterError, SchemaError, option

Kind = Literal["numeric", "categorical", "ordinal"]
KINDS: tuple[str, ...] = ("numeric", "categorical", "ordinal")
MISSING_POLICIES: tuple[str, ...] = ("error", "drop", "value")


@dataclass(frozen=True)
class Column:
    """One QI (or the SA): its name, kind and, for ordinal columns, the order of its values."""

    name: str
    kind: Kind = "categorical"
    order: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SchemaError(
                f"column {self.name!r}: unknown kind {self.kind!r} (use one of {', '.join(KINDS)})",
                column=self.name,
            )
        if self.kind == "ordinal" and self.order is not None and len(set(self.order)) != len(self.order):
            raise SchemaError(f"column {self.name!r}: ordinal order lists a value twice", column=self.name)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.order is not None:
            out["order"] = list(self.order)
        return out


def _as_column(spec: Any, default_kind: Kind = "categorical") -> Column:
    if isinstance(spec, Column):
        return spec
    if isinstance(spec, str):
        name, _, kind = spec.partition(":")
        return Column(name=name.strip(), kind=(kind.strip() or default_kind))  # type: ignore[arg-type]
    if isinstance(spec, Mapping):
        order = spec.get("order")
        return Column(
            name=str(spec["name"]),
            kind=spec.get("kind", default_kind),
            order=tuple(order) if order is not None else None,
        )
    raise SchemaError(f"cannot read a column declaration from {spec!r}")


@dataclass(frozen=True)
class Schema:
    """Declared roles of the columns of a table.

    Parameters
    ----------
    qi:
        Quasi-identifier columns (``Column`` objects, ``"name:kind"`` strings or dicts).
    sa:
        The sensitive attribute.
    sensitive_sets:
        Named sets of sensitive SA values, e.g. paper 000's binary ℓ-diversity
        ``{"sens": ["Tech-support", "Craft-repair"]}`` or papers 001/003's education
        before secondary ``{"sens": ["Preschool", "1st-4th", "5th-6th", "7th-8th"]}``.
    identifiers:
        Direct identifiers: always dropped.
    keep:
        Other columns the user explicitly publishes unchanged.
    missing:
        ``"error"`` (default: fail naming the column and the count), ``"drop"`` rows with a
        missing value in a used column, or ``"value"``: treat missing as a value of its own.
    missing_tokens:
        Strings that mean "missing" in text sources (Adult uses ``?``).
    """

    qi: tuple[Column, ...]
    sa: Column
    sensitive_sets: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    identifiers: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    missing: str = "error"
    missing_tokens: tuple[str, ...] = ("?",)

    @classmethod
    def build(
        cls,
        *,
        qi: Iterable[Any],
        sa: Any,
        sensitive_sets: Mapping[str, Iterable[Any]] | None = None,
        identifiers: Iterable[str] = (),
        keep: Iterable[str] = (),
        missing: str = "error",
        missing_tokens: Iterable[str] = ("?",),
        kinds: Mapping[str, str] | None = None,
    ) -> "Schema":
        """Build a schema from loose declarations (names, ``"name:kind"`` strings, dicts)."""
        kinds = dict(kinds or {})
        cols = []
        for spec in qi:
            col = _as_column(spec)
            if col.name in kinds:
                col = Column(col.name, kinds[col.name], col.order)  # type: ignore[arg-type]
            cols.append(col)
        sa_col = _as_column(sa)
        if sa_col.name in kinds:
            sa_col = Column(sa_col.name, kinds[sa_col.name], sa_col.order)  # type: ignore[arg-type]
        sets = {str(k): tuple(v) for k, v in (sensitive_sets or {}).items()}
        for k, v in sets.items():
            if not k.strip() or not v:
                raise SchemaError(f"sensitive value set {k!r} is empty: give its values ({option('sensitive', 'NAME=v1|v2')})",
                                  column=k)
        return cls(
            qi=tuple(cols),
            sa=sa_col,
            sensitive_sets=sets,
            identifiers=tuple(identifiers),
            keep=tuple(keep),
            missing=missing,
            missing_tokens=tuple(missing_tokens),
        )

    def __post_init__(self) -> None:
        names = [c.name for c in self.qi]
        if not names:
            raise SchemaError("no quasi-identifier declared (give at least one QI column)")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SchemaError(f"QI column {dup[0]!r} is listed twice", column=dup[0])
        if self.sa.name in names:
            raise SchemaError(
                f"column {self.sa.name!r} is declared both as the sensitive attribute and as a QI",
                column=self.sa.name,
            )
        for role, cols in (("identifier", self.identifiers), ("kept", self.keep)):
            for c in cols:
                if c in names or c == self.sa.name:
                    raise SchemaError(f"column {c!r} is declared as {role} and as QI/SA", column=c)
        if self.missing not in MISSING_POLICIES:
            raise ParameterError(
                f"missing={self.missing!r}: use one of {', '.join(MISSING_POLICIES)}",
                parameter="missing",
                value=self.missing,
            )

    @property
    def qi_names(self) -> list[str]:
        return [c.name for c in self.qi]

    @property
    def used_columns(self) -> list[str]:
        return [*self.qi_names, self.sa.name, *self.keep]

    def column(self, name: str) -> Column:
        for c in (*self.qi, self.sa):
            if c.name == name:
                return c
        raise SchemaError(f"unknown column {name!r}", column=name)

    def check_columns(self, available: Iterable[str]) -> None:
        """Raise :class:`SchemaError` naming the first declared column the data lacks."""
        have = set(map(str, available))
        for name in [*self.qi_names, self.sa.name, *self.keep, *self.identifiers]:
            if name not in have:
                close = sorted(have, key=lambda h: _distance(h.lower(), name.lower()))[:3]
                raise SchemaError(
                    f"unknown column {name!r} (the data has: {', '.join(sorted(have))}; "
                    f"did you mean {close[0]!r}?)" if close else f"unknown column {name!r}",
                    column=name,
                )

    def undeclared(self, available: Iterable[str]) -> list[str]:
        """Columns of the data with no declared role: never published."""
        declared = {*self.used_columns, *self.identifiers}
        return [c for c in available if c not in declared]

    def to_dict(self) -> dict[str, Any]:
        return {
            "qi": [c.to_dict() for c in self.qi],
            "sa": self.sa.to_dict(),
            "sensitive_sets": {k: list(v) for k, v in self.sensitive_sets.items()},
            "identifiers": list(self.identifiers),
            "keep": list(self.keep),
            "missing": self.missing,
            "missing_tokens": list(self.missing_tokens),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Schema":
        return cls.build(
            qi=d["qi"],
            sa=d["sa"],
            sensitive_sets=d.get("sensitive_sets"),
            identifiers=d.get("identifiers", ()),
            keep=d.get("keep", ()),
            missing=d.get("missing", "error"),
            missing_tokens=d.get("missing_tokens", ("?",)),
        )


def _distance(a: str, b: str) -> int:
    """Levenshtein distance, for 'did you mean' hints on unknown columns."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
