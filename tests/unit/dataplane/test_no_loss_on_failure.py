"""Nothing is lost or committed early when a batch's Spark job or a produce fails: the task
fails, and no offset moves past a record that was not delivered (a source) or handed to
``put`` (a sink). WorkerSourceTask and WorkerSinkTask over memory stores and fakes.

Each batch is released by a gate (the plugin's poll, the consumer's fetch) only once the
batches before it reached a given point, so batch N of a test is exactly its N-th poll."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from connect_lite.api.connector import SinkTask, SourceTask
from connect_lite.api.errors import RetriableError
from connect_lite.api.records import RecordMetadata, SinkRecord, SourceRecord
from connect_lite.config.batching import Batching
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane.sink_task import WorkerSinkTask
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.dataplane.task import WorkerTask
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.record_errors import JobFailedError
from connect_lite.pipeline.sink_job import SinkBatchResult
from connect_lite.pipeline.source_job import SourceBatchResult
from connect_lite.protocol.states import State, TargetState
from connect_lite.storage.memory import open_memory_stores
from tests.unit.dataplane.fake_producer import DeliveringProducer
from tests.unit.dataplane.test_sink_redelivery import TP0, FakeConsumer, FakeJob, message

PER_BATCH = 3
PARTITION = {"file": "in.txt"}
JOB_FAILED = "Job aborted due to stage failure: executor lost"


class RecordingStatus:
    """Keeps the reports; ``on_failed`` runs when FAILED is reported (before the task closes)."""

    def __init__(self, on_failed: Callable[[], None] = lambda: None) -> None:
        self.reports: list[tuple[State, str | None]] = []
        self.on_failed = on_failed

    def task(self, connector: str, task: int, state: State, trace: str | None, _v: Any) -> None:
        self.reports.append((state, trace))
        if state is State.FAILED:
            self.on_failed()


def wait_until_failed(task: WorkerTask) -> None:
    deadline = time.monotonic() + 20
    while not task.failed and time.monotonic() < deadline:
        time.sleep(0.01)  # waiting for a condition: the task failed
    failed = task.failed
    if not failed:
        task.stop()
    assert task.join(20)
    assert failed


# -- source ------------------------------------------------------------------------------------
def values_of(batch: int) -> list[bytes]:
    """Batch ``batch``'s values (batches count from 1)."""
    return [f"b{batch}r{i}".encode() for i in range(PER_BATCH)]


def last_offset_of(batch: int) -> dict[str, int]:
    return {"line": batch * PER_BATCH - 1}


class GatedSource(SourceTask):
    """Returns batch N+1 (PER_BATCH records, offsets counting on) once ``ready(N)``, N being
    how many batches it returned; else waits a little and returns None."""

    def __init__(self, ready: Callable[[int], bool]) -> None:
        self.ready = ready
        self.returned = 0

    def version(self) -> str:
        return "1.0"

    def start(self, config: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        if not self.ready(self.returned):
            time.sleep(0.005)  # as a source with nothing new would wait
            return None
        self.returned += 1
        first = (self.returned - 1) * PER_BATCH
        return [
            SourceRecord(PARTITION, {"line": first + i}, "t", value.decode())
            for i, value in enumerate(values_of(self.returned))
        ]

    def stop(self) -> None:
        pass


class CommitRecordSource(GatedSource):
    """Overrides commit_record: the task then asks for a delivery report per record."""

    def __init__(self, ready: Callable[[int], bool]) -> None:
        super().__init__(ready)
        self.committed: list[str] = []

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.committed.append(str(record.value))


def eventually(condition: Callable[[], bool]) -> None:
    """Hold until ``condition()`` or 10 s, and never fail: the fakes below hold a task's thread
    with it until another catches up, and the test then checks what happened (unlike
    connect_lite.testing.wait_for, which fails at its deadline)."""
    deadline = time.monotonic() + 10
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)  # waiting for a condition


class FailingJob:
    """Counts its runs (started jobs); run ``failing`` raises JobFailedError (not
    retriable: Spark is reachable, the job itself failed) once ``fail_when()`` holds."""

    def __init__(self, failing: int | None, fail_when: Callable[[], bool]) -> None:
        self.failing = failing
        self.fail_when = fail_when
        self.runs = 0

    def start_run(self) -> None:
        self.runs += 1
        if self.runs == self.failing:
            eventually(self.fail_when)
            raise JobFailedError(JOB_FAILED)


