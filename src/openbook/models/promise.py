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
from dataclasses import dataclass
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


# ---------------------------------------------------------------------------------------
# identity and attribute: what a release must protect, split (issue: both lines)
# ---------------------------------------------------------------------------------------
#: the default bound on re-identification risk when the model names no k: 0.2, the threshold
#: the re-identification literature and ARX use for "records at risk" (El Emam & Dankar 2008;
#: El Emam, "Guide to the De-Identification of Personal Health Information", 2013, recommends
#: 0.2 for releases to trusted recipients and 0.05-0.1 for public ones)
DEFAULT_REID_RISK = 0.2


def _members(model: Any) -> list[Any]:
    members = getattr(model, "models", None)
    return list(members) if members is not None else ([] if model is None else [model])


def identity_k(model: Any) -> int | None:
    """The k a model asks of the published QI classes — k-anonymity's, (α,k)-anonymity's and
    (k,e)-anonymity's k (the largest over a conjunction) — or ``None``. It is a promise about
    identity: every published QI combination is shared by at least k records."""
    from .alpha_k import AlphaKAnonymity
    from .k_anonymity import KAnonymity
    from .k_e_anonymity import KEAnonymity

    ks = []
    for m in _members(model):
        if isinstance(m, KAnonymity) or (isinstance(m, (AlphaKAnonymity, KEAnonymity))
                                         and type(m).__name__ != "SimpleLDiversity"):
            k = int(getattr(m, "k", 1) or 1)
            if isinstance(m, KAnonymity) or k > 1:
                ks.append(k)
    return max(ks) if ks else None


def attribute_part(model: Any) -> Any:
    """The model without its k-anonymity — what the groups of a bucketized release (the SA-table's
    groups) must satisfy, while :func:`identity_k` applies to its QI classes: k-anonymity
    members dropped, (α,k)-anonymity's k set to 1 ((k,e)-anonymity stays whole: its k counts
    distinct SA values, Zhang et al.). ``None`` when nothing is left (k-anonymity alone)."""
    from .alpha_k import AlphaKAnonymity
    from .composite import AllOf
    from .k_anonymity import KAnonymity

    out = []
    for m in _members(model):
        if isinstance(m, KAnonymity):
            continue
        if isinstance(m, AlphaKAnonymity) and type(m).__name__ != "SimpleLDiversity" and m.k > 1:
            m = AlphaKAnonymity(alpha=m.alpha, k=1, sensitive_set=m.sensitive_set, set_mode=m.set_mode)
        out.append(m)
    if not out:
        return None
    return out[0] if len(out) == 1 else AllOf(out)


def distance_model(model: Any) -> Any:
    """The t-closeness member of a model (the tightest t), or ``None``."""
    from .t_closeness import TCloseness

    ts = [m for m in _members(model) if isinstance(m, TCloseness)]
    return min(ts, key=lambda m: m.t) if ts else None


def sensitive_set_of(model: Any) -> tuple[str | None, str]:
    """``(name, set_mode)`` of the sensitive set a model's frequency bound names, or ``(None, "each")``."""
    for m in _members(model):
        name = getattr(m, "sensitive_set", None)
        if name is not None:
            return name, getattr(m, "set_mode", "each")
    return None, "each"


@dataclass(frozen=True)
class AttributeTarget:
    """What the attribute line of a certificate holds a release to (docs/certificate.md).

    ``posterior``: a bound on every person's posterior of every target (an SA value, or the
    model's sensitive set) — ``1/ℓ`` of the ℓ-models, α of (α,k), or ``--max-risk``;
    ``distance``: a bound on the distance (the model's EMD) of a person's posterior
    distribution to the table's SA distribution — t of t-closeness; ``certainty``: nobody's SA
    may be certain (posterior < 1), the homogeneity bound of k-anonymity and (k,e)-anonymity,
    whose models bound no posterior. ``source`` says where each came from."""

    posterior: float | None = None
    distance: float | None = None
    certainty: bool = False
    source: str = ""

    def describe(self) -> str:
        parts = []
        if self.posterior is not None:
            parts.append(f"nobody's posterior above {self.posterior:.4g}")
        if self.distance is not None:
            parts.append(f"nobody's posterior farther than t = {self.distance:.4g} from the table's distribution")
        if self.certainty and self.posterior is None:
            parts.append("nobody's sensitive value certain (posterior < 1)")
        return "; ".join(parts) or "no bound"

    def to_dict(self) -> dict[str, Any]:
        return {"posterior": self.posterior, "distance": self.distance, "certainty": self.certainty,
                "source": self.source}


def attribute_target(model: Any, max_risk: float | None = None) -> AttributeTarget:
    """The attribute line's target for ``model`` (``max_risk``: ``--max-risk``, a posterior
    bound that replaces the model's)."""
    l = promised_l(model)
    dm = distance_model(model)
    posterior, source = None, []
    if max_risk is not None:
        posterior = float(max_risk)
        source.append("--max-risk")
    elif l is not None:
        posterior = 1.0 / l
        source.append("the model's 1/ℓ" if getattr(model, "alpha", None) is None or getattr(model, "l", None)
                      else "the model's α")
    distance = None if dm is None else float(dm.t)
    if distance is not None:
        source.append("the model's t")
    certainty = posterior is None and distance is None
    if certainty:
        source.append("the default homogeneity bound (the model bounds no posterior)")
    return AttributeTarget(posterior, distance, certainty, ", ".join(source))


def identity_target(model: Any, max_reid_risk: float | None = None) -> tuple[float, str]:
    """``(bound, source)`` of the identity line: ``--max-reid-risk``, else ``1/k`` of the model's
    k (:func:`identity_k`), else :data:`DEFAULT_REID_RISK`."""
    if max_reid_risk is not None:
        return float(max_reid_risk), "--max-reid-risk"
    k = identity_k(model)
    if k is not None:
        return 1.0 / k, f"the model's 1/k (k = {k})"
    return DEFAULT_REID_RISK, f"the default {DEFAULT_REID_RISK:g} (records at risk, El Emam & Dankar 2008)"


def identity_floor(model: Any, max_reid_risk: float | None = None) -> int:
    """The smallest QI class that keeps prosecutor risk within the identity target."""
    bound, _ = identity_target(model, max_reid_risk)
    return max(1, int(math.ceil(1.0 / bound - _ROUND)))


def attribute_requirement(model: Any, target: AttributeTarget) -> Any:
    """What every group of an SA-only grouping must satisfy so that a posterior averaged over
    groups meets ``target``: the model's attribute part (:func:`attribute_part`) and, for a
    posterior bound, each target's frequency at most the bound (the sensitive set's values when
    the model names one); for the homogeneity bound, at least two distinct SA values."""
    from .alpha_k import AlphaKAnonymity
    from .composite import AllOf
    from .l_diversity import DistinctLDiversity

    parts = []
    base = attribute_part(model)
    if base is not None:
        parts.append(base)
    if target.posterior is not None:
        name, mode = sensitive_set_of(model)
        parts.append(AlphaKAnonymity(alpha=min(1.0, float(target.posterior)), sensitive_set=name,
                                     set_mode=mode if name is not None else "each"))
    if target.certainty:
        parts.append(DistinctLDiversity(l=2))
    if not parts:
        return DistinctLDiversity(l=1)
    return parts[0] if len(parts) == 1 else AllOf(parts)
