"""One typed run (:class:`openbook.run.RunSpec`) and one seam (:func:`openbook.engines.publish`):
the spec is frozen and checked when it is made — before any data is read —, the three front
doors (a TOML file, the API's keywords, an encoded table) describe the same run and publish
the same release, and no engine writes a release its certificate refuses, whoever asks."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from openbook.config import RunConfig
from openbook.engines import LocalEngine, SparkEngine, publish
from openbook.errors import ParameterError, RiskError
from openbook.run import Certification, Output, RunSpec, Source


def _frame(n=240, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.choice(list("abcd"), n),
                         "disease": rng.choice(["flu", "cold", "hiv", "none"], n)})


def _toml(tmp_path: Path, body: str, frame: pd.DataFrame) -> RunConfig:
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "run.toml").write_text('[input]\npath = "people.csv"\n[schema]\nqi = ["age:numeric", "zip"]\n'
                                       'sa = "disease"\n' + body)
    return RunConfig.from_toml(tmp_path / "run.toml")


def test_a_spec_is_frozen_and_its_mappings_read_only(tmp_path):
    spec = RunSpec.from_config(_toml(tmp_path, '[model]\nspec = "l=2"\n[algorithm]\nname = "anatomy"\nseed = 1\n',
                                     _frame()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.algorithm = "gg"  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.params["seed"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        spec.source.schema["sa"] = "zip"  # type: ignore[index, union-attr]
    assert spec.model.describe().startswith("distinct")  # the spec string parsed when the spec is made
    assert spec.seed == 1 and spec.output is None and spec.certify.enabled


@pytest.mark.parametrize("fields, needle", [
    ({"skew": "weird"}, "run: skew must be one of"),
    ({"kind": "rows"}, "run: kind must be one of"),
    ({"batch_rows": 0}, "run: batch_rows must be an integer >= 1"),
    ({"certify": {"max_risk": 0.0}}, "certify: max_risk must be in (0, 1]"),
    ({"certify": {"max_reid_risk": 1.5}}, "certify: max_reid_risk must be in (0, 1]"),
    ({"certify": {"worlds": 0}}, "certify: worlds must be an integer >= 1"),
    ({"algorithm": "no-such-algorithm"}, "no-such-algorithm"),
    ({"model": "l=0"}, "l"),
    ({"model": {}}, "no privacy model"),
    ({"output": {"path": ""}}, "output: path must be a non-empty name"),
])
def test_a_bad_choice_fails_when_the_spec_is_made_before_any_data_is_read(fields, needle):
    """The source names a file that does not exist: the spec's own checks come first, in the
    one message form of :mod:`openbook.params`."""
    kw = {"model": "l=2", "source": Source(input={"path": "no/such/file.csv"}, schema={"qi": ["a"], "sa": "b"})}
    with pytest.raises(ParameterError) as exc:
        for k, v in fields.items():
            kw[k] = Certification(**v) if k == "certify" else Output(**v) if k == "output" else v
        RunSpec(**kw)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_a_spec_reads_exactly_one_table():
    with pytest.raises(ParameterError, match="one table"):
        RunSpec(model="l=2")
    with pytest.raises(ParameterError, match="one table"):
        RunSpec(model="l=2", source=Source(), table=object())


def test_the_three_front_doors_publish_the_same_release(tmp_path):
    """The TOML file, the API's keywords and an encoded table: one run, the same release
    (data, SA table) and the same certificate."""
    df = _frame()
    cfg = _toml(tmp_path, '[model]\nspec = "l=2"\n[algorithm]\nname = "anatomy"\nseed = 5\n'
                          '[certify]\nmax_reid_risk = 1.0\n', df)
    a = publish(RunSpec.from_config(cfg))
    b = publish(RunSpec.from_keywords(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="anatomy",
                                      seed=5, max_reid_risk=1.0))
    c = publish(RunSpec.for_table(a.table, "l=2", "anatomy", {"seed": 5},
                                  certify=Certification(max_reid_risk=1.0)))
    for other in (b, c):
        pd.testing.assert_frame_equal(a.release.data, other.release.data)
        pd.testing.assert_frame_equal(a.release.sa_table, other.release.sa_table)
        assert other.certificate.to_dict()["verdict"] == a.certificate.to_dict()["verdict"] == "pass"
        assert other.certificate.lines == a.certificate.lines
    assert a.files == [] and a.record["n_published"] == len(df)


def test_the_skew_step_from_the_config_file(tmp_path):
    """``[algorithm] skew = ...`` (or ``--skew``) wraps the algorithm in the skew step; the
    step's key is not passed on to the algorithm."""
    df = _frame()
    df.loc[:150, "disease"] = "flu"  # flu in more than half the rows: not 2-eligible
    cfg = _toml(tmp_path, '[model]\nspec = "l=2"\n[algorithm]\nname = "anatomy"\nseed = 2\nskew = "safe-d"\n'
                          '[certify]\nenabled = false\n', df)
    spec = RunSpec.from_config(cfg)
    assert spec.skew == "safe-d" and "skew" not in spec.params
    done = publish(spec)
    assert done.release.meta["skew"]["method"] == "safe-d" and done.certificate is None
    assert done.release.n_published + done.release.n_suppressed == len(df)