class FailingSourceJob(FailingJob):
    """The batch's Spark job: passes the values through, unless it fails."""

    def __init__(self, failing: int | None = None, fail_when: Callable[[], bool] = bool) -> None:
        super().__init__(failing, fail_when)

    def run(
        self, batch: list[SourceRecord], tolerate_errors: bool, send: object = None
    ) -> SourceBatchResult:
        self.start_run()
        rows = [
            (i, r.topic, None, None, str(r.value).encode(), None, None) for i, r in enumerate(batch)
        ]
        return SourceBatchResult(rows=rows, size=len(batch))

    def cancel(self) -> None:
        pass


def source_task(
    plugin: SourceTask,
    job: FailingSourceJob,
    producer_factory: Callable[..., Any],
    offsets: Any,
    status: RecordingStatus,
) -> WorkerSourceTask:
    return WorkerSourceTask(
        plugin=plugin,
        task_config={},
        job=job,
        producer_factory=producer_factory,
        offsets=offsets,
        flush_interval_ms=0,  # offsets are committed at every turn of the loop
        flush_timeout_ms=1_000,
        batching=Batching(max_records=100, max_wait_ms=10),
        connector="c",
        task=0,
        status=status,
        target=TargetState.RUNNING,
    )


def test_a_failed_spark_job_fails_the_source_task_and_commits_nothing_of_its_batch() -> None:
    stores = open_memory_stores()
    producer = DeliveringProducer(fails=lambda _value: False)

    def ready(returned: int) -> bool:
        if returned in (1, 2):  # batches 1 and 2 go on once acknowledged and committed
            return stores.offsets.get("c", PARTITION) == last_offset_of(returned)
        return returned == 0 or job.runs == returned  # once the batch before is in its job

    plugin = GatedSource(ready)
    # Batch 3's job fails once batch 4 was polled: batch 4 goes to the batch job behind it.
    job = FailingSourceJob(3, lambda: plugin.returned == 4)

    def batch_4_started() -> None:  # so that closing the task cannot cancel it unstarted
        in_flight = task._pipeline._in_flight
        if in_flight is not None:
            eventually(lambda: in_flight.result.running() or in_flight.result.done())

    status = RecordingStatus(on_failed=batch_4_started)
    task = source_task(plugin, job, lambda **_: producer, stores.offsets, status)
    task.start()
    wait_until_failed(task)

    assert plugin.returned == 4  # the precondition: batch 4 was polled while batch 3 ran
    state, trace = status.reports[-1]
    assert state is State.FAILED and trace is not None
    assert f"JobFailedError: {JOB_FAILED}" in trace
    assert stores.offsets.all("c") == [(PARTITION, last_offset_of(2))]
    assert producer.values == values_of(1) + values_of(2)  # nothing of batch 3, or after it


@pytest.mark.parametrize("plugin_class", [GatedSource, CommitRecordSource])
def test_a_failed_produce_fails_the_source_task_and_its_offsets_are_never_written(
    plugin_class: type[GatedSource],
) -> None:
    """Batch 2's second record is reported failed by the producer: batch 1's offsets were
    committed, and neither batch 2's nor batch 3's (delivered after it) ever are."""
    stores = open_memory_stores()
    job, status = FailingSourceJob(), RecordingStatus()
    producers: list[DeliveringProducer] = []

    def producer_factory(on_error: Callable[[Any], None] | None = None) -> DeliveringProducer:
        producers.append(DeliveringProducer(lambda value: value == b"b2r1", on_error))
        return producers[-1]

    def ready(returned: int) -> bool:
        if returned == 1:
            return stores.offsets.get("c", PARTITION) == last_offset_of(1)
        return job.runs >= returned

    plugin = plugin_class(ready)
    task = source_task(plugin, job, producer_factory, stores.offsets, status)
    task.start()
    wait_until_failed(task)

    (producer,) = producers
    assert b"b2r1" in producer.values  # the precondition: the failing record was produced
    state, trace = status.reports[-1]
    assert state is State.FAILED and trace is not None
    assert "Unrecoverable exception from producer send callback" in trace
    assert f"delivery of {b'b2r1'!r} failed" in trace
    assert stores.offsets.all("c") == [(PARTITION, last_offset_of(1))]
    if isinstance(plugin, CommitRecordSource):  # only records the broker acknowledged
        assert set(plugin.committed) == {v.decode() for v in producer.delivered}
        assert "b2r1" not in plugin.committed


