"""In local mode a batch's Spark tasks all run in the driver's JVM: its last batch reports
the task's scheduler pool and the one executor there is, ``driver``."""

from __future__ import annotations

import pytest

from connect_lite.api import SourceRecord
from connect_lite.pipeline import SourceJob, SparkEngine
from connect_lite.testing import wait_for
from tests.integration.pipeline.jobs import spec

pytestmark = pytest.mark.integration


def test_a_local_batch_ran_on_the_driver_in_the_tasks_pool(engine: SparkEngine) -> None:
    job = SourceJob(engine, spec("src-last-batch"), "task-last-batch")
    assert job.last_batch() is None
    batch = [
        SourceRecord(source_partition={}, source_offset={}, topic="t", value=f"v{i}")
        for i in range(40)
    ]  # four chunks: the session's default parallelism is 4
    assert len(job.run(batch).records) == 40

    last = wait_for(
        lambda: (b := job.last_batch()) is not None and b.executors is not None and b,
        timeout=30,
        what="the last batch's executors",
    )
    assert last.pool == "task-last-batch"
    assert last.executor_ids == ("driver",)
