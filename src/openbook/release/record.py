"""The release record, declared once: every key of a release's metadata (``Release.meta``,
:class:`ReleaseMeta`) and of its certificate (:class:`CertificateRecord`, :class:`Line`,
:class:`Finding`), its type, and what its sidecar does with it — the one place the sidecar's
writer (:func:`.sidecar.public_record`, a filter on these declarations), its validator
(:func:`.sidecar.validate`: the keys it accepts and requires) and its JSON Schema
(:mod:`.sidecar_schema`, docs/sidecar.schema.json) read.

Each key carries its **disclosure** (``Annotated[...]`` on a TypedDict key, ``field``
metadata on a dataclass field):

* :data:`PUBLIC` — every sidecar holds it;
* :data:`OPT_IN` — only a sidecar whose publisher opts in to the counts
  (``--publish-suppressed-count``: paper 004 randomizes the number R-suppression withholds
  precisely so that it stays hidden, docs/release-files.md);
* :data:`WRITER` — written by the writer itself, never taken from memory (the format, the
  digests, the files, the signature, the publisher's opt-ins);
* :data:`MEMORY` — kept in memory only, never written (a publisher's report, a loaded
  release's signature check).

The types are checked: mypy reads ``Release.meta`` as :class:`ReleaseMeta` and a certificate's
``to_dict`` as :class:`CertificateRecord` (``.ci/run``), so a key nobody declared is a type
error where it is written, and a test keeps the validator's and the schema's keys equal to
these declarations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Annotated, Any, Literal, Mapping, Required, TypedDict, get_args, get_origin, get_type_hints

Disclosure = Literal["public", "opt-in", "writer", "memory"]
PUBLIC: Disclosure = "public"
OPT_IN: Disclosure = "opt-in"
WRITER: Disclosure = "writer"
MEMORY: Disclosure = "memory"


def _disclosed(kind: Disclosure) -> dict[str, Disclosure]:
    """A dataclass field's metadata: its disclosure."""
    return {"disclosure": kind}


class ReleaseMeta(TypedDict, total=False):
    """A release's metadata (``Release.meta``), in the order its sidecar lists it."""

    format: Annotated[str, WRITER]
    digest: Annotated[str, WRITER]
    signature: Annotated[dict[str, Any], WRITER]
    files: Annotated[dict[str, Any], WRITER]
    openbook_version: Annotated[str, PUBLIC]
    kind: Required[Annotated[str, PUBLIC]]
    #: a bucketized QI-table whose QIs are recoded (``"local"``)
    qi_recoding: Annotated[str, PUBLIC]
    schema: Required[Annotated[dict[str, Any], PUBLIC]]
    model: Annotated[dict[str, Any] | None, PUBLIC]
    #: the algorithm's provenance (public: :data:`ALGORITHM_KEYS`; all of it opted in)
    algorithm: Annotated[dict[str, Any], PUBLIC]
    n_input: Annotated[int, OPT_IN]
    n_published: Required[Annotated[int, PUBLIC]]
    n_suppressed: Annotated[int, OPT_IN]
    #: the classes the files show (a reader could count them)
    n_groups: Annotated[int, PUBLIC]
    levels: Annotated[list[int] | None, PUBLIC]
    #: a built-in dataset's name (a file path is never published)
    source: Annotated[str, PUBLIC]
    sa_reference: Annotated[dict[str, Any], PUBLIC]
    check: Annotated[dict[str, Any], PUBLIC]
    #: the skew step (public: :data:`SKEW_PUBLIC`; all of it opted in)
    skew: Annotated[dict[str, Any], PUBLIC]
    certificate: Annotated[Mapping[str, Any], PUBLIC]
    publish: Annotated[dict[str, bool], WRITER]
    #: R-suppression's expected rate (its spread: the run's rate is random)
    skew_spread: Annotated[dict[str, float], MEMORY]
    #: MASK's report of its SA distortion (the publisher's)
    distortion: Annotated[dict[str, Any], MEMORY]
    #: a loaded release's signature check (:mod:`.signing`)
    signature_verified: Annotated[str, MEMORY]


#: the keys of the algorithm's provenance an adversary replays with (Kerckhoffs; paper 000
#: §2.4): every sidecar publishes these, the rest (diagnostics, timings) only when opted in
ALGORITHM_KEYS = ("algorithm", "params", "model", "minimality", "l", "r", "levels", "group_size", "sensitive_set",
                  "k_anonymizer", "base_provenance", "k_partition")
#: the skew step's keys every sidecar publishes (its counts only when opted in)
SKEW_PUBLIC = ("step", "method", "l")


class AwareRecord(TypedDict, total=False):
    """``certificate.algorithm_aware``: the adversary that knows the algorithm, or why none."""

    adversary: Annotated[str | None, PUBLIC]
    reason: Annotated[str, PUBLIC]


class CertificateRecord(TypedDict, total=False):
    """A certified release's ``certificate`` (:meth:`openbook.certificate.Certificate.to_dict`)."""

    verdict: Annotated[str, PUBLIC]
    #: a failing certificate's headline counts people: the sidecar's is count-free
    headline: Annotated[str, PUBLIC]
    lines: Annotated[list[dict[str, Any]], PUBLIC]
    target: Annotated[float | None, PUBLIC]
    target_source: Annotated[str, PUBLIC]
    knowledge: Annotated[dict[str, Any], PUBLIC]
    algorithm_aware: Annotated[dict[str, Any], PUBLIC]
    seconds: Annotated[float, PUBLIC]
    adversaries: Required[Annotated[list[dict[str, Any]], PUBLIC]]


