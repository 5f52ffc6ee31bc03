"""The worker properties for a cluster: the README's (On a Spark cluster), on a given cluster."""

from __future__ import annotations

import re

from connect_lite.testing.spark_cluster import HOST, SparkCluster
from tests.integration.worker_process import REPO


def readme_cluster_properties() -> dict[str, str]:
    """The worker properties the README gives for the cluster of scripts/spark-cluster.sh."""
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- cluster-properties:begin -->\n```properties\n(.*?)```", text, re.S)
    assert block is not None, "README: no cluster-properties block"
    return dict(line.split("=", 1) for line in block.group(1).splitlines() if line.strip())


def spark_conf(cluster: SparkCluster) -> dict[str, str]:
    """The README's properties with ``cluster``'s master URL (the README names port 7077)."""
    conf = readme_cluster_properties()
    assert conf["spark.master"] == f"spark://{HOST}:7077"
    conf["spark.master"] = cluster.master_url
    return conf
