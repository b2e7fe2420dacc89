"""The catalog of anonymizers: name, module, release kind and one line each — importable
without numpy, pandas or numba, so the CLI can list the algorithms at once."""

from __future__ import annotations

#: every anonymizer: name -> (module, release kind, one line) — an explicit catalog, so
#: ``make_algorithm`` imports only the module it needs (no import circle, no numba at CLI
#: start-up) and ``anonymize --help`` lists them; a contract test checks it against the classes
CATALOG: dict[str, tuple[str, str, str]] = {
    "anatomy": ("anatomy", "bucketized", "Anatomy (Xiao & Tao; paper 000 §2.3): groups by SA alone"),
    "anatomize": ("anatomy", "bucketized", "Anatomy inside each group of a base algorithm (paper 000 §3.1)"),
    "gg-ana": ("anatomy", "bucketized", "GG, then Anatomy inside each group (paper 000 §5.3)"),
    "rgg-ana": ("anatomy", "bucketized", "RGG, then Anatomy inside each group (paper 000 §5.3)"),
    "sg-ana": ("anatomy", "bucketized", "SG, then Anatomy inside each group (paper 000 §5.3)"),
    "base-ana": ("anatomy", "bucketized", "one group, anatomized (paper 000 §5.3)"),
    "set-anatomy": ("set_anatomy", "bucketized", "SA-only groups with one sensitive row each, for set models "
                    "(simple-l / (alpha,k) of a sensitive set)"),
    "art": ("art", "bucketized", "ART: r-robust against QI-based background knowledge (paper 003 §4.2)"),
    "art-exact": ("art", "bucketized", "ART grown until the exact worst-case posterior is at most 1/r (paper 003)"),
    "full-domain": ("full_domain", "generalized", "every QI at fixed hierarchy levels --levels (paper 001 §4.1)"),
    "full-domain-search": ("lattice", "generalized", "optimal full-domain node over the lattice (Incognito/Flash)"),
    "gg": ("greedy", "bucketized", "greedy grouping of l-buckets in a QI order (paper 000 §4.1)"),
    "rgg": ("greedy", "bucketized", "randomized GG: adds a bucket with probability --p (paper 000 §4.3)"),
    "sg": ("symmetric", "bucketized", "symmetric even splits of the sorted order (paper 000 App. C.3)"),
    "mondrian": ("mondrian", "generalized", "Mondrian, --strict or --no-strict (LeFevre 2006; paper 000 §2.3)"),
    "mask": ("mask", "generalized", "k-anonymize, then distort the SA of violating classes (paper 001 §6)"),
    "injector": ("injector", "bucketized", "Injector: l-diverse groups respecting mined negative rules (Li & Li 2008)"),
}
