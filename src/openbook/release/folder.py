"""Reading the Spark engine's release back: a folder of Parquet part files and its sidecar
(docs/spark.md, "Reading a Spark release back"; docs/release-files.md).

:func:`load_folder` is what :func:`openbook.release.load_release` runs for a path that is
such a folder (``OUT.parquet``) or its sidecar (``OUT.parquet.json``) — so ``check``,
``certify``, ``report``, ``audit`` and ``registry add`` read a Spark release like any other.
It needs pyarrow only (no Spark, no Java): the release is read on one machine, as every
release is.

Checked, each failure one line (:class:`~openbook.errors.DataError`, exit code 2):

* the sidecar: its format and own digest, every key (:func:`openbook.release.sidecar.validate`,
  the files record aside) and its ``files`` record (:func:`folder_files`): the folder's
  name, the layout, per part file in published order its plain name, rows and SHA-256, the
  total, the column types;
* the folder: no file its sidecar does not list; every part file present, its SHA-256 and
  row count (Parquet metadata) the sidecar's — a torn or edited part is named;
* the rows: read as one Arrow dataset whose fragments are the parts in their listed order
  (the published order: sorted by published values), then the sidecar's claims checked on
  them as for any release (:func:`openbook.release.sidecar.check_against_data`: the
  published rows, the classes, the model check).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError

#: the keys of a Spark release's ``files`` record
FOLDER_FILES = ("data", "layout", "rows", "parts", "dtypes")


def _bad(side: Path, what: str) -> DataError:
    return DataError(f"release sidecar {side} {what}", path=side)


def folder_files(files: Any, side: Path) -> dict[str, Any]:
    """The ``files`` record of a Spark release's sidecar, every key checked (one line naming
    the key): ``data`` (the folder's plain name), ``layout``, ``rows`` (the sum of the parts'),
    ``parts`` (per part file in published order: ``name``, ``rows``, ``sha256``), ``dtypes``."""
    from .io import FOLDER_LAYOUT, _plain_name

    if not isinstance(files, dict):
        raise _bad(side, "files is not an object")
    unknown = sorted(set(files) - set(FOLDER_FILES))
    if unknown:
        raise _bad(side, f"files.{unknown[0]} is not a key openbook writes")
    missing = [k for k in FOLDER_FILES if k not in files]
    if missing:
        raise _bad(side, f"files.{missing[0]} is missing")
    if files["layout"] != FOLDER_LAYOUT:
        raise _bad(side, f"files.layout is {files['layout']!r}, not {FOLDER_LAYOUT!r}")
    _plain_name(files["data"], side, "files.data")
    parts = files["parts"]
    if not isinstance(parts, list):
        raise _bad(side, "files.parts is not a list")
    names: set[str] = set()
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or sorted(part) != ["name", "rows", "sha256"]:
            raise _bad(side, f"files.parts[{i}] is not a part record (name, rows, sha256)")
        name = _plain_name(part["name"], side, f"files.parts[{i}].name")
        if not name.endswith(".parquet") or name in names:
            raise _bad(side, f"files.parts[{i}].name is {name!r}: not a new .parquet name")
        names.add(name)
        if isinstance(part["rows"], bool) or not isinstance(part["rows"], int) or part["rows"] < 0:
            raise _bad(side, f"files.parts[{i}].rows is {part['rows']!r}, not an integer >= 0")
        sha = part["sha256"]
        if not isinstance(sha, str) or len(sha) != 64 or any(ch not in "0123456789abcdef" for ch in sha):
            raise _bad(side, f"files.parts[{i}].sha256 is not a SHA-256 digest")
    rows = files["rows"]
    if isinstance(rows, bool) or not isinstance(rows, int) or rows != sum(p["rows"] for p in parts):
        raise _bad(side, f"files.rows is {rows!r}, not the sum of its parts' rows")
    dtypes = files["dtypes"]
    if not isinstance(dtypes, dict) or any(t not in ("int64", "float64", "string") for t in dtypes.values()):
        raise _bad(side, "files.dtypes is not a map of column types (int64, float64, string)")
    return files


def load_folder(folder: Path, side: Path) -> Any:
    """The Spark release ``folder`` with its sidecar ``side``, verified (module docstring),
    as a :class:`~openbook.release.Release`. Call after :func:`openbook.release.io.settle`."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from .io import _apply_dtypes, _from_meta, _sidecar_json
    from .release import KINDS
    from .sidecar import check_against_data, sha256_file, validate

    if not side.is_file():
        raise DataError(f"no release sidecar {side} (is {folder} a release written by openbook?)", path=side)
    meta = _sidecar_json(side)
    if "files" not in meta:
        raise _bad(side, "files is missing")
    files = folder_files(meta["files"], side)
    # every other key as for any release (the files record is the folder's: checked above)
    meta = {**validate({k: v for k, v in meta.items() if k != "files"}, side, kinds=KINDS, database=None),
            "files": files}
    if files["data"] != folder.name:
        raise _bad(side, f"describes {files['data']!r}, not {folder.name!r}")
    if meta["kind"] != "generalized":
        raise _bad(side, f"describes a {meta['kind']} release in a Parquet folder (only generalized ones are)")
    if not folder.is_dir():
        raise DataError(f"release folder {folder} is missing", path=folder)
    listed = {p["name"] for p in files["parts"]}
    extra = sorted(f for f in os.listdir(folder) if f not in listed)
    if extra:
        raise DataError(f"release folder {folder} holds {extra[0]!r}, which its sidecar does not list", path=folder)
    paths = []
    for part in files["parts"]:
        f = folder / part["name"]
        if not f.is_file():
            raise DataError(f"release {folder}: part file {part['name']} is missing", path=f)
        if sha256_file(f) != part["sha256"]:
            raise DataError(f"release {folder}: part file {part['name']} does not match its sidecar's digest "
                            "(torn or tampered)", path=f)
        n = pq.ParquetFile(f).metadata.num_rows  # it is the file that was written: readable
        if n != part["rows"]:
            raise DataError(f"release {folder}: part file {part['name']} holds {n} rows, its sidecar says "
                            f"{part['rows']}", path=f)
        paths.append(str(f))
    if paths:  # one dataset, its fragments in the listed (published) order
        data = ds.dataset(paths, format="parquet").to_table().to_pandas()
    else:
        data = pd.DataFrame({c: pd.Series([], dtype=object) for c in files["dtypes"]})
    if len(data) != files["rows"]:
        raise DataError(f"release {folder} is truncated or altered: {len(data)} rows, the sidecar says "
                        f"{files['rows']}", path=folder)
    data = _apply_dtypes(data, files["dtypes"], folder)
    release = _from_meta(meta, data, None, folder)
    check_against_data(release, folder)
    return release
