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
    earlier_releases,
    emit,
    input_options,
    int_list,
    lazy_epilog,
    output_options,
    print_table,
    status,
)


def anonymize_from_args(args: argparse.Namespace):
    from ..algorithms.skewed import with_skew
    from ..pipeline import (
        algorithm_from,
        load_input,
        model_from,
        t_reference_from,
    )

    cfg = config_from_args(args)
    if args.model:
        cfg.model = {"spec": args.model}
    cfg.apply_flags(args, "algorithm", "levels", "max_suppression", "p", "order", "strict", "seed", "output", "kind")
    if not cfg.output.get("path"):
        from ..errors import ParameterError

        raise ParameterError("no output path (-o FILE.csv|.parquet|.sqlite|.duckdb or [output] path)", parameter="output")
    from ..release.io import check_release_output

    # refuse a bad output before any work: never over an input, an existing release (unless --force)
    check_release_output(cfg.output["path"], force=args.force, inputs=_input_files(args, cfg))
    cfg.apply_flags(args, "sign_key")
    if cfg.output.get("sign_key"):  # a bad key fails before any work too
        from ..release.signing import check_private_key

        check_private_key(cfg.output["sign_key"])
    table = load_input(cfg)
    model = model_from(cfg)
    if args.max_reid_risk is not None:
        cfg.certify["max_reid_risk"] = args.max_reid_risk
    algo = algorithm_from(cfg, model, max_risk=args.max_risk if args.max_risk is not None
                          else cfg.certify.get("max_risk"), max_reid_risk=cfg.certify.get("max_reid_risk"))
    skew = getattr(args, "skew", None)
    if getattr(args, "batch_rows", None) is not None:
        _search_in_batches(args, model, algo, skew)
    ref = t_reference_from(args.t_reference or cfg.output.get("t_reference"))
    with status(f"anonymizing {table.n_rows} rows with {algo.name}", quiet=args.quiet):
        release = with_skew(algo, skew, cfg.algorithm.get("seed")).anonymize(
            table, kind=cfg.output.get("kind"), t_reference=ref)
    return cfg, table, release


def _search_in_batches(args: argparse.Namespace, model, algo, skew) -> None:
    """--batch-rows: full-domain search on the frequency table read from the file in batches
    (memory bounded by the distinct (QI, SA) tuples); the release is then recoded from the
    table at the node found (the table itself is in memory for it)."""
    from ..algorithms.lattice import FullDomainSearch
    from ..errors import ParameterError

    if not isinstance(algo, FullDomainSearch) or (skew and skew != "none"):
        raise ParameterError("--batch-rows applies to --algorithm full-domain-search (without --skew) only",
                             parameter="batch-rows")
    from ..algorithms.lattice_frequency import search_frequency
    from .check import _frequency_table

    freq = _frequency_table(args)
    algo.use_search(search_frequency(freq, model, float(algo.max_suppression), metric=algo.metric,
                                     all_minimal=bool(algo.all_minimal)))


def _input_files(args: argparse.Namespace, cfg) -> list[str]:
    """Every file this command reads: the input, the config, hierarchy files."""
    out = [cfg.input.get("path"), getattr(args, "config", None), *cfg.hierarchies.values()]
    return [str(x) for x in out if isinstance(x, (str, Path))]


def certify_from_args(args: argparse.Namespace, cfg, release, table) -> None:
    """Certify the release before it is written (``--max-risk``, ``--no-certify``, or the
    TOML ``[certify]`` section): exit code 3 and no file when an adversary that applies puts
    someone above the target."""
    from ..certificate import certify_release

    c = cfg.certify
    if args.max_risk is not None:
        c["max_risk"] = args.max_risk
    if args.worlds is not None:
        c["worlds"] = args.worlds
    if args.no_certify:
        c["enabled"] = False
    if args.against_registry:
        c["against_registry"] = args.against_registry
    earlier = earlier_releases(c.get("against_registry"))
    params = certify_params(args)
    if c.get("worlds") is not None:  # else the replay adversary's own default
        params["replay"] = {"worlds": int(c["worlds"])}
    with status("certifying the release", quiet=args.quiet) as st:
        certify_release(release, original=table, earlier=earlier, max_risk=c.get("max_risk"),
                        max_reid_risk=c.get("max_reid_risk"), enabled=bool(c.get("enabled", True)), params=params,
                        on_step=lambda name: st.update(f"certifying: the {name} adversary"))


