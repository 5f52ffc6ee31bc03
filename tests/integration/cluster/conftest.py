"""What the cluster tests share: a real worker process on the session's standalone cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster.properties import spark_conf
from tests.integration.worker_process import WorkerProcess


@pytest.fixture(scope="module")
def cluster_worker(
    spark_standalone: SparkCluster, bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """A worker process per test module, with the README's cluster properties on this cluster."""
    extra = spark_conf(spark_standalone)
    process = WorkerProcess(tmp_path_factory.mktemp("cluster-worker"), bootstrap_servers, extra)
    process.start()
    try:
        yield process
    finally:
        process.stop()
