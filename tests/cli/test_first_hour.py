"""A newcomer's first hour (issue 27, "what was seen"): each quiet failure a new user met,
reproduced on the command line and now answered in words. The type and hierarchy cases are
in ``test_cli_hierarchy.py``, the configuration cases in ``test_bad_input_suite.py`` and
``tests/unit/test_config.py``."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from openbook.release import load_release
from openbook.release.io import sidecar_path

from cli_harness import run_cli


def _people(n: int = 600, seed: int = 5, missing: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "zip": rng.choice([f"{z:05d}" for z in range(13000, 13040)], n),
        "sex": rng.choice(["F", "M"], n),
        "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma", "none"], n,
                              p=[0.25, 0.25, 0.1, 0.1, 0.1, 0.2]),
    })
    if missing:
        df["disease"] = df["disease"].astype(object)
        df.loc[rng.choice(n, missing, replace=False), "disease"] = None
    return df


@pytest.fixture()
def people(tmp_path):
    p = tmp_path / "people.csv"
    _people().to_csv(p, index=False)
    return p


QI = ["--qi", "age:numeric,zip,sex", "--sa", "disease"]


def test_missing_drop_says_how_many_rows_it_dropped(tmp_path, capsys):
    src = tmp_path / "m.csv"
    _people(missing=17).to_csv(src, index=False)
    code, out, err = run_cli(capsys, ["anonymize", src, *QI, "-m", "l=2", "--missing", "drop", "-o",
                                      tmp_path / "r.csv", "--json"])
    assert code == 0, err
    assert "--missing drop: 17 of 600 rows" in err
    d = json.loads(out)
    assert d["n_input"] == 583 == d["n_published"] + d["n_suppressed"]
    # without it, the message names the CLI's own flag, not the Python keyword
    code, out, err = run_cli(capsys, ["anonymize", src, *QI, "-m", "l=2", "-o", tmp_path / "r2.csv"])
    assert code == 2 and "--missing drop" in err and "missing='drop'" not in err


def test_the_command_line_names_flags_and_python_names_keywords(tmp_path, capsys):
    """The ineligible-SA error names ``--skew r-suppression`` on the command line and
    ``skew='r-suppression'`` in Python; neither names the other's spelling."""
    from openbook.api import anonymize
    from openbook.errors import InfeasibleError

    df = _people()
    df.loc[: 400, "disease"] = "flu"  # 'flu' in more than half the rows: not 2-eligible
    src = tmp_path / "skewed.csv"
    df.to_csv(src, index=False)
    code, out, err = run_cli(capsys, ["anonymize", src, *QI, "-m", "l=2", "-o", tmp_path / "r.csv"])
    assert code in (2, 3) and "--skew r-suppression" in err and "skew='r-suppression'" not in err
    with pytest.raises(InfeasibleError) as exc:
        anonymize(df, qi=["age:numeric", "zip", "sex"], sa="disease", model="l=2")
    assert "skew='r-suppression'" in str(exc.value) and "--skew" not in str(exc.value)


def test_help_shows_the_kind_syntax_for_the_sa_too(capsys):
    code, out, err = run_cli(capsys, ["anonymize", "--help"])
    assert code == 0
    flat = " ".join(out.split())
    assert "--sa NAME[:KIND]" in flat and "numeric for (k,e)-anonymity" in flat
    assert "--qi NAME[:KIND],..." in flat


def test_audit_of_identity_prints_words_not_internal_keys(people, tmp_path, capsys):
    rel = tmp_path / "r.csv"
    assert run_cli(capsys, ["anonymize", people, *QI, "-m", "l=2", "-o", rel])[0] == 0
    code, out, err = run_cli(capsys, ["audit", rel, "--adversary", "reidentification", "--original", people])
    assert code == 0, err
    for internal in ("n_sensitive", "m_confidential", "avg_credibility_problematic", "None", "True", "posterior"):
        assert internal not in out, internal
    assert "re-identification risk at most 0.2" in out and "records above the target" in out
    code, out, err = run_cli(capsys, ["audit", rel, "--adversary", "reidentification", "--original", people,
                                      "--json"])
    d = json.loads(out)
    assert code == 0 and "m_confidential" in d and d["adversary"] == "reidentification"


def test_the_identity_refusal_never_compares_a_risk_with_a_posterior(people, tmp_path, capsys):
    """Exact QIs (Anatomy) are refused for identity; the sentence speaks of re-identification
    and names the remedy, with no posterior of the sensitive value in it."""
    code, out, err = run_cli(capsys, ["anonymize", people, *QI, "-m", "l=2", "--algorithm", "anatomy", "-o",
                                      tmp_path / "r.csv"])
    assert code == 3 and not (tmp_path / "r.csv").exists()
    line = [ln for ln in err.splitlines() if ln.startswith("openbook: error")][0]
    assert "re-identification" in line and "--max-reid-risk" in line
    assert "posterior" not in line and "baseline" not in line


