"""Serving the studio: a socket on 127.0.0.1 (the port asked for, or a free one), uvicorn
running the application behind its guard, the address printed, the browser opened when
there is one to open, and a clean stop on Ctrl-C (or SIGTERM): the queued runs are cancelled,
a running run's process is ended, and the session's folder (uploads, hierarchy files) is
removed. Releases stay where they were published, in the output folder."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

#: the studio listens on this address only (never on a network interface)
HOST = "127.0.0.1"


def _has_display() -> bool:
    """Is there a graphical browser to open (not a text browser taking over this terminal)?"""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 - the address is printed; the user opens it
        pass


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free port)."""
    from ..errors import ParameterError

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ParameterError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror or exc}); give another "
                             "port, or none for a free one", parameter="port", value=port) from None
    sock.listen(64)
    sock.set_inheritable(False)
    return sock


def serve(*, data: str | None = None, dataset: str | None = None, port: int = 0, out_dir: Path,
          open_browser: bool = True, max_upload_mb: int = 512) -> int:
    """Run the studio until Ctrl-C (module docstring); 0 when it stopped cleanly."""
    import uvicorn

    from .app import STATIC, Studio, build_app
    from .data import load_builtin, load_file
    from .guard import Guard
    from .session import Session

    missing = [n for n in ("index.html", "studio.js", "studio.css") if not (STATIC / n).is_file()]
    if missing:
        from ..errors import DataError

        raise DataError(f"this installation of openbook lacks the studio's page ({STATIC / missing[0]}); reinstall "
                        "openbook", path=STATIC)
    folder = Path(tempfile.mkdtemp(prefix="openbook-studio-"))
    studio = None
    sock = None
    previous = signal.getsignal(signal.SIGTERM)
    try:
        session = Session(folder, Path(out_dir), max_upload=max_upload_mb << 20)
        if dataset:
            session.load(load_builtin(dataset))
        elif data:
            session.load(load_file(data))
        sock = bind(port)
        port = sock.getsockname()[1]
        studio = Studio(session)
        guard = Guard(build_app(studio), max_upload=max_upload_mb << 20)
        guard.allow(port)
        config = uvicorn.Config(guard, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=3)
        server = uvicorn.Server(config)
        url = f"http://{HOST}:{port}/"
        print(f"openbook studio: {url}", flush=True)
        print(f"  releases are written to {Path(out_dir).resolve()} only; Ctrl-C stops the studio", flush=True)
        if open_browser and _has_display():
            threading.Timer(0.5, _open_browser, args=(url,)).start()

        def stop(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)  # uvicorn stops gracefully, then raises it again: we clean up
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if studio is not None:
            studio.close()
        if sock is not None:
            sock.close()
        shutil.rmtree(folder, ignore_errors=True)
        if studio is not None:
            print("openbook studio: stopped", flush=True)
