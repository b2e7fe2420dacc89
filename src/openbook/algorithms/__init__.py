"""Anonymizers: each turns a table + privacy model (+ seed) into a verified Partition."""

from .anatomy import Anatomized, Anatomy, anatomize_groups
from .base import ALGORITHMS, Anonymizer, make_algorithm, register
from .full_domain import FullDomainGeneralization
from .greedy import GreedyGrouping, RandomizedGreedyGrouping, gg_would_close, rgg_close_probability
from .lattice import FullDomainSearch, Lattice, node_satisfies
from .mondrian import Mondrian, mondrian_cut, mondrian_partition, mondrian_would_split
from .ordering import qi_order
from .symmetric import SymmetricGrouping, sg_split_point, sg_would_split

__all__ = [
    "ALGORITHMS",
    "Anatomized",
    "Anatomy",
    "Anonymizer",
    "FullDomainGeneralization",
    "FullDomainSearch",
    "GreedyGrouping",
    "Lattice",
    "Mondrian",
    "RandomizedGreedyGrouping",
    "SymmetricGrouping",
    "anatomize_groups",
    "gg_would_close",
    "make_algorithm",
    "mondrian_cut",
    "mondrian_partition",
    "mondrian_would_split",
    "node_satisfies",
    "qi_order",
    "register",
    "rgg_close_probability",
    "sg_split_point",
    "sg_would_split",
]
