"""The release record is declared once (:mod:`openbook.release.record`): the sidecar's writer,
validator and JSON Schema read the declarations, every key the code reads or writes on a
release's ``meta`` is declared, what stays in memory is never written, and the certificate's
records are the declared ones."""

from __future__ import annotations

import ast
import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, TypedDict

import numpy as np
import pandas as pd
import pytest

from openbook.release import record
from openbook.release.record import MEMORY, OPT_IN, PUBLIC, WRITER, FindingRecord, Line, ReleaseMeta, keys
from openbook.release.sidecar import FINDING_KEYS, LINE_KEYS, TOP_KEYS, public_record

SRC = Path(__file__).resolve().parents[3] / "src" / "openbook"


def _meta_keys_in_source() -> set[tuple[str, str, int]]:
    """Every string key the package reads or writes on a release's metadata: ``X.meta[...]``,
    ``X.meta.get(...)`` / ``.setdefault`` / ``.pop`` (the attribute ``meta`` of anything — a
    release), as ``(key, file, line)``."""
    found = set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            target = key = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                target, key = node.value, node.slice.value
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("get", "setdefault", "pop") and node.args
                  and isinstance(node.args[0], ast.Constant)):
                target, key = node.func.value, node.args[0].value
            if isinstance(target, ast.Attribute) and target.attr == "meta" and isinstance(key, str):
                found.add((key, str(path.relative_to(SRC)), node.lineno))
    return found


def test_every_key_read_or_written_on_a_release_is_declared():
    declared = set(keys(ReleaseMeta))
    used = _meta_keys_in_source()
    assert len(used) > 40  # the scan finds the package's uses (it can fail)
    undeclared = sorted(u for u in used if u[0] not in declared)
    assert not undeclared, undeclared


def test_the_validator_reads_the_declarations():
    assert TOP_KEYS == keys(ReleaseMeta, PUBLIC, OPT_IN, WRITER)
    assert set(keys(ReleaseMeta, MEMORY)) == {"skew_spread", "distortion", "signature_verified"}
    assert not set(TOP_KEYS) & set(keys(ReleaseMeta, MEMORY))
    assert FINDING_KEYS[0] == keys(FindingRecord) and set(FINDING_KEYS[1]) == {"adversary", "applies", "ran"}
    assert keys(FindingRecord, OPT_IN) == ("n_people", "n_absent", "seconds")
    assert LINE_KEYS[0] == keys(Line)


def test_a_key_without_a_disclosure_is_refused():
    class Bad(TypedDict, total=False):
        fine: Annotated[int, PUBLIC]
        bare: int

    with pytest.raises(TypeError, match="without a disclosure"):
        keys(Bad)


def test_the_certificates_records_are_the_declared_ones():
    """``Certificate.to_dict`` writes the keys :class:`CertificateRecord` declares (mypy checks
    the literal; this checks a real one), a finding and a line theirs."""
    import openbook as ob
    from openbook.certificate import Finding

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 60, 120), "zip": rng.choice(list("ab"), 120),
                       "disease": rng.choice(["flu", "cold", "hiv"], 120)})
    rel = ob.anonymize(df, qi=["age:numeric", "zip"], sa="disease", model="l=2", seed=1)
    cert = rel.meta["certificate"]
    assert set(cert) == set(keys(record.CertificateRecord))
    assert all(set(f) == set(keys(FindingRecord)) for f in cert["adversaries"])
    assert all(set(ln) == set(keys(Line)) for ln in cert["lines"])
    assert issubclass(Finding, FindingRecord) and set(asdict(Finding("a", "t", "p", "attribute", True, "r"))) == \
        set(keys(FindingRecord))


