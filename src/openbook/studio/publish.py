"""Publishing a run: its release written as ``openbook anonymize -o`` writes it, with its
HTML report as ``openbook report`` renders one, inside the output folder and nowhere else.

* **Where**: the page names a file, never a folder — a plain name (letters, digits, ``.``,
  ``_``, ``-``; no ``/``, ``\\`` or ``..``) of a release format (``.csv``, ``.parquet``,
  ``.sqlite``, ``.duckdb``), resolved inside the output folder given when the studio started
  (``--out``); a name whose file, or whose sidecar, SA-table or report, would resolve outside
  it (a symbolic link) is refused. The page cannot choose another folder.
* **Refusals**: anonymize's, in its words — a release its certificate fails is not written
  (:func:`openbook.certificate.refusal`, the message ``anonymize`` prints with exit code 3), a
  release is never written over an input or over an existing release without *replace*
  (``--force``) (:func:`openbook.release.io.check_release_output`) — checked, with the
  report's own place (:func:`openbook.release.io.check_plain_output`), before anything is written.
* **What**: :func:`openbook.release.save_release` (data, SA-table, sidecar bound by digests,
  crash-safe; counts and identifier names only on opt-in, as ``--publish-suppressed-count`` /
  ``--publish-identifier-names``), read back with :func:`openbook.release.load_release`
  (digests and the sidecar's claims verified); then ``NAME.report.html``: the report page
  (:func:`openbook.report.html.render_report`) of the certificate the run recorded, every
  adversary's figures, utility and the COUNT-query error, as the demo renders its reports.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

#: a file name the page may give: no folder part, no '..', no leading dot
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
#: the report written beside a release ``NAME.csv``: ``NAME.report.html``
REPORT_SUFFIX = ".report.html"


def target(out_dir: Path, name: Any) -> Path:
    """The release's data file ``out_dir/name``, or a one-line refusal (module docstring)."""
    from ..errors import ParameterError

    raw = str(name if name is not None else "").strip()
    outside = (f"the studio writes only inside its output folder {out_dir}: give a plain file name such as "
               "release.csv (no folder, no '..')")
    if not raw:
        raise ParameterError("give the release's file name, e.g. release.csv", parameter="output")
    if not NAME.match(raw) or ".." in raw:
        raise ParameterError(f"output {raw!r} refused: {outside}", parameter="output", value=raw)
    root = Path(out_dir).resolve()
    path = root / raw
    if path.parent != root:
        raise ParameterError(f"output {raw!r} refused: {outside}", parameter="output", value=raw)
    from ..release.io import release_files

    for f in [*release_files(path), report_path(path)]:
        if f.is_symlink() or f.resolve().parent != root:
            raise ParameterError(f"output {raw!r} refused: {f.name} is a link that leads outside the output "
                                 f"folder {out_dir}", parameter="output", value=raw)
    return path


def report_path(path: Path) -> Path:
    """``release.csv`` → ``release.report.html`` (beside it)."""
    return path.with_name(path.stem + REPORT_SUFFIX)


def report_page(run: Any, *, release_name: str, provenance: dict[str, Any]) -> str:
    """The report page of a finished run (module docstring)."""
    from ..report.html import render_report, report_title

    res = run.result
    release, cert = res["release"], res["certificate"]
    title = report_title(release, release_name=release_name, data_name=run.data_name)
    return render_report(release, certificate=cert,
                         certificate_source="Certified by openbook studio before writing, as anonymize certifies a "
                                            "release (the certificate recorded in its sidecar).",
                         attacks=list(cert.results.values()), utility=res["utility"],
                         queries=res["queries"], title=title, provenance=provenance)


def publish(run: Any, out_dir: Path, name: Any, *, force: bool = False, publish_suppressed_count: bool = False,
            publish_identifier_names: bool = False, commands: list[str] | None = None) -> dict[str, Any]:
    """Write ``run``'s release and report (module docstring); returns what was written where."""
    from ..certificate import PASS, refusal
    from ..errors import ParameterError
    from ..release import load_release, save_release
    from ..release.io import check_plain_output, check_release_output
    from ..report.html import write_report

    path = target(out_dir, name)
    if run.status != "done" or run.result is None:
        raise ParameterError(f"run {run.label} has no release to publish ({run.status})", parameter="run",
                             value=run.id)
    cert = run.result["certificate"]
    if cert.verdict != PASS:
        raise refusal(cert)
    report = report_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_release_output(path, force=force, inputs=run.inputs)
    check_plain_output(report, force=force, inputs=run.inputs, what="report")
    t0 = time.perf_counter()
    files = save_release(run.result["release"], path, force=force, inputs=run.inputs,
                         publish_suppressed_count=bool(publish_suppressed_count),
                         publish_identifier_names=bool(publish_identifier_names))
    back = load_release(files[0])  # what a reader gets: digests and the sidecar's claims verified
    page = report_page(run, release_name=path.name,
                       provenance={"made with": "openbook studio", "release file": str(path),
                                   "data": run.data_name, "equivalent commands": " ; ".join(commands or [])})
    written_report = write_report(report, page)
    return {"run": run.id, "label": run.label, "folder": str(Path(out_dir).resolve()),
            "files": [str(f) for f in files], "report": str(written_report), "rows": int(back.n_published),
            "kind": back.kind, "verdict": (back.meta.get("certificate") or {}).get("verdict"),
            "seconds": round(time.perf_counter() - t0, 2), "commands": list(commands or []),
            "published_at": time.strftime("%Y-%m-%d %H:%M:%S")}

