"""What a privacy model promises about a group, derived in one place.

* :func:`promised_l` — the ℓ whose ``1/ℓ`` bounds the posterior of a sensitive value the
  model promises: ℓ of every ℓ-diversity variant, ``1/α`` of (α,k)-anonymity (Wong et al.
  2006; paper 001 §7.1 uses α = 1/ℓ as simple ℓ-diversity), the largest over a conjunction,
  ``None`` for k-anonymity, t-closeness and (k,e)-anonymity. It is a float: simple
  ℓ-diversity and (α,k) admit a fractional ℓ (``alpha=0.4`` promises ``1/ℓ = 0.4``).
  Posterior targets (the certificate's ``1/ℓ``), the linkage ℓ and the r of r-robustness
  read it.
* :func:`promised_l_int` — the same rounded *up* to an integer, where a count is needed
  (GG's bucket size, Anatomy's group size, the ℓ the skew step restores): a group of
  ``⌈ℓ⌉`` rows is the smallest that can keep every frequency at most ``1/ℓ``.
* :func:`size_floor` — the smallest size any group satisfying the model can have whatever
  its SA values (k of k-anonymity and (α,k)/(k,e); ``⌈ℓ⌉`` of distinct, entropy and
  recursive ℓ-diversity, which need ``ℓ`` distinct values).
"""

from __future__ import annotations

import math
from typing import Any

#: ℓ within this of an integer counts as that integer when rounding up (float round-off of 1/α)
_ROUND = 1e-9


def promised_l(model: Any) -> float | None:
    """The ℓ a model promises (module docstring), or ``None``."""
    if model is None:
        return None
    members = getattr(model, "models", None)
    if members is not None:  # a conjunction: the strongest member's promise
        vals = [v for v in (promised_l(m) for m in members) if v is not None]
        return max(vals) if vals else None
    l = getattr(model, "l", None)
    if l is not None:
        return float(l)
    alpha = getattr(model, "alpha", None)
    if alpha is not None and float(alpha) > 0:
        return 1.0 / float(alpha)
    return None


def promised_l_int(model: Any) -> int | None:
    """:func:`promised_l` rounded up to an integer (``None`` when the model has no ℓ)."""
    l = promised_l(model)
    return None if l is None else int(math.ceil(l - _ROUND))


def size_floor(model: Any) -> int:
    """The smallest size any group satisfying ``model`` can have, whatever its SA values."""
    from .alpha_k import AlphaKAnonymity
    from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity

    members = getattr(model, "models", None)
    if members is not None:
        return max((size_floor(m) for m in members), default=1)
    if isinstance(model, (DistinctLDiversity, RecursiveCLDiversity, EntropyLDiversity)):
        return promised_l_int(model) or 1
    if isinstance(model, AlphaKAnonymity) and type(model).__name__ == "SimpleLDiversity":
        return 1  # a frequency bound alone: a group of one non-sensitive row satisfies it
    k = getattr(model, "k", None)  # k-anonymity, (α,k)-anonymity, (k,e)-anonymity
    if k is not None and not isinstance(k, bool) and float(k).is_integer():
        return int(k)
    return 1
