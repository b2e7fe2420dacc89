"""Where runs happen: a worker process that anonymizes, certifies and measures exactly as
``openbook anonymize`` does — one :class:`openbook.run.RunSpec` published by
:func:`openbook.engines.publish` (the anonymizer the run names, the certificate's targets passed
to an algorithm that builds to them, the skew step, then the certificate with the same targets
and adversary parameters) — but with ``enforce=False`` and no output, so a failing candidate is
shown beside the others
(the refusal ``anonymize`` would print is shown with it, and :mod:`.publish` applies it).
Utility is the report's: the class statistics and information loss
(:func:`openbook.utility.metrics.utility_summary`) and the ARE of COUNT-query workloads at the
report's settings (:func:`openbook.report.html.query_error_table`, seeded: the same queries for
every run on a table, so runs compare; 500 a setting, as the demo's reports), so the report
page renders at once.

The worker is one long-lived process (``multiprocessing``'s spawn: a fresh interpreter that
forks nothing), started with the studio, which compiles the numba kernels once on a small
table (:mod:`.warmup`) and then takes runs one at a time (a run uses the cores itself),
keeping the last tables it was sent. The server never runs a parallel kernel itself. The
:class:`Runner` feeds it the queue and records each run's steps — anonymizing, then each
adversary as the certificate starts it (``certify``'s ``on_step``, the hook the command
line's status line uses), then utility. Cancelling a running run ends the worker process at
once (the next run starts a new one); a crash of the worker fails the run it was running,
never the studio.
"""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
import traceback
import warnings
from typing import Any

from .runs import Run

#: COUNT queries per setting of the report's query-error table (the demo's reports use 500)
QUERIES = 500
#: tables the worker keeps (a run on a table it has is sent without it)
KEPT_TABLES = 3


# ---------------------------------------------------------------------------------------------
# in the worker process
# ---------------------------------------------------------------------------------------------
def certify_params(targets: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The adversaries' parameters (as ``anonymize``'s ``certify_params``: only those given)."""
    reid = {"population_size": targets.get("population_size")}
    out: dict[str, dict[str, Any]] = {"reidentification": {k: v for k, v in reid.items() if v is not None}}
    if targets.get("worlds") is not None:
        out["replay"] = {"worlds": int(targets["worlds"])}
    return out


def serve(conn: Any) -> None:
    """The worker's loop: warm up, then for each ``("run", key, table or None, cfg, targets)``
    send ``("step", name)`` messages and ``("done", result)`` or ``("error", kind, message)``;
    ``("stop",)`` ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle: it ends this process
    os.environ["OPENBOOK_PROGRESS"] = "0"
    from ..errors import INTERFACE

    INTERFACE.set("cli")  # messages name the flags, as anonymize's do (the page shows those names)
    from .warmup import warm

    warm()
    conn.send(("ready",))
    tables: collections.OrderedDict[str, Any] = collections.OrderedDict()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "stop":
            return
        _, key, table, cfg, targets = msg
        if table is None and key not in tables:  # cannot happen while the server counts as it does
            conn.send(("error", "internal", "the worker lost the table of this run: run it again"))
            continue
        if table is not None:
            tables[key] = table
            while len(tables) > KEPT_TABLES:
                tables.popitem(last=False)
        conn.send(_run(conn, tables[key], cfg, targets))


