"""Fair sharing on a real Spark standalone cluster (two 1-core workers): each task's batches
run in its own scheduler pool, a batch reports that pool and the executors it used, and a
busy connector's long batch does not hold back another connector's lone records.

No assertion here is about speed: the fair-sharing test asserts an order of events (the
quiet task's batches all complete while the busy task's one batch is still running).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark import cloudpickle

from connect_lite.api import Schema, SourceRecord
from connect_lite.control import components
from connect_lite.pipeline import SourceJob, SparkEngine, transfer
from connect_lite.plugins.registry import Plugins
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from connect_lite.testing import wait_for
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster import slow
from tests.integration.cluster.properties import spark_conf

pytestmark = pytest.mark.integration

cloudpickle.register_pickle_by_value(slow)  # the executors have no copy of tests/

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
CONVERTERS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
}


@pytest.fixture(scope="module")
def engine(spark_standalone: SparkCluster) -> Iterator[SparkEngine]:
    """A SparkEngine on the cluster with the README's properties, once both executors have
    registered (a batch before that could only use the one there is)."""
    engine = SparkEngine(spark_conf(spark_standalone))
    scala = engine.session().sparkContext._jsc.sc()
    wait_for(
        lambda: len(scala.statusTracker().getExecutorInfos()) == 3,  # with the driver
        what="the application's two executors",
    )
    yield engine
    engine.stop()


def spec(job_id: str, transforms: tuple[TransformSpec, ...] = ()) -> JobSpec:
    plugins = Plugins([str(PLUGINS)], entry_points=False)
    key, value, header = (
        components.converter_factory(plugins, which, {}, CONVERTERS)
        for which in ("key", "value", "header")
    )
    return JobSpec(job_id, key, value, header, transforms)


def records(n: int, prefix: str) -> list[SourceRecord]:
    return [
        SourceRecord(
            source_partition={"p": prefix},
            source_offset={"o": i},
            topic=prefix,
            value=f"{prefix}{i}",
            value_schema=Schema.STRING_SCHEMA,
        )
        for i in range(n)
    ]


def values(job: SourceJob, batch: list[SourceRecord]) -> list[bytes | None]:
    result = job.run(batch)
    assert [r.index for r in result.records] == list(range(len(batch)))
    return [r.value for r in result.records]


def settled(job: SourceJob, executors: int) -> LastBatch:
    """The batch job's last batch once Spark's status store shows ``executors`` for it."""
    return wait_for(
        lambda: (b := job.last_batch()) is not None and b.executors == executors and b,
        timeout=30,
        what=f"{executors} executors in the last batch of {job.job_group}",
    )


def test_a_batch_reports_its_scheduler_pool_and_the_two_executors_it_ran_on(
    engine: SparkEngine,
) -> None:
    job = SourceJob(engine, spec("spread"), "cluster:spread")
    assert job.last_batch() is None  # no batch yet
    assert values(job, records(100, "s")) == [f"s{i}".encode() for i in range(100)]

    batch = settled(job, 2)  # two chunks, one per core: one on each 1-core worker
    assert batch.pool == "cluster:spread"
    assert batch.executor_ids is not None and "driver" not in batch.executor_ids


def busy_job_running(engine: SparkEngine, group: str) -> bool:
    tracker = engine.session().sparkContext.statusTracker()
    return bool(set(tracker.getJobIdsForGroup(group)) & set(tracker.getActiveJobsIds()))


def spark_tasks(engine: SparkEngine, group: str) -> int:
    """How many Spark tasks the jobs of ``group`` had."""
    tracker = engine.session().sparkContext.statusTracker()
    total = 0
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for stage_id in info.stageIds if info else []:
            stage = tracker.getStageInfo(stage_id)  # Spark's stage
            total += stage.numTasks if stage else 0
    return total


def test_a_busy_tasks_long_batch_does_not_hold_back_another_tasks_lone_records(
    engine: SparkEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The busy batch: 40 chunks (so 40 Spark tasks) of 500 records at 1 ms each, about 10 s
    # of work for the two cores. FIFO would run the quiet task's jobs after all 40.
    monkeypatch.setattr(transfer, "MAX_CHUNK_RECORDS", 500)
    slow_chain = (TransformSpec(slow.SlowTransformation),)
    busy = SourceJob(engine, spec("busy", slow_chain), "cluster:busy")
    quiet = SourceJob(engine, spec("quiet"), "cluster:quiet")
    busy_out: list[Any] = []
    busy_thread = threading.Thread(
        target=lambda: busy_out.append(values(busy, records(20_000, "b"))), daemon=True
    )
    busy_thread.start()
    wait_for(lambda: busy_job_running(engine, "cluster:busy"), what="the busy batch's job")

    for n in range(3):  # lone records, one batch each
        assert values(quiet, records(1, f"q{n}-")) == [f"q{n}-0".encode()]
    # ... all of them done while the busy task's single batch is still running
    assert busy_thread.is_alive()
    assert busy_job_running(engine, "cluster:busy")

    busy_thread.join(timeout=300)
    assert busy_out == [[f"b{i}".encode() for i in range(20_000)]]
    assert spark_tasks(engine, "cluster:busy") == 40  # one per chunk
    assert settled(quiet, 1).pool == "cluster:quiet"  # one record: one Spark task
    assert settled(busy, 2).pool == "cluster:busy"