def cmd_anonymize(args: argparse.Namespace) -> int:
    from ..release import save_release

    if getattr(args, "engine", "local") == "spark":
        return cmd_anonymize_spark(args)
    t0 = time.perf_counter()
    cfg, table, release = anonymize_from_args(args)
    certify_from_args(args, cfg, release, table)
    cfg.apply_flags(args, "publish_suppressed_count", "publish_identifier_names")
    files = save_release(release, cfg.output["path"], force=args.force, inputs=_input_files(args, cfg),
                         publish_suppressed_count=bool(cfg.output.get("publish_suppressed_count", False)),
                         publish_identifier_names=bool(cfg.output.get("publish_identifier_names", False)),
                         sign_key=cfg.output.get("sign_key"))
    m = release.meta
    qi_sizes = release.qi_class_sizes()
    payload = {
        "certificate": m.get("certificate"),
        "files": [str(f) for f in files],
        "signature": (f"signed by key {__import__('openbook.release.signing', fromlist=['x']).check_private_key(cfg.output['sign_key'])}"
                      if cfg.output.get("sign_key") else "unsigned (sign with --sign-key; docs/release-files.md)"),
        "algorithm": m["algorithm"].get("algorithm"),
        "model": m["model"],
        "check": m.get("check"),
        "n_input": m["n_input"], "n_published": m["n_published"], "n_suppressed": m["n_suppressed"],
        "n_groups": m["n_groups"], "kind": release.kind, "qi_generalized": release.qi_generalized,
        "n_qi_classes": int(qi_sizes.size), "min_qi_class": int(qi_sizes.min()) if qi_sizes.size else 0,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if "skew" in m:
        payload["skew"] = dict(m["skew"])
        if "skew_spread" in m:  # R-suppression's rate is random: the run's and the expected one
            payload["skew"]["expected_suppression_rate"] = m["skew_spread"]
    emit(args, payload, lambda p: print_table("release written", certificate_rows(p["certificate"], lines_only=True) + [
        ("files", ", ".join(p["files"])), ("signature", p["signature"]), ("algorithm", p["algorithm"]),
        ("model", p["check"]["model"]), ("verified level", p["check"]["level"]), ("rows in / published / suppressed",
                                                   f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}")]
        + class_rows(p) + [("seconds", p["seconds"])] + ([(
            "skew step", _skew_words(p["skew"]))] if "skew" in p else [])
        + certificate_rows(p["certificate"], adversaries_only=True)))
    return 0


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


def cmd_anonymize_spark(args: argparse.Namespace) -> int:
    """``anonymize --engine spark``: the flags checked and gathered into a
    :class:`~openbook.spark.publish.SparkRun`, the input read on the cluster, the run
    published there (:func:`openbook.spark.publish.publish`: verified, certified unless
    ``--no-certify`` — a failing certificate is exit code 3 and no file — and written as a
    Parquet folder and its sidecar; docs/spark.md)."""
    from ..errors import ParameterError
    from ..spark.publish import SparkRun, check_algorithm, publish
    from ._common import spark_session_from_args

    t0 = time.perf_counter()
    cfg = config_from_args(args)
    cfg.apply_flags(args, "algorithm", "strict", "max_suppression")
    check_algorithm(cfg.algorithm.get("name"))
    unsupported = [flag for flag, on in (("--skew", args.skew not in (None, "none")), ("--kind", args.kind),
                                         ("--t-reference", args.t_reference),
                                         ("--against-registry", args.against_registry),
                                         ("--batch-rows", getattr(args, "batch_rows", None))) if on]
    if not args.no_certify:  # the identity line on Spark is the prosecutor risk of the published classes
        unsupported += [flag for flag, on in (("--population-size", getattr(args, "population_size", None)),
                                              ("--sampling-fraction", getattr(args, "sampling_fraction", None)))
                        if on is not None]
    if unsupported:
        raise ParameterError(f"--engine spark does not take {unsupported[0]} (use --engine local)",
                             parameter="engine", value="spark")
    if args.model:
        cfg.model = {"spec": args.model}
    cfg.apply_flags(args, "output")
    if not cfg.output.get("path"):
        raise ParameterError("no output path (-o NAME.parquet: a folder of Parquet part files)", parameter="output")
    from ..pipeline import model_from
    from ..spark.output import check_output

    run = SparkRun(output=str(cfg.output["path"]), force=bool(args.force), inputs=tuple(_input_files(args, cfg)),
                   publish_suppressed_count=bool(args.publish_suppressed_count),
                   publish_identifier_names=bool(args.publish_identifier_names), certify=not args.no_certify,
                   max_risk=args.max_risk, max_reid_risk=args.max_reid_risk,
                   adversary_params=certify_params(args), max_fragment=args.spark_max_fragment)
    check_output(run.output, force=run.force, inputs=list(run.inputs))
    model = model_from(cfg)
    with spark_session_from_args(args) as spark:
        from ..spark.encoding import load_spark_input

        table = load_spark_input(spark, cfg)
        with status(f"anonymizing {table.n_rows} rows with {cfg.algorithm['name']} on Spark", quiet=args.quiet) as st:
            payload = publish(table, model, cfg, run, st)
    payload["seconds"] = round(time.perf_counter() - t0, 3)
    emit(args, payload, lambda p: print_table("release written (Spark engine)", certificate_rows(
        p["certificate"], lines_only=True) + [
        ("files", ", ".join(p["files"])), ("algorithm", p["algorithm"]), ("model", p["model"]),
        ("rows in / published / suppressed", f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}"),
        ("classes", p["n_groups"]), ("fragments", p.get("n_fragments", "")), ("seconds", p["seconds"])]
        + certificate_rows(p["certificate"], adversaries_only=True)))
    return 0


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
    a.add_argument("--skew", choices=["none", "r-suppression", "safe-d", "unsafe-d"], default="none",
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
