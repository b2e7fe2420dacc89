"""Which adversary knows which algorithm — the question a certificate must answer before it
can pass (paper 000 §2.4: the adversary knows the algorithm; paper 001 Assumption 3).

:data:`REPLAY_METHOD` says how the replay adversary (paper 000 §5.1) knows each algorithm it
covers; :data:`NO_AWARE_ADVERSARY` says why no adversary knows the others; :func:`awareness`
asks every registered adversary (``Adversary.knows_algorithm``) and answers with the one, or
with the reason there is none. docs/certificate.md tabulates the answers.
"""

from __future__ import annotations

from math import lgamma
from typing import Any

import numpy as np

#: how the replay adversary knows each algorithm it covers (paper 000 §5.1):
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
#:   *search*: its lattice choice couples every class), within ``rerun_limit`` worlds.
#:
#: ``tests/contract/test_adversary_brute_force.py`` checks each against a brute force over
#: possible worlds that re-runs the algorithm over every outcome of its random choices.
REPLAY_METHOD = {"generalized-anatomy": "decoupled",
                 "gg": "decisions", "rgg": "decisions", "sg": "decisions", "mondrian": "decisions",
                 "anatomy": "sa-only", "base-ana": "sa-only", "set-anatomy": "sa-only",
                 "full-domain": "qi-only", "full-domain-search": "rerun"}
#: why no registered adversary is the algorithm-aware one for these algorithms: the
#: certificate of such a release never passes (unknown is not safe)
NO_AWARE_ADVERSARY = {
    "mask": ("MASK distorts the SA of the classes violating the model (paper 001 §6); Theorem 3 shows only "
             "that the minimality adversary excludes no world, not what an adversary who knows MASK learns: "
             "a published class may be a distorted one, and on tiny tables the brute force over possible "
             "worlds puts people above the baseline's posterior (tests/contract); openbook has no MASK-aware "
             "adversary"),
    "anatomize": ("anatomization keeps its base algorithm's grouping, which depends on the SA: the adversary "
                  "who knows it replays the base algorithm over the anatomized groups, which the replay does "
                  "not support yet (on tiny tables the brute force puts people above the baseline, up to 1)"),
    "art": ("the background adversary (paper 003) knows worst-case QI-based distributions, not the algorithm; "
            "ART's grouping depends on the SA and paper 003 does not consider an adversary who knows ART"),
    "injector": ("the background adversary knows worst-case QI-based distributions, not the algorithm; "
                 "Injector's grouping depends on the SA and no adversary replays it"),
}
for _alg in ("gg-ana", "rgg-ana", "sg-ana"):
    NO_AWARE_ADVERSARY[_alg] = NO_AWARE_ADVERSARY["anatomize"]
NO_AWARE_ADVERSARY["art-exact"] = NO_AWARE_ADVERSARY["art"]


def replay_method(release: Any) -> str | None:
    """How the replay adversary knows the release's algorithm (:data:`REPLAY_METHOD`), or
    ``None``. Anatomization of no base (``anatomize`` with ``base=none``) is Anatomy."""
    prov = release.meta.get("algorithm") or {}
    alg = prov.get("algorithm")
    if alg == "anatomize" and (prov.get("params") or {}).get("base") in ("none", "base"):
        return "sa-only"
    return REPLAY_METHOD.get(alg) if isinstance(alg, str) else None


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
    from .adversary import adversaries

    params = dict(params or {})
    for cls in adversaries().values():
        knows = cls(**dict(params.get(cls.name, {}))).knows_algorithm(release)
        if knows:
            return cls.name, knows.reason
    alg = (release.meta.get("algorithm") or {}).get("algorithm")
    if alg is None:
        return None, "the release records no algorithm: no adversary knows how it was made"
    if alg in NO_AWARE_ADVERSARY:
        return None, NO_AWARE_ADVERSARY[alg]
    return None, adversaries()["replay"](**dict(params.get("replay", {}))).applies_to(release).reason