@pytest.mark.parametrize("opt_in", [False, True])
def test_what_stays_in_memory_is_never_written(opt_in):
    """A release with every in-memory key: none reaches the sidecar, opted in or not; the
    opted-in keys only when chosen."""
    meta = {"kind": "generalized", "schema": {"qi": [], "sa": {"name": "s"}}, "n_published": 3, "n_input": 5,
            "n_suppressed": 2, "skew_spread": {"mean": 0.1}, "distortion": {"x": 1}, "signature_verified": "yes"}
    out = public_record(meta, publish_suppressed_count=opt_in)
    assert not set(out) & set(keys(ReleaseMeta, MEMORY))
    assert ("n_input" in out and "n_suppressed" in out) is opt_in
    assert set(out) <= set(TOP_KEYS)
    json.dumps(out)


def test_the_validator_and_the_certificate_share_one_verdict_rule():
    """Every combination of a finding's figures: a sidecar saying ``pass`` with that finding is
    accepted exactly when the certificate's rule passes it (or does not judge it)."""
    import itertools

    from openbook.errors import DataError
    from openbook.release.release import KINDS
    from openbook.release.sidecar import validate

    meta = {"kind": "generalized", "n_published": 1,
            "schema": {"qi": [{"name": "a", "kind": "numeric"}], "sa": {"name": "s", "kind": "categorical"}}}
    line = {"name": "attribute", "passes": True, "target": 0.5, "source": "x"}
    seen = set()
    for applies, ran, above, unres, target in itertools.product([True, False], [True, False], [0, 2, None],
                                                                 [0, 3, None], [None, 0.5]):
        f = FindingRecord("a", "t", "p", "attribute", applies, "r", ran=ran, target=target)
        f.n_above, f.n_unresolved = above, unres  # type: ignore[assignment]
        rec = {k: v for k, v in asdict(f).items() if k not in ("n_people", "n_absent", "seconds")}
        cert = {"verdict": "pass", "lines": [line], "adversaries": [rec]}
        ok = not f.judged or f.passes
        seen.add(ok)
        try:
            validate({**meta, "certificate": cert}, "test", kinds=KINDS, database=None)
            accepted = True
        except DataError as exc:
            assert "is 'pass' but an adversary it lists fails" in str(exc)
            accepted = False
        assert accepted is ok, (applies, ran, above, unres, target)
    assert seen == {True, False}
    assert record.verdict_of([True, True]) == "pass" and record.verdict_of([True, False]) == "fail"


@pytest.mark.parametrize("field_name, value, needle", [
    ("title", 5, "certificate.adversaries[0].title is 5, not a string"),
    ("applies", "yes", "certificate.adversaries[0].applies is \"yes\", not true or false"),
    ("params", [], "certificate.adversaries[0].params is [], not an object"),
    ("max_posterior", "high", "certificate.adversaries[0].max_posterior is \"high\", not a finite number"),
    ("n_above", -1, "certificate.adversaries[0].n_above is -1, not an integer >= 0"),
    ("n_people", None, "certificate.adversaries[0].n_people is null, not an integer >= 0"),
    ("max_posterior", 1.5, "certificate.adversaries[0].max_posterior is 1.5, not a probability"),
])
def test_a_finding_is_decoded_by_its_declared_types(field_name, value, needle):
    """The validator decodes a finding by the types :class:`FindingRecord` declares, then the
    rules no type says (ranges); each failure one line naming the key."""
    from openbook.errors import DataError
    from openbook.release.release import KINDS
    from openbook.release.sidecar import validate

    meta = {"kind": "generalized", "n_published": 1,
            "schema": {"qi": [{"name": "a", "kind": "numeric"}], "sa": {"name": "s", "kind": "categorical"}}}
    rec = {k: v for k, v in asdict(FindingRecord("a", "t", "p", "attribute", True, "r", ran=True)).items()
           if k not in ("n_people", "n_absent", "seconds")}
    cert = {"verdict": "fail", "lines": [], "adversaries": [{**rec, field_name: value}]}
    validate({**meta, "certificate": {**cert, "adversaries": [rec]}}, "s.json", kinds=KINDS, database=None)
    with pytest.raises(DataError) as exc:
        validate({**meta, "certificate": cert}, "s.json", kinds=KINDS, database=None)
    assert needle in str(exc.value) and "\n" not in str(exc.value)
