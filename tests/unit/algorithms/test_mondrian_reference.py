"""Mondrian's whole split tree equals a plain recursive reference (LeFevre et al. 2006; paper
000 §2.3, §3.2, App. B (b)), on random tables mixing numeric (uneven values), ordinal and
categorical columns, for strict and relaxed cuts, ``categorical="ordered"`` and
``"hierarchy"``, and every privacy model: the same nodes in the same breadth-first order,
each with the same rows (in input order), cut dimension, median and ties, and the same groups.

The reference is written from the rules of :mod:`openbook.algorithms.mondrian`'s docstring
alone: per node, the dimensions by normalised width (numeric/ordinal: value range over the
column's span; categorical, ordered: distinct values over the domain; hierarchy: coverage of
the values' lowest common ancestor), the median cut on each (hierarchy, strict: the boundary
between children of that ancestor that best balances the children), the first allowable one
taken."""

from __future__ import annotations

import numpy as np
import pytest

from openbook.algorithms import make_algorithm, mondrian_cut
from openbook.data.table import EncodedTable
from openbook.errors import InfeasibleError
from openbook.hierarchy import from_levels

MODELS = ["k=2", "k=3", "k=5", "l=2", "entropy-l=2", "recursive-l=2,c=2", "alpha=0.6,k=2", "simple-l=2,set=s",
          "t=0.4", "eligible-l=2", "k=3,l=2"]


