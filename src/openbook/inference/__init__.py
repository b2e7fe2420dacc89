"""Inference engines under worst-case distribution-based background knowledge (paper 003),
shared by the anonymizer that defends against it (ART, :mod:`openbook.algorithms.art`) and
the adversary that audits a release with it (:mod:`openbook.attacks.robustness`).

One concept per module:

* :mod:`.knowledge` — the QI-based distributions ``G_A`` mined from a table (§2, §5);
* :mod:`.states` — the mixed-radix state spaces of the exact DPs;
* :mod:`.multiset_dp` — exact ``p(t:x)`` by a DP over value multiplicity vectors (§3, eq. 1-3);
* :mod:`.row_types` — exact ``p(t:x)`` by a DP over row types (tuples sharing a signature);
* :mod:`.permanent` — Glynn's permanent, the slow cross-check of both DPs;
* :mod:`.sampler` — the Metropolis chain (swap and heat-bath moves, Rao-Blackwellised
  estimates, standard errors) for groups neither DP fits;
* :mod:`.group` — one group's posteriors: the cheaper exact DP, else the sampler;
* :mod:`.threshold` — deciding ``max p(t:x) <= 1/r`` for a group holding ``x`` once
  (mediant bounds, then an exact DP; ``art-exact``);
* :mod:`.theorem1` — Theorem 1's ``Δ_max`` (eq. 4) and ``N'_o`` (eq. 5), §4.1.

The package sits between the data layer and the release layer: it imports only
:mod:`openbook.errors`, :mod:`openbook.data` and third-party libraries.
"""
