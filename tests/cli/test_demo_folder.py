"""``openbook demo`` without ``--out`` writes into a fresh temporary folder, never into the
current one (the demo itself is exercised by ``test_cli_run.py``; here its folder logic,
with the demo's body replaced by one that writes a release-sized file where it is told)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import openbook.demo

from cli_harness import run_cli, snapshot


def _recording_demo(seen):
    def run_demo(*, out_dir, quiet=False, dataset=None):
        out = Path(out_dir)
        seen.append(out)
        out.mkdir(parents=True, exist_ok=True)  # as the real demo does when it saves
        (out / "adult-gg.csv").write_text("age,sex\n1,M\n")
        (out / "reports").mkdir()
        return {"folder": str(out)}

    return run_demo


def test_demo_without_out_leaves_the_current_folder_untouched(capsys, tmp_path, monkeypatch):
    cwd, scratch = tmp_path / "cwd", tmp_path / "scratch"
    cwd.mkdir()
    scratch.mkdir()
    (cwd / "notes.txt").write_text("mine")
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    seen: list[Path] = []
    monkeypatch.setattr(openbook.demo, "run_demo", _recording_demo(seen))
    before = snapshot(cwd)
    code, out, err = run_cli(capsys, ["demo", "--json"])
    assert code == 0, err
    assert snapshot(cwd) == before
    (folder,) = seen
    assert folder.parent == scratch and folder.name.startswith("openbook-demo-")
    assert (folder / "adult-gg.csv").is_file() and json.loads(out)["folder"] == str(folder)


def test_demo_with_out_writes_there(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen: list[Path] = []
    monkeypatch.setattr(openbook.demo, "run_demo", _recording_demo(seen))
    code, out, err = run_cli(capsys, ["demo", "--out", tmp_path / "new", "--json"])
    assert code == 0, err
    assert seen == [tmp_path / "new"] and sorted(p.name for p in tmp_path.iterdir()) == ["new"]
