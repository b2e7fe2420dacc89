"""The pandas-first Python API: DataFrames in, objects with ``.to_pandas()`` out.

Three functions cover what the CLI does — the same pipeline, the same checks, the same
certificate:

* :func:`anonymize` — a DataFrame, a schema, a model (and optionally an algorithm) to a
  verified, certified :class:`~openbook.release.Release` (``.to_pandas()``, ``.save(path)``,
  ``.certificate``); a release the certificate fails raises :class:`~openbook.errors.RiskError`;
* :func:`check` — the levels a raw table satisfies (k, ℓ variants, α, t, eligibility);
* :func:`certify` — the certificate of a release against the original table.

Example (the synthetic census table ships with openbook; no download)::

    >>> import openbook as ob
    >>> df = ob.load_dataset("synthetic", n_rows=3000).frame
    >>> rel = ob.anonymize(df, qi=["age:numeric", "sex", "race"], sa="occupation", model="l=3", seed=7)
    >>> rel.meta["certificate"]["verdict"], rel.kind, rel.n_published == len(df)
    ('pass', 'bucketized', True)

:func:`anonymize` is one typed run (:class:`openbook.run.RunSpec`) published by
:func:`openbook.engines.publish` — the seam the command line, the demo and the studio use too;
a run can be built and published directly (here refused releases come back, nothing written)::

    >>> spec = ob.RunSpec.from_keywords(df, qi=["age:numeric", "sex", "race"], sa="occupation", model="l=3",
    ...                                 algorithm="anatomy", seed=7).with_certify(enforce=False)
    >>> done = ob.publish(spec)
    >>> done.certificate.verdict, [ln.passes for ln in done.certificate.lines], done.files
    ('fail', [False, True], [])
    >>> levels = ob.check(df, qi=["age:numeric", "sex", "race"], sa="occupation")
    >>> int(levels["k"]) >= 1, list(levels.to_pandas().columns[:2])
    (True, ['n_rows', 'n_groups'])
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from .data.schema import Schema


def _schema(qi: Sequence[str], sa: str, *, sensitive: Mapping[str, Sequence[Any]] | None = None,
            identifiers: Sequence[str] = (), keep: Sequence[str] = (), missing: str = "error") -> Schema:
    return Schema.build(qi=list(qi), sa=sa, sensitive_sets=dict(sensitive) if sensitive else None,
                        identifiers=list(identifiers), keep=list(keep), missing=missing)


def _frame(data: Any) -> pd.DataFrame:
    from .data.loaders import read_table

    return read_table(data)


def _hierarchies(hierarchies: Mapping[str, Any] | None, schema: Schema) -> dict[str, Any]:
    from .pipeline import with_hierarchies

    return with_hierarchies({}, hierarchies or {}, schema)


def anonymize(data: Any, *, qi: Sequence[str], sa: str, model: Any, algorithm: str | None = None,
              seed: int | None = None, hierarchies: Mapping[str, Any] | None = None,
              sensitive: Mapping[str, Sequence[Any]] | None = None, identifiers: Sequence[str] = (),
              keep: Sequence[str] = (), missing: str = "error", kind: str | None = None,
              max_risk: float | None = None, max_reid_risk: float | None = None, certify: bool = True,
              earlier: Sequence[Any] = (), **params: Any) -> Any:
    """Anonymize ``data`` (a DataFrame or a file path) into a verified, certified release.

    ``qi``: QI columns, each ``"name"`` or ``"name:kind"`` (``numeric``, ``categorical``,
    ``ordinal``); ``sa``: the sensitive attribute; ``model``: a spec such as ``"l=3"``,
    ``"k=5"``, ``"simple-l=6,set=NAME"`` (with ``sensitive={"NAME": [...]}``) or a model
    object; ``algorithm``: a name of ``openbook.catalog.CATALOG`` (default:
    Generalized Anatomy, whose release passes both lines of its own certificate —
    :func:`openbook.pipeline.default_algorithm`);
    ``seed``: the seed of randomized algorithms (never written into the release);
    ``hierarchies``: column -> ARX CSV path, ``"adult:paper001"`` or a Hierarchy;
    ``max_risk``/``max_reid_risk``/``certify``/``earlier``: the certificate (:mod:`openbook.certificate`);
    other keywords are the algorithm's parameters (``levels=``, ``max_suppression=``, ...).
    """
    from .engines import publish
    from .run import RunSpec

    spec = RunSpec.from_keywords(data, qi=qi, sa=sa, model=model, algorithm=algorithm, seed=seed,
                                 hierarchies=hierarchies, sensitive=sensitive, identifiers=identifiers, keep=keep,
                                 missing=missing, kind=kind, max_risk=max_risk, max_reid_risk=max_reid_risk,
                                 certify=certify, earlier=earlier, **params)
    return publish(spec).release


class Levels:
    """The levels a table satisfies (:func:`openbook.models.levels.compute_levels`)."""

    def __init__(self, levels: Mapping[str, Any], *, source: str) -> None:
        self.levels = dict(levels)
        self.source = source

    def __getitem__(self, key: str) -> Any:
        return self.levels[key]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.levels)

    def to_pandas(self) -> pd.DataFrame:
        """One row, one column per level."""
        return pd.DataFrame([self.levels])

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.levels.items())
        return f"Levels({shown})"


def check(data: Any, *, qi: Sequence[str], sa: str, c: float = 2.0,
          sensitive: Mapping[str, Sequence[Any]] | None = None,
          hierarchies: Mapping[str, Any] | None = None) -> Levels:
    """Every level the raw table ``data`` satisfies: k, distinct/entropy/recursive ℓ, α,
    t (equal; ordered for a numeric SA), ℓ-eligibility."""
    from .data.grouping import group_ids
    from .data.table import encode
    from .models.levels import compute_levels

    schema = _schema(qi, sa, sensitive=sensitive)
    table = encode(_frame(data), schema, _hierarchies(hierarchies, schema), source="DataFrame")
    cls, n = group_ids(table.qi_codes)
    return Levels(compute_levels(table.group_sa_counts(cls, n), table.sa_domain, c=c), source="DataFrame")


def certify(release: Any, *, original: Any, max_risk: float | None = None, max_reid_risk: float | None = None,
            earlier: Sequence[Any] = (), adversaries: Sequence[str] | None = None,
            hierarchies: Mapping[str, Any] | None = None) -> Any:
    """The certificate of ``release`` against the ``original`` table (a DataFrame, a path,
    or an encoded table): every adversary that applies (or the named ones), both lines
    (identity: ``max_reid_risk``, default 1/k or 0.2; sensitive value: ``max_risk``, default the
    model's) and the verdict. ``hierarchies`` must be those the release was made with."""
    from .certificate import certify as _certify
    from .data.table import EncodedTable, encode

    if isinstance(original, EncodedTable):
        table = original
    else:
        schema = release.input_schema()
        table = encode(_frame(original), schema, _hierarchies(hierarchies, schema), source="DataFrame")
    return _certify(release, original=table, earlier=earlier, max_risk=max_risk, max_reid_risk=max_reid_risk,
                    adversaries=adversaries)
