"""Identity disclosure from the command line: ``check`` reports re-identification risk beside
k, ℓ and t (text and JSON), ``anonymize --max-reid-risk`` refuses a release above the target
(exit 3, nothing written), the report shows the record-risk histogram, and bad population
inputs are refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cli_harness import run_cli, snapshot

# classes on (age, sex): (30,F) x3, (30,M) x2, (40,F), (50,M), (60,F): n = 8, 5 classes, 3 uniques
ROWS = {"age": [30, 30, 30, 30, 30, 40, 50, 60], "sex": list("FFFMMFMF"), "d": list("abcabcab")}


@pytest.fixture()
def small(tmp_path):
    p = tmp_path / "people.csv"
    pd.DataFrame(ROWS).to_csv(p, index=False)
    return p


def _check_json(capsys, *argv):
    code, out, err = run_cli(capsys, ["check", *argv, "--qi", "age:numeric,sex", "--sa", "d", "--json"])
    assert code == 0, err
    return json.loads(out)["identity"]


def test_check_reports_prosecutor_and_marketer_risk(small, capsys):
    ident = _check_json(capsys, small, "--reid-threshold", "0.4")
    assert ident["records"] == 8 and ident["classes"] == 5 and ident["sample_uniques"] == 3
    assert ident["prosecutor"]["highest_risk"] == 1.0
    assert ident["prosecutor"]["records_at_risk"] == pytest.approx(5 / 8)  # risks 1/2 and 1 exceed 0.4
    assert ident["prosecutor"]["success_rate"] == pytest.approx(5 / 8)  # classes / n
    assert ident["journalist"] == ident["prosecutor"]  # the data is the population
    assert ident["marketer"]["success_rate"] == pytest.approx(5 / 8)


def test_check_with_a_sampling_fraction_never_understates_journalist_risk(small, capsys, tmp_path):
    ident = _check_json(capsys, small, "--reid-threshold", "0.4", "--sampling-fraction", "0.5")
    pros = ident["prosecutor"]
    # f/π (F = 2f) would say highest 1/2, 3/8 above 0.4, marketer 5/16: the expectation, not a bound.
    # Eight records say almost nothing of a population of 16: the bounds reach the prosecutor figures
    assert ident["journalist"]["highest_risk"] == pytest.approx(1.0)
    assert 3 / 8 <= ident["journalist"]["records_at_risk"] <= pros["records_at_risk"] + 1e-12
    assert 5 / 16 <= ident["marketer"]["success_rate"] <= pros["success_rate"] + 1e-12
    assert ident["population_size"] == pytest.approx(16)
    same = _check_json(capsys, small, "--reid-threshold", "0.4", "--population-size", "16")
    assert same["journalist"] == ident["journalist"]
    # with the population itself the figures are exact: these 8 people plus 8 others
    pop = pd.DataFrame({"age": ROWS["age"] + [30, 30, 30, 50, 50, 50, 60, 60],
                        "sex": ROWS["sex"] + list("FFMMMMFF")})
    pop.to_csv(tmp_path / "population.csv", index=False)
    exact = _check_json(capsys, small, "--reid-threshold", "0.4", "--population", tmp_path / "population.csv")
    # F: (30,F) 5, (30,M) 3, (40,F) 1, (50,M) 4, (60,F) 3
    assert exact["journalist"]["highest_risk"] == pytest.approx(1.0)
    assert exact["journalist"]["records_at_risk"] == pytest.approx(1 / 8)  # only (40,F) is above 0.4
    assert exact["marketer"]["success_rate"] == pytest.approx((3 / 5 + 2 / 3 + 1 + 1 / 4 + 1 / 3) / 8)


def test_check_text_shows_identity_beside_the_levels(small, capsys):
    code, out, err = run_cli(capsys, ["check", small, "--qi", "age:numeric,sex", "--sa", "d"])
    assert code == 0, err
    assert "identity disclosure" in out and "prosecutor" in out and "marketer" in out
    assert out.index("distinct l-diversity") < out.index("identity disclosure")
    assert "distinct_l" not in out  # words, not the JSON keys


def _census(tmp_path, n=400):
    import numpy as np

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(20, 70, n), "zip": rng.choice(list("abcdefgh"), n),
                       "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "cold", "hiv", "none", "cancer"], n)})
    p = tmp_path / "census.csv"
    df.to_csv(p, index=False)
    return p


def test_max_reid_risk_refuses_with_exit_3_and_writes_nothing(tmp_path, capsys):
    src = _census(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    before = snapshot(out)
    base = ["anonymize", src, "--qi", "age:numeric,zip,sex", "--sa", "disease", "-m", "l=2", "--seed", "1"]
    # Anatomy publishes the QIs exactly: identity is disclosed by design, prosecutor risk 1
    code, _, err = run_cli(capsys, [*base, "--algorithm", "anatomy", "--max-reid-risk", "0.5",
                                    "-o", out / "r.csv"])
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("openbook: error")]
    assert code == 3, err
    assert len(lines) == 1 and "re-identification risk above 0.5" in lines[0], err
    assert "--max-reid-risk 1" in lines[0]  # the remedy, in the CLI's words
    assert snapshot(out) == before
    # the default identity target (0.2) refuses it too: publishing exact QIs is no default
    code, _, err = run_cli(capsys, [*base, "--algorithm", "anatomy", "-o", out / "r.csv"])
    assert code == 3 and "re-identification risk above 0.2" in err, err
    assert snapshot(out) == before
    # accepting exact QIs is an explicit choice: written, and its certificate says so
    code, _, err = run_cli(capsys, [*base, "--algorithm", "anatomy", "--max-reid-risk", "1", "-o", out / "r.csv"])
    assert code == 0, err
    side = json.loads((out / "r.csv.json").read_text())
    assert side["certificate"]["verdict"] == "pass"
    ident = [ln for ln in side["certificate"]["lines"] if ln["name"] == "identity"][0]
    assert ident["target"] == 1 and "NOT protected, accepted by the publisher" in ident["text"]


def test_max_reid_risk_admits_a_release_within_it(tmp_path, capsys):
    src = _census(tmp_path)
    code, _, err = run_cli(capsys, ["anonymize", src, "--qi", "age:numeric,zip,sex", "--sa", "disease",
                                    "-m", "k=10", "--algorithm", "mondrian", "--strict",
                                    "--max-reid-risk", "0.1", "-o", tmp_path / "m.csv"])
    assert code == 0, err  # every published class holds at least 10 people: prosecutor risk <= 1/10
    side = json.loads((tmp_path / "m.csv.json").read_text())
    found = [f for f in side["certificate"]["adversaries"] if f["adversary"] == "reidentification"]
    assert found and found[0]["max_posterior"] <= 0.1


@pytest.mark.parametrize("flag,value", [("--population-size", "0"), ("--population-size", "abc"),
                                        ("--sampling-fraction", "0"), ("--sampling-fraction", "1.5"),
                                        ("--reid-threshold", "-1")])
def test_bad_population_inputs_are_refused(small, refused, flag, value):
    refused(small.parent, ["check", small, "--qi", "age:numeric,sex", "--sa", "d", flag, value], flag)


def test_report_shows_the_record_risk_histogram(tmp_path, capsys):
    src = _census(tmp_path)
    code, _, err = run_cli(capsys, ["anonymize", src, "--qi", "age:numeric,zip,sex", "--sa", "disease",
                                    "-m", "k=10", "--algorithm", "mondrian", "--strict", "-o", tmp_path / "m.csv"])
    assert code == 0, err
    code, _, err = run_cli(capsys, ["report", tmp_path / "m.csv", "--original", src, "--max-reid-risk", "0.2",
                                    "-o", tmp_path / "r.html"])
    assert code == 0, err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Adversary: reidentification" in page
    section = page[page.index("Adversary: reidentification"):]
    assert "re-identification risk per record" in section and "<svg" in section


def test_the_identity_line_uses_the_population_table(tmp_path, capsys):
    """``--population FILE`` makes the identity line journalist risk, exact: a release whose
    classes are small in the sample passes when the population holds many people like them."""
    src = _census(tmp_path)
    people = pd.read_csv(src)
    pop = pd.concat([people[["age", "zip", "sex"]]] * 3, ignore_index=True)  # everyone thrice
    pop.to_csv(tmp_path / "population.csv", index=False)
    base = ["anonymize", src, "--qi", "age:numeric,zip,sex", "--sa", "disease", "-m", "l=2", "--seed", "1",
            "--algorithm", "generalized-anatomy", "--max-reid-risk", "0.1", "--json", "--quiet"]
    code, out, err = run_cli(capsys, [*base, "-o", tmp_path / "a.csv"])
    assert code == 0, err  # QI classes of at least 10 in the sample: prosecutor risk <= 0.1
    code, out, err = run_cli(capsys, [*base, "-o", tmp_path / "b.csv", "--population", tmp_path / "population.csv",
                                      "--max-reid-risk", "0.034"])
    assert code == 0, err  # every class holds >= 30 people of the population: journalist risk <= 1/30
    cert = json.loads(out)["certificate"]
    ident = [ln for ln in cert["lines"] if ln["name"] == "identity"][0]
    assert ident["passes"] and ident["worst"] <= 1 / 30 + 1e-12