def random_table(seed: int, n: int | None = None) -> EncodedTable:
    """Mixed columns; categorical ones carry a random hierarchy whose depth-first order is
    not their code order."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 140)) if n is None else n
    d = int(rng.integers(1, 5))
    kinds = [str(rng.choice(["numeric", "ordinal", "categorical"])) for _ in range(d)]
    qi, cats, hier = [], [], {}
    for j, kind in enumerate(kinds):
        card = int(rng.integers(1, 13))
        # skewed codes: many ties
        p = rng.dirichlet(np.full(card, 0.5))
        qi.append(rng.choice(card, size=n, p=p))
        if kind == "numeric":
            cats.append(np.cumsum(rng.integers(1, 9, size=card)).astype(np.float64))
        elif kind == "ordinal":
            cats.append(np.array([f"o{i}" for i in range(card)], dtype=object))
        else:
            labels = [f"c{j}_{i}" for i in range(card)]
            cats.append(np.array(labels, dtype=object))
            mids = rng.integers(0, max(1, card // 2), size=card)
            if rng.random() < 0.5:
                rows = [[lab, f"m{mids[i]}", "*"] for i, lab in enumerate(labels)]
            else:
                rows = [[lab, f"m{mids[i]}", f"t{mids[i] % 2}", "*"] for i, lab in enumerate(labels)]
            hier[f"q{j}"] = from_levels(rows, column=f"q{j}")
    n_sa = int(rng.integers(2, 6))
    sa = rng.integers(0, n_sa, size=n)
    sa[:n_sa] = np.arange(n_sa)
    return EncodedTable.from_codes(qi_codes=np.column_stack(qi), sa_codes=sa, qi_names=[f"q{j}" for j in range(d)],
                                   qi_categories=cats, qi_kinds=kinds, hierarchies=hier, sensitive_sets={"s": [0]})


def reference_tree(t: EncodedTable, model, strict: bool, categorical: str) -> dict[str, np.ndarray]:
    """The recursive reference: the split tree flattened breadth-first (children left, right),
    as the ``tree_*`` arrays and ``row_order`` of ``Partition.extra``."""
    domain = t.sa_domain
    n_sa = domain.n_values
    sa = np.asarray(t.sa_codes)
    coords, width_of, hier_cut = [], [], []
    for name in t.qi_names:
        col = t.columns[name]
        card = col.n_values
        codes = np.asarray(col.codes)
        if col.kind not in ("numeric", "ordinal") and categorical == "hierarchy":
            h = t.hierarchy(name)
            anc = np.asarray(h.ancestor_table)  # (levels, leaves), level 0 the leaves
            order = sorted(range(h.n_leaves), key=lambda c: tuple(anc[::-1, c]))
            pos = np.empty(h.n_leaves, dtype=np.int64)
            pos[order] = np.arange(h.n_leaves)
            adfs = anc[:, order]  # ancestors by depth-first position

            def lca_level(x, adfs=adfs):
                return next(L for L in range(adfs.shape[0]) if np.unique(adfs[L, x]).size == 1)

            def width(x, adfs=adfs, h=h, lca_level=lca_level):
                L = lca_level(x)
                return (h.coverage[adfs[L, x[0]]] - 1) / max(h.n_leaves - 1, 1)

            def cut(x, adfs=adfs, lca_level=lca_level):
                L = lca_level(x)
                r = x.size
                best, gap = None, None
                for p in range(int(x.min()) + 1, int(x.max()) + 1):
                    if adfs[L - 1, p] != adfs[L - 1, p - 1]:
                        g = abs(2 * int((x < p).sum()) - r)
                        if gap is None or g < gap:
                            best, gap = p, g
                return best, 0, x < best

            coords.append(pos[codes])
            width_of.append(width)
            hier_cut.append(cut if strict else None)
        else:
            if col.kind in ("numeric", "ordinal"):
                v = np.asarray(col.numeric, dtype=np.float64)
                span = float(v.max() - v.min()) or 1.0

                def width(x, v=v, span=span):
                    return (v[x.max()] - v[x.min()]) / span
            else:
                def width(x, card=card):
                    k = np.unique(x).size
                    return k / card if k > 1 else 0.0
            coords.append(codes.astype(np.int64))
            width_of.append(width)
            hier_cut.append(None)

    def holds(rows):
        return bool(model.holds(np.bincount(sa[rows], minlength=n_sa)[None, :], domain)[0])

    def build(rows):
        if rows.size >= 2:
            w = np.array([width_of[j](coords[j][rows]) for j in range(len(coords))])
            for j in np.argsort(-w, kind="stable"):
                if w[j] <= 0:
                    break
                x = coords[j][rows]
                if hier_cut[j] is not None:
                    m, ties, left = hier_cut[j](x)
                else:
                    try:
                        m, ties, left = mondrian_cut(x, strict)
                    except ValueError:
                        continue
                if left.all() or not left.any():
                    continue
                if holds(rows[left]) and holds(rows[~left]):
                    return {"rows": rows, "dim": int(j), "value": int(m), "ties": int(ties),
                            "kids": [build(rows[left]), build(rows[~left])]}
        return {"rows": rows, "dim": -1, "value": 0, "ties": 0, "kids": []}

    root = build(np.arange(t.n_rows))
    root["lo"] = 0
    nodes, parent, level = [], [], [(root, -1)]
    while level:
        nxt = []
        for node, par in level:
            nodes.append(node)
            parent.append(par)
            a = node["lo"]
            for kid in node["kids"]:
                kid["lo"] = a
                a += kid["rows"].size
                nxt.append((kid, len(nodes) - 1))
        level = nxt
    leaves = sorted((i for i, nd in enumerate(nodes) if nd["dim"] < 0), key=lambda i: nodes[i]["lo"])
    tree_group = np.full(len(nodes), -1)
    tree_group[leaves] = np.arange(len(leaves))
    row_order = np.concatenate([nodes[i]["rows"] for i in leaves])
    group = np.empty(t.n_rows, dtype=np.int64)
    for g, i in enumerate(leaves):
        group[nodes[i]["rows"]] = g
    return {"tree_lo": np.array([nd["lo"] for nd in nodes]),
            "tree_hi": np.array([nd["lo"] + nd["rows"].size for nd in nodes]),
            "tree_parent": np.array(parent), "tree_dim": np.array([nd["dim"] for nd in nodes]),
            "tree_value": np.array([nd["value"] for nd in nodes]), "tree_ties": np.array([nd["ties"] for nd in nodes]),
            "tree_group": tree_group, "row_order": row_order, "group": group}


def assert_same_tree(p, ref) -> None:
    for key, want in ref.items():
        got = p.group if key == "group" else p.extra[key]
        assert np.array_equal(np.asarray(got, dtype=np.int64), want), key
    assert p.n_groups == int(ref["tree_group"].max()) + 1


@pytest.mark.parametrize("categorical", ["ordered", "hierarchy"])
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("seed", range(44))
def test_the_split_tree_is_the_reference_tree(seed, strict, categorical):
    t = random_table(seed)
    model = __import__("openbook.models", fromlist=["make_model"]).make_model(MODELS[seed % len(MODELS)])
    algo = make_algorithm("mondrian", model=model, strict=strict, categorical=categorical)
    try:
        p = algo.partition(t)
    except InfeasibleError:
        with pytest.raises(InfeasibleError):
            model.validate(t.sa_domain)
        return
    assert_same_tree(p, reference_tree(t, model, strict, categorical))


@pytest.mark.parametrize("strict", [True, False])
def test_wide_ranges_and_many_rows(strict):
    """Wide numeric ranges (medians by sorting) next to narrow ones (by counting), more rows."""
    from openbook.models import make_model

    rng = np.random.default_rng(7)
    n = 3000
    qi = np.column_stack([rng.integers(0, 20_000, n), rng.integers(0, 4, n), rng.integers(0, 300, n)])
    t = EncodedTable.from_codes(qi_codes=qi, sa_codes=rng.integers(0, 6, n))
    for spec in ("k=4", "l=3"):
        model = make_model(spec)
        p = make_algorithm("mondrian", model=model, strict=strict).partition(t)
        assert_same_tree(p, reference_tree(t, model, strict, "ordered"))
