"""The one seam between a run and where it runs: :func:`publish` takes a
:class:`~openbook.run.RunSpec` and an engine — :class:`LocalEngine` (this machine) or
:class:`SparkEngine` (Apache Spark; docs/spark.md) — and returns a :class:`Published`: the
release, its certificate, the files written and the record ``openbook anonymize`` prints.

Every front door goes through it: ``openbook anonymize`` (either engine), ``openbook.anonymize``,
the demo and the studio's worker. What an engine does, in order:

1. refuse, before any work, what it cannot do (an output over an input or over a file openbook
   did not write, a bad signing key; for Spark, the options it does not take);
2. read the table, run the anonymizer the spec names (the skew step first when asked);
3. certify the release (unless ``certify.enabled`` is false — the sidecar then says so): a
   failing certificate raises :class:`~openbook.errors.RiskError` when ``certify.enforce``,
   else the release comes back with it;
4. write it — only when its certificate passes or certification was switched off: a release
   its certificate refuses is never written, whoever asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from .run import Original, RunSpec, Source

Progress = Callable[[str], None]


@dataclass
class Published:
    """What :func:`publish` returns: the ``release`` (``None`` on Spark, whose rows stay on
    the cluster), its ``certificate`` (a :class:`~openbook.certificate.Certificate`; ``None``
    when not certified), the ``files`` written
    (none when nothing was), the encoded ``table`` read (local engine), and ``record``: the
    figures ``openbook anonymize`` prints."""

    release: Any
    certificate: Any
    files: list[Path] = field(default_factory=list)
    table: Any = None
    record: dict[str, Any] = field(default_factory=dict)


def _quiet(_: str) -> None:
    return None


class Engine(Protocol):
    """What every engine does — the interface :class:`LocalEngine` and :class:`SparkEngine`
    implement (an engine for another platform implements these four and one line of
    :data:`ENGINES`)."""

    name: str

    def check(self, spec: RunSpec) -> None:
        """Refuse, before any work, a run this engine cannot do (one line naming the option)."""

    def publish(self, spec: RunSpec, progress: Progress = _quiet) -> Published:
        """Read, anonymize, certify and write the run (module docstring)."""

    def measure(self, source: Source, *, c: float = 2.0, batch_rows: int | None = None,
                population_size: float | None = None, sampling_fraction: float | None = None,
                threshold: float = 0.2, population: Any = None) -> dict[str, Any]:
        """A raw table's levels and re-identification figures (``openbook check``)."""

    def audit(self, adversary: Any, release: Any, original: Original | None, earlier: list[Any],
              progress: Progress = _quiet) -> Any:
        """One adversary's result against a release (``openbook audit``)."""


