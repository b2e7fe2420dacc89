"""The studio's HTTP interface: the page (``/``, ``/static/…``) and its JSON API (``/api/…``),
as a Starlette application behind :class:`.guard.Guard`.

Every handler is a thin call into :mod:`.session`, :mod:`.measure`, :mod:`.worker` or
:mod:`.publish`. Bad input gets one message — ``{"error": ..., "kind": ...}`` with status 400,
409 for a release ``anonymize`` would refuse (its exit code 3), 404 for an unknown run — and
the server goes on; an unexpected failure is a 500 with the error's one line (the traceback
goes to the terminal).

=======================================  ============================================================
route                                    what it does
=======================================  ============================================================
``GET /api/state``                       everything the page shows
``POST /api/load``                       ``{"dataset": NAME}`` or ``{"path": FILE}``
``POST /api/upload?name=FILE``           the body is the file (CSV or Parquet)
``POST /api/columns``                    roles, kinds, ``missing``, ``sensitive`` sets
``POST /api/hierarchy``                  ``{"column", "method", "param"}`` or ``{"column", "mode"}``
``GET /api/hierarchy/COLUMN``            the ARX CSV built for COLUMN (a download)
``POST /api/measure``                    the raw table's risk and levels
``GET /api/measure.svg``                 its histogram
``POST /api/runs``                       queue models × algorithms
``GET /api/runs``                        the runs (the page polls it while one runs)
``POST /api/runs/ID/cancel``             cancel a queued or running run
``GET /api/runs/ID/report``              the run's report page (a preview)
``POST /api/publish``                    write a run's release and report
``GET /api/published/N/report``          a published report
=======================================  ============================================================
"""

from __future__ import annotations

import functools
import itertools
import shlex
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from . import compare, measure, publish, runs, worker
from .commands import command_lines
from .data import load_builtin, load_file, load_upload, upload_name
from .session import Session

STATIC = Path(__file__).with_name("static")
#: the files ``/static/`` serves, and their types
STATIC_FILES = {"studio.js": "text/javascript", "studio.css": "text/css"}
#: a report page: its own styles and inline SVG, no script, nothing fetched
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"


