from openbook import progress


def test_track_passes_items_through_off_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "enabled", lambda: False)
    assert list(progress.track(range(5), "x")) == [0, 1, 2, 3, 4]
    with progress.status("working"):
        pass


def test_track_draws_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "enabled", lambda: True)
    assert list(progress.track(iter(range(3)), "x", total=3)) == [0, 1, 2]
    with progress.status("working"):
        pass


def test_silenced_blocks_nest_and_restore(monkeypatch):
    """An algorithm re-run thousands of times under an adversary's bar draws no bar of its own;
    leaving the (nested) blocks, and leaving one by an exception, restores the bars."""
    import pytest

    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("OPENBOOK_PROGRESS", raising=False)
    assert progress.enabled()
    with progress.silenced():
        with progress.silenced():
            assert not progress.enabled()
        assert not progress.enabled()
    assert progress.enabled()
    with pytest.raises(RuntimeError), progress.silenced():
        raise RuntimeError("a refused re-run")
    assert progress.enabled()


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("OPENBOOK_PROGRESS", "0")
    assert progress.enabled() is False


def test_cli_draws_progress_on_a_terminal_and_not_with_quiet(tmp_path, small_frame):
    """On a real terminal (a pty) a long step draws a bar with an ETA; --quiet draws nothing."""
    import os
    import pty
    import subprocess
    import sys

    small_frame.to_csv(tmp_path / "p.csv", index=False)
    run = "from openbook.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
    base = ["anonymize", str(tmp_path / "p.csv"), "--qi", "age:numeric,zip,sex", "--sa", "disease",
            "--identifiers", "name", "-m", "l=2", "--algorithm", "gg", "--no-certify"]
    assert subprocess.run([sys.executable, "-c", run, *base, "-o", str(tmp_path / "r.csv")],
                          capture_output=True).returncode == 0
    audit = ["audit", str(tmp_path / "r.csv"), "--adversary", "replay", "--original", str(tmp_path / "p.csv")]

    def stderr_on_a_tty(*extra):
        master, slave = pty.openpty()
        env = {**os.environ, "COLUMNS": "120"}
        env.pop("OPENBOOK_PROGRESS", None)
        proc = subprocess.Popen([sys.executable, "-c", run, *audit, *extra], stdout=subprocess.DEVNULL,
                                stderr=slave, env=env)
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
        assert proc.returncode == 0, out.decode(errors="replace")
        return out.decode(errors="replace")

    shown = stderr_on_a_tty()
    assert "replay adversary" in shown and "ETA" in shown
    assert "replay adversary" not in stderr_on_a_tty("--quiet")
