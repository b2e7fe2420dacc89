"""What a release FILE may reveal, for every registered anonymizer: nothing beyond its
published rows. Row order and GIDs are a function of the published content (a shuffled
copy re-canonicalizes to the same file); a hidden order of the input (rows sorted by a
region that is not published, or by the SA of a bucketized release) is not recoverable from
row positions; the sidecar carries no count of suppressed rows (unless the publisher opts in)
and no dropped identifier names; every algorithm honours the default suppression budget;
files are bound to their sidecar by digests."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from openbook.algorithms.registry import all_algorithms, make_algorithm
from openbook.data.schema import Schema
from openbook.data.table import encode
from openbook.errors import DataError, InfeasibleError, OpenbookError
from openbook.models import make_model
from openbook.release import Partition, build_release, load_release, save_release
from openbook.release.io import sa_table_path, sidecar_path
from openbook.release.release import GID, canonical_form
from openbook.release.sidecar import self_digest

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
    """7 rows, one 'hiv' row suppressed: no 'hiv', no per-value count and no input count in
    the sidecar; the publisher who opts in publishes the counts, and they must add up."""
    df = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "2", "3"],
                       "disease": ["flu", "cold", "flu", "cold", "flu", "cold", "hiv"]})
    t = encode(df, Schema.build(qi=["zip"], sa="disease"))
    g = np.array([0, 0, 0, 1, 1, 1, -1])
    rel = build_release(t, Partition(g, 2), model=make_model("l=2"))
    assert rel.meta["n_input"] == 7 and rel.meta["n_suppressed"] == 1  # the publisher knows
    save_release(rel, tmp_path / "r.csv")
    text = sidecar_path(tmp_path / "r.csv").read_text()
    assert "hiv" not in text and "sa_reference" not in text
    meta = json.loads(text)
    assert "n_input" not in meta and "n_suppressed" not in meta and "publish" not in meta
    assert meta["n_published"] == 6
    back = load_release(tmp_path / "r.csv")
    counts, dom = back.sa_counts()
    assert list(dom.values) == ["cold", "flu"] and dom.global_counts.tolist() == [3, 3]
    # opted in: the counts are published, marked as the publisher's choice, and checked on load
    save_release(rel, tmp_path / "o.csv", publish_suppressed_count=True)
    meta = json.loads(sidecar_path(tmp_path / "o.csv").read_text())
    assert (meta["n_input"], meta["n_suppressed"], meta["publish"]) == (7, 1, {"suppressed_count": True})
    assert load_release(tmp_path / "o.csv").meta["n_suppressed"] == 1
    meta["n_suppressed"] = 2
    meta["digest"] = self_digest(meta)
    sidecar_path(tmp_path / "o.csv").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="rows lost"):
        load_release(tmp_path / "o.csv")


def _skewed(seed: int, n: int = 240) -> pd.DataFrame:
    """A table whose SA is too skewed for ℓ=2: the skew step must withhold records."""
    df = frame(seed, n).drop(columns=["region"])
    rng = np.random.default_rng(seed)
    df["disease"] = rng.choice(["flu", "hiv", "cold", "cancer", "none"], n, p=[0.62, 0.12, 0.1, 0.08, 0.08])
    return df


def _walk(o, path=""):
    """Every (path, key, value) of a JSON document, nested dicts and lists included."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield f"{path}.{k}", k, v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield f"{path}[{i}]", None, v
            yield from _walk(v, f"{path}[{i}]")


def numbers(o):
    """Every number of a JSON document with its path (booleans are not numbers)."""
    for path, _, v in _walk(o):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            yield path, v


#: key fragments that name a count of rows not published (``max_suppression``, a parameter, aside)
COUNT_KEYS = ("suppress", "absent", "withheld", "n_input", "n_people", "dropped", "tail_rows", "n_seeds")


