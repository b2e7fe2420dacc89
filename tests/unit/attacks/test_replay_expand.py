"""``replay.engine.expand``: counts over a unit's SA classes placed in the full domain, by a
gather — the same array as the scatter that defines it."""

from __future__ import annotations

import numpy as np
import pytest

from openbook.attacks.replay.engine import expand


def _scatter(part: np.ndarray, rep: np.ndarray, n_sa: int) -> np.ndarray:
    full = np.zeros(part.shape[:-1] + (n_sa,), dtype=np.int64)
    full[..., rep] = part
    return full


@pytest.mark.parametrize("rep, n_sa", [([0, 1, 2, 3], 4), ([2, 0, 3], 5), ([4], 5), ([], 3), ([1, 3], 4),
                                       ([3, 2, 1, 0], 4)])
@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 4)])
def test_expand_is_the_scatter(rep, n_sa, shape):
    rng = np.random.default_rng(len(rep) * 10 + n_sa)
    rep = np.asarray(rep, dtype=np.int64)
    for dtype in (np.int32, np.int64):
        part = rng.integers(0, 9, shape + (rep.size,)).astype(dtype)
        got = expand(part, rep, n_sa)
        assert got.dtype == np.int64 and got.shape == shape + (n_sa,)
        np.testing.assert_array_equal(got, _scatter(part, rep, n_sa))
        got[...] = -1  # a new array: the caller's counts are never aliased
        assert (part >= 0).all()
