"""The Spark engine: openbook's commands on Apache Spark (PySpark), for tables beyond one machine.

``--engine spark`` runs ``check``, ``anonymize --algorithm mondrian`` (strict and relaxed),
``anonymize --algorithm full-domain-search`` — each certified on the cluster — and the linkage
audit against a registry on a Spark cluster (``--spark-master URL``; ``local[*]`` by default).
Every level, cut and node decision is computed from *exact* grouped counts aggregated on the cluster and taken by the
same code the local engine runs, so the results are the local engine's (docs/spark.md):

* :mod:`.session`     the SparkSession (master, quiet logs, the Python of the executors);
* :mod:`.encoding`    input from Parquet or CSV at any Spark-readable path, encoded to the
                      local engine's integer codes with dictionaries built on the driver;
* :mod:`.check`       every level of ``check`` by grouped aggregation;
* :mod:`.mondrian_plan`  the top cuts of Mondrian planned on the driver from histograms;
* :mod:`.mondrian`    the fragments, each run by the local Mondrian on an executor, and the
                      model checked on every class of the whole release;
* :mod:`.full_domain` full-domain search: node checks on the cluster, the lattice walk on the driver;
* :mod:`.linkage`     the linkage adversary against earlier releases, over the population on
                      the cluster, aggregated there;
* :mod:`.classes`     the published classes on the cluster: the model check, the sidecar's
                      ``check``, the baseline's and the identity line's figures;
* :mod:`.replay`      the replay adversary of Mondrian, fragment by fragment on the executors;
* :mod:`.certify`     the certificate (both lines) from those figures, by the local code;
* :mod:`.output`      the release as a folder of Parquet part files with its sidecar, the parts
                      written and hashed by the executors, committed crash-safely
                      (``openbook.cli.spark_submit`` is the command as a ``spark-submit`` script);
* :mod:`.folder`      reading such a folder back (pyarrow only: :func:`openbook.release.load_release`).

Nothing here but :mod:`.folder` is imported by the rest of openbook (PySpark is an optional
dependency: ``pip install "openbook[spark]"``); :mod:`.folder` needs no PySpark.
"""
