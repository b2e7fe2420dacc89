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
                                  "--max-reid-risk", "1", "--quiet", "-o", out])
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


def _finding(**kw):
    return {"adversary": "replay", "title": "", "paper": "", "disclosure": "attribute", "applies": True,
            "reason": "", "ran": False, "target": 0.5, "max_posterior": None, "n_above": 0, "n_unresolved": 0,
            "method": "", "params": {}, "error": "could not run", **kw}


def _with(m, key, value):
    """``m`` with ``key`` (a dotted path) set to ``value``."""
    out = json.loads(json.dumps(m))
    *head, last = key.split(".")
    d = out
    for k in head:
        d = d[int(k)] if isinstance(d, list) else d[k]
    if isinstance(d, list):
        d[int(last)] = value
    else:
        d[last] = value
    return out


#: case -> (edit of the sidecar, recompute its digest, a word of the one error line)
CASES = {
    "a JSON list": (lambda m: [m], False, "list"),
    "no schema": (lambda m: {k: v for k, v in m.items() if k != "schema"}, True, "schema"),
    "another kind": (lambda m: {**m, "kind": "weird"}, True, "kind"),
    "data outside its folder": (lambda m: {**m, "files": {**m["files"], "data": "../x.csv"}}, True, "beside"),
    "absolute data path": (lambda m: {**m, "files": {**m["files"], "data": "/etc/passwd"}}, True, "beside"),
    "rows as a string": (lambda m: {**m, "files": {**m["files"], "rows": "12"}}, True, "integer"),
    "no digest": (lambda m: {k: v for k, v in m.items() if k != "digest"}, False, "digests"),
    "an edited count": (lambda m: {**m, "n_published": 11}, False, "edited"),
    "an edited count, digest recomputed": (lambda m: {**m, "n_published": 11}, True, "says 11"),
    "huge numbers": (lambda m: {**m, "n_suppressed": 10**30, "n_input": 10**30}, True, "rows lost"),
    "NaN rows": (lambda m: {**m, "files": {**m["files"], "rows": float("nan")}}, True, "integer"),
    "another file's digest": (lambda m: {**m, "files": {**m["files"], "sha256": "0" * 64}}, True, "digest"),
    "an older format": (lambda m: {k: v for k, v in m.items() if k not in ("format", "digest")}, False, "older"),
    # every key validated on read (digest recomputed: only the content can refuse it)
    "garbage model": (lambda m: {**m, "model": "x"}, True, "model"),
    "unknown model": (lambda m: {**m, "model": {"model": "zzz", "k": 3}}, True, "model"),
    "another model, check kept": (lambda m: {**m, "model": {"model": "k-anonymity", "k": 50}}, True, "check"),
    "garbage algorithm": (lambda m: {**m, "algorithm": 5}, True, "algorithm"),
    "unknown algorithm": (lambda m: _with(m, "algorithm.algorithm", "nope"), True, "algorithm"),
    "garbage algorithm params": (lambda m: _with(m, "algorithm.params", [1]), True, "params"),
    "garbage certificate": (lambda m: {**m, "certificate": [1]}, True, "certificate"),
    "unknown verdict": (lambda m: _with(m, "certificate.verdict", "great"), True, "verdict"),
    "a forged pass": (lambda m: {**m, "certificate": {"verdict": "pass", "target": 0.5, "adversaries": [_finding()]}},
                      True, "verdict"),
    "a finding's posterior above 1": (lambda m: {**m, "certificate": {
        "verdict": "fail", "target": 0.5, "adversaries": [_finding(ran=True, max_posterior=3.0, error=None)]}},
        True, "max_posterior"),
    "garbage check": (lambda m: {**m, "check": "yes"}, True, "check"),
    "an inconsistent check": (lambda m: _with(m, "check.failing_groups", 2), True, "check"),
    "a check the data contradicts": (lambda m: _with(m, "check.n_groups", m["check"]["n_groups"] + 1), True,
                                     "check"),
    "garbage levels": (lambda m: {**m, "levels": "x"}, True, "levels"),
    "a negative level": (lambda m: {**m, "levels": [-1, 0, 0]}, True, "levels"),
    "levels of the wrong length": (lambda m: {**m, "levels": [1]}, True, "levels"),
    "garbage n_groups": (lambda m: {**m, "n_groups": "many"}, True, "n_groups"),
    "impossible n_groups": (lambda m: {**m, "n_groups": 10**6}, True, "n_groups"),
    "n_groups below the classes": (lambda m: {**m, "n_groups": 1}, True, "n_groups"),
    "an empty qi list": (lambda m: _with(m, "schema.qi", []), True, "schema.qi"),
    "a qi that is a number": (lambda m: _with(m, "schema.qi.0", 5), True, "schema.qi"),
    "a qi of an unknown kind": (lambda m: _with(m, "schema.qi.0.kind", "weird"), True, "kind"),
    "an unknown key": (lambda m: {**m, "extra": 1}, True, "extra"),
    "a garbage reference": (lambda m: {**m, "sa_reference": {"values": ["flu"], "counts": [-1]}}, True,
                            "sa_reference"),
    "an unknown skew method": (lambda m: {**m, "skew": {"method": "x", "l": 2}}, True, "skew"),
    "garbage opt-in": (lambda m: {**m, "publish": {"suppressed_count": "yes"}}, True, "publish"),
    "counts without the opt-in": (lambda m: {**m, "n_input": 12, "n_suppressed": 0}, True, "publish"),
    "a version that is not a string": (lambda m: {**m, "openbook_version": 3}, True, "openbook_version"),
    "an unknown column type": (lambda m: _with(m, "files.dtypes.sex", "complex"), True, "dtypes"),
    "a digest that is not hex": (lambda m: _with(m, "files.sha256", "xyz"), True, "SHA-256"),
}
COMMANDS = ("check", "audit", "report", "certify")


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", COMMANDS)
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
            "--max-suppression", "0.5", "--max-reid-risk", "1", "--quiet", "--json"]
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