def _cli_words(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` with messages naming the command line's flags (``--force``, ``--missing``):
    the page labels its fields with them."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        from ..errors import INTERFACE

        token = INTERFACE.set("cli")
        try:
            return fn(*args, **kw)
        finally:
            INTERFACE.reset(token)
    return wrapper


class Studio:
    """The application's state: the session, the run queue, the catalog of algorithms and
    models (computed once)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.runner = worker.Runner(summarize=compare.summarize)
        self.ids = itertools.count(1)
        self.uploads = itertools.count(1)
        self._catalog: dict[str, Any] | None = None

    def catalog(self) -> dict[str, Any]:
        if self._catalog is None:
            from ..algorithms.registry import algorithm_class
            from ..catalog import CATALOG
            from ..data.datasets import DATASETS
            from ..hierarchy import ADULT_COLUMNS
            from ..models.registry import SPEC_HELP
            from ..pipeline import DEFAULT_ALGORITHM

            default = DEFAULT_ALGORITHM[0]
            names = [default, *sorted(n for n in CATALOG if n != default)]
            self._catalog = {
                "algorithms": [{"name": n, "kind": CATALOG[n].kind, "line": CATALOG[n].line,
                                "params": sorted(k for k in algorithm_class(n).constraints() if k != "seed")}
                               for n in names],
                "default_algorithm": default, "default_why": DEFAULT_ALGORITHM[1], "models_help": SPEC_HELP,
                "datasets": list(DATASETS), "skew": list(runs.SKEW), "adult_columns": list(ADULT_COLUMNS)}
        return self._catalog

    def state(self) -> dict[str, Any]:
        return self.session.state(self.catalog())

    def run(self, run_id: Any) -> Any:
        for r in self.session.runs:
            if str(r.id) == str(run_id):
                return r
        raise LookupError(f"no run #{run_id}")

    def data_arg(self) -> str:
        data = self.session.require_data()
        if data.origin == "dataset":
            return f"--dataset {data.name}"
        return shlex.quote(data.name)

    def close(self) -> None:
        self.runner.stop()


# ---------------------------------------------------------------------------------------------
# handlers
# ---------------------------------------------------------------------------------------------
async def _json(request: Request) -> dict[str, Any]:
    from ..errors import ParameterError

    try:
        body = await request.json()
    except ValueError:
        raise ParameterError("the request's body is not JSON", parameter="body") from None
    if not isinstance(body, dict):
        raise ParameterError("the request's body is not a JSON object", parameter="body")
    return body


def build_app(studio: Studio) -> Starlette:
    """The Starlette application of ``studio`` (module docstring)."""
    s = studio.session

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return JSONResponse({"error": f"no such file {name!r}"}, status_code=404)
        return FileResponse(STATIC / name, media_type=STATIC_FILES[name])

    async def state(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(studio.state))

    @_cli_words
    def _load(body: dict[str, Any]) -> dict[str, Any]:
        from ..errors import ParameterError

        if body.get("dataset"):
            loaded = load_builtin(str(body["dataset"]))
        elif body.get("path"):
            loaded = load_file(str(body["path"]))
        else:
            raise ParameterError("choose a built-in dataset or give a file path", parameter="data")
        s.load(loaded)
        return studio.state()

    async def load(request: Request) -> Response:
        body = await _json(request)
        return JSONResponse(await run_in_threadpool(_load, body))

    async def upload(request: Request) -> Response:
        name = upload_name(request.query_params.get("name", ""))
        folder = s.folder / "uploads" / str(next(studio.uploads))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        total = 0
        try:
            with open(path, "wb") as f:
                async for chunk in request.stream():
                    total += len(chunk)
                    if total > s.max_upload:
                        break
                    f.write(chunk)
        except ClientDisconnect:
            total = max(total, s.max_upload + 1) if total else 0
        if total > s.max_upload:
            path.unlink(missing_ok=True)
            return JSONResponse({"error": f"refused: the upload is above the studio's limit of "
                                          f"{s.max_upload / (1 << 20):.0f} MB (start it with --max-upload-mb N for "
                                          "more, or give the file's path instead)", "kind": "refused"},
                                status_code=413)
        if total == 0:
            from ..errors import DataError

            raise DataError(f"upload {name}: the file is empty", path=name)
        loaded = await run_in_threadpool(_cli_words(load_upload), path, name)
        s.load(loaded)
        return JSONResponse(await run_in_threadpool(studio.state))

    async def columns(request: Request) -> Response:
        body = await _json(request)
        await run_in_threadpool(_cli_words(s.set_columns), body)
        return JSONResponse(await run_in_threadpool(studio.state))

    @_cli_words
    def _hierarchy(body: dict[str, Any]) -> None:
        column = str(body.get("column", ""))
        if body.get("mode"):
            s.reset_hierarchy(column, str(body["mode"]))
        else:
            s.build_hierarchy(column, str(body.get("method", "")), str(body.get("param", "") or ""))

    async def hierarchy(request: Request) -> Response:
        body = await _json(request)
        await run_in_threadpool(_hierarchy, body)
        return JSONResponse(await run_in_threadpool(studio.state))

    async def hierarchy_file(request: Request) -> Response:
        column = request.path_params["column"]
        path = s.hierarchy_file(column)
        if path is None or not path.is_file():
            return JSONResponse({"error": f"no hierarchy was built for column {column!r}"}, status_code=404)
        return FileResponse(path, media_type="text/csv", filename=path.name)

    @_cli_words
    def _measure(body: dict[str, Any]) -> dict[str, Any]:
        with s.lock:
            targets = {"population_size": runs.number(body, "population_size", "--population-size", float, 1.0),
                       "sampling_fraction": runs.number(body, "sampling_fraction", "--sampling-fraction", float,
                                                          0.0, 1.0, lo_open=True),
                       "threshold": runs.number(body, "threshold", "--reid-threshold", float, 0.0, 1.0,
                                                  lo_open=True)}
            table, said = s.table()
            figures, svg = measure.measure(table, **targets)
            figures["warnings"] = said
            figures["version"] = s.version
            s.measure, s.histogram = figures, svg
            return figures

    async def measure_route(request: Request) -> Response:
        body = await _json(request)
        return JSONResponse(await run_in_threadpool(_measure, body))

    async def histogram(request: Request) -> Response:
        if s.histogram is None:
            return JSONResponse({"error": "measure the table first"}, status_code=404)
        return Response(s.histogram, media_type="image/svg+xml")

    @_cli_words
    def _submit(body: dict[str, Any]) -> dict[str, Any]:
        with s.lock:
            data = s.require_data()
            cfg = s.config()
            table, said = s.table(cfg)
            planned = runs.plan(body, cfg)
            made = []
            for model, algo, params, targets, c in planned:
                run = runs.Run(next(studio.ids), model, algo, params, targets, c, table, data.name,
                               s.choices.to_dict(), s.inputs(c), table_key=s.key(cfg), warnings=list(said))
                run.commands = command_lines(run, data_arg=studio.data_arg(),
                                             output=str(s.out_dir / "release.csv"))
                s.runs.append(run)
                made.append(run)
        for run in made:
            studio.runner.submit(run)
        return {"runs": [r.brief() for r in made]}

    async def runs_create(request: Request) -> Response:
        body = await _json(request)
        return JSONResponse(await run_in_threadpool(_submit, body))

    async def runs_list(request: Request) -> Response:
        return JSONResponse({"runs": [r.brief() for r in s.runs], "version": s.version})

    async def run_cancel(request: Request) -> Response:
        run = studio.run(request.path_params["id"])
        studio.runner.cancel(run)
        return JSONResponse({"run": run.brief()})

    @_cli_words
    def _report(run: Any) -> str:
        if run.report is None:
            if run.status != "done":
                raise LookupError(f"run #{run.id} has no release ({run.status})")
            run.report = publish.report_page(run, release_name=f"run #{run.id} (not published)",
                                             provenance={"made with": "openbook studio (a preview: nothing written)",
                                                         "equivalent commands": " ; ".join(run.commands)})
        return run.report

    async def run_report(request: Request) -> Response:
        run = studio.run(request.path_params["id"])
        page = await run_in_threadpool(_report, run)
        return Response(page, media_type="text/html", headers={"content-security-policy": REPORT_CSP})

    @_cli_words
    def _publish(body: dict[str, Any]) -> dict[str, Any]:
        with s.lock:
            run = studio.run(body.get("run"))
            name = body.get("name")
            commands = [c if not c.startswith("openbook anonymize") else c.replace(
                shlex.quote(str(s.out_dir / "release.csv")), shlex.quote(str(publish.target(s.out_dir, name))))
                for c in run.commands]
            out = publish.publish(run, s.out_dir, name, force=bool(body.get("force")),
                                  publish_suppressed_count=bool(body.get("publish_suppressed_count")),
                                  publish_identifier_names=bool(body.get("publish_identifier_names")),
                                  commands=commands)
            out["index"] = len(s.published)
            s.published.append(out)
            return out

    async def publish_route(request: Request) -> Response:
        body = await _json(request)
        return JSONResponse(await run_in_threadpool(_publish, body))

    async def published_report(request: Request) -> Response:
        i = request.path_params["n"]
        if not str(i).isdigit() or int(i) >= len(s.published):
            return JSONResponse({"error": f"no published release #{i}"}, status_code=404)
        return FileResponse(s.published[int(i)]["report"], media_type="text/html",
                            headers={"content-security-policy": REPORT_CSP})

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [
        Route("/", index), Route("/static/{name}", static), Route("/favicon.ico", favicon),
        Route("/api/state", state), Route("/api/load", load, methods=["POST"]),
        Route("/api/upload", upload, methods=["POST"]), Route("/api/columns", columns, methods=["POST"]),
        Route("/api/hierarchy", hierarchy, methods=["POST"]), Route("/api/hierarchy/{column}", hierarchy_file),
        Route("/api/measure", measure_route, methods=["POST"]), Route("/api/measure.svg", histogram),
        Route("/api/runs", runs_create, methods=["POST"]), Route("/api/runs", runs_list),
        Route("/api/runs/{id}/cancel", run_cancel, methods=["POST"]), Route("/api/runs/{id}/report", run_report),
        Route("/api/publish", publish_route, methods=["POST"]),
        Route("/api/published/{n}/report", published_report),
    ]
    from ..errors import OpenbookError

    handled = (OpenbookError, LookupError, OSError, RecursionError, Exception)
    return Starlette(routes=routes, exception_handlers={cls: _error for cls in handled})


async def _error(request: Request, exc: Exception) -> Response:
    """One message for the page; the server goes on (module docstring)."""
    from ..errors import OpenbookError, RiskError

    if isinstance(exc, RiskError):
        return JSONResponse({"error": str(exc), "kind": "refused"}, status_code=409)
    if isinstance(exc, OpenbookError):
        return JSONResponse({"error": str(exc), "kind": type(exc).__name__}, status_code=400)
    if isinstance(exc, LookupError):
        return JSONResponse({"error": str(exc).strip("'\""), "kind": "not found"}, status_code=404)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return JSONResponse({"error": f"{exc.strerror or exc}{where} (nothing was left half-written)",
                             "kind": "OSError"}, status_code=400)
    if isinstance(exc, RecursionError):
        return JSONResponse({"error": "an input is nested too deeply to read", "kind": "error"}, status_code=400)
    traceback.print_exception(exc, file=sys.stderr)
    return JSONResponse({"error": f"internal error: {type(exc).__name__}: {exc} (details in the studio's terminal)",
                         "kind": "internal"}, status_code=500)
