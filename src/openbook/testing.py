"""The contract every anonymizer and every adversary honours, published as checks — as
scikit-learn publishes ``check_estimator``: whoever adds an algorithm (its own module and one
line of :data:`openbook.catalog.CATALOG`) or an adversary (one line of
:data:`openbook.catalog.ADVERSARIES`) runs the check on it, and openbook's own suite runs it
on every catalogued one (``tests/contract/``).

:func:`check_anonymizer` — declared parameters (one message form), traits the adversaries read
(``replay``, ``unaware``, ``deterministic``, ``background_robust``, ``withholds``), same seed
→ same partition, the input untouched, every row published once or suppressed, a release
verified against its model that counts every input row, no seed in the files, a shuffled
input publishing the same files when ties are drawn at random, a certificate that decides (an
adversary that knows the algorithm, or the algorithm's own reason why none does) and — for an
algorithm whose run the table fixes — the replay adversary's posterior equal to a brute force
over every possible world re-running the algorithm (paper 000 §2.4, §5.1), exactly.

:func:`check_adversary` — its declaration (name, paper, disclosure, the knowledge it needs),
its parameters declared with :mod:`openbook.params`, and on a release it applies to: same
parameters → same posteriors, the release and the original untouched, posteriors that are
probabilities (summing to 1 per person when every SA value is a target), one per person.

Each returns the names of the checks it ran, and of those it could not run with the reason
(never silently); a failing check raises :class:`AssertionError` naming it.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .catalog import ADVERSARIES, CATALOG
from .errors import OpenbookError, ParameterError

#: what a brute force over possible worlds may enumerate (worlds × re-runs)
BRUTE_FORCE_WORLDS = 20_000
#: a distinctive seed: finding it in a sidecar cannot be a coincidence
_SEED = 987_654_320


class Checks(list):
    """The checks run (``str``), and those not run with why (``"name: skipped — why"``)."""

    def skipped(self) -> list[str]:
        return [c for c in self if " skipped — " in c]


def _fail(check: str, what: str) -> AssertionError:
    return AssertionError(f"{check}: {what}")


def contract_table(n: int = 80, seed: int = 0) -> Any:
    """The table the checks use by default: QIs age (numeric), zip, sex; SA disease with a
    sensitive set ``sens`` = {hiv, cancer}; a shuffled index."""
    from .data.schema import Schema
    from .data.table import encode

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 80, n), "zip": rng.choice(["a", "b", "c", "d", "e"], n),
                       "sex": rng.choice(["F", "M"], n),
                       "disease": rng.choice(["flu", "hiv", "cold", "cancer", "none"], n,
                                             p=[0.3, 0.2, 0.2, 0.15, 0.15])})
    df.index = rng.permutation(n) + 1000
    return encode(df, Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease",
                                   sensitive_sets={"sens": ["hiv", "cancer"]}))


#: models tried in turn when none is given: ℓ-diversity, else the sensitive set's
_MODELS = ("l=2", "simple-l=2,set=sens", "simple-l=2,set=sens,set-mode=total")


def _class_of(algorithm: Any) -> Any:
    from .algorithms.registry import algorithm_class

    return algorithm_class(algorithm) if isinstance(algorithm, str) else algorithm


# ---------------------------------------------------------------------------------------
# anonymizers
# ---------------------------------------------------------------------------------------
def check_anonymizer(algorithm: Any, *, model: Any = None, params: dict[str, Any] | None = None,
                     table: Any = None) -> Checks:
    """Run the anonymizer contract (module docstring) on ``algorithm`` (a catalog name or an
    :class:`~openbook.algorithms.base.Anonymizer` subclass), built with ``model`` (a spec or
    a model; default the first of ``l=2`` and the sensitive set's it accepts) and ``params``,
    on ``table`` (default :func:`contract_table`). A class not yet in the catalog is entered
    for the check's duration, as its catalog line would be (the certificate finds an
    algorithm by the name its release records)."""
    from .catalog import Entry

    cls = _class_of(algorithm)
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise _fail("declaration", f"{cls.__name__} has no name")
    if name in CATALOG:
        if _class_of(name) is not cls:
            raise _fail("catalog", f"{name!r} is catalogued as another class ({CATALOG[name].cls})")
        return _check_anonymizer(cls, name, model, dict(params or {}), table)
    # not catalogued yet: entered for the check's duration, as its catalog line would be
    CATALOG[name] = Entry(cls.__module__, cls.__qualname__, cls.release_kind, "(under check)")
    try:
        return _check_anonymizer(cls, name, model, dict(params or {}), table)
    finally:
        del CATALOG[name]


def _check_anonymizer(cls: Any, name: str, model: Any, params: dict[str, Any], table: Any) -> Checks:
    from .attacks.awareness import REPLAY_METHODS

    t = contract_table() if table is None else table
    before = {c: col.codes.copy() for c, col in t.columns.items()}  # before any run
    done = Checks()
    # traits
    if cls.release_kind not in ("generalized", "bucketized"):
        raise _fail("traits", f"release_kind {cls.release_kind!r}")
    method = cls.replay_method(params, model)
    if method is not None and method not in REPLAY_METHODS:
        raise _fail("traits", f"replay {method!r} is not one of {REPLAY_METHODS}")
    if method is None and not (isinstance(cls.unaware, str) and cls.unaware.strip()):
        raise _fail("traits", "no adversary knows the algorithm and it does not say why (unaware)")
    if cls.withholds(params) not in ("fails-model", "search-fails-model", "gg-tail", "sensitive-only", "unknown"):
        raise _fail("traits", f"withholds {cls.withholds(params)!r}")
    for trait in ("deterministic", "background_robust", "minimality"):
        if not isinstance(getattr(cls, trait), bool):
            raise _fail("traits", f"{trait} is not a bool")
    done.append("traits")
    # parameters
    declared = cls.constraints()
    kw = [p.name for p in inspect.signature(cls.__init__).parameters.values()
          if p.kind == p.KEYWORD_ONLY and p.name != "model"]
    missing = [p for p in kw if p not in declared]
    if missing:
        raise _fail("declared parameters", f"no declared constraint for {missing}")
    mdl = _accepted_model(cls, model, params, t)
    bad = cls(model=mdl, **{**params, "seed": -1})
    try:
        bad.partition(t)
    except ParameterError as exc:
        if not str(exc).startswith(f"{name}: seed must be"):
            raise _fail("declared parameters", f"a bad seed is refused as {exc!s}") from None
    else:
        raise _fail("declared parameters", "seed=-1 was accepted")
    done.append("declared parameters")
    # behaviour
    algo = cls(model=mdl, seed=_SEED, **params)
    p1 = algo.partition(t)
    p2 = cls(model=mdl, seed=_SEED, **params).partition(t)
    if not np.array_equal(p1.group, p2.group):
        raise _fail("same seed, same partition", "two runs with one seed grouped differently")
    for c, col in t.columns.items():
        if not np.array_equal(col.codes, before[c]):
            raise _fail("input untouched", f"column {c} was modified")
    p1.check(t.n_rows)
    if p1.n_published + p1.n_suppressed != t.n_rows:
        raise _fail("every row once", f"{p1.n_published} + {p1.n_suppressed} != {t.n_rows}")
    rel = algo.anonymize(t)
    if not rel.meta["n_input"] == t.n_rows == rel.meta["n_published"] + rel.meta["n_suppressed"]:
        raise _fail("nothing lost", "published + suppressed is not the input")
    if not rel.verify(algo.release_model()).holds:
        raise _fail("verified", "the release does not satisfy its model")
    done += ["same seed, same partition", "input untouched", "every row once", "nothing lost", "verified"]
    with tempfile.TemporaryDirectory() as tmp:  # written and read back
        from .release import load_release, save_release

        save_release(rel, Path(tmp) / "r.csv")
        text = (Path(tmp) / "r.csv.json").read_text(encoding="utf-8")
        load_release(Path(tmp) / "r.csv")
    if str(_SEED) in text or '"seed"' in text:
        raise _fail("no seed in the files", "the sidecar holds the seed")
    done.append("no seed in the files")
    if algo.ties_at_random:
        order = np.random.default_rng(1).permutation(t.n_rows)
        again = cls(model=mdl, seed=_SEED, **params).anonymize(t.take(order))
        if not rel.data.reset_index(drop=True).equals(again.data.reset_index(drop=True)):
            raise _fail("shuffled input, same files", "ties are drawn at random but row order changed the release")
        done.append("shuffled input, same files")
    else:
        done.append("shuffled input, same files: skipped — ties are not drawn at random (trait ties)")
    _check_certificate(cls, rel, t, method, done)
    _check_brute_force(cls, mdl, params, method, done)
    return done


def _accepted_model(cls: Any, model: Any, params: dict[str, Any], t: Any) -> Any:
    from .models import make_model

    if model is not None:
        return make_model(model) if isinstance(model, (str, dict)) else model
    why = ""
    for spec in _MODELS:
        mdl = make_model(spec)
        try:
            cls(model=mdl, seed=_SEED, **params).partition(t)
            return mdl
        except OpenbookError as exc:
            why = str(exc)
    raise _fail("model", f"{cls.name} accepts none of {_MODELS} on the contract table (last: {why}); give model=")


def _check_certificate(cls: Any, rel: Any, t: Any, method: str | None, done: Checks) -> None:
    from .certificate import certify

    cert = certify(rel, original=t, max_risk=1.0, max_reid_risk=1.0)
    aware = cert.aware or {}
    if method is None:
        if cert.verdict == "pass":
            raise _fail("certificate decides", "no adversary knows the algorithm, yet the certificate passed")
        if aware.get("adversary") is not None or aware.get("reason") != cls.unaware:
            raise _fail("certificate decides", f"expected the algorithm's own reason, got {aware}")
    elif aware.get("adversary") is None:
        raise _fail("certificate decides", f"trait replay={method!r} but no adversary knows it: {aware}")
    done.append("certificate decides")


def _check_brute_force(cls: Any, mdl: Any, params: dict[str, Any], method: str | None, done: Checks) -> None:
    """The replay adversary against every possible world re-running the algorithm, on tiny
    tables; for algorithms whose run the table fixes (trait ``deterministic``, ties not
    drawn at random). Randomized algorithms need their coins
    enumerated: ``tests/contract/test_adversary_brute_force.py`` does so for the catalog's."""
    if method is None:
        done.append("brute force: skipped — no adversary claims to know the algorithm")
        return
    if not cls.deterministic or cls(model=mdl, **params).ties_at_random:
        done.append("brute force: skipped — the run draws random numbers or a secret order; its coins must be "
                    "enumerated (give ties='input' for a deterministic run)")
        return
    run_params = dict(params)
    compared = 0
    for seed in range(12):
        t = contract_table(n=7, seed=seed)
        try:
            rel = cls(model=mdl, **run_params).anonymize(t)
        except OpenbookError:
            continue
        if rel.meta["n_suppressed"]:
            continue  # absent people: the absence adversary's exact figure is tested in tests/contract
        compared += _compare_with_brute_force(cls, mdl, run_params, rel, t)
    if not compared:
        done.append("brute force: skipped — the algorithm published no tiny table whole")
        return
    done.append(f"brute force ({compared} people)")


