"""``openbook report`` rendered in headless Chromium (Debian's ``chromium``; ``.ci/run``
installs it): the screenshot is not blank and the key numbers are in the DOM."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from openbook.attacks.baseline import baseline_attack
from openbook.cli import main
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.release import load_release
from openbook.utility.metrics import release_utility

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium(args, profile):
    if CHROMIUM is None:
        if os.environ.get("OPENBOOK_REQUIRE_CHROMIUM") == "1":  # .ci/run installs it and sets this
            pytest.fail("chromium is not installed but OPENBOOK_REQUIRE_CHROMIUM=1")
        pytest.skip("no chromium on this machine (apt-get install -y chromium); .ci/run requires it")
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=120)


def test_report_renders_in_chromium(capsys, tmp_path, small_frame):
    data = tmp_path / "people.csv"
    small_frame.to_csv(data, index=False)
    rel_path = tmp_path / "rel.csv"
    assert main(["anonymize", str(data), "--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name",
                 "-m", "l=2", "--levels", "2,1,1", "--max-suppression", "0.5", "--no-certify", "-o", str(rel_path),
                 "--json"]) == 0
    capsys.readouterr()
    report = tmp_path / "report.html"
    code = main(["report", str(rel_path), "--original", str(data),
                 "--adversary", "baseline", "--queries", "200", "-o", str(report), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["report"] == str(report)

    # the numbers the page must show, computed independently of the report module
    rel = load_release(rel_path)
    schema = Schema.from_dict(rel.meta["schema"])
    table = encode(small_frame, schema)
    summary = baseline_attack(rel).summary()
    il = release_utility(rel, table)["information_loss"]

    png = tmp_path / "shot.png"
    res = _chromium([f"--screenshot={png}", "--window-size=1200,2000", report.as_uri()], tmp_path / "profile1")
    assert png.is_file(), res.stderr[-2000:]
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    gray = img[..., :3].mean(axis=2)
    assert gray.std() > 0.05  # not a blank page
    assert (gray < 0.5).mean() > 0.005  # some dark pixels: text and plots were drawn

    res = _chromium(["--dump-dom", report.as_uri()], tmp_path / "profile2")
    dom = res.stdout
    assert "Adversary: baseline" in dom and "Model check" in dom and "Provenance" in dom
    # the verdict is the page's first section, the legend follows; no raw JSON anywhere
    sections = [dom.index(x) for x in ('id="verdict"', 'id="legend"', "<h2>Release</h2>", "<h2>Model check</h2>",
                                       'id="adversary-0"', "<h2>Utility</h2>", "<h2>Provenance</h2>")]
    assert sections == sorted(sections) and dom.index("<h1>") < sections[0]
    assert "NOT CERTIFIED" in dom or "PUBLISHABLE" in dom or "NO TARGET" in dom
    assert "What the figures mean" in dom and "risk × 1/ℓ" in dom and "unresolved" in dom
    assert "<pre" not in dom and '{"' not in dom
    assert f"{summary.vulnerable_fraction:.2%}" in dom
    assert f"{summary.max_risk_multiple:.4g}" in dom
    assert f"{summary.max_posterior:.4g}" in dom
    assert f"{il:.4g}" in dom
    assert f"<th>rows in</th><td>{len(small_frame):,}</td>" in dom  # |T|: the original given to the report
    # the unresolved count as failing: the share is "vulnerable or unresolved", with both counts beside it
    assert (f"{summary.vulnerable_fraction:.2%} ({summary.n_vulnerable:,} vulnerable, "
            f"{summary.n_unresolved:,} unresolved)") in dom
    assert np.isfinite(il)
