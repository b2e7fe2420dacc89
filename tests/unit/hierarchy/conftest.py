"""Shared fixtures of the hierarchy tests: hand-built taxonomies and the shared Adult files
(located relative to this file: ``<repo>/../shared``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.hierarchy import Hierarchy, from_mapping

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
ARX_DIR = SHARED / "data" / "adult" / "arx-hierarchies"
ADULT_DIR = SHARED / "data" / "adult"

# Paper 001 Fig. 1, "Generalization taxonomy of Education in the Adult dataset". The figure is
# garbled in the text file; its text fixes: ground values include 1st-4th, undergrad,
# vocational, academic, postgrad; "elementary" = {1st-4th, 5th-6th, 7th-8th} (§3); secondary
# starts at 9th-10th (§7); coverage["university"] = 2 (undergrad, postgrad); base = 9. The
# internal structure between is reconstructed from that (junior/senior secondary, college).
FIG1_LEAVES = [
    "1st-4th", "5th-6th", "7th-8th",
    "9th-10th", "11th-12th",
    "academic", "vocational", "undergrad", "postgrad",
]  # fmt: skip
FIG1_MAPPING = {
    "1st-4th": "elementary",
    "5th-6th": "elementary",
    "7th-8th": "elementary",
    "9th-10th": "junior sec.",
    "11th-12th": "senior sec.",
    "junior sec.": "secondary",
    "senior sec.": "secondary",
    "academic": "college",
    "vocational": "college",
    "undergrad": "university",
    "postgrad": "university",
    "college": "post-secondary",
    "university": "post-secondary",
    "elementary": "education",
    "secondary": "education",
    "post-secondary": "education",
}


@pytest.fixture
def fig1() -> Hierarchy:
    return from_mapping(FIG1_MAPPING, "education", leaves=FIG1_LEAVES)


@pytest.fixture
def disease_dag() -> Hierarchy:
    """Paper 001 §3 footnote 3: nasal and lung cancer under both "cancer" and "respiratory
    disease" (a DAG with two-parent values)."""
    return from_mapping(
        {
            "nasal cancer": ["cancer", "respiratory disease"],
            "lung cancer": ["cancer", "respiratory disease"],
            "stomach cancer": "cancer",
            "flu": "respiratory disease",
            "cancer": "disease",
            "respiratory disease": "disease",
        },
        "disease",
    )


#: the ARX Adult hierarchies openbook ships (copies of ARX's files)
PACKAGED_ARX = Path(__file__).resolve().parents[3] / "src" / "openbook" / "data" / "hierarchies" / "arx"


@pytest.fixture
def arx_dir() -> Path:
    """ARX's Adult hierarchies: the shared copy beside the repository when present, else the
    copies openbook ships (a fresh clone)."""
    return ARX_DIR if ARX_DIR.is_dir() else PACKAGED_ARX


@pytest.fixture
def shared_arx_dir() -> Path:
    if not ARX_DIR.is_dir():
        pytest.skip(f"no ARX files beside the repository ({ARX_DIR}) to compare the packaged copies with")
    return ARX_DIR


@pytest.fixture
def shared_adult_dir(adult_dir) -> Path:
    return adult_dir
