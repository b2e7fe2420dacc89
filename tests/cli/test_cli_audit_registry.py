"""``openbook registry add|list`` and ``openbook audit NEW --against-registry`` (paper 002)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from openbook.cli import main
from openbook.release import save_release

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "release"))
from test_registry import R1, R2, R3, bucketized  # noqa: E402


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _files(tmp_path):
    paths = {}
    for name, rows in (("a", R1), ("b", R2), ("c", R3)):
        p = tmp_path / f"{name}.csv"
        save_release(bucketized(rows), p)
        paths[name] = p
    return paths


def test_registry_add_list_and_linkage_audit(capsys, tmp_path):
    f = _files(tmp_path)
    reg = tmp_path / "registry"
    code, o, e = run(capsys, ["registry", "add", reg, f["a"], "--name", "hospital-a", "--json"])
    assert code == 0, e
    assert json.loads(o)["added"] == "hospital-a"
    code, o, e = run(capsys, ["registry", "list", reg, "--json"])
    assert code == 0 and [r["name"] for r in json.loads(o)["releases"]] == ["hospital-a"]
    # the linkage adversary: posterior 1/post-linkage diversity, vulnerable below l=2
    code, o, e = run(capsys, ["audit", f["c"], "--adversary", "linkage", "--against-registry", reg, "--l", "2",
                              "--json"])
    assert code == 0, e
    assert json.loads(o)["n_vulnerable"] == 0
    code, o, e = run(capsys, ["audit", f["b"], "--adversary", "linkage", "--against-registry", reg, "--l", "2",
                              "--json"])
    assert code == 0, e
    d = json.loads(o)
    assert d["n_vulnerable"] == 1 and d["max_posterior"] == 1.0


def test_certify_against_registry_fails_on_linkage(capsys, tmp_path):
    f = _files(tmp_path)
    reg = tmp_path / "reg.sqlite"
    assert run(capsys, ["registry", "add", reg, f["a"]])[0] == 0
    code, o, e = run(capsys, ["certify", f["b"], "--adversary", "linkage", "--against-registry", reg,
                              "--max-risk", "0.5", "--json"])
    assert code == 3, e
    d = json.loads(o)
    assert d["verdict"] == "fail"
    (lk,) = [a for a in d["adversaries"] if a["adversary"] == "linkage"]
    assert lk["n_above"] == 1 and lk["max_posterior"] == 1.0
    code, o, e = run(capsys, ["certify", f["c"], "--adversary", "linkage", "--against-registry", reg,
                              "--max-risk", "0.5", "--json"])
    assert code == 0 and json.loads(o)["verdict"] == "pass"


def test_audit_bad_input_one_line(capsys, tmp_path):
    f = _files(tmp_path)
    code, o, e = run(capsys, ["audit", f["b"], "--against-registry", tmp_path / "missing"])
    assert code == 2 and e.count("\n") == 1
    code, o, e = run(capsys, ["registry", "add", tmp_path / "r"])
    assert code == 2 and e.count("\n") == 1
