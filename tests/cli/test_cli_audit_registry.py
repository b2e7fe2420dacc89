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
    code, o, e = run(capsys, ["audit", f["c"], "--adversary", "linkage", "--against-registry", reg, "--linkage-l", "2",
                              "--json"])
    assert code == 0, e
    assert json.loads(o)["n_vulnerable"] == 0
    code, o, e = run(capsys, ["audit", f["b"], "--adversary", "linkage", "--against-registry", reg, "--max-risk", "0.5",
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
    # the linkage finding passes, but no adversary knows how these hand-made releases were made
    # (they record no algorithm): the verdict is not pass — unknown is not safe
    code, o, e = run(capsys, ["certify", f["c"], "--adversary", "linkage", "--against-registry", reg,
                              "--max-risk", "0.5", "--json"])
    d = json.loads(o)
    (lk,) = [a for a in d["adversaries"] if a["adversary"] == "linkage"]
    # nobody falls below diversity 2, and the exact posterior over the worlds consistent with
    # both releases (docs/linkage.md) is 1/2 for everyone: nobody above, nobody unresolved
    assert lk["n_above"] == 0 and lk["n_unresolved"] == 0 and lk["max_posterior"] == 0.5
    assert lk["method"] == "exact"
    assert code == 3 and d["verdict"] == "fail" and d["algorithm_aware"]["adversary"] is None
    assert "records no algorithm" in d["headline"]


def test_audit_l_is_split_into_max_risk_and_linkage_l(capsys, tmp_path):
    """``--l`` used to mean both the posterior threshold 1/l and the post-linkage ℓ: it is
    refused with one line naming the two flags that replace it."""
    f = _files(tmp_path)
    reg = tmp_path / "registry"
    assert run(capsys, ["registry", "add", reg, f["a"]])[0] == 0
    for cmd in (["audit", f["b"], "--adversary", "linkage", "--against-registry", reg, "--l", "2"],
                ["registry", "add", reg, f["b"], "--l", "2"]):
        code, o, e = run(capsys, cmd)
        assert code == 2 and e.count("\n") == 1 and "--max-risk" in e and "--linkage-l" in e, e
    # --linkage-l belongs to the linkage adversary
    code, o, e = run(capsys, ["audit", f["b"], "--adversary", "baseline", "--linkage-l", "2"])
    assert code == 2 and e.count("\n") == 1 and "--max-risk" in e
    # the same threshold either way: --linkage-l 2 is --max-risk 0.5
    a = run(capsys, ["audit", f["b"], "--adversary", "linkage", "--against-registry", reg, "--linkage-l", "2",
                     "--json"])
    b = run(capsys, ["audit", f["b"], "--adversary", "linkage", "--against-registry", reg, "--max-risk", "0.5",
                     "--json"])
    assert a[0] == b[0] == 0 and json.loads(a[1])["n_vulnerable"] == json.loads(b[1])["n_vulnerable"] == 1


def test_registry_add_keeps_a_fractional_l(capsys, tmp_path):
    """``registry add`` runs the linkage adversary with the model's ℓ as a float: a
    post-linkage diversity of 2 is below ℓ = 2.5 (it used to be truncated to 2 and pass)."""
    f = _files(tmp_path)
    reg = tmp_path / "registry"
    assert run(capsys, ["registry", "add", reg, f["a"]])[0] == 0
    code, o, e = run(capsys, ["registry", "add", reg, f["c"], "--linkage-l", "2.5"])
    assert code == 3 and "below l=2.5" in e and "release-0001" in e, e
    code, o, e = run(capsys, ["registry", "add", reg, f["c"], "--linkage-l", "2", "--json"])
    assert code == 0 and json.loads(o)["linkage_audit"] == "passed", e


def test_audit_bad_input_one_line(capsys, tmp_path):
    f = _files(tmp_path)
    code, o, e = run(capsys, ["audit", f["b"], "--against-registry", tmp_path / "missing"])
    assert code == 2 and e.count("\n") == 1
    code, o, e = run(capsys, ["registry", "add", tmp_path / "r"])
    assert code == 2 and e.count("\n") == 1