class UncertifiedRecord(TypedDict, total=False):
    """An uncertified release's ``certificate`` (``--no-certify``)."""

    verdict: Annotated[str, PUBLIC]
    reason: Annotated[str, PUBLIC]
    adversaries: Annotated[list[dict[str, Any]], PUBLIC]


@dataclass
class Line:
    """One of the certificate's two lines — identity or attribute — in plain words. A failing
    line's count of people is published as "some" (``None``), its words count-free."""

    name: str
    passes: bool
    target: float | None
    source: str
    worst: float | None = None
    n_above: int | None = 0
    n_unresolved: int | None = 0
    adversaries: list[str] = field(default_factory=list)
    text: str = ""
    distance_target: float | None = None
    worst_distance: float | None = None
    certainty: bool = False

    #: the keys a line record must hold
    REQUIRED = ("name", "passes")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FindingRecord:
    """One adversary's figures against one release, as its sidecar holds them
    (:class:`openbook.certificate.Finding` adds the behaviour). ``n_above`` and
    ``n_unresolved`` above 0 are published as "some" (``None``): they may count absent people."""

    adversary: str
    title: str
    paper: str
    disclosure: str
    applies: bool
    reason: str
    ran: bool = False
    #: the bound this adversary's figure is judged against: a posterior bound (attribute), 1 with
    #: ``target_kind="certainty"`` (nobody certain), or a re-identification risk (identity)
    target: float | None = None
    max_posterior: float | None = None
    #: people considered, absent among them (``None`` when read from a sidecar that does
    #: not publish them: they count people who were not published, docs/release-files.md)
    n_people: int | None = field(default=None, metadata=_disclosed(OPT_IN))
    n_absent: int | None = field(default=None, metadata=_disclosed(OPT_IN))
    n_above: int | None = 0
    n_unresolved: int | None = 0
    method: str = ""
    seconds: float = field(default=0.0, metadata=_disclosed(OPT_IN))
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: the baseline adversary's max posterior over the people this adversary considered
    baseline_max_posterior: float | None = None
    #: this adversary's posterior is the one of an adversary who knows the algorithm
    knows_algorithm: bool = False
    #: ``"posterior"``, ``"certainty"`` (posterior < 1) or ``"re-identification"``
    target_kind: str = "posterior"
    #: t-closeness: the bound on the distance of a posterior to the table's distribution, and
    #: the largest distance found (a 3-standard-error upper bound where sampled)
    distance_target: float | None = None
    max_distance: float | None = None

    #: the keys a finding record must hold
    REQUIRED = ("adversary", "applies", "ran")

    @property
    def passes(self) -> bool:
        """:func:`finding_passes` of this finding."""
        return finding_passes(self.applies, self.ran, self.n_above, self.n_unresolved)

    @property
    def judged(self) -> bool:
        """:func:`finding_judged` of this finding."""
        return finding_judged(self.applies, self.ran, self.target, self.distance_target)


# -------------------------------------------------------------------------------------------
# the verdict rule, once (the certificate decides with it, the sidecar's validator checks it)
# -------------------------------------------------------------------------------------------
def finding_passes(applies: bool, ran: bool, n_above: int | None, n_unresolved: int | None) -> bool:
    """Does an adversary's finding pass? One that does not apply passes; one that could not
    run fails; else nobody above the target and nobody unresolved (``None``, "some": fails)."""
    if not applies:
        return True
    return bool(ran) and n_above == 0 and n_unresolved == 0


def finding_judged(applies: bool, ran: bool, target: float | None, distance_target: float | None) -> bool:
    """Does a finding count toward the verdict: it applies and has a target, or could not run?"""
    return bool(applies) and (target is not None or distance_target is not None or not ran)


def verdict_of(lines_pass: Any) -> str:
    """The verdict: ``pass`` when every line passes (each line is made of the judged findings
    that bear on it), else ``fail``."""
    return "pass" if all(bool(x) for x in lines_pass) else "fail"


# -------------------------------------------------------------------------------------------
# reading the declarations
# -------------------------------------------------------------------------------------------
def _key_disclosure(hint: Any) -> tuple[Disclosure, bool]:
    """``(disclosure, required)`` of one TypedDict key's annotation."""
    required = get_origin(hint) is Required
    if required:
        hint = get_args(hint)[0]
    for meta in getattr(hint, "__metadata__", ()):
        if meta in (PUBLIC, OPT_IN, WRITER, MEMORY):
            return meta, required
    raise TypeError(f"a record key without a disclosure: {hint!r}")


def keys(record: Any, *disclosures: Disclosure) -> tuple[str, ...]:
    """The keys of ``record`` (a TypedDict or a dataclass of this module) whose disclosure is
    one of ``disclosures`` (all when none is given), in declaration order."""
    if isinstance(record, type) and hasattr(record, "__dataclass_fields__"):
        found = [(f.name, f.metadata.get("disclosure", PUBLIC)) for f in fields(record)]
    else:
        found = [(k, _key_disclosure(h)[0]) for k, h in get_type_hints(record, include_extras=True).items()]
    return tuple(k for k, d in found if not disclosures or d in disclosures)


def required_keys(record: Any) -> tuple[str, ...]:
    """The keys every ``record`` must hold, in declaration order."""
    if isinstance(record, type) and hasattr(record, "__dataclass_fields__"):
        return tuple(getattr(record, "REQUIRED", ()))
    return tuple(k for k, h in get_type_hints(record, include_extras=True).items() if _key_disclosure(h)[1])


def written(record: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(allowed, required)``: the keys a written ``record`` may and must hold (every
    disclosure but :data:`MEMORY`) — what the validator checks a sidecar's record against."""
    return keys(record, PUBLIC, OPT_IN, WRITER), required_keys(record)