class QueueFullProducer(DeliveringProducer):
    """Delivers every record, but refuses ``refused`` (and any record after it) as
    confluent-kafka's produce does when its queue stays full."""

    def __init__(self, refused: bytes, on_error: Callable[[Any], None] | None = None) -> None:
        super().__init__(lambda _value: False, on_error)
        self.refused = refused

    def produce(self, topic: str, value: bytes, *args: Any, **kwargs: Any) -> None:
        if value == self.refused:
            raise RetriableError("producer queue full for 60s producing to t")
        super().produce(topic, value, *args, **kwargs)


@pytest.mark.parametrize("plugin_class", [GatedSource, CommitRecordSource])
def test_a_produce_refused_part_way_through_a_batch_commits_nothing_of_it(
    plugin_class: type[GatedSource],
) -> None:
    """Batch 2's first record is produced, its second refused: the task fails, and batch 2's
    offsets are never written (its last record never reached Kafka)."""
    stores = open_memory_stores()
    job, status = FailingSourceJob(), RecordingStatus()
    producers: list[QueueFullProducer] = []

    def producer_factory(on_error: Callable[[Any], None] | None = None) -> QueueFullProducer:
        producers.append(QueueFullProducer(b"b2r1", on_error))
        return producers[-1]

    def ready(returned: int) -> bool:
        if returned == 1:
            return stores.offsets.get("c", PARTITION) == last_offset_of(1)
        return returned == 0

    plugin = plugin_class(ready)
    task = source_task(plugin, job, producer_factory, stores.offsets, status)
    task.start()
    wait_until_failed(task)

    (producer,) = producers
    assert producer.values == [*values_of(1), b"b2r0"]  # the precondition: part of batch 2
    state, trace = status.reports[-1]
    assert state is State.FAILED and trace is not None
    assert "producer queue full" in trace
    assert stores.offsets.all("c") == [(PARTITION, last_offset_of(1))]


class BlockingProducer(DeliveringProducer):
    """Holds a batch's produce until ``go()`` (or 10 s), noting whether it went."""

    def __init__(self, go: Callable[[], bool], on_error: Callable[[Any], None] | None = None):
        super().__init__(lambda _value: False, on_error)
        self.go = go
        self.went: list[bool] = []

    def produce_rows(self, rows: Any) -> None:
        eventually(self.go)
        self.went.append(self.go())
        super().produce_rows(rows)


def test_a_batch_is_produced_while_the_next_batch_runs_in_its_job() -> None:
    """Batch 1's produce waits for batch 2's job to start: it can only, and the task goes on,
    if produce and the next job overlap. Both are produced in order and committed."""
    stores = open_memory_stores()
    job, status = FailingSourceJob(), RecordingStatus()
    producers: list[BlockingProducer] = []

    def producer_factory(on_error: Callable[[Any], None] | None = None) -> BlockingProducer:
        producers.append(BlockingProducer(lambda: bool(producers[0].went) or job.runs == 2))
        return producers[-1]

    def ready(returned: int) -> bool:  # batch 2 once batch 1 is in its job, then no more
        return returned == 0 or (returned == 1 and job.runs == 1)

    plugin = GatedSource(ready)
    task = source_task(plugin, job, producer_factory, stores.offsets, status)
    task.start()
    eventually(lambda: stores.offsets.get("c", PARTITION) == last_offset_of(2))
    task.stop()
    assert task.join(20)

    (producer,) = producers
    assert producer.went[0]  # batch 1 was still being produced when batch 2's job started
    assert producer.values == values_of(1) + values_of(2)
    assert stores.offsets.all("c") == [(PARTITION, last_offset_of(2))]
    assert all(state is not State.FAILED for state, _ in status.reports)


