"""What the cluster tests share: a real worker on the session's standalone cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_lite.testing import EmbeddedConnect
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster.properties import spark_conf
from tests.integration.testkit import worker_options


@pytest.fixture(scope="module")
def cluster_worker(
    spark_standalone: SparkCluster, bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmbeddedConnect]:
    """A worker per test module, with the README's cluster properties on this cluster."""
    workdir = tmp_path_factory.mktemp("cluster-worker")
    options = worker_options(workdir=workdir, worker_properties=spark_conf(spark_standalone))
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as worker:
        yield worker
