"""The catalog of anonymizers: name, class, release kind and one line each — importable
without numpy, pandas or numba, so the CLI lists the algorithms at once, and from every layer
(the release's sidecar validator reads the names from here).

It is an explicit table (as ``models/registry.py``'s tuple of classes), read by
:mod:`openbook.algorithms.registry`, which imports a class's module only when the class is
asked for: no algorithm module registers itself, and no module imports the registry except to
build another algorithm (anatomization's base), so there is no import circle.

Adding an algorithm is its own module plus one line here: what the adversaries need to know
about it they read from the class's traits (``Anonymizer.replay``, ``unaware``,
``deterministic``, ``background_robust``, ``withholds``), never from its name
(``tests/contract/test_toy_algorithm.py`` adds one that way and certifies its release).
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    module: str  # the class's module: ".name" inside openbook.algorithms, else an absolute "package.module"
    cls: str  # the class's name
    kind: str  # release kind: generalized or bucketized
    line: str  # one line for ``anonymize --help``


#: every anonymizer: name -> Entry; a contract test checks it against the classes
CATALOG: dict[str, Entry] = {
    "generalized-anatomy": Entry(".generalized_anatomy", "GeneralizedAnatomy", "bucketized",
                                 "QI classes of >= k by the QIs alone, SA groups by the SA alone: identity and "
                                 "attribute certified (the default)"),
    "anatomy": Entry(".anatomy", "Anatomy", "bucketized", "Anatomy (Xiao & Tao; paper 000 §2.3): groups by SA alone"),
    "anatomize": Entry(".anatomy", "Anatomized", "bucketized",
                       "Anatomy inside each group of a base algorithm (paper 000 §3.1)"),
    "gg-ana": Entry(".anatomy", "GGAnatomized", "bucketized", "GG, then Anatomy inside each group (paper 000 §5.3)"),
    "rgg-ana": Entry(".anatomy", "RGGAnatomized", "bucketized", "RGG, then Anatomy inside each group (paper 000 §5.3)"),
    "sg-ana": Entry(".anatomy", "SGAnatomized", "bucketized", "SG, then Anatomy inside each group (paper 000 §5.3)"),
    "base-ana": Entry(".anatomy", "BaseAnatomized", "bucketized", "one group, anatomized (paper 000 §5.3)"),
    "set-anatomy": Entry(".set_anatomy", "SetAnatomy", "bucketized",
                         "SA-only groups with one sensitive row each, for set models "
                         "(simple-l / (alpha,k) of a sensitive set)"),
    "art": Entry(".art", "ART", "bucketized", "ART: r-robust against QI-based background knowledge (paper 003 §4.2)"),
    "art-exact": Entry(".art", "ARTExact", "bucketized",
                       "ART grown until the exact worst-case posterior is at most 1/r (paper 003)"),
    "full-domain": Entry(".full_domain", "FullDomainGeneralization", "generalized",
                         "every QI at fixed hierarchy levels --levels (paper 001 §4.1)"),
    "full-domain-search": Entry(".lattice", "FullDomainSearch", "generalized",
                                "optimal full-domain node over the lattice (Incognito/Flash)"),
    "gg": Entry(".greedy", "GreedyGrouping", "bucketized", "greedy grouping of l-buckets in a QI order (paper 000 §4.1)"),
    "rgg": Entry(".greedy", "RandomizedGreedyGrouping", "bucketized",
                 "randomized GG: adds a bucket with probability --p (paper 000 §4.3)"),
    "sg": Entry(".symmetric", "SymmetricGrouping", "bucketized",
                "symmetric even splits of the sorted order (paper 000 App. C.3)"),
    "mondrian": Entry(".mondrian", "Mondrian", "generalized",
                      "Mondrian, --strict or --no-strict (LeFevre 2006; paper 000 §2.3)"),
    "mask": Entry(".mask", "Mask", "generalized", "k-anonymize, then distort the SA of violating classes (paper 001 §6)"),
    "injector": Entry(".injector", "Injector", "bucketized",
                      "Injector: l-diverse groups respecting mined negative rules (Li & Li 2008)"),
}


class AdversaryEntry(NamedTuple):
    module: str  # the class's module: ".name" inside openbook.attacks, else an absolute "package.module"
    cls: str  # the class's name
    line: str  # one line for ``certify --help``


#: every adversary, in the order the certificate and the report list them: name -> entry
#: (:mod:`openbook.attacks.registry` imports a class's module when it is asked for)
ADVERSARIES: dict[str, AdversaryEntry] = {
    "baseline": AdversaryEntry(".families", "BaselineAdversary", "uniform possible worlds in each class (paper 001 §4.1)"),
    "replay": AdversaryEntry(".families", "ReplayAdversary",
                             "knows the algorithm: replays its decisions on possible worlds (paper 000 §5.1)"),
    "minimality": AdversaryEntry(".families", "MinimalityAdversary",
                                 "the minimality principle's exact credibility (paper 001 §4-5)"),
    "background": AdversaryEntry(".families", "BackgroundAdversary",
                                 "worst-case QI-based background knowledge (paper 003)"),
    "eligibility": AdversaryEntry(".families", "EligibilityAdversary", "the skew step's withheld records (paper 004)"),
    "linkage": AdversaryEntry(".families", "LinkageAdversary", "earlier releases linked (paper 002 §2.3)"),
    "reidentification": AdversaryEntry(".families", "ReidentificationAdversary",
                                       "which person a record is (El Emam & Dankar 2008)"),
}
