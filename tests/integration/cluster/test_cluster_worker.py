"""A real worker process whose spark.master is the session's Spark standalone cluster.

Two connectors run at once with the same plugins at two versions: a value converter
(``acme_versioned.VersionedConverter``, tests/plugins/versioned-*) and a transform
(``stamp.StampTransformation``, tests/plugins/stamp-*), each from its plugin location. The
worker ships those locations to the executors; the records in Kafka show that each
connector's batches ran its own version's code, loaded from the copy in an executor's work
directory, in Python processes that are not the worker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.testkit import TEST_PLUGINS, create_running, source_config, unique

pytestmark = pytest.mark.integration

RECORDS = 30


def stamped_config(topic: str, version: str) -> dict[str, str]:
    return source_config(
        topic,
        **{
            "max.records": str(RECORDS),
            "value.converter": "acme_versioned.VersionedConverter",
            "value.converter.plugin.version": version,
            "transforms": "stamp",
            "transforms.stamp.type": "stamp.StampTransformation",
            "transforms.stamp.plugin.version": version,
        },
    )


def test_two_connectors_run_their_own_plugin_versions_shipped_to_the_cluster(
    spark_standalone: SparkCluster, cluster_worker: EmbeddedConnect, kafka: KafkaHelpers
) -> None:
    topics = {version: unique(f"stamped-{version}") for version in ("1.0.0", "2.0.0")}
    for version, topic in topics.items():
        create_running(cluster_worker, f"stamp-{version}", stamped_config(topic, version))
    work_dirs = [w.resolve() for w in spark_standalone.work_dirs]
    pids: dict[str, set[int]] = {}
    for version, topic in topics.items():
        got = kafka.consume(topic, RECORDS, timeout=180)
        assert len(got) == RECORDS, cluster_worker.log_text()[-3000:]
        values = [m.value.decode() for m in got if m.value is not None]
        prefix = f"{version}:"  # the converter of this version tagged it
        assert all(v.startswith(prefix) for v in values), values[:3]
        stamps = [json.loads(v[len(prefix) :]) for v in values]
        assert sorted(s["value"] for s in stamps) == sorted(f"value-{i}" for i in range(RECORDS))
        assert {s["version"] for s in stamps} == {version}
        for stamp in stamps:
            file = Path(stamp["file"]).resolve()
            assert any(file.is_relative_to(w) for w in work_dirs), file
            assert not file.is_relative_to(TEST_PLUGINS)
        pids[version] = {s["pid"] for s in stamps}
    assert cluster_worker.worker_pid is not None
    everyone = pids["1.0.0"] | pids["2.0.0"]
    assert cluster_worker.worker_pid not in everyone and os.getpid() not in everyone
