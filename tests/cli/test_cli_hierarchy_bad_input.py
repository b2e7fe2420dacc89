"""``openbook hierarchy`` fed bad input: each invocation exits with code 2, prints one line on
stderr (``openbook: error: ...``) naming the column, value or parameter, shows no traceback,
and writes no file (the ``refused`` fixture of ``conftest.py``, as in
``test_bad_input_suite.py``)."""

from __future__ import annotations

import pandas as pd
import pytest

from cli_harness import run_cli


@pytest.fixture()
def ws(tmp_path):
    """people.csv (numbers, codes, categories, dates), a file with one impossible date, one
    with a column that is all missing, and an existing file ``exists.csv``."""
    frame = pd.DataFrame({
        "age": [23, 25, 27, 31, 33, 35, 41, 43],
        "zip": ["01234", "01299", "13053", "13068", "14850", "14853", "90210", "90211"],
        "sex": list("MFMFMFMF"),
        "visit": ["2024-03-17", "2024-03-18", "2024-04-01", "2023-12-31", "2023-01-05", "2022-07-04",
                  "2022-07-05", "2021-02-28"],
        "blank": [""] * 8,
        "disease": ["flu", "hiv", "flu", "cancer", "hiv", "flu", "cancer", "flu"],
    })
    frame.to_csv(tmp_path / "people.csv", index=False)
    bad = frame.copy()
    bad.loc[3, "visit"] = "2024-13-01"
    bad.to_csv(tmp_path / "bad-dates.csv", index=False)
    mixed = frame.copy()
    mixed.loc[2, "visit"] = "2024-04"
    mixed.to_csv(tmp_path / "mixed-dates.csv", index=False)
    (tmp_path / "exists.csv").write_text("keep me\n")
    return tmp_path


def H(*extra, data="{tmp}/people.csv", out="{tmp}/h.csv"):
    return ["hierarchy", data, *extra, *(["-o", out] if out else [])]


CASES: dict[str, tuple[list[str], str | tuple[str, ...]]] = {
    # -- the done-when cases -----------------------------------------------------------------------
    "unknown column": (H("--column", "postcode", "--prefix"), ("unknown column 'postcode'", "zip")),
    "widths on text": (H("--column", "sex", "--widths", "5,10"), ("column 'sex'", "'M'", "not a number")),
    "quantiles on text": (H("--column", "sex", "--quantiles", "4,2"), ("column 'sex'", "not a number")),
    "bad date": (H("--column", "visit", "--date", data="{tmp}/bad-dates.csv"),
                 ("column 'visit'", "'2024-13-01'", "not a date")),
    "widths not increasing": (H("--column", "age", "--widths", "10,5"), ("--widths", "10 then 5")),
    "output exists": (H("--column", "zip", "--prefix", out="{tmp}/exists.csv"), ("exists.csv", "--force")),
    # -- more of the same ----------------------------------------------------------------------------
    "widths equal": (H("--column", "age", "--widths", "5,5"), ("--widths", "5 then 5")),
    "widths not nested": (H("--column", "age", "--widths", "5,12"), ("--widths", "12", "multiple")),
    "widths fractional on integers": (H("--column", "age", "--widths", "2.5,5"), ("--widths", "2.5")),
    "widths not numbers": (H("--column", "age", "--widths", "5,ten"), ("--widths", "5,ten")),
    "widths negative": (H("--column", "age", "--widths", "-5,10"), ("--widths", "-5,10")),
    "widths zero": (H("--column", "age", "--widths", "0,10"), ("--widths", "0,10")),
    "quantiles increasing": (H("--column", "age", "--quantiles", "2,4"), ("--quantiles", "2 then 4")),
    "quantiles of one bin": (H("--column", "age", "--quantiles", "1"), ("--quantiles", "'1'")),
    "order lacks a value": (H("--column", "sex", "--order", "M"), ("column 'sex'", "'F'", "not in the order")),
    "order lists a value twice": (H("--column", "sex", "--order", "M,F,M"), ("--order", "'M'", "twice")),
    "order empty value": (H("--column", "sex", "--order", "M,,F"), ("--order", "M,,F")),
    "date unknown level": (H("--column", "visit", "--date", "week"), ("--date", "'week'")),
    "date levels backwards": (H("--column", "visit", "--date", "year,month"), ("--date", "'year' then 'month'")),
    "date mixed precisions": (H("--column", "visit", "--date", data="{tmp}/mixed-dates.csv"),
                              ("column 'visit'", "'2024-04'", "precisions")),
    "date on numbers": (H("--column", "age", "--date"), ("column 'age'", "'23'", "not a date")),
    "no method": (H("--column", "zip"), ("column 'zip'", "--prefix")),
    "two methods": (H("--column", "age", "--widths", "5", "--prefix"), ("--prefix", "--widths")),
    "no column": (H("--prefix"), "--column"),
    "column all missing": (H("--column", "blank", "--prefix"), ("column 'blank'", "no values")),
    "output is the input": (H("--column", "zip", "--prefix", out="{tmp}/people.csv"), ("people.csv", "input")),
    "output folder missing": (H("--column", "zip", "--prefix", out="{tmp}/nowhere/h.csv"), "nowhere"),
    "output is a folder": (H("--column", "zip", "--prefix", out="{tmp}"), "directory"),
    "no output": (H("--column", "zip", "--prefix", out=None), ("-o",)),
    "input missing": (H("--column", "zip", "--prefix", data="{tmp}/absent.csv"), "absent.csv"),
    "no input": (["hierarchy", "--column", "zip", "--prefix", "-o", "{tmp}/h.csv"], "--dataset"),
    "input and dataset": (H("--column", "zip", "--prefix", "--dataset", "synthetic"), "--dataset"),
}


@pytest.mark.parametrize("name", CASES)
def test_hierarchy_bad_input_is_refused(name, ws, refused):
    argv, needles = CASES[name]
    argv = [a.format(tmp=ws) for a in argv]
    needles = (needles,) if isinstance(needles, str) else needles
    refused(ws, argv, *needles)


def test_force_replaces_an_existing_file_and_the_good_case_writes(ws, capsys):
    """The refusals above are refusals: the same commands with good input write the file."""
    code, _, err = run_cli(capsys, ["hierarchy", ws / "people.csv", "--column", "zip", "--prefix", "-o",
                                    ws / "exists.csv", "--force", "--quiet"])
    assert code == 0, err
    # the CSV reader reads 01234 as the number 1234 (so does anonymize): that is the leaf, masked as 01234
    assert (ws / "exists.csv").read_text().startswith("1234;0123*;012**;01***;0****;*\n")
    code, _, err = run_cli(capsys, ["hierarchy", ws / "people.csv", "--column", "age", "--widths", "5,10", "-o",
                                    ws / "h.csv", "--quiet"])
    assert code == 0, err
    assert (ws / "h.csv").is_file()