class LocalEngine:
    """This machine: pandas, numpy and numba (the reference engine)."""

    name = "local"

    def check(self, spec: RunSpec) -> None:
        """A bad output or signing key fails before any work."""
        if spec.output is None:
            return
        from .release.io import check_release_output

        check_release_output(spec.output.path, force=spec.output.force, inputs=spec.input_files())
        if spec.output.sign_key:
            from .release.signing import check_private_key

            check_private_key(spec.output.sign_key)

    def read(self, spec: RunSpec) -> Any:
        """The encoded table the run reads."""
        if spec.table is not None:
            return spec.table
        assert spec.source is not None  # a spec holds one of the two
        if spec.source.frame is None:
            from .pipeline import load_input

            return load_input(spec.source.config())
        from .data.loaders import read_table
        from .data.table import encode
        from .pipeline import schema_from, with_hierarchies

        cfg = spec.source.config()
        schema = schema_from(cfg.schema)
        hier = with_hierarchies({}, cfg.hierarchies, schema)
        return encode(read_table(spec.source.frame), schema, hier, source="DataFrame")

    def publish(self, spec: RunSpec, progress: Progress = _quiet) -> Published:
        from .certificate import PASS, certify_release
        from .pipeline import t_reference_from

        self.check(spec)
        table = self.read(spec)
        algo = spec.anonymizer()
        if spec.batch_rows is not None:
            _search_in_batches(spec, algo)
        progress(f"anonymizing {table.n_rows} rows with {algo.name}")
        release = algo.anonymize(table, kind=spec.kind, t_reference=t_reference_from(spec.t_reference))
        c = spec.certify
        if c.enabled:
            progress("certifying the release")
        cert = certify_release(release, original=table, earlier=c.earlier_releases(), max_risk=c.max_risk,
                               max_reid_risk=c.max_reid_risk, enabled=c.enabled, enforce=c.enforce,
                               params=c.params(), api=c.api,
                               on_step=lambda name: progress(f"certifying: the {name} adversary"))
        files: list[Path] = []
        if spec.output is not None and (cert is None or cert.verdict == PASS):
            from .release import save_release

            out = spec.output
            files = save_release(release, out.path, force=out.force, inputs=spec.input_files(),
                                 publish_suppressed_count=out.publish_suppressed_count,
                                 publish_identifier_names=out.publish_identifier_names, sign_key=out.sign_key)
        return Published(release, cert, files, table, release_record(release, files, spec))

    def measure(self, source: Source, *, c: float = 2.0, batch_rows: int | None = None,
                population_size: float | None = None, sampling_fraction: float | None = None,
                threshold: float = 0.2, population: Any = None) -> dict[str, Any]:
        """``openbook check`` of a raw table: its classes (read in batches with ``batch_rows``,
        :func:`openbook.pipeline.frequency_table_of`), every level it satisfies and its
        re-identification figures (``population``: a population table's path)."""
        from .attacks.reidentification import class_size_summary
        from .models.levels import compute_levels
        from .pipeline import frequency_table_of

        freq = frequency_table_of(source.config(), batch_rows)
        pop = None
        if population:
            from .attacks.population import read_population

            pop = read_population(population, [f"{k}={v}" for k, v in source.hierarchies.items()])
        identity = class_size_summary(freq.weights, population_size=population_size,
                                      sampling_fraction=sampling_fraction, threshold=threshold, population=pop,
                                      classes=freq)
        return {"kind": "raw table", "source": freq.source, "qi": freq.qi_names, "sa": freq.sa_name,
                "levels": compute_levels(freq.sa_counts, freq.sa_domain, c=c), "identity": identity}

    def audit(self, adversary: Any, release: Any, original: Original | None, earlier: list[Any],
              progress: Progress = _quiet) -> Any:
        """One adversary against ``release`` (``openbook audit``), the ``original`` table read
        on this machine."""
        from .pipeline import read_original

        table = None if original is None else read_original(release, original.src, **original.options())
        progress(f"the {adversary.name} adversary")
        return adversary.run(release, original=table, earlier=earlier)


def _search_in_batches(spec: RunSpec, algo: Any) -> None:
    """``batch_rows``: full-domain search on the frequency table read from the file in batches
    (memory bounded by the distinct (QI, SA) tuples); the release is then recoded from the
    table at the node found."""
    from .algorithms.lattice import FullDomainSearch
    from .algorithms.lattice_frequency import search_frequency
    from .errors import ParameterError
    from .pipeline import frequency_table_of

    if not isinstance(algo, FullDomainSearch) or spec.skew != "none" or spec.source is None:
        raise ParameterError("--batch-rows applies to --algorithm full-domain-search (without --skew) on a file only",
                             parameter="batch-rows")
    freq = frequency_table_of(spec.source.config(), spec.batch_rows)
    algo.use_search(search_frequency(freq, algo.model, float(algo.max_suppression), metric=algo.metric,
                                     all_minimal=bool(algo.all_minimal)))


