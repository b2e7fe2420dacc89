"""Random tiny tables and the release configurations the soundness suite tries.

A :class:`Case` is one table (n ≤ 10 people, one of several QI shapes, 2–4 SA values, maybe a
sensitive set), one catalog algorithm with its parameters and release kind, one model and one
attribute target (``max_risk``). :func:`random_case` draws one from a seed, so every case is
reproducible from ``(seed)`` alone; :func:`issue_cases` are the hand-made tables of issue 26.

How each algorithm's random choices are enumerated (``coins``):

* ``none`` — deterministic (Mondrian, full-domain, full-domain search, SG; relaxed Mondrian
  and SG — by default — break ties between rows with equal QIs by row position, which the
  brute force, like the certificate, takes as known to the adversary and independent of the SA);
* ``ties`` — GG orders rows with equal QIs at random: every order of each set of such rows
  (:func:`possible_worlds.within_cell_orders`), each equally likely;
* ``rgg`` — the ties, and RGG's one decision, "add the next bucket", a Bernoulli(p) coin per
  decision (:func:`possible_worlds.coin_sequences`);
* ``keys`` — a uniform random key per row, read only through the order within each SA value
  (Anatomy, Base(Ana), anatomization of no base or of SG/strict Mondrian — the base re-run as it is —,
  Generalized Anatomy's strata):
  :func:`possible_worlds.within_cell_orders`, each order equally likely;
* ``ana-ties`` — anatomization over GG: the ties' orders and Anatomy's keys, both;
* ``ana-rgg`` — anatomization over RGG: the ties, Anatomy's keys and RGG's coins;
* ``script`` — Set Anatomy's permutations, enumerated call by call
  (:func:`possible_worlds.every_outcome`);
* ``mask`` — MASK's draws (the proportions, the distorted tuples, their new values), enumerated
  call by call like ``script``; its worlds are every SA vector over the table's values (it
  changes values), and its figures are bounds, checked under both priors;
* ``seeds`` — ART's and Injector's order of their seeds (a permutation of the rows holding a
  value of the set ``s``), enumerated call by call like ``script``;
* ``skip`` — an algorithm no adversary knows (none today): its certificate never passes, so only
  the write/read agreement is checked, and a pass would be reported as unsound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SA_POOL = ("flu", "hiv", "cold", "ulcer")
ZIP_TREE = {"z1": "Z12", "z2": "Z12", "z3": "Z34", "z4": "Z34", "Z12": "*", "Z34": "*"}
SHAPES = ("age+sex", "zip", "age", "zip+sex")
ORDERS = ("lex", "zorder", "hilbert")

#: model families and specs; ``{set}`` marks a spec that needs the sensitive set ``s``
MODELS: dict[str, tuple[str, ...]] = {
    "k": ("k=2", "k=3"),
    "distinct-l": ("l=2", "l=3"),
    "entropy-l": ("entropy-l=2", "entropy-l=1.5"),
    "recursive-l": ("recursive-l=2,c=2", "recursive-l=2,c=3"),
    "simple-l": ("simple-l=2", "simple-l=3"),
    "simple-l-set": ("simple-l=2,set=s", "simple-l=3,set=s"),
    "alpha-k": ("alpha=0.5,k=2", "alpha=0.5,k=2,set=s"),
    "t-closeness": ("t=0.2", "t=0.3", "t=0.4"),
    "conjunction": ("k=2,l=2", "k=2,t=0.3", "l=2,t=0.4", "simple-l=2,set=s,k=2"),
}
#: the families whose models promise an ℓ (Anatomy and its kin need one)
L_FAMILIES = ("distinct-l", "entropy-l", "recursive-l", "simple-l", "simple-l-set", "alpha-k")
SET_FAMILIES = ("simple-l-set",)
TARGETS = (None, None, 0.5, 0.67, 0.4, 1.0)


@dataclass
class Algo:
    """One catalog algorithm as the suite runs it."""

    name: str
    coins: str  # none | ties | rgg | keys | ana-ties | ana-rgg | script | mask | seeds | skip
    families: tuple[str, ...] | None = None  # model families it accepts (None: every one)
    sizes: tuple[int, int] = (5, 10)  # people per table, inclusive
    kinds: tuple[str | None, ...] = (None,)

    def params(self, rng: np.random.Generator, shape: str) -> dict[str, Any]:
        pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
        if self.name in ("gg", "rgg"):
            out: dict[str, Any] = {"order": pick(ORDERS), "tail": pick(("merge", "merge", "drop"))}
            if out["tail"] == "drop":
                out["max_suppression"] = pick((0.2, 0.3, 0.5))
            if self.name == "rgg":
                out["p"] = pick((0.3, 0.5))
            return out
        if self.name == "sg":
            return {"order": pick(ORDERS)}
        if self.name == "mondrian":
            return {"strict": bool(rng.integers(2)), "categorical": pick(("ordered", "hierarchy"))}
        if self.name == "full-domain":
            height = {"age": 3, "sex": 1, "zip": 2}
            levels = [int(rng.integers(0, height[q.split(":")[0]] + 1)) for q in qi_of(shape)]
            return {"levels": levels, "max_suppression": pick((0.0, 0.1, 0.2, 0.3))}
        if self.name == "full-domain-search":
            return {"max_suppression": pick((0.0, 0.0, 0.2))}
        if self.name == "anatomize":
            if rng.integers(2):  # over strict Mondrian: replayed by its refused cuts, any number of worlds
                return {"base": "mondrian", "categorical": pick(("ordered", "hierarchy"))}
            return {"base": "none"}
        if self.name == "generalized-anatomy":
            return {"k": pick((None, 2, 3))}
        if self.name == "mask":
            return {"k": 2}
        return {}


ALGOS: dict[str, Algo] = {a.name: a for a in (
    Algo("gg", "ties", kinds=(None, "generalized")),
    Algo("rgg", "rgg", sizes=(4, 8), kinds=(None, "generalized")),
    Algo("sg", "none", kinds=(None, "generalized")),
    Algo("mondrian", "none", sizes=(5, 9)),
    Algo("full-domain", "none"),
    Algo("full-domain-search", "none", sizes=(5, 8)),
    Algo("anatomy", "keys", families=L_FAMILIES, sizes=(4, 7)),
    Algo("base-ana", "keys", families=L_FAMILIES, sizes=(4, 7)),
    Algo("anatomize", "keys", families=L_FAMILIES, sizes=(4, 7)),
    Algo("set-anatomy", "script", families=SET_FAMILIES, sizes=(4, 6)),
    Algo("generalized-anatomy", "keys", sizes=(4, 7)),
    Algo("gg-ana", "ana-ties", families=L_FAMILIES, sizes=(5, 7)),
    Algo("rgg-ana", "ana-rgg", families=L_FAMILIES, sizes=(4, 6)),
    Algo("sg-ana", "keys", families=L_FAMILIES, sizes=(5, 8)),
    Algo("mask", "mask", families=SET_FAMILIES, sizes=(4, 7)),
    Algo("art", "seeds", families=SET_FAMILIES, sizes=(5, 8)),
    Algo("injector", "seeds", families=SET_FAMILIES, sizes=(5, 8)),
    Algo("art-exact", "seeds", families=SET_FAMILIES, sizes=(5, 8)),
)}


def coins_of(case: "Case") -> str:
    """How the case's algorithm's random choices are enumerated (module docstring)."""
    if case.algorithm not in ALGOS:
        return "none"
    return ALGOS[case.algorithm].coins


def qi_of(shape: str) -> list[str]:
    return {"age+sex": ["age:numeric", "sex"], "zip": ["zip"], "age": ["age:numeric"],
            "zip+sex": ["zip", "sex"]}[shape]


@dataclass
class Case:
    """One table, algorithm, model and target."""

    frame: pd.DataFrame
    qi: list[str]
    algorithm: str
    params: dict[str, Any]
    spec: str
    family: str
    kind: str | None = None
    max_risk: float | None = None
    seed: int = 0  # the algorithm's seed (RGG's coins, Anatomy's draws)
    sets: dict[str, list[str]] = field(default_factory=dict)
    label: str = ""
    #: hierarchies as child -> parent maps (default: ``ZIP_TREE`` for a ``zip`` column)
    trees: dict[str, dict[str, str]] | None = None

    def table(self) -> Any:
        from openbook.data.schema import Schema
        from openbook.data.table import encode
        from openbook.hierarchy.builders import from_mapping

        trees = self.trees if self.trees is not None else ({"zip": ZIP_TREE} if "zip" in self.frame.columns else {})
        hier = {col: from_mapping(dict(tree), col) for col, tree in trees.items()}
        schema = Schema.build(qi=list(self.qi), sa="disease", sensitive_sets=dict(self.sets))
        return encode(self.frame.copy(), schema, hier)

    def describe(self) -> str:
        kw = ", ".join(f"{k}={v}" for k, v in self.params.items())
        kind = f" kind={self.kind}" if self.kind else ""
        return (f"{self.label or ''} {self.algorithm}({kw}){kind} -m {self.spec} max_risk={self.max_risk} "
                f"n={len(self.frame)}").strip()

    @property
    def group(self) -> str:
        """The algorithm's row in the summary (variants that replay differently apart)."""
        if self.algorithm == "mondrian":
            return f"mondrian {'strict' if self.params.get('strict', True) else 'relaxed'}"
        if self.algorithm in ("gg", "rgg", "sg") and self.kind == "generalized":
            return f"{self.algorithm} (generalized)"
        return self.algorithm


