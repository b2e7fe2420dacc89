"""``openbook check``: the levels (k, ℓ variants, α, t) a raw table or a saved release satisfies.

A raw table is reduced to its frequency table (:mod:`openbook.data.frequency`: the distinct QI
tuples and the SA counts of each) and the levels and the re-identification risk are computed
from it. With ``--batch-rows N`` — or for a CSV/Parquet file of ``AUTO_BATCH_BYTES`` or more —
the file is read in Arrow batches and only the distinct (QI, SA) tuples are kept, so a file
larger than memory is checked in memory bounded by its distinct tuples; the figures are the
same as for the table read whole.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ..config import AUTO_BATCH_BYTES
from ._common import (
    POSITIVE,
    POSITIVE_INT,
    add_engine_options,
    config_from_args,
    emit,
    engine_from_args,
    identity_options,
    input_options,
    output_options,
    print_table,
)


def _is_release(path: str) -> bool:
    """Is ``path`` a release — its data file (a sidecar beside it), its ``.json`` sidecar, a
    database holding a release (its metadata table), or the Spark engine's release folder
    (``NAME.parquet`` with ``NAME.parquet.json`` beside it)? A release is loaded and verified
    as one, never read as a raw table. Any other directory is neither: one line says so. An
    interrupted write at the path is settled first (rolled forward or undone, stale
    temporaries swept)."""
    from ..errors import DataError
    from ..release.io import is_release_database, settle, sidecar_path

    if "://" in path:
        return False
    p = Path(path)
    folder = p.suffix.lower() == ".parquet"  # a Spark release folder is settled like a file
    if (p.is_dir() and not folder) or not p.name:
        raise DataError(f"{path} is a directory, not a table or a release (give a data file, a release's data "
                        "file or sidecar, or a database file)", path=p)
    settle(p)
    if p.is_dir():
        if sidecar_path(p).is_file():
            return True
        raise DataError(f"{path} is a directory, not a table or a release (give a data file, a release's data "
                        "file or sidecar, or a database file)", path=p)
    if p.suffix == ".json":
        return True
    return sidecar_path(p).is_file() or is_release_database(p)




def check_levels(args: argparse.Namespace) -> dict[str, Any]:
    """A release's levels and identity figures (read here), or a raw table's on the engine
    ``--engine`` names (:func:`_measure`)."""
    t0 = time.perf_counter()
    if getattr(args, "engine", "local") == "spark":  # raw tables only (a release is refused, by name)
        return {**_measure(args), "seconds": round(time.perf_counter() - t0, 4)}
    if not (args.input and _is_release(args.input)):
        if (args.input and not getattr(args, "qi", None) and not getattr(args, "config", None)
                and "://" not in args.input and Path(args.input).is_file()):
            from ..errors import SchemaError
            from ..release.io import sidecar_path

            raise SchemaError(f"{args.input} is not a release openbook can read (no sidecar {sidecar_path(Path(args.input)).name} "
                              "beside it) and no --qi/--sa were given to check it as a raw table")
        return {**_measure(args), "seconds": round(time.perf_counter() - t0, 4)}
    from ..attacks.reidentification import reidentification_risk
    from ..models.levels import compute_levels
    from ..release import load_release
    from ._common import signature_row

    rel = load_release(args.input, public_key=getattr(args, "public_key", None))
    counts, domain = rel.sa_counts()
    what: dict[str, Any] = {"kind": f"{rel.kind} release", "source": args.input,
                            "declared_model": rel.meta.get("model"), "signature": signature_row(rel)[1]}
    levels = compute_levels(counts, domain, c=args.c)
    if rel.kind == "bucketized":
        # k is a promise about identity: the QI-table's classes (exact tuples, or Generalized
        # Anatomy's labels), not the SA-table's groups, which the other levels describe
        levels["k"] = int(rel.qi_class_sizes().min()) if len(rel.data) else 0
        what["n_qi_classes"] = int(rel.qi_class_sizes().size)
    identity = reidentification_risk(rel, population_size=args.population_size,
                                     sampling_fraction=args.sampling_fraction, threshold=args.reid_threshold,
                                     population=_population(args)).summary()
    return {**what, "levels": levels, "identity": identity, "seconds": round(time.perf_counter() - t0, 4)}


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    """A raw table's levels and identity figures on the engine ``--engine`` names
    (:meth:`openbook.engines.LocalEngine.measure`, :meth:`openbook.engines.SparkEngine.measure`)."""
    from ..run import Source

    cfg = config_from_args(args)
    engine = engine_from_args(args)
    return engine.measure(Source(input=cfg.input, schema=cfg.schema, hierarchies=cfg.hierarchies), c=args.c,
                          batch_rows=args.batch_rows, population_size=args.population_size,
                          sampling_fraction=args.sampling_fraction, threshold=args.reid_threshold,
                          population=getattr(args, "population", None))


def _population(args: argparse.Namespace) -> Any:
    """``--population FILE``: the population table (:func:`openbook.attacks.population.read_population`)."""
    if not getattr(args, "population", None):
        return None
    from ..attacks.population import read_population

    return read_population(args.population, getattr(args, "hierarchy", ()))


def cmd_check(args: argparse.Namespace) -> int:
    result = check_levels(args)

    def render(r: dict[str, Any]) -> None:
        idt = r["identity"]
        rows = [("input", f"{r['kind']}: {r['source']}")] + ([("signature", r["signature"])] if "signature" in r else [])
        rows += [("unique on their QIs", f"{idt['sample_uniqueness']:.1%} of the records ({idt['sample_uniques']:,})")]
        rows += level_rows(r["levels"], bucketized=r["kind"] == "bucketized release",
                           n_qi_classes=r.get("n_qi_classes"))
        print_table("levels the data satisfies", rows)
        print_table("identity disclosure (re-identification risk)", identity_rows(idt))

    emit(args, result, render)
    return 0


def level_rows(levels: dict[str, Any], *, bucketized: bool = False,
               n_qi_classes: int | None = None) -> list[tuple[str, Any]]:
    """The levels in words; a bucketized release's k is its QI table's (identity), the rest its
    SA groups' — both counts named, each as the files show it."""
    from ..models.levels import level_words

    rows: list[tuple[str, Any]] = []
    for key, value in levels.items():
        label = level_words(key)
        if bucketized and key == "n_groups":
            if n_qi_classes is not None:
                rows.append(("QI combinations (the QI table)", f"{n_qi_classes:,}"))
            label = "SA groups (the SA table)"
        if bucketized and key == "k":
            label = "k-anonymity: smallest QI class (k)"
        if isinstance(value, float):
            value = "–" if value != value else f"{value:.4g}"
        elif isinstance(value, int):
            value = f"{value:,}"
        rows.append((label or key, value))
    return rows


