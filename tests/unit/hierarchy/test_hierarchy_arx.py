"""ARX hierarchy CSV I/O: interop with the real ARX Adult hierarchies, round trips, errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from openbook.errors import DataError, HierarchyError
from openbook.hierarchy import adult_hierarchies, from_mapping, read_arx_csv, write_arx_csv
from openbook.hierarchy.arx import parse_arx_text

ARX_HEIGHTS = {
    "age": 4,
    "education": 3,
    "marital-status": 2,
    "native-country": 2,
    "occupation": 2,
    "race": 1,
    "salary-class": 1,
    "sex": 1,
    "workclass": 2,
}
PACKAGED = Path(__file__).resolve().parents[3] / "src" / "openbook" / "data" / "hierarchies" / "arx"


def read_all(arx_dir: Path) -> dict:
    return {
        col: read_arx_csv(arx_dir / f"adult_hierarchy_{col}.csv", column=col, leaf_type=int if col == "age" else None)
        for col in ARX_HEIGHTS
    }


def test_read_real_arx_adult_hierarchies(arx_dir):
    hs = read_all(arx_dir)
    assert {c: h.height for c, h in hs.items()} == ARX_HEIGHTS
    for h in hs.values():
        assert h.is_tree and h.uniform_depth and h.label_of(h.root) == "*"
    age = hs["age"]
    assert age.leaves.dtype.kind == "i" and age.leaves.min() == 1 and age.leaves.max() == 100
    assert age.label_of(age.generalize(age.encode([23, 100]), 1)).tolist() == ["20-24", "95-99"]
    assert {c: h.n_leaves for c, h in hs.items()} == {
        "age": 100, "education": 16, "marital-status": 7, "native-country": 41, "occupation": 14,
        "race": 5, "salary-class": 2, "sex": 2, "workclass": 8,
    }  # fmt: skip
    qi = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
    assert math.prod(hs[c].height + 1 for c in qi) == 2160  # size of the generalization lattice


def test_round_trip_real_files(arx_dir, tmp_path):
    for col, h in read_all(arx_dir).items():
        out = tmp_path / f"{col}.csv"
        write_arx_csv(h, out)
        back = read_arx_csv(out, column=col, leaf_type=int if col == "age" else None)
        assert back.same_structure(h)
        assert back.labels.tolist() == h.labels.tolist()
        assert back.ancestor_table.tolist() == h.ancestor_table.tolist()
        # the written rows are the original rows (the native-country file lacks a final newline)
        src = (arx_dir / f"adult_hierarchy_{col}.csv").read_text().splitlines()
        assert out.read_text().splitlines() == src
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp files


def test_packaged_copies_match_shared_files(shared_arx_dir):
    arx_dir = shared_arx_dir
    for col in ARX_HEIGHTS:
        name = f"adult_hierarchy_{col}.csv"
        assert (PACKAGED / name).read_bytes() == (arx_dir / name).read_bytes()
    for col, h in adult_hierarchies("arx").items():
        assert h.same_structure(read_all(arx_dir)[col])


def test_round_trip_paper001_variant(tmp_path):
    for col, h in adult_hierarchies("paper001").items():
        out = tmp_path / f"{col}.csv"
        write_arx_csv(h, out)
        back = read_arx_csv(out, column=col, leaf_type=int if col == "age" else None)
        assert back.same_structure(h) and back.height == h.height


def test_inconsistent_depth_names_leaf_and_column(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a;A;*\nb;*\n")
    with pytest.raises(HierarchyError, match="inconsistent depth") as e:
        read_arx_csv(p, column="col")
    assert e.value.column == "col" and e.value.value == "b"
    assert "'b'" in str(e.value) and "'col'" in str(e.value) and "line 2" in str(e.value)


def test_same_label_with_two_parents(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a;A;X;*\nb;A;Y;*\n")
    with pytest.raises(HierarchyError, match="two parents") as e:
        read_arx_csv(p, column="col")
    assert e.value.value == "A" and "'col'" in str(e.value)
    p.write_text("a;A;B;*\nb;C;A;*\n")
    with pytest.raises(HierarchyError, match="at level 1 and at level 2") as e:
        read_arx_csv(p, column="col")
    assert e.value.value == "A"


def test_file_errors(tmp_path):
    with pytest.raises(DataError, match="cannot read") as e:
        read_arx_csv(tmp_path / "missing.csv", column="col")
    assert e.value.path == tmp_path / "missing.csv"
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(DataError, match="empty"):
        read_arx_csv(empty)
    cut = tmp_path / "cut.csv"
    cut.write_text("a;A;*\nb;B;*\nc;C")
    with pytest.raises(DataError, match="truncated"):
        read_arx_csv(cut)
    quote = tmp_path / "quote.csv"
    quote.write_text('a;A;*\nb;"B;*')
    with pytest.raises(DataError):
        read_arx_csv(quote)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"a;\xff\xfe;*\n")
    with pytest.raises(DataError, match="UTF-8"):
        read_arx_csv(binary)
    with pytest.raises(DataError):
        read_arx_csv(tmp_path)  # a directory


def test_leaf_type(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("1.5;low;*\n2.5;low;*\n")
    h = read_arx_csv(p, column="x", leaf_type=float)
    assert h.leaves.tolist() == [1.5, 2.5] and h.encode([2.5]).tolist() == [1]
    with pytest.raises(HierarchyError, match="cannot be read as int") as e:
        read_arx_csv(p, column="x", leaf_type=int)
    assert e.value.value == "1.5" and "'x'" in str(e.value)


def test_quoting_bom_and_crlf():
    h = parse_arx_text('\ufeffa;"A;1";*\r\nb;"A;1";*\r\n', column="c")
    assert h.labels.tolist() == ["a", "b", "A;1", "*"]


def test_write_refuses_what_arx_cannot_hold(tmp_path, fig1, disease_dag):
    out = tmp_path / "h.csv"
    with pytest.raises(HierarchyError, match="uniform depth") as e:
        write_arx_csv(fig1, out)  # elementary values are shallower
    assert e.value.column == "education" and e.value.value == "1st-4th"
    with pytest.raises(HierarchyError, match="DAG"):
        write_arx_csv(disease_dag, out)
    assert list(tmp_path.iterdir()) == []


def test_write_is_atomic(tmp_path):
    h = from_mapping({"a": "A", "b": "A", "A": "*"}, "col")
    out = tmp_path / "h.csv"
    out.write_text("old content\n")
    write_arx_csv(h, out)
    assert out.read_text() == "a;A;*\nb;A;*\n"
    with pytest.raises(DataError, match="cannot write"):
        write_arx_csv(h, tmp_path / "no-such-dir" / "h.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv"]
