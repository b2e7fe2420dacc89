"""Paper 003 (Wong et al., worst-case distribution-based background knowledge): Example 4,
Table 7, and Theorems 1-2 checked by brute force — with the counterexamples kept."""

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest

from openbook.attacks.permanent import exact_posteriors
from openbook.attacks.robustness import delta_max, min_group_size
from openbook.data.paper_tables import paper_table


def brute_posteriors_fraction(W, values):
    """p(t_j : x) by enumerating the distinct worlds of Def. 2 in exact arithmetic."""
    N = len(values)
    worlds = sorted(set(permutations(values)))
    weights = []
    for w in worlds:
        p = Fraction(1)
        for j, v in enumerate(w):
            p *= W[j][v]
        weights.append(p)
    Z = sum(weights)
    return worlds, weights, Z, [{v: sum(p for w, p in zip(worlds, weights) if w[j] == v) / Z for v in set(values)}
                                for j in range(N)]


def test_example4_table5_exact_8_over_11():
    t5, t5b = paper_table("p003_table5"), paper_table("p003_table5b")
    dist = t5.notes["distribution"]
    sig = list(t5.df["signature"])
    values = list(t5.df["X"])
    W = [{v: Fraction(str(dist[s][v])) for v in ("x", "y")} for s in sig]
    worlds, weights, Z, post = brute_posteriors_fraction(W, values)
    assert len(worlds) == t5.notes["n_possible_worlds"] == 6
    assert Z == Fraction(33, 100)
    assert post[0]["x"] == t5.notes["p_t1_x_exact"] == Fraction(8, 11)
    # the printed 0.72 is the sum of the rounded p(w|L) of w1-w3 (0.48 + 0.12 + 0.12)
    rounded = [round(float(p / Z), 2) for w, p in zip(worlds, weights) if w[0] == "x"]
    assert sum(rounded) == pytest.approx(t5.notes["p_t1_x_printed"], abs=1e-12)
    # Table 5(b): p(w) per world, in the paper's world order
    order = [tuple(t5b.df[c][i] for c in ("t1", "t2", "t3", "t4")) for i in range(6)]
    got = {w: p for w, p in zip(worlds, weights)}
    assert [float(got[w]) for w in order] == pytest.approx(list(t5b.df["p_w"]), abs=1e-12)
    assert float(got[order[0]] / Z) == pytest.approx(t5b.df["p_w_given_L"][0], abs=0.005)
    # the DP gives the same number
    Wf = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8], [0.2, 0.8]])
    assert exact_posteriors(Wf, np.array([2, 2]))[0, 0] == pytest.approx(8 / 11, abs=1e-12)


def test_table7_delta_max_from_eq4():
    t7 = paper_table("p003_table7").df
    got = np.array([delta_max(n, r, f) for n, r, f in zip(t7["N"], t7["r"], t7["f_max"])], dtype=float)
    np.testing.assert_allclose(np.round(got, 4), t7["delta_max"].to_numpy(), atol=1e-12)


def test_sec41_example_and_eq5_inverts_eq4():
    ex = paper_table("p003_table7").notes["sec4_1_example"]
    f = np.array(ex["f"])
    assert float(delta_max(ex["N"], ex["r"], f.max())) == pytest.approx(ex["delta_max"], abs=5e-5)
    assert f.max() - f.min() == pytest.approx(ex["delta"])
    rng = np.random.default_rng(0)
    for _ in range(500):
        fm = rng.uniform(0.01, 0.95)
        d = rng.uniform(0, fm * 0.95)
        r = float(rng.integers(2, 11))
        n = float(min_group_size(d, fm, r))
        assert delta_max(n, r, fm) >= d - 1e-12
        if n > r:
            assert delta_max(n - 1, r, fm) < d


