"""``openbook anonymize``: a table, a model and an anonymizer to a verified release on disk."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ._common import config_from_args, emit, input_options, output_options, print_table


def anonymize_from_args(args: argparse.Namespace):
    from ..pipeline import algorithm_from, anonymize_skewed, load_input, model_from

    cfg = config_from_args(args)
    if args.model:
        cfg.model = {"spec": args.model}
    cfg.set("algorithm", "name", args.algorithm)
    if args.levels is not None:
        cfg.algorithm["levels"] = [int(x) for x in args.levels.split(",")]
    cfg.set("algorithm", "max_suppression", args.max_suppression)
    cfg.set("algorithm", "p", getattr(args, "p", None))
    cfg.set("algorithm", "order", getattr(args, "order", None))
    cfg.set("algorithm", "strict", getattr(args, "strict", None))
    if args.seed is not None:
        cfg.algorithm["seed"] = args.seed
    cfg.set("output", "path", args.output)
    cfg.set("output", "kind", args.kind)
    if not cfg.output.get("path"):
        from ..errors import ParameterError

        raise ParameterError("no output path (-o FILE.csv|.parquet|.sqlite|.duckdb or [output] path)", parameter="output")
    table = load_input(cfg)
    model = model_from(cfg)
    algo = algorithm_from(cfg, model)
    skew = getattr(args, "skew", None)
    if skew and skew != "none":
        return cfg, anonymize_skewed(table, model, algo, skew=skew, seed=cfg.algorithm.get("seed"),
                                     kind=cfg.output.get("kind"))
    release = algo.anonymize(table, kind=cfg.output.get("kind"))
    return cfg, release


def cmd_anonymize(args: argparse.Namespace) -> int:
    from ..release import save_release

    t0 = time.perf_counter()
    cfg, release = anonymize_from_args(args)
    files = save_release(release, cfg.output["path"])
    m = release.meta
    payload = {
        "files": [str(f) for f in files],
        "algorithm": m["algorithm"].get("algorithm"),
        "model": m["model"],
        "check": m.get("check"),
        "n_input": m["n_input"], "n_published": m["n_published"], "n_suppressed": m["n_suppressed"],
        "n_groups": m["n_groups"], "seconds": round(time.perf_counter() - t0, 3),
    }
    if "skew" in m:
        payload["skew"] = m["skew"]
    emit(args, payload, lambda p: print_table("release written", [
        ("files", ", ".join(p["files"])), ("algorithm", p["algorithm"]), ("model", p["check"]["model"]),
        ("verified level", p["check"]["level"]), ("rows in / published / suppressed",
                                                   f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}"),
        ("classes", p["n_groups"]), ("seconds", p["seconds"])] + ([(
            "skew step", f"{p['skew']['method']} (l={p['skew']['l']}): {p['skew']['n_suppressed']} rows withheld, "
            f"suppression rate {p['skew']['suppression_rate']:.2%}")] if "skew" in p else [])))
    return 0


def add_parser(sub: Any) -> None:
    a = sub.add_parser("anonymize", help="anonymize a table and write a verified release")
    a.add_argument("input", nargs="?", help="data file or database URL (or use --dataset / --config)")
    input_options(a)
    a.add_argument("-m", "--model", help="privacy model, e.g. 'k=5', 'l=3', 'entropy-l=3', 'recursive-l=3,c=2', "
                   "'alpha=0.2,k=5', 't=0.2', 'k=5,e=1000'")
    a.add_argument("--algorithm", help="anonymizer (default full-domain)")
    a.add_argument("--levels", help="full-domain: hierarchy level per QI, comma separated")
    a.add_argument("--max-suppression", type=float, help="largest fraction of rows that may be suppressed")
    a.add_argument("--seed", type=int, help="seed of randomized algorithms")
    a.add_argument("--p", type=float, help="rgg: probability of adding the next bucket to a group that holds")
    a.add_argument("--order", help="gg/rgg/sg: QI sort order (lex, zorder, hilbert)")
    a.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                   help="mondrian: strict (--strict) or relaxed (--no-strict) partitioning")
    a.add_argument("--kind", choices=["generalized", "bucketized"], help="release kind (default: the algorithm's)")
    a.add_argument("--skew", choices=["none", "r-suppression", "safe-d", "unsafe-d"], default="none",
                   help="restore l-eligibility of a skewed SA first by suppressing dominant records (paper 004); "
                   "r-suppression resists the eligibility attack")
    a.add_argument("-o", "--output", help="release file: .csv, .parquet, .sqlite or .duckdb")
    output_options(a)
    a.set_defaults(func=cmd_anonymize)
