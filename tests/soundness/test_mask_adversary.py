"""The adversary who knows MASK (:mod:`openbook.attacks.distortion`) against the brute force.

MASK changes SA values, so the brute force's worlds are every SA vector over the table's values,
each weighed by a prior (the certificate's: the published distribution i.i.d.; and uniform over
the table's values) times the probability over every outcome of MASK's draws (the proportions,
the tuples distorted, their new values) that the world publishes every byte of the release
(data, SA-table, sidecar) — :mod:`.brute`. The replay's figure of a class MASK cannot have
distorted must equal the brute force under both priors; every other figure is a bound that must
lie above it under both; a pass must put nobody above its target. The random tables run in
``test_soundness.py`` (the slice and, slow, seeds 100–111); here the hand-made cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from openbook.attacks.distortion import distortable
from openbook.certificate import certify

from .brute import exact_posterior
from .judge import judge, make
from .tables import Case


def _case(frame: pd.DataFrame, spec: str = "simple-l=2,set=s", k: int = 3, max_risk: float | None = None) -> Case:
    return Case(frame, ["age:numeric", "sex"], "mask", {"k": k}, spec, "simple-l-set", max_risk=max_risk, seed=0,
                sets={"s": ["hiv"]}, trees={})


def test_a_class_whose_count_the_rounding_reaches_may_be_distorted():
    """Three women of 30 (hiv, flu, flu: proportion 1/3, ℓ-diverse), two men of 30, both hiv,
    and two of 60 with flu (so that the table is 2-eligible), k = 2: the young men's class
    violates simple 2-diversity, MASK draws p = 1/3 and keeps round(2/3) = 1 of their hiv — more
    than 1/3 of two. A class showing 1 of 2 may therefore be distorted though 2 · 1/3 < 1: MASK
    rounds to the nearest. The adversary who knows MASK puts the young men above the 1/2 they
    show (the brute force, both priors), and the replay's bound lies above that; a check that
    forgot the rounding would call their class undistorted and state 1/2 as exact."""
    frame = pd.DataFrame({"age": [30] * 5 + [60] * 2, "sex": ["F"] * 3 + ["M"] * 4,
                          "disease": ["hiv", "flu", "flu", "hiv", "hiv", "flu", "flu"]})
    case = _case(frame, k=2)
    table = case.table()
    release, factory = make(case, table)
    counts, domain = release.sa_counts()
    hiv = [str(v) for v in domain.values].index("hiv")
    young = int(np.flatnonzero((counts.sum(axis=1) == 2) & (counts[:, hiv] == 1))[0])
    assert distortable(counts, np.asarray([str(v) == "hiv" for v in domain.values]))[young]
    ex = exact_posterior(case, table, release, factory, budget=10**6)
    cats = [str(v) for v in table.columns[table.sa_name].categories]
    for prior in ("cert", "uniform"):
        assert all(ex[prior][i, cats.index("hiv")] > 0.5 for i in (3, 4))  # above what they show
    out = judge(case, budget=10**6)
    assert out.brute and not out.replay_wrong and not out.false_pass, out.explain()
    cert = certify(release, original=table)
    assert cert.aware["adversary"] == "replay" and cert.verdict == "fail"
    assert np.all(cert.results["replay"].max_bound()[3:5] >= float(ex["cert"][3, cats.index("hiv")]))


def test_a_class_no_drawn_proportion_reaches_is_published_as_it_was():
    """Two classes: four women with no hiv and four men with two. MASK could have distorted the
    women's class only by drawing the men's proportion 1/2 — round(4 · 1/2) = 2 > 0, so it may; the
    men's class could only have drawn the women's 0, which keeps no hiv, yet it shows two: it was
    published as it was, and its frequency 1/2 is the exact posterior (the brute force, both
    priors) — the certificate passes at max_risk 0.5 only if the women's bound allows it."""
    frame = pd.DataFrame({"age": [20, 21, 22, 23, 40, 41, 42, 43], "sex": ["F"] * 4 + ["M"] * 4,
                          "disease": ["flu"] * 4 + ["hiv", "hiv", "flu", "flu"]})
    case = _case(frame, k=4, max_risk=0.5)
    table = case.table()
    release, factory = make(case, table)
    counts, domain = release.sa_counts()
    s = np.asarray([str(v) == "hiv" for v in domain.values])
    dist = distortable(counts, s)
    men = int(np.flatnonzero(counts[:, s].sum(axis=1) == 2)[0])
    assert not dist[men] and dist[1 - men]
    ex = exact_posterior(case, table, release, factory, budget=10**6)
    hiv = [str(v) for v in table.columns[table.sa_name].categories].index("hiv")
    for prior in ("cert", "uniform"):
        assert [ex[prior][i, hiv] for i in range(4, 8)] == [0.5] * 4
    out = judge(case, budget=10**6)
    assert out.brute and not out.replay_wrong and not out.false_pass, out.explain()
    assert out.verdict == "fail"  # the women's class may have been four hiv: bound 1


