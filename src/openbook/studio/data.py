"""The table the studio works on: a built-in dataset, a file path or an upload, read as the
command line reads it (:func:`openbook.data.loaders.read_table`, :func:`openbook.data.datasets.load_dataset`),
and a profile of every column — its distinct values, missing values, a few examples and the
kind :func:`openbook.hierarchy.detect.detect_kind` sees in it (the kind ``openbook hierarchy``
and ``anonymize``'s collapse warning use), with the QI kind and the hierarchy builder that
suit it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the missing-value tokens of a file (the schema's default: Adult's '?')
MISSING_TOKENS: tuple[str, ...] = ("?",)
#: suffixes an upload may have (the formats ``read_table`` reads without a table name)
UPLOAD_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")
#: rows shown in the data preview
PREVIEW_ROWS = 8
#: how the detected kind suggests a QI kind
QI_KIND_OF = {"numeric": "numeric", "ordinal": "ordinal"}


@dataclass
class Loaded:
    """A table the studio has read.

    ``origin`` is ``dataset``, ``file`` or ``upload``; ``name`` is what the page and the
    equivalent command call it (``adult``, the path typed, the uploaded file's name);
    ``path`` the file ``anonymize`` would read (an upload's copy in the session folder);
    ``roles``/``kinds``/``builtin`` (hierarchies)/``sensitive`` (sets)/``missing`` are a built-in
    dataset's own declaration (none for a file: the publisher decides)."""

    origin: str
    name: str
    frame: Any
    columns: list[dict[str, Any]]
    path: Path | None = None
    dataset: str | None = None
    description: str = ""
    roles: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    builtin: dict[str, str] = field(default_factory=dict)
    sensitive: str = ""
    missing: str = "error"

    @property
    def n_rows(self) -> int:
        return int(len(self.frame))

    def preview(self) -> dict[str, Any]:
        head = self.frame.head(PREVIEW_ROWS)
        return {"columns": [str(c) for c in head.columns],
                "rows": [[_text(v) for v in row] for row in head.itertuples(index=False, name=None)]}

    def to_dict(self) -> dict[str, Any]:
        return {"origin": self.origin, "name": self.name, "description": self.description, "rows": self.n_rows,
                "columns": self.columns, "preview": self.preview(), "builtin_hierarchies": self.builtin,
                "input_file": None if self.path is None else str(self.path) if self.origin == "file" else None}


def _text(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    return str(v)


def _is_numeric(s: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(s.dtype))


def present_values(s: Any, tokens: tuple[str, ...] = MISSING_TOKENS) -> Any:
    """The column's values without its missing ones (as ``openbook hierarchy`` reads a column:
    NaN, and for a text column the missing tokens)."""
    missing = s.isna().to_numpy().copy()
    if tokens and not _is_numeric(s):
        missing |= s.astype("string").str.strip().isin(tokens).fillna(False).to_numpy(dtype=bool)
    return s[~missing]


def profile(name: str, s: Any, tokens: tuple[str, ...] = MISSING_TOKENS) -> dict[str, Any]:
    """One column's profile: distinct and missing values, examples, the detected kind and what
    it suggests (a QI kind; the ``openbook hierarchy`` option that suits it)."""
    from ..hierarchy.detect import detect_kind

    values = present_values(s, tokens)
    distinct = values.unique()
    d = detect_kind(distinct.tolist())
    method, param = suggested_builder(d.option)
    return {"name": name, "values": int(len(distinct)), "missing": int(len(s) - len(values)),
            "examples": [_text(v) for v in distinct[:5].tolist()], "detected": d.kind, "detail": d.detail,
            "suggested_kind": QI_KIND_OF.get(d.kind, "categorical"), "suggested_method": method,
            "suggested_param": param, "option": d.option}


def suggested_builder(option: str) -> tuple[str | None, str]:
    """``--widths 5,10,20`` → (``widths``, ``5,10,20``): the builder :func:`~openbook.hierarchy.detect.detect_kind`
    proposes, as the page's method and parameter (``--order`` needs every value listed: no
    suggestion)."""
    m = re.match(r"--(\w+)\s*(.*)$", option.strip())
    if not m or m.group(1) == "order":
        return None, ""
    return m.group(1), m.group(2).strip()


def profiles(frame: Any, tokens: tuple[str, ...] = MISSING_TOKENS) -> list[dict[str, Any]]:
    return [profile(str(c), frame[c], tokens) for c in frame.columns]


def load_builtin(name: str) -> Loaded:
    """A built-in dataset (``adult``, ``adult-train``, ``synthetic``) with its own schema:
    its QIs and their kinds, its SA, its hierarchies (Adult: paper 001's) and sensitive sets."""
    from ..data.datasets import load_dataset

    ds = load_dataset(name)
    frame = ds.frame
    roles = {c.name: "qi" for c in ds.schema.qi}
    roles[ds.schema.sa.name] = "sa"
    kinds: dict[str, str] = {c.name: c.kind for c in (*ds.schema.qi, ds.schema.sa)}
    builtin = {col: f"built-in ({name}: {h.height} level{'' if h.height == 1 else 's'})"
               for col, h in ds.hierarchies.items()}
    sets = "\n".join(f"{k}={'|'.join(map(str, v))}" for k, v in ds.schema.sensitive_sets.items())
    return Loaded("dataset", name, frame, profiles(frame, tuple(ds.schema.missing_tokens)), dataset=name,
                  description=ds.description, roles=roles, kinds=kinds, builtin=builtin, sensitive=sets,
                  missing=ds.schema.missing)


def load_file(text: str) -> Loaded:
    """A CSV or Parquet file named by its path (as ``openbook anonymize PATH`` reads it)."""
    from ..data.loaders import read_table
    from ..errors import DataError, ParameterError

    text = str(text or "").strip()
    if not text:
        raise ParameterError("give the path of a CSV or Parquet file", parameter="path")
    if "://" in text:
        raise ParameterError("the studio reads files (CSV, Parquet); load a database table with the command line",
                             parameter="path", value=text)
    path = Path(text).expanduser()
    if path.is_dir():
        raise DataError(f"{text} is a folder, not a data file", path=text)
    frame = read_table(path)
    return Loaded("file", text, frame, profiles(frame), path=path.resolve(), description=f"file {text}")


def load_upload(path: Path, original: str) -> Loaded:
    """An uploaded file, saved as ``path`` in the session's folder under its own name."""
    from ..data.loaders import read_table
    from ..errors import DataError

    try:
        frame = read_table(path)
    except DataError as exc:  # name the file as the user knows it, not the session's copy
        raise DataError(str(exc).replace(str(path), original), path=original) from None
    return Loaded("upload", original, frame, profiles(frame), path=path,
                  description=f"uploaded file {original}")


def upload_name(name: str) -> str:
    """The uploaded file's own name, made safe to store (letters, digits, ``._-``; a known
    suffix), else a one-line refusal."""
    from ..errors import ParameterError

    base = Path(str(name or "").replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".") or "upload"
    suffix = Path(base).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise ParameterError(f"upload {name!r}: the studio reads CSV or Parquet files ({', '.join(UPLOAD_SUFFIXES)})",
                             parameter="upload", value=name)
    return base
