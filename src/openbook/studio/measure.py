"""The raw table's risk, as ``openbook check`` measures it: the table's classes on the QIs
(:class:`openbook.data.frequency.FrequencyTable`), the levels they satisfy
(:func:`openbook.models.levels.compute_levels`) and the identity figures — records unique on
their QIs, prosecutor, journalist and marketer risks, the population-uniqueness estimators
(:func:`openbook.attacks.reidentification.class_size_summary`) — and the histogram of every
record's re-identification risk (:func:`openbook.report.plots.posterior_histogram`, the
report's figure)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..models.levels import LEVEL_WORDS as _CHECK_WORDS, level_words

#: the page's words for :func:`openbook.models.levels.compute_levels` (``openbook check``'s terms
#: for a raw table: its records and distinct QI combinations)
LEVEL_WORDS = {**_CHECK_WORDS, "n_rows": "records", "n_groups": "classes (distinct QI combinations)"}
#: class sizes the page counts records in
SIZE_BANDS = ((1, 1), (2, 2), (3, 4), (5, 9), (10, None))


def _number(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(float(v)) else float(v)
    return v


def level_rows(levels: dict[str, Any]) -> list[dict[str, Any]]:
    """The levels as the page lists them: key, words, value (NaN as ``None``)."""
    rows = []
    for key, value in levels.items():
        rows.append({"key": key, "label": level_words(key, LEVEL_WORDS), "value": _number(value)})
    return rows


def _plain(obj: Any) -> Any:
    """A JSON-able copy (numpy numbers as Python's, NaN as ``None``)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return _number(obj)


def measure(table: Any, *, population_size: float | None = None, sampling_fraction: float | None = None,
            threshold: float | None = None) -> tuple[dict[str, Any], str]:
    """``(figures, histogram SVG)`` of the raw ``table`` (module docstring)."""
    from ..attacks.reidentification import class_size_summary
    from ..data.frequency import FrequencyTable
    from ..models.levels import compute_levels
    from ..report.plots import posterior_histogram

    freq = FrequencyTable.from_table(table)
    levels = compute_levels(freq.sa_counts, freq.sa_domain, c=2.0)
    identity = class_size_summary(freq.weights, population_size=population_size,
                                  sampling_fraction=sampling_fraction, threshold=threshold, classes=freq)
    sizes = np.asarray(freq.weights, dtype=np.int64)
    bands = []
    for lo, hi in SIZE_BANDS:
        inside = (sizes >= lo) & (sizes <= (hi if hi is not None else sizes.max(initial=0)))
        words = f"{lo}" if lo == hi else (f"{lo} or more" if hi is None else f"{lo}–{hi}")
        bands.append({"class_size": words, "records": int(sizes[inside].sum()), "classes": int(inside.sum()),
                      "risk": f"1/{lo}" if lo == hi else (f"≤ 1/{lo}" if hi is None else f"1/{hi} – 1/{lo}")})
    th = identity["threshold"]
    risks = np.repeat(1.0 / np.maximum(sizes, 1), sizes)
    svg = posterior_histogram(risks, 1.0 / th if th else None,
                              title="reidentification risk per record of the raw table")
    out = {"qi": list(freq.qi_names), "sa": freq.sa_name, "levels": level_rows(levels), "identity": _plain(identity),
           "bands": bands}
    return out, svg
