"""Generalization hierarchies: taxonomy trees and DAGs over a column's integer codes
(paper 001 §3, Def. 5), numeric interval ladders, ARX-compatible CSV I/O, and the Adult
hierarchies (paper 001 Table 12).

A hierarchy defines the code space of its column: leaf ``i`` is code ``i``
(:attr:`Hierarchy.leaves` is the column's category order, :meth:`Hierarchy.encode` maps
values to codes).
"""

from openbook.hierarchy.adult import (
    ADULT_COLUMNS,
    EDUCATION_BEFORE_SECONDARY,
    PAPER001_HEIGHTS,
    adult_hierarchies,
)
from openbook.hierarchy.arx import arx_rows, parse_arx_text, read_arx_csv, write_arx_csv
from openbook.hierarchy.builders import (
    auto,
    flat,
    from_levels,
    from_mapping,
    interval_ladder,
    ordinal,
)
from openbook.hierarchy.tree import Hierarchy

__all__ = [
    "Hierarchy",
    "flat",
    "interval_ladder",
    "from_mapping",
    "from_levels",
    "ordinal",
    "auto",
    "read_arx_csv",
    "write_arx_csv",
    "parse_arx_text",
    "arx_rows",
    "adult_hierarchies",
    "ADULT_COLUMNS",
    "PAPER001_HEIGHTS",
    "EDUCATION_BEFORE_SECONDARY",
]
