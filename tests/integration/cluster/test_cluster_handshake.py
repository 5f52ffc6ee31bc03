"""The session start on a cluster fails with a clear message when executors cannot run the
batch job code: here their Python (the system's) lacks connect-lite's dependencies.

A module of its own: its session must not wait for executors that another module's session
holds (each application takes both workers' cores).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from connect_lite.pipeline import SparkEngine
from connect_lite.pipeline.session import SparkStartError
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster.properties import spark_conf

pytestmark = pytest.mark.integration


def test_executors_without_the_dependencies_fail_the_start_clearly(
    spark_standalone: SparkCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine exports spark.pyspark.python as PYSPARK_PYTHON (PySpark reads it there):
    # restored afterwards, or later runtimes and worker processes would inherit it.
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON", sys.executable))
    system_python = shutil.which("python3", path="/usr/bin")
    if system_python is None:
        pytest.skip("no /usr/bin/python3")
    conf = {**spark_conf(spark_standalone), "spark.task.maxFailures": "1"}
    engine = SparkEngine({**conf, "spark.pyspark.python": system_python})
    try:
        with pytest.raises(SparkStartError) as failed:
            engine.session()
        message = str(failed.value)
        assert "Spark's executors could not run connect_lite's handshake job" in message
        assert "ModuleNotFoundError: No module named" in message
        assert "spark.pyspark.python" in message
        assert not engine.is_started
    finally:
        engine.stop()