@pytest.mark.parametrize("name", NAMES)
def test_sidecar_holds_no_count_of_suppressed_rows(name, tmp_path):
    """Every algorithm after the skew step (R-suppression withholds a randomized number of
    records, paper 004), certified: no key anywhere in the sidecar names a count of
    unpublished rows, and no number in it equals the suppressed count, the withheld count,
    the anonymizer's own suppressed count, the input's row count or the suppression rate."""
    from openbook.algorithms.skewed import Skewed
    from openbook.certificate import certify_release

    t = encode(_skewed(6), SCHEMA)
    model = make_model(MODELS.get(name, "l=2"))
    algo = make_algorithm(name, model=model, seed=5, **EXTRA.get(name, {}))
    try:
        rel = Skewed(algo, skew="r-suppression", seed=3).anonymize(t)
    except OpenbookError as exc:  # an algorithm that cannot publish this table: refused, nothing to check
        pytest.fail(f"{name} refused the skewed table: {exc}")
    certify_release(rel, original=t, enforce=False)
    m = rel.meta
    assert m["n_suppressed"] > 0 and m["skew"]["n_suppressed"] > 0  # the setup withholds rows
    secret = {m["n_input"], m["n_suppressed"], m["skew"]["n_suppressed"]}
    own = m["n_suppressed"] - m["skew"]["n_suppressed"]
    if own:
        secret.add(own)
    secret |= {f["n_absent"] for f in m["certificate"]["adversaries"] if f.get("n_absent")}
    # counts below 10 are indistinguishable from levels, ℓ and the like: the key search covers them
    secret = {v for v in secret if v >= 10}
    assert m["n_input"] in secret and m["skew"]["n_suppressed"] in secret
    rates = {m["n_suppressed"] / m["n_input"], m["skew"]["n_suppressed"] / m["n_input"]}
    save_release(rel, tmp_path / "r.csv")
    side = json.loads(sidecar_path(tmp_path / "r.csv").read_text())
    assert "sa_reference" not in side and "dropped_columns" not in side and "publish" not in side
    for path, key, _ in _walk(side):
        if key is not None and key != "max_suppression":
            assert not any(frag in key for frag in COUNT_KEYS), f"{name}: the sidecar's {path} names unpublished rows"
    for path, v in numbers(side):
        assert v not in secret, f"{name}: {path} = {v} equals a count of unpublished rows {sorted(secret)}"
        assert not any(abs(v - r) < 5e-7 for r in rates), f"{name}: {path} = {v} is the suppression rate"
    back = load_release(tmp_path / "r.csv")  # and the release still loads and verifies
    assert back.n_published == m["n_published"] and "n_input" not in back.meta
    # the same release, the counts opted in: they are there (so the search above can see them)
    save_release(rel, tmp_path / "o.csv", publish_suppressed_count=True)
    opted = json.loads(sidecar_path(tmp_path / "o.csv").read_text())
    assert opted["n_input"] == m["n_input"] and any(v == m["n_suppressed"] for _, v in numbers(opted))


@pytest.mark.parametrize("name", NAMES)
def test_the_default_budget_suppresses_nothing(name):
    """At the default suppression budget (0) every algorithm publishes every row, or refuses
    naming the budget it would need (ART once dropped 13 % of a table, only sensitive people,
    at budget 0). The table is built so that some algorithms must refuse."""
    rng = np.random.default_rng(11)
    n = 120
    df = pd.DataFrame({"age": rng.integers(18, 80, n), "zip": rng.choice(["a", "b", "c"], n),
                       "sex": rng.choice(["F", "M"], n),
                       # nearly half sensitive: eligible, but tight for a grouping around sensitive people
                       "disease": rng.choice(["hiv", "cancer", "flu", "cold"], n, p=[0.25, 0.22, 0.28, 0.25])})
    t = encode(df, SCHEMA)
    extra = {k: v for k, v in EXTRA.get(name, {}).items() if k != "max_suppression"}
    if name == "full-domain":
        extra["levels"] = [0, 0, 0]  # the finest node: its singleton classes fail the model
    algo = make_algorithm(name, model=make_model(MODELS.get(name, "l=2")), seed=5, **extra)
    assert float(getattr(algo, "max_suppression", 0.0)) == 0.0
    try:
        rel = algo.anonymize(t)
    except InfeasibleError as exc:
        assert "max-suppression" in str(exc) or "max_suppression" in str(exc), f"{name}: {exc}"
        REFUSED.add(name)
        return
    assert rel.meta["n_suppressed"] == 0 and rel.n_published == n, f"{name} suppressed at budget 0"