def random_frame(rng: np.random.Generator, shape: str, n: int, m: int) -> pd.DataFrame:
    cols: dict[str, Any] = {}
    if "age" in shape:
        span = int(rng.integers(2, n + 3))
        cols["age"] = 20 + rng.integers(0, span, n)
    if "zip" in shape:
        cols["zip"] = rng.choice(["z1", "z2", "z3", "z4"], n)
    if "sex" in shape:
        cols["sex"] = rng.choice(["F", "M"], n)
    values = list(SA_POOL[:m])
    while True:
        p = rng.dirichlet(np.ones(m) * 1.5)
        sa = rng.choice(values, n, p=p)
        if len(set(sa.tolist())) >= 2:
            break
    cols["disease"] = sa
    return pd.DataFrame(cols)


#: how often each algorithm is drawn (those the brute force covers, and the ones with
#: suppression and label merges, more often)
WEIGHTS = {"gg": 3, "rgg": 2, "sg": 2, "mondrian": 3, "full-domain": 3, "full-domain-search": 1.5, "anatomy": 1,
           "base-ana": 0.5, "anatomize": 0.5, "set-anatomy": 1, "generalized-anatomy": 2, "gg-ana": 0.3,
           "rgg-ana": 0.3, "sg-ana": 0.3, "mask": 0.3, "art": 0.3, "injector": 0.3,
           # drawn only by name: a weight above 0 would change every earlier seed's case
           "art-exact": 0.0}