def _compare_with_brute_force(cls: Any, mdl: Any, params: dict[str, Any], rel: Any, t: Any) -> int:
    from .algorithms.mask import with_sa_codes
    from .attacks.registry import make_adversary
    from .attacks.replay.generic import canonical
    from .release.align import published_classes

    group = np.asarray(rel.partition.group, dtype=np.int64)
    seen = published_classes(t, group) if rel.kind == "generalized" else group
    sa = np.asarray(t.sa_codes, dtype=np.int64)
    n_values = t.sa_domain.n_values
    classes = [np.flatnonzero(seen == g) for g in np.unique(seen[seen >= 0])]
    per = [sorted(set(itertools.permutations(sa[rows].tolist()))) for rows in classes]
    if np.prod([len(p) for p in per], dtype=float) > BRUTE_FORCE_WORLDS:
        return 0
    num = np.zeros((t.n_rows, n_values), dtype=object)
    num[:] = Fraction(0)
    den = 0
    for combo in itertools.product(*per):
        world = sa.copy()
        for rows, vals in zip(classes, combo):
            world[rows] = vals
        try:
            again = cls(model=mdl, **params).partition(with_sa_codes(t, world.astype(np.int32)))
        except OpenbookError:
            continue
        g2 = np.asarray(again.group, dtype=np.int64)
        g2 = published_classes(t, g2) if rel.kind == "generalized" else g2
        if not np.array_equal(canonical(seen), canonical(g2)):
            continue
        den += 1
        for i, v in enumerate(world.tolist()):
            num[i, v] += 1
    if den == 0:
        raise _fail("brute force", "no possible world reproduces the release")
    res = make_adversary("replay", exact_limit=1e9).run(rel, original=t)
    values = [str(v) for v in t.sa_domain.values]
    for j, target in enumerate(res.targets):
        if target not in values:
            continue
        k = values.index(target)
        exact = np.array([float(num[i, k] / den) for i in range(t.n_rows)])
        got = res.posterior[:, j]
        if not np.allclose(got, exact, rtol=0, atol=1e-9):
            i = int(np.argmax(np.abs(got - exact)))
            raise _fail("brute force", f"person {i}, value {target}: replay {got[i]:.6g}, brute force {exact[i]:.6g}")
    return t.n_rows


