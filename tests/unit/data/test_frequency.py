"""The frequency table built batch by batch (bounded memory) equals the one of the table read
whole — codes, classes, counts and errors — and the levels and re-identification figures
computed from it are the in-memory ones, exactly."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from openbook.attacks.reidentification import class_size_summary as identity_of_classes, reidentification_risk
from openbook.cli import main
from openbook.data.datasets import load_dataset
from openbook.data.frequency import FrequencyTable, frequency_table
from openbook.data.grouping import group_ids
from openbook.models.levels import compute_levels

from arrow_cases import (
    arrow_source,
    assert_same_frequency,
    csv_tables,
    outcome,
    plain,
    reference,
    typed_tables,
    write_csv,
)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def in_memory(path, schema):
    enc = reference(path, schema)
    return enc if enc[0] == "error" else ("ok", FrequencyTable.from_table(enc[1]))


def assert_same(got, want):
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1:] == want[1:]
    else:
        assert_same_frequency(got[1], want[1])


def levels_of(table):
    cls, n = group_ids(table.qi_codes)
    return compute_levels(table.group_sa_counts(cls, n), table.sa_domain, c=2.0)


@SETTINGS
@given(case=csv_tables())
def test_random_csv_in_batches(tmp_path_factory, case):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    write_csv(path, case)
    got = outcome(lambda: frequency_table(arrow_source(path), case["schema"], source=str(path),
                                          batch_rows=case["batch_rows"]))
    want = in_memory(path, case["schema"])
    assert_same(got, want)
    if got[0] == "ok":  # the levels: exactly the in-memory ones (counts per class as rows grouped whole)
        table = reference(path, case["schema"])[1]
        assert compute_levels(got[1].sa_counts, got[1].sa_domain, c=2.0) == levels_of(table)


@SETTINGS
@given(case=typed_tables(), row_group=st.sampled_from([1, 4, 64]))
def test_random_parquet_in_batches(tmp_path_factory, case, row_group):
    table, schema = case
    path = tmp_path_factory.mktemp("pq") / "t.parquet"
    pq.write_table(table, path, row_group_size=row_group)
    got = outcome(lambda: frequency_table(arrow_source(path), schema, source=str(path), batch_rows=row_group,
                                          fallback=False))
    assert_same(got, in_memory(path, schema))


def test_error_positions_come_from_a_second_pass(tmp_path):
    """An error names the first bad row's position among the rows kept after dropping missing
    values, and the number of such rows: the batched path finds them as the whole table does."""
    from openbook.data.schema import Schema

    path = tmp_path / "t.csv"
    rows = ["q,age,d"] + [f"{'?' if i % 3 == 0 else 'a'},{i},x" for i in range(40)] + ["b,old,y", "c,older,y"]
    path.write_text("\n".join(rows) + "\n")
    schema = Schema.build(qi=["q", "age:numeric"], sa="d", missing="drop")
    want = in_memory(path, schema)
    assert want[0] == "error" and "row 26, 2 such value(s)" in want[2]
    assert_same(outcome(lambda: frequency_table(arrow_source(path), schema, batch_rows=4)), want)


def test_adult_levels_in_batches(adult_dir):
    ds = load_dataset("adult")
    table = ds.encode()
    for batch_rows in (1000, 4096, 1 << 20):
        freq = frequency_table(ds.data, ds.schema, ds.hierarchies, source=ds.name, batch_rows=batch_rows,
                               fallback=False)
        assert_same_frequency(freq, FrequencyTable.from_table(table))
        assert compute_levels(freq.sa_counts, freq.sa_domain, c=2.0) == levels_of(table)
        assert freq.n_rows == table.n_rows == int(freq.weights.sum())


@pytest.mark.parametrize("pop", [{}, {"sampling_fraction": 0.3}, {"population_size": 500_000.0},
                                 {"sampling_fraction": 1.0}, {"threshold": 0.5}])
def test_identity_from_class_sizes(adult_dir, pop):
    ds = load_dataset("adult")
    table = ds.encode()
    kw = {"population_size": None, "sampling_fraction": None, "threshold": 0.2, **pop}
    want = reidentification_risk(table, **kw).summary()
    got = identity_of_classes(FrequencyTable.from_table(table).weights, **kw)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=csv_tables(), sampling=st.sampled_from([None, 0.05, 0.5]))
def test_check_command_same_with_batches(tmp_path_factory, capsys, case, sampling):
    """``openbook check FILE --batch-rows N`` prints what ``openbook check FILE`` prints."""
    schema = case["schema"]
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    write_csv(path, plain(case))
    base = ["check", str(path), "--qi", ",".join(f"{c.name}:{c.kind}" for c in schema.qi),
            "--sa", schema.sa.name, "--json", *(["--sampling-fraction", str(sampling)] if sampling else [])]
    outs = []
    for extra in ([], ["--batch-rows", str(case["batch_rows"])]):
        rc = main(base + extra)
        out = capsys.readouterr()
        outs.append((rc, json.loads(out.out) if rc == 0 else out.err))
    for rc_out in outs:
        if rc_out[0] == 0:
            rc_out[1].pop("seconds")
    assert outs[0] == outs[1]


def test_check_batches_refuses_a_file_only_pandas_reads(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2\n")  # a short row: pandas fills it with a missing value
    assert main(["check", str(path), "--qi", "a", "--sa", "b", "--batch-rows", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be read in batches" in err[0]


def test_classes_are_sorted_and_weighted():
    from openbook.data.table import EncodedTable

    rng = np.random.default_rng(5)
    t = EncodedTable.from_codes(qi_codes=rng.integers(0, 3, (200, 2)), sa_codes=rng.integers(0, 4, 200))
    f = FrequencyTable.from_table(t)
    keys = [tuple(r) for r in f.qi_codes.tolist()]
    assert keys == sorted(set(map(tuple, t.qi_codes.tolist())))
    for key, w, row in zip(keys, f.weights, f.sa_counts):
        mine = np.all(t.qi_codes == key, axis=1)
        assert w == mine.sum()
        np.testing.assert_array_equal(row, np.bincount(t.sa_codes[mine], minlength=4))
