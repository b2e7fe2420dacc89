"""Every file a docstring or message of the package points to exists in the repository
(issue 29: references to a DESIGN.md that is docs/design.md, to a test file that is not)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "openbook"
#: a path into the repository as the package's text writes it (split across a line break too)
PATH = re.compile(r"\b((?:docs|tests|bench)/[\w./-]*?\.(?:md|py|json))\b")


def _references() -> list[tuple[Path, str]]:
    out = []
    for f in SRC.rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        joined = re.sub(r"/\s*\n\s*", "/", text)  # ``tests/regression/\n    test_x.py``
        out += [(f, m.group(1)) for m in PATH.finditer(joined)]
    return out


def test_there_are_references_to_check():
    assert len(_references()) > 50


def test_every_referenced_file_exists():
    missing = sorted({f"{f.relative_to(ROOT)}: {ref}" for f, ref in _references() if not (ROOT / ref).exists()})
    assert not missing, "\n".join(missing)


def test_no_reference_to_a_file_outside_the_repository():
    """``DESIGN.md`` lives in ../shared, which a user's clone does not have."""
    bad = [str(f.relative_to(ROOT)) for f in SRC.rglob("*.py")
           if re.search(r"(?<![/\w])DESIGN\.md", f.read_text(encoding="utf-8"))]
    assert not bad, bad
