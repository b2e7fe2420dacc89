"""Release files as an attacker and a careless user meet them: overwrites refused (an input,
another release's files, a sidecar name, an unknown suffix, a directory) unless --force
replaces a release crash-safely; malformed or tampered sidecars refused in one line; the
t-closeness reference published only when declared."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from openbook.release.io import sa_table_path, sidecar_path

from cli_harness import run_cli, snapshot

QI = ["--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name"]
MODEL = ["-m", "k=3", "--algorithm", "mondrian", "--quiet"]


@pytest.fixture()
def data(tmp_path, small_frame):
    p = tmp_path / "people.csv"
    small_frame.to_csv(p, index=False)
    return p


@pytest.fixture()
def release(tmp_path, data, capsys):
    out = tmp_path / "rel.csv"
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, *MODEL, "-o", out])
    assert code == 0, e
    return out


@pytest.fixture()
def bucketized(tmp_path, data, capsys):
    out = tmp_path / "b.csv"
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, "-m", "l=2", "--algorithm", "anatomy", "--seed", "1",
                                  "--quiet", "-o", out])
    assert code == 0, e
    return out


# -- overwrites ----------------------------------------------------------------------------
def test_output_equal_to_the_input_is_refused_even_with_force(refused, tmp_path, data):
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", data], "input")
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", data, "--force"], "input")


@pytest.mark.parametrize("name", ["r.json", "r.txt", "r", "r.CSV.bak", "r.xlsx"])
def test_unknown_output_suffix_is_an_error(refused, tmp_path, data, name):
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", tmp_path / name], "unknown release format")


def test_output_a_directory(refused, tmp_path, data):
    (tmp_path / "d.csv").mkdir()
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", tmp_path / "d.csv"], "directory")


def test_existing_release_needs_force(refused, tmp_path, data, release):
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", release], "--force")


def test_force_replaces_a_release(capsys, tmp_path, data, release):
    before = sidecar_path(release).read_text()
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, "-m", "k=4", "--algorithm", "mondrian", "--quiet",
                                  "-o", release, "--force"])
    assert code == 0, e
    assert sidecar_path(release).read_text() != before
    assert run_cli(capsys, ["check", release, "--json"])[0] == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_csv_and_parquet_releases_do_not_share_a_sidecar(capsys, tmp_path, data, release):
    pq = tmp_path / "rel.parquet"
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, "-m", "k=4", "--algorithm", "mondrian", "--quiet",
                                  "-o", pq, "--json"])
    assert code == 0, e
    assert sidecar_path(release) != sidecar_path(pq) and sidecar_path(pq).is_file()
    a = json.loads(run_cli(capsys, ["check", release, "--json"])[1])
    b = json.loads(run_cli(capsys, ["check", pq, "--json"])[1])
    assert a["levels"]["k"] >= 3 and b["levels"]["k"] >= 4 and a["source"] != b["source"]


def test_another_releases_sa_table_is_never_overwritten(refused, tmp_path, data, bucketized):
    sa = sa_table_path(bucketized)
    refused(tmp_path, ["anonymize", data, *QI, *MODEL, "-o", sa, "--force"], "SA-table")


@pytest.mark.parametrize("target", ["data", "sidecar", "sa"])
def test_report_never_overwrites_a_release_file(refused, tmp_path, bucketized, target):
    f = {"data": bucketized, "sidecar": sidecar_path(bucketized), "sa": sa_table_path(bucketized)}[target]
    refused(tmp_path, ["report", bucketized, "-o", f, "--force"])


@pytest.mark.parametrize("target", ["data", "sidecar", "input"])
def test_posteriors_out_never_overwrites_a_release_or_input(refused, tmp_path, data, release, target):
    f = {"data": release, "sidecar": sidecar_path(release), "input": data}[target]
    refused(tmp_path, ["audit", release, "--posteriors-out", f, "--force"])


def test_outputs_into_a_missing_folder(refused, tmp_path, release):
    refused(tmp_path, ["audit", release, "--posteriors-out", tmp_path / "nope" / "p.csv"], "does not exist")
    refused(tmp_path, ["report", release, "-o", tmp_path / "nope" / "r.html"], "does not exist")


def test_report_over_an_existing_file_needs_force(capsys, refused, tmp_path, release):
    page = tmp_path / "page.html"
    page.write_text("old")
    refused(tmp_path, ["report", release, "-o", page], "--force")
    assert run_cli(capsys, ["report", release, "-o", page, "--force", "--quiet"])[0] == 0
    assert page.read_text().startswith("<!DOCTYPE html>")


# -- malformed and tampered sidecars ----------------------------------------------------------
def _edit(side, fn, *, redigest=False):
    meta = json.loads(side.read_text())
    meta = fn(meta)
    if redigest and isinstance(meta, dict):
        from openbook.release.io import _self_digest

        meta["digest"] = _self_digest(meta)
    side.write_text(json.dumps(meta))


CASES = {
    "a JSON list": (lambda m: [m], False, "list"),
    "no schema": (lambda m: {k: v for k, v in m.items() if k != "schema"}, True, "schema"),
    "another kind": (lambda m: {**m, "kind": "weird"}, True, "kind"),
    "data outside its folder": (lambda m: {**m, "files": {**m["files"], "data": "../x.csv"}}, True, "beside"),
    "absolute data path": (lambda m: {**m, "files": {**m["files"], "data": "/etc/passwd"}}, True, "beside"),
    "rows as a string": (lambda m: {**m, "files": {**m["files"], "rows": "12"}}, True, "integer"),
    "no digest": (lambda m: {k: v for k, v in m.items() if k != "digest"}, False, "digests"),
    "an edited count": (lambda m: {**m, "n_published": 11}, False, "edited"),
    "an edited count, digest recomputed": (lambda m: {**m, "n_published": 11, "n_input": 11}, True, "says 11"),
    "huge numbers": (lambda m: {**m, "n_suppressed": 10**30, "n_input": 10**30}, True, "rows lost"),
    "NaN rows": (lambda m: {**m, "files": {**m["files"], "rows": float("nan")}}, True, "integer"),
    "another file's digest": (lambda m: {**m, "files": {**m["files"], "sha256": "0" * 64}}, True, "digest"),
    "an older format": (lambda m: {k: v for k, v in m.items() if k not in ("format", "digest")}, False, "older"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["check", "audit", "report", "certify"])
def test_malformed_sidecar_is_refused(refused, tmp_path, release, case, command):
    fn, redigest, needle = CASES[case]
    _edit(sidecar_path(release), fn, redigest=redigest)
    extra = {"report": ["-o", tmp_path / "r.html"], "certify": [], "audit": [], "check": []}[command]
    refused(tmp_path, [command, release, *extra], needle)


def test_sidecar_that_is_not_json(refused, tmp_path, release):
    sidecar_path(release).write_text("{ not json")
    refused(tmp_path, ["check", release], "unreadable")


def test_registry_add_refuses_a_torn_release(refused, tmp_path, release):
    release.write_text(release.read_text().replace("flu", "FLU", 1))
    refused(tmp_path, ["registry", "add", tmp_path / "reg", release], "digest")


# -- the t-closeness reference ------------------------------------------------------------------
def test_t_reference_is_published_only_when_declared(capsys, tmp_path, data):
    args = ["anonymize", data, *QI, "-m", "t=0.6", "--algorithm", "full-domain", "--levels", "1,1,1",
            "--max-suppression", "0.5", "--quiet", "--json"]
    code, o, e = run_cli(capsys, [*args, "-o", tmp_path / "a.csv"])
    assert code == 0, e
    assert "sa_reference" not in json.loads(sidecar_path(tmp_path / "a.csv").read_text())
    code, o, e = run_cli(capsys, [*args, "--t-reference", "input", "-o", tmp_path / "b.csv"])
    assert code == 0, e
    ref = json.loads(sidecar_path(tmp_path / "b.csv").read_text())["sa_reference"]
    assert ref["declared_public"] is True and sum(ref["counts"]) == 12
    pd.DataFrame({"v": ["flu", "hiv", "cancer"], "n": [50, 30, 20]}).to_csv(tmp_path / "ref.csv", index=False)
    code, o, e = run_cli(capsys, [*args, "--t-reference", tmp_path / "ref.csv", "-o", tmp_path / "c.csv"])
    assert code == 0, e
    assert json.loads(sidecar_path(tmp_path / "c.csv").read_text())["sa_reference"]["counts"] == [20, 50, 30]


def test_snapshot_helper_sees_hidden_files(tmp_path):
    (tmp_path / ".x.part").write_text("1")
    assert ".x.part" in snapshot(tmp_path)
