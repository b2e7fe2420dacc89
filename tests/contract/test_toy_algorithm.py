"""Adding an algorithm is its own module plus one catalog line (issue 29): a toy algorithm,
written in a package of its own and entered in :data:`openbook.catalog.CATALOG` (and nowhere
else), is anonymized through the API, certified from its traits, saved, read back and
certified again from the files. Nothing in openbook names it.

The toy groups people by their first QI's value (a grouping by the QIs alone), so its trait
is ``replay = "qi-only"``: the algorithm-aware posterior is the class frequency, which the
test recomputes by hand. A second toy declares no replay and says why; its certificate must
not pass, with that reason.
"""

from __future__ import annotations

import sys
import textwrap
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import openbook
from openbook.catalog import CATALOG, Entry

TOY = textwrap.dedent('''
    import numpy as np

    from openbook.algorithms.base import Anonymizer
    from openbook.errors import InfeasibleError
    from openbook.release import Partition


    class FirstQIGroups(Anonymizer):
        """One class per value of the first QI (the QIs alone decide)."""

        name = "toy-first-qi"
        release_kind = "bucketized"
        replay = "qi-only"

        def params(self):
            return {}

        def partition(self, table):
            self._validate(table)
            group = np.asarray(table.columns[table.qi_names[0]].codes, dtype=np.int64)
            part = Partition.from_labels(group, provenance=self.provenance())
            counts = table.group_sa_counts(part.group, part.n_groups)
            if not np.asarray(self.model.holds(counts, table.sa_domain), dtype=bool).all():
                raise InfeasibleError("toy: a class fails the model", model=self.model)
            return part


    class Secretive(FirstQIGroups):
        """The same grouping, declared unknown to every adversary."""

        name = "toy-secretive"
        replay = None
        unaware = "the toy keeps its method to itself"
''')


@pytest.fixture
def toy_catalog(tmp_path, monkeypatch):
    pkg = tmp_path / "toy_algorithms"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "first_qi.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    # the one catalog line each
    monkeypatch.setitem(CATALOG, "toy-first-qi", Entry("toy_algorithms.first_qi", "FirstQIGroups", "bucketized",
                                                       "toy: one class per value of the first QI"))
    monkeypatch.setitem(CATALOG, "toy-secretive", Entry("toy_algorithms.first_qi", "Secretive", "bucketized",
                                                        "toy: the same, unknown to every adversary"))
    yield
    sys.modules.pop("toy_algorithms.first_qi", None)
    sys.modules.pop("toy_algorithms", None)


def _people() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    zipc = np.repeat(["z1", "z2", "z3"], n // 3)
    disease = np.array(["flu", "cold", "hiv", "cancer"])[np.r_[np.arange(n // 3) % 4, np.arange(n // 3) % 3,
                                                                 np.arange(n // 3) % 2]]
    return pd.DataFrame({"zip": zipc, "age": rng.integers(20, 70, n), "disease": disease})


def test_a_toy_algorithm_in_one_catalog_line_is_certified_and_read_back(toy_catalog, tmp_path):
    df = _people()
    rel = openbook.anonymize(df, qi=["zip"], sa="disease", model="l=2", algorithm="toy-first-qi",
                             max_risk=0.5)
    cert = rel.certificate  # the record in the release's sidecar
    assert cert["verdict"] == "pass", cert
    replay = next(f for f in cert["adversaries"] if f["adversary"] == "replay")
    assert replay["ran"] and replay["knows_algorithm"]
    # the qi-only posterior is the class frequency: worst = the largest share of one value in one zip
    worst = max(Fraction(int(s.value_counts().max()), len(s)) for _, s in df.groupby("zip")["disease"])
    assert replay["max_posterior"] == pytest.approx(float(worst), abs=1e-12)
    assert worst == Fraction(1, 2)  # z3's flu/cold halves: the table is built so
    # saved (the sidecar validator reads the names from the catalog) and certified from the files
    path = tmp_path / "toy.csv"
    rel.save(path)
    back = openbook.load_release(path)
    again = openbook.certify(back, original=df, max_risk=0.5)
    assert again.verdict == "pass"
    assert next(f for f in again.findings if f.adversary == "replay").max_posterior == pytest.approx(float(worst))


def test_a_toy_algorithm_no_adversary_knows_fails_with_its_own_reason(toy_catalog):
    df = _people()
    rel = openbook.anonymize(df, qi=["zip"], sa="disease", model="l=2", algorithm="toy-secretive", certify=False)
    cert = openbook.certify(rel, original=df, max_risk=1.0)
    assert cert.verdict == "fail"
    assert "the toy keeps its method to itself" in str(cert.unaware())
