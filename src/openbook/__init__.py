"""openbook: publish microdata that stays private when the adversary knows the algorithm."""

__version__ = "0.1.0"

