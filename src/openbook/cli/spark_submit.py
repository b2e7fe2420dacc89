"""The ``openbook`` command as a script ``spark-submit`` runs on a cluster (docs/spark.md,
"On a cluster")::

    spark-submit --master spark://HOST:7077 --conf spark.executor.memory=8g \\
        "$(python -c 'import openbook.cli.spark_submit as s; print(s.__file__)')" \\
        anonymize hdfs:///data/people.parquet --engine spark --algorithm mondrian ...

Under ``spark-submit`` the session takes the master and configuration ``spark-submit`` gives
(:func:`openbook.spark.session.spark_session`).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from openbook.cli import main

    sys.exit(main(sys.argv[1:]))