def test_report_names_release_and_data_and_prints_its_verdict(people, tmp_path, capsys):
    rel = tmp_path / "r.csv"
    assert run_cli(capsys, ["anonymize", people, *QI, "-m", "l=2", "-o", rel])[0] == 0
    page = tmp_path / "rep.html"
    code, out, err = run_cli(capsys, ["report", rel, "--original", people, "-o", page])
    assert code == 0, err
    assert "original" not in out.split("certified against")[0] and "True" not in out
    assert re.search(r"verdict\s*│\s*pass", out) and "identity protected" in " ".join(out.split())
    title = re.search(r"<title>([^<]*)</title>", page.read_text()).group(1)
    assert "r.csv" in title and "people.csv" in title
    # without the original: the certificate recorded at publication, and the release's name
    code, out, err = run_cli(capsys, ["report", rel, "-o", tmp_path / "rep2.html", "--json"])
    d = json.loads(out)
    assert code == 0 and d["verdict"] == "pass" and "r.csv" in d["title"]


@pytest.mark.parametrize("algorithm,extra", [
    ("generalized-anatomy", []),
    ("mondrian", ["--no-certify"]),
    ("anatomy", ["--max-reid-risk", "1"]),
    ("full-domain-search", ["--max-suppression", "0.1", "--no-certify", "--hierarchy", "zip={tmp}/zip.csv"]),
])
def test_one_count_everywhere(people, tmp_path, capsys, algorithm, extra):
    """Classes, groups, published and withheld rows: the same number in ``anonymize``,
    ``check``, ``certify``, the sidecar and the report."""
    zips = sorted(pd.read_csv(people, dtype=str)["zip"].unique())
    pd.DataFrame([[z, z[:4] + "*", z[:3] + "**", "*"] for z in zips]).to_csv(tmp_path / "zip.csv", sep=";",
                                                                             header=False, index=False)
    extra = [a.format(tmp=tmp_path) for a in extra]
    rel = tmp_path / "r.csv"
    code, out, err = run_cli(capsys, ["anonymize", people, *QI, "-m", "l=2", "--algorithm", algorithm, *extra,
                                      "-o", rel, "--json"])
    assert code == 0, err
    a = json.loads(out)
    side = json.loads(sidecar_path(rel).read_text())
    release = load_release(rel)
    n_classes = release.classes()[1]
    assert a["n_groups"] == side["n_groups"] == side["check"]["n_groups"] == n_classes
    assert a["n_published"] == side["n_published"] == len(release.data) if "n_published" in side else True
    assert a["n_input"] == 600 == a["n_published"] + a["n_suppressed"]
    code, out, err = run_cli(capsys, ["check", rel, "--json"])
    c = json.loads(out)
    assert code == 0 and c["levels"]["n_groups"] == a["n_groups"] and c["levels"]["n_rows"] == a["n_published"]
    if release.kind == "bucketized":
        assert c["n_qi_classes"] == a["n_qi_classes"] == release.qi_class_sizes().size
    code, out, err = run_cli(capsys, ["check", rel])
    words = "QI combinations (the QI table)" if release.kind == "bucketized" else "classes"
    assert re.search(re.escape(words) + rf"\s*│\s*{a['n_qi_classes' if release.kind == 'bucketized' else 'n_groups']:,}",
                     out), out
    code, out, err = run_cli(capsys, ["certify", rel, "--original", people, "--json"])
    cert = json.loads(out)
    for f in cert["adversaries"]:
        if f["ran"] and f["adversary"] in ("reidentification", "baseline"):
            assert f["n_people"] == (a["n_published"] if f["adversary"] == "reidentification" else a["n_input"])
    page = tmp_path / "rep.html"
    assert run_cli(capsys, ["report", rel, "-o", page])[0] == 0
    assert f"{a['n_groups']:,}" in page.read_text()


def test_r_suppression_states_its_expected_rate_and_spread(tmp_path, capsys):
    df = _people(n=400)
    df.loc[: 250, "disease"] = "flu"
    src = tmp_path / "skewed.csv"
    df.to_csv(src, index=False)
    argv = ["anonymize", src, *QI, "-m", "l=3", "--skew", "r-suppression", "--algorithm", "anatomy",
            "--max-reid-risk", "1", "--no-certify"]
    code, out, err = run_cli(capsys, [*argv, "-o", tmp_path / "r.csv"])
    assert code == 0, err
    flat = " ".join(out.replace("│", " ").split())
    assert re.search(r"the rate is random: expected \d+\.\d% \(standard deviation \d+\.\d%\), any run between", flat)
    code, out, err = run_cli(capsys, [*argv, "-o", tmp_path / "r2.csv", "--json"])
    e = json.loads(out)["skew"]["expected_suppression_rate"]
    assert e["min"] <= json.loads(out)["skew"]["suppression_rate"] <= e["max"] and e["sd"] >= 0
    # a figure of the input's SA counts: never in the sidecar
    side = sidecar_path(tmp_path / "r2.csv").read_text()
    assert "expected" not in side and "spread" not in side
