"""The worker properties for a cluster: those of docs/spark-clusters.md, on a given cluster."""

from __future__ import annotations

from connect_lite.testing.spark_cluster import HOST, SparkCluster
from tests.unit.docs.doc_blocks import block


def readme_cluster_properties() -> dict[str, str]:
    """The worker properties the docs give for the cluster of scripts/spark-cluster.sh."""
    text = block("cluster-properties").text
    return dict(line.split("=", 1) for line in text.splitlines() if line.strip())


def spark_conf(cluster: SparkCluster) -> dict[str, str]:
    """The docs' properties with ``cluster``'s master URL (the docs name port 7077)."""
    conf = readme_cluster_properties()
    assert conf["spark.master"] == f"spark://{HOST}:7077"
    conf["spark.master"] = cluster.master_url
    return conf
