"""Privacy models by name: the registry, and parsing of model specs (dicts and CLI strings).

A spec is one of

* a model instance (returned as is);
* a dict ``{"model": <registry name>, **params}`` — the form ``PrivacyModel.to_dict()``
  writes, so ``make_model(m.to_dict()) == m``; ``{"model": "all-of", "models": [...]}`` is a
  conjunction; a list of specs is a conjunction too;
* a string, either ``"<registry name>:key=value,..."`` (also ``"<name>(key=value,...)"``) or
  the CLI shorthand::

      k=5                      k-anonymity
      l=3  | distinct-l=3      distinct ℓ-diversity
      entropy-l=3              entropy ℓ-diversity
      recursive-l=3,c=2        recursive (c,ℓ)-diversity
      alpha=0.2,k=5            (α,k)-anonymity   (also set=NAME, set-mode=each|total)
      simple-l=6,set=sens      simple / binary ℓ-diversity (also set-mode=each|total)
      t=0.2 | t=0.2,distance=ordered|hierarchical   t-closeness
      k=5,e=10000              (k,e)-anonymity
      eligible-l=6             ℓ-eligibility

  A key that does not belong to the model being read starts the next model, so
  ``k=5,l=3`` is 5-anonymity AND distinct 3-diversity; ``&`` or ``;`` also separate models.
  Modifier keys (``c``, ``distance``, ``set``, ``set-mode``, ``e``, and ``k`` after
  ``alpha``) follow their model's key.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from ..errors import ParameterError
from .alpha_k import AlphaKAnonymity, SimpleLDiversity
from .base import PrivacyModel
from .composite import AllOf
from .eligibility import LEligibility
from .k_anonymity import KAnonymity
from .k_e_anonymity import KEAnonymity
from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .t_closeness import TCloseness

#: the CLI shorthand, one line per model (``anonymize --help`` lists it)
SPEC_HELP = """\
  k=5                         k-anonymity
  l=3 | distinct-l=3          distinct l-diversity
  entropy-l=3                 entropy l-diversity
  recursive-l=3,c=2           recursive (c,l)-diversity
  alpha=0.2,k=5               (alpha,k)-anonymity (also set=NAME, set-mode=each|total)
  simple-l=6,set=NAME         simple / binary l-diversity of a sensitive set (--sensitive NAME=v1|v2)
  t=0.2[,distance=ordered|hierarchical]   t-closeness (EMD)
  k=5,e=1000                  (k,e)-anonymity (numeric SA)
  eligible-l=6                l-eligibility
  models joined by ',' (a key of another model starts it), '&' or ';' must all hold"""

MODELS: dict[str, type[PrivacyModel]] = {
    cls.name: cls
    for cls in (
        KAnonymity,
        DistinctLDiversity,
        EntropyLDiversity,
        RecursiveCLDiversity,
        AlphaKAnonymity,
        SimpleLDiversity,
        TCloseness,
        KEAnonymity,
        LEligibility,
        AllOf,
    )
}

#: Other spellings accepted for registry names.
ALIASES = {
    "l-diversity": "distinct-l-diversity",
    "recursive-l-diversity": "recursive-cl-diversity",
    "alpha-k": "alpha-k-anonymity",
    "binary-l-diversity": "simple-l-diversity",
    "ke-anonymity": "k-e-anonymity",
}

# Shorthand: key that starts a model -> (model name, parameter).
_HEADS = {
    "k": ("k-anonymity", "k"),
    "l": ("distinct-l-diversity", "l"),
    "distinct-l": ("distinct-l-diversity", "l"),
    "entropy-l": ("entropy-l-diversity", "l"),
    "recursive-l": ("recursive-cl-diversity", "l"),
    "alpha": ("alpha-k-anonymity", "alpha"),
    "simple-l": ("simple-l-diversity", "l"),
    "binary-l": ("simple-l-diversity", "l"),
    "t": ("t-closeness", "t"),
    "eligible-l": ("l-eligibility", "l"),
    "eligibility-l": ("l-eligibility", "l"),
}
_SET_KEYS = {"set": "sensitive_set", "set-mode": "set_mode", "set_mode": "set_mode"}
# Shorthand: model -> modifier key -> parameter.
_MODIFIERS = {
    "alpha-k-anonymity": {"k": "k", **_SET_KEYS},
    "simple-l-diversity": dict(_SET_KEYS),
    "recursive-cl-diversity": {"c": "c"},
    "t-closeness": {"distance": "distance"},
    "k-anonymity": {"e": "e"},
}
_STRING_PARAMS = {"sensitive_set", "set_mode", "distance"}


def known_names() -> str:
    return ", ".join(sorted(MODELS))


def model_class(name: str) -> type[PrivacyModel]:
    """The model class registered under ``name`` (or an alias)."""
    key = ALIASES.get(name, name)
    try:
        return MODELS[key]
    except KeyError:
        raise ParameterError(
            f"unknown privacy model {name!r} (known: {known_names()})",
            parameter="model",
            value=name,
        ) from None


def make_model(spec: Any) -> PrivacyModel:
    """Build a privacy model from a spec (see the module docstring)."""
    if isinstance(spec, PrivacyModel):
        return spec
    if isinstance(spec, dict):
        return _from_dict(spec)
    if isinstance(spec, (list, tuple)):
        return AllOf([make_model(s) for s in spec])
    if isinstance(spec, str):
        return _from_string(spec)
    raise ParameterError(
        f"a model spec must be a dict, a string or a list of them, got {spec!r}",
        parameter="model",
        value=spec,
    )


def _from_dict(spec: dict[str, Any]) -> PrivacyModel:
    params = dict(spec)
    if "model" not in params:
        raise ParameterError(
            f"a model spec dict needs a 'model' key (one of: {known_names()})", parameter="model"
        )
    cls = model_class(params.pop("model"))
    if cls is AllOf:
        members = params.pop("models", None)
        if params or not isinstance(members, (list, tuple)):
            raise ParameterError(
                "all-of takes exactly one parameter, 'models' (a list of specs)",
                parameter="models",
            )
        return AllOf([make_model(s) for s in members])
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ParameterError(
            f"{cls.name}: unknown parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)} (accepted: {', '.join(accepted)})",
            parameter=unknown[0],
        )
    try:
        return cls(**params)
    except TypeError as exc:  # a required parameter is missing
        missing = [
            p
            for p, v in inspect.signature(cls.__init__).parameters.items()
            if p != "self" and v.default is inspect.Parameter.empty and p not in params
        ]
        raise ParameterError(
            f"{cls.name}: missing parameter {', '.join(missing) or '?'} ({exc})",
            parameter=missing[0] if missing else None,
        ) from None


def _parse_value(text: str, param: str) -> Any:
    text = text.strip()
    if param in _STRING_PARAMS:
        return None if text.lower() == "none" else text
    # ASCII numbers only: Python's int()/float() also read other scripts' digits ("٣" is 3),
    # which a reader of the spec would not take for a number
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", text):
        return float(text)
    return None if text.lower() == "none" else text


def _pairs(text: str) -> list[tuple[str, str]]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ParameterError(
                f"cannot read {item!r} in model spec {text!r}: expected key=value",
                parameter="model",
                value=text,
            )
        out.append((key.strip().lower(), value.strip()))
    return out


def _from_string(text: str) -> PrivacyModel:
    s = text.strip()
    if not s:
        raise ParameterError(f"empty model spec (known models: {known_names()})", parameter="model")
    if s.startswith("{") or s.startswith("["):
        try:
            return make_model(json.loads(s))
        except json.JSONDecodeError as exc:
            msg = f"model spec is not valid JSON: {exc}"
            raise ParameterError(msg, parameter="model") from None
    parts = [p for p in re.split(r"\s*(?:&|;|\band\b)\s*", s) if p.strip()]
    models: list[PrivacyModel] = []
    for part in parts:
        models.extend(_part(part))
    return models[0] if len(models) == 1 else AllOf(models)


def _part(text: str) -> list[PrivacyModel]:
    m = re.fullmatch(r"([A-Za-z][\w-]*)\s*(?::(.*)|\((.*)\))", text.strip())
    if m and (m.group(1).lower() in MODELS or m.group(1).lower() in ALIASES):
        cls = model_class(m.group(1).lower())
        body = m.group(2) if m.group(2) is not None else m.group(3)
        params = {k.replace("-", "_"): v for k, v in _pairs(body or "")}
        if "set" in params:
            params["sensitive_set"] = params.pop("set")
        values = {k: _parse_value(v, k) for k, v in params.items()}
        return [_from_dict({"model": cls.name, **values})]
    specs: list[dict[str, Any]] = []
    for key, raw in _pairs(text):
        cur = specs[-1] if specs else None
        mods = _MODIFIERS.get(cur["model"], {}) if cur else {}
        if cur is not None and key in mods and mods[key] not in cur:
            param = mods[key]
            if cur["model"] == "k-anonymity" and param == "e":
                cur["model"] = "k-e-anonymity"
            cur[param] = _parse_value(raw, param)
        elif key in _HEADS:
            model, param = _HEADS[key]
            specs.append({"model": model, param: _parse_value(raw, param)})
        else:
            owners = sorted(k for k, v in _HEADS.items() if v[0] in _owners_of(key))
            hint = f" ({key} must follow {' or '.join(owners)})" if owners else ""
            raise ParameterError(
                f"cannot read {key}={raw} in model spec {text!r}{hint}; shorthand keys: "
                f"{', '.join(sorted(_HEADS))}; or use a model name: {known_names()}",
                parameter=key,
                value=raw,
            )
    return [_from_dict(spec) for spec in specs]


def _owners_of(key: str) -> set[str]:
    return {model for model, mods in _MODIFIERS.items() if key in mods}
