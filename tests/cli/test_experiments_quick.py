"""Every registered experiment's ``--quick`` variant runs and writes CSV + PNG + provenance."""

import json

import pandas as pd
import pytest

from openbook.cli import main
from openbook.experiments.registry import list_experiments

NAMES = [e.name for e in list_experiments()]


@pytest.mark.parametrize("name", NAMES)
def test_quick_experiment_writes_outputs(name, tmp_path, capsys, adult_dir):
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
