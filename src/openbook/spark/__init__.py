"""The Spark engine: openbook's commands on Apache Spark (PySpark), for tables beyond one machine.

``--engine spark`` runs ``check``, ``anonymize --algorithm mondrian`` (strict and relaxed),
``anonymize --algorithm full-domain-search`` and the linkage audit against a registry on a
Spark cluster (``--spark-master URL``; ``local[*]`` by default). Every level, cut and node
decision is computed from *exact* grouped counts aggregated on the cluster and taken by the
same code the local engine runs, so the results are the local engine's (docs/spark.md):

* :mod:`.session`     the SparkSession (master, quiet logs, the Python of the executors);
* :mod:`.encoding`    input from Parquet or CSV at any Spark-readable path, encoded to the
                      local engine's integer codes with dictionaries built on the driver;
* :mod:`.check`       every level of ``check`` by grouped aggregation;
* :mod:`.mondrian_plan`  the top cuts of Mondrian planned on the driver from histograms;
* :mod:`.mondrian`    the fragments, each run by the local Mondrian on an executor, and the
                      model checked on every class of the whole release;
* :mod:`.full_domain` full-domain search: node checks on the cluster, the lattice walk on the driver;
* :mod:`.linkage`     the linkage adversary against earlier releases, over the population on the cluster;
* :mod:`.output`      the release as a folder of Parquet part files with its sidecar
                      (``openbook.cli.spark_submit`` is the command as a ``spark-submit`` script).

Nothing here is imported by the rest of openbook (PySpark is an optional dependency:
``pip install "openbook[spark]"``).
"""
