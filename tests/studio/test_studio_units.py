"""The studio's pieces without a server: its hierarchies are ``openbook hierarchy``'s files byte
for byte, its file names stay inside the output folder, its door refuses other hosts and
origins, its parameters are checked as the command line checks its flags."""

from __future__ import annotations

import pandas as pd
import pytest

from openbook.cli import main
from openbook.errors import ParameterError
from openbook.studio import hierarchy, publish, runs
from openbook.studio.data import present_values
from openbook.studio.guard import Guard

FRAME = pd.DataFrame({
    "age": [23, 25, 27, 31, 33, 35, 41, 43, 45, 52, 55, 58, 61, 64],
    "zip": ["13053", "13068", "13068", "13053", "14853", "14853", "14850", "14850", "13053", "13053", "14853",
            "14850", "13068", "?"],
    "visit": ["2024-03-17", "2024-03-02", "2024-04-11", "2023-12-30", "2024-01-05", "2024-03-17", "2024-06-01",
              "2024-06-02", "2024-07-14", "2023-11-11", "2024-02-29", "2024-05-05", "2024-08-08", "2024-09-09"],
    "grade": ["low", "mid", "high", "mid", "low", "high", "mid", "mid", "low", "high", "high", "low", "mid", "low"],
})


@pytest.mark.parametrize("column, method, param", [
    ("age", "widths", "5,10,20"), ("age", "quantiles", "4,2"), ("zip", "prefix", ""), ("age", "ordinal", ""),
    ("grade", "order", "low,mid,high"), ("visit", "date", "month"), ("visit", "date", ""),
])
def test_a_hierarchy_built_in_the_page_is_the_file_openbook_hierarchy_writes(tmp_path, capsys, column, method, param):
    data = tmp_path / "people.csv"
    FRAME.to_csv(data, index=False)
    cli = tmp_path / "cli.csv"
    flag = [f"--{method}"] + ([param] if param else [])
    assert main(["hierarchy", str(data), "--column", column, *flag, "-o", str(cli), "--json"]) == 0, \
        capsys.readouterr().err
    frame = pd.read_csv(data)  # as the studio reads a file (openbook.data.loaders.read_table does the same)
    info = hierarchy.write(tmp_path / "studio", column, method, param, present_values(frame[column]))
    assert (tmp_path / "studio" / info["file"]).read_text() == cli.read_text()
    assert info["option"] == " ".join(flag)


@pytest.mark.parametrize("method, param, words", [
    ("widths", "5,-1", "--widths '5,-1' is not a comma-separated list of positive numbers"),
    ("widths", "10,5", "--widths must increase: 10 then 5"),
    ("quantiles", "1", "--quantiles '1'"), ("order", "low,,high", "--order"),
    ("date", "weekly", "unknown level 'weekly'"), ("bogus", "", "unknown hierarchy method 'bogus'"),
])
def test_a_bad_hierarchy_parameter_is_named_as_the_command_line_names_it(tmp_path, method, param, words):
    with pytest.raises(Exception) as exc:
        hierarchy.write(tmp_path, "age" if method != "date" else "visit", method, param,
                        present_values(FRAME["age" if method != "date" else "visit"]))
    assert words in str(exc.value)
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("name", ["release.csv", "adult-ga_1.parquet", "r.sqlite", "x.y.duckdb"])
def test_a_plain_file_name_is_placed_in_the_output_folder(tmp_path, name):
    assert publish.target(tmp_path, name) == tmp_path.resolve() / name


@pytest.mark.parametrize("name", ["../escape.csv", "a/b.csv", "/etc/passwd.csv", "..\\x.csv", ".hidden.csv", "..",
                                  "", "   ", "a..b.csv", "C:\\x.csv", "r\x00.csv", "ré.csv", "x" * 300 + ".csv"])
def test_a_name_that_is_not_a_plain_file_name_is_refused(tmp_path, name):
    with pytest.raises(ParameterError):
        publish.target(tmp_path, name)


