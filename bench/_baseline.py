"""openbook's own earlier code, for before/after ratios measured side by side in one run.

:func:`baseline_src` exports the ``src/`` tree of an earlier commit (``git archive``) into
``bench/.baseline/<commit>/`` once; a benchmark then runs the same measurement in a fresh
process with ``PYTHONPATH`` pointing there (:func:`baseline_env`), beside the current code.
The compiled extensions it needs (numpy, numba, ...) are this environment's. ``BASELINE`` is
the last commit before the speed work of this round; a benchmark may take ``--baseline REV``.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: the code before the lattice, Mondrian, start-up and replay speed work
BASELINE = "4cc71cc"


def baseline_src(rev: str = BASELINE) -> Path:
    """The ``src`` folder of commit ``rev``, exported once under ``bench/.baseline``."""
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                          check=True, capture_output=True, text=True).stdout.strip()
    dest = HERE / ".baseline" / full[:12]
    src = dest / "src"
    if not (src / "openbook" / "__init__.py").exists():
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", full, "src"],
                             check=True, capture_output=True).stdout
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            tf.extractall(dest, filter="data")
    return src


def baseline_env(rev: str = BASELINE) -> dict[str, str]:
    """An environment whose ``import openbook`` is commit ``rev``'s code (its own numba cache)."""
    src = baseline_src(rev)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env["NUMBA_CACHE_DIR"] = str(src.parent / ".numba_cache")
    return env
