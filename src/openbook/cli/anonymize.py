"""``openbook anonymize``: a table, a model and an anonymizer to a verified release on disk."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ._common import (
    FRACTION,
    POSITIVE_INT,
    SEED,
    add_engine_options,
    certify_options,
    certify_params,
    config_from_args,
    emit,
    engine_from_args,
    input_options,
    int_list,
    lazy_epilog,
    output_options,
    print_table,
    status,
)


def spec_from_args(args: argparse.Namespace):
    """The run the command line describes (:class:`openbook.run.RunSpec`): the TOML file of
    ``--config`` with every flag given laid over it (:data:`openbook.config.FLAGS`), then the
    choices no section holds. Checked as it is made, before any data is read."""
    from ..run import RunSpec

    cfg = config_from_args(args)
    if args.model:
        cfg.model = {"spec": args.model}
    cfg.apply_flags(args, "algorithm", "levels", "max_suppression", "p", "order", "strict", "seed", "skew", "output",
                    "kind", "t_reference", "sign_key", "publish_suppressed_count", "publish_identifier_names",
                    "max_risk", "max_reid_risk", "worlds", "against_registry")
    if args.no_certify:
        cfg.certify["enabled"] = False
    if not cfg.output.get("path"):
        from ..errors import ParameterError

        what = "NAME.parquet: a folder of Parquet part files" if args.engine == "spark" else \
            "FILE.csv|.parquet|.sqlite|.duckdb"
        raise ParameterError(f"no output path (-o {what} or [output] path)", parameter="output")
    return RunSpec.from_config(cfg, force=bool(args.force), inputs=_input_files(args),
                               adversary_params=certify_params(args), batch_rows=getattr(args, "batch_rows", None),
                               max_fragment=getattr(args, "spark_max_fragment", None))


def _input_files(args: argparse.Namespace) -> tuple[str, ...]:
    """The files the command reads beside the input and hierarchies: the config file."""
    return tuple(str(x) for x in [getattr(args, "config", None)] if isinstance(x, (str, Path)))


def cmd_anonymize(args: argparse.Namespace) -> int:
    """Read, anonymize, certify and write (:func:`openbook.engines.publish`, on the engine
    ``--engine`` names): exit code 3 and no file when the certificate fails."""
    from ..engines import publish

    t0 = time.perf_counter()
    spec = spec_from_args(args)
    spark = args.engine == "spark"
    engine = engine_from_args(args)
    engine.check(spec)  # refused before any work (publish checks again: the output may have appeared since)
    with status("reading the input", quiet=args.quiet) as st:
        done = publish(spec, engine, progress=st.update)
    payload = dict(done.record)
    payload["seconds"] = round(time.perf_counter() - t0, 3)
    emit(args, payload, _render_spark if spark else _render_local)
    return 0


def _render_local(p: dict[str, Any]) -> None:
    print_table("release written", certificate_rows(p["certificate"], lines_only=True) + [
        ("files", ", ".join(p["files"])), ("signature", p["signature"]), ("algorithm", p["algorithm"]),
        ("model", p["check"]["model"]), ("verified level", p["check"]["level"]),
        ("rows in / published / suppressed", f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}")]
        + class_rows(p) + [("seconds", p["seconds"])] + ([("skew step", _skew_words(p["skew"]))] if "skew" in p else [])
        + certificate_rows(p["certificate"], adversaries_only=True))


def _render_spark(p: dict[str, Any]) -> None:
    print_table("release written (Spark engine)", certificate_rows(p["certificate"], lines_only=True) + [
        ("files", ", ".join(p["files"])), ("algorithm", p["algorithm"]), ("model", p["model"]),
        ("rows in / published / suppressed", f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}"),
        ("classes", p["n_groups"]), ("fragments", p.get("n_fragments", "")), ("seconds", p["seconds"])]
        + certificate_rows(p["certificate"], adversaries_only=True))


def _skew_words(skew: dict[str, Any]) -> str:
    """The skew step in words: rows withheld, and for R-suppression what a run should expect —
    its rate is drawn at random, so another unseeded run withholds another share."""
    words = (f"{skew['method']} (l={skew['l']}): {skew['n_suppressed']:,} rows withheld, "
             f"suppression rate {skew['suppression_rate']:.2%}")
    e = skew.get("expected_suppression_rate")
    if e:
        words += (f"; the rate is random: expected {e['mean']:.1%} (standard deviation {e['sd']:.1%}), any run "
                  f"between {e['min']:.1%} and {e['max']:.1%} (--seed repeats a run)")
    return words


def class_rows(p: dict[str, Any]) -> list[tuple[str, Any]]:
    """The release's classes as a reader counts them: a generalized release's classes; a
    bucketized release's QI classes (published QI combinations) and SA groups."""
    if p.get("kind") != "bucketized":
        return [("classes", f"{p['n_groups']} (each shared by at least {p['min_qi_class']} records)")]
    qi = "generalized QIs" if p.get("qi_generalized") else "exact QIs"
    return [(f"QI combinations ({qi})", f"{p['n_qi_classes']} (each shared by at least {p['min_qi_class']} records)"),
            ("SA groups", p["n_groups"])]


