"""Which adversary knows which algorithm — the question a certificate must answer before it
can pass (paper 000 §2.4: the adversary knows the algorithm; paper 001 Assumption 3).

:func:`replay_method` says how the replay adversary (paper 000 §5.1) knows the release's algorithm —
a trait the algorithm declares (``Anonymizer.replay``), with ``Anonymizer.unaware`` saying why no
adversary knows it when none does; :func:`awareness`
asks every registered adversary (``Adversary.knows_algorithm``) and answers with the one, or
with the reason there is none. docs/certificate.md tabulates the answers.
"""

from __future__ import annotations

from math import lgamma
from typing import Any

import numpy as np

#: how the replay adversary knows an algorithm (paper 000 §5.1) — the algorithm's trait
#: ``Anonymizer.replay`` (:meth:`~openbook.algorithms.base.Anonymizer.replay_method`):
#:
#: * ``"decisions"`` — the algorithm's SA-dependent decisions are replayed one by one on every
#:   possible world (GG/RGG prefixes, SG splits, Mondrian cuts);
#: * ``"sa-only"`` — the grouping depends on the SA values and the random draws only, with a
#:   probability that is the same for every world consistent with the published multisets
#:   (paper 000 Claim 4): no world is excluded, the posterior is the class frequency;
#: * ``"qi-only"`` — the grouping depends on the QIs only (full-domain recoding at fixed
#:   levels); the people it withholds are the classes failing the model (:mod:`.absence`);
#: * ``"decoupled"`` — QI classes by the QIs alone and SA groups by the SA alone (Generalized
#:   Anatomy): the exact posterior is the QI class's average of its rows' group frequencies
#:   (:mod:`.decoupled`);
#: * ``"rerun"`` — the whole algorithm re-run on every possible world (full-domain
#:   *search*: its lattice choice couples every class), within ``rerun_limit`` worlds; past
#:   it (no suppression budget), each world weighed by the search's own decisions
#:   (:mod:`.replay.lattice`: which of the nodes it could have preferred satisfy there);
#:   ART and Injector re-run under every order of their seeds (:mod:`.replay.seeded`).
#: * ``"distortion"`` — QI classes by the QIs alone, then the SA of the classes violating the
#:   model distorted (MASK, paper 001 §6): each posterior bounded from above by what the
#:   distortion could have hidden, under any prior (:mod:`.distortion`).
#:
#: An algorithm without one says why no adversary knows it (trait ``Anonymizer.unaware``).
#: ``tests/contract/test_adversary_brute_force.py`` checks each against a brute force over
#: possible worlds that re-runs the algorithm over every outcome of its random choices.
REPLAY_METHODS = ("decisions", "sa-only", "qi-only", "decoupled", "rerun", "distortion")


def algorithm_traits(release: Any) -> Any:
    """The class of the release's recorded algorithm — whose traits the adversaries read
    (``replay``, ``unaware``, ``deterministic``, ``background_robust``, ``withholds``) —
    or ``None`` when the release records no algorithm of the catalog."""
    from ..algorithms.registry import algorithm_class
    from ..errors import ParameterError

    alg = (release.meta.get("algorithm") or {}).get("algorithm")
    if not isinstance(alg, str):
        return None
    try:
        return algorithm_class(alg)
    except ParameterError:
        return None


def replay_method(release: Any) -> str | None:
    """How the replay adversary knows the release's algorithm (its trait, :data:`REPLAY_METHODS`),
    or ``None``. Anatomization of no base (``anatomize`` with ``base=none``) is Anatomy."""
    cls = algorithm_traits(release)
    if cls is None:
        return None
    prov = release.meta.get("algorithm") or {}
    return cls.replay_method(dict(prov.get("params") or {}), run_model(release))


def run_model(release: Any) -> Any:
    """The privacy model the release's algorithm ran under (its provenance's, else the
    release's), or ``None`` when none is recorded or it cannot be read."""
    from ..errors import OpenbookError
    from ..models.registry import make_model

    spec = (release.meta.get("algorithm") or {}).get("model") or release.meta.get("model")
    if not spec:
        return None
    try:
        return make_model(spec)
    except OpenbookError:
        return None


def log_worlds(release: Any) -> float:
    """Natural log of the number of possible worlds of the published classes: the
    assignments of each class's SA multiset to its members (a product of multinomials)."""
    counts, _ = release.sa_counts()
    c = np.asarray(counts, dtype=np.float64)
    sizes = c.sum(axis=1)
    return float(sum(lgamma(x + 1.0) for x in sizes) - sum(lgamma(x + 1.0) for x in c.ravel()))


def awareness(release: Any, params: Any = None) -> tuple[str | None, str]:
    """``(name, why)``: the registered adversary whose posterior is the one of an adversary
    who knows the release's algorithm (paper 000 §2.4; paper 001 Assumption 3) — or
    ``(None, why there is none)``. The certificate of a release without one never passes.
    ``params``: per adversary keyword parameters (e.g. the replay's ``rerun_limit``)."""
    from .registry import adversaries

    params = dict(params or {})
    for cls in adversaries().values():
        knows = cls(**dict(params.get(cls.name, {}))).knows_algorithm(release)
        if knows:
            return cls.name, knows.reason
    alg = (release.meta.get("algorithm") or {}).get("algorithm")
    if alg is None:
        return None, "the release records no algorithm: no adversary knows how it was made"
    cls = algorithm_traits(release)
    if cls is not None and replay_method(release) is None:
        return None, cls.unaware
    return None, adversaries()["replay"](**dict(params.get("replay", {}))).applies_to(release).reason


