"""The commit protocol of release writes, at every point a kill can stop it: before the
journal (old files intact, temporaries removed by the next access), after the journal with
some renames done (the next access rolls the rest forward), and a journal that is torn (it
was never committed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbook.release import io


def _files(folder: Path, tag: str) -> None:
    for name in ("r.csv", "r.sa.csv", "r.csv.json"):
        (folder / name).write_text(f"{tag}:{name}")


def _content(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def _stage(folder: Path, tag: str) -> list[tuple[str, str]]:
    renames = []
    for name in ("r.csv", "r.sa.csv", "r.csv.json"):
        tmp = f".{name}.abc{io.PART}"
        (folder / tmp).write_text(f"{tag}:{name}")
        renames.append((tmp, name))
    return renames


def test_killed_before_the_journal_keeps_the_old_release(tmp_path):
    _files(tmp_path, "old")
    _stage(tmp_path, "new")
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"old:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


@pytest.mark.parametrize("done", [0, 1, 2, 3])
def test_killed_after_the_journal_rolls_forward(tmp_path, done):
    _files(tmp_path, "old")
    renames = _stage(tmp_path, "new")
    (tmp_path / ".r.csv.commit").write_text(json.dumps({"renames": renames, "deletes": []}))
    for tmp, final in renames[:done]:
        (tmp_path / tmp).replace(tmp_path / final)
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"new:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


def test_a_torn_journal_was_never_committed(tmp_path):
    _files(tmp_path, "old")
    _stage(tmp_path, "new")
    (tmp_path / ".r.csv.commit").write_text('{"renames": [[".r.csv.abc.part", "r.c')
    io.recover(tmp_path / "r.csv")
    assert _content(tmp_path) == {n: f"old:{n}" for n in ("r.csv", "r.csv.json", "r.sa.csv")}


def test_commit_deletes_an_old_sa_table(tmp_path):
    _files(tmp_path, "old")
    writers = {tmp_path / "r.csv": lambda t: t.write_text("new"), tmp_path / "r.csv.json": lambda t: t.write_text("{}")}
    io.commit(tmp_path / "r.csv", writers, deletes=[tmp_path / "r.sa.csv"])
    assert _content(tmp_path) == {"r.csv": "new", "r.csv.json": "{}"}