def _run(conn: Any, table: Any, cfg: Any, targets: dict[str, Any]) -> tuple[Any, ...]:
    from ..errors import OpenbookError

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = _execute(conn, table, cfg, targets)
        result["warnings"] = list(dict.fromkeys(str(w.message) for w in caught
                                                if not issubclass(w.category, RuntimeWarning)))
        return ("done", result)
    except OpenbookError as exc:
        return ("error", type(exc).__name__, str(exc))
    except Exception as exc:  # noqa: BLE001 - reported to the page, the worker goes on
        return ("error", "internal", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")


def _execute(conn: Any, table: Any, cfg: Any, targets: dict[str, Any]) -> dict[str, Any]:
    from ..engines import publish
    from ..report.html import query_error_table
    from ..run import Certification, RunSpec
    from ..utility.metrics import utility_summary, view_from_release

    conn.send(("step", "anonymizing"))
    algo = dict(cfg.algorithm)
    cert_spec = Certification(max_risk=targets.get("max_risk"), max_reid_risk=targets.get("max_reid_risk"),
                              adversary_params=certify_params(targets), enforce=False)
    spec = RunSpec.for_table(table, cfg.model.get("spec", cfg.model), algo.pop("name", None), algo,
                             skew=targets.get("skew") or "none", certify=cert_spec)

    def step(message: str) -> None:
        if message.startswith("certifying"):
            conn.send(("step", message if message.startswith("certifying:") else "certifying"))

    done = publish(spec, progress=step)
    release, cert = done.release, done.certificate
    conn.send(("step", "measuring utility"))
    view = view_from_release(release, table)
    utility = utility_summary(view, table)
    queries = query_error_table(release, table, n=QUERIES, seed=0, view=view)
    return {"release": release, "certificate": cert, "utility": utility, "queries": queries}


# ---------------------------------------------------------------------------------------------
# in the server
# ---------------------------------------------------------------------------------------------
class Runner:
    """The queue of runs and the worker process (module docstring). ``summarize(run)`` makes a
    finished run's comparison view (in the runner's thread) before the run is marked done."""

    def __init__(self, summarize: Any = None) -> None:
        import multiprocessing

        self.ctx = multiprocessing.get_context("spawn")
        self.summarize = summarize
        self.queue: collections.deque[Run] = collections.deque()
        self.cond = threading.Condition()
        self.current: Run | None = None
        self._proc: Any = None
        self._conn: Any = None
        self._tables: list[str] = []  # the keys of the tables the worker keeps, oldest first
        self._stopped = False
        self.thread = threading.Thread(target=self._loop, name="openbook-studio-runner", daemon=True)
        self.thread.start()

    def submit(self, run: Run) -> None:
        with self.cond:
            self.queue.append(run)
            self.cond.notify()

    def cancel(self, run: Run) -> None:
        """A queued run leaves the queue; a running one ends with the worker process, now
        (whatever the worker is doing: computing, or still reading the run's table)."""
        with self.cond:
            if run in self.queue:
                self.queue.remove(run)
                run.status, run.finished = "cancelled", time.time()
                return
            run.cancel.set()
            if self.current is run:
                self._kill()

    def stop(self) -> None:
        """Cancel everything and end the worker (the server is stopping)."""
        with self.cond:
            self._stopped = True
            for run in list(self.queue):
                run.status, run.finished = "cancelled", time.time()
            self.queue.clear()
            if self.current is not None:
                self.current.cancel.set()
            self._kill()
            self.cond.notify_all()
        self.thread.join(timeout=10)
        self._end_worker()

    def _kill(self) -> None:
        """End the worker process from any thread (the runner's thread then finds it gone and
        cleans up: a send to it or a wait for it returns at once)."""
        proc = self._proc
        if proc is not None and proc.is_alive():
            proc.terminate()

    # -- the runner's thread -------------------------------------------------------------------
    def _loop(self) -> None:
        self._start_worker()
        while True:
            with self.cond:
                while not self.queue and not self._stopped:
                    self.cond.wait()
                if self._stopped:
                    return
                run = self.current = self.queue.popleft()
            try:
                self._execute(run)
            except Exception as exc:  # noqa: BLE001 - the run fails, the runner goes on
                run.status, run.error = "failed", f"internal error: {type(exc).__name__}: {exc}"
                traceback.print_exc()
                self._end_worker()
            finally:
                run.finished = run.finished or time.time()
                run._close_steps()
                if run.status != "done":
                    run.table = None  # only a result needs its table
                with self.cond:
                    self.current = None

    def _start_worker(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        here, there = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=serve, args=(there,), daemon=True, name="openbook-studio-worker")
        proc.start()
        there.close()
        self._proc, self._conn, self._tables = proc, here, []

    def _end_worker(self) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        self._tables = []
        if conn is not None:
            conn.close()
        if proc is not None and proc.is_alive():
            proc.terminate()
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)

    def _execute(self, run: Run) -> None:
        run.status, run.started = "running", time.time()
        run.step("starting")
        self._start_worker()
        conn = self._conn
        fresh = run.table_key not in self._tables
        try:  # a worker still warming up reads the table when it is ready: a cancel ends the wait
            conn.send(("run", run.table_key, run.table if fresh else None, run.cfg, run.targets))
        except (OSError, ValueError):
            pass  # the worker is gone: the loop below says why (cancelled, or died)
        if fresh:
            self._tables = [k for k in self._tables if k != run.table_key][-(KEPT_TABLES - 1):] + [run.table_key]
        while True:
            if run.cancel.is_set():
                self._end_worker()
                run.status, run.error = "cancelled", None
                return
            try:
                msg: Any = conn.recv() if conn.poll(0.2) else None  # a tuple of the worker protocol
            except (EOFError, OSError):
                msg = None if run.cancel.is_set() else ("died",)
                if msg is None:
                    continue
            if msg is None:
                if self._proc is not None and self._proc.is_alive():
                    continue
                msg = ("died",)
            if msg[0] == "ready":
                continue
            if msg[0] == "step":
                run.step(msg[1])
                continue
            if msg[0] == "done":
                run.result = msg[1]
                run.warnings = list(dict.fromkeys([*run.warnings, *msg[1].pop("warnings", [])]))
                if self.summarize is not None:
                    run.summary = self.summarize(run)
                run.status = "done"
                return
            run.status = "failed"
            if msg[0] == "died":
                code = None if self._proc is None else self._proc.exitcode
                self._end_worker()
                run.error = f"the worker process ended unexpectedly (exit code {code}; out of memory?)"
            else:
                run.error = msg[2] if msg[1] != "internal" else f"internal error: {msg[2]}"
                if msg[1] == "internal":
                    self._tables = []
                    self._end_worker()  # a fresh worker for the next run
            return