def test_one_class_is_never_distorted():
    """A table MASK makes one class of: no other class's proportion to draw from (L would be
    empty and MASK refuses), so a class it published holds the model as it was: the replay's
    figure is the class frequency, exact, and the certificate can pass."""
    frame = pd.DataFrame({"age": [20, 21, 22, 23], "sex": ["F"] * 4, "disease": ["hiv", "flu", "flu", "cold"]})
    case = _case(frame, k=4, max_risk=0.5)
    out = judge(case, budget=10**6)
    assert out.brute and out.verdict == "pass" and not out.false_pass and not out.replay_wrong, out.explain()


def test_a_file_class_joining_several_of_masks_classes_is_never_taken_as_undistorted():
    """Labels of two of MASK's classes may coincide in the file (ordered categorical cuts can
    print as the same hierarchy node): the file then shows one class whose parts' proportions
    it hides, so "no other class's proportion reaches it" no longer rules distortion out. The
    release above with its two classes' labels made equal: one published class, the men's two
    hiv and the women's none together — the adversary, re-running MASK's first step on the QIs,
    sees two of its classes in it and bounds it (1) instead of stating 2/8 as exact."""
    import copy

    frame = pd.DataFrame({"age": [20, 21, 22, 23, 40, 41, 42, 43], "sex": ["F"] * 4 + ["M"] * 4,
                          "disease": ["flu"] * 4 + ["hiv", "hiv", "flu", "flu"]})
    case = _case(frame, k=4, max_risk=0.5)
    table = case.table()
    release, _ = make(case, table)
    assert certify(release, original=table).results["replay"].notes["merged_classes"] is False
    joined = copy.copy(release)
    joined.meta = dict(release.meta)
    joined.partition = None  # read from the file alone
    data = release.data.copy()
    for col in ("age", "sex"):
        data[col] = data[col].astype(str).iloc[0]
    joined.data = data
    assert joined.classes()[1] == 1
    rep = certify(joined, original=table).results["replay"]
    assert rep.notes["merged_classes"] is True
    assert np.all(rep.max_bound() == 1.0)


def test_a_first_step_that_is_not_the_files_tells_nothing():
    """The adversary's re-run of MASK's first step must refine the published classes: one of
    its classes spread over two published classes means the re-run is not the file's (another
    table), and then — as when a published class joins two of its classes — no class is taken
    as undistorted."""
    from openbook.attacks.distortion import _joins_several

    group = np.array([0, 0, 1, 1, -1])
    assert not _joins_several(group, np.array([5, 5, 7, 7, 9]))
    assert _joins_several(group, np.array([0, 1, 2, 2, 3]))  # a published class joins two
    assert _joins_several(group, np.array([0, 0, 0, 1, 1]))  # a re-run class spread over two
