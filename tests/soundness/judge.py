"""One case end to end, and the three assertions of the soundness suite.

:func:`judge` makes the release as ``anonymize`` does (in memory, with the publisher's
certificate: ``certify(release, original=table, max_risk=..., max_reid_risk=1.0)`` — identity
accepted, the attribute line is what is tested), computes the exact posterior by brute force
(:mod:`.brute`) where it is needed, and checks

(a) **a pass never exceeds its target**, for any person, published or absent — the target's
    posterior bound, the homogeneity bound (nobody certain) and t-closeness's distance;
(b) **write time and read-back agree** — the certificate of the saved files
    (``save_release``, ``load_release``, ``certify`` with ``original=``) has the same verdict
    and the same figures per adversary;
(c) **the replay is exact where it says so** — its posterior equals the brute force for every
    person it resolved with standard error 0, and its 3-standard-error bound is never below it.

:func:`summary` turns many :class:`Outcome` records into the Markdown table of
``bench/bench_soundness.py``.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .brute import TooBig, exact_posterior
from .tables import ALGOS, Case, coins_of

TOL = 1e-9


@dataclass
class Outcome:
    """What one case found."""

    case: str
    group: str
    family: str
    status: str = "done"  # done | refused (no release) | too big (not brute-forced) | error
    verdict: str | None = None
    read_verdict: str | None = None
    #: (a): people (index, target, brute value, bound) above the target of a pass
    false_pass: list[tuple] = field(default_factory=list)
    #: (a) under a uniform prior (differs only for absent people)
    false_pass_uniform: list[tuple] = field(default_factory=list)
    #: (b): what differs between the certificate at write time and from the files
    disagreement: list[str] = field(default_factory=list)
    #: (c): people whose exact replay figure differs from the brute force, or whose bound is below it
    replay_wrong: list[tuple] = field(default_factory=list)
    replay_over: int = 0  # of those, over-estimates (the release refused for nothing)
    unresolved: int = 0  # people the certificate left unresolved (never safe)
    brute: bool = False
    worlds: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def passes(self) -> bool:
        return self.verdict == "pass"

    @property
    def sound(self) -> bool:
        return not self.false_pass and not self.disagreement and not self.replay_wrong and self.status != "error"

    def explain(self) -> str:
        bits = [f"{self.case}: {self.status}, verdict {self.verdict} (files: {self.read_verdict})"]
        if self.false_pass:
            bits.append(f"FALSE PASS {self.false_pass[:4]}")
        if self.false_pass_uniform:
            bits.append(f"above under a uniform prior {self.false_pass_uniform[:4]}")
        if self.disagreement:
            bits.append(f"write/read disagree: {'; '.join(self.disagreement[:4])}")
        if self.replay_wrong:
            bits.append(f"replay vs brute force {self.replay_wrong[:4]}")
        if self.error:
            bits.append(self.error)
        return " | ".join(bits)


def make(case: Case, table: Any) -> tuple[Any, Any]:
    """``(release, algorithm factory)`` as ``anonymize`` makes it (``release`` is ``None`` when
    the algorithm refuses the table)."""
    from openbook.algorithms.registry import make_algorithm
    from openbook.models import make_model

    model = make_model(case.spec)

    def factory() -> Any:
        return make_algorithm(case.algorithm, model=model, seed=case.seed, **case.params)
    from openbook.errors import OpenbookError

    try:
        return factory().anonymize(table, kind=case.kind), factory
    except OpenbookError:
        return None, factory


def _figures(cert: Any) -> dict[str, tuple]:
    r = lambda x: None if x is None else round(float(x), 9)  # noqa: E731
    return {f.adversary: (f.ran, r(f.max_posterior), f.n_above, f.n_unresolved, r(f.max_distance))
            for f in cert.findings}


def read_back(release: Any, table: Any, max_risk: float | None) -> Any:
    """The certificate of the release's saved files."""
    from openbook.certificate import certify
    from openbook.release import load_release, save_release

    with tempfile.TemporaryDirectory() as tmp:
        files = save_release(release, Path(tmp) / "r.csv")
        back = load_release(files[0])
        return certify(back, original=table, max_risk=max_risk, max_reid_risk=1.0)


