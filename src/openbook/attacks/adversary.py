"""The adversary interface — one interface for every adversary family, as
:mod:`openbook.algorithms.base` is for the anonymizers (the registry by name:
:mod:`.registry`, over :data:`openbook.catalog.ADVERSARIES`; the contract checks every
adversary must pass: :func:`openbook.testing.check_adversary`).

An adversary is the papers' attacker made concrete: what it knows (the release; every
individual's QI values = the *original* table's QIs; earlier releases), what it assumes
(the algorithm and its parameters, Kerckhoffs's principle: paper 000 §2.4, paper 001
Assumption 3), and what it computes: for every person, the posterior probability of each
*target* (an SA value or a sensitive value set; for identity disclosure, "this record is
that person"). Every family returns the one :class:`~openbook.attacks.base.AttackResult`
(per-person posteriors, standard errors where sampled, unresolved people marked), so the
certificate, the CLI, the report and the demo treat them alike.

Each adversary class declares

* ``name`` (registry key), ``title`` and ``paper`` (the section it implements);
* ``disclosure``: ``"attribute"`` (posterior of an SA value / set) or ``"identity"``;
* ``needs``: the knowledge it requires — ``"original"`` (the original table: every
  individual's QIs, and for the audit their true SA) and/or ``"earlier"`` (earlier releases);
* ``applies_to(release)``: whether its model of the adversary fits this release (e.g. the
  replay adversary needs an algorithm it can re-run), with the reason when it does not;
* ``knows_algorithm(release)``: whether its posterior is the one of an adversary who knows
  the release's algorithm — the certificate passes no release without such an adversary
  (:func:`.awareness.awareness` names it, or says why there is none);
* ``attack(release, *, original=None, earlier=())``.

Parameters are keyword-only, declared in one place (``parameters``: name -> (default,
:mod:`openbook.params` constraint)) and validated there with the one message form of every
model and anonymizer (``adversary 'replay': worlds must be an integer >= 1, got 0``), as
scikit-learn does.

References: Cormode, Srivastava, Li, Li, VLDB 2010 (paper 000); Wong, Fu, Wang, Pei, VLDB
2007 (paper 001); Rameshwar & Tandon (paper 002); Wong, Fu, Wang, Xu, Pei, Yu (paper 003);
the ℓ-eligibility paper (paper 004).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from ..errors import ParameterError
from ..params import Constraint

if TYPE_CHECKING:  # the interface module stays light: the CLI lists adversaries at start-up
    from .base import AttackResult

#: the kinds of knowledge an adversary may need
KNOWLEDGE = ("original", "earlier")
#: possible worlds the replay adversary samples per unit too large to enumerate — the one
#: default of the CLI (``--worlds``), the Python API, the report and the certificate
DEFAULT_WORLDS = 2_000
#: the largest number of possible worlds on which the replay re-runs a whole algorithm
#: (full-domain search: about 1.5 ms a run on a toy table)
DEFAULT_RERUN_LIMIT = 5_000


@dataclass(frozen=True)
class Applies:
    """``applies_to``'s answer: truthy when the adversary fits the release; ``reason`` says
    why (or why not) in one line, for the certificate and the report."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


class Adversary(ABC):
    """Base class of every adversary (module docstring)."""

    name: ClassVar[str]
    title: ClassVar[str]
    paper: ClassVar[str]
    disclosure: ClassVar[str] = "attribute"
    needs: ClassVar[frozenset[str]] = frozenset()
    #: keyword parameters: name -> (default, what it may hold); ``None`` is always allowed
    #: (the parameter left to the release or the model)
    parameters: ClassVar[dict[str, tuple[Any, Constraint]]] = {}

    def __init__(self, **params: Any) -> None:
        owner = f"adversary {self.name!r}"
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            known = ", ".join(sorted(self.parameters)) or "none"
            raise ParameterError(f"{owner}: unknown parameter {unknown[0]!r} (known: {known})",
                                 parameter=unknown[0])
        for key, (default, constraint) in self.parameters.items():
            value = params.get(key, default)
            setattr(self, key, None if value is None else constraint.check(owner, key, value))

    def params(self) -> dict[str, Any]:
        """Parameters as given (JSON-able), for the certificate."""
        return {k: getattr(self, k) for k in self.parameters}

    def applies_to(self, release: Any) -> Applies:
        """Whether this adversary's model fits ``release`` (default: every release)."""
        return Applies(True, "applies to every release")

    def knows_algorithm(self, release: Any) -> Applies:
        """Whether this adversary's posterior *is* that of an adversary who knows the
        release's algorithm (paper 000 §2.4; paper 001 Assumption 3) — the one a certificate
        must have run before it can pass. Default: no."""
        return Applies(False, f"the {self.name} adversary does not model the algorithm")

    def missing_knowledge(self, *, original: Any = None, earlier: Sequence[Any] = ()) -> list[str]:
        """The knowledge this adversary needs and was not given."""
        have = {"original": original is not None, "earlier": len(earlier) > 0}
        return [k for k in sorted(self.needs) if not have[k]]

    def run(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        """:meth:`attack` after checking the knowledge it needs, timed (``notes["seconds"]``)."""
        missing = self.missing_knowledge(original=original, earlier=earlier)
        if missing:
            flag = {"original": "--original TABLE", "earlier": "--against-registry DIR_OR_DB"}[missing[0]]
            raise ParameterError(f"the {self.name} adversary needs the {missing[0]} "
                                 f"{'table' if missing[0] == 'original' else 'releases'} ({flag})",
                                 parameter=missing[0])
        t0 = time.perf_counter()
        result = self.attack(release, original=original, earlier=tuple(earlier))
        result.notes.setdefault("seconds", round(time.perf_counter() - t0, 3))
        result.notes.setdefault("paper", self.paper)
        return result

    @abstractmethod
    def attack(self, release: Any, *, original: Any = None, earlier: Sequence[Any] = ()) -> AttackResult:
        """Per-person posteriors of this adversary against ``release``."""

    def describe(self) -> str:
        return f"{self.title} ({self.paper})"