def identity_rows(idt: dict[str, Any]) -> list[tuple[str, Any]]:
    """The re-identification figures as terminal rows (docs/identity.md)."""
    th = idt["threshold"]
    rows = [("records, classes", f"{idt['records']:,}, {idt['classes']:,}"),
            ("prosecutor: highest / at risk / success",
             f"{idt['prosecutor']['highest_risk']:.4g} / {idt['prosecutor']['records_at_risk']:.1%} above {th:g} / "
             f"{idt['prosecutor']['success_rate']:.1%}"),
            ("journalist: highest / at risk / success",
             f"{idt['journalist']['highest_risk']:.4g} / {idt['journalist']['records_at_risk']:.1%} above {th:g} / "
             f"{idt['journalist']['success_rate']:.1%}"),
            ("marketer: success", f"{idt['marketer']['success_rate']:.1%}")]
    pu = idt["population_uniqueness"]
    if idt.get("population_size"):
        est = ", ".join(f"{k} {pu[k]:.2%}" if pu.get(k) is not None else f"{k} did not converge"
                        for k in ("zayatz", "pitman", "snb") if k in pu)
        rows.append(("population uniques", f"{pu['dankar']:.2%} ({pu['dankar_model']}, Dankar's rule; {est}) "
                     f"of {pu['population_size']:,.0f}"))
    rows += [("note", n) for n in idt["notes"]]
    return rows


def add_parser(sub: Any) -> None:
    c = sub.add_parser("check", help="levels (k, ℓ, α, t) a raw table or a release satisfies")
    c.add_argument("input", nargs="?", help="data file / database URL, or a release (its data file or .json sidecar)")
    input_options(c)
    c.add_argument("--c", type=POSITIVE, default=2.0, help="c of recursive (c,ℓ)-diversity (default 2)")
    identity_options(c)
    from ._common import public_key_option

    public_key_option(c)
    c.add_argument("--batch-rows", type=POSITIVE_INT, default=None, metavar="N",
                   help="read a CSV/Parquet input in batches of about N rows and keep only its distinct "
                        "(QI, SA) tuples: memory bounded by those, not by the rows (the same levels). "
                        f"Files of {AUTO_BATCH_BYTES >> 30} GiB or more are read in batches of 2^20 rows anyway")
    add_engine_options(c)
    output_options(c)
    c.set_defaults(func=cmd_check)
