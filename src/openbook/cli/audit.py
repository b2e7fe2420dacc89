"""``openbook audit``: one adversary against a saved release (baseline, minimality, replay,
background, linkage with a registry)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import emit, output_options, print_table


def _audit_linkage(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Linkage adversary (paper 002 §2.3): post-linkage diversity against every earlier release."""
    import pandas as pd

    from ..release.registry import ReleaseRegistry

    if not args.against_registry:
        from ..errors import ParameterError

        raise ParameterError("the linkage audit needs --against-registry DIR_OR_DB", parameter="against-registry")
    reg = ReleaseRegistry(args.against_registry, create=False)
    population = None
    if args.population:
        if not Path(args.population).is_file():
            from ..errors import DataError

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
    from ..attacks.credibility import minimality_attack
    from ..data.loaders import read_table
    from ..errors import DataError, ParameterError

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
    from ..attacks.baseline import baseline_attack

    return _audit_posteriors(args, baseline_attack(release, sensitive_set=args.set))


def _audit_background(args: argparse.Namespace, release, name: str) -> dict[str, Any]:
    """Worst-case QI-based distribution adversary (paper 003): exact p(t:x), r-robustness."""
    from ..attacks.background import mine_knowledge
    from ..attacks.robustness import audit_release
    from ..data.datasets import DATASETS, load_dataset
    from ..data.loaders import read_table
    from ..data.schema import Schema
    from ..data.table import encode
    from ..errors import DataError, ParameterError

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
    from ..attacks.replay import replay_release
    from ..data.datasets import DATASETS, load_dataset
    from ..data.loaders import read_table
    from ..data.schema import Schema
    from ..data.table import encode
    from ..errors import DataError, ParameterError

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
    from ..release import load_release

    release = load_release(args.release)
    payload = AUDIT_ADVERSARIES[args.adversary](args, release, Path(args.release).stem)
    emit(args, payload, lambda d: print_table(f"audit ({args.adversary})", [
        (k, v) for k, v in d.items() if k not in ("summary", "per_group", "notes")]))
    return 0


def add_parser(sub: Any) -> None:
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
    output_options(u)
    u.set_defaults(func=cmd_audit)
