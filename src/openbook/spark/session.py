"""The SparkSession the Spark engine runs on (docs/spark.md, "Running it").

:func:`spark_session` gives the active session (under ``spark-submit``, or one a program made)
or starts one on ``master`` (``local[*]`` by default; ``spark://…``, ``yarn``, ``k8s://…`` as
Spark knows them), with any ``KEY=VALUE`` configuration (``--spark-conf``) on top of the usual
Spark configuration (``spark-defaults.conf``, ``spark-submit --conf``). On a local master the
executors' Python is this interpreter, so they import the same openbook. Spark's console
progress bars and INFO/WARN logs are off; the engine uses Arrow batches only
(``mapInArrow`` / ``applyInArrow`` / ``toArrow``), never Spark's pandas conversions, so
PySpark's pandas-version warning is silenced.

A missing PySpark or Java is one line (:class:`~openbook.errors.ParameterError`, exit code 2)
saying how to install it: ``pip install "openbook[spark]"`` and
``apt-get install -y openjdk-17-jre-headless``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import warnings
from typing import Any, Iterator, Mapping

from ..errors import ParameterError

DEFAULT_MASTER = "local[*]"
#: shuffle partitions on a local master (Spark's 200 are meant for clusters)
LOCAL_SHUFFLE_PARTITIONS = 8
INSTALL_PYSPARK = 'pip install "openbook[spark]"'
INSTALL_JAVA = "apt-get install -y openjdk-17-jre-headless"


def missing() -> str | None:
    """Why the Spark engine cannot run here (``None`` when it can): PySpark or Java absent."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return f"PySpark is not installed ({INSTALL_PYSPARK})"
    java_home = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (java_home and os.path.exists(os.path.join(java_home, "bin", "java")))):
        return f"Java is not installed (Spark needs Java 17: {INSTALL_JAVA})"
    return None


def require() -> None:
    """Raise a one-line :class:`ParameterError` when the Spark engine cannot run."""
    why = missing()
    if why:
        raise ParameterError(f"--engine spark: {why}", parameter="engine", value="spark")


def _quiet_warnings() -> None:
    warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas", category=FutureWarning)


def spark_session(master: str | None = None, conf: Mapping[str, Any] | None = None, *,
                  app: str = "openbook") -> Any:
    """The active SparkSession, or a new one on ``master`` with ``conf`` (module docstring)."""
    require()
    _quiet_warnings()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    submitted = master is None and bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # under spark-submit
    master = master or os.environ.get("OPENBOOK_SPARK_MASTER") or DEFAULT_MASTER
    if submitted:  # spark-submit's --master and --conf stand (spark.master is set in its JVM)
        master = os.environ.get("MASTER", "spark-submit")
    if master.startswith("local"):
        # the executors run this interpreter (and so this openbook, numpy, pyarrow)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = SparkSession.builder.appName(app) if submitted else SparkSession.builder.master(master).appName(app)
    defaults = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                "spark.sql.execution.arrow.maxRecordsPerBatch": "65536"}
    if master.startswith("local"):
        defaults.update({"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": str(LOCAL_SHUFFLE_PARTITIONS)})
    for k, v in {**defaults, **{str(k): str(v) for k, v in (conf or {}).items()}}.items():
        b = b.config(k, v)
    try:
        spark = b.getOrCreate()
    except Exception as exc:  # the JVM did not start: one line
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParameterError(f"--engine spark: cannot start Spark on {master}: {reason}", parameter="spark-master",
                             value=master) from exc
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def session(master: str | None = None, conf: Mapping[str, Any] | None = None) -> Iterator[Any]:
    """:func:`spark_session` for one command: a session this call started is stopped at the
    end; an active one (a test session, ``spark-submit``'s) is left running."""
    require()
    from pyspark.sql import SparkSession

    had = SparkSession.getActiveSession() is not None
    spark = spark_session(master, conf)
    try:
        yield spark
    finally:
        if not had:
            spark.stop()


def shuffle_partitions(spark: Any) -> int:
    """The session's number of shuffle partitions (how many parts aggregations produce)."""
    return int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
