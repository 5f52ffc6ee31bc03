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

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
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


def test_the_lake_sink_reads_its_records_in_the_cluster_executors(
    cluster_worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    """A DataFrame sink on a cluster: its batches' Spark jobs, which read the ranges from
    Kafka with the executors' own readers (range_job.py), run on the cluster's executors, and
    every record lands in a file once."""
    import pyarrow.parquet as pq

    topic, store = unique("lake-cluster"), tmp_path / "lake"
    kafka.create_topic(topic, 2)
    for partition in (0, 1):
        values = [json.dumps({"n": i, "p": partition}) for i in range(RECORDS)]
        kafka.produce(topic, values, partition=partition)
    name = create_running(
        cluster_worker,
        "lake-cluster",
        {
            "connector.class": "LakeSink",
            "topics": topic,
            "store.url": store.as_uri(),
            "flush.size": "10",
            "rotate.schedule.interval.ms": "500",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        },
    )

    def rows() -> list[dict[str, int]]:
        files = sorted((store / "topics").rglob("*.parquet")) if store.exists() else []
        return [row for f in files for row in pq.read_table(f).to_pylist()]

    wait_for(lambda: len(rows()) >= 2 * RECORDS, 180, what="every record in a file")
    got = rows()
    assert sorted((r["p"], r["n"]) for r in got) == [(p, i) for p in (0, 1) for i in range(RECORDS)]

    def executors() -> list[str] | None:
        batch = cluster_worker.client.status(name)["tasks"][0].get("spark_last_batch")
        return None if batch is None else batch.get("executor_ids")

    ran_on = wait_for(executors, 60, what="the last batch's executors")
    assert ran_on and "driver" not in ran_on  # the cluster's executors, not the worker


def test_a_dataframe_source_is_converted_and_produced_by_the_cluster_executors(
    cluster_worker: EmbeddedConnect, kafka: KafkaHelpers
) -> None:
    """poll_dataframe on the cluster: the frame's rows are converted (JsonConverter with
    schemas) and produced in the executors, in order, and the last row's offset commits."""
    topic = unique("df-cluster")
    kafka.create_topic(topic, 1)
    config = {
        **source_config(topic, **{"max.records": "120"}),
        "connector.class": "DataFrameSource",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    name = create_running(cluster_worker, "df-cluster", config)
    got = kafka.consume(topic, 120, timeout=180)
    assert [m.key for m in got] == [str(n).encode() for n in range(120)]
    assert json.loads(got[-1].value or b"")["payload"] == {"id": 119, "name": "value-119"}
    wait_for(
        lambda: (
            cluster_worker.http.get(f"/connectors/{name}/offsets").body.get("offsets")
            == [{"partition": {"task": "0"}, "offset": {"next": 120}}]
        ),
        timeout=60,
        what="the last row's offset, committed",
    )
    assert cluster_worker.http.delete(f"/connectors/{name}").status == 204