def test_theorem1_counterexample_equal_f_exhausted_domain():
    """Theorem 1 fails: four tuples with the *same* f = p(s:x) = 1/10 (Δ = 0 <= Δ_max),
    x once, the group's four values exhausting the SA domain, r = 3 — yet one tuple has
    p(t:x) > 1/3. The proof's step (7) assumes Σ_y p_{v,w} over the worlds W'_a equals
    1 - f_v, which needs every other tuple's value distribution to be the same."""
    tenth = Fraction(1, 10)
    rest = [[1, 1, 8], [1, 8, 1], [5, 4, 1], [7, 1, 2]]  # tenths of the remaining 9/10
    W = [{"x": tenth, **{v: Fraction(9, 10) * Fraction(k, 10) for v, k in zip("yzw", row)}} for row in rest]
    for row in W:
        assert sum(row.values()) == 1  # each signature's distribution over the whole domain
    f = [row["x"] for row in W]
    N, r = 4, 3
    delta = max(f) - min(f)
    assert delta == 0 <= delta_max(N, r, float(max(f)))
    _, _, _, post = brute_posteriors_fraction(W, ["x", "y", "z", "w"])
    worst = max(p["x"] for p in post)
    assert worst > Fraction(1, r)
    assert float(worst) == pytest.approx(0.36515, abs=1e-5)


def test_theorem1_brute_force_random_groups_records_violations():
    """On random small A-groups (x once, Theorem 1's condition on x holds), exact
    enumeration finds p(t:x) > 1/r in a large share of them; when the condition is imposed
    on *every* value of a group that exhausts the domain, none of the sampled groups
    violates it (the bound is not refuted there)."""
    rng = np.random.default_rng(2024)
    held = viol = held_all = viol_all = 0
    for _ in range(3000):
        N = int(rng.integers(2, 7))
        r = float(rng.integers(2, N + 1))
        W = rng.dirichlet(np.full(N, 0.5), size=N)  # rows: distributions over the group's values
        W[:, 0] = rng.random() * 0.5 + rng.random(N) * 0.02
        W[:, 1:] *= ((1 - W[:, 0]) / W[:, 1:].sum(axis=1))[:, None]
        P = exact_posteriors(W, np.ones(N, dtype=np.int64))
        cond = [(W[:, c].max() - W[:, c].min()) <= delta_max(N, r, W[:, c].max()) for c in range(N)]
        if cond[0]:
            held += 1
            viol += bool(P[:, 0].max() > 1 / r + 1e-12)
        if all(cond):
            held_all += 1
            viol_all += bool(P.max() > 1 / r + 1e-12)
    assert held > 1000 and viol / held > 0.1
    assert viol_all == 0
    # every value independently: the probability is a proper distribution per tuple
    assert held_all >= 1


@pytest.fixture(scope="module")
def adult_edu(adult_frame):
    from openbook.data.datasets import EDUCATION_BEFORE_SECONDARY
    from openbook.data.schema import Schema
    from openbook.data.table import encode

    df = adult_frame.sample(n=4000, random_state=3).reset_index(drop=True)
    schema = Schema.build(qi=["age:numeric", "workclass", "marital-status", "occupation", "race"], sa="education",
                          sensitive_sets={"before-secondary": EDUCATION_BEFORE_SECONDARY})
    return encode(df, schema)


def test_theorem2_on_art_output_and_art_exact(adult_edu):
    """ART's groups all meet Theorem 1's condition, yet the exact attack finds problematic
    tuples (Theorem 2 fails on real data); ``art-exact`` has none."""
    from openbook.algorithms.art import ART, ARTExact
    from openbook.attacks.background import mine_knowledge
    from openbook.attacks.robustness import audit_groups
    from openbook.models.registry import make_model

    tab, r = adult_edu, 5
    model = make_model(f"simple-l={r},set=before-secondary")
    sens = tab.sa_domain.sensitive_mask("before-secondary")
    kn = mine_knowledge(tab, max_size=2, min_support=100)
    part = ART(model=model, max_size=2, min_support=100, seed=0).partition(tab)
    rep = audit_groups(kn, tab.qi_codes, tab.sa_codes, part.group, r=r, sensitive=sens)
    assert rep.delta["violations"] == 0.0
    assert rep.n_problematic > 0
    part2 = ARTExact(model=model, max_size=2, min_support=100, seed=0).partition(tab)
    rep2 = audit_groups(kn, tab.qi_codes, tab.sa_codes, part2.group, r=r, sensitive=sens)
    assert rep2.n_problematic == 0
    assert rep2.delta["violations"] == 0.0
