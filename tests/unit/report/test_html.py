"""The HTML report: self-contained, every section present, the numbers the modules compute."""

import re

import numpy as np

from openbook.attacks.baseline import baseline_attack
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.models import make_model
from openbook.release import Partition, build_release
from openbook.report.html import build_report, render_report, write_report
from openbook.utility.metrics import release_utility


def _release(small_frame):
    schema = Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease", identifiers=["name"])
    t = encode(small_frame, schema)
    part = Partition(np.repeat(np.arange(4), 3), 4)
    return t, build_release(t, part, model=make_model("l=2"))


def test_report_sections_and_numbers(small_frame, tmp_path):
    t, rel = _release(small_frame)
    attack = baseline_attack(rel)
    s = attack.summary()
    util = release_utility(rel, t)
    page = build_report(rel, adversaries=["baseline"], table=t, n_queries=200)
    for heading in ("Verdict", "What the figures mean", "Release", "Model check", "Adversary: baseline",
                    "Riskiest published classes", "Utility", "COUNT-query error", "Provenance"):
        assert heading in page
    assert page.index("Verdict") < page.index("What the figures mean") < page.index("<h2>Release</h2>")
    assert f"{s.vulnerable_fraction:.2%}" in page
    assert f"{util['information_loss']:.4g}" in page
    assert page.count("<svg") >= 2  # the posterior histogram and the ARE chart
    # self-contained: no external resource, no script
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert "<script" not in page.lower()
    out = write_report(tmp_path / "r.html", page)
    assert out.read_text(encoding="utf-8") == page
    assert not list(tmp_path.glob(".*.tmp"))


def test_report_without_original_or_adversary(small_frame):
    _, rel = _release(small_frame)
    page = render_report(rel)
    assert "NOT CERTIFIED" in page and "no adversary's per-person figures" in page and "give the original data" in page
    assert "holds" in page  # the model check still runs from the sidecar's model


def test_vulnerable_release_is_flagged(small_frame):
    # a class with two equal diseases: the baseline posterior is 1 > 1/2
    schema = Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease", identifiers=["name"])
    df = small_frame.copy()
    df["disease"] = ["flu", "flu"] + list(df["disease"].iloc[2:])
    t = encode(df, schema)
    rel = build_release(t, Partition(np.array([0, 0] + [1] * 10), 2), model=None)
    from openbook.certificate import certify

    res = baseline_attack(rel, model=make_model("l=2"))
    cert = certify(rel, adversaries=["baseline"], max_risk=0.5)
    assert cert.verdict == "fail"
    page = render_report(rel, certificate=cert, attacks=list(cert.results.values()))
    assert 'class="bad"' in page and "NOT PUBLISHABLE" in page
    assert f"{res.summary(l=2).max_risk_multiple:.4g}" in page


def test_report_with_the_replay_adversary(small_frame):
    """The algorithm-aware adversary's section appears with its own numbers."""
    from openbook.algorithms import make_algorithm
    from openbook.attacks.replay import replay_release

    schema = Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease", identifiers=["name"])
    t = encode(small_frame, schema)
    rel = make_algorithm("gg", seed=0, model=make_model("l=2")).anonymize(t)
    s = replay_release(rel, t, worlds=2000, seed=0).summary()
    page = build_report(rel, adversaries=["baseline", "replay"], table=t, n_queries=50)
    assert "Adversary: replay" in page and "Adversary: baseline" in page
    assert f"{s.vulnerable_fraction:.2%}" in page


def test_hostile_values_are_escaped(small_frame):
    """Column names and values are text on the page: markup in them is escaped by the
    template (autoescaping), never run or parsed."""
    from openbook.certificate import certify

    df = small_frame.rename(columns={"zip": "<b>zip</b>"})
    df["disease"] = df["disease"].replace({"flu": "<script>alert(1)</script>", "hiv": '"><img src=x onerror=1>'})
    schema = Schema.build(qi=["age:numeric", "<b>zip</b>", "sex"], sa="disease", identifiers=["name"])
    t = encode(df, schema)
    rel = build_release(t, Partition(np.repeat(np.arange(4), 3), 4), model=make_model("l=2"))
    cert = certify(rel, original=t, max_reid_risk=1.0)
    page = render_report(rel, certificate=cert, attacks=list(cert.results.values()), title="<i>t</i>")
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<b>zip" not in page
    assert "<i>t</i>" not in page and "&lt;i&gt;t&lt;/i&gt;" in page
    assert "&lt;b&gt;zip&lt;/b&gt;" in page
