"""What the command line says when it succeeds or fails (issue 26): every number the sidecar
publishes is one a reader can count from the files; errors and refusals are JSON objects under
``--json``; a repeated ``--sensitive`` joins its values."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from openbook.release import load_release
from openbook.release.io import sidecar_path
from openbook.release.sidecar import self_digest

from cli_harness import run_cli

#: issue 26's case: six people with distinct QIs, relaxed Mondrian, ℓ = 2
SIX = pd.DataFrame({"c0": list("ccaddc"), "c1": list("cbabda"), "dis": ["cold", "flu", "flu", "cold", "cold", "cold"]})


def test_n_groups_is_the_number_of_classes_the_files_show(tmp_path, capsys):
    src = tmp_path / "a.csv"
    SIX.to_csv(src, index=False)
    out = tmp_path / "r.csv"
    code, o, e = run_cli(capsys, ["anonymize", src, "--qi", "c0,c1", "--sa", "dis", "-m", "l=2", "--algorithm",
                                  "mondrian", "--no-strict", "--no-certify", "-o", out])
    assert code == 0, e
    side = json.loads(sidecar_path(out).read_text())
    rel = load_release(out)
    assert side["n_groups"] == rel.classes()[1] == side["check"]["n_groups"]
    # a sidecar claiming another count (its digest recomputed) is refused on read
    side["n_groups"] = side["n_groups"] + 1 if side["n_groups"] < len(SIX) else side["n_groups"] - 1
    side["digest"] = self_digest(side)
    sidecar_path(out).write_text(json.dumps(side))
    code, o, e = run_cli(capsys, ["check", out])
    assert code == 2 and "n_groups" in e and e.count("\n") == 1, e


def test_json_errors_and_refusals_are_json_objects(tmp_path, capsys):
    src = tmp_path / "a.csv"
    SIX.to_csv(src, index=False)
    code, o, e = run_cli(capsys, ["anonymize", src, "--qi", "nope", "--sa", "dis", "-m", "k=2", "-o",
                                  tmp_path / "r.csv", "--json"])
    err = json.loads(o)
    assert code == 2 and err["exit_code"] == 2 and "nope" in err["message"] and err["error"] != "refused"
    code, o, e = run_cli(capsys, ["anonymize", src, "--qi", "c0,c1", "--sa", "dis", "-m", "k=2", "--algorithm",
                                  "mondrian", "-o", tmp_path / "r.csv", "--json"])  # classes of 2 > 0.2
    err = json.loads(o)
    assert code == 3 and err == {**err, "error": "refused", "exit_code": 3} and err["adversary"]
    assert not (tmp_path / "r.csv").exists()


def test_a_repeated_sensitive_set_joins_its_values(tmp_path, capsys):
    src = tmp_path / "a.csv"
    pd.DataFrame({"age": range(20, 32), "dis": ["hiv", "flu", "cold", "none"] * 3}).to_csv(src, index=False)
    out = tmp_path / "r.csv"
    code, o, e = run_cli(capsys, ["anonymize", src, "--qi", "age:numeric", "--sa", "dis", "-m", "simple-l=2,set=s",
                                  "--sensitive", "s=hiv", "--sensitive", "s=flu", "--max-reid-risk", "1",
                                  "--algorithm", "set-anatomy", "-o", out])
    assert code == 0, e
    sets = json.loads(sidecar_path(out).read_text())["schema"]["sensitive_sets"]
    assert sorted(sets["s"]) == ["flu", "hiv"]


@pytest.mark.parametrize("spec", ["k=\u0663", "l=\u0662", "t=0.\u0662"])
def test_numbers_in_other_scripts_are_not_read_as_numbers(tmp_path, capsys, spec):
    src = tmp_path / "a.csv"
    SIX.to_csv(src, index=False)
    code, o, e = run_cli(capsys, ["anonymize", src, "--qi", "c0,c1", "--sa", "dis", "-m", spec, "-o",
                                  tmp_path / "r.csv"])
    assert code == 2 and e.count("\n") == 1 and not (tmp_path / "r.csv").exists(), e
