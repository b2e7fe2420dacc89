"""The certificate's soundness against a brute force over possible worlds (issue 26).

Random tiny tables, every catalog algorithm whose random choices can be enumerated, every
model family, several targets: the release is made and certified as ``anonymize`` does, and
the exact posterior of every person — published or absent — is computed by re-running the
algorithm on every possible world and reading every byte it publishes (:mod:`.brute`).
:mod:`.judge` asserts that a pass never exceeds its target, that the certificate made at write
time equals the one recomputed from the saved files, and that the replay adversary equals the
brute force where it claims to be exact. ``bench/bench_soundness.py`` runs the same at scale.
"""
