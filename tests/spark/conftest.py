"""The Spark engine's tests: one SparkSession on ``local[2]`` for the whole session, small data.

Without PySpark or Java the tests skip, saying why; with ``OPENBOOK_REQUIRE_SPARK=1`` (``.ci/run``
installs both and sets it) a missing Spark fails them instead."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest


def pytest_configure(config):
    # the engine passes Arrow batches only; PySpark's pandas-version notice does not apply
    config.addinivalue_line("filterwarnings", "ignore:PySpark does not yet fully support pandas:FutureWarning")


def _require_or_skip(why: str) -> None:
    if os.environ.get("OPENBOOK_REQUIRE_SPARK") == "1":
        pytest.fail(f"the Spark engine cannot run here ({why}) but OPENBOOK_REQUIRE_SPARK=1")
    pytest.skip(f"Spark engine unavailable: {why} (pip install 'openbook[spark]'; "
                "apt-get install -y openjdk-17-jre-headless); .ci/run requires these tests")


@pytest.fixture(scope="session")
def spark():
    from openbook.spark.session import missing, spark_session

    why = missing()
    if why:
        _require_or_skip(why)
    s = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
                                   "spark.driver.memory": "1g"}, app="openbook-tests")
    yield s
    s.stop()


def random_frame(seed: int, n: int, *, d: int = 3, n_sa: int = 4, card: int = 6) -> pd.DataFrame:
    """A random table: ``d`` QIs (numeric with gaps and text alternately), an SA of ``n_sa``
    values with skew, ``n`` rows."""
    rng = np.random.default_rng(seed)
    cols: dict[str, object] = {}
    for j in range(d):
        c = int(rng.integers(1, card + 1))
        v = rng.integers(0, c, n)
        cols[f"q{j}"] = (v * 3 + 17) if j % 2 == 0 else np.array([f"v{x:02d}" for x in v], dtype=object)
    p = rng.dirichlet(np.ones(n_sa))
    cols["sa"] = np.array([f"s{x}" for x in rng.choice(n_sa, n, p=p)], dtype=object)
    return pd.DataFrame(cols)


def frame_schema(frame: pd.DataFrame):
    from openbook.data.schema import Schema

    qi = [f"{c}:numeric" if frame[c].dtype.kind in "iuf" else f"{c}:categorical" for c in frame.columns if c != "sa"]
    return Schema.build(qi=qi, sa="sa")