def test_a_refused_release_is_never_written(tmp_path):
    """Anatomy publishes exact QIs: the identity line refuses it. Enforced, ``publish``
    raises; not enforced (the demo, the studio), the release comes back with its certificate
    — and in neither case is a file written."""
    df = _frame()
    out = tmp_path / "r.csv"
    spec = RunSpec.from_keywords(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", algorithm="anatomy",
                                 seed=1)
    spec = dataclasses.replace(spec, output=Output(str(out)))
    with pytest.raises(RiskError):
        publish(spec)
    assert not out.exists() and os.listdir(tmp_path) == []
    done = publish(spec.with_certify(enforce=False))
    assert done.certificate.verdict == "fail" and done.files == []
    assert not out.exists() and os.listdir(tmp_path) == []
    done = publish(spec.with_certify(max_reid_risk=1.0))  # exact QIs accepted explicitly: written
    assert done.certificate.verdict == "pass" and done.files[0] == out and out.exists()
    assert all(f.exists() for f in done.files) and any(f.name.endswith(".json") for f in done.files)


def test_the_output_is_checked_before_any_work(tmp_path):
    """An output over the run's own input is refused by the engine's check, before the input
    is read (the input here is not even a table)."""
    src = tmp_path / "in.csv"
    src.write_text("not,a\ntable")
    spec = RunSpec(model="l=2", source=Source(input={"path": str(src)}, schema={"qi": ["a"], "sa": "b"}),
                   output=Output(str(src)))
    with pytest.raises(ParameterError, match="input"):
        LocalEngine().check(spec)
    assert src.read_text() == "not,a\ntable"


@pytest.mark.parametrize("fields, flag", [
    ({"skew": "r-suppression"}, "--skew"),
    ({"kind": "generalized"}, "--kind"),
    ({"batch_rows": 10}, "--batch-rows"),
    ({"certify": Certification(against_registry="reg")}, "--against-registry"),
    ({"output": Output("s.parquet", sign_key="k")}, "--sign-key"),
])
def test_the_spark_engine_refuses_what_it_does_not_take_before_any_work(fields, flag):
    """Checked without starting Spark (no session, no JVM): one line naming the option."""
    kw = {"model": "k=5", "algorithm": "mondrian", "output": Output("s.parquet"),
          "source": Source(input={"dataset": "synthetic"})} | fields
    with pytest.raises(ParameterError) as exc:
        SparkEngine().check(RunSpec(**kw))
    assert f"--engine spark does not take {flag}" in str(exc.value)


def test_the_spark_engine_runs_its_algorithms_only():
    spec = RunSpec(model="l=2", source=Source(input={"dataset": "synthetic"}), output=Output("s.parquet"))
    with pytest.raises(ParameterError, match="--engine spark runs --algorithm"):
        SparkEngine().check(spec)


def test_an_unknown_engine_is_refused_by_name():
    spec = RunSpec(model="l=2", source=Source(input={"dataset": "synthetic"}))
    with pytest.raises(ParameterError, match="engine 'gpu'"):
        publish(spec, "gpu")


def test_the_engines_measure_a_raw_table_alike_and_spark_refuses_before_starting(tmp_path):
    """``check``'s figures through the engine interface: the local engine's equal the levels
    of the encoded table; the Spark engine refuses what it does not take before any session
    starts (no JVM here: a refusal that started Spark would fail differently)."""
    from openbook.data.grouping import group_ids
    from openbook.models.levels import compute_levels

    df = _frame()
    cfg = _toml(tmp_path, "", df)
    source = Source(input=cfg.input, schema=cfg.schema)
    got = LocalEngine().measure(source, c=2.0)
    table = LocalEngine().read(RunSpec(model="k=2", source=source))
    cls, n = group_ids(table.qi_codes)
    want = compute_levels(table.group_sa_counts(cls, n), table.sa_domain, c=2.0)
    assert got["levels"] == want and got["kind"] == "raw table" and got["identity"]["records"] == len(df)
    with pytest.raises(ParameterError, match="--batch-rows"):
        SparkEngine().measure(source, batch_rows=10)
    with pytest.raises(ParameterError, match="--population"):
        SparkEngine().measure(source, population="pop.csv")


def test_the_spark_engine_audits_with_the_linkage_adversary_only():
    from openbook.attacks.registry import make_adversary

    with pytest.raises(ParameterError, match="runs the linkage adversary"):
        SparkEngine().audit(make_adversary("baseline"), None, None, [])


def test_the_spark_engine_checks_raw_tables_only(tmp_path):
    """A release (its sidecar, or a Spark release folder) given to ``check --engine spark`` is
    refused by name before any session starts."""
    side = tmp_path / "r.csv.json"
    side.write_text("{}")
    folder = tmp_path / "s.parquet"
    folder.mkdir()
    (tmp_path / "s.parquet.json").write_text("{}")
    for path in (side, folder):
        with pytest.raises(ParameterError, match="check --engine spark reads raw tables"):
            SparkEngine().measure(Source(input={"path": str(path)}))
