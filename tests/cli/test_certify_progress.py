"""The certificate step of ``anonymize`` draws, on a terminal, one bar over the adversaries
(with an ETA) and each long adversary's own bar nested below it on the same console; ``--quiet``
draws nothing. Run in a real pseudo-terminal, as a publisher would see it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

RUN = "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))"


def _stderr_on_a_tty(argv: list[str]) -> tuple[int, str]:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120"}
    env.pop("OPENBOOK_PROGRESS", None)
    proc = subprocess.Popen([sys.executable, "-c", RUN, *argv], stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait()
    os.close(master)
    return proc.returncode, out.decode(errors="replace")


def test_the_certificate_shows_a_bar_per_adversary_with_an_eta(tmp_path, small_frame):
    small_frame.to_csv(tmp_path / "p.csv", index=False)
    base = ["anonymize", str(tmp_path / "p.csv"), "--qi", "age:numeric,zip,sex", "--sa", "disease",
            "--identifiers", "name", "-m", "l=2", "--algorithm", "gg"]
    code, shown = _stderr_on_a_tty([*base, "-o", str(tmp_path / "a.csv")])
    assert code in (0, 3), shown
    assert "certificate: adversaries" in shown and "ETA" in shown
    assert "replay adversary: units" in shown  # the adversary's own bar, nested on the same console
    code, quiet = _stderr_on_a_tty([*base, "-o", str(tmp_path / "b.csv"), "--quiet"])
    assert code in (0, 3) and "certificate: adversaries" not in quiet and "ETA" not in quiet
