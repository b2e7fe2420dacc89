"""Figures of the HTML report, as inline SVG strings (matplotlib, Agg backend, no network).

Each function returns an ``<svg …>`` element (the XML prolog stripped) ready to be placed
in the page; text is rendered as paths so the figure looks the same in every browser.
"""

from __future__ import annotations

import io
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["svg_of", "posterior_histogram", "bar_chart"]


def svg_of(fig) -> str:
    """The figure as an inline ``<svg>`` element; closes the figure."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "openbook"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def posterior_histogram(max_posterior: np.ndarray, l: float | None, *, title: str = "") -> str:
    """Histogram of each tuple's largest posterior confidence with the ``1/ℓ`` line."""
    x = np.asarray(max_posterior, dtype=np.float64)
    x = x[~np.isnan(x)]
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    bins = np.linspace(0.0, 1.0, 41)
    if x.size:
        ax.hist(x, bins=list(bins), color="#4C72B0", edgecolor="white")
    if l:
        ax.axvline(1.0 / l, color="#C44E52", linestyle="--", linewidth=2, label=f"1/ℓ = {1.0 / l:.3g}")
        ax.legend(loc="upper right")
    ax.set_xlabel("re-identification probability" if title.startswith("reidentification")
                  else "posterior confidence (largest over the targets)")
    ax.set_ylabel("people")
    ax.set_xlim(0, 1)
    if title:
        ax.set_title(title)
    return svg_of(fig)


def bar_chart(labels: Sequence[str], values: Sequence[float], *, ylabel: str, title: str = "") -> str:
    """A simple bar chart (e.g. ARE per query setting)."""
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    vals = [0.0 if v is None or not np.isfinite(v) else float(v) for v in values]
    ax.bar(range(len(vals)), vals, color="#55A868")
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, rotation=0, fontsize=8)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return svg_of(fig)
