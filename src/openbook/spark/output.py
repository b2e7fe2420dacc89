"""The Spark engine's release on disk: a folder of Parquet part files with its sidecar
(docs/spark.md, "Output"; docs/release-files.md for the local conventions it follows).

``-o OUT.parquet`` names a *folder*. The executors write the published rows into a staging
folder beside it (``.OUT.parquet.<12 hex>.held.stage``, :func:`openbook.release.commit.open_stage`:
created and held by the driver, and held by each executor while it writes, so a concurrent
reader's sweep removes it only once every writer is dead): each task writes its partition
of the sorted rows as one part file, hashing the bytes as it writes them (SHA-256), syncs
it and returns its name, row count and digest — the driver never reads a part back. The
folder and its sidecar ``OUT.parquet.json`` are then renamed into place as one unit by the
local engine's crash-safe commit (:func:`openbook.release.commit.commit`: journal, renames,
under the folder lock), which every reader settles first. Never over an input; over an
existing release only with ``force`` (the old folder is set aside and removed inside the
same journaled commit, so a kill at any moment leaves the old release or the new one).

Row order is a channel (:func:`openbook.release.release.canonical_form`): the rows are
sorted by their published values (QI labels, then the SA value) — never in input order —
and the part files are numbered in that order. The sidecar is the local engine's public
record (:func:`openbook.release.sidecar.public_record`: no input count, no suppressed count
unless the publisher opts in) plus ``files``: the folder, the layout, the row count, per
part file (in published order) its name, rows and digest, and the column types. Reading it
back is :mod:`.folder` (``openbook.release.load_release``).
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
from ..release.io import FOLDER_LAYOUT, release_files, settle
from ..release.sidecar import FORMAT, check_schema, json_default, public_record, self_digest
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
    settle(p)  # a write interrupted earlier is finished or undone before anything is judged
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
    from ..data.datasets import DATASETS

    st = res.st
    prov = Mondrian(model=res.model, strict=res.strict).provenance() | {
        "engine": "spark", "n_fragments": res.n_fragments, "planned_levels": res.plan.levels}
    meta: dict[str, Any] = {
        "openbook_version": __version__, "kind": "generalized", "schema": st.dictionaries.schema.to_dict(),
        "model": res.model.to_dict(), "algorithm": prov, "n_input": st.n_rows, "n_published": n_published,
        "n_suppressed": st.n_rows - n_published, "n_groups": check["classes"], "levels": None,
        "check": check["check"],
    }
    if st.dictionaries.source in DATASETS:  # a built-in dataset's name is public; a path is not
        meta["source"] = st.dictionaries.source
    return meta


NOT_CERTIFIED = {"verdict": "not certified", "reason": "certification skipped by the publisher (--no-certify)",
                 "adversaries": []}


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


def _dtype(t: Any) -> str:
    """The sidecar's column type of a Spark column type (as the local ``_dtypes``)."""
    from pyspark.sql import types as T

    if isinstance(t, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return "int64"
    return "float64" if isinstance(t, (T.DoubleType, T.FloatType)) else "string"


def write_parts(rows: Any, stage: Path) -> list[dict[str, Any]]:
    """Each partition of the sorted ``rows`` written by the executor that computes it, as
    ``stage/part-NNNNN.parquet`` (``NNNNN`` = the partition, so names follow the sort), its
    SHA-256 taken from the bytes as they are written, synced, renamed into place from a
    task-private temporary (a retried task writes the same bytes again); returns per part
    ``{"name", "rows", "sha256"}`` in published order. Each writer holds the stage
    (:func:`openbook.release.commit.stage_lock`)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from ..release.commit import stage_lock

    cols = list(rows.columns)
    where = str(stage)

    def write(batches: Iterator[Any]) -> Iterator[Any]:
        import hashlib
        import io
        import secrets

        import pyarrow.parquet as pq

        class Hashing(io.RawIOBase):
            def __init__(self, fh: Any) -> None:
                self.fh, self.h, self.n = fh, hashlib.sha256(), 0

            def writable(self) -> bool:
                return True

            def write(self, b: Any) -> int:
                self.h.update(b)
                self.n += len(b)
                return self.fh.write(b)

            def tell(self) -> int:
                return self.n

        writer = fh = sink = None
        n = 0
        with stage_lock(where):
            for b in batches:
                if not b.num_rows:
                    continue
                if writer is None:
                    name = f"part-{int(b.column('_pid')[0].as_py()):05d}.parquet"
                    tmp = os.path.join(where, f".{name}.{secrets.token_hex(6)}.tmp")
                    fh = open(tmp, "wb")
                    sink = Hashing(fh)
                    writer = pq.ParquetWriter(sink, pa.schema([b.schema.field(c) for c in cols]))
                writer.write_batch(pa.RecordBatch.from_arrays([b.column(c) for c in cols], names=cols))
                n += b.num_rows
            if writer is None:
                return
            assert fh is not None and sink is not None  # opened with the writer
            writer.close()
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            os.replace(tmp, os.path.join(where, name))
        yield pa.RecordBatch.from_arrays([pa.array([name]), pa.array([n], pa.int64()), pa.array([sink.h.hexdigest()])],
                                         names=["name", "rows", "sha256"])

    got = rows.withColumn("_pid", F.spark_partition_id()).mapInArrow(write, "name string, rows long, sha256 string")
    return sorted(got.toArrow().to_pylist(), key=lambda f: f["name"])


def write_release(res: Any, check: dict[str, Any], path: str | os.PathLike, *, force: bool = False,
                  inputs: Iterable[Any] = (), publish_suppressed_count: bool = False,
                  publish_identifier_names: bool = False, n_suppressed: int = 0, meta: Any = None,
                  certificate: dict[str, Any] | None = None) -> list[Path]:
    """Write the verified release (module docstring); returns ``[folder, sidecar]``. ``meta``
    (``n_published -> record``) and ``n_suppressed`` serve other algorithms than Mondrian;
    ``certificate``: the Spark certificate's record (:mod:`.certify`; default: not certified)."""
    p = check_output(path, force=force, inputs=inputs)
    side = sidecar_of(p)
    rows = published_rows(res)
    stage, held = _commit.open_stage(p)  # held (shared flock) until committed: no sweep removes it
    try:
        files = write_parts(rows, stage)
        listed = {f["name"] for f in files}
        for f in os.listdir(stage):  # a failed task attempt's temporary is not part of the release
            if f not in listed:
                os.unlink(stage / f)
        n_published = sum(f["rows"] for f in files)
        if n_published != check["rows"] or res.st.n_rows != n_published + n_suppressed:
            raise DataError(f"rows lost: input {res.st.n_rows} != published {n_published} + suppressed "
                            f"{n_suppressed}; nothing was written")
        meta = meta(n_published) if meta is not None else release_meta(res, check, n_published=n_published)
        meta["certificate"] = dict(certificate or NOT_CERTIFIED)
        record = {"format": FORMAT, **public_record(meta, publish_suppressed_count=publish_suppressed_count,
                                                    publish_identifier_names=publish_identifier_names)}
        schema = rows.schema
        record["files"] = {"data": p.name, "layout": FOLDER_LAYOUT, "rows": n_published, "parts": files,
                           "dtypes": {f.name: _dtype(f.dataType) for f in schema.fields}}
        record["digest"] = self_digest(record)
        check_schema(record)

        def move(tmp: Path) -> None:
            os.replace(stage, tmp)

        def sidecar(tmp: Path) -> None:
            tmp.write_text(json.dumps(record, indent=2, default=json_default))

        # an old release folder (--force) is set aside and removed inside the journaled commit
        return _commit.commit(p, {p: move, side: sidecar}, release_files(p))
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
        os.close(held)


def verify_folder(path: str | os.PathLike) -> dict[str, Any]:
    """Read a Spark release back as any reader does (:func:`openbook.release.load_release`:
    its sidecar, every part file's digest and row count, the claims on the rows) and return
    its sidecar record."""
    from ..release import load_release

    return load_release(path).meta
