"""One run, typed: what is read, under which model, by which algorithm, how it is certified and
where it is written — a frozen :class:`RunSpec`, validated when it is made (one message form,
:mod:`openbook.params`), before any data is read.

It is built one way from each front door:

* a TOML file (:meth:`RunSpec.from_config` on :meth:`RunConfig.from_toml`), with the command
  line's flags laid over it (``openbook anonymize``: :func:`openbook.cli.anonymize.spec_from_args`
  applies them to the configuration first, :data:`openbook.config.FLAGS`);
* the Python API's keywords (:meth:`RunSpec.from_keywords`: ``openbook.anonymize``);
* an encoded table and a few choices (:meth:`RunSpec.for_table`: the demo, the studio).

:func:`openbook.engines.publish` runs a spec on an engine (this machine or Spark) and
returns the release, its certificate and its files — the one seam every front door goes
through.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from .config import RunConfig
from .errors import ParameterError
from .params import Boolean, Integer, Optional, Options, Real, Text, validate_params

#: the skew step's methods (paper 004; ``--skew``)
SKEW_METHODS = ("none", "r-suppression", "safe-d", "unsafe-d")
#: a posterior or risk target: a number in (0, 1]
_TARGET = Optional(Real(low=0.0, high=1.0, low_open=True))


def _frozen(m: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy of ``m`` (nested mappings too)."""
    return MappingProxyType({k: _frozen(v) if isinstance(v, Mapping) else v for k, v in (m or {}).items()})


def _thawed(m: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _thawed(v) if isinstance(v, Mapping) else v for k, v in m.items()}


@dataclass(frozen=True)
class Certification:
    """How the release is certified before it is written (:mod:`openbook.certificate`).

    ``enabled=False`` writes it uncertified (the sidecar says so); ``max_risk`` /
    ``max_reid_risk`` are the two lines' targets (``None``: the model's defaults);
    ``worlds`` the replay adversary's sampled worlds per unit (``None``: its default);
    ``earlier`` releases and ``against_registry`` (a registry folder or database) are the
    linkage adversary's; ``adversary_params`` each adversary's own parameters by name;
    ``enforce``: a failing certificate raises :class:`~openbook.errors.RiskError` (else the
    release comes back with its certificate, and nothing is written); ``api``: the refusal
    names the Python API's keywords, not the command line's flags."""

    enabled: bool = True
    max_risk: float | None = None
    max_reid_risk: float | None = None
    worlds: int | None = None
    against_registry: str | None = None
    earlier: tuple[Any, ...] = ()
    adversary_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    enforce: bool = True
    api: bool = False

    CONSTRAINTS = MappingProxyType({"enabled": Boolean(), "max_risk": _TARGET, "max_reid_risk": _TARGET,
                                    "worlds": Optional(Integer(minimum=1)), "against_registry": Optional(Text()),
                                    "enforce": Boolean(), "api": Boolean()})

    def __post_init__(self) -> None:
        for k, v in validate_params("certify", self.CONSTRAINTS, self.__dict__).items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "earlier", tuple(self.earlier))
        object.__setattr__(self, "adversary_params", _frozen(self.adversary_params))

    def params(self) -> dict[str, dict[str, Any]]:
        """The adversaries' parameters (``worlds`` given to the replay adversary)."""
        out = _thawed(self.adversary_params)
        if self.worlds is not None:
            out["replay"] = {**out.get("replay", {}), "worlds": int(self.worlds)}
        return out

    def earlier_releases(self) -> list[Any]:
        """``earlier`` then the releases of ``against_registry``, oldest first."""
        out = list(self.earlier)
        if self.against_registry:
            from .release.registry import ReleaseRegistry

            out += [r for _, r in ReleaseRegistry(self.against_registry, create=False).releases()]
        return out


@dataclass(frozen=True)
class Output:
    """Where the release is written: ``path`` (its sidecar beside it), ``force`` over a
    release openbook wrote, the ``inputs`` it must never overwrite, what the sidecar may
    publish, and the key that signs it."""

    path: str
    force: bool = False
    inputs: tuple[str, ...] = ()
    publish_suppressed_count: bool = False
    publish_identifier_names: bool = False
    sign_key: str | None = None

    CONSTRAINTS = MappingProxyType({"path": Text(), "force": Boolean(), "publish_suppressed_count": Boolean(),
                                    "publish_identifier_names": Boolean(), "sign_key": Optional(Text())})

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", str(self.path) if self.path is not None else self.path)
        for k, v in validate_params("output", self.CONSTRAINTS, self.__dict__).items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "inputs", tuple(str(x) for x in self.inputs))


