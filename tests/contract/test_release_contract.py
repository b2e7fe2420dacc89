"""What a release FILE may reveal, for every registered anonymizer: nothing beyond its
published rows. Row order and GIDs are a function of the published content (a shuffled
copy re-canonicalizes to the same file); a hidden order of the input (rows sorted by a
region that is not published, or by the SA of a bucketized release) is not recoverable from
row positions; the sidecar carries no count of suppressed rows; files are bound to their
sidecar by digests."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import all_algorithms, make_algorithm
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import DataError
from openbook.models import make_model
from openbook.release import Partition, build_release, load_release, save_release
from openbook.release.io import sidecar_path, sa_table_path
from openbook.release.release import GID, canonical_form

NAMES = sorted(all_algorithms())
EXTRA = {"full-domain": {"levels": [1, 1, 1], "max_suppression": 0.3}, "mask": {"k": 4}}
MODELS = {"mask": "simple-l=2,set=sens,set-mode=total", "art": "simple-l=2,set=sens", "set-anatomy": "simple-l=2,set=sens",
          "art-exact": "simple-l=2,set=sens", "injector": "simple-l=2,set=sens"}


def frame(seed: int, n: int = 240) -> pd.DataFrame:
    """QIs, a hidden region and the SA drawn independently: nothing but the input's order
    ties a row's position to its region or SA."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "zip": rng.choice(["a", "b", "c", "d", "e"], n),
        "sex": rng.choice(["F", "M"], n),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "disease": rng.choice(["flu", "hiv", "cold", "cancer", "none"], n, p=[0.3, 0.2, 0.2, 0.15, 0.15]),
    })


SCHEMA = Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease", sensitive_sets={"sens": ["hiv", "cancer"]})


def release_of(name: str, df: pd.DataFrame):
    t = encode(df.drop(columns=["region"]), SCHEMA)
    model = make_model(MODELS.get(name, "l=2"))
    return make_algorithm(name, model=model, seed=5, **EXTRA.get(name, {})).anonymize(t)


@pytest.mark.parametrize("name", NAMES)
def test_file_is_a_function_of_the_published_rows(name):
    rel = release_of(name, frame(1))
    rng = np.random.default_rng(2)
    data = rel.data.iloc[rng.permutation(len(rel.data))].reset_index(drop=True)
    st = None
    if rel.kind == "bucketized":
        relabel = rng.permutation(int(data[GID].max())) + 100  # any other numbering of the groups
        data[GID] = relabel[data[GID].to_numpy() - 1]
        st = rel.sa_table.iloc[rng.permutation(len(rel.sa_table))].reset_index(drop=True)
        st[GID] = relabel[st[GID].to_numpy() - 1]
    d2, st2, _ = canonical_form(data, st, kind=rel.kind, sa=rel.sa)
    pd.testing.assert_frame_equal(d2.astype(str), rel.data.astype(str))
    if st is not None:
        pd.testing.assert_frame_equal(st2.astype(str), rel.sa_table.astype(str))


def _position_accuracy(rel, labels_in_input_order: np.ndarray) -> tuple[float, float, float]:
    """How well "row i of the file has the label the input order puts at rank i" predicts
    each published row's hidden label; returns (accuracy, chance, standard error)."""
    truth = labels_in_input_order[rel.source_rows]
    n = truth.size
    published_sorted = np.sort(truth)  # the input's order, restricted to the published rows
    guess = published_sorted[np.arange(n)]
    acc = float((guess == truth).mean())
    vals, cnt = np.unique(truth, return_counts=True)
    p = cnt / n
    chance = float((p ** 2).sum())  # a guess independent of the truth, same marginals
    return acc, chance, float(np.sqrt(chance * (1 - chance) / n))


@pytest.mark.parametrize("name", NAMES)
def test_position_reveals_no_hidden_order(name):
    df = frame(3).sort_values("region", kind="stable").reset_index(drop=True)
    rel = release_of(name, df)
    acc, chance, se = _position_accuracy(rel, df["region"].to_numpy())
    assert acc <= chance + 4 * se, f"{name}: position predicts the hidden region ({acc:.2f} vs chance {chance:.2f})"


