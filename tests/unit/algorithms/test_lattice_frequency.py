"""Full-domain search on a frequency table (the out-of-core entry) returns what the search on
the table returns: the same node, minimal nodes, metric and nodes checked — from the table's
own frequency table and from one streamed in small Arrow batches."""

import numpy as np
import pyarrow as pa
import pytest
from test_lattice_minimal import _frame_and_schema, _table

from openbook.algorithms import make_algorithm
from openbook.algorithms.lattice_frequency import search_frequency
from openbook.data.frequency import FrequencyTable, frequency_table
from openbook.errors import InfeasibleError
from openbook.models import make_model


def _same(got: dict, want: dict) -> None:
    floats = ("metric_value", "minimal_metric")
    assert {k: v for k, v in got.items() if k not in floats} == {k: v for k, v in want.items() if k not in floats}
    assert got["metric_value"] == pytest.approx(want["metric_value"], rel=1e-12, abs=1e-15)
    assert [v is None for v in got["minimal_metric"]] == [v is None for v in want["minimal_metric"]]
    assert [v for v in got["minimal_metric"] if v is not None] == pytest.approx(
        [v for v in want["minimal_metric"] if v is not None], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("spec", ["k=3", "l=2", "entropy-l=2", "t=0.25", "k=2,l=2"])
@pytest.mark.parametrize("all_minimal", [False, True])
def test_frequency_search_equals_the_table_search(spec, all_minimal):
    model = make_model(spec)
    compared = 0
    for seed in range(12):
        frame, schema, hier = _frame_and_schema(seed)
        t = _table(seed)
        streamed = frequency_table(pa.Table.from_pandas(frame, preserve_index=False), schema, hier, batch_rows=7)
        for ms in (0.0, 0.15):
            algo = make_algorithm("full-domain-search", model=model, max_suppression=ms, all_minimal=all_minimal)
            try:
                want = algo.partition(t).provenance
            except InfeasibleError:
                for freq in (FrequencyTable.from_table(t), streamed):
                    with pytest.raises(InfeasibleError):
                        search_frequency(freq, model, ms, all_minimal=all_minimal)
                continue
            for freq in (FrequencyTable.from_table(t), streamed):
                _same(search_frequency(freq, model, ms, all_minimal=all_minimal)["provenance"], want)
            compared += 1
    assert compared >= 10


def test_frequency_search_labels_the_classes():
    """The chosen node's classes and holding mask are per distinct tuple: suppressed rows
    are exactly those of failing classes, within the budget."""
    t = _table(5)
    freq = FrequencyTable.from_table(t)
    res = search_frequency(freq, make_model("k=3"), 0.15)
    ev = res["lattice"].evaluate(res["best"])
    assert ev["suppressed"] <= res["lattice"].budget
    assert int(freq.weights[~ev["holds"][ev["combo_class"]]].sum()) == ev["suppressed"]
    assert np.array_equal(np.bincount(ev["combo_class"], weights=freq.weights).astype(np.int64), ev["sizes"])


def test_cli_batch_rows_gives_the_same_release(tmp_path, capsys):
    """``anonymize --algorithm full-domain-search --batch-rows N`` searches the frequency
    table streamed from the file and writes the release the in-memory search writes, byte
    for byte; any other algorithm is refused with one line and exit code 2, no file."""
    from cli_harness import error_lines, run_cli

    frame, _, _ = _frame_and_schema(3)
    frame = frame.loc[frame.index.repeat(4)].reset_index(drop=True)  # 4 copies: k=3 has a node
    csv = tmp_path / "t.csv"
    frame.to_csv(csv, index=False)
    base = [csv, "--qi", "age:numeric,zip,sex", "--sa", "sa", "-m", "k=5", "--max-suppression", "0.1",
            "--no-certify"]  # the release's bytes are compared here, not its certificate
    outs = []
    for extra in ([], ["--batch-rows", "9"]):
        out = tmp_path / f"r{len(outs)}.csv"
        code, _, err = run_cli(capsys, ["anonymize", *base, "--algorithm", "full-domain-search", *extra, "-o", out])
        assert code == 0, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    code, _, err = run_cli(capsys, ["anonymize", *base, "--algorithm", "full-domain", "--levels", "1,1,1",
                                    "--batch-rows", "9", "-o", tmp_path / "m.csv"])
    assert code == 2 and len(error_lines(err)) == 1 and "--batch-rows" in err
    assert not (tmp_path / "m.csv").exists()


def test_a_search_of_another_table_is_refused():
    """``use_search`` takes a search of the same classes only."""
    from openbook.errors import ParameterError

    model = make_model("k=3")
    algo = make_algorithm("full-domain-search", model=model, max_suppression=0.15)
    algo.use_search(search_frequency(FrequencyTable.from_table(_table(1)), model, 0.15))
    with pytest.raises(ParameterError, match="another table"):
        algo.partition(_table(2))
    res = search_frequency(FrequencyTable.from_table(_table(2)), model, 0.15)
    assert algo.use_search(res).partition(_table(2)).provenance["levels"] == [int(x) for x in res["best"]]
