"""A source task whose batch meets an unreachable Spark cluster: it stays RUNNING, its trace
says why, the same batch runs again and reaches the producer, and the trace is cleared."""

from __future__ import annotations

import time
from typing import Any

import pytest

from connect_lite.api.records import SourceRecord
from connect_lite.config.batching import Batching
from connect_lite.dataplane import spark_retry
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.pipeline.cluster_watch import Backoff
from connect_lite.pipeline.session import SparkUnavailableError
from connect_lite.pipeline.source_job import SourceBatchResult
from connect_lite.protocol.states import State, TargetState
from connect_lite.storage.memory import open_memory_stores
from tests.unit.dataplane.fake_producer import RecordingProducer
from tests.unit.dataplane.fake_source import OnceSource

LOST = "Spark is unreachable: no executor for 30 s"


class RecordingStatus:
    def __init__(self) -> None:
        self.reports: list[tuple[State, str | None]] = []

    def task(self, connector: str, task: int, state: State, trace: str | None, _v: Any) -> None:
        self.reports.append((state, trace))


class LostTwice:
    """Raises SparkUnavailableError for its first two runs, then passes the values through."""

    def __init__(self) -> None:
        self.runs: list[list[str]] = []

    def run(
        self, batch: list[SourceRecord], tolerate_errors: bool, send: object = None
    ) -> SourceBatchResult:
        self.runs.append([str(r.value) for r in batch])
        if len(self.runs) <= 2:
            raise SparkUnavailableError(LOST)
        rows = [
            (i, r.topic, None, None, str(r.value).encode(), None, None) for i, r in enumerate(batch)
        ]
        return SourceBatchResult(rows=rows, size=len(batch))

    def cancel(self) -> None:
        pass


def test_the_task_stays_running_says_why_and_sends_the_same_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spark_retry, "Backoff", lambda: Backoff(0.01, 0.01))
    stores = open_memory_stores()
    status, job, producer = RecordingStatus(), LostTwice(), RecordingProducer()
    task = WorkerSourceTask(
        plugin=OnceSource([SourceRecord({"p": 0}, {"o": i}, "t", f"v{i}") for i in range(3)]),
        task_config={},
        job=job,
        producer_factory=lambda **_: producer,
        offsets=stores.offsets,
        flush_interval_ms=60_000,
        flush_timeout_ms=1_000,
        batching=Batching(max_records=10, max_wait_ms=10),
        connector="c",
        task=0,
        status=status,
        target=TargetState.RUNNING,
    )
    task.start()
    try:
        deadline = time.monotonic() + 10
        while not producer.values and time.monotonic() < deadline:
            time.sleep(0.01)  # waiting for a condition: the batch's records produced
        assert producer.values, job.runs
    finally:
        task.stop()
        assert task.join(10)
    assert producer.values == [b"v0", b"v1", b"v2"]
    assert job.runs == [["v0", "v1", "v2"]] * 3  # the same batch, nothing skipped
    assert not task.failed
    states = [state for state, _ in status.reports]
    assert states == [State.RUNNING] * 3
    first, lost, back = (trace for _, trace in status.reports)
    assert first is None and back is None
    assert lost is not None and f"SparkUnavailableError: {LOST}" in lost