@pytest.mark.parametrize("name", [n for n in NAMES if all_algorithms()[n].release_kind == "bucketized"])
def test_position_reveals_no_sa_of_a_bucketized_release(name):
    df = frame(4).sort_values("disease", kind="stable").reset_index(drop=True)
    rel = release_of(name, df)
    acc, chance, se = _position_accuracy(rel, df["disease"].to_numpy())
    assert acc <= chance + 4 * se, f"{name}: position predicts the SA ({acc:.2f} vs chance {chance:.2f})"


def test_the_input_order_would_have_leaked():
    """The accuracy measure detects the leak it guards against: rows in input order."""
    df = frame(3).sort_values("region", kind="stable").reset_index(drop=True)
    rel = release_of("anatomy", df)
    rel.source_rows = np.sort(rel.source_rows)  # as if the file kept the input order
    acc, chance, se = _position_accuracy(rel, df["region"].to_numpy())
    assert acc > chance + 4 * se


def test_sidecar_says_nothing_about_suppressed_rows(tmp_path):
    """7 rows, one 'hiv' row suppressed: no 'hiv' and no per-value count in the sidecar."""
    df = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "2", "3"],
                       "disease": ["flu", "cold", "flu", "cold", "flu", "cold", "hiv"]})
    t = encode(df, Schema.build(qi=["zip"], sa="disease"))
    g = np.array([0, 0, 0, 1, 1, 1, -1])
    rel = build_release(t, Partition(g, 2), model=make_model("l=2"))
    save_release(rel, tmp_path / "r.csv")
    text = sidecar_path(tmp_path / "r.csv").read_text()
    assert "hiv" not in text and "sa_reference" not in text
    meta = json.loads(text)
    assert meta["n_input"] == 7 and meta["n_suppressed"] == 1  # |T| is public (paper 004 K2)
    back = load_release(tmp_path / "r.csv")
    counts, dom = back.sa_counts()
    assert list(dom.values) == ["cold", "flu"] and dom.global_counts.tolist() == [3, 3]


@pytest.mark.parametrize("name", NAMES)
def test_sidecar_holds_no_count_of_suppressed_rows(name, tmp_path):
    rel = release_of(name, frame(6))
    save_release(rel, tmp_path / "r.csv")
    meta = json.loads(sidecar_path(tmp_path / "r.csv").read_text())
    assert "sa_reference" not in meta and "dropped_columns" not in meta and "source" not in meta

    def numbers(o):
        if isinstance(o, dict):
            for v in o.values():
                yield from numbers(v)
        elif isinstance(o, list):
            for v in o:
                yield from numbers(v)
        elif isinstance(o, (int, float)) and not isinstance(o, bool):
            yield o
    # no list of per-value counts adding up to the input
    for lst in [v for v in meta.values() if isinstance(v, list)]:
        ints = [x for x in lst if isinstance(x, int)]
        assert not (len(ints) > 1 and sum(ints) == meta["n_input"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("kind", ["generalized", "bucketized"])
def test_digests_bind_data_and_sidecar(tmp_path, suffix, kind):
    t = encode(frame(7, n=60).drop(columns=["region"]), SCHEMA)
    rel = build_release(t, Partition(np.arange(60) // 6, 10), model=make_model("k=6"), kind=kind)
    path = tmp_path / f"r{suffix}"
    save_release(rel, path)
    load_release(path)
    original = {p: p.read_bytes() for p in tmp_path.iterdir()}

    def reset():
        for p, b in original.items():
            p.write_bytes(b)

    # a flipped byte in the data
    raw = bytearray(original[path])
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="digest"):
        load_release(path)
    reset()
    if suffix == ".csv":  # a dropped row
        lines = original[path].decode().splitlines(keepends=True)
        path.write_text("".join(lines[:-1]))
        with pytest.raises(DataError, match="digest"):
            load_release(path)
        reset()
    # an edited count in the sidecar
    side = sidecar_path(path)
    meta = json.loads(side.read_text())
    meta["n_suppressed"] += 1
    meta["n_input"] += 1
    side.write_text(json.dumps(meta))
    with pytest.raises(DataError, match="edited"):
        load_release(path)
    reset()
    if kind == "bucketized" and suffix == ".csv":  # an edited count in the SA-table
        sp = sa_table_path(path)
        lines = sp.read_text().splitlines()
        gid, val, cnt = lines[1].split(",")
        lines[1] = ",".join([gid, val, str(int(cnt) + 1)])
        sp.write_text("\n".join(lines) + "\n")
        with pytest.raises(DataError, match="digest"):
            load_release(path)
        reset()
    assert load_release(path).n_published == 60
