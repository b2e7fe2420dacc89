"""From a run configuration to an encoded table, a model, an anonymizer and a release —
the steps ``openbook anonymize`` and ``openbook check`` share."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Mapping

from .config import RunConfig
from .data.datasets import DATASETS, load_dataset
from .data.loaders import column_names, read_source, read_table
from .data.schema import Schema
from .data.table import EncodedTable, encode
from .errors import (
    ParameterError,
    PrivacyLeakWarning,
    SchemaError,
    option,
)


def _split(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [x.strip() for x in v.split(",") if x.strip()]
    return [str(x) for x in v]


from .hierarchy.loading import load_hierarchy, with_hierarchies  # noqa: E402, F401 - one loader, re-exported


def load_input(cfg: RunConfig) -> EncodedTable:
    """Read the source named by the configuration and encode it under its schema; warn
    (:func:`warn_collapsing_qis`) about every QI its declaration would publish as ``*``."""
    data, schema, hier, source = input_spec(cfg)
    table = encode(data, schema, hier, source=source)
    warn_collapsing_qis(table, cfg)
    return table


def warn_collapsing_qis(table: EncodedTable, cfg: RunConfig) -> None:
    """One :class:`~openbook.hierarchy.detect.CollapseWarning` per QI declared categorical
    with no hierarchy whose values look numeric (or dates) or are many: generalizing it can
    only publish ``*`` (docs/hierarchies.md, "Kind detection"). Reads the distinct values only."""
    import shlex

    from .hierarchy.detect import CollapseWarning, collapse_warning

    inp = cfg.input
    data = f"--dataset {inp['dataset']}" if inp.get("dataset") else shlex.quote(str(inp.get("path") or "DATA"))
    for col in table.schema.qi:
        if col.kind != "categorical" or table.hierarchies.get(col.name) is not None:
            continue
        message = collapse_warning(col.name, table.columns[col.name].categories.tolist(), data=data)
        if message:
            warnings.warn(message, CollapseWarning, stacklevel=3)


def input_spec(cfg: RunConfig) -> tuple[Any, Schema, dict[str, Any], str]:
    """The source named by the configuration, not yet encoded: ``(data, schema, hierarchies,
    source name)``; ``data`` is a DataFrame, an Arrow table or a file source (read in batches)."""
    inp, sch = cfg.input, cfg.schema
    dataset = inp.get("dataset")
    if dataset and inp.get("path"):
        raise ParameterError("give either an input path or a dataset, not both", parameter="dataset")
    if dataset:
        ds = load_dataset(dataset, **({"path": inp["data_dir"]} if inp.get("data_dir") else {}))
        frame, schema, hier = ds.data, ds.schema, dict(ds.hierarchies)
        if sch.get("qi") or sch.get("sa") or sch.get("sensitive_sets"):
            schema = _schema_from(sch, fallback=schema)
            hier = {k: v for k, v in hier.items() if k in schema.qi_names or k == schema.sa.name}
        source = dataset
    else:
        if not inp.get("path"):
            raise ParameterError("no input: give a data file, a database URL, or --dataset", parameter="input")
        frame = read_source(inp["path"], format=inp.get("format"), table=inp.get("table"), query=inp.get("query"))
        schema = _schema_from(sch)
        hier = {}
        source = str(inp["path"])
    hier = with_hierarchies(hier, cfg.hierarchies, schema)
    undeclared = schema.undeclared(column_names(frame))
    if undeclared and not dataset:
        warnings.warn(
            f"columns {', '.join(undeclared)} are neither QI nor SA and are dropped from the release "
            f"(declare them with {option('keep')} to publish them)",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    return frame, schema, hier, source


def frequency_table_of(cfg: RunConfig, batch_rows: int | None = None) -> Any:
    """The raw table's classes and SA counts: built batch by batch from a CSV/Parquet file with
    ``batch_rows`` (or a file of at least :data:`~openbook.config.AUTO_BATCH_BYTES`), in memory
    bounded by the distinct (QI, SA) tuples; else from the table encoded whole. The two are
    equal. With ``batch_rows`` given, a file only pandas reads as openbook does is refused,
    not read whole."""
    from .config import AUTO_BATCH_BYTES
    from .data.frequency import FrequencyTable, frequency_table

    data, schema, hier, source = input_spec(cfg)
    path = getattr(data, "path", None)
    rows = batch_rows
    if rows is None and path is not None and Path(path).stat().st_size >= AUTO_BATCH_BYTES:
        rows = 1 << 20
    if rows is not None:  # (a database's or a DataFrame dataset's rows are in memory already)
        from .data.arrow import NeedsPandas
        from .errors import DataError

        try:
            return frequency_table(data, schema, hier, source=source, batch_rows=rows,
                                   fallback=batch_rows is None or path is None)
        except NeedsPandas as exc:
            raise DataError(f"{path} cannot be read in batches ({exc}): check it without --batch-rows",
                            path=path) from None
    return FrequencyTable.from_table(encode(data, schema, hier, source=source))


def original_schema(release: Any, src: Any, hierarchies: Mapping[str, Any]) -> tuple[Schema, dict[str, Any]]:
    """How an original table ``src`` (``--original``) is read: the release's schema and the
    hierarchies of its QIs and SA — the original dataset's own (a built-in dataset), else those
    of the dataset the release was made from, each replaced by ``hierarchies`` (``--hierarchy``)."""
    schema = release.input_schema()
    used = {c.name for c in schema.qi} | {schema.sa.name}
    named = src if src in DATASETS else release.meta.get("source")
    hier = dict(load_dataset(named).hierarchies) if named in DATASETS else {}
    hier = with_hierarchies(hier, dict(hierarchies), schema)
    return schema, {k: v for k, v in hier.items() if k in used}


def read_original(release: Any, src: Any, *, format: str | None = None, table: str | None = None,
                  query: str | None = None, hierarchies: Mapping[str, Any] | None = None) -> EncodedTable:
    """The original table ``src`` (a file, a database URL, or a built-in dataset's name)
    encoded under the release's schema (:func:`original_schema`); the release learns the
    input's size from it (|T|, hence the withheld count: the auditor's, not the file's)."""
    from .errors import DataError

    if src in DATASETS:
        frame = load_dataset(src).frame
    else:
        if "://" not in str(src) and not Path(src).exists():
            raise DataError(f"original table {src} is missing", path=src)
        frame = read_table(src, format=format, table=table, query=query)
    schema, hier = original_schema(release, src, hierarchies or {})
    out = encode(frame, schema, hier, source=str(src))
    release.learn_input_size(out.n_rows)
    return out


def _schema_from(sch: dict[str, Any], fallback: Schema | None = None) -> Schema:
    """The schema the options declare; what they leave out comes from ``fallback`` (a
    dataset's own schema) as it is — its columns, kinds, ordinal orders and missing-value
    tokens — never through strings."""
    qi: Any = _split(sch.get("qi")) or (None if fallback is None else list(fallback.qi))
    if fallback is not None and qi:  # a bare name keeps the dataset's declaration of it
        known = {c.name: c for c in (*fallback.qi, fallback.sa)}
        qi = [known.get(q, q) if isinstance(q, str) and ":" not in q else q for q in qi]
    sa: Any = sch.get("sa") or (None if fallback is None else fallback.sa)
    if not qi:
        raise SchemaError("no quasi-identifier columns given (--qi a,b,c or [schema] qi = [...])")
    if not sa:
        raise SchemaError("no sensitive attribute given (--sa COLUMN or [schema] sa = ...)")
    sets = sch.get("sensitive_sets")
    if isinstance(sets, str):  # --sensitive "name=v1|v2" or "v1|v2"
        name, _, vals = sets.rpartition("=")
        sets = {name or "sensitive": [v.strip() for v in vals.split("|") if v.strip()]}
    same_sa = fallback is not None and (sa is fallback.sa or sa == fallback.sa.name)
    if same_sa and fallback is not None:
        sa = fallback.sa  # keeps the SA's kind (numeric for (k,e)-anonymity) and order
        if sets is None:
            sets = dict(fallback.sensitive_sets)
    extra = {} if fallback is None else {"missing_tokens": fallback.missing_tokens}
    return Schema.build(
        qi=qi, sa=sa, sensitive_sets=sets, identifiers=_split(sch.get("identifiers")),
        keep=_split(sch.get("keep")), missing=sch.get("missing", "error" if fallback is None else fallback.missing),
        kinds=sch.get("kinds"), **extra,
    )


#: the schema a run configuration declares (public: the Spark engine encodes under the same one)
schema_from = _schema_from


def model_from(cfg: RunConfig) -> Any:
    from .models import make_model

    m = dict(cfg.model)
    if "spec" in m:
        return make_model(m["spec"])
    if not m:
        raise ParameterError("no privacy model given (--model, e.g. 'k=5' or 'l=3')", parameter="model")
    return make_model(m)


#: the anonymizer ``anonymize`` runs without ``--algorithm``, for every model, and why
DEFAULT_ALGORITHM = ("generalized-anatomy", "QI classes of at least k records formed from the QIs alone (identity: "
                     "every published QI combination shared by k, 5 by default) and SA groups formed from the SA "
                     "alone (attribute: each group meets the model's target), so knowing the algorithm tells the "
                     "adversary nothing more: both lines of its certificate pass by construction")


def t_reference_from(spec: Any) -> Any:
    """``--t-reference``: ``published`` (default), ``input``, or a CSV file of ``value,count``
    rows — a distribution the publisher declares public (e.g. census totals)."""
    if spec is None or spec in ("published", "input") or isinstance(spec, dict):
        return spec or "published"
    path = Path(str(spec))
    if not path.is_file():
        raise ParameterError(f"--t-reference {spec!r}: use 'published', 'input' or a CSV file of value,count",
                             parameter="t-reference", value=spec)
    import pandas as pd

    frame = read_table(path)
    if frame.shape[1] != 2:
        raise ParameterError(f"--t-reference {path}: expected two columns, value and count", parameter="t-reference")
    counts = pd.to_numeric(frame.iloc[:, 1], errors="coerce")
    if counts.isna().any():
        raise ParameterError(f"--t-reference {path}: a count is not a number", parameter="t-reference")
    return dict(zip(frame.iloc[:, 0].astype(str), counts.astype("int64")))


def default_algorithm(model: Any, *, max_risk: float | None = None,
                      max_reid_risk: float | None = None) -> tuple[str, dict[str, Any], str]:
    """``(name, params, why)`` of the anonymizer ``anonymize`` picks when none is given: Generalized
    Anatomy for every model (conjunctions included), its SA groups held to the certificate's
    attribute target (``max_risk``) and its QI classes to the identity target (``max_reid_risk``),
    so its release passes both lines of its own certificate (``tests/regression/
    test_certified_release.py`` checks it on Adult and on the synthetic table)."""
    name, why = DEFAULT_ALGORITHM
    params = {k: v for k, v in (("max_risk", max_risk), ("max_reid_risk", max_reid_risk)) if v is not None}
    return name, params, why


def algorithm_from(cfg: RunConfig, model: Any, *, max_risk: float | None = None,
                   max_reid_risk: float | None = None) -> Any:
    """The anonymizer a run configuration names (:func:`plan_algorithm`)."""
    a = dict(cfg.algorithm)
    return plan_algorithm(a.pop("name", None), a, model, max_risk=max_risk, max_reid_risk=max_reid_risk)


def plan_algorithm(name: str | None, params: Mapping[str, Any], model: Any, *, max_risk: float | None = None,
                   max_reid_risk: float | None = None) -> Any:
    """The anonymizer a run names — one decision for the command line, the config file and
    the Python API: ``name`` with ``params`` (a ``seed`` among them); without a name,
    full-domain when hierarchy levels are given (they name a node of its lattice), else
    :func:`default_algorithm`; the certificate's targets passed to an algorithm that builds
    to them (:func:`with_targets`)."""
    from .algorithms import make_algorithm

    a = dict(params)
    if name is None and "levels" in a:
        name = "full-domain"
    if name is None:
        name, defaults, _ = default_algorithm(model, max_risk=max_risk, max_reid_risk=max_reid_risk)
        a = {**defaults, **a}
    return make_algorithm(name, model=model, **with_targets(name, a, max_risk=max_risk, max_reid_risk=max_reid_risk))


def with_targets(name: str, params: dict[str, Any], *, max_risk: float | None,
                 max_reid_risk: float | None) -> dict[str, Any]:
    """``params`` with the certificate's targets for an algorithm that builds to them
    (Generalized Anatomy's ``max_risk`` / ``max_reid_risk``), unless given already."""
    from .algorithms.registry import algorithm_class

    known = algorithm_class(name).constraints()
    out = dict(params)
    for key, val in (("max_risk", max_risk), ("max_reid_risk", max_reid_risk)):
        if val is not None and key in known and key not in out:
            out[key] = val
    return out


