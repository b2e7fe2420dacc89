"""``openbook hierarchy`` and the kind warnings of ``anonymize`` (issue 27, item 1: types and
hierarchies, as ARX's wizard does): the command builds a numeric, a postcode-prefix and a date
hierarchy that ``anonymize --hierarchy`` takes as they are; a postcode's prefix hierarchy keeps
it from being published as ``*`` in almost every row; a numeric-looking QI left categorical
and a many-valued QI without a hierarchy each get one warning line naming the fix, and a
well-declared schema gets none. (Bad input: ``test_cli_hierarchy_bad_input.py``.)"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.hierarchy import read_arx_csv

from cli_harness import run_cli

DISEASES = ["flu", "cold", "hiv", "none", "cancer"]


def people(n: int = 600, n_zips: int = 300, seed: int = 27) -> pd.DataFrame:
    """Ages 18..89, five-digit postcodes (with leading zeros: read back as numbers), sex, a
    visit date in 2021..2023 and a disease — seeded."""
    rng = np.random.default_rng(seed)
    zips = rng.choice(100_000, n_zips, replace=False)
    days = pd.date_range("2021-01-01", "2023-12-31").strftime("%Y-%m-%d").to_numpy()
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "zip": [f"{z:05d}" for z in rng.choice(zips, n)],
        "sex": rng.choice(["F", "M"], n),
        "visit": rng.choice(days, n),
        "disease": rng.choice(DISEASES, n),
    })


@pytest.fixture()
def data(tmp_path):
    p = tmp_path / "people.csv"
    people().to_csv(p, index=False)
    return p


def hierarchy(capsys, data, column, *how, out):
    code, o, err = run_cli(capsys, ["hierarchy", data, "--column", column, *how, "-o", out, "--json"])
    assert code == 0, err
    return json.loads(o)


def anonymize(capsys, data, qi, *extra, out, certify=False):
    argv = ["anonymize", data, "--qi", qi, "--sa", "disease", "-m", "k=5", "--algorithm", "mondrian", "--quiet",
            "-o", out, *extra, *([] if certify else ["--no-certify"])]
    code, _, err = run_cli(capsys, argv)
    assert code == 0, err
    return pd.read_csv(out, dtype=str, keep_default_na=False), err


def warnings_about(err: str, column: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("openbook: warning: ") and f"QI {column!r}" in ln]


def labels(path, leaf_type=None) -> set[str]:
    h = read_arx_csv(path, leaf_type=leaf_type)
    return {str(x) for x in h.labels}


# ---- the three builders, taken by anonymize as they are ------------------------------------------
def test_exact_numbers_are_published_as_the_data_writes_them(capsys, tmp_path, data):
    """A numeric QI published exactly (Anatomy's QI table) reads "17" with or without a
    hierarchy file, never "17.0"."""
    out = tmp_path / "age.csv"
    hierarchy(capsys, data, "age", "--widths", "5,10", out=out)
    for extra, name in (([], "plain.csv"), (["--hierarchy", f"age={out}"], "with.csv")):
        code, _, err = run_cli(capsys, ["anonymize", data, "--qi", "age:numeric,sex", "--sa", "disease", "-m", "l=2",
                                        "--algorithm", "anatomy", "--max-reid-risk", "1", "--quiet", "-o",
                                        tmp_path / name, *extra])
        assert code == 0, err
        ages = set(pd.read_csv(tmp_path / name, dtype=str)["age"])
        assert ages == {str(a) for a in people()["age"]}, sorted(ages)[:5]


@pytest.mark.parametrize("how", [["--widths", "5,10,20"], ["--quantiles", "8,4,2"]])
def test_numeric_hierarchy_is_taken_by_anonymize(capsys, tmp_path, data, how):
    out = tmp_path / "age.csv"
    info = hierarchy(capsys, data, "age", *how, out=out)
    ages = sorted(set(people()["age"]))
    h = read_arx_csv(out, leaf_type=int)  # as anonymize reads integer leaves of a numeric QI
    assert sorted(h.leaves) == [float(a) for a in ages] and info["values"] == len(ages)
    assert info["levels"] == len(how[1].split(",")) + 1 and "age:numeric" in info["use"]
    rel, err = anonymize(capsys, data, "age:numeric,sex", "--hierarchy", f"age={out}", out=tmp_path / "r.csv")
    published = set(rel["age"])
    assert published <= labels(out, int)  # nodes of the hierarchy (integer leaves read as integers), not Mondrian's own ranges
    assert published & {lab for lab in labels(out, int) if lab.startswith("[")}  # ranges, not only '*'
    assert not warnings_about(err, "age")


def test_numeric_hierarchy_is_taken_for_a_qi_left_categorical(capsys, tmp_path, data):
    out = tmp_path / "age.csv"
    hierarchy(capsys, data, "age", "--widths", "5,10,20", out=out)
    rel, err = anonymize(capsys, data, "age,sex", "--hierarchy", f"age={out}", out=tmp_path / "r.csv")
    assert set(rel["age"]) <= labels(out) and not warnings_about(err, "age")


def test_postcode_prefix_hierarchy_is_taken_by_anonymize(capsys, tmp_path, data):
    out = tmp_path / "zip.csv"
    info = hierarchy(capsys, data, "zip", "--prefix", out=out)
    assert info["levels"] == 5  # 12345 -> 1234* -> 123** -> 12*** -> 1**** -> *
    rows = [ln.split(";") for ln in out.read_text().splitlines()]
    assert all(len(r) == 6 and r[-1] == "*" and r[2].endswith("**") for r in rows)
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), key=lambda z: z.zfill(5))
    rel, _ = anonymize(capsys, data, "zip,sex", "--hierarchy", f"zip={out}", out=tmp_path / "r.csv")
    assert set(rel["zip"]) <= labels(out)


def test_date_hierarchy_is_taken_by_anonymize(capsys, tmp_path, data):
    out = tmp_path / "visit.csv"
    info = hierarchy(capsys, data, "visit", "--date", out=out)
    first = min(people()["visit"])  # leaves in date order
    assert info["levels"] == 3 and out.read_text().startswith(f"{first};{first[:7]};{first[:4]};*\n")
    rel, err = anonymize(capsys, data, "visit,sex", "--hierarchy", f"visit={out}", out=tmp_path / "r.csv")
    published = set(rel["visit"])
    assert published <= labels(out)
    assert any(len(v) in (4, 7) for v in published)  # years or months, not only '*'
    assert not warnings_about(err, "visit")


# ---- the postcode no longer collapses ------------------------------------------------------------
@pytest.mark.slow
def test_prefix_hierarchy_keeps_a_postcode_from_collapsing(capsys, tmp_path):
    src = tmp_path / "people.csv"
    frame = people(n=2500, n_zips=1500)
    assert frame["zip"].nunique() >= 1000
    frame.to_csv(src, index=False)
    hier = tmp_path / "zip.csv"
    hierarchy(capsys, src, "zip", "--prefix", out=hier)
    shares = {}
    for name, extra in (("without", []), ("with", ["--hierarchy", f"zip={hier}"])):
        rel, _ = anonymize(capsys, src, "zip,sex", "--max-reid-risk", "1", *extra, out=tmp_path / f"{name}.csv",
                           certify=True)
        shares[name] = float((rel["zip"] == "*").mean())
    # measured: 0.998 without (every class of two or more postcodes publishes '*'), 0.047 with
    assert shares["without"] > 0.95, shares
    assert shares["with"] < 0.25, shares


# ---- the warnings --------------------------------------------------------------------------------
def test_numeric_looking_qi_left_categorical_warns_naming_the_fix(capsys, tmp_path, data):
    _, err = anonymize(capsys, data, "age,sex", out=tmp_path / "r.csv")
    lines = warnings_about(err, "age")
    assert len(lines) == 1, err
    assert "--qi age:numeric" in lines[0] and f"openbook hierarchy {data} --column age --widths" in lines[0]
    assert not warnings_about(err, "sex")
    # declared numeric, or given a hierarchy: no warning
    _, err = anonymize(capsys, data, "age:numeric,sex", out=tmp_path / "r2.csv")
    assert not warnings_about(err, "age")


@pytest.mark.parametrize("values, needles", [
    # numbers: five-digit postcodes (those with a leading zero read back as four-digit numbers)
    (lambda rng: [f"{z:05d}" for z in rng.choice(100_000, 300, replace=False)], ["--column zip --prefix",
                                                                               "--hierarchy zip=zip-hierarchy.csv"]),
    # text codes of one shape
    (lambda rng: [f"D-{z:05d}" for z in rng.choice(100_000, 300, replace=False)], ["--column zip --prefix",
                                                                                 "--hierarchy zip=zip-hierarchy.csv"]),
    # plain categories
    (lambda rng: [f"town {i}" for i in range(300)], ["--hierarchy zip=PATH", "openbook hierarchy"]),
])
def test_many_valued_qi_without_hierarchy_warns_naming_the_fix(capsys, tmp_path, values, needles):
    rng = np.random.default_rng(5)
    frame = people()
    frame["zip"] = rng.choice(values(rng), len(frame))
    assert frame["zip"].nunique() > 50
    src = tmp_path / "people.csv"
    frame.to_csv(src, index=False)
    _, err = anonymize(capsys, src, "zip,sex", out=tmp_path / "r.csv")
    lines = warnings_about(err, "zip")
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], lines[0]
    hier = tmp_path / "zip.csv"
    hierarchy(capsys, src, "zip", "--prefix", out=hier)
    _, err = anonymize(capsys, src, "zip,sex", "--hierarchy", f"zip={hier}", out=tmp_path / "r2.csv")
    assert not warnings_about(err, "zip")


def test_a_well_declared_schema_gets_no_warning(capsys, tmp_path, adult_dir):
    code, _, err = run_cli(capsys, ["anonymize", "--dataset", "adult", "-m", "k=5", "--algorithm", "mondrian",
                                    "--no-certify", "--quiet", "-o", tmp_path / "r.csv"])
    assert code == 0, err
    assert "openbook: warning" not in err, err
    # the same data with a numeric-looking column left categorical does warn (the check can fail)
    code, _, err = run_cli(capsys, ["anonymize", "--dataset", "adult", "--qi", "age,education-num,sex", "-m", "k=5",
                                    "--algorithm", "mondrian", "--no-certify", "--quiet", "-o", tmp_path / "r2.csv"])
    assert code == 0, err
    assert len(warnings_about(err, "education-num")) == 1
    assert "openbook hierarchy --dataset adult --column education-num" in err
    assert not warnings_about(err, "age")  # a bare name keeps the dataset's numeric declaration


def test_without_a_method_the_command_suggests_one(capsys, tmp_path, data):
    for column, option in (("zip", "--prefix"), ("visit", "--date"), ("age", "--widths 5,10,20")):
        code, _, err = run_cli(capsys, ["hierarchy", data, "--column", column, "-o", tmp_path / "h.csv"])
        assert code == 2 and f"try {option}" in err, err
    assert not (tmp_path / "h.csv").exists()


def test_hierarchy_is_a_command(capsys):
    from openbook.cli import COMMANDS

    assert "hierarchy" in COMMANDS
    code, out, _ = run_cli(capsys, ["--help"])
    assert code == 0 and "hierarchy" in out
    code, out, _ = run_cli(capsys, ["hierarchy", "--help"])
    for option in ("--widths", "--quantiles", "--prefix", "--order", "--ordinal", "--date", "--force"):
        assert option in out
