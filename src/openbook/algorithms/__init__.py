"""Anonymizers: each turns a table + privacy model (+ seed) into a verified Partition.

Names are imported lazily (PEP 562), so ``import openbook.algorithms.base`` — the catalog the
CLI lists — costs no numba or pandas import.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> defining module
_EXPORTS = {
    "Anatomized": "anatomy", "Anatomy": "anatomy", "anatomize_groups": "anatomy",
    "CATALOG": "catalog", "Anonymizer": "base", "algorithm_class": "registry", "all_algorithms": "registry",
    "make_algorithm": "registry",
    "FullDomainGeneralization": "full_domain",
    "GreedyGrouping": "greedy", "RandomizedGreedyGrouping": "greedy", "gg_would_close": "greedy",
    "rgg_close_probability": "greedy",
    "FullDomainSearch": "lattice", "Lattice": "lattice", "node_satisfies": "lattice",
    "Mondrian": "mondrian", "mondrian_cut": "mondrian", "mondrian_partition": "mondrian",
    "mondrian_would_split": "mondrian", "allowable": "mondrian",
    "mondrian_plan": "mondrian_planner", "MondrianSpace": "mondrian_planner", "CandidateCuts": "mondrian_planner",
    "qi_order": "ordering",
    "SymmetricGrouping": "symmetric", "sg_split_point": "symmetric", "sg_would_split": "symmetric",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
