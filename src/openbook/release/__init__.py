"""Partitions, releases (generalized / bucketized / suppressed rows), verification, file I/O."""

from .io import load_release, save_release
from .partition import Partition
from .release import Release, build_release
from .verify import ModelCheck, check_counts, require

__all__ = ["Partition", "Release", "build_release", "save_release", "load_release", "ModelCheck",
           "check_counts", "require"]