REFUSED: set[str] = set()


def test_some_algorithm_refused_at_budget_0():
    """The budget test exercises the refusal (runs after the per-algorithm cases)."""
    for name in sorted(set(NAMES) - REFUSED):
        test_the_default_budget_suppresses_nothing(name)
    assert REFUSED >= {"full-domain"}, REFUSED


def test_sidecar_names_agree_with_the_catalogs():
    """The release layer's list of algorithm names and skew methods (it may not import the
    algorithms) is the catalog's."""
    from openbook.algorithms.suppression import METHODS
    from openbook.release.sidecar import SKEW_METHODS, algorithm_names

    assert algorithm_names() == set(all_algorithms())
    assert SKEW_METHODS == set(METHODS)


def test_identifier_names_are_published_only_when_opted_in(tmp_path):
    df = frame(8, n=40).drop(columns=["region"])
    df["patient_ssn"] = [f"s{i}" for i in range(40)]
    schema = Schema.build(qi=["age:numeric", "zip", "sex"], sa="disease", identifiers=["patient_ssn"])
    rel = build_release(encode(df, schema), Partition(np.arange(40) // 5, 8), model=make_model("k=5"))
    save_release(rel, tmp_path / "r.csv")
    assert "patient_ssn" not in sidecar_path(tmp_path / "r.csv").read_text()
    assert "patient_ssn" not in (tmp_path / "r.csv").read_text()
    save_release(rel, tmp_path / "o.csv", publish_identifier_names=True)
    meta = json.loads(sidecar_path(tmp_path / "o.csv").read_text())
    assert meta["schema"]["identifiers"] == ["patient_ssn"] and meta["publish"] == {"identifier_names": True}
    assert load_release(tmp_path / "o.csv").meta["schema"]["identifiers"] == ["patient_ssn"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("kind", ["generalized", "bucketized"])
def test_digests_bind_data_and_sidecar(tmp_path, suffix, kind):
    t = encode(frame(7, n=60).drop(columns=["region"]), SCHEMA)
    # a bucketized release's exact QIs carry no k: its groups are checked against ℓ instead
    model = make_model("k=6" if kind == "generalized" else "l=1")
    rel = build_release(t, Partition(np.arange(60) // 6, 10), model=model, kind=kind)
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
    meta["n_published"] += 1
    meta["n_groups"] += 1
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


@pytest.mark.parametrize("name", ["gg", "rgg", "sg"])
@pytest.mark.parametrize("kind", ["bucketized", "generalized"])
def test_a_shuffled_input_publishes_the_same_files(name, kind):
    """Issue 26: GG and RGG broke ties between people with equal QIs by input position, so a
    shuffled copy of the table grouped them differently. With ``ties="random"`` (GG's and
    RGG's default; SG's option) the order of such people is drawn from the seed and the rows'
    content (``ordering.tie_keys``): every shuffled copy publishes the same rows, SA table and
    group count; ``ties="input"`` (the papers'; SG's default) does not, which shows the table
    has ties that matter."""
    rng = np.random.default_rng(7)
    df = frame(11, n=120).drop(columns=["region"]).assign(age=lambda d: d["age"] // 20 * 20)
    model = make_model("l=2")
    kw = {"p": 0.5} if name == "rgg" else {}

    def files(d, ties):
        rel = make_algorithm(name, model=model, seed=3, ties=ties, **kw).anonymize(encode(d, SCHEMA), kind=kind)
        sa = None if rel.sa_table is None else rel.sa_table.to_csv(index=False)
        return rel.data.to_csv(index=False), sa, rel.meta["n_groups"]

    ref = files(df, "random")
    moved = 0
    for _ in range(12):
        d = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
        assert files(d, "random") == ref
        moved += files(d, "input") != files(df, "input")
    assert moved > 0  # by input position, some shuffled copy publishes other files
