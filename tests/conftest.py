"""Shared fixtures. Paths are relative to this file.

UCI Adult is found the way openbook finds it (``$OPENBOOK_DATA``, then ``../shared`` beside
the repository — a convenience for speed only — then the user cache); where it is absent
(a fresh clone), the session obtains it the way a user does, ``openbook datasets fetch
adult``, once, into a temporary cache, and points ``$OPENBOOK_DATA`` at it for every test
and subprocess of the session."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]

# every sidecar the suite writes — in this process, its xdist workers and every CLI subprocess —
# is validated against the published JSON Schema (docs/sidecar.schema.json) before it is written
# (:func:`openbook.release.sidecar.check_schema`; issue 29)
os.environ["OPENBOOK_CHECK_SIDECAR_SCHEMA"] = "1"
SHARED = REPO.parent / "shared"
ADULT_DIR = SHARED / "data" / "adult"


@pytest.fixture(scope="session")
def adult_dir() -> Path:
    """The Adult data: found where ``openbook datasets`` looks (``$OPENBOOK_DATA``,
    ``../shared/data``, the user cache), else fetched once with ``openbook datasets fetch adult``
    into the user cache — where ``openbook datasets`` finds it afterwards (issue 27)."""
    import os
    import subprocess
    import sys

    from openbook.data import adult
    from openbook.errors import DataError

    try:
        found = adult.find_adult()
    except DataError:
        run = "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
        proc = subprocess.run([sys.executable, "-c", run, "datasets", "fetch", "adult"],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"openbook datasets fetch adult failed: {proc.stderr.strip()}"
        found = adult.find_adult()
    os.environ["OPENBOOK_DATA"] = str(found)  # load_dataset("adult") everywhere in the session
    return Path(found)


@pytest.fixture(scope="session")
def adult_frame(adult_dir):
    from openbook.data.adult import load_adult

    return load_adult("full", path=adult_dir)


@pytest.fixture()
def small_frame() -> pd.DataFrame:
    """A 12-row hand-made table with a shuffled, non-default index."""
    df = pd.DataFrame({
        "age": [23, 25, 27, 31, 33, 35, 41, 43, 45, 52, 55, 58],
        "zip": ["130", "130", "131", "131", "140", "140", "141", "141", "150", "150", "151", "151"],
        "sex": ["M", "F", "M", "F", "M", "F", "M", "F", "M", "F", "M", "F"],
        "disease": ["flu", "hiv", "flu", "cancer", "hiv", "flu", "cancer", "flu", "hiv", "flu", "cancer", "hiv"],
        "name": [f"p{i}" for i in range(12)],
    })
    rng = np.random.default_rng(7)
    df.index = rng.permutation(np.arange(100, 112))
    return df