def certificate_rows(cert: dict[str, Any] | None, *, lines_only: bool = False,
                     adversaries_only: bool = False) -> list[tuple[str, Any]]:
    """The certificate as rows of the terminal table: the verdict and its two lines in plain
    words (identity first), then one row per adversary."""
    if not cert:
        return []
    if cert.get("verdict") == "not certified":
        return [] if adversaries_only else [("certificate", f"NOT CERTIFIED: {cert.get('reason')}")]
    from ..certificate import Certificate

    c = Certificate.from_dict(cert)
    head: list[tuple[str, Any]] = []
    if c.lines:
        word = "PUBLISHABLE" if c.verdict == "pass" else "REFUSED"
        head = [("certificate", word)] + [("  identity" if ln.name == "identity" else "  sensitive value", ln.text)
                                          for ln in c.lines]
    else:
        head = [("certificate", c.headline())]
    rows = [(f"  {f.adversary}", f.line().split(": ", 1)[1]) for f in c.findings]
    if lines_only:
        return head
    if adversaries_only:
        return rows
    return head + rows


def anonymize_epilog() -> str:
    """The algorithms and models ``anonymize --help`` lists (no heavy import)."""
    from ..catalog import CATALOG
    from ..models.registry import SPEC_HELP
    from ..pipeline import DEFAULT_ALGORITHM

    algos = "\n".join(f"  {name:<20} {kind:<12} {line}" for name, (_, _, kind, line) in sorted(CATALOG.items()))
    return (f"algorithms (--algorithm):\n{algos}\n\n"
            f"default algorithm, for every model: {DEFAULT_ALGORITHM[0]} — {DEFAULT_ALGORITHM[1]}\n\n"
            f"models (-m):\n{SPEC_HELP}")


def add_parser(sub: Any) -> None:
    a = sub.add_parser("anonymize", help="anonymize a table and write a verified, certified release",
                       description="Anonymize a table, verify the release against its model, certify it against "
                       "every adversary that applies (exit code 3 and no file when one puts someone above "
                       "--max-risk), and write it.", formatter_class=argparse.RawDescriptionHelpFormatter)
    lazy_epilog(a, anonymize_epilog)
    a.add_argument("input", nargs="?", help="data file or database URL (or use --dataset / --config)")
    input_options(a)
    a.add_argument("-m", "--model", help="privacy model, e.g. 'k=5', 'l=3', 'entropy-l=3', 'recursive-l=3,c=2', "
                   "'alpha=0.2,k=5', 't=0.2', 'k=5,e=1000'")
    a.add_argument("--algorithm", metavar="NAME", help="anonymizer (see the list below; default: one whose "
                   "release passes its own certificate for the model given)")
    a.add_argument("--levels", type=int_list, help="full-domain: hierarchy level per QI, comma separated")
    a.add_argument("--max-suppression", type=FRACTION, help="largest fraction of rows that may be suppressed")
    a.add_argument("--batch-rows", type=POSITIVE_INT, default=None, metavar="N",
                   help="full-domain-search: search the frequency table of a CSV/Parquet input read in batches of "
                        "about N rows (memory bounded by its distinct (QI, SA) tuples); the release is then "
                        "recoded from the table at the node found")
    a.add_argument("--seed", type=SEED, help="seed of randomized algorithms")
    a.add_argument("--p", type=FRACTION, help="rgg: probability of adding the next bucket to a group that holds")
    a.add_argument("--order", help="gg/rgg/sg: QI sort order (lex, zorder, hilbert)")
    a.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                   help="mondrian: strict (--strict) or relaxed (--no-strict) partitioning")
    a.add_argument("--kind", choices=["generalized", "bucketized"], help="release kind (default: the algorithm's)")
    a.add_argument("--t-reference", metavar="published|input|CSV", help="t-closeness: the distribution every "
                   "reader checks classes against (default: the published rows' own; 'input' publishes the input's "
                   "SA counts, which reveal the suppressed rows' values; a CSV of value,count declares another "
                   "public distribution)")
    a.add_argument("--skew", choices=["none", "r-suppression", "safe-d", "unsafe-d"], default=None,
                   help="restore l-eligibility of a skewed SA first by suppressing dominant records (paper 004); "
                   "r-suppression resists the eligibility attack")
    a.add_argument("-o", "--output", help="release file: .csv, .parquet, .sqlite or .duckdb (its sidecar is "
                   "FILE.json beside it)")
    a.add_argument("--force", action="store_true", help="replace an existing release at --output (the old one "
                   "stays intact until the new one is complete); never an input")
    a.add_argument("--publish-suppressed-count", action="store_true", default=None,
                   help="also write the input row count and the suppressed/withheld counts into the sidecar (by "
                   "default none is published: the number R-suppression withholds is randomized to hide it)")
    a.add_argument("--sign-key", metavar="PATH", help="sign the release with this Ed25519 private key (`openbook key "
                   "new PATH`): readers verify it with --public-key PATH.pub")
    a.add_argument("--publish-identifier-names", action="store_true", default=None,
                   help="also write the names of the dropped identifier columns into the sidecar")
    certify_options(a)
    add_engine_options(a)
    a.add_argument("--spark-max-fragment", type=POSITIVE_INT, default=None, metavar="ROWS",
                   help="--engine spark, mondrian: the driver plans cuts until every part has at most ROWS rows, "
                   "then each part is finished on one executor (default 2^22)")
    output_options(a)
    a.set_defaults(func=cmd_anonymize)
