"""The Python API as documented: the doctests of :mod:`openbook.api` and every ``python``
block of the README run as doctests (their shown output is checked), in a fresh temporary
folder, as part of the suite."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path

import pytest

import openbook
import openbook.api

README = Path(__file__).resolve().parents[1] / "README.md"


def test_api_doctests():
    result = doctest.testmod(openbook.api, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert _python_blocks(), "the README shows the Python API"


@pytest.mark.parametrize("i", range(len(_python_blocks())))
def test_readme_python_block_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _python_blocks()[i]
    test = doctest.DocTestParser().get_doctest(code, {"__name__": f"readme_{i}"}, f"README.md python block {i + 1}",
                                               str(README), 0)
    assert test.examples, "a README python block is written as a doctest (>>> lines and their output)"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"README python block {i + 1}: {runner.failures} example(s) differ"


def test_lazy_top_level_names():
    for name in openbook.__all__:
        assert getattr(openbook, name) is not None
    with pytest.raises(AttributeError):
        openbook.no_such_name  # noqa: B018
    assert os.environ.get("OPENBOOK_PROGRESS", "") != "unused"  # the env is not touched by import
