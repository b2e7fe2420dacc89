"""Peers (pyCANON, anonypy, anjana) live in virtual environments of their own under
bench/.peers/<peer>/ (their pins clash with ours and with each other: anjana 1.2.3 pins
another pyCANON); benchmarks run them there by subprocess and time them in-process there,
so both sides are measured in one run on one machine. Also what the benchmarks share about
the machine: its description and a process's memory from ``/proc``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = {"pycanon": "pycanon==1.3.6", "anonypy": "anonypy==0.2.1 pandas==2.3.3", "anjana": "anjana==1.2.3"}


def peer_python(peer: str) -> Path:
    venv = HERE / ".peers" / peer
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(py), "-c", f"import {peer}"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEERS[peer].split()], check=True)
    return py


def run_peer(peer: str, code: str, *args: str) -> dict:
    """Run ``code`` with the interpreter of ``peer`` (pycanon, anonypy or anjana); the code
    must print one JSON object as its last line."""
    proc = subprocess.run([str(peer_python(peer)), "-c", code, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"peer run failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine() -> str:
    import os
    import platform

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def proc_status(field: str, pid: int | str = "self") -> int:
    """A memory field of ``/proc/PID/status`` (``VmRSS``, ``VmHWM``, ...) in bytes; 0 when the
    field is absent. Raises ``OSError`` when the process is gone."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    """Reset this process's peak resident set (``VmHWM``) to its current one; ``False`` where
    the kernel does not allow it (the caller then falls back to ``ru_maxrss``)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False