def release_record(release: Any, files: list[Path], spec: RunSpec) -> dict[str, Any]:
    """The figures of a local release ``openbook anonymize`` prints (and ``--json`` emits)."""
    m = release.meta
    qi_sizes = release.qi_class_sizes()
    key = spec.output.sign_key if spec.output is not None else None
    if key:
        from .release.signing import check_private_key

        signature = f"signed by key {check_private_key(key)}"
    else:
        signature = "unsigned (sign with --sign-key; docs/release-files.md)"
    record = {
        "certificate": m.get("certificate"), "files": [str(f) for f in files], "signature": signature,
        "algorithm": m["algorithm"].get("algorithm"), "model": m["model"], "check": m.get("check"),
        "n_input": m["n_input"], "n_published": m["n_published"], "n_suppressed": m["n_suppressed"],
        "n_groups": m["n_groups"], "kind": release.kind, "qi_generalized": release.qi_generalized,
        "n_qi_classes": int(qi_sizes.size), "min_qi_class": int(qi_sizes.min()) if qi_sizes.size else 0,
    }
    if "skew" in m:
        record["skew"] = dict(m["skew"])
        if "skew_spread" in m:  # R-suppression's rate is random: the run's and the expected one
            record["skew"]["expected_suppression_rate"] = m["skew_spread"]
    return record


