import sqlite3

import pytest

from openbook.data.loaders import read_table
from openbook.errors import DataError


def test_csv_parquet_sqlite_duckdb_agree(tmp_path, small_frame):
    df = small_frame.reset_index(drop=True)
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet", index=False)
    con = sqlite3.connect(tmp_path / "t.db")
    df.to_sql("people", con, index=False)
    con.close()
    import duckdb

    dcon = duckdb.connect(str(tmp_path / "t.duckdb"))
    dcon.register("f", df)
    dcon.execute("CREATE TABLE people AS SELECT * FROM f")
    dcon.close()
    frames = [
        read_table(tmp_path / "t.csv"),
        read_table(tmp_path / "t.parquet"),
        read_table(tmp_path / "t.db", table="people"),
        read_table(f"sqlite:///{tmp_path / 't.db'}", query="SELECT * FROM people"),
        read_table(f"duckdb:///{tmp_path / 't.duckdb'}", table="people"),
        read_table(f"sqlite+pysqlite:///{tmp_path / 't.db'}", table="people"),  # SQLAlchemy URL
    ]
    for f in frames:
        assert list(f.columns) == list(df.columns)
        assert f["age"].astype(int).tolist() == df["age"].tolist()
        assert f["disease"].astype(str).tolist() == df["disease"].tolist()


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_table(tmp_path / "nope.csv")


def test_truncated_parquet(tmp_path, small_frame):
    p = tmp_path / "t.parquet"
    small_frame.to_parquet(p)
    p.write_bytes(p.read_bytes()[:200])
    with pytest.raises(DataError, match="cannot read"):
        read_table(p)


def test_malformed_csv(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n3,4,5,6\n")
    with pytest.raises(DataError, match="cannot read"):
        read_table(p)


def test_binary_garbage(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_bytes(b"\xff\xfe\x00\x81" * 50)
    with pytest.raises(DataError):
        read_table(p)


def test_dataframe_index_reset(small_frame):
    assert list(read_table(small_frame).index) == list(range(12))
