"""Losing part or all of a real Spark standalone cluster loses no record.

The module has a cluster of its own (a master and two 1-core workers from the pyspark wheel),
not the session's ``spark_standalone``: its tests kill a worker and stop the whole cluster,
and each Spark application takes both workers' cores, so it must not share them with
another module's session. Each test leaves the cluster as it found it (two live workers).

- A worker and its executor are killed (``kill -9`` of the process group) while a batch job runs
  batch after batch: Spark reruns the lost tasks on the other executor, every batch
  completes, and every record comes back.
- The whole cluster is stopped under a running worker process and started again on the same
  ports: the source task stays RUNNING, /health and the task's trace say that Spark is
  unreachable, and once the cluster is back the batches resume and every record of the
  stream is in Kafka.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_lite.api import Schema, SourceRecord
from connect_lite.pipeline import SourceJob, SparkEngine
from connect_lite.plugins.registry import Plugins
from connect_lite.testing import EmbeddedConnect, KafkaHelpers, spark_cluster, wait_for
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster.properties import spark_conf
from tests.integration.cluster.test_cluster_job import PLUGINS, stamp_spec
from tests.integration.testkit import create_running, source_config, unique

pytestmark = pytest.mark.integration

BATCHES = 6
BATCH = 50_000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    own = spark_cluster.start(tmp_path_factory.mktemp("loss-cluster"), 2, die_with_parent=True)
    try:
        yield own
    finally:
        own.stop()


def numbered(batch: int, n: int) -> list[SourceRecord]:
    return [
        SourceRecord(
            source_partition={"p": 0},
            source_offset={"o": i},
            topic="loss",
            value=f"b{batch}-{i}",
            value_schema=Schema.STRING_SCHEMA,
        )
        for i in range(n)
    ]


def executors(engine: SparkEngine) -> int:
    sc = engine.session().sparkContext
    return int(sc._jsc.sc().getExecutorMemoryStatus().size()) - 1  # minus the driver


def both_executors_busy(engine: SparkEngine) -> Any:
    """A running Spark stage (SparkStageInfo) with a task on each executor, if there is one."""
    tracker = engine.session().sparkContext.statusTracker()
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None and info.numActiveTasks >= 2:
            return info
    return None


def test_a_killed_worker_loses_no_record(cluster: SparkCluster) -> None:
    # Task starts reach the status tracker at once, not at most every 100 ms, so that a batch job
    # with a task on both executors shows as one.
    engine = SparkEngine({**spark_conf(cluster), "spark.ui.liveUpdate.period": "0ms"})
    try:
        plugins = Plugins([str(PLUGINS)], entry_points=False)
        job = SourceJob(engine, stamp_spec(plugins, "loss-1", "1.0.0"), "cluster:loss-1")
        job.run(numbered(-1, 10))  # shipped, and the Python workers are up
        wait_for(lambda: executors(engine) == 2, 60, what="two executors")
        values: list[str] = []
        failures: list[BaseException] = []

        def stream() -> None:
            try:
                for b in range(BATCHES):
                    result = job.run(numbered(b, BATCH))
                    values.extend(json.loads(r.value or b"")["value"] for r in result.records)
            except BaseException as error:
                failures.append(error)

        streaming = threading.Thread(target=stream)
        streaming.start()
        busy = wait_for(lambda: both_executors_busy(engine), 120, 0.01, "a busy batch job")
        cluster.kill_worker(2)
        streaming.join(600)
        assert not streaming.is_alive() and not failures, failures
        tracker = engine.session().sparkContext.statusTracker()
        info = tracker.getStageInfo(busy.stageId)
        assert info is not None and info.numFailedTasks >= 1  # the lost task ran again
        expected = {f"b{b}-{i}" for b in range(BATCHES) for i in range(BATCH)}
        counted = Counter(values)
        duplicates = sum(n - 1 for n in counted.values())
        assert set(counted) == expected, f"{len(expected - set(counted))} records lost"
        assert duplicates == 0  # a batch's result comes back once, whatever ran twice
        assert executors(engine) == 1
        cluster.start_worker(2)
        wait_for(lambda: executors(engine) == 2, 120, what="an executor on the new worker")
        assert len(job.run(numbered(99, 100)).records) == 100
    finally:
        engine.stop()


def health(worker: EmbeddedConnect) -> tuple[int, str]:
    response = worker.http.get("/health")
    return response.status, str(response.body.get("message"))


def task_status(worker: EmbeddedConnect, name: str) -> dict[str, Any]:
    status: dict[str, Any] = worker.client.status(name)["tasks"][0]
    return status


def test_the_whole_cluster_going_away_and_back_loses_no_record(
    cluster: SparkCluster,
    new_worker: Callable[..., EmbeddedConnect],
    kafka: KafkaHelpers,
) -> None:
    worker = new_worker(worker_properties=spark_conf(cluster)).start()
    topic = unique("loss")
    total = 20_000  # 200 records a second: the stream runs on while the cluster is away
    config = source_config(topic, **{"max.records": str(total), "poll.interval.ms": "500"})
    name = create_running(worker, "loss", config)
    wait_for(lambda: len(kafka.consume(topic, 500, timeout=5)) >= 500, 120, 1, "first records")
    cluster.stop()
    stopped_at = time.monotonic()
    code, message = wait_for(
        lambda: (h := health(worker))[0] != 200 and h, 120, 1, "/health: Spark unreachable"
    )
    assert code == 503 and "Spark is unreachable" in message, message
    status = wait_for(
        lambda: (s := task_status(worker, name))["state"] == "RUNNING" and s.get("trace") and s,
        60,
        1,
        "the task's trace",
    )
    assert "SparkUnavailableError: Spark is unreachable" in status["trace"], status
    assert worker.client.status(name)["connector"]["state"] == "RUNNING"
    back = spark_cluster.start(
        cluster.directory, 2, port=cluster.port, webui_port=cluster.webui_port,
        die_with_parent=True,
    )  # fmt: skip
    cluster.pids.update(back.pids)  # the module's fixture stops them
    away_s = time.monotonic() - stopped_at
    got = kafka.consume(topic, total, timeout=300)
    counted = Counter(m.value.decode() for m in got if m.value is not None)
    missing = {f"value-{n}" for n in range(total)} - set(counted)
    assert not missing, f"{len(missing)} lost (away {away_s:.0f} s); {worker.log_text()[-3000:]}"
    duplicates = sum(n - 1 for n in counted.values())
    print(f"cluster away {away_s:.0f} s; {duplicates} duplicates of {total}")
    assert wait_for(lambda: health(worker)[0] == 200, 120, 1, "/health healthy again")
    status = task_status(worker, name)
    assert status["state"] == "RUNNING" and not status.get("trace"), status
