"""The sidecar's JSON Schema (docs/sidecar.schema.json, :mod:`openbook.release.sidecar_schema`):
the published file is the generated one, the sidecars ``openbook anonymize`` writes — the
default algorithm, Mondrian, Anatomy, full-domain, and one with every opt-in — validate
against it, and hand-broken ones do not."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from openbook.release.io import sidecar_path
from openbook.release.sidecar_schema import sidecar_schema

from cli_harness import run_cli

ROOT = Path(__file__).resolve().parents[2]
QI = ["--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name", "--quiet"]
RUNS = {
    "default": ["-m", "k=2"],
    "mondrian": ["-m", "k=3", "--algorithm", "mondrian"],
    "anatomy": ["-m", "l=2", "--algorithm", "anatomy", "--seed", "1", "--max-reid-risk", "1"],
    "full-domain": ["-m", "k=2", "--algorithm", "full-domain", "--levels", "1,1,1", "--max-suppression", "0.5"],
    "opted-in": ["-m", "k=3", "--algorithm", "mondrian", "--publish-suppressed-count", "--publish-identifier-names"],
}


def test_the_published_schema_is_the_generated_one():
    assert json.loads((ROOT / "docs" / "sidecar.schema.json").read_text()) == sidecar_schema()
    jsonschema.Draft202012Validator.check_schema(sidecar_schema())


def _sidecar(tmp_path, capsys, frame, args) -> dict:
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    rel = tmp_path / "rel.csv"
    code, o, e = run_cli(capsys, ["anonymize", data, *QI, *args, "-o", rel])
    assert code == 0, e
    return json.loads(sidecar_path(rel).read_text())


@pytest.mark.parametrize("name", RUNS)
def test_written_sidecars_validate(tmp_path, capsys, small_frame, name):
    meta = _sidecar(tmp_path, capsys, small_frame, RUNS[name])
    if name in ("mondrian", "anatomy", "full-domain"):
        assert meta["algorithm"]["algorithm"] == name
    if name == "opted-in":
        assert meta["publish"] == {"suppressed_count": True, "identifier_names": True} and "n_input" in meta
    jsonschema.validate(meta, sidecar_schema())


BREAKS = {
    "an unknown key": lambda m: m.update(n_rows=3),
    "a required key gone": lambda m: m.pop("n_published"),
    "a count below 0": lambda m: m.update(n_published=-1),
    "a count as a string": lambda m: m.update(n_groups="4"),
    "an unknown kind": lambda m: m.update(kind="synthetic"),
    "an unknown algorithm": lambda m: m["algorithm"].update(algorithm="magic"),
    "no QI": lambda m: m["schema"].update(qi=[]),
    "an unknown column kind": lambda m: m["schema"]["sa"].update(kind="text"),
    "a posterior above 1": lambda m: m["certificate"]["adversaries"][0].update(max_posterior=1.5),
    "an unknown verdict": lambda m: m["certificate"].update(verdict="maybe"),
    "a digest that is not SHA-256": lambda m: m["files"].update(sha256="abc"),
    "an unknown column type": lambda m: m["files"]["dtypes"].update(age="int32"),
    "an opt-in set false": lambda m: m.update(publish={"suppressed_count": False}),
    "a wrong format": lambda m: m.update(format="openbook-release/1"),
}


@pytest.mark.parametrize("how", BREAKS)
def test_a_broken_sidecar_does_not_validate(tmp_path, capsys, small_frame, how):
    meta = _sidecar(tmp_path, capsys, small_frame, RUNS["mondrian"])
    jsonschema.validate(meta, sidecar_schema())  # whole, it does
    BREAKS[how](meta)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(meta, sidecar_schema())


def test_the_suite_checks_every_sidecar_it_writes_against_the_schema(tmp_path, small_frame, monkeypatch):
    """The suite runs with ``OPENBOOK_CHECK_SIDECAR_SCHEMA=1`` (tests/conftest.py), so every
    sidecar any test writes — in process, in xdist workers and in CLI subprocesses — is checked
    against the schema before it is written: a schema the sidecar breaks stops the write,
    and nothing is written."""
    import os

    import openbook
    from openbook.release import sidecar_schema as module

    assert os.environ.get("OPENBOOK_CHECK_SIDECAR_SCHEMA") == "1"
    rel = openbook.anonymize(small_frame.drop(columns=["name"], errors="ignore"), qi=["age:numeric", "zip", "sex"],
                             sa="disease", model="k=2")
    strict = sidecar_schema()
    strict["required"] = [*strict["required"], "a_key_openbook_never_writes"]
    monkeypatch.setattr(module, "sidecar_schema", lambda: strict)
    with pytest.raises(jsonschema.ValidationError, match="a_key_openbook_never_writes"):
        rel.save(tmp_path / "r.csv")
    assert not any(tmp_path.iterdir())