class SparkEngine:
    """Apache Spark (docs/spark.md): the algorithms of :data:`openbook.spark.publish.ALGORITHMS`,
    the table read, anonymized, verified, certified and written on the cluster.
    ``master``/``conf``: the session's (``--spark-master``/``--spark-conf``)."""

    name = "spark"

    def __init__(self, master: str | None = None, conf: dict[str, str] | None = None) -> None:
        self.master = master
        self.conf = dict(conf or {})

    def check(self, spec: RunSpec) -> None:
        """What the Spark engine does not take, refused before any work (one line naming it)."""
        from .errors import ParameterError
        from .spark.output import check_output
        from .spark.publish import check_algorithm

        check_algorithm(spec.algorithm)
        c = spec.certify
        reid = c.adversary_params.get("reidentification", {})
        unsupported = [flag for flag, on in (
            ("--skew", spec.skew != "none"), ("--kind", spec.kind), ("--t-reference", spec.t_reference),
            ("--against-registry", c.against_registry or c.earlier), ("--batch-rows", spec.batch_rows),
            ("--sign-key", spec.output is not None and spec.output.sign_key),
            ("--population-size", c.enabled and reid.get("population_size") is not None),
            ("--sampling-fraction", c.enabled and reid.get("sampling_fraction") is not None)) if on]
        if unsupported:
            raise ParameterError(f"--engine spark does not take {unsupported[0]} (use --engine local)",
                                 parameter="engine", value="spark")
        if spec.source is None or spec.source.frame is not None:
            raise ParameterError("--engine spark reads a file or a built-in dataset, not a table in memory",
                                 parameter="engine", value="spark")
        if spec.output is None:
            raise ParameterError("no output path (-o NAME.parquet: a folder of Parquet part files)",
                                 parameter="output")
        check_output(spec.output.path, force=spec.output.force, inputs=list(spec.input_files()))

    def publish(self, spec: RunSpec, progress: Progress = _quiet) -> Published:
        from .spark.encoding import load_spark_input
        from .spark.publish import publish as spark_publish
        from .spark.session import session

        self.check(spec)
        assert spec.source is not None
        with session(self.master, self.conf) as spark:
            table = load_spark_input(spark, spec.source.config())
            progress(f"anonymizing {table.n_rows} rows with {spec.algorithm} on Spark")
            record = spark_publish(table, spec, progress)
        cert = None
        if spec.certify.enabled:
            from .certificate import Certificate

            cert = Certificate.from_dict(record["certificate"])
        return Published(None, cert, [Path(f) for f in record["files"]], None, record)

    def measure(self, source: Source, *, c: float = 2.0, batch_rows: int | None = None,
                population_size: float | None = None, sampling_fraction: float | None = None,
                threshold: float = 0.2, population: Any = None) -> dict[str, Any]:
        """``check --engine spark``: a raw Parquet/CSV table's levels and identity figures by
        grouped aggregation on the cluster (:mod:`openbook.spark.check`)."""
        from .errors import ParameterError

        if batch_rows is not None:
            raise ParameterError("--batch-rows reads in batches on this machine (--engine local); the Spark engine "
                                 "partitions the input itself", parameter="batch-rows")
        if population:
            raise ParameterError("--population is matched with --engine local", parameter="population")
        path = source.input.get("path")
        if path and "://" not in str(path) and (Path(path).suffix == ".json" or (
                Path(path).is_dir() and Path(str(path) + ".json").is_file())):
            raise ParameterError(f"{path}: check --engine spark reads raw tables; check a release (a Spark "
                                 "release folder too) with --engine local", parameter="engine", value="spark")
        from .spark.session import session

        with session(self.master, self.conf) as spark:
            from .spark.check import identity_summary, spark_levels
            from .spark.encoding import load_spark_input

            st = load_spark_input(spark, source.config())
            levels, hist = spark_levels(st, c=c)
        identity = identity_summary(hist, population_size=population_size, sampling_fraction=sampling_fraction,
                                    threshold=threshold)
        return {"kind": "raw table", "source": st.dictionaries.source, "qi": st.qi_names,
                "sa": st.dictionaries.sa_name, "engine": "spark", "levels": levels, "identity": identity}

    def audit(self, adversary: Any, release: Any, original: Original | None, earlier: list[Any],
              progress: Progress = _quiet) -> Any:
        """``audit --engine spark``: the linkage adversary with the ``original`` population on
        the cluster — a Parquet/CSV original read and encoded there under the release's schema, a
        built-in dataset or a database table read here and handed to it. Without an original the
        population is the releases' own points and this machine runs it."""
        from .errors import ParameterError

        if adversary.name != "linkage":
            raise ParameterError(f"--engine spark runs the linkage adversary (audit --adversary linkage), not the "
                                 f"{adversary.name} adversary: use --engine local", parameter="engine", value="spark")
        if original is None:
            return LocalEngine().audit(adversary, release, None, earlier, progress)
        if not earlier:  # before starting Spark (the message Adversary.run gives)
            raise ParameterError(f"the {adversary.name} adversary needs the earlier releases (--against-registry "
                                 "DIR_OR_DB)", parameter="earlier")
        from .data.datasets import DATASETS
        from .pipeline import original_schema, read_original
        from .spark.session import session

        src = str(original.src)
        with session(self.master, self.conf) as spark:
            from .spark.encoding import encode_raw, format_of, from_encoded, read_raw
            from .spark.linkage import attack

            database = original.format in ("sqlite", "duckdb") or (
                "://" in src and src.split("://", 1)[0] in ("sqlite", "duckdb", "postgresql", "mysql"))
            if src in DATASETS or original.table or original.query or database:
                st = from_encoded(spark, read_original(release, src, **original.options()))
            else:
                schema, hier = original_schema(release, src, original.hierarchies)
                st = encode_raw(spark, read_raw(spark, src, original.format), schema, hier, source=src,
                                csv=format_of(src, original.format) == "csv")
                release.learn_input_size(st.n_rows)
            progress(f"the {adversary.name} adversary on Spark")
            return attack(adversary, release, st, earlier)


#: the engines by name (``--engine``)
ENGINES: dict[str, Callable[..., Engine]] = {"local": LocalEngine, "spark": SparkEngine}


def publish(spec: RunSpec, engine: str | Engine = "local", *, progress: Progress | None = None) -> Published:
    """Run ``spec`` on ``engine`` (a name of :data:`ENGINES` or an engine object) — module
    docstring: refused before any work when it cannot be done, certified, written only when
    its certificate passes (or certification is off)."""
    if isinstance(engine, str):
        if engine not in ENGINES:
            from .errors import ParameterError

            raise ParameterError(f"engine {engine!r}: use one of {', '.join(ENGINES)}", parameter="engine",
                                 value=engine)
        engine = ENGINES[engine]()
    return engine.publish(spec, progress or _quiet)
