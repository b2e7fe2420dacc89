"""ARX-compatible hierarchy files: one row per leaf, ``leaf;level1;...;root``, ``;``-separated,
no header (the format of ARX's ``*.csv`` hierarchies, e.g. the Adult hierarchies shipped with
ARX and used across the anonymization literature).

ARX hierarchies have uniform depth (every row has the same number of fields) and are trees;
:func:`read_arx_csv` builds them with :func:`openbook.hierarchy.builders.from_levels`, so a
label kept unchanged on consecutive levels (``Private;Private;*``) is a unary node.
:func:`write_arx_csv` writes atomically (temporary file in the same directory, then
``os.replace``), so a failed write never leaves a partial file (``docs/design.md``, "Nothing lost, nothing leaked").
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openbook.errors import DataError, HierarchyError
from openbook.hierarchy._graph import as_python, context_of
from openbook.hierarchy.builders import from_levels
from openbook.hierarchy.tree import Hierarchy

__all__ = ["read_arx_csv", "write_arx_csv", "parse_arx_text", "arx_rows"]

DELIMITER = ";"


def _read_bytes(path: Any) -> bytes:
    try:
        if hasattr(path, "read_bytes") and not isinstance(path, (str, os.PathLike)):
            return path.read_bytes()  # an importlib.resources Traversable
        return Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read hierarchy file {str(path)!r}: {exc.strerror or exc}", path=path) from exc


def parse_arx_text(
    text: str,
    column: str | None = None,
    leaf_type: Callable[[str], Any] | None = None,
    *,
    source: Any = "<text>",
    delimiter: str = DELIMITER,
) -> Hierarchy:
    """Parse the text of an ARX hierarchy file (see :func:`read_arx_csv`)."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise DataError(f"hierarchy file {str(source)!r} is empty", path=source)
    try:
        rows = [(n, r) for n, r in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), 1) if r]
    except csv.Error as exc:
        raise DataError(f"hierarchy file {str(source)!r} is truncated or malformed: {exc}", path=source) from exc
    width = len(rows[0][1])
    last_n, last = rows[-1]
    if len(last) < width and not text.endswith(("\n", "\r")):
        raise DataError(
            f"hierarchy file {str(source)!r} looks truncated: its last line {last_n} has {len(last)} of "
            f"{width} fields and no line end",
            path=source,
        )
    for n, r in rows:
        if len(r) != width:
            raise HierarchyError(
                f"{context_of(column)}: inconsistent depth in {str(source)!r}: leaf {r[0]!r} (line {n}) has "
                f"{len(r)} fields, the first leaf {rows[0][1][0]!r} has {width} (ARX hierarchies need uniform depth)",
                column=column,
                value=r[0],
            )
    if leaf_type is not None:
        converted = []
        for n, r in rows:
            try:
                leaf = leaf_type(r[0])
            except (TypeError, ValueError) as exc:
                name = getattr(leaf_type, "__name__", repr(leaf_type))
                raise HierarchyError(
                    f"{context_of(column)}: leaf {r[0]!r} (line {n} of {str(source)!r}) cannot be read as {name}",
                    column=column,
                    value=r[0],
                ) from exc
            converted.append([leaf, *r[1:]])
        return from_levels(converted, column)
    return from_levels([r for _, r in rows], column)


def read_arx_csv(
    path: Any,
    column: str | None = None,
    leaf_type: Callable[[str], Any] | None = None,
    *,
    delimiter: str = DELIMITER,
) -> Hierarchy:
    """Read an ARX hierarchy CSV (``leaf;level1;...;root`` per line, no header).

    ``leaf_type`` (e.g. ``int`` or ``float``) converts the leaf strings so that a numeric
    column matches its leaves; internal labels stay strings. ``path`` may be a file path or an
    ``importlib.resources`` traversable.

    Raises
    ------
    DataError
        The file is missing, unreadable, not UTF-8, empty, or truncated (last line short of
        fields without a line end, or an unterminated quote).
    HierarchyError
        A row has a different number of fields (inconsistent depth), a label has two parents
        at one level or repeats across levels, a leaf is listed twice, or a leaf cannot be
        converted by ``leaf_type``.
    """
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"hierarchy file {str(path)!r} is not UTF-8 text: {exc.reason}", path=path) from exc
    return parse_arx_text(text, column, leaf_type, source=path, delimiter=delimiter)


def arx_rows(hierarchy: Hierarchy) -> list[list[str]]:
    """The ARX rows of a uniform-depth tree: per leaf, the labels of its levels 0..height."""
    h = hierarchy
    if not h.is_tree:
        node = int(next(v for v in range(h.n_nodes) if h.parents_of(v).size > 1))
        raise HierarchyError(
            f"{context_of(h.column)}: the ARX format cannot hold a DAG: {h.labels[node]!r} has several parents",
            column=h.column,
            value=h.labels[node],
        )
    if not h.uniform_depth:
        leaf = int(next(i for i in range(h.n_leaves) if h.depth[i] != h.height))
        value = as_python(h.leaves[leaf])
        raise HierarchyError(
            f"{context_of(h.column)}: the ARX format needs uniform depth: leaf {value!r} has depth "
            f"{int(h.depth[leaf])}, the height is {h.height}",
            column=h.column,
            value=value,
        )
    return h.labels[h.ancestor_table.T].tolist()


def write_arx_csv(hierarchy: Hierarchy, path: Any, *, delimiter: str = DELIMITER) -> None:
    """Write ``hierarchy`` as an ARX CSV, atomically (temporary file + ``os.replace``).

    Leaf labels are ``str(value)``: read back numeric leaves with ``leaf_type=int``/``float``.
    Raises :class:`HierarchyError` for a DAG or a tree of non-uniform depth (ARX cannot hold
    them) and :class:`DataError` if the file cannot be written.
    """
    rows = arx_rows(hierarchy)
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows(rows)
    target = Path(path)
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(buf.getvalue())
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the usual mode (or the mode of the file replaced)
        os.chmod(tmp_name, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        os.replace(tmp_name, target)
        tmp_name = None
    except OSError as exc:
        raise DataError(f"cannot write hierarchy file {str(path)!r}: {exc.strerror or exc}", path=path) from exc
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
