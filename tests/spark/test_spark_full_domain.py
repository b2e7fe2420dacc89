"""``anonymize --algorithm full-domain-search --engine spark``: the same node, minimal nodes,
metrics, nodes checked and row partition as the local engine, on random tables, for several
models, suppression budgets and metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from openbook.algorithms.lattice import FullDomainSearch
from openbook.data.table import encode
from openbook.errors import InfeasibleError, ParameterError
from openbook.models.registry import make_model
from openbook.release import Partition
from openbook.spark import full_domain as sfd
from openbook.spark.encoding import ROW, encode_raw, from_encoded, read_raw

from .conftest import frame_schema, random_frame

MODELS = ["k=2", "k=5", "l=2", "entropy-l=2", "recursive-l=2,c=2", "alpha=0.6,k=2", "t=0.4", "k=3,l=2"]


def _local(table, model, budget, metric):
    algo = FullDomainSearch(model=make_model(model), max_suppression=budget, metric=metric)
    try:
        return algo.partition(table), None
    except InfeasibleError as exc:
        return None, exc


def _partition(stable, algo):
    """The search on the cluster, every row's class collected in input order: one label per
    row on the driver, a test's comparison (the engine itself never collects rows)."""
    res = sfd.search(stable, algo)
    t = sfd.row_labels(stable, res).select(ROW, sfd.GROUP).orderBy(ROW).toArrow()
    return Partition.from_labels(t.column(sfd.GROUP).to_numpy().astype(np.int64), provenance=res.provenance)


def _spark(stable, model, budget, metric):
    algo = FullDomainSearch(model=make_model(model), max_suppression=budget, metric=metric)
    try:
        return _partition(stable, algo), None
    except InfeasibleError as exc:
        return None, exc


def _same(a, b):
    pa, ea = a
    pb, eb = b
    assert (ea is None) == (eb is None), (ea, eb)
    if ea is not None:
        assert str(ea) == str(eb)
        return
    assert pa.provenance == pb.provenance
    assert np.array_equal(pa.group, pb.group)
    assert pa.n_groups == pb.n_groups


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 250), model=st.sampled_from(MODELS),
       budget=st.sampled_from([0.0, 0.05, 0.2]), metric=st.sampled_from(["loss", "discernibility", "height"]))
def test_same_node_as_local(spark, seed, n, model, budget, metric):
    frame = random_frame(seed, n, d=3)
    table = encode(frame, frame_schema(frame))
    stable = from_encoded(spark, table)
    _same(_spark(stable, model, budget, metric), _local(table, model, budget, metric))


@pytest.mark.parametrize("model,budget", [("k=4", 0.0), ("l=2", 0.1), ("t=0.3", 0.02), ("entropy-l=2", 0.0)])
def test_same_node_from_files(spark, tmp_path, model, budget):
    """Read by the Spark engine's encoder (CSV, rows shuffled among files): the same node,
    partition and provenance as the local engine on the same table."""
    frame = random_frame(23, 400, d=4)
    schema = frame_schema(frame)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    stable = encode_raw(spark, read_raw(spark, str(path)), schema, {}, source=str(path), csv=True)
    table = encode(frame, schema)
    local = _local(table, model, budget, "loss")
    assert local[0] is not None  # the case is feasible: the comparison covers a release
    _same(_spark(stable, model, budget, "loss"), local)


def test_driver_budget_refuses_in_one_line(spark):
    frame = random_frame(3, 200)
    stable = from_encoded(spark, encode(frame, frame_schema(frame)))
    algo = FullDomainSearch(model=make_model("k=2"))
    with pytest.raises(ParameterError, match="distinct \\(QI, SA\\) combinations"):
        sfd.search(stable, algo, max_rows=5)


@pytest.mark.parametrize("model,budget", [("k=3", "0.05"), ("l=2", "0.02")])
def test_cli_anonymize_engine_spark_equals_local(spark, tmp_path, capsys, model, budget):
    """``anonymize --algorithm full-domain-search --engine spark``: the local engine's node and
    published rows (a Parquet folder with its sidecar), published + suppressed = input."""
    import json

    import pandas as pd
    import pyarrow.parquet as pq

    from openbook.spark.output import verify_folder

    from cli_harness import run_cli

    frame = random_frame(36, 300, d=3, card=8)
    data = tmp_path / "in.csv"
    frame.to_csv(data, index=False)
    qi = ["--qi", "q0:numeric,q1,q2:numeric", "--sa", "sa"]
    common = ["anonymize", data, *qi, "--algorithm", "full-domain-search", "-m", model, "--max-suppression", budget,
              "--no-certify", "--json", "--quiet"]
    code, o, err = run_cli(capsys, [*common, "-o", tmp_path / "local.csv"])
    assert code == 0, err
    local = json.loads(o)
    code, o, err = run_cli(capsys, [*common, "--engine", "spark", "-o", tmp_path / "rel.parquet"])
    assert code == 0, err
    got = json.loads(o)
    assert got["n_input"] == got["n_published"] + got["n_suppressed"] == 300
    for k in ("n_published", "n_suppressed", "n_groups"):
        assert got[k] == local[k], k
    side = verify_folder(tmp_path / "rel.parquet")
    local_side = json.loads((tmp_path / "local.csv.json").read_text())
    assert side["algorithm"] == local_side["algorithm"]
    assert side["levels"] == local_side["levels"] == got["levels"] and any(got["levels"])  # a generalized node
    a = pq.read_table(tmp_path / "rel.parquet").to_pandas().astype(str)
    b = pd.read_csv(tmp_path / "local.csv", dtype=str)[list(a.columns)]
    key = list(a.columns)
    assert a.sort_values(key).reset_index(drop=True).equals(b.sort_values(key).reset_index(drop=True))
