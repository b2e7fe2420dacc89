"""Anonymizers: each turns a table + privacy model (+ seed) into a verified Partition."""

from .base import ALGORITHMS, Anonymizer, make_algorithm, register
from .full_domain import FullDomainGeneralization

__all__ = ["ALGORITHMS", "Anonymizer", "FullDomainGeneralization", "make_algorithm", "register"]
