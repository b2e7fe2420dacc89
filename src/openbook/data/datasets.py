"""Built-in datasets with ready schemas: UCI Adult (as the papers use it) and the
deterministic synthetic census generator. ``default_dataset()`` is what ``openbook demo``
runs on: Adult when its files are found, else a synthetic table (no download needed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..errors import DataError, ParameterError
from .schema import Schema
from .table import EncodedTable, encode

if TYPE_CHECKING:
    import pandas as pd

#: The papers' Adult setup (paper 000 §5, issue text): 7 QIs, SA occupation.
ADULT_QI = ["age:numeric", "workclass", "education", "marital-status", "race", "sex", "native-country"]
ADULT_SENSITIVE = {
    # paper 000 §5: binary ℓ-diversity with sensitive occupations
    "tech-craft": ["Tech-support", "Craft-repair"],
    "tech-support": ["Tech-support"],
    "craft-repair": ["Craft-repair"],
}
#: papers 001 / 003: education before secondary (3.46 % of Adult)
EDUCATION_BEFORE_SECONDARY = ["Preschool", "1st-4th", "5th-6th", "7th-8th"]


@dataclass
class Dataset:
    """A built-in table: its rows (``data``: a pandas DataFrame or an Arrow table), schema,
    hierarchies. ``frame`` is the rows as a DataFrame (made on first use from Arrow rows)."""

    name: str
    data: Any
    schema: Schema
    hierarchies: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    @property
    def frame(self) -> pd.DataFrame:
        if hasattr(self.data, "to_pandas") and not hasattr(self.data, "iloc"):
            self.data = self.data.to_pandas()
        return self.data

    @property
    def column_names(self) -> list[str]:
        from .loaders import column_names

        return column_names(self.data)

    def encode(self) -> EncodedTable:
        return encode(self.data, self.schema, self.hierarchies, source=self.name)


def _adult(variant: str, path: Any = None, **_: Any) -> Dataset:
    from ..hierarchy import adult_hierarchies
    from .adult import load_adult_arrow

    df = load_adult_arrow(variant, path=path)
    schema = Schema.build(qi=ADULT_QI, sa="occupation", sensitive_sets=ADULT_SENSITIVE)
    hier = adult_hierarchies("paper001")
    hier = {k: v for k, v in hier.items() if k in schema.qi_names}
    rows = "45,222" if variant == "full" else "30,162"
    return Dataset(f"adult{'' if variant == 'full' else '-train'}", df, schema, hier,
                   f"UCI Adult ({rows} rows without '?'), QI {', '.join(c.split(':')[0] for c in ADULT_QI)}; SA occupation")


def _synthetic(n_rows: int = 20_000, seed: int = 0, **_: Any) -> Dataset:
    from .synthetic import synthetic_census, synthetic_schema

    df = synthetic_census(n_rows, seed=seed)
    spec = synthetic_schema()
    sa = spec.pop("sa")
    qi = [f"{name}:{kind}" for name, kind in spec.items() if name != sa]
    # its occupations are Adult's: the same sensitive sets apply (paper 000 §5)
    values = set(df[sa].astype(str))
    sets = {k: v for k, v in ADULT_SENSITIVE.items() if set(v) <= values}
    schema = Schema.build(qi=qi, sa=sa, sensitive_sets=sets)
    return Dataset("synthetic", df, schema, {}, f"synthetic census-like table ({n_rows} rows, seed {seed})")


DATASETS: dict[str, Callable[..., Dataset]] = {
    "adult": lambda **kw: _adult("full", **kw),
    "adult-train": lambda **kw: _adult("train", **kw),
    "synthetic": _synthetic,
}


def load_dataset(name: str, **kwargs: Any) -> Dataset:
    try:
        factory = DATASETS[name]
    except KeyError:
        raise ParameterError(f"unknown dataset {name!r} (known: {', '.join(DATASETS)})",
                             parameter="dataset", value=name) from None
    return factory(**kwargs)


def default_dataset() -> Dataset:
    """Adult when found (no download), else the synthetic table."""
    try:
        return load_dataset("adult")
    except DataError:
        return load_dataset("synthetic")
