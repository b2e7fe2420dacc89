"""Fixtures of the studio's tests: a real ``openbook studio`` (the command, in its own process,
on a free port of 127.0.0.1, with Adult found as the other tests find it), a real headless
Chromium driven by Playwright (the SYSTEM browser: Debian's ``chromium``, which ``.ci/run``
installs; no browser is downloaded), and a folder of screenshots, one per step, that the run
prints at its end (``build/studio-screenshots/``, ignored by git).

Without Chromium the browser tests skip, saying why — unless ``OPENBOOK_REQUIRE_CHROMIUM=1``
(``.ci/run`` sets it), where they fail instead (as ``tests/cli/test_report_chromium.py``).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "build" / "studio-screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)
_written: list[Path] = []


def need_chromium() -> str:
    """The system Chromium, or skip (fail when ``OPENBOOK_REQUIRE_CHROMIUM=1``)."""
    if CHROMIUM is None:
        if os.environ.get("OPENBOOK_REQUIRE_CHROMIUM") == "1":  # .ci/run installs it and sets this
            pytest.fail("chromium is not installed but OPENBOOK_REQUIRE_CHROMIUM=1")
        pytest.skip("no chromium on this machine (apt-get install -y chromium); .ci/run requires it")
    return CHROMIUM


class Studio:
    """A running ``openbook studio`` process and plain HTTP requests to it (headers under the
    test's control, for the refusals a browser would never let a page forge)."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
        code = "import sys; from openbook.cli import main; sys.exit(main(sys.argv[1:]))"
        self.proc = subprocess.Popen([sys.executable, "-c", code, "studio", "--no-browser", *args], cwd=cwd,
                                     env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.errors: list[str] = []
        first = threading.Event()

        def read(stream: Any, into: list[str]) -> None:
            for line in stream:
                into.append(line.rstrip("\n"))
                first.set()

        threading.Thread(target=read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=read, args=(self.proc.stderr, self.errors), daemon=True).start()
        deadline = time.time() + 60
        while not any("Ctrl-C stops the studio" in line for line in self.lines):  # both lines printed
            if self.proc.poll() is not None or time.time() > deadline:
                raise AssertionError(f"openbook studio did not start: {self.lines} {self.errors}")
            first.wait(0.1)
        self.url = next(line.split()[-1] for line in self.lines if line.startswith("openbook studio: http"))
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
                raw: bytes | None = None) -> tuple[int, Any]:
        """``(status, JSON or text)``; by default with the studio's own Host and Origin."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        hs = {"Host": f"127.0.0.1:{self.port}", "Origin": f"http://127.0.0.1:{self.port}"}
        hs.update(headers or {})
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if data is not None and "Content-Type" not in hs:
            hs["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers={k: v for k, v in hs.items() if v is not None})
            res = conn.getresponse()
            text = res.read().decode("utf-8", "replace")
        finally:
            conn.close()
        try:
            return res.status, json.loads(text)
        except ValueError:
            return res.status, text

    def wait_runs(self, ids: list[int], timeout: float = 120) -> dict[int, dict[str, Any]]:
        """The runs ``ids`` once none is queued or running."""
        deadline = time.time() + timeout
        while True:
            status, body = self.request("GET", "/api/runs")
            runs = {r["id"]: r for r in body["runs"] if r["id"] in ids}
            if all(r["status"] not in ("queued", "running") for r in runs.values()):
                return runs
            assert time.time() < deadline, f"runs {ids} still running: {runs}"
            time.sleep(0.3)

    def children(self) -> list[int]:
        """The processes the studio started (its worker), from /proc."""
        out = []
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    stat = (p / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    out.append(int(p.name))
        return out

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30) -> int:
        """Stop it as Ctrl-C does; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
                raise AssertionError(f"openbook studio did not stop on signal {sig}") from None
        time.sleep(0.2)  # the reader threads catch the last lines
        return self.proc.returncode


@pytest.fixture(scope="module")
def studio(adult_dir, tmp_path_factory):
    """A studio on a free port, its output folder in the test's temporary folder; Adult is
    found through ``$OPENBOOK_DATA`` (set by ``adult_dir``). Plain HTTP needs no browser."""
    work = tmp_path_factory.mktemp("studio")
    s = Studio(["--out", str(work / "out")], cwd=work)
    s.work, s.out = work, work / "out"
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser():
    """The system Chromium, headless, driven by Playwright."""
    path = need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True)
        yield b
        b.close()


class Page:
    """A browser page on the studio with what its console said (a CSP violation or a script
    error fails the test that checks :meth:`assert_clean`)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def assert_clean(self) -> None:
        # a refused request (4xx) is logged by Chromium as a failed resource: expected in these tests
        bad = [m for m in self.console if "Failed to load resource" not in m]
        assert not bad, bad


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.set_default_timeout(30_000)
    p = Page(context.new_page())
    yield p
    context.close()


@pytest.fixture(scope="session")
def shots():
    """``snap(page, name)``: a full-page screenshot into ``build/studio-screenshots/``."""
    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)

    def snap(page: Any, name: str) -> Path:
        path = SHOTS / f"{len(_written) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        _written.append(path)
        return path

    return snap


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _written:
        terminalreporter.write_line(f"openbook studio: {len(_written)} screenshots of the browser tests in {SHOTS}")