def test_a_link_out_of_the_output_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").symlink_to(tmp_path / "elsewhere.csv")
    (out / "b.sa.csv").symlink_to(tmp_path / "elsewhere.sa.csv")
    (out / "c.report.html").symlink_to(tmp_path / "elsewhere.html")
    for name in ("a.csv", "b.csv", "c.csv"):
        with pytest.raises(ParameterError, match="link that leads outside"):
            publish.target(out, name)


def _scope(method="GET", path="/api/state", **headers):
    return {"type": "http", "method": method, "path": path,
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


def _refusal(guard, scope):
    return guard.refusal(scope, {k.decode(): v.decode() for k, v in scope["headers"]})


def test_the_door_answers_its_own_host_and_origin_only():
    g = Guard(None, max_upload=10 << 20)
    assert _refusal(g, _scope(host="127.0.0.1:8000"))[0] == 403  # before its port is known: nobody
    g.allow(8000)
    assert _refusal(g, _scope(host="127.0.0.1:8000")) is None
    assert _refusal(g, _scope(host="localhost:8000")) is None
    assert _refusal(g, _scope(host="evil.example:8000"))[0] == 403  # DNS rebinding
    assert _refusal(g, _scope(host="127.0.0.1:8001"))[0] == 403
    assert _refusal(g, _scope(host="127.0.0.1:8000", origin="http://evil.example"))[0] == 403
    assert _refusal(g, _scope(host="127.0.0.1:8000", origin="null"))[0] == 403
    own = _scope("POST", "/api/load", host="127.0.0.1:8000", origin="http://127.0.0.1:8000", content_length="20")
    assert _refusal(g, own) is None
    assert _refusal(g, _scope("POST", "/api/load", host="127.0.0.1:8000", sec_fetch_site="cross-site"))[0] == 403
    assert _refusal(g, _scope("POST", "/api/load", host="127.0.0.1:8000", content_length=str(2 << 20)))[0] == 413
    assert _refusal(g, _scope("POST", "/api/upload", host="127.0.0.1:8000", content_length=str(2 << 20))) is None
    assert _refusal(g, _scope("POST", "/api/upload", host="127.0.0.1:8000", content_length=str(11 << 20)))[0] == 413
    assert _refusal(g, _scope("POST", "/api/upload", host="127.0.0.1:8000", transfer_encoding="chunked"))[0] == 411


def test_run_settings_are_checked_as_anonymize_checks_its_flags():
    from openbook.config import RunConfig

    cfg = RunConfig(input={"dataset": "synthetic"}, schema={"qi": ["age:numeric", "sex"], "sa": "occupation"})
    planned = runs.plan({"models": "l=3\nk=5", "algorithms": ["generalized-anatomy", "mondrian"],
                         "params": "strict=false", "seed": "7", "max_reid_risk": "0.5"}, cfg)
    assert [(m, a) for m, a, *_ in planned] == [("l=3", "generalized-anatomy"), ("l=3", "mondrian"),
                                                 ("k=5", "generalized-anatomy"), ("k=5", "mondrian")]
    assert planned[1][2] == {"strict": False, "seed": 7} and planned[0][2] == {"seed": 7}  # to those that take it
    assert planned[0][3]["max_reid_risk"] == 0.5
    bad = [({"models": "l=0", "algorithms": ["mondrian"]}, "l"),
           ({"models": "l=3", "algorithms": ["no-such"]}, "no-such"),
           ({"models": "l=3", "algorithms": ["mondrian"], "params": "bogus=1"}, "bogus"),
           ({"models": "l=3", "algorithms": ["mondrian"], "max_risk": "2"}, "--max-risk 2"),
           ({"models": "l=3", "algorithms": ["mondrian"], "seed": "-1"}, "--seed"),
           ({"models": "", "algorithms": ["mondrian"]}, "privacy model"),
           ({"models": "l=3", "algorithms": []}, "algorithm")]
    for body, words in bad:
        with pytest.raises(Exception) as exc:
            runs.plan(body, cfg)
        assert words in str(exc.value), (body, str(exc.value))
