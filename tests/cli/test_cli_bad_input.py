"""Bad input of the data itself (unknown columns, malformed hierarchies, unreadable or
truncated files, impossible models), on the full harness (``refused``: exit 2, one line on
stderr, no traceback, no new or changed file under the test's folder). Each case is one
invocation of ``openbook anonymize``; ``CASES`` counts toward the bad-input suite."""

from __future__ import annotations

import pytest

BASE = ["--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name"]
ZIP_MISSING_151 = "130;13*;*\n131;13*;*\n140;14*;*\n141;14*;*\n150;15*;*\n"
ZIP_CYCLE = "130;13*;*\n13*;130;*\n131;13*;*\n140;14*;*\n141;14*;*\n150;15*;*\n151;15*;*\n"  # 130 -> 13* -> 130
ZIP_SHORT = "130;13*;*\n131;13*;*\n140;14*;*\n141;14*\n150;15*;*\n151;15*;*\n"


def _non_numeric_age(frame):
    df = frame.copy()
    df["age"] = df["age"].astype(object)
    df.iloc[4, 0] = "old"
    return df


def _skewed(frame):
    df = frame.copy()
    df["disease"] = ["flu"] * 8 + ["hiv", "cancer", "cold", "hiv"]
    return df


#: case -> (how the input file is made, its name, extra arguments, needles of the error line)
CASES = {
    "unknown column": (None, None, ["--qi", "age,zipcode", "--sa", "disease", "-m", "k=2"],
                       ("unknown column 'zipcode'",)),
    "sa also a qi": (None, None, ["--qi", "age,disease", "--sa", "disease", "-m", "k=2"],
                     ("'disease'", "sensitive attribute and as a QI")),
    "value missing from a hierarchy": ("hier", ZIP_MISSING_151, [*BASE, "-m", "k=2"], ("'151'", "'zip'")),
    "non-numeric value in a numeric qi": (_non_numeric_age, "x.csv", [*BASE, "-m", "k=2"], ("'old'", "'age'")),
    "empty table": (lambda f: f.iloc[:0], "empty.csv", [*BASE, "-m", "k=2"], ("empty",)),
    "l larger than the sa values": (None, None, [*BASE, "-m", "l=4"], ("4", "3")),
    "k larger than the table": (None, None, [*BASE, "-m", "k=13"], ("k=13", "12")),
    "l-ineligible table names r-suppression": (_skewed, "skew.csv", [*BASE, "-m", "simple-l=3"],
                                               ("eligib", "R-suppression")),
    "hierarchy with a cycle": ("hier", ZIP_CYCLE, [*BASE, "-m", "k=2"], ("'130'",)),
    "hierarchy of uneven depth": ("hier", ZIP_SHORT, [*BASE, "-m", "k=2"], ("depth",)),
    "unreadable parquet": ("bytes", b"PAR1 this is not parquet", [*BASE, "-m", "k=2"], ("cannot read",)),
    "truncated csv": ("truncate", None, [*BASE, "-m", "k=2"], ("missing",)),
    "missing file": ("missing", None, [*BASE, "-m", "k=2"], ("no such file",)),
    "unknown model": (None, None, [*BASE, "-m", "z=3"], ("z",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_data_is_refused(refused, tmp_path, small_frame, case):
    make, arg, extra, needles = CASES[case]
    data = tmp_path / "people.csv"
    small_frame.to_csv(data, index=False)
    if make == "hier":
        h = tmp_path / "zip.csv"
        h.write_text(arg)
        extra = [*extra, "--hierarchy", f"zip={h}"]
    elif make == "bytes":
        data = tmp_path / "t.parquet"
        data.write_bytes(arg)
    elif make == "truncate":
        text = data.read_text().rstrip("\n")
        last = text.rsplit("\n", 1)[1]
        data.write_text(text[: len(text) - len(last)] + ",".join(last.split(",")[:2]))  # sex, disease, name lost
    elif make == "missing":
        data = tmp_path / "nope.csv"
    elif make is not None:
        data = tmp_path / arg
        make(small_frame).to_csv(data, index=False)
    refused(tmp_path, ["anonymize", data, *extra, "-o", tmp_path / "out" / "release.csv"], *needles)
