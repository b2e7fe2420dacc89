"""Options and output helpers every ``openbook`` command shares (defined once)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..config import INPUT_FLAGS, RunConfig


def _number(kind, *, lo=None, hi=None, lo_open=False, what=""):
    """An argparse type: a finite number of ``kind`` within bounds, else one clear line."""
    def parse(text: str):
        try:
            v = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if kind is float and v != v or v in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if lo is not None and (v <= lo if lo_open else v < lo):
            raise argparse.ArgumentTypeError(f"{text} must be {'above' if lo_open else 'at least'} {lo}{what}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"{text} must be at most {hi}{what}")
        return v
    parse.__name__ = kind.__name__
    return parse


#: argparse types of openbook's numeric flags
SEED = _number(int, lo=0)
POSITIVE_INT = _number(int, lo=1)
FRACTION = _number(float, lo=0.0, hi=1.0)
PROBABILITY_ABOVE_0 = _number(float, lo=0.0, hi=1.0, lo_open=True)
AT_LEAST_1 = _number(float, lo=1.0)
POSITIVE = _number(float, lo=0.0, lo_open=True)


def int_list(text: str) -> list[int]:
    """``--levels 1,0,2``: non-negative integers, comma separated."""
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x.isdigit() for x in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of non-negative integers")
    return [int(x) for x in parts]


class Parser(argparse.ArgumentParser):
    """argparse with openbook's error form: one line naming the problem, exit code 2 (not
    the usage block argparse prints)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        import re

        # a value such as ``-1,0,0`` or ``-0.5`` is a (bad) value of the flag before it, not an
        # unknown option: the flag's own check then names it (``--levels '-1,0,0' ...``)
        self._negative_number_matcher = re.compile(r"^-\d[\d,.eE+-]*$|^-\.\d+$")

    def error(self, message: str):  # type: ignore[override]
        import sys

        where = self.prog.removeprefix("openbook").strip()
        print(f"openbook: error: {where + ': ' if where else ''}{message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def input_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("input and schema")
    g.add_argument("--config", help="TOML run configuration (flags override it)")
    g.add_argument("--dataset", help="built-in dataset instead of a file: adult, adult-train, synthetic")
    g.add_argument("--data-dir", help="folder holding adult.data/adult.test (for --dataset adult)")
    g.add_argument("--format", choices=["csv", "parquet", "sqlite", "duckdb"], help="input format (default: from the suffix)")
    g.add_argument("--table", help="table to read from a database source")
    g.add_argument("--query", help="SQL query to read from a database source")
    g.add_argument("--qi", metavar="NAME[:KIND],...", help="QI columns, comma separated, each optionally NAME:KIND "
                   "(numeric, categorical, ordinal); a numeric column left categorical is published as '*' or its "
                   "exact values (a warning names it)")
    g.add_argument("--sa", metavar="NAME[:KIND]", help="the sensitive attribute column, optionally NAME:KIND "
                   "(numeric for (k,e)-anonymity and ordered t-closeness, categorical, ordinal)")
    g.add_argument("--sensitive", action="append", metavar="NAME=v1|v2",
                   help="a sensitive value set: NAME=v1|v2|... (repeat for several sets; a name repeated joins "
                        "its values)")
    g.add_argument("--keep", help="other columns to publish unchanged (comma separated)")
    g.add_argument("--identifiers", help="direct identifiers to drop (comma separated)")
    g.add_argument("--missing", choices=["error", "drop", "value"], help="missing values: fail (default), drop rows, or keep as a value")
    g.add_argument("--hierarchy", action="append", default=[], metavar="COLUMN=PATH",
                   help="ARX CSV hierarchy for a column (repeatable); PATH may be 'auto' or 'adult:paper001'/'adult:arx'")


#: the engines ``--engine`` names
ENGINES = ("local", "spark")


def spark_conf_item(text: str) -> tuple[str, str]:
    """``--spark-conf KEY=VALUE``: one Spark configuration entry."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value.strip()


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--engine {local,spark}``, ``--spark-master URL``, ``--spark-conf KEY=VALUE``
    (docs/spark.md): where a command runs. The Spark engine is imported only when asked for."""
    g = p.add_argument_group("engine")
    g.add_argument("--engine", choices=ENGINES, default="local",
                   help="run on this machine (local, the default) or on Apache Spark (spark; pip install "
                   "'openbook[spark]' and Java, see docs/spark.md)")
    g.add_argument("--spark-master", metavar="URL", default=None,
                   help="Spark master URL (default local[*], or the master spark-submit gives)")
    g.add_argument("--spark-conf", type=spark_conf_item, action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark configuration entry (repeatable), e.g. spark.executor.memory=8g")


def engine_from_args(args: argparse.Namespace) -> Any:
    """The engine ``--engine`` names (:mod:`openbook.engines`), with ``--spark-master`` and
    ``--spark-conf`` for Spark (PySpark is imported only when it runs)."""
    from ..engines import LocalEngine, SparkEngine

    if getattr(args, "engine", "local") == "spark":
        return SparkEngine(getattr(args, "spark_master", None), dict(getattr(args, "spark_conf", None) or []))
    return LocalEngine()


def output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress display")


def config_from_args(args: argparse.Namespace) -> RunConfig:
    cfg = RunConfig.from_toml(args.config) if getattr(args, "config", None) else RunConfig()
    cfg.apply_flags(args, *INPUT_FLAGS)
    cfg.set("schema", "sensitive_sets", sensitive_sets(args.sensitive))
    cfg.hierarchies.update(hierarchy_flags(args.hierarchy))
    return cfg


def hierarchy_flags(items: list[str] | None) -> dict[str, str]:
    """``--hierarchy COLUMN=PATH`` options as column -> spec (in order; a later one wins)."""
    out: dict[str, str] = {}
    for item in items or []:
        col, sep, path = item.partition("=")
        if not sep:
            from ..errors import ParameterError

            raise ParameterError(f"--hierarchy {item!r}: use COLUMN=PATH", parameter="hierarchy", value=item)
        out[col.strip()] = path.strip()
    return out


def sensitive_sets(items: Any) -> dict[str, list[str]] | None:
    """``--sensitive NAME=v1|v2`` given once or more: name -> values (a repeated name joins its
    values, in order; a bare ``v1|v2`` is the set ``sensitive``)."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in [items] if isinstance(items, str) else items:
        name, _, vals = str(item).rpartition("=")
        values = [v.strip() for v in vals.split("|") if v.strip()]
        if not values:
            from ..errors import ParameterError

            raise ParameterError(f"--sensitive {item!r}: no values (use NAME=v1|v2)", parameter="sensitive",
                                 value=item)
        bucket = out.setdefault(name.strip() or "sensitive", [])
        bucket.extend(v for v in values if v not in bucket)
    return out


def emit(args: argparse.Namespace, payload: dict[str, Any], render) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, default=str))
    else:
        render(payload)


def print_table(title: str, rows: list[tuple[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    for k, v in rows:
        t.add_row(k, fmt(v))
    Console().print(t)


def fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)



def max_risk_option(g: Any, *, what: str) -> None:
    """``--max-risk R``: the posterior target (default the model's 1/ℓ, or α); ``what``
    says what happens above it in this command."""
    g.add_argument("--max-risk", type=PROBABILITY_ABOVE_0, metavar="R", help="the sensitive-value line: largest "
                   "posterior any adversary may reach (default: the model's 1/l, or alpha; for t-closeness also the "
                   "distance t; for k-anonymity and (k,e) nobody's value certain); " + what)


def max_reid_risk_option(g: Any, *, what: str) -> None:
    """``--max-reid-risk R``: the target of identity disclosure."""
    g.add_argument("--max-reid-risk", type=PROBABILITY_ABOVE_0, metavar="R", help="the identity line: largest "
                   "re-identification probability of any record (prosecutor risk, or journalist risk with "
                   "--population-size or --sampling-fraction; default 1/k of the model's k, else 0.2; 1 accepts "
                   "published exact QIs); " + what)


def worlds_option(g: Any) -> None:
    """``--worlds N``: the replay adversary's sample size (default: the adversary's own)."""
    from ..attacks.adversary import DEFAULT_WORLDS

    g.add_argument("--worlds", type=POSITIVE_INT, metavar="N", help="replay adversary: possible worlds sampled per "
                   f"unit too large to enumerate (default {DEFAULT_WORLDS}; sampled posteriors count with 3 "
                   "standard errors)")


def against_registry_option(g: Any) -> None:
    """``--against-registry DIR_OR_DB``: earlier releases (the linkage adversary)."""
    g.add_argument("--against-registry", metavar="DIR_OR_DB", help="earlier releases of the same people (a "
                   "registry folder or database): the linkage adversary links this release with them")


def adversary_option(g: Any, *, several: bool) -> None:
    """``--adversary``: one registered adversary (``audit``) or a comma-separated list
    (``certify``, ``report``; default every one that applies)."""
    from ..attacks.registry import ADVERSARY_NAMES

    if several:
        g.add_argument("--adversary", metavar="NAMES", help="comma-separated adversaries to run ("
                       f"{', '.join(ADVERSARY_NAMES)}); default: every one that applies. The verdict passes only "
                       "when the adversary who knows the algorithm is among them")
    else:
        g.add_argument("--adversary", choices=ADVERSARY_NAMES, default="baseline",
                       help="the adversary (default baseline)")


def public_key_option(g: Any) -> None:
    """``--public-key PATH``: verify the release's signature (docs/release-files.md)."""
    g.add_argument("--public-key", metavar="PATH", help="the publisher's Ed25519 public key: the release's signature "
                   "must verify with it (any edit of a file or of the sidecar fails); without it nothing is verified "
                   "and the output says whether the release is signed")


def load_release_from_args(args: argparse.Namespace, path: Any) -> Any:
    """The release at ``path``, its signature verified when ``--public-key`` is given."""
    from ..release import load_release

    return load_release(path, public_key=getattr(args, "public_key", None))


def signature_row(release: Any) -> tuple[str, str]:
    """The release's signature in one line (verified, signed but not verified, unsigned)."""
    from ..release.signing import status

    return ("signature", status(release.meta, release.meta.get("signature_verified")))


def earlier_releases(path: Any) -> list[Any]:
    """The releases of the registry at ``path`` (``--against-registry``), oldest first."""
    if not path:
        return []
    from ..release.registry import ReleaseRegistry

    return [r for _, r in ReleaseRegistry(path, create=False).releases()]


class Removed(argparse.Action):
    """A flag that is gone: using it is a one-line usage error naming what replaced it."""

    def __init__(self, option_strings, dest, *, instead: str, **kw) -> None:
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS, **kw)
        self.instead = instead

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is gone: {self.instead}")


def removed_l_option(p: argparse.ArgumentParser) -> None:
    """The old ``--l``, which meant both the posterior threshold 1/l and the post-linkage ℓ."""
    p.add_argument("--l", action=Removed, instead="use --max-risk R for the posterior target (1/l) or --linkage-l L "
                   "for the post-linkage diversity every person must keep")


def linkage_l_option(g: Any) -> None:
    """``--linkage-l L``: the post-linkage diversity ℓ (paper 002 §2.3)."""
    g.add_argument("--linkage-l", type=AT_LEAST_1, metavar="L", help="linkage adversary: the least post-linkage "
                   "diversity every person must keep (posterior target 1/L; default: the release model's l)")


def certify_options(p: argparse.ArgumentParser) -> None:
    """The certificate's options (``anonymize``, ``certify``)."""
    g = p.add_argument_group("certificate")
    refuses = ("above it nothing is written and the exit code is 3" if p.prog.split()[-1] == "anonymize"
               else "above it the verdict is fail and the exit code is 3")
    max_risk_option(g, what=refuses)
    max_reid_risk_option(g, what=refuses)
    worlds_option(g)
    against_registry_option(g)
    if p.prog.split()[-1] == "anonymize":
        g.add_argument("--no-certify", action="store_true", help="write without certifying (the sidecar says so)")
    identity_options(p)


def certify_params(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The adversaries' parameters the certificate's flags give (only those given: every
    default is the adversary's own)."""
    out: dict[str, dict[str, Any]] = {"reidentification": reid_params(args)}
    if getattr(args, "worlds", None) is not None:
        out["replay"] = {"worlds": args.worlds}
    return out


class status:
    """A spinner with a message on stderr while a step runs (terminal only, not with --quiet)."""

    def __init__(self, message: str, *, quiet: bool = False) -> None:
        from ..progress import status as _status

        self._inner = None if quiet else _status(message)

    def __enter__(self) -> "status":
        if self._inner is not None:
            self._inner.__enter__()
        return self

    def update(self, message: str) -> None:
        if self._inner is not None:
            self._inner.update(message)

    def __exit__(self, *exc) -> None:
        if self._inner is not None:
            self._inner.__exit__(*exc)


def original_options(p: argparse.ArgumentParser, *, required_for: str = "") -> None:
    """``--original``: the table a release was made from — every individual's QIs (the
    adversary's knowledge) and SA (the auditor's truth). One flag for every command."""
    g = p.add_argument_group("the original table")
    g.add_argument("--original", metavar="DATA", help="the original table: a file, a database URL or a built-in "
                   f"dataset name (adult, adult-train, synthetic){required_for}")
    g.add_argument("--format", choices=["csv", "parquet", "sqlite", "duckdb"], help="its format (default: the suffix)")
    g.add_argument("--table", help="table to read from a database source")
    g.add_argument("--query", help="SQL query to read from a database source")
    g.add_argument("--hierarchy", action="append", default=[], metavar="COLUMN=PATH",
                   help="ARX CSV hierarchy the release was made with (repeatable; 'adult:paper001'/'adult:arx')")


def load_original(args: argparse.Namespace, release: Any) -> Any:
    """The ``--original`` table encoded under the release's schema (``None`` without it;
    :func:`openbook.pipeline.read_original`)."""
    original = original_from_args(args)
    if original is None:
        return None
    from ..pipeline import read_original

    return read_original(release, original.src, **original.options())


def original_from_args(args: argparse.Namespace) -> Any:
    """The ``--original`` table as the flags describe it (:class:`openbook.run.Original`: its
    format, database table or query, the ``--hierarchy`` options), ``None`` without one."""
    src = getattr(args, "original", None)
    if not src:
        return None
    from ..run import Original

    return Original(str(src), format=getattr(args, "format", None), table=getattr(args, "table", None),
                    query=getattr(args, "query", None), hierarchies=hierarchy_flags(getattr(args, "hierarchy", None)))


def lazy_epilog(parser: argparse.ArgumentParser, make: Any) -> None:
    """Compute ``parser``'s epilog only when its help is shown (the lists it holds import
    the algorithm and model catalogs; building the parser must cost nothing)."""
    format_help = parser.format_help

    def with_epilog() -> str:
        parser.epilog = make()
        return format_help()

    parser.format_help = with_epilog  # type: ignore[method-assign]


def reid_params(args: argparse.Namespace) -> dict[str, Any]:
    """The re-identification adversary's population parameters from the flags."""
    out = {"population_size": getattr(args, "population_size", None),
           "sampling_fraction": getattr(args, "sampling_fraction", None),
           "threshold": getattr(args, "reid_threshold", None),
           "population": None if not getattr(args, "population", None) else str(args.population)}
    return {k: v for k, v in out.items() if v is not None}


def identity_options(p: argparse.ArgumentParser) -> None:
    """The population of the re-identification risk (docs/identity.md)."""
    g = p.add_argument_group("identity disclosure")
    g.add_argument("--population-size", type=_number(float, lo=1.0), metavar="N",
                   help="size of the population the data is drawn from (default: the data is the population)")
    g.add_argument("--sampling-fraction", type=PROBABILITY_ABOVE_0, metavar="F", help="n / N instead of N")
    g.add_argument("--reid-threshold", type=PROBABILITY_ABOVE_0, default=0.2, metavar="R",
                   help="a record is at risk above this re-identification probability (default 0.2)")
    g.add_argument("--population", metavar="FILE",
                   help="the population's QI values (CSV, Parquet or a database; a column 'count' that is not a QI "
                        "counts the people of each row): exact journalist and marketer risks (docs/identity.md)")
