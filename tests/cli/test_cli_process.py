"""The ``openbook`` command's process: its allocators give memory back (``configure_process``)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points

from openbook.cli import configure_process


def test_the_console_script_runs_the_configured_command():
    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "openbook"]
    assert ep.value == "openbook.cli:command"


def test_arrow_uses_the_system_allocator_unless_the_user_chose_one(monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    configure_process()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    configure_process()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    code = ("from openbook.cli import configure_process; configure_process(); import pyarrow as pa; "
            "print(pa.default_memory_pool().backend_name)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "system"
