"""A source task releases its Kafka clients when it stops: the producer, and the admin client
of its topic creator (which would otherwise hold a broker connection and four librdkafka
threads until the cyclic collector runs, and keep the embedded broker from exiting)."""

from __future__ import annotations

import time
from typing import Any

from connect_lite.api.records import SourceRecord
from connect_lite.config.batching import Batching
from connect_lite.config.topic_creation import TopicCreation
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.dataplane.topic_creation import TopicCreator
from connect_lite.kafka.admin import TopicDescription
from connect_lite.pipeline.source_job import SourceBatchResult
from connect_lite.protocol.states import State, TargetState
from connect_lite.storage.memory import open_memory_stores
from tests.unit.dataplane.fake_producer import RecordingProducer
from tests.unit.dataplane.fake_source import OnceSource


class PassThrough:
    keeps_topics = True

    def run(
        self, batch: list[SourceRecord], tolerate_errors: bool, send: object = None
    ) -> SourceBatchResult:
        rows = [
            (i, r.topic, None, None, str(r.value).encode(), None, None) for i, r in enumerate(batch)
        ]
        return SourceBatchResult(rows=rows, size=len(batch))

    def cancel(self) -> None:
        pass


class ClosingProducer(RecordingProducer):
    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class ClosingAdmin:
    def __init__(self) -> None:
        self.created: list[str] = []
        self.closed = 0

    def describe_topic(self, name: str) -> TopicDescription | None:
        return None

    def create_topic(self, name: str, *_args: Any) -> bool:
        self.created.append(name)
        return True

    def close(self) -> None:
        self.closed += 1


class Statuses:
    def __init__(self) -> None:
        self.states: list[State] = []

    def task(self, connector: str, task: int, state: State, trace: str | None, _v: Any) -> None:
        self.states.append(state)


def test_a_stopped_source_task_closes_its_producer_and_its_topic_creators_admin() -> None:
    admin, producer = ClosingAdmin(), ClosingProducer()
    creation = TopicCreation.from_config(
        {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1",
        }
    )
    task = WorkerSourceTask(
        plugin=OnceSource([SourceRecord({"p": 0}, {"o": 0}, "new-topic", "v")]),
        task_config={},
        job=PassThrough(),
        producer_factory=lambda **_: producer,
        offsets=open_memory_stores().offsets,
        topic_creator=TopicCreator(admin, creation),  # type: ignore[arg-type]
        flush_interval_ms=60_000,
        flush_timeout_ms=1_000,
        batching=Batching(max_records=10, max_wait_ms=10),
        connector="c",
        task=0,
        status=Statuses(),
        target=TargetState.RUNNING,
    )
    task.start()
    try:
        deadline = time.monotonic() + 10
        while not producer.values and time.monotonic() < deadline:
            time.sleep(0.01)  # waiting for a condition: the record produced
        assert producer.values == [b"v"] and admin.created == ["new-topic"]
        assert admin.closed == 0, "the admin client lives as long as the task"
    finally:
        task.stop()
        assert task.join(10)
    assert (producer.closed, admin.closed) == (1, 1)