def random_case(seed: int, algorithm: str | None = None, *, attempts: int = 6, max_n: int | None = None,
                params: dict[str, Any] | None = None) -> Case:
    """The case of ``seed`` (and of ``algorithm``, else one drawn from the catalog): a table
    (at most ``max_n`` people when given), then up to ``attempts`` draws of model, target and
    parameters (``params`` overriding the drawn ones) until the algorithm publishes a release
    (the last draw is kept when none does)."""
    rng = np.random.default_rng([seed, 0x50D])
    names = list(ALGOS)
    p = np.array([WEIGHTS[x] for x in names], dtype=float)
    algo = ALGOS[algorithm if algorithm is not None else names[int(rng.choice(len(names), p=p / p.sum()))]]
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    lo, hi = algo.sizes
    if max_n is not None:
        lo, hi = min(lo, max_n), min(hi, max_n)
    n = int(rng.integers(lo, hi + 1))
    m = int(rng.integers(2, 5))
    frame = random_frame(rng, shape, n, m)
    for _ in range(attempts):
        case = _draw(rng, algo, shape, frame, seed)
        case.params.update(params or {})
        if _publishes(case):
            break
    return case


def _publishes(case: Case) -> bool:
    from openbook.algorithms.registry import make_algorithm
    from openbook.errors import OpenbookError
    from openbook.models import make_model

    try:
        make_algorithm(case.algorithm, model=make_model(case.spec), seed=case.seed,
                       **case.params).anonymize(case.table(), kind=case.kind)
    except OpenbookError:
        return False
    return True


def _draw(rng: np.random.Generator, algo: Algo, shape: str, frame: pd.DataFrame, seed: int) -> Case:
    fams = list(algo.families or MODELS)
    family = fams[int(rng.integers(len(fams)))]
    specs = MODELS[family]
    spec = specs[int(rng.integers(len(specs)))]
    present = sorted(set(frame["disease"].tolist()))
    sets = {}
    if "set=s" in spec or algo.name in ("art", "art-exact", "set-anatomy"):
        k = 1 if len(present) < 3 or rng.integers(2) else 2
        sets = {"s": sorted(rng.choice(present, k, replace=False).tolist())}
    if algo.name in ("art", "art-exact") and "set=" not in spec:
        spec = spec + ",set=s"
    kind = algo.kinds[int(rng.integers(len(algo.kinds)))]
    return Case(frame=frame, qi=qi_of(shape), algorithm=algo.name, params=algo.params(rng, shape), spec=spec,
                family=family, kind=kind, max_risk=TARGETS[int(rng.integers(len(TARGETS)))],
                seed=int(rng.integers(0, 1000)), sets=sets, label=f"seed={seed}")


def _frame(rows: str, cols: list[str]) -> pd.DataFrame:
    data = [r.split(",") for r in rows.split("/")]
    frame = pd.DataFrame([[x.strip() for x in r] for r in data], columns=cols)
    return frame


def issue_cases() -> dict[str, Case]:
    """The tables of issue 26 ("Certificate soundness"), by name."""
    six = _frame("c,c,cold / c,b,flu / a,a,flu / d,b,cold / d,d,cold / c,a,cold", ["c0", "c1", "disease"])
    ten = _frame("A,v1/A,v2/A,v3/B,v1/B,v2/B,v3/C,v1/C,v2/C,v4/D,v3", ["zip", "disease"])
    return {
        "relaxed-mondrian-n-groups": Case(six, ["c0", "c1"], "mondrian", {"strict": False}, "l=2", "distinct-l",
                                          max_risk=0.67, label="issue 26: n_groups"),
        "full-domain-eligibility": Case(ten, ["zip"], "full-domain", {"levels": [0], "max_suppression": 0.1},
                                        "simple-l=3", "simple-l", max_risk=0.4, label="issue 26: eligibility",
                                        trees={"zip": {"A": "*", "B": "*", "C": "*", "D": "*"}}),
    }
