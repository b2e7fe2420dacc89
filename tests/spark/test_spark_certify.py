"""The certificate on Spark (issue 26): computed on the cluster, it is the local engine's
certificate of the same partition — both lines, every adversary's figures, the verdict and
its words (seconds aside) — whenever the Spark replay resolves everyone: several fragments,
strict and relaxed, sampled replay units (the local run's seeds), classes spread over
fragments and refused planned cuts replayed whole on one executor. Where the Spark replay
cannot resolve people (a refused planned cut, or a class spread over fragments, above
``2 x --spark-max-fragment`` rows) they are unresolved and the verdict fails, saying why;
full-domain search fails as on the local engine (no adversary knows the search), with its
baseline and identity figures the local ones."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.certificate import certify
from openbook.data.table import encode
from openbook.models.registry import make_model
from openbook.spark.certify import ReleaseView, figures_for, full_domain_certificate, mondrian_certificate, targets
from openbook.spark.encoding import from_encoded
from openbook.spark.mondrian import spark_mondrian, verify

from .conftest import frame_schema, random_frame

PARAMS = {"reidentification": {"threshold": 0.2}}


def _strip(cert) -> dict:
    d = json.loads(json.dumps(cert.to_dict(), default=str))
    d.pop("seconds")
    for f in d["adversaries"]:
        f.pop("seconds")
    return d


def numeric_frame(seed: int, n: int, *, split: bool = False) -> pd.DataFrame:
    """Three numeric QIs (no label of one fragment can be another's) and an SA that depends on
    q0 (with ``split``, only two values below its middle: an ℓ = 3 cut there is refused)."""
    rng = np.random.default_rng(seed)
    q0 = rng.integers(0, 60, n)
    s = np.where(q0 < 30, rng.integers(0, 2, n), 2 + rng.integers(0, 2, n))
    noise = rng.random(n) < (0.3 if split else 0.15)
    s = np.where(noise & ((q0 >= 30) if split else True), rng.integers(0, 4, n), s)
    return pd.DataFrame({"q0": q0 * 2 + 1, "q1": rng.integers(0, 20, n) * 3, "q2": rng.integers(0, 20, n) + 5,
                         "sa": np.array([f"s{x}" for x in s], dtype=object)})


def _both(spark, frame, spec, strict, max_fragment, **kw):
    table = encode(frame, frame_schema(frame))
    model = make_model(spec)
    local = certify(make_algorithm("mondrian", model=model, strict=strict).anonymize(table), original=table,
                    params=PARAMS, **kw)
    res = spark_mondrian(from_encoded(spark, table), model, strict=strict, max_fragment=max_fragment)
    tg = targets(ReleaseView({"model": model.to_dict()}, [], ""), max_risk=kw.get("max_risk"),
                 max_reid_risk=kw.get("max_reid_risk"))
    check = verify(res, figures=figures_for(tg))
    got = mondrian_certificate(res, check, tg, params=PARAMS, max_reid_risk=kw.get("max_reid_risk"))
    return local, got, res, check


@pytest.mark.parametrize("seed, n, spec, strict, max_fragment", [
    (1, 200, "k=3", True, 10**6),          # one fragment: the whole table on one executor
    (3, 300, "k=3", True, 60),             # several fragments
    (5, 300, "t=0.4", True, 10**6),        # t-closeness: the distance line
    (7, 800, "entropy-l=1.5", True, 200),
    (4, 400, "l=2", True, 150),            # classes spread over fragments: replayed whole, merged
    (8, 500, "alpha=0.6,k=2", False, 120),
])
def test_equals_the_local_certificate(spark, seed, n, spec, strict, max_fragment):
    local, got, res, check = _both(spark, random_frame(seed, n, card=8), spec, strict, max_fragment)
    assert res.n_fragments >= (1 if max_fragment > n else 3)
    assert _strip(got) == _strip(local)


@pytest.mark.parametrize("strict", [True, False])
def test_sampled_units_over_fragments_use_the_local_seeds(spark, strict):
    """Replay units too large to enumerate are sampled, in many fragments: each unit is given
    the seed the local run gives it, so the sampled posteriors are the local ones."""
    local, got, res, _ = _both(spark, numeric_frame(21, 1200), "l=3", strict, 150)
    assert res.n_fragments >= 6
    assert next(f for f in local.findings if f.adversary == "replay").method == "sampled (3-SE bound)"
    assert _strip(got) == _strip(local)


def test_a_refused_planned_cut_is_replayed_whole_or_left_unresolved(spark):
    """The driver refuses an ℓ = 3 cut at the root (its left half holds two SA values). Within
    2 x --spark-max-fragment rows the root is replayed whole on one executor: the local
    certificate. Above, every person below it is unresolved, and the verdict says why."""
    frame = numeric_frame(21, 1200, split=True)
    local, got, res, _ = _both(spark, frame, "l=3", True, 700)
    assert res.plan.refused and _strip(got) == _strip(local)
    local, got, res, _ = _both(spark, frame, "l=3", True, 150)
    assert res.plan.refused and got.verdict == "fail"
    replay = next(f for f in got.findings if f.adversary == "replay")
    assert replay.ran and replay.n_unresolved == 1200 and replay.max_posterior is None
    assert "refused" in replay.error and "unresolved" in got.lines[1].text
    # the figures that do not need the replay are the local ones
    assert [_strip(got)["adversaries"][i] for i in (0, 2)] == [_strip(local)["adversaries"][i] for i in (0, 2)]


@pytest.mark.parametrize("seed, withheld, spec, verdict", [(2, True, "k=4", "pass"), (4, False, "k=4", "pass"),
                                                          (2, True, "l=2", "fail")])
def test_full_domain_search_certified_as_locally(spark, seed, withheld, spec, verdict):
    """Full-domain search with a budget, on Spark as locally — the same verdict, lines,
    baseline (the withheld people given the published distribution) and identity figures.
    Under k-anonymity the search is a function of the QIs, so the replay's posterior is the
    class frequency, computed from the classes on Spark too (the release passes); under a
    model that reads the SA the local replay weighs the search's decisions (here: a bound that
    puts people above the target) and on Spark it is recorded as not run — it needs the table on one machine — and the
    verdict fails too. The minimality adversary, likewise, is recorded as not run (or does not
    apply)."""
    from openbook.spark import full_domain as sfd

    frame = random_frame(seed, 300, card=8)
    table = encode(frame, frame_schema(frame))
    model = make_model(spec)
    algo = make_algorithm("full-domain-search", model=model, max_suppression=0.1)
    local = certify(algo.anonymize(table), original=table, params=PARAMS)
    st = from_encoded(spark, table)
    res = sfd.search(st, make_algorithm("full-domain-search", model=model, max_suppression=0.1))
    rel = sfd.release_rows(st, res, model)
    tg = targets(ReleaseView({"model": model.to_dict()}, [], ""), max_risk=None, max_reid_risk=None)
    check = sfd.verify(rel, figures=figures_for(tg))
    got = full_domain_certificate(rel, check, tg, params=PARAMS)
    a, b = _strip(local), _strip(got)
    assert (res.n_suppressed > 0) == withheld
    assert got.verdict == local.verdict == verdict and b["algorithm_aware"] == a["algorithm_aware"]
    assert b["lines"][0] == a["lines"][0]
    fa, fb = {f["adversary"]: f for f in a["adversaries"]}, {f["adversary"]: f for f in b["adversaries"]}
    assert fb["baseline"] == fa["baseline"] and fb["reidentification"] == fa["reidentification"]
    assert sorted(fb) == sorted(fa)
    if verdict == "pass":
        assert b["lines"][1]["text"] == a["lines"][1]["text"]
        assert fb["replay"] == fa["replay"] and fb["replay"]["knows_algorithm"]
        return
    # locally the search's decisions are weighed: fewer than half of the arrangements drawn rule
    # out the node it could have preferred, so the figures are bounded (at least doubled) and fail
    assert fa["replay"]["ran"] and fa["replay"]["n_above"] > 0 and fa["replay"]["n_unresolved"] == 0
    for name in ("replay", "minimality"):
        assert not fb[name]["ran"] and "Spark" in fb[name]["error"]


QI = ["--qi", "q0:numeric,q1,q2:numeric", "--sa", "sa"]


def test_cli_certified_release_and_refusal_equal_local(spark, tmp_path, capsys):
    """``anonymize --engine spark`` without ``--no-certify``: the sidecar's certificate is the
    local engine's (its public record), and a release the certificate fails is refused with
    the local engine's words, exit code 3, nothing written."""
    from cli_harness import error_lines, run_cli, snapshot

    data = tmp_path / "in.csv"
    random_frame(3, 300, card=8).to_csv(data, index=False)
    base = ["anonymize", data, *QI, "--algorithm", "mondrian", "-m", "k=3", "--quiet"]
    code, _, err = run_cli(capsys, [*base, "--max-risk", "1", "-o", tmp_path / "l.parquet"])
    assert code == 0, err
    code, out, err = run_cli(capsys, [*base, "--max-risk", "1", "--engine", "spark", "--spark-max-fragment", "60",
                                      "-o", tmp_path / "s.parquet", "--json"])
    assert code == 0, err
    side = {k: json.loads((tmp_path / f"{k}.parquet.json").read_text())["certificate"] for k in ("l", "s")}
    for c in side.values():
        c.pop("seconds", None)
        for f in c["adversaries"]:
            f.pop("seconds", None)
    assert side["s"] == side["l"] and side["s"]["verdict"] == "pass"
    assert json.loads(out)["certificate"]["verdict"] == "pass"
    before = snapshot(tmp_path)
    msgs = []
    for engine in ("local", "spark"):
        code, _, err = run_cli(capsys, [*base, "--engine", engine, "-o", tmp_path / "r.parquet"])
        assert code == 3 and len(error_lines(err)) == 1, err
        msgs.append(error_lines(err)[0])
    assert msgs[0] == msgs[1] and "refusing to write the release" in msgs[0]
    assert snapshot(tmp_path) == before
