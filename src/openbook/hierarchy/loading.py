"""A hierarchy named by a user: ``auto``, a built-in Adult variant (``adult:paper001``,
``adult:arx``) or an ARX CSV file (``leaf;level1;…;root``) — one way for the CLI, the run
configuration, the Python API and the population table of the identity line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import DataError, HierarchyError, SchemaError


def load_hierarchy(spec: Any, column: str, kind: str) -> Any:
    """The hierarchy ``spec`` names for ``column`` (of kind ``kind``: numeric leaves are read as
    numbers), or ``None`` for ``auto`` (the table builds an automatic one on first use)."""
    from . import adult_hierarchies, read_arx_csv

    if spec in (None, "auto"):
        return None
    if isinstance(spec, str) and spec.startswith("adult:"):
        variant = spec.split(":", 1)[1] or "paper001"
        try:
            return adult_hierarchies(variant)[column]
        except KeyError:
            raise SchemaError(f"the Adult hierarchies have none for column {column!r}", column=column) from None
    leaf_type = _number if kind == "numeric" else None
    try:
        return read_arx_csv(Path(spec), column=column, leaf_type=leaf_type)
    except HierarchyError as exc:
        if column in str(exc):
            raise
        raise HierarchyError(f"hierarchy of column {column!r}: {exc}", column=column) from None
    except DataError as exc:
        raise DataError(f"hierarchy of column {column!r}: {exc}", path=spec) from None


def with_hierarchies(base: Mapping[str, Any], specs: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    """``base`` (column -> hierarchy, e.g. a dataset's own) with the columns of ``specs``
    replaced: each spec a path, ``"adult:VARIANT"``, ``"auto"`` (the column's hierarchy
    removed: the table builds one on first use) or a hierarchy object, read as the schema's
    kind of the column (numeric leaves as numbers; a column outside the QIs and the SA as
    categorical). The one reading of hierarchy options: the config file, ``--hierarchy``,
    ``--original``'s and the Python API's ``hierarchies=``."""
    out = dict(base)
    used = [*schema.qi_names, schema.sa.name]
    for col, spec in specs.items():
        kind = schema.column(col).kind if col in used else "categorical"
        h = load_hierarchy(spec, col, kind) if isinstance(spec, (str, type(None))) else spec
        if h is None:
            out.pop(col, None)
        else:
            out[col] = h
    return out


def _number(text: str) -> int | float:
    """A numeric leaf as the data's numbers are published: an integer when it is one ("17",
    not "17.0" — as a numeric column without a hierarchy), else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)
