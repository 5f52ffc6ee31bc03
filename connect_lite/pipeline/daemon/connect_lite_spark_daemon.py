"""Spark's Python daemon for a local master, with ``pyspark.worker`` imported before it forks.

Spark starts each Python worker by forking its daemon (``spark.python.daemon.module``), and
the forked worker then imports ``pyspark.worker``, about 0.1 s, before its first task. Spark
ends Python workers idle for a minute, so the first batch after a pause pays that again.
Imported once here, before any fork, it is already there in every worker.

PySpark's own daemon imports the worker module only after the fork because pyarrow and pandas
start threads when imported, and a process with threads must not fork. ``pyspark.worker``
starts none (tests/unit/pipeline/test_spark_daemon.py checks it), and nothing else is imported
here. This file is a top-level module of its own directory, which session.py puts on the
workers' PYTHONPATH: importing it as ``connect_lite.pipeline...`` would run that package's
``__init__``, which imports pyarrow.
"""

import pyspark.worker  # noqa: F401  # the point of this module: imported before the fork
from pyspark import daemon

if __name__ == "__main__":
    daemon.manager()