# ---------------------------------------------------------------------------------------
# adversaries
# ---------------------------------------------------------------------------------------
def check_adversary(adversary: Any, *, release: Any = None, original: Any = None,
                    earlier: Sequence[Any] = ()) -> Checks:
    """Run the adversary contract (module docstring) on ``adversary`` (a catalog name or an
    :class:`~openbook.attacks.adversary.Adversary` subclass), against ``release`` (default: a
    GG release of :func:`contract_table` under ℓ = 2, with an Anatomy release as the earlier
    one for an adversary that needs earlier releases)."""
    from .attacks.adversary import KNOWLEDGE, Adversary
    from .attacks.registry import adversary_class

    cls = adversary_class(adversary) if isinstance(adversary, str) else adversary
    done = Checks()
    if not (isinstance(cls, type) and issubclass(cls, Adversary)):
        raise _fail("declaration", f"{cls!r} is not an Adversary subclass")
    for attr in ("name", "title", "paper"):
        if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr).strip():
            raise _fail("declaration", f"no {attr}")
    if cls.disclosure not in ("attribute", "identity"):
        raise _fail("declaration", f"disclosure {cls.disclosure!r}")
    if not set(cls.needs) <= set(KNOWLEDGE):
        raise _fail("declaration", f"needs {sorted(cls.needs)} beyond {KNOWLEDGE}")
    if cls.name in ADVERSARIES and adversary_class(cls.name) is not cls:
        raise _fail("catalog", f"{cls.name!r} is catalogued as another class")
    done.append("declaration")
    _check_adversary_parameters(cls, done)
    if release is None:
        release, original, earlier = _default_case(cls)
    adv = cls()
    applies = adv.applies_to(release)
    if not applies:
        done.append(f"behaviour: skipped — it does not apply to the release ({applies.reason}); give release=")
        return done
    data, meta = release.data.copy(), copy.deepcopy(release.meta)
    codes = {c: col.codes.copy() for c, col in original.columns.items()} if original is not None else {}
    a = adv.run(release, original=original, earlier=earlier)
    b = cls().run(release, original=original, earlier=earlier)
    if not np.array_equal(a.posterior, b.posterior, equal_nan=True):
        raise _fail("same parameters, same posteriors", "two runs differ")
    if not release.data.equals(data) or release.meta != meta:
        raise _fail("release untouched", "the adversary modified the release")
    for c, col in (original.columns.items() if original is not None else ()):
        if not np.array_equal(col.codes, codes[c]):
            raise _fail("original untouched", f"column {c} was modified")
    p = a.posterior[np.isfinite(a.posterior)]
    if not ((p >= -1e-12) & (p <= 1 + 1e-12)).all():
        raise _fail("probabilities", "a posterior outside [0, 1]")
    if a.posterior.shape[0] != a.group.size:
        raise _fail("one per person", f"{a.posterior.shape[0]} rows of posteriors for {a.group.size} people")
    _, dom = release.sa_counts()
    if a.targets == [str(v) for v in dom.values]:
        rows = np.isfinite(a.posterior).all(axis=1)
        if not np.allclose(a.posterior[rows].sum(axis=1), 1.0, atol=1e-9):
            raise _fail("probabilities", "a person's posteriors over every SA value do not sum to 1")
    if "seconds" not in a.notes:
        raise _fail("timed", "run() did not record its seconds")
    done += ["same parameters, same posteriors", "release untouched", "original untouched", "probabilities",
             "one per person", "timed"]
    return done


