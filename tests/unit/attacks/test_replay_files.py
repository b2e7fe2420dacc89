"""A certificate computed from the saved files equals the one computed when the release was
made (paper 000 §5.1: the adversary sees only the file). For generalized releases of GG,
RGG, SG (published generalized), Mondrian strict and relaxed, and full-domain generalization
and search on Adult, ``certify`` on the loaded release reproduces the sidecar's certificate
— the same verdict and figures, and the same posterior for every person — and the replay
adversary ran (no "not the leaves of a Mondrian tree"). The CLI round trip of the issue
(strict Mondrian, --max-risk 1, then ``openbook certify FILE --original adult``) as well."""

from __future__ import annotations

import json

import numpy as np
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.certificate import certify, certify_release
from openbook.data.datasets import load_dataset
from openbook.models import make_model
from openbook.release.io import load_release, sidecar_path

from cli_harness import run_cli

MODEL = "simple-l=6,set=tech-support"
CASES = [
    ("gg", {}, "generalized"),
    ("rgg", {"p": 0.65, "seed": 1}, "generalized"),
    ("sg", {}, "generalized"),
    ("mondrian", {"strict": True}, None),
    ("mondrian", {"strict": False}, None),
    ("full-domain", {"levels": [3, 1, 3, 2, 1, 0, 3]}, None),
    ("full-domain-search", {"max_suppression": 0.02}, None),
]


@pytest.fixture(scope="module")
def adult_rows(adult_dir):
    """The first 6,000 people of Adult (7 QIs; occupation as the SA)."""
    return load_dataset("adult").encode().take(range(6000))


def _figures(cert) -> list[tuple]:
    return [(f.adversary, f.applies, f.ran, f.target, f.max_posterior, f.n_people, f.n_absent, f.n_above,
             f.n_unresolved, f.method, f.error) for f in cert.findings]


@pytest.mark.parametrize("name,params,kind", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_certificate_from_files_equals_the_sidecar(name, params, kind, adult_rows, tmp_path):
    table = adult_rows
    algo = make_algorithm(name, model=make_model(MODEL), **params)
    release = algo.anonymize(table, kind=kind)
    made = certify_release(release, original=table, enforce=False)
    assert made is not None
    path = tmp_path / "r.csv"
    release.save(path)
    loaded = load_release(path)
    assert loaded.partition is None and loaded.source_rows is None  # only the files
    again = certify(loaded, original=table)
    assert again.verdict == made.verdict
    assert _figures(again) == _figures(made)
    sidecar = json.loads(sidecar_path(path).read_text())["certificate"]
    assert sidecar["verdict"] == again.verdict
    for f, g in zip(sidecar["adversaries"], again.findings):
        # the public sidecar says "some" (None) for a count above 0 (it may count absent people)
        assert (f["adversary"], f["max_posterior"], f["n_above"], f["n_unresolved"]) == (
            g.adversary, g.max_posterior, g.n_above or 0 if not g.n_above else None,
            g.n_unresolved or 0 if not g.n_unresolved else None)
    # the same posterior (and standard error) for every person
    assert set(again.results) == set(made.results)
    for adv, res in made.results.items():
        np.testing.assert_array_equal(again.results[adv].posterior, res.posterior, err_msg=adv)
        if res.stderr is not None:
            np.testing.assert_array_equal(again.results[adv].stderr, res.stderr, err_msg=adv)
    if name in ("gg", "rgg", "sg", "mondrian", "full-domain"):
        replay = next(f for f in again.findings if f.adversary == "replay")
        assert replay.ran and replay.error is None


def test_cli_certify_of_a_saved_strict_mondrian_release(capsys, tmp_path, adult_dir):
    out = tmp_path / "m.csv"
    code, o, e = run_cli(capsys, ["anonymize", "--dataset", "adult", "-m", MODEL, "--quiet", "--algorithm",
                                  "mondrian", "--strict", "--max-risk", "1", "--max-reid-risk", "1", "-o", out])
    assert code == 0, e
    sidecar = json.loads(sidecar_path(out).read_text())["certificate"]
    code, o, e = run_cli(capsys, ["certify", out, "--original", "adult", "--max-risk", "1", "--max-reid-risk", "1",
                                  "--json", "--quiet"])
    assert code == 0, e
    cert = json.loads(o)
    keys = ("adversary", "ran", "max_posterior", "n_above", "n_unresolved", "method", "error")  # the public ones
    assert [[a[k] for k in keys] for a in cert["adversaries"]] == [[a[k] for k in keys] for a in sidecar["adversaries"]]
    replay = next(a for a in cert["adversaries"] if a["adversary"] == "replay")
    assert replay["ran"] and replay["error"] is None and replay["n_unresolved"] == 0
    assert cert["verdict"] == sidecar["verdict"] == "pass"
