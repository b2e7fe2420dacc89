
import numpy as np
import pytest

from openbook.algorithms import make_algorithm
from openbook.algorithms.lattice import Lattice, node_satisfies
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError, ParameterError
from openbook.hierarchy import from_levels, interval_ladder
from openbook.models import make_model


def table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    ages = np.arange(20, 36)
    h_age = interval_ladder(list(ages), [2, 4, 8], column="age")
    zips = ["1301", "1302", "1303", "1304", "1401", "1402", "1403", "1404"]
    h_zip = from_levels([[z, z[:3] + "*", z[:2] + "**", "*"] for z in zips], column="zip")
    sex = ["F", "M"]
    h_sex = from_levels([[s, "*"] for s in sex], column="sex")
    qi = np.column_stack([rng.integers(0, 16, n), rng.integers(0, 8, n), rng.integers(0, 2, n)])
    sa = rng.integers(0, 4, n)
    return EncodedTable.from_codes(
        qi_codes=qi, sa_codes=sa, qi_names=["age", "zip", "sex"],
        qi_categories=[ages, np.array(zips, dtype=object), np.array(sex, dtype=object)],
        qi_kinds=["numeric", "categorical", "categorical"],
        hierarchies={"age": h_age, "zip": h_zip, "sex": h_sex})


@pytest.mark.parametrize("spec, supp", [("k=5", 0.0), ("k=10", 0.05), ("l=3", 0.02), ("entropy-l=2", 0.0)])
def test_search_matches_exhaustive_check(spec, supp):
    t = table()
    m = make_model(spec)
    lat = Lattice(t, m, supp)
    state = lat.search()
    brute = Lattice(t, m, supp)
    truth = np.array([brute.satisfies(v) for v in lat.nodes])
    assert np.array_equal(state == 1, truth)
    assert lat.n_checked < lat.nodes.shape[0]  # predictive tagging saved checks
    mins = {tuple(v) for v in lat.minimal(state)}
    ref = {tuple(v) for v, ok in zip(lat.nodes, truth) if ok
           and not any(truth[i] for i, u in enumerate(lat.nodes) if (u <= v).all() and (u != v).any())}
    assert mins == ref


def test_chosen_node_is_optimal_among_all_satisfying_nodes():
    t = table(seed=1)
    m = make_model("k=5")
    algo = make_algorithm("full-domain-search", model=m, max_suppression=0.02)
    p = algo.partition(t)
    lat = Lattice(t, m, 0.02)
    best = min(lat.metric(v, "loss") for v in lat.nodes if lat.satisfies(v))
    assert p.provenance["metric_value"] == pytest.approx(best)
    rel = algo.anonymize(t)
    assert rel.meta["levels"] == p.provenance["levels"]
    assert p.n_suppressed <= 0.02 * t.n_rows
    assert node_satisfies(t, m, p.provenance["levels"], 0.02)


def test_metrics_and_bad_input():
    t = table()
    for metric in ("discernibility", "precision", "height"):
        p = make_algorithm("full-domain-search", model=make_model("k=5"), metric=metric).partition(t)
        assert p.provenance["params"]["metric"] == metric and p.n_suppressed == 0
    with pytest.raises(ParameterError):
        make_algorithm("full-domain-search", model=make_model("k=5"), metric="nope").partition(t)
    with pytest.raises(ParameterError):
        make_algorithm("full-domain-search", model=make_model("k=5"), max_suppression=2).partition(t)
    with pytest.raises(InfeasibleError):
        make_algorithm("full-domain-search", model=make_model("k=301")).partition(t)


def test_adult_arx_k5_node_at_least_as_good_as_arx(adult_frame):
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.hierarchy import adult_hierarchies

    qi = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
    h = adult_hierarchies("arx")
    t = encode(adult_frame, Schema.build(qi=["age:numeric", *qi[1:]], sa="occupation"), {c: h[c] for c in qi})
    m = make_model("k=5")
    p = make_algorithm("full-domain-search", model=m).partition(t)
    assert p.provenance["n_nodes"] == 2160
    arx = [4, 2, 2, 0, 1, 0, 2]
    lat = Lattice(t, m, 0.0)
    assert lat.satisfies(arx)
    assert p.provenance["metric_value"] <= lat.metric(arx, "loss") + 1e-12
    assert p.n_suppressed == 0


def test_mask_bounds_count_the_rows_of_unkept_combinations():
    """The suppression-aware bounds read packed masks: the rows of the combinations whose bit
    is 0, against the unpacked sum, for sizes around the byte boundary; and the decision of
    a node between two satisfying nodes above and two failing nodes below it (the states
    the search calls it in) against the bounds computed on unpacked masks."""
    from openbook.algorithms.lattice_search import FAIL, SAT, UNKNOWN, MaskBounds

    rng = np.random.default_rng(7)
    decided, seen = 0, set()
    for m in (1, 7, 8, 9, 23, 64, 100):
        w = rng.integers(1, 5, m)
        for _ in range(40):
            kept = rng.random(m) < rng.random()
            mb = MaskBounds(w, 0, 1)
            assert mb._unkept(np.packbits(kept)) == int(w[~kept].sum())
            masks = rng.random((4, m)) < np.array([0.5, 0.5, 0.9, 0.9])[:, None]
            unkept = [int(w[~k].sum()) for k in masks]
            # rows 0, 1 below (1, 1) must fail, rows 2, 3 above it must satisfy
            lo, hi = max(unkept[2], unkept[3]), min(unkept[0], unkept[1]) - 1
            if lo > hi:
                continue
            budget = int(rng.integers(lo, hi + 1))
            mb = MaskBounds(w, budget, 2)
            for levels, k in zip(([0, 1], [1, 0], [2, 1], [1, 2]), masks):
                mb.add(np.array(levels), k)
            sure = int(w[~(masks[2] & masks[3])].sum())  # suppressed above: suppressed at (1, 1)
            maybe = int(w[~(masks[0] | masks[1])].sum())  # kept below: kept at (1, 1)
            want = FAIL if sure > budget else SAT if maybe <= budget else UNKNOWN
            assert mb.decide(np.array([1, 1])) == want
            decided += 1
            seen.add(want)
    assert decided >= 20 and seen == {FAIL, SAT, UNKNOWN}
