"""openbook studio: the measure → apply → compare → publish loop in a local web page.

``openbook studio [DATA]`` (:mod:`openbook.cli.studio`) serves one page on 127.0.0.1 on top of
the library, with no privacy logic of its own: every figure comes from the functions the
command line uses — the table is read and encoded by :func:`openbook.pipeline.load_input`, a
column's kind is :func:`openbook.hierarchy.detect.detect_kind`'s, hierarchies are built by
:mod:`openbook.hierarchy.wizard` (as ``openbook hierarchy`` builds them) and read back as
``anonymize --hierarchy`` reads them, the raw table's risk is ``openbook check``'s, a run is
``anonymize``'s model, algorithm and certificate (:func:`openbook.certificate.certify_release`),
and publishing is ``anonymize``'s refusal and :func:`openbook.release.save_release`, plus the
``openbook report`` page. docs/studio.md describes the page and its decisions.

One concept a module:

============  ==============================================================================
module        what it holds
============  ==============================================================================
``data``      loading a built-in dataset, a file path or an upload; each column's profile
``hierarchy`` hierarchies built in the page, written as ARX CSVs in the session's own folder
``session``   the single user's state: data, column roles and kinds, hierarchies, the encoded
              table (cached), the run configuration, the runs and the published releases
``measure``   the raw table's identity risk and levels (``openbook check``), its histogram
``runs``      a run's settings, checked as ``anonymize`` checks its flags, and its progress
``worker``    the worker process that anonymizes, certifies and measures, and the queue that
              feeds it one run at a time, records its steps and cancels it
``warmup``    the worker's head start: the numba kernels compiled on a small table
``compare``   a finished run as the comparison shows it (verdict, lines, adversaries, utility)
``commands``  the command lines that repeat a run (``openbook hierarchy``, ``anonymize``)
``publish``   a file name inside the output folder, anonymize's refusals, the files and report
``guard``     the ASGI middleware refusing other hosts and origins, and security headers
``app``       the Starlette routes (JSON in, JSON out)
``server``    the socket on 127.0.0.1, uvicorn, the browser, Ctrl-C
============  ==============================================================================

The optional dependencies (``pip install "openbook[studio]"``: Starlette, uvicorn) are imported
by ``app`` and ``server`` only, and those only when the command runs (``guard`` is plain ASGI).
The page itself (``static/``: one HTML file, one script, one style sheet, no library) is served
by the studio: nothing is fetched from the network.
"""
