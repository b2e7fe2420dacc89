"""Privacy models: predicates over per-group SA counts, vectorised over groups.

One module per concept (``docs/models.md``):

* ``k_anonymity``: :class:`KAnonymity` (``k-anonymity``)
* ``l_diversity``: :class:`DistinctLDiversity` (``distinct-l-diversity``),
  :class:`EntropyLDiversity` (``entropy-l-diversity``), :class:`RecursiveCLDiversity`
  (``recursive-cl-diversity``)
* ``alpha_k``: :class:`AlphaKAnonymity` (``alpha-k-anonymity``), :class:`SimpleLDiversity`
  (``simple-l-diversity``; binary ℓ-diversity with a one-value sensitive set)
* ``t_closeness``: :class:`TCloseness` (``t-closeness``; equal / ordered / hierarchical EMD)
* ``k_e_anonymity``: :class:`KEAnonymity` (``k-e-anonymity``)
* ``eligibility``: :class:`LEligibility` (``l-eligibility``), :func:`explain_eligibility`
* ``composite``: :class:`AllOf` (``all-of``, a conjunction)
* ``registry``: :data:`MODELS` (name -> class), :func:`make_model` (dict / CLI string specs)
* ``levels``: :func:`compute_levels` (every level at once, for ``openbook check``)
* ``promise``: :func:`~openbook.models.promise.promised_l` (the ℓ a model promises, the
  certificate's posterior target), ``size_floor``
* ``_checks``: exact ratio comparisons and the checks the models share
"""

from ._checks import TOL
from .alpha_k import AlphaKAnonymity, SimpleLDiversity
from .base import PrivacyModel, SADomain
from .composite import AllOf
from .eligibility import (
    EligibilityReport,
    EligibilityViolation,
    LEligibility,
    explain_eligibility,
)
from .k_anonymity import KAnonymity
from .k_e_anonymity import KEAnonymity
from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .levels import compute_levels
from .registry import MODELS, make_model
from .t_closeness import TCloseness

__all__ = [
    "MODELS",
    "TOL",
    "AllOf",
    "AlphaKAnonymity",
    "DistinctLDiversity",
    "EligibilityReport",
    "EligibilityViolation",
    "EntropyLDiversity",
    "KAnonymity",
    "KEAnonymity",
    "LEligibility",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SADomain",
    "SimpleLDiversity",
    "TCloseness",
    "compute_levels",
    "explain_eligibility",
    "make_model",
]