@dataclass(frozen=True, eq=False)
class Source:
    """The table a run reads: ``input`` (a file, database URL or built-in dataset: the
    ``[input]`` keys), ``schema`` (the ``[schema]`` keys) and ``hierarchies`` (column ->
    spec), or ``frame`` (a DataFrame already in memory) under that schema. Compared by
    identity (a frame has no one truth value of equality)."""

    input: Mapping[str, Any] = field(default_factory=dict)
    schema: Mapping[str, Any] = field(default_factory=dict)
    hierarchies: Mapping[str, Any] = field(default_factory=dict)
    frame: Any = None

    def __post_init__(self) -> None:
        for k in ("input", "schema", "hierarchies"):
            object.__setattr__(self, k, _frozen(getattr(self, k)))

    def config(self) -> RunConfig:
        """The source as a run configuration's sections (what the readers take)."""
        return RunConfig(input=_thawed(self.input), schema=_thawed(self.schema),
                         hierarchies=_thawed(self.hierarchies))

    def files(self) -> tuple[str, ...]:
        """The files this source reads (never overwritten by a release)."""
        out = [self.input.get("path"), *self.hierarchies.values()]
        return tuple(str(x) for x in out if isinstance(x, str) and "://" not in x and x not in ("auto", "flat"))


@dataclass(frozen=True)
class Original:
    """The original table an audit or a certificate reads beside a release (``--original``):
    ``src`` (a file, a database URL or a built-in dataset's name), how it is read, and the
    ``hierarchies`` that replace the release's dataset's own (``--hierarchy``)."""

    src: str
    format: str | None = None
    table: str | None = None
    query: str | None = None
    hierarchies: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "src", str(self.src))
        object.__setattr__(self, "hierarchies", _frozen(self.hierarchies))

    def options(self) -> dict[str, Any]:
        """The keywords of :func:`openbook.pipeline.read_original`."""
        return {"format": self.format, "table": self.table, "query": self.query,
                "hierarchies": _thawed(self.hierarchies)}


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One run (module docstring): the ``source`` read (or a ``table`` already encoded), the
    privacy ``model`` (a :class:`~openbook.models.base.PrivacyModel`; a spec string or dict
    is parsed when the spec is made), the ``algorithm`` (a catalog name; ``None``: full-domain
    when ``params`` gives ``levels``, else the default) and its ``params`` (``seed`` among
    them), the ``skew`` step, the release ``kind`` (``None``: the algorithm's), the
    t-closeness reference, the ``certify`` choices, the ``output`` (``None``: nothing is
    written) and the engines' own options (``batch_rows``: full-domain search on the
    frequency table read in batches; ``max_fragment``: Spark Mondrian's largest fragment).
    Compared by identity (it may hold a table)."""

    model: Any
    source: Source | None = None
    table: Any = None
    algorithm: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    skew: str = "none"
    kind: str | None = None
    t_reference: Any = None
    certify: Certification = field(default_factory=Certification)
    output: Output | None = None
    batch_rows: int | None = None
    max_fragment: int | None = None

    CONSTRAINTS = MappingProxyType({"algorithm": Optional(Text()), "skew": Options(*SKEW_METHODS),
                                    "kind": Optional(Options("generalized", "bucketized")),
                                    "batch_rows": Optional(Integer(minimum=1)),
                                    "max_fragment": Optional(Integer(minimum=1))})

    def __post_init__(self) -> None:
        from .models import make_model
        from .models.base import PrivacyModel

        if (self.source is None) == (self.table is None):
            raise ParameterError("a run reads one table: give a source or an encoded table", parameter="input")
        for k, v in validate_params("run", self.CONSTRAINTS, self.__dict__).items():
            object.__setattr__(self, k, v)
        if self.model is None or (isinstance(self.model, Mapping) and not self.model):
            raise ParameterError("no privacy model given (--model, e.g. 'k=5' or 'l=3')", parameter="model")
        if not isinstance(self.model, PrivacyModel):
            object.__setattr__(self, "model", make_model(_thawed(self.model) if isinstance(self.model, Mapping)
                                                         else self.model))
        object.__setattr__(self, "params", _frozen(self.params))
        if self.algorithm is not None:
            from .algorithms.registry import algorithm_class

            algorithm_class(self.algorithm)  # an unknown name fails now, naming the known ones

    # -- the front doors ------------------------------------------------------------------
    @classmethod
    def from_config(cls, cfg: RunConfig, **choices: Any) -> "RunSpec":
        """The run a configuration describes (its TOML sections, flags already laid over
        them); ``choices`` are the fields no section holds (``force``, ``inputs``,
        ``batch_rows``, ``max_fragment``, ``adversary_params``, ``earlier``)."""
        model = cfg.model.get("spec") if "spec" in cfg.model else dict(cfg.model)
        algo = dict(cfg.algorithm)
        name = algo.pop("name", None)
        skew = algo.pop("skew", None) or "none"
        out, c = cfg.output, cfg.certify
        cert = Certification(enabled=bool(c.get("enabled", True)), max_risk=c.get("max_risk"),
                             max_reid_risk=c.get("max_reid_risk"), worlds=c.get("worlds"),
                             against_registry=c.get("against_registry"),
                             earlier=tuple(choices.pop("earlier", ())),
                             adversary_params=choices.pop("adversary_params", None) or {})
        output = None
        force, inputs = bool(choices.pop("force", False)), tuple(choices.pop("inputs", ()))
        if out.get("path"):
            output = Output(str(out["path"]), force=force, inputs=inputs,
                            publish_suppressed_count=bool(out.get("publish_suppressed_count", False)),
                            publish_identifier_names=bool(out.get("publish_identifier_names", False)),
                            sign_key=out.get("sign_key"))
        source = Source(input=cfg.input, schema=cfg.schema, hierarchies=cfg.hierarchies)
        return cls(model=model, source=source, algorithm=name, params=algo, skew=skew, kind=out.get("kind"),
                   t_reference=out.get("t_reference"), certify=cert, output=output, **choices)

    @classmethod
    def from_keywords(cls, data: Any, *, qi: Any, sa: str, model: Any, algorithm: str | None = None,
                      seed: int | None = None, hierarchies: Mapping[str, Any] | None = None,
                      sensitive: Mapping[str, Any] | None = None, identifiers: Any = (), keep: Any = (),
                      missing: str = "error", kind: str | None = None, max_risk: float | None = None,
                      max_reid_risk: float | None = None, certify: bool = True, earlier: Any = (),
                      skew: str | None = None, **params: Any) -> "RunSpec":
        """The run ``openbook.anonymize``'s keywords describe (:func:`openbook.api.anonymize`)."""
        schema = {"qi": list(qi), "sa": sa, "sensitive_sets": dict(sensitive) if sensitive else None,
                  "identifiers": list(identifiers), "keep": list(keep), "missing": missing}
        return cls(model=model, source=Source(schema=schema, hierarchies=dict(hierarchies or {}), frame=data),
                   algorithm=algorithm, params={**params, "seed": seed}, skew=skew or "none", kind=kind,
                   certify=Certification(enabled=certify, max_risk=max_risk, max_reid_risk=max_reid_risk,
                                         earlier=tuple(earlier), api=True))

    @classmethod
    def for_table(cls, table: Any, model: Any, algorithm: str | None = None, params: Mapping[str, Any] | None = None,
                  **fields: Any) -> "RunSpec":
        """A run on an encoded ``table`` (the demo, the studio): nothing written unless an
        ``output`` is given."""
        return cls(model=model, table=table, algorithm=algorithm, params=dict(params or {}), **fields)

    # -- what the engines read ------------------------------------------------------------
    @property
    def seed(self) -> int | None:
        return self.params.get("seed")

    def with_certify(self, **changes: Any) -> "RunSpec":
        """The same run with other certification choices."""
        return replace(self, certify=replace(self.certify, **changes))

    def anonymizer(self) -> Any:
        """The anonymizer this run names (:func:`openbook.pipeline.plan_algorithm`: the
        certificate's targets passed to an algorithm that builds to them), wrapped in the skew
        step when one is asked for."""
        from .algorithms.skewed import with_skew
        from .pipeline import plan_algorithm

        algo = plan_algorithm(self.algorithm, _thawed(self.params), self.model, max_risk=self.certify.max_risk,
                              max_reid_risk=self.certify.max_reid_risk)
        return with_skew(algo, self.skew, self.seed)

    def input_files(self) -> tuple[str, ...]:
        """Every file the run reads, which no release may overwrite."""
        own = self.source.files() if self.source is not None else ()
        given = self.output.inputs if self.output is not None else ()
        return tuple(dict.fromkeys([*own, *given]))