# -- releases in a database --------------------------------------------------------------------
def _tamper_db(path, sql):
    if path.suffix == ".duckdb":
        import duckdb

        con = duckdb.connect(str(path))
    else:
        import sqlite3

        con = sqlite3.connect(str(path))
    try:
        con.execute(sql)
        con.commit()
    finally:
        con.close()


@pytest.mark.parametrize("suffix", [".sqlite", ".duckdb"])
def test_a_release_database_is_read_as_a_release_and_tampering_is_refused(capsys, refused, tmp_path, data,
                                                                          suffix):
    if suffix == ".duckdb":
        pytest.importorskip("duckdb")
    db = tmp_path / f"r{suffix}"
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, *MODEL, "-o", db])
    assert code == 0, e
    code, o, e = run_cli(capsys, ["check", db, "--json"])
    assert code == 0, e
    got = json.loads(o)
    assert got["kind"] == "generalized release" and got["declared_model"]["k"] == 3 and got["levels"]["k"] >= 3
    # one published value edited in place: every reader refuses the database
    _tamper_db(db, "UPDATE release_data SET disease = 'tampered' WHERE disease = 'flu'")
    for command in ("check", "audit", "certify"):
        refused(tmp_path, [command, db], "altered")
    refused(tmp_path, ["report", db, "-o", tmp_path / "r.html"], "altered")
    refused(tmp_path, ["registry", "add", tmp_path / "reg", db], "altered")


def test_a_release_database_whose_record_was_edited_is_refused(capsys, refused, tmp_path, data):
    db = tmp_path / "r.sqlite"
    assert run_cli(capsys, ["anonymize", data, *QI, *MODEL, "-o", db])[0] == 0
    _tamper_db(db, "UPDATE release_meta SET meta = replace(meta, '\"k\": 3', '\"k\": 2')")
    refused(tmp_path, ["check", db], "edited")