class _Unacceptable:
    """A value no declared constraint accepts."""

    def __repr__(self) -> str:
        return "<unacceptable>"


def _check_adversary_parameters(cls: Any, done: Checks) -> None:
    from .params import Constraint

    for key, spec in cls.parameters.items():
        if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], Constraint)):
            raise _fail("declared parameters", f"{key}: declare (default, openbook.params constraint)")
        default, constraint = spec
        if default is not None and not constraint.accepts(default):
            raise _fail("declared parameters", f"{key}: the default {default!r} is refused by its own constraint")
        try:
            cls(**{key: _Unacceptable()})
        except ParameterError as exc:
            if not str(exc).startswith(f"adversary {cls.name!r}: {key} must "):
                raise _fail("declared parameters", f"{key}: refused as {exc!s} (not the one message form)") from None
        else:
            raise _fail("declared parameters", f"{key}: an unacceptable value was accepted")
    try:
        cls(no_such_parameter=1)
    except ParameterError:
        pass
    else:
        raise _fail("declared parameters", "an unknown parameter was accepted")
    json.dumps(cls().params())
    done.append("declared parameters")


def _default_case(cls: Any) -> tuple[Any, Any, tuple]:
    from .algorithms.registry import make_algorithm
    from .models import make_model

    t = contract_table()
    rel = make_algorithm("gg", model=make_model("l=2")).anonymize(t)
    earlier: tuple = ()
    if "earlier" in cls.needs:
        earlier = (make_algorithm("anatomy", model=make_model("l=2"), seed=1).anonymize(t),)
    return rel, t, earlier
