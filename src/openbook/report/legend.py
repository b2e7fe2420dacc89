"""The words of the report, the demo and the CLI: what every figure means, for a data steward
who has not read the papers (one definition each, in one place)."""

from __future__ import annotations

#: verdict -> (headline, one sentence)
VERDICT_WORDS = {
    "pass": ("PUBLISHABLE", "Both lines pass: nobody's record can be re-identified with more than the identity "
                            "target, and no adversary that applies — one who knows the algorithm among them — "
                            "learns any person's sensitive value beyond the attribute target."),
    "fail": ("NOT PUBLISHABLE", "A line fails: some records can be re-identified beyond the identity target, or an "
                                "adversary that applies learns some people's sensitive value beyond the attribute "
                                "target, could not evaluate them, or no adversary who knows the release's "
                                "algorithm could check it."),
    "no target": ("NO TARGET", "The privacy model promises no bound on what an adversary learns (k-anonymity, "
                               "t-closeness, (k,e)); the figures below are what the adversaries learn. Give "
                               "--max-risk to judge them against a target."),
    "not certified": ("NOT CERTIFIED", "The publisher wrote this release without certifying it "
                                       "(--no-certify); nothing below was checked at publication."),
}

#: (term, definition) in the order the legend shows them
LEGEND: list[tuple[str, str]] = [
    ("identity line", "Can a record be re-identified from its published QIs? Its risk is 1 / the number of records "
                      "sharing the record's published QI values (prosecutor risk; journalist risk when the "
                      "population is given). Target: 1/k of the model's k, else 0.2 (--max-reid-risk; 1 accepts "
                      "published exact QIs)."),
    ("attribute line", "What an adversary learns about a person's sensitive value. Target: 1/ℓ of an ℓ-diversity "
                       "model (α of (α,k)-anonymity, or --max-risk); for t-closeness also the distance t of the "
                       "posterior from the table's distribution; for k-anonymity and (k,e) nobody's value certain."),
    ("target", "The largest probability with which any adversary may link a person to a sensitive value: "
               "by default 1/ℓ of the release's ℓ-diversity model (α of (α,k)-anonymity), or --max-risk."),
    ("posterior", "The adversary's probability that a person has a given sensitive value (or a value of the "
                  "sensitive set), after seeing the release and everything the adversary knows."),
    ("max posterior", "The largest posterior over all people and values. 1 means some person's value is "
                      "known for certain."),
    ("risk × 1/ℓ", "The max posterior as a multiple of 1/ℓ. 1 is what the model promises; 6 with ℓ = 6 means "
                   "some person's value is known for certain."),
    ("above the target", "People whose largest posterior exceeds the target: what the adversary learns about "
                         "them is more than the publisher promised."),
    ("vulnerable or unresolved share", "The people above the target (paper 001 calls them problematic) plus "
                                       "the unresolved ones, as a share of the people the adversary considers: "
                                       "an unresolved person is never counted as safe."),
    ("baseline's max posterior (same people)", "Beside each adversary, the largest posterior of the baseline "
                                               "adversary over the same people: what knowing the algorithm or "
                                               "background facts adds to what the release alone tells. For some "
                                               "people an informed adversary is less sure than the baseline."),
    ("knows the algorithm", "The adversary re-runs or reasons with the very algorithm that made the release "
                            "(paper 000 §2.4). A release is publishable only when such an adversary ran: for "
                            "algorithms no adversary knows (ART, Injector, anatomization of an SA-dependent "
                            "base) the verdict is not publishable — unknown is not safe."),
    ("unresolved", "People for whom the adversary's computation was too large to finish. They count as "
                   "failing, never as safe."),
    ("absent", "People withheld from the release (suppressed). The adversary knows who they are and the "
               "rule by which the algorithm withholds people, so their absence can itself reveal their value."),
    ("3-SE bound", "Where a posterior is estimated by sampling possible worlds, the certificate uses the "
                   "estimate plus three standard errors, so a sampled figure errs on the safe side."),
    ("upper bound", "Where the exact posterior is out of reach, a figure no posterior can exceed (MASK: a class "
                    "it may have distorted may have held its whole class in the sensitive set), under any prior."),
    ("m-confidential", "No posterior exceeds 1/m (paper 001, Definition 4); m is ℓ unless given."),
    ("baseline adversary", "Knows the release only: every arrangement of a class's published values is equally "
                           "likely. The model itself bounds what it learns; the other adversaries show what "
                           "knowing the algorithm or background facts adds."),
    ("replay adversary", "Knows every person's quasi-identifiers and the algorithm, and re-runs the algorithm on "
                         "possible worlds, keeping those that reproduce the release (paper 000 §5.1)."),
    ("minimality adversary", "Knows the algorithm publishes no more generalized release than the model needs, "
                             "and excludes the worlds in which a less generalized release would have satisfied "
                             "it (paper 001 §4)."),
    ("background adversary", "Knows, in the worst case, the distribution of the sensitive value for every "
                             "combination of quasi-identifiers, mined from the data (paper 003)."),
    ("eligibility adversary", "Knows the skew step withheld records of the most frequent values to make the "
                              "table ℓ-eligible, and infers which values those were (paper 004)."),
    ("linkage adversary", "Intersects a person's classes across this and earlier releases (paper 002); "
                          "the posterior is 1 / the number of sensitive values left."),
    ("information loss", "How much the published values are generalized, from 0 (exact) to 1 (fully suppressed), "
                         "averaged over cells (paper 001 Definition 6)."),
    ("NCP", "Normalized certainty penalty: the width of a published range or set relative to the column's whole "
            "domain, averaged."),
    ("discernibility", "Sum over published classes of the class size squared (plus n per suppressed row): "
                       "large classes cost more."),
    ("ARE", "Average relative error of COUNT queries answered from the release instead of the original "
            "(paper 000 §5.3); 0.1 means answers are off by 10 % on average."),
]
