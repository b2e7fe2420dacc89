"""`openbook audit --adversary minimality|baseline` end to end (paper 001 Table 4 -> 5)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from openbook.cli import main
from openbook.data.paper_tables import paper_table
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.hierarchy.builders import from_mapping
from openbook.models.registry import make_model
from openbook.release import Partition, build_release, save_release


@pytest.fixture()
def files(tmp_path):
    df = paper_table("p001_table4").df
    t = encode(df, Schema.build(qi=["qid"], sa="disease", sensitive_sets={"hiv": ["HIV"]}),
               {"qid": from_mapping({"q1": "Q", "q2": "Q", "q3": "Q", "Q": "*"}, "qid")})
    rel = build_release(t, Partition.from_labels([0] * len(df)), model=make_model("simple-l=2,set=hiv,set-mode=total"))
    save_release(rel, tmp_path / "rel.csv")
    df.to_csv(tmp_path / "orig.csv", index=False)
    (tmp_path / "qid.csv").write_text("q1;Q;*\nq2;Q;*\nq3;Q;*\n")  # the hierarchy the release used
    return tmp_path


def test_minimality_audit_json_and_posteriors(files, capsys):
    out = files / "post.csv"
    rc = main(["audit", str(files / "rel.csv"), "--adversary", "minimality", "--original",
               str(files / "orig.csv"), "--hierarchy", f"qid={files / 'qid.csv'}", "--posteriors-out", str(out),
               "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["m_confidential"] is False and d["n_vulnerable"] == 4
    assert d["max_posterior"] == pytest.approx(53 / 86)
    assert d["n_sensitive"] == 5 and d["vulnerable_sensitive_fraction"] == pytest.approx(3 / 5)
    post = pd.read_csv(out)
    assert post["p[set:hiv]"].iloc[0] == pytest.approx(53 / 86)


def test_baseline_audit_table(files, capsys):
    rc = main(["audit", str(files / "rel.csv"), "--adversary", "baseline"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "m-confidential at m = " in text and "highest posterior" in text
    assert "m_confidential" not in text  # words for the terminal; the JSON keeps the keys


def test_minimality_audit_needs_knowledge(files, capsys):
    rc = main(["audit", str(files / "rel.csv"), "--adversary", "minimality"])
    assert rc == 2 and "--original" in capsys.readouterr().err
