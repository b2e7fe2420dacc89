"""Shared fixtures. Paths are relative to this file; the Adult data is looked up in
../shared/data/adult (beside the repository), and tests needing it skip with a reason when
it is absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ADULT_DIR = SHARED / "data" / "adult"


@pytest.fixture(scope="session")
def adult_dir() -> Path:
    if not (ADULT_DIR / "adult.data").is_file():
        pytest.skip("UCI Adult not present in ../shared/data/adult")
    return ADULT_DIR


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
