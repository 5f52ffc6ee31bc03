"""In local mode a batch's Spark tasks all run in the driver's JVM: its last batch reports
the task's scheduler pool and the one executor there is, ``driver``."""

from __future__ import annotations

import pytest

from connect_lite.api import SourceRecord
from connect_lite.pipeline import SourceStage, SparkEngine
from tests.integration.pipeline.stages import spec
from tests.integration.worker_process import wait_for

pytestmark = pytest.mark.integration


def test_a_local_batch_ran_on_the_driver_in_the_tasks_pool(engine: SparkEngine) -> None:
    stage = SourceStage(engine, spec("src-last-batch"), "task-last-batch")
    assert stage.last_batch() is None
    batch = [
        SourceRecord(source_partition={}, source_offset={}, topic="t", value=f"v{i}")
        for i in range(40)
    ]  # four chunks: the session's default parallelism is 4
    assert len(stage.run(batch).records) == 40

    last = wait_for(
        lambda: (b := stage.last_batch()) is not None and b.executors is not None and b,
        timeout=30,
        what="the last batch's executors",
    )
    assert last.pool == "task-last-batch"
    assert last.executor_ids == ("driver",)