def target_masks(release: Any, table: Any) -> tuple[list[str], np.ndarray, Any]:
    """The certificate's targets over the table's SA codes (names, ``(T, m)`` masks, the
    release's SA domain)."""
    from openbook.attacks.baseline import choose_targets, release_model

    counts, domain = release.sa_counts()
    names, masks, _ = choose_targets(domain, release_model(release))
    cats = [str(v) for v in table.columns[table.sa_name].categories]
    out = np.zeros((len(names), len(cats)), dtype=bool)
    for j in range(len(names)):
        for v in np.flatnonzero(masks[j]):
            out[j, cats.index(str(domain.values[v]))] = True
    return names, out, domain


def above_target(post: np.ndarray, release: Any, table: Any, max_risk: float | None) -> list[tuple]:
    """People whose exact posterior breaks the certificate's attribute target."""
    from openbook.attacks.baseline import release_model
    from openbook.models.promise import attribute_target, distance_model

    model = release_model(release)
    tgt = attribute_target(model, max_risk)
    names, masks, domain = target_masks(release, table)
    cats = [str(v) for v in table.columns[table.sa_name].categories]
    out = []
    for i in range(post.shape[0]):
        for j, name in enumerate(names):
            p = sum((post[i, v] for v in np.flatnonzero(masks[j])), 0)
            if tgt.posterior is not None and float(p) > tgt.posterior + TOL:
                out.append((i, name, str(p), tgt.posterior))
            elif tgt.certainty and tgt.posterior is None and p == 1:
                out.append((i, name, str(p), "certain"))
        if tgt.distance is not None:
            dm = distance_model(model)
            vec = np.array([[float(post[i, cats.index(str(v))]) for v in domain.values]])
            d = float(dm.distances(vec, domain)[0])
            if d > tgt.distance + TOL:
                out.append((i, "distance", round(d, 6), tgt.distance))
    return out


def tie_classes(table: Any) -> np.ndarray:
    """People with equal QI values: the adversary, who reads the files, cannot tell them apart."""
    from openbook.data.grouping import group_ids

    return group_ids([table.columns[c].codes for c in table.qi_names])[0]


def replay_check(result: Any, post: np.ndarray, table: Any, release: Any) -> tuple[list[tuple], int]:
    """(c): people whose replay figure is exact but differs from the brute force, or whose
    3-s.e. bound is below it; and how many of the exact ones over-estimate.

    The replay is granted the publisher's seating (which of several people with equal QIs sits
    in which group, or is absent); the brute force reads the files, which do not say. So the
    figures compared are averages over each set of people with equal QIs — equal to the
    brute force's for an algorithm that treats such people alike."""
    cats = [str(v) for v in table.columns[table.sa_name].categories]
    sets = (release.meta.get("schema") or {}).get("sensitive_sets") or {}
    cols = []
    for name in result.targets:
        members = sets.get(name[4:], []) if name.startswith("set:") else [name]
        cols.append([cats.index(str(v)) for v in members if str(v) in cats])
    se = np.zeros_like(result.posterior) if result.stderr is None else np.nan_to_num(result.stderr, nan=0.0)
    unres = result.unresolved_mask()
    ties = tie_classes(table)
    wrong, over = [], 0
    for t in np.unique(ties):
        people = np.flatnonzero(ties == t)
        if unres[people].any() or np.isnan(result.posterior[people]).any():
            continue
        exact = not np.any(se[people] > 0)
        for j, vs in enumerate(cols):
            b = sum((post[i, v] for i in people for v in vs), 0) / people.size
            got = float(result.posterior[people, j].mean())
            bound = float((result.posterior[people, j] + 3 * se[people, j]).mean())
            who = int(people[0]) if people.size == 1 else tuple(people.tolist())
            if exact and abs(got - float(b)) > TOL:
                wrong.append((who, result.targets[j], round(got, 6), str(b)))
                over += got > float(b)
            elif not exact and bound < float(b) - TOL:
                wrong.append((who, result.targets[j], round(got, 6), str(b), "bound below"))
    return wrong, over


