"""A source task whose batches the executors produce (a send config): a new topic is created
and recorded, and its first records go out through the task's own producer, before the
executors may produce to it; commit_record gets each sent record's placement; a failed
delivery in the executors fails the task and commits nothing of its batch.

The batch job here stands in for Spark: it "sends" the records of the topics its SendOrder
knows, and holds back the others, as pipeline/source_send.py does."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from connect_lite.api.connector import SourceTask
from connect_lite.api.errors import RetriableError
from connect_lite.api.records import RecordMetadata, SourceRecord
from connect_lite.config.batching import Batching
from connect_lite.config.topic_creation import TopicCreation
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.dataplane.topic_creation import TopicCreator
from connect_lite.pipeline.source_job import SourceBatchResult
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.protocol.states import State, TargetState
from connect_lite.storage.memory import open_memory_stores
from tests.unit.dataplane.fake_producer import RecordingProducer
from tests.unit.dataplane.test_source_task_clients import ClosingAdmin, Statuses


class ExecutorsStandIn:
    """Sends what its order allows into ``kafka`` (topic, value); returns the rest as rows."""

    def __init__(
        self, fail: bool = False, keeps_topics: bool = True, admin: ClosingAdmin | None = None
    ) -> None:
        self.kafka: list[tuple[str, bytes]] = []
        self.orders: list[SendOrder] = []
        self.fail = fail
        self.keeps_topics = keeps_topics
        """False stands for a job with transforms (a record's topic may change)."""
        self._admin = admin
        self.created_before_runs: list[list[str]] = []
        """The topics the admin had created when each run began."""

    def run(
        self, batch: list[SourceRecord], tolerate_errors: bool, send: SendOrder | None = None
    ) -> SourceBatchResult:
        assert send is not None, "the task has a send config"
        self.orders.append(send)
        if self._admin is not None:
            self.created_before_runs.append(list(self._admin.created))
        result = SourceBatchResult(len(batch))
        for i, r in enumerate(batch):
            value = str(r.value).encode()
            if send.known is None or r.topic in send.known:
                self.kafka.append((r.topic, value))
                result.sent.append(i)
                result.sent_topics.add(r.topic)
                result.placements[i] = (r.topic, 0, len(self.kafka) - 1, None)
            else:
                result.rows.append((i, r.topic, None, None, value, None, None))
        if self.fail:
            result.send_failure = "delivery to t failed: Broker: Message size too large"
        return result

    def cancel(self) -> None:
        pass


class Batches(SourceTask):
    """Returns one batch per poll, then nothing; keeps what commit_record was given."""

    def __init__(self, batches: Sequence[list[SourceRecord]]) -> None:
        self.batches = list(batches)
        self.committed: list[tuple[Any, RecordMetadata | None]] = []
        self._lock = threading.Lock()

    def version(self) -> str:
        return "1.0"

    def start(self, config: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        with self._lock:
            if self.batches:
                return self.batches.pop(0)
        time.sleep(0.01)  # as a source with nothing new would wait
        return None

    def stop(self) -> None:
        pass


class CommittingBatches(Batches):
    """Batches that wants commit_record (the task then asks for each record's placement)."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.committed.append((record.value, metadata))


class Tracker:
    def __init__(self) -> None:
        self.recorded: list[set[str]] = []

    def record(self, connector: str, topics: Any, task: int) -> None:
        self.recorded.append(set(topics))


def _records(topic: str, first: int, n: int) -> list[SourceRecord]:
    return [SourceRecord({"p": 0}, {"o": i}, topic, f"v{i}") for i in range(first, first + n)]


def _task(
    plugin: SourceTask,
    job: ExecutorsStandIn,
    producer: RecordingProducer,
    admin: ClosingAdmin | None = None,
    tracker: Tracker | None = None,
) -> tuple[WorkerSourceTask, Statuses, Any]:
    offsets = open_memory_stores().offsets
    creator = None
    if admin is not None:
        creation = TopicCreation.from_config(
            {
                "topic.creation.default.replication.factor": "1",
                "topic.creation.default.partitions": "1",
            }
        )
        creator = TopicCreator(admin, creation)  # type: ignore[arg-type]
    statuses = Statuses()
    task = WorkerSourceTask(
        plugin=plugin,
        task_config={},
        job=job,  # type: ignore[arg-type]
        producer_factory=lambda **_: producer,
        offsets=offsets,
        topic_creator=creator,
        topic_tracker=tracker,
        send_config={"bootstrap.servers": "127.0.0.1:9"},
        flush_interval_ms=50,
        flush_timeout_ms=1_000,
        batching=Batching(max_records=5, max_wait_ms=10),
        connector="c",
        task=0,
        status=statuses,
        target=TargetState.RUNNING,
    )
    return task, statuses, offsets


def _run_until(task: WorkerSourceTask, *conditions: Any) -> None:
    """Run the task until each condition holds in turn, then stop it and wait for it."""
    task.start()
    try:
        for condition in conditions:
            _until(condition)
    finally:
        task.stop()
        assert task.join(10)


def _until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)  # waiting for a condition of the task's threads


def test_a_new_topics_first_records_go_through_the_task_producer_then_the_executors() -> None:
    job, producer, admin, tracker = (
        ExecutorsStandIn(),
        RecordingProducer(),
        ClosingAdmin(),
        Tracker(),
    )
    plugin = Batches([_records("new", 0, 5), _records("new", 5, 5), _records("new", 10, 5)])
    task, _, offsets = _task(plugin, job, producer, admin, tracker)
    _run_until(task, lambda: len(job.kafka) == 10, lambda: offsets.get("c", {"p": 0}) == {"o": 14})
    assert producer.values == [f"v{i}".encode() for i in range(5)], "the held batch"
    assert job.kafka == [("new", f"v{i}".encode()) for i in range(5, 15)]
    assert admin.created == ["new"]
    assert job.orders[0].known == frozenset()
    assert all(order.known == frozenset({"new"}) for order in job.orders[1:])
    assert job.orders[0].config == {"bootstrap.servers": "127.0.0.1:9"}  # the task's own
    assert tracker.recorded and all(topics == {"new"} for topics in tracker.recorded)


def test_without_transforms_the_first_batchs_topic_is_created_before_its_job() -> None:
    """A sink subscribed to the topic then finds it while the first job waits for Spark; a
    topic that appears later is created at its send, as with transforms."""
    admin, producer = ClosingAdmin(), RecordingProducer()
    job = ExecutorsStandIn(admin=admin)
    plugin = Batches([_records("new", 0, 5), _records("new", 5, 5), _records("later", 10, 5)])
    task, _, offsets = _task(plugin, job, producer, admin, Tracker())
    _run_until(task, lambda: offsets.get("c", {"p": 0}) == {"o": 14})
    assert job.created_before_runs == [["new"], ["new"], ["new"]]
    assert admin.created == ["new", "later"], "each created once"
    assert job.orders[0].known == frozenset(), "not ready for the executors until recorded"


def test_with_transforms_a_new_topic_is_created_only_for_the_records_sent() -> None:
    admin, producer = ClosingAdmin(), RecordingProducer()
    job = ExecutorsStandIn(keeps_topics=False, admin=admin)
    task, _, offsets = _task(Batches([_records("new", 0, 5)]), job, producer, admin)
    _run_until(task, lambda: offsets.get("c", {"p": 0}) == {"o": 4})
    assert job.created_before_runs == [[]]
    assert admin.created == ["new"]


def test_without_creation_or_tracking_the_executors_send_every_topic() -> None:
    job, producer = ExecutorsStandIn(), RecordingProducer()
    task, _, offsets = _task(Batches([_records("t", 0, 5)]), job, producer)
    _run_until(task, lambda: offsets.get("c", {"p": 0}) == {"o": 4})
    assert job.orders[0].known is None and producer.values == []
    assert [v for _, v in job.kafka] == [f"v{i}".encode() for i in range(5)]


def test_commit_record_gets_each_sent_records_placement() -> None:
    job, producer = ExecutorsStandIn(), RecordingProducer()
    plugin = CommittingBatches([_records("t", 0, 3)])
    task, _, _ = _task(plugin, job, producer)
    _run_until(task, lambda: len(plugin.committed) == 3)
    assert job.orders[0].each is True
    assert plugin.committed == [(f"v{i}", RecordMetadata("t", 0, i, None)) for i in range(3)]


def test_a_failed_delivery_in_the_executors_fails_the_task_and_commits_nothing() -> None:
    job, producer = ExecutorsStandIn(fail=True), RecordingProducer()
    task, statuses, offsets = _task(Batches([_records("t", 0, 5)]), job, producer)
    _run_until(task, lambda: State.FAILED in statuses.states)
    assert offsets.get("c", {"p": 0}) is None


class Neither(SourceTask):
    def start(self, config: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass


def test_a_task_with_neither_poll_nor_poll_dataframe_fails_at_start() -> None:
    job, producer = ExecutorsStandIn(), RecordingProducer()
    task, statuses, _ = _task(Neither(), job, producer)
    task.start()
    assert task.join(10)
    assert statuses.states == [State.FAILED] and job.orders == []


class FailingOnce(Batches):
    """A poll that raises RetriableError once (a database away), then gives its batches."""

    failed = False

    def poll(self) -> list[SourceRecord] | None:
        if not self.failed:
            self.failed = True
            raise RetriableError("the database is away")
        return super().poll()


def test_a_retriable_error_from_poll_is_retried_and_the_task_keeps_running() -> None:
    job, producer = ExecutorsStandIn(), RecordingProducer()
    plugin = FailingOnce([_records("t", 0, 5)])
    task, statuses, offsets = _task(plugin, job, producer)
    _run_until(task, lambda: offsets.get("c", {"p": 0}) == {"o": 4})
    assert plugin.failed
    assert State.FAILED not in statuses.states
