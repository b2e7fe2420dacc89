"""The worker's head start (:func:`openbook.studio.worker.serve` calls :func:`warm` when it
starts, with the studio): the libraries a run needs are loaded and the default algorithm,
Mondrian, their certificates and the utility measures run once on a small synthetic table, so
the numba kernels are compiled before the first run (a few seconds saved on it). A failure
here only loses that head start: the first run compiles what it needs itself.
"""

from __future__ import annotations


def warm() -> None:
    """One small run of each common path (module docstring); never raises."""
    try:
        _warm()
    except Exception:  # noqa: BLE001 - module docstring: the first run then compiles what it needs
        pass


def _warm() -> None:
    import os
    import warnings

    os.environ["OPENBOOK_PROGRESS"] = "0"
    from ..algorithms import make_algorithm
    from ..certificate import certify_release
    from ..data.datasets import load_dataset
    from ..data.schema import Schema
    from ..data.table import encode
    from ..models import make_model
    from ..report.html import query_error_table
    from ..utility.metrics import utility_summary, view_from_release

    ds = load_dataset("synthetic", n_rows=400, seed=1)
    cols = [c for c in ds.schema.qi][:3]
    schema = Schema.build(qi=cols, sa=ds.schema.sa)
    table = encode(ds.frame, schema, {}, source="synthetic")
    model = make_model("l=2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("generalized-anatomy", "mondrian"):
            release = make_algorithm(name, model=model, seed=0).anonymize(table)
            certify_release(release, original=table, enforce=False)
            view = view_from_release(release, table)
            utility_summary(view, table)
            query_error_table(release, table, n=20, view=view)
