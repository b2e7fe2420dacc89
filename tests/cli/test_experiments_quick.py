"""Every registered experiment's ``--quick`` variant runs and writes CSV + PNG + provenance."""

import json
import re

import pandas as pd
import pytest

from openbook.cli import main
from openbook.experiments.registry import list_experiments

NAMES = [e.name for e in list_experiments()]


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory):
    """One folder for every quick run of this module (the report test renders from it)."""
    return tmp_path_factory.mktemp("experiments-quick")


@pytest.mark.slow  # several seconds per case: run by .ci/run (pytest -m slow)
@pytest.mark.parametrize("name", NAMES)
def test_quick_experiment_writes_outputs(name, quick_out, capsys, adult_dir):
    tmp_path = quick_out
    code = main(["experiment", name, "--quick", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    prov = json.loads(out)
    assert prov["experiment"] == name and prov["quick"] is True and prov["seed"] == 0
    assert prov["version"] and prov["elapsed_s"] >= 0 and prov["command"]
    csv = tmp_path / f"{name}.csv"
    assert csv.is_file() and len(pd.read_csv(csv)) > 0
    png = tmp_path / f"{name}.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / f"{name}.provenance.json").read_text())["files"]


def test_own_experiments_registered():
    for name in ("cormode2010-fig5", "wong2007-fig3", "wong2007-fig4", "wong2007-fig5", "wong2007-fig6"):
        assert name in NAMES


def test_report_renders_every_experiment(quick_out, capsys, adult_dir):
    """``openbook experiment report --markdown`` over the quick outputs (``--reuse``; runs any
    experiment this session has not run): one section per experiment group, every number read
    from the CSVs, no missing value printed; bad use exits 2 with one line."""
    for name in NAMES:
        if not (quick_out / f"{name}.provenance.json").exists():
            assert main(["experiment", name, "--quick", "--out", str(quick_out), "--quiet"]) == 0
    capsys.readouterr()
    md = quick_out / "EXPERIMENTS.md"
    code = main(["experiment", "report", "--markdown", str(md), "--quick", "--reuse", "--out", str(quick_out), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sorted(json.loads(out)["experiments"]) == sorted(NAMES)
    text = md.read_text()
    for name in NAMES:
        assert f"`{name}`" in text
    assert not re.search(r"\bnan\b|\bNone\b", text)
    assert "2.52 and 2.70" in text and "(6/5)^5 = 2.4883" in text
    assert main(["experiment", "report", "--out", str(quick_out)]) == 2
    assert main(["experiment", "report", "--markdown", str(md), "--reuse", "--out", str(quick_out)]) == 2  # not quick
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--reuse" in err
