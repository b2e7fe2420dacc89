"""ART / art-exact (paper 003 §4.2) on small synthetic tables."""

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import make_algorithm
from openbook.attacks.robustness import audit_groups
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import ParameterError
from openbook.inference.knowledge import mine_knowledge
from openbook.inference.theorem1 import delta_max
from openbook.models.registry import make_model


def _table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 4, n).astype(str), "b": rng.integers(0, 3, n).astype(str)})
    p = np.where(df["a"] == "0", 0.08, 0.03)
    u = rng.random(n)
    df["s"] = np.where(u < p, "x", np.where(u < p + 0.02, "x2", rng.choice(["y", "z", "w", "v"], n)))
    return encode(df, Schema.build(qi=["a", "b"], sa="s", sensitive_sets={"sens": ["x", "x2"]}))


@pytest.mark.parametrize("name", ["art", "art-exact"])
def test_groups_meet_theorem1_one_sensitive_each_and_release_verifies(name):
    tab = _table()
    model = make_model("simple-l=4,set=sens")
    algo = make_algorithm(name, model=model, min_support=20, seed=1)
    rel = algo.anonymize(tab)
    assert rel.kind == "bucketized"
    part = algo.partition(tab)
    part.check(tab.n_rows)
    sens = tab.sa_domain.sensitive_mask("sens")
    counts = tab.group_sa_counts(part.group, part.n_groups)
    assert (counts[:, sens].sum(axis=1) <= 1).all()
    kn = mine_knowledge(tab, min_support=20)
    rep = audit_groups(kn, tab.qi_codes, tab.sa_codes, part.group, r=4, sensitive=sens)
    assert rep.delta["violations"] == 0.0
    if name == "art-exact":
        assert rep.n_problematic == 0
    # suppressed rows are only failed sensitive seeds
    assert (sens[tab.sa_codes[part.group < 0]]).all()
    assert part.provenance["n_failed_seeds"] == int((part.group < 0).sum())


def test_same_seed_same_partition_and_input_untouched():
    tab = _table(600)
    before = tab.qi_codes.copy()
    m = make_model("simple-l=3,set=sens")
    a = make_algorithm("art", model=m, min_support=20, seed=3).partition(tab)
    b = make_algorithm("art", model=m, min_support=20, seed=3).partition(tab)
    np.testing.assert_array_equal(a.group, b.group)
    np.testing.assert_array_equal(before, tab.qi_codes)


def test_parameters_checked():
    tab = _table(300)
    with pytest.raises(ParameterError):
        make_algorithm("art", model=make_model("simple-l=3,set=sens"), r=1).partition(tab)
    with pytest.raises(ParameterError):
        make_algorithm("art", model=make_model("l=3")).partition(tab)  # no sensitive set
    assert float(delta_max(3, 2, 0.1)) == pytest.approx(0.0474, abs=5e-5)


def test_scalar_n_o_kernels_match_min_group_size():
    """The numba N'_o used in ART's inner loop is eq. 5 exactly as ``min_group_size``."""
    from openbook.algorithms.art import _need, _pick
    from openbook.inference.theorem1 import min_group_size

    rng = np.random.default_rng(11)
    for r in (2.0, 3.5, 10.0):
        rr = float(np.ceil(r - 1e-12))
        for _ in range(300):
            hi = rng.random(5) * rng.choice([0.05, 0.5, 1.0])
            lo = hi * rng.random(5) * (rng.random(5) < 0.9)
            same = rng.random(5) < 0.2
            lo[same] = hi[same]  # Δ = 0 on some attribute sets
            hi[rng.random(5) < 0.05] = 1.0  # f_max = 1
            want = float(min_group_size(hi - lo, hi, r).max())
            assert _need(lo, hi, r, rr) == want
        F = rng.random((40, 5)) * 0.2
        lo, hi = np.full(5, 0.05), np.full(5, 0.08)
        i = _pick(F, lo, hi, 10.0, 10.0)
        needs = np.array([min_group_size(np.maximum(hi, f) - np.minimum(lo, f), np.maximum(hi, f), 10.0).max()
                          for f in F])
        D = (np.maximum(F - hi, 0) + np.maximum(lo - F, 0)).sum(axis=1)
        best = np.flatnonzero(needs == needs.min())
        assert i == best[np.argmin(D[best])]


def test_certify_group_bounds_bracket_exact_and_verdict_is_exact():
    """The mediant bounds bracket the exact worst posterior (brute force by the value DP) on
    random groups holding x once, and ``certify_group``'s verdict equals the exact one."""
    from openbook.inference.multiset_dp import exact_posteriors
    from openbook.inference.row_types import row_types
    from openbook.inference.threshold import certify_group, once_bounds

    rng = np.random.default_rng(5)
    K_all, n_rows, n_sets = 6, 12, 3
    n_checked = 0
    for _ in range(400):
        P = rng.random((n_rows, K_all)) * (rng.random((n_rows, K_all)) > 0.15) + 1e-3 * (rng.random() < 0.5)
        N = int(rng.integers(2, 8))
        idx = rng.integers(0, rng.integers(1, n_rows + 1), size=(n_sets, N))
        x = 0
        sa = np.concatenate([[x], rng.integers(1, int(rng.integers(2, K_all + 1)), N - 1)])
        worst = 0.0
        for s in range(n_sets):
            vals, inv = np.unique(sa, return_inverse=True)
            W = P[idx[s]][:, vals]
            e = exact_posteriors(W, np.bincount(inv))
            if np.isnan(e).any():
                worst = np.nan
                break
            ex = float(e[:, 0].max())
            types, cnt = row_types(idx[s])
            lb, ub = once_bounds(P, types, cnt, np.unique(sa[1:]), x)
            assert lb <= ex + 1e-9 and ex <= ub + 1e-9
            worst = max(worst, ex)
        if np.isnan(worst):
            continue
        n_checked += 1
        for r in (1.5, 2.0, 3.0, 5.0):
            verdict, _ = certify_group(P, idx, sa, np.arange(N), x, r)
            assert verdict == (worst <= 1.0 / r + 1e-12)
    assert n_checked >= 300


def test_art_honours_the_suppression_budget():
    """ART withholds sensitive seeds it cannot make r-robust; with the default budget (0) it
    refuses and names the budget it would need, instead of silently dropping people."""
    import numpy as np
    import pandas as pd
    import pytest

    from openbook.algorithms.registry import make_algorithm
    from openbook.data.schema import Schema
    from openbook.data.table import encode
    from openbook.errors import InfeasibleError
    from openbook.models import make_model

    rng = np.random.default_rng(1)
    n = 60
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "zip": rng.choice(["a", "b", "c", "d"], n),
                       "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold", "cancer"], n, p=[0.4, 0.15, 0.3, 0.15])})
    t = encode(df, Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease",
                                sensitive_sets={"sens": ["hiv", "cancer"]}))
    model = make_model("simple-l=2,set=sens")
    with pytest.raises(InfeasibleError, match=r"art suppresses \d+ of 60 rows .* max_suppression=0\.\d+ or"):
        make_algorithm("art", model=model, r=2, min_support=2, seed=1).anonymize(t)
    rel = make_algorithm("art", model=model, r=2, min_support=2, seed=1, max_suppression=0.5).anonymize(t)
    assert 0 < rel.n_suppressed <= 30