def judge(case: Case, *, budget: int = 200_000, round_trip: bool = True) -> Outcome:
    """Every check of the suite on one case (module docstring)."""
    from openbook.certificate import certify

    t0 = time.perf_counter()
    out = Outcome(case.describe(), case.group, case.family)
    table = case.table()
    release, factory = make(case, table)
    if release is None:
        out.status = "refused"
        out.seconds = time.perf_counter() - t0
        return out
    cert = certify(release, original=table, max_risk=case.max_risk, max_reid_risk=1.0)
    release.meta["certificate"] = cert.to_dict()
    out.verdict = cert.verdict
    aware = cert.aware.get("adversary")
    out.unresolved = max((f.n_unresolved or 0 for f in cert.findings if f.disclosure == "attribute" and f.ran),
                         default=0)
    if round_trip:
        later = read_back(release, table, case.max_risk)
        out.read_verdict = later.verdict
        if later.verdict != cert.verdict:
            out.disagreement.append(f"verdict {cert.verdict} -> {later.verdict}")
        a, b = _figures(cert), _figures(later)
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                out.disagreement.append(f"{name} {a.get(name)} -> {b.get(name)}")
    replay = cert.results.get("replay")
    need = cert.verdict == "pass" or replay is not None
    if case.algorithm in ALGOS and ALGOS[case.algorithm].coins == "skip":
        if cert.verdict == "pass":  # no adversary knows it: a pass is unsound by construction
            out.false_pass.append(("-", "pass without an adversary who knows the algorithm", aware, None))
        need = False
    if need:
        try:
            ex = exact_posterior(case, table, release, factory, budget=budget)
        except TooBig as exc:
            out.status = "too big"
            out.error = str(exc)
            out.seconds = time.perf_counter() - t0
            return out
        out.brute, out.worlds = True, ex["worlds"]
        if ex["cert"] is None:  # impossible under the certificate's own prior: it cannot be certified
            if cert.verdict == "pass":
                out.false_pass.append(("-", "a release no world of the certificate's prior publishes", None, None))
        elif cert.verdict == "pass":
            out.false_pass = above_target(ex["cert"], release, table, case.max_risk)
        if cert.verdict == "pass" and ex["uniform"] is not None:
            out.false_pass_uniform = above_target(ex["uniform"], release, table, case.max_risk)
        if replay is not None and ex["cert"] is not None:
            out.replay_wrong, out.replay_over = replay_check(replay, ex["cert"], table, release)
        if replay is not None and ex["uniform"] is not None and coins_of(case) == "mask":
            # MASK's figures are bounds under any prior: the uniform one too
            wrong, _ = replay_check(replay, ex["uniform"], table, release)
            out.replay_wrong += [(*w, "uniform prior") for w in wrong]
    out.seconds = time.perf_counter() - t0
    return out


def summary(outcomes: list[Outcome], *, before: dict[str, Any] | None = None) -> str:
    """The Markdown table of ``bench/bench_soundness.py``: per algorithm, tables tried,
    releases, brute-forced, passes, false passes (certificate's prior; uniform prior),
    write/read disagreements (on passes; all), replay figures that differ from the brute force."""
    rows: dict[str, dict[str, int]] = {}
    keys = ("tables", "releases", "brute", "too_big", "passes", "false", "false_u", "dis_pass", "dis", "replay",
            "over", "unres")
    for o in outcomes:
        r = rows.setdefault(o.group, dict.fromkeys(keys, 0))
        r["tables"] += 1
        r["releases"] += o.status != "refused"
        r["brute"] += o.brute
        r["too_big"] += o.status == "too big"
        r["passes"] += o.passes
        r["false"] += o.passes and bool(o.false_pass)
        r["false_u"] += o.passes and bool(o.false_pass_uniform)
        r["dis_pass"] += o.passes and bool(o.disagreement)
        r["dis"] += bool(o.disagreement)
        r["replay"] += bool(o.replay_wrong)
        r["over"] += o.replay_over > 0
        r["unres"] += o.unresolved > 0
    total = dict.fromkeys(keys, 0)
    lines = ["| algorithm | tables | releases | brute-forced | too big | passes | false passes | false passes "
             "(uniform prior) | write/read disagree (passes / all) | replay ≠ brute force (over-estimates) | "
             "releases with unresolved people |",
             "| --- | " + " | ".join(["---:"] * 10) + " |"]
    for name in sorted(rows):
        r = rows[name]
        for k in keys:
            total[k] += r[k]
        lines.append(_row(name, r))
    lines.append(_row("**all**", total))
    return "\n".join(lines)


def _row(name: str, r: dict[str, int]) -> str:
    return (f"| {name} | {r['tables']} | {r['releases']} | {r['brute']} | {r['too_big']} | {r['passes']} | "
            f"{r['false']} | {r['false_u']} | {r['dis_pass']} / {r['dis']} | {r['replay']} ({r['over']}) | "
            f"{r['unres']} |")
