"""The Spark engine's release on disk: a folder of Parquet part files with its sidecar
(docs/spark.md, "Output"; docs/release-files.md for the local conventions it follows).

``-o OUT.parquet`` names a *folder*: Spark writes the published rows into a staging folder
beside it (``.OUT.parquet.<12 hex>.stage``, :func:`openbook.release.commit.stage_name`: a
name no concurrent reader's sweep removes while the executors write), the SHA-256 of every
part file is taken, and the folder and its sidecar ``OUT.parquet.json`` are renamed into
place as one unit by the local engine's crash-safe commit
(:func:`openbook.release.commit.commit`: journal, renames, under the folder lock). Never over
an input; over an existing release only with ``force`` (the old folder is set aside and
removed inside the same journaled commit, so a kill at any moment leaves the old release or
the new one).

Row order is a channel (:func:`openbook.release.release.canonical_form`): the rows are
sorted by their published values (QI labels, then the SA value) — never in input order —
and the part files are numbered in that order. The sidecar is the local engine's public
record (:func:`openbook.release.sidecar.public_record`: no input count, no suppressed count
unless the publisher opts in) plus ``files``: the folder, the row count, and per part file
its name, rows and digest.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Iterator

from .. import __version__
from ..errors import DataError, ParameterError
from ..release import commit as _commit
from ..release.sidecar import FORMAT, json_default, public_record, self_digest, sha256_file
from .encoding import SA
from .mondrian import SparkMondrianResult, label_col


def sidecar_of(path: Path) -> Path:
    """``OUT.parquet`` -> ``OUT.parquet.json`` (beside the folder)."""
    return path.with_name(path.name + ".json")


def check_output(path: str | os.PathLike, *, force: bool = False, inputs: Iterable[Any] = ()) -> Path:
    """May the Spark release be written at ``path``? A local folder name ending in
    ``.parquet``, not an input, not an existing path unless ``force``; else one line."""
    text = str(path)
    if "://" in text and not text.startswith("file://"):
        raise ParameterError(f"output {text}: the Spark engine writes its release to a local or mounted folder "
                             "(the atomic rename needs one file system)", parameter="output", value=text)
    p = Path(text.removeprefix("file://"))
    if not p.name or p.suffix.lower() != ".parquet":
        raise ParameterError(f"output {text}: the Spark engine writes a Parquet folder; name it NAME.parquet",
                             parameter="output", value=text)
    if not p.parent.is_dir():
        raise ParameterError(f"output {text}: folder {p.parent} does not exist", parameter="output", value=text)
    for given in inputs:
        if given is None or "://" in str(given):
            continue
        q = Path(str(given))
        if q.exists() and (p.exists() and os.path.samefile(p, q) or p.resolve() in q.resolve().parents):
            raise ParameterError(f"output {text} would overwrite the input {q}; choose another name",
                                 parameter="output", value=text)
    for f in (p, sidecar_of(p)):
        if f.exists() and not force:
            raise ParameterError(f"output {text}: {f} exists; use --force to replace it", parameter="output",
                                 value=text)
    return p


def release_meta(res: SparkMondrianResult, check: dict[str, Any], *, n_published: int) -> dict[str, Any]:
    """The publisher's record of the run (the keys :func:`openbook.release.release.build_release`
    records for a local release)."""
    from ..algorithms.mondrian import Mondrian

    st = res.st
    prov = Mondrian(model=res.model, strict=res.strict).provenance() | {
        "engine": "spark", "n_fragments": res.n_fragments, "planned_levels": res.plan.levels}
    meta: dict[str, Any] = {
        "openbook_version": __version__, "kind": "generalized", "schema": st.dictionaries.schema.to_dict(),
        "model": res.model.to_dict(), "algorithm": prov, "n_input": st.n_rows, "n_published": n_published,
        "n_suppressed": st.n_rows - n_published, "n_groups": check["classes"], "levels": None,
        "check": {"model": res.model.describe(), "holds": check["failing"] == 0, "level": None,
                  "n_groups": check["classes"], "failing_groups": check["failing"]},
        "certificate": {"verdict": "not certified", "reason": "the Spark engine does not run the adversaries "
                        "(they need the table on one machine)", "adversaries": []},
    }
    return meta


def published_rows(res: SparkMondrianResult) -> Any:
    """The published rows — QI labels under the QI names, the SA value under its name —
    sorted by their published values (module docstring)."""
    import pyarrow as pa

    st = res.st
    names = st.qi_names
    sa_name = st.dictionaries.sa_name
    sa_values = pa.array(list(st.dictionaries.columns[sa_name].categories))
    labels = [label_col(j) for j in range(st.d)]
    out_schema = pa.schema([*(pa.field(n, pa.string()) for n in names), pa.field(sa_name, sa_values.type)])

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        for b in batches:
            cols = [b.column(c) for c in labels] + [sa_values.take(b.column(SA))]
            yield pa.RecordBatch.from_arrays(cols, schema=out_schema)

    from pyspark.sql.types import StructType

    spark_schema = StructType.fromJson(json.loads(_spark_schema_json(res.rows.sparkSession, out_schema)))
    df = res.rows.select(*labels, SA).mapInArrow(decode, spark_schema)
    return df.orderBy(*[f"`{c}`" for c in [*names, sa_name]])


def _spark_schema_json(spark: Any, schema: Any) -> str:
    """The Spark schema of an Arrow schema (via an empty DataFrame)."""
    import pyarrow as pa

    return spark.createDataFrame(pa.Table.from_batches([], schema=schema)).schema.json()


def write_release(res: SparkMondrianResult, check: dict[str, Any], path: str | os.PathLike, *,
                  force: bool = False, inputs: Iterable[Any] = (), publish_suppressed_count: bool = False,
                  publish_identifier_names: bool = False, n_suppressed: int = 0, meta: Any = None) -> list[Path]:
    """Write the verified release (module docstring); returns ``[folder, sidecar]``. ``meta``
    (``n_published -> record``) and ``n_suppressed`` serve other algorithms than Mondrian."""
    p = check_output(path, force=force, inputs=inputs)
    side = sidecar_of(p)
    rows = published_rows(res)
    stage = _commit.stage_name(p)  # outside the lock while Spark writes: a name no sweep removes
    try:
        rows.write.parquet(str(stage))
        parts = sorted(f for f in os.listdir(stage) if f.startswith("part-") and f.endswith(".parquet"))
        import pyarrow.parquet as pq

        files = [{"name": f, "rows": pq.ParquetFile(stage / f).metadata.num_rows, "sha256": sha256_file(stage / f)}
                 for f in parts]
        for f in os.listdir(stage):  # Hadoop's checksum files are not part of the release
            if f.endswith(".crc"):
                (stage / f).unlink()
        n_published = sum(f["rows"] for f in files)
        if n_published != check["rows"] or res.st.n_rows != n_published + n_suppressed:
            raise DataError(f"rows lost: input {res.st.n_rows} != published {n_published} + suppressed "
                            f"{n_suppressed}; nothing was written")
        meta = meta(n_published) if meta is not None else release_meta(res, check, n_published=n_published)
        record = {"format": FORMAT, **public_record(meta, publish_suppressed_count=publish_suppressed_count,
                                                    publish_identifier_names=publish_identifier_names)}
        record["files"] = {"data": p.name, "layout": "parquet-folder", "rows": n_published, "parts": files}
        record["digest"] = self_digest(record)

        def move(tmp: Path) -> None:
            os.replace(stage, tmp)

        def sidecar(tmp: Path) -> None:
            tmp.write_text(json.dumps(record, indent=2, default=json_default))

        # an old release folder (--force) is set aside and removed inside the journaled commit
        return _commit.commit(p, {p: move, side: sidecar}, [p, side])
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def verify_folder(path: str | os.PathLike) -> dict[str, Any]:
    """Read a Spark release's sidecar and check it against the folder: its own digest, every
    part file's digest and row count, no part file unaccounted for. Returns the sidecar."""
    p = Path(path)
    side = sidecar_of(p)
    try:
        record = json.loads(side.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"release sidecar {side} is missing or unreadable", path=side) from exc
    if record.get("digest") != self_digest(record):
        raise DataError(f"release sidecar {side} was changed after it was written (digest mismatch)", path=side)
    parts = record.get("files", {}).get("parts", [])
    on_disk = sorted(f for f in os.listdir(p) if f.endswith(".parquet"))
    if on_disk != sorted(f["name"] for f in parts):
        raise DataError(f"release {p}: its part files are not the ones its sidecar lists", path=p)
    for f in parts:
        if sha256_file(p / f["name"]) != f["sha256"]:
            raise DataError(f"release {p}: part file {f['name']} was changed (digest mismatch)", path=p)
    return record
