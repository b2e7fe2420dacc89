"""The run configuration's reference (docs/config.md) and JSON Schema (docs/config.schema.json)
describe what is: the schema file is the one the code generates, every key is documented, and
the documented examples load and validate."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest

from openbook.config import KEYS, RunConfig, json_schema
from openbook.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "config.md"


def test_the_published_schema_is_the_generated_one():
    assert json.loads((ROOT / "docs" / "config.schema.json").read_text()) == json_schema()


def test_every_key_is_documented():
    text = DOC.read_text()
    for section, keys in KEYS.items():
        assert f"`[{section}]`" in text, section
        for key in keys:
            assert f"`{key}`" in text, (section, key)


def _toml_blocks(path: Path) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("doc", ["docs/config.md", "README.md"])
def test_the_documented_examples_load_and_validate(doc, tmp_path):
    blocks = _toml_blocks(ROOT / doc)
    assert blocks, f"{doc} shows a TOML example"
    for block in blocks:
        raw = tomllib.loads(block)
        jsonschema.validate(raw, json_schema())
        p = tmp_path / "run.toml"
        p.write_text(block)
        cfg = RunConfig.from_toml(p)
        assert cfg.model or cfg.input


@pytest.mark.parametrize("body, needle, schema_knows", [
    ('[model]\nspec = "l=3"\nmax_risk = 0.5\n', "[certify]", True),
    ('[certify]\nmax_rsk = 0.5\n', "max_risk", True),
    # a model's own keys are the model's to check: the schema cannot list them
    ('[model]\nmodel = "distinct-l-diversity"\nl = 3\nmax_riks = 0.5\n', "[certify] max_risk", False),
    ('[model]\nspec = "l=3"\nc = 2\n', "spec", True),
    ('[hierarchies]\nzip = 5\n', "hierarchies", True),
    ('[output]\nsign_key = 5\n', "sign_key", True),
])
def test_misplaced_and_misspelled_keys_are_refused_naming_the_fix(tmp_path, body, needle, schema_knows):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(ParameterError) as exc:
        RunConfig.from_toml(p)
    assert needle in str(exc.value) and "\n" not in str(exc.value)
    if schema_knows:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(tomllib.loads(body), json_schema())


def test_every_flag_of_the_flag_table_is_an_anonymize_option_over_a_known_key():
    """``config.FLAGS`` (which flag overrides which key): each destination is an option of
    ``openbook anonymize``, each key one the file may hold (a sectioned key of ``KEYS``, or the
    anonymizer's section, whose keys the anonymizer checks by name)."""
    import argparse

    from openbook.cli import build_parser
    from openbook.config import FLAGS, INPUT_FLAGS, KEYS

    parser = build_parser("anonymize")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    dests = {a.dest for a in sub.choices["anonymize"]._actions}
    assert set(FLAGS) <= dests, set(FLAGS) - dests
    for dest, (section, key) in FLAGS.items():
        assert section == "algorithm" or key in KEYS[section], (dest, section, key)
    assert set(INPUT_FLAGS) <= set(FLAGS)


def test_a_flag_given_overrides_the_file_and_a_flag_not_given_keeps_it(tmp_path):
    import argparse

    from openbook.config import RunConfig

    toml = tmp_path / "run.toml"
    toml.write_text('[schema]\nsa = "disease"\nqi = ["age"]\n[algorithm]\nname = "mondrian"\n')
    cfg = RunConfig.from_toml(toml)
    cfg.apply_flags(argparse.Namespace(sa="illness", qi=None, algorithm=None), "sa", "qi", "algorithm")
    assert cfg.schema == {"sa": "illness", "qi": ["age"]} and cfg.algorithm == {"name": "mondrian"}


def test_one_reading_of_hierarchy_options(tmp_path):
    """``with_hierarchies``: a path read as the column's kind (numeric leaves as numbers),
    ``auto`` removing a column's hierarchy, an object kept, a column outside the schema read
    as categorical — what the config file, ``--hierarchy``, ``--original`` and the API share."""
    from openbook.data.schema import Schema
    from openbook.hierarchy.loading import with_hierarchies

    csv = tmp_path / "age.csv"
    csv.write_text("20;*\n30;*\n")
    schema = Schema.build(qi=["age:numeric", "zip"], sa="disease")
    marker = object()
    out = with_hierarchies({"zip": "old", "age": "old"}, {"age": str(csv), "zip": "auto", "other": marker}, schema)
    assert set(out) == {"age", "other"} and out["other"] is marker
    assert sorted(out["age"].leaves) == [20, 30]
