"""Every bad input of the foundation issue: one clear line on stderr, exit code 2, no
traceback, and no output file."""

import pandas as pd
import pytest

from openbook.cli import main


@pytest.fixture()
def data(tmp_path, small_frame):
    p = tmp_path / "people.csv"
    small_frame.to_csv(p, index=False)
    return p


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(capsys, tmp_path, argv, *needles):
    out_file = tmp_path / "out" / "release.csv"
    code, out, err = run(capsys, [*argv, "-o", out_file])
    assert code == 2, (out, err)
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("openbook: warning")]
    assert len(lines) == 1, err
    assert lines[0].startswith("openbook: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    assert not out_file.exists()
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


BASE = ["anonymize", "--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name"]


def test_unknown_column(capsys, tmp_path, data):
    assert_refused(capsys, tmp_path, ["anonymize", data, "--qi", "age,zipcode", "--sa", "disease", "-m", "k=2"],
                   "unknown column 'zipcode'")


def test_sa_also_qi(capsys, tmp_path, data):
    assert_refused(capsys, tmp_path, ["anonymize", data, "--qi", "age,disease", "--sa", "disease", "-m", "k=2"],
                   "'disease'", "sensitive attribute and as a QI")


def test_value_missing_from_hierarchy(capsys, tmp_path, data):
    h = tmp_path / "zip.csv"
    h.write_text("130;13*;*\n131;13*;*\n140;14*;*\n141;14*;*\n150;15*;*\n")  # 151 missing
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "k=2", "--hierarchy", f"zip={h}"],
                   "'151'", "'zip'")


def test_non_numeric_in_numeric_qi(capsys, tmp_path, small_frame):
    df = small_frame.copy()
    df["age"] = df["age"].astype(object)
    df.iloc[4, 0] = "old"
    p = tmp_path / "x.csv"
    df.to_csv(p, index=False)
    assert_refused(capsys, tmp_path, [*BASE[:1], p, *BASE[1:], "-m", "k=2"], "'old'", "'age'")


def test_empty_table(capsys, tmp_path, small_frame):
    p = tmp_path / "empty.csv"
    small_frame.iloc[:0].to_csv(p, index=False)
    assert_refused(capsys, tmp_path, [*BASE[:1], p, *BASE[1:], "-m", "k=2"], "empty")


def test_l_larger_than_sa_values(capsys, tmp_path, data):
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "l=4"], "4", "3")


def test_k_larger_than_table(capsys, tmp_path, data):
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "k=13"], "k=13", "12")


def test_l_ineligible_table_names_r_suppression(capsys, tmp_path, small_frame):
    df = small_frame.copy()
    df["disease"] = ["flu"] * 8 + ["hiv", "cancer", "cold", "hiv"]
    p = tmp_path / "skew.csv"
    df.to_csv(p, index=False)
    assert_refused(capsys, tmp_path, [*BASE[:1], p, *BASE[1:], "-m", "simple-l=3"], "eligib", "R-suppression")


@pytest.mark.parametrize("content,needle", [
    ("130;13*;*\n13*;130;*\n131;13*;*\n140;14*;*\n141;14*;*\n150;15*;*\n151;15*;*\n", "'130'"),  # 130 -> 13* -> 130: a cycle
    ("130;13*;*\n131;13*;*\n140;14*;*\n141;14*\n150;15*;*\n151;15*;*\n", "depth"),
])
def test_malformed_hierarchy(capsys, tmp_path, data, content, needle):
    h = tmp_path / "zip.csv"
    h.write_text(content)
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "k=2", "--hierarchy", f"zip={h}"], needle)


def test_unreadable_file(capsys, tmp_path):
    p = tmp_path / "t.parquet"
    p.write_bytes(b"PAR1 this is not parquet")
    assert_refused(capsys, tmp_path, [*BASE[:1], p, *BASE[1:], "-m", "k=2"], "cannot read")


def test_truncated_csv(capsys, tmp_path, data):
    text = data.read_text().rstrip("\n")
    last = text.rsplit("\n", 1)[1]
    cut = last.split(",")
    data.write_text(text[: len(text) - len(last)] + ",".join(cut[:2]))  # cut mid-row: sex, disease, name lost
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "k=2"], "missing")


def test_missing_file(capsys, tmp_path):
    assert_refused(capsys, tmp_path, [*BASE[:1], tmp_path / "nope.csv", *BASE[1:], "-m", "k=2"], "no such file")


def test_unknown_model(capsys, tmp_path, data):
    assert_refused(capsys, tmp_path, [*BASE[:1], data, *BASE[1:], "-m", "z=3"])
