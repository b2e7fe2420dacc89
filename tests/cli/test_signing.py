"""Signed releases (issue 26, "Integrity"): the sidecar's own digest can be recomputed by
anyone who edits it, so a publisher signs the sidecar — which binds every file by its digest —
with an Ed25519 key; a reader with the public key refuses any edit in one line, and without one
is told plainly that nothing was verified. ``certify`` recomputes every figure from the data."""

from __future__ import annotations

import json
import os
import stat

import pandas as pd
import pytest

from openbook.release.io import sidecar_path
from openbook.release.sidecar import self_digest

from cli_harness import run_cli, snapshot

QI = ["--qi", "age:numeric,zip", "--sa", "disease"]


@pytest.fixture()
def signed(tmp_path, capsys):
    df = pd.DataFrame({"age": range(20, 80), "zip": ["a", "b", "c"] * 20,
                       "disease": ["flu", "hiv", "cold", "none", "ulcer", "cancer"] * 10})
    src = tmp_path / "people.csv"
    df.to_csv(src, index=False)
    code, out, err = run_cli(capsys, ["key", "new", tmp_path / "pub", "--json"])
    assert code == 0, err
    key = json.loads(out)
    rel = tmp_path / "r.csv"
    code, out, err = run_cli(capsys, ["anonymize", src, *QI, "-m", "l=3", "--seed", "1", "--sign-key",
                                      tmp_path / "pub", "-o", rel, "--quiet"])
    assert code == 0, err
    return {"src": src, "rel": rel, "key": tmp_path / "pub", "pub": tmp_path / "pub.pub", "fp": key["fingerprint"],
            "tmp": tmp_path}


def _edit(path, fn):
    side = json.loads(sidecar_path(path).read_text())
    fn(side)
    side["digest"] = self_digest(side)  # what an editor can always do
    sidecar_path(path).write_text(json.dumps(side))


def test_the_private_key_is_readable_by_its_owner_only_and_never_overwritten(signed, capsys):
    mode = stat.S_IMODE(os.stat(signed["key"]).st_mode)
    assert mode == 0o600
    before = snapshot(signed["tmp"])
    code, out, err = run_cli(capsys, ["key", "new", signed["key"]])
    assert code == 2 and "--force" in err and snapshot(signed["tmp"]) == before


def test_a_signed_release_verifies_and_says_so(signed, capsys):
    code, out, err = run_cli(capsys, ["check", signed["rel"], "--public-key", signed["pub"], "--json"])
    assert code == 0, err
    assert json.loads(out)["signature"] == f"signed and verified (key {signed['fp']})"
    code, out, err = run_cli(capsys, ["check", signed["rel"], "--json"])  # no key: nothing verified, said plainly
    assert code == 0 and "NOT verified" in json.loads(out)["signature"]


EDITS = {
    "algorithm changed": lambda s: s["algorithm"].update(algorithm="anatomy"),
    "a finding's max posterior lowered": lambda s: s["certificate"]["adversaries"][1].update(max_posterior=0.01),
    "the target raised": lambda s: s["certificate"].update(target=1.0),
    "the model changed": lambda s: s.update(model={"model": "k-anonymity", "k": 2}),
    "a line's words changed": lambda s: s["certificate"]["lines"][0].update(text="fine"),
    "the verdict changed": lambda s: s["certificate"].update(verdict="fail"),
    "the data file's digest changed": lambda s: s["files"].update(sha256="0" * 64),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_sidecar_fails_with_the_public_key(signed, capsys, edit):
    _edit(signed["rel"], EDITS[edit])
    for cmd in (["check"], ["certify", "--original", str(signed["src"])], ["audit"]):
        code, out, err = run_cli(capsys, [cmd[0], signed["rel"], *cmd[1:], "--public-key", signed["pub"]])
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (edit, cmd, err)
        assert "signature does not verify" in err or "digest" in err, err


def test_an_edited_data_file_fails_with_the_public_key(signed, capsys):
    data = signed["rel"].read_text().replace("Private", "PRIVATE", 1)
    lines = signed["rel"].read_text().splitlines(keepends=True)
    signed["rel"].write_text("".join([lines[0], *lines[2:], lines[1]]))  # rows reordered
    from openbook.release.sidecar import sha256_file

    _edit(signed["rel"], lambda s: s["files"].update(sha256=sha256_file(signed["rel"])))
    code, out, err = run_cli(capsys, ["check", signed["rel"], "--public-key", signed["pub"]])
    assert code == 2 and "signature does not verify" in err, err
    assert data  # (the read above is the file as written)


def test_an_unsigned_release_is_refused_with_a_public_key(signed, capsys, tmp_path):
    out_path = tmp_path / "u.csv"
    code, out, err = run_cli(capsys, ["anonymize", signed["src"], *QI, "-m", "l=3", "--seed", "1", "-o", out_path,
                                      "--quiet"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["check", out_path, "--public-key", signed["pub"]])
    assert code == 2 and "unsigned" in err
    code, out, err = run_cli(capsys, ["check", out_path, "--json"])
    assert code == 0 and json.loads(out)["signature"].startswith("UNSIGNED")


def test_another_key_is_refused(signed, capsys):
    code, out, err = run_cli(capsys, ["key", "new", signed["tmp"] / "other", "--quiet"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["check", signed["rel"], "--public-key", signed["tmp"] / "other.pub"])
    assert code == 2 and f"signed by key {signed['fp']}" in err


def test_certify_recomputes_its_figures_from_the_data(signed, capsys):
    """An edited sidecar (digest recomputed, no key given) does not change what certify finds."""
    _edit(signed["rel"], EDITS["a finding's max posterior lowered"])
    code, out, err = run_cli(capsys, ["certify", signed["rel"], "--original", signed["src"], "--json", "--quiet"])
    assert code == 0, err
    cert = json.loads(out)
    replay = next(a for a in cert["adversaries"] if a["adversary"] == "replay")
    assert replay["max_posterior"] > 0.2 and "NOT verified" in cert["signature"]


def test_bad_keys_are_refused_in_one_line(signed, capsys, tmp_path):
    (tmp_path / "junk").write_text("not a key")
    for argv in (["anonymize", signed["src"], *QI, "-m", "l=3", "--sign-key", tmp_path / "junk", "-o",
                  tmp_path / "o.csv"],
                 ["anonymize", signed["src"], *QI, "-m", "l=3", "--sign-key", tmp_path / "none", "-o",
                  tmp_path / "o.csv"],
                 ["check", signed["rel"], "--public-key", tmp_path / "junk"],
                 ["check", signed["rel"], "--public-key", signed["key"]]):  # a private key given as public
        before = snapshot(tmp_path)
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
        assert snapshot(tmp_path) == before