def test_a_produce_that_fails_while_the_next_batch_runs_fails_both() -> None:
    """Batch 1's produce is refused part way while batch 2 is polled and in its job: the
    task fails, nothing of batch 2 is produced and no offset is written."""
    stores = open_memory_stores()
    job, status = FailingSourceJob(), RecordingStatus()
    producers: list[QueueFullProducer] = []

    class RefusedOnceBatch2Polled(QueueFullProducer):
        def produce(self, topic: str, value: bytes, *args: Any, **kwargs: Any) -> None:
            if value == self.refused:
                eventually(lambda: plugin.returned == 2)
            super().produce(topic, value, *args, **kwargs)

    def producer_factory(on_error: Callable[[Any], None] | None = None) -> QueueFullProducer:
        producers.append(RefusedOnceBatch2Polled(b"b1r1", on_error))
        return producers[-1]

    plugin = GatedSource(lambda returned: returned == 0 or (returned == 1 and job.runs == 1))
    task = source_task(plugin, job, producer_factory, stores.offsets, status)
    task.start()
    wait_until_failed(task)

    (producer,) = producers
    assert plugin.returned == 2  # the precondition: batch 2 came while batch 1 was produced
    assert producer.values == [b"b1r0"]
    state, trace = status.reports[-1]
    assert state is State.FAILED and trace is not None and "producer queue full" in trace
    assert stores.offsets.all("c") == []


# -- sink --------------------------------------------------------------------------------------
class GatedConsumer(FakeConsumer):
    """Fetches batch N+1 of ``batches`` once ``ready(N)``, N being how many it fetched."""

    def __init__(self, batches: list[list[ConsumedMessage]], ready: Callable[[int], bool]):
        super().__init__()
        self.batches = batches
        self.ready = ready
        self.fetched = 0

    def poll_batch(self, room: int, timeout: float) -> list[ConsumedMessage]:
        if self.fetched == len(self.batches) or not self.ready(self.fetched):
            time.sleep(min(timeout, 0.005))  # a real poll waits for its timeout
            return []
        self.fetched += 1
        return self.batches[self.fetched - 1]


class FailingSinkJob(FailingJob, FakeJob):
    """The batch's Spark job: each message becomes a SinkRecord, unless it fails."""

    def run(self, messages: list[Any], tolerate_errors: bool = False) -> SinkBatchResult:
        self.start_run()
        return super().run(messages, tolerate_errors)


class RecordingSink(SinkTask):
    def __init__(self) -> None:
        self.put_offsets: list[list[int]] = []

    def start(self, config: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        self.put_offsets.append([r.kafka_offset or 0 for r in records])

    def stop(self) -> None:
        pass


def test_a_failed_spark_job_fails_the_sink_task_and_commits_nothing_past_the_last_put() -> None:
    """Batches of offsets [0, 1], [2, 3], [4, 5] (its job fails), [6, 7]."""
    batches = [[message(TP0, o), message(TP0, o + 1)] for o in range(0, 8, 2)]
    plugin, status = RecordingSink(), RecordingStatus()

    def ready(fetched: int) -> bool:
        if fetched in (1, 2):  # batches 1 and 2 go on once handed to put and committed
            return bool(consumer.commits) and consumer.commits[-1] == {TP0: fetched * 2}
        return fetched == 0 or job.runs == fetched  # once the batch before is in its job

    consumer = GatedConsumer(batches, ready)
    # Batch 3's job fails once batch 4 was fetched: batch 4 is in the batch job behind it.
    job = FailingSinkJob(3, lambda: consumer.fetched == 4)
    task = WorkerSinkTask(
        plugin=plugin,
        task_config={"topics": "t"},
        subscription=SinkSubscription.of_task({"topics": "t"}),
        job=job,  # type: ignore[arg-type]
        consumer_factory=lambda: consumer,
        flush_interval_ms=0,  # offsets are committed at every turn of the loop
        batching=Batching(max_records=100, max_wait_ms=10),
        connector="c",
        task=0,
        status=status,  # type: ignore[arg-type]
        target=TargetState.RUNNING,
    )
    task.start()
    wait_until_failed(task)

    assert consumer.fetched == 4  # the precondition: batch 4 was fetched while batch 3 ran
    state, trace = status.reports[-1]
    assert state is State.FAILED and trace is not None
    assert f"JobFailedError: {JOB_FAILED}" in trace
    assert plugin.put_offsets == [[0, 1], [2, 3]]
    assert consumer.commits == [{TP0: 2}, {TP0: 4}]
    assert task.offsets.current == {TP0: 4}
