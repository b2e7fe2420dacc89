"""`openbook anonymize --algorithm NAME` writes a verified release for every algorithm; the
TOML [algorithm] section passes its keys as keyword arguments; bad parameters exit 2."""

import json

import pytest

from openbook.cli import main


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


CASES = [
    ("gg", "l=2", []), ("rgg", "l=2", ["--p", "0.4", "--seed", "3"]), ("sg", "l=2", ["--order", "hilbert"]),
    ("mondrian", "k=3", ["--strict"]), ("mondrian", "k=3", []), ("anatomy", "l=2", ["--seed", "1"]),
    ("rgg-ana", "l=2", ["--seed", "1"]), ("sg-ana", "l=2", []), ("base-ana", "l=2", []),
    ("full-domain-search", "k=3", ["--max-suppression", "0.2"]),
]


@pytest.mark.parametrize("name, model, extra", CASES)
def test_each_algorithm_writes_a_verified_release(capsys, tmp_path, small_frame, name, model, extra):
    """Certified by default: written with its certificate when it passes, refused (exit 3, no
    file) when an adversary puts someone above the target; --no-certify writes and says so."""
    p = tmp_path / "people.csv"
    small_frame.to_csv(p, index=False)
    out = tmp_path / "rel.csv"
    argv = ["anonymize", p, "--qi", "age:numeric,zip,sex", "--sa", "disease", "--identifiers", "name",
            "-m", model, "--algorithm", name, *extra, "-o", out, "--json"]
    code, o, e = run(capsys, argv)
    assert code in (0, 3), e
    if code == 3:
        assert not out.exists() and "refusing to write the release" in e and e.count("\n") == 1
        code, o, e = run(capsys, [*argv, "--no-certify"])
        assert code == 0, e
        assert json.loads(o)["certificate"]["verdict"] == "not certified"
    else:
        cert = json.loads(o)["certificate"]
        assert cert["verdict"] in ("pass", "no target")
        assert all(a["n_above"] == 0 and a["n_unresolved"] == 0 for a in cert["adversaries"])
    payload = json.loads(o)
    assert payload["algorithm"] == name and payload["check"]["holds"] is True
    assert payload["n_input"] == payload["n_published"] + payload["n_suppressed"] == 12
    code, o, e = run(capsys, ["check", out, "--json"])
    assert code == 0, e


def test_algorithm_params_from_toml(capsys, tmp_path, small_frame):
    small_frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "run.toml").write_text(
        '[input]\npath = "people.csv"\n'
        '[schema]\nqi = ["age:numeric", "zip", "sex"]\nsa = "disease"\nidentifiers = ["name"]\n'
        '[model]\nspec = "l=2"\n'
        '[algorithm]\nname = "rgg"\np = 0.5\norder = "zorder"\npriority = ["zip", "age"]\ntail = "drop"\nseed = 4\n'
        '[output]\npath = "out/rel.csv"\n[certify]\nenabled = false\n')
    code, o, e = run(capsys, ["anonymize", "--config", tmp_path / "run.toml", "--json"])
    assert code == 0, e
    meta = json.loads((tmp_path / "out" / "rel.csv.json").read_text())
    algo = meta["meta"]["algorithm"] if "meta" in meta else meta["algorithm"]
    assert algo["params"]["p"] == 0.5 and algo["params"]["order"] == "zorder"
    assert "seed" not in algo  # the seed is never published (it would let anyone replay RGG)


@pytest.mark.parametrize("name, model, extra, word", [
    ("rgg", "l=2", ["--p", "1.5"], "--p"),
    ("anatomy", "k=2", [], "no ℓ"),
    ("gg", "l=4", [], "l=4"),
    ("mondrian", "k=3", ["--order", "lex"], "order"),
    ("nope", "k=3", [], "unknown algorithm"),
])
def test_bad_algorithm_input_exits_2(capsys, tmp_path, small_frame, name, model, extra, word):
    p = tmp_path / "people.csv"
    small_frame.to_csv(p, index=False)
    out = tmp_path / "rel.csv"
    code, o, e = run(capsys, ["anonymize", p, "--qi", "age:numeric,zip,sex", "--sa", "disease",
                              "--identifiers", "name", "-m", model, "--algorithm", name, *extra, "-o", out])
    assert code == 2
    assert e.count("\n") == 1 and word in e
    assert not out.exists()