# -- the registry's linkage audit ----------------------------------------------------------------
def _linked_pair(tmp_path):
    """Two hand-made releases of the same people whose linkage leaves someone one value
    (paper 002 §2.3; tests/unit/release/test_registry.py)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "release"))
    from test_registry import R1, R2, bucketized

    from openbook.release import save_release

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    save_release(bucketized(R1), a)
    save_release(bucketized(R2), b)
    return a, b


@pytest.mark.parametrize("store", ["reg", "reg.sqlite", "reg.duckdb"])
def test_registry_add_refuses_a_linkage_failure_unless_no_audit(capsys, tmp_path, store):
    if store.endswith("duckdb"):
        pytest.importorskip("duckdb")
    a, b = _linked_pair(tmp_path)
    reg = tmp_path / store
    code, o, e = run_cli(capsys, ["registry", "add", reg, a, "--name", "hospital-a"])
    assert code == 0, e
    before = snapshot(tmp_path)
    code, o, e = run_cli(capsys, ["registry", "add", reg, b, "--name", "hospital-b"])
    lines = [ln for ln in e.strip().splitlines() if ln.strip()]
    assert code == 3 and len(lines) == 1 and "Traceback" not in e, e
    assert "hospital-a" in lines[0] and "--no-audit" in lines[0]
    assert snapshot(tmp_path) == before  # nothing recorded
    code, o, e = run_cli(capsys, ["registry", "add", reg, b, "--name", "hospital-b", "--no-audit", "--json"])
    assert code == 0, e
    assert json.loads(o)["linkage_audit"].startswith("skipped")
    code, o, e = run_cli(capsys, ["registry", "list", reg, "--json"])
    assert code == 0 and [r["name"] for r in json.loads(o)["releases"]] == ["hospital-a", "hospital-b"]


# -- stale temporaries -------------------------------------------------------------------------------
def test_stale_temporaries_of_a_killed_write_are_swept_by_the_next_command(capsys, tmp_path, data):
    """A write killed on a fresh path before its commit leaves only temporaries (no sidecar,
    no journal); the next openbook command on that path removes them — and only them."""
    out = tmp_path / "out.csv"
    stale = [tmp_path / ".out.csv.0123456789ab.part", tmp_path / ".out.csv.json.ba9876543210.part",
             tmp_path / ".out.sa.csv.00aa11bb22cc.part"]
    foreign = [tmp_path / ".out.csv.mine.part", tmp_path / ".out.csv.0123456789ab.part.keep",
               tmp_path / ".other.csv.0123456789ab.part"]
    for f in stale + foreign:
        f.write_text("partial")
    code, o, e = run_cli(capsys, ["check", out])
    assert code == 2 and "no such file" in e
    assert not any(f.exists() for f in stale) and all(f.exists() for f in foreign)
    for f in stale:
        f.write_text("partial")
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, *MODEL, "-o", out])
    assert code == 0, e
    assert not any(f.exists() for f in stale) and all(f.exists() for f in foreign)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".commit")]


# -- what the sidecar publishes: the counts and identifier names only by opt-in ------------------
def test_counts_and_identifier_names_are_published_only_when_asked(capsys, tmp_path, data):
    args = ["anonymize", data, *QI, "-m", "k=2", "--levels", "1,1,1", "--max-suppression", "0.5",
            "--algorithm", "full-domain", "--quiet", "--json"]
    code, o, e = run_cli(capsys, [*args, "-o", tmp_path / "a.csv"])
    assert code == 0, e
    told = json.loads(o)  # the publisher is told the counts on the terminal
    assert told["n_input"] == 12 and told["n_suppressed"] == 4 and told["n_published"] == 8
    side = sidecar_path(tmp_path / "a.csv").read_text()
    meta = json.loads(side)
    assert "n_input" not in meta and "n_suppressed" not in meta and "publish" not in meta
    assert "identifiers" not in meta["schema"] and '"name"' not in side.replace('"name": "', "")
    code, o, e = run_cli(capsys, [*args, "--publish-suppressed-count", "--publish-identifier-names",
                                  "-o", tmp_path / "b.csv"])
    assert code == 0, e
    meta = json.loads(sidecar_path(tmp_path / "b.csv").read_text())
    assert (meta["n_input"], meta["n_published"], meta["n_suppressed"]) == (12, 8, 4)
    assert meta["schema"]["identifiers"] == ["name"]
    assert meta["publish"] == {"suppressed_count": True, "identifier_names": True}
    assert run_cli(capsys, ["check", tmp_path / "b.csv"])[0] == 0
    # the same choice from the TOML file's [output] section
    cfg = tmp_path / "run.toml"
    cfg.write_text(f'[input]\npath = "{data}"\n[schema]\nqi = ["age:numeric", "zip", "sex"]\nsa = "disease"\n'
                   'identifiers = ["name"]\n[model]\nspec = "k=2"\n[algorithm]\nname = "full-domain"\n'
                   'levels = [1, 1, 1]\nmax_suppression = 0.5\n[output]\npath = "c.csv"\n'
                   "publish_suppressed_count = true\n")
    code, o, e = run_cli(capsys, ["anonymize", "--config", cfg, "--quiet"])
    assert code == 0, e
    meta = json.loads(sidecar_path(tmp_path / "c.csv").read_text())
    assert meta["n_input"] == 12 and meta["publish"] == {"suppressed_count": True}
    assert "identifiers" not in meta["schema"]
