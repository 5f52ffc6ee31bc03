"""A RetriableError from put: the same records again after Kafka's backoff, nothing overtaking
them, partitions paused meanwhile, revoked partitions forgotten. WorkerSinkTask over fakes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from connect_lite.api import Headers, RetriableError, SinkRecord, SinkTask, TopicPartition
from connect_lite.config.batching import Batching
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane.sink_task import WorkerSinkTask
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.sink_job import SinkBatchResult
from connect_lite.protocol.states import TargetState
from tests.unit.dataplane.sink_loop import Status, until

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


def message(tp: TopicPartition, offset: int) -> ConsumedMessage:
    return ConsumedMessage(tp.topic, tp.partition, offset, None, b"v", [], None, "NoTimestampType")


class FakeConsumer:
    def __init__(self) -> None:
        self.queue: list[list[ConsumedMessage]] = []
        self.paused: set[TopicPartition] = set()
        self.commits: list[dict[TopicPartition, int]] = []
        self.seeks: list[tuple[TopicPartition, int]] = []
        self.polls = 0
        self.on_poll: Callable[[], None] | None = None
        self.on_assign: Any = None
        self.on_revoke: Any = None

    def subscribe(self, topics: Any, pattern: Any, on_assign: Any, on_revoke: Any) -> None:
        self.on_assign, self.on_revoke = on_assign, on_revoke
        on_assign([TP0, TP1])

    def poll_batch(self, room: int, timeout: float) -> list[ConsumedMessage]:
        self.polls += 1
        if self.on_poll is not None:
            hook, self.on_poll = self.on_poll, None
            hook()
        if not self.queue:
            time.sleep(min(timeout, 0.01))  # a real poll waits for its timeout
            return []
        batch = self.queue.pop(0)
        if batch:
            self.queue.insert(0, [])  # one batch per collect: the next poll finds nothing
        return [m for m in batch if TopicPartition(m.topic, m.partition) not in self.paused]

    def pause(self, tps: list[TopicPartition]) -> None:
        self.paused.update(tps)

    def resume(self, tps: list[TopicPartition]) -> None:
        self.paused.difference_update(tps)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeks.append((tp, offset))

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.commits.append(dict(offsets))

    def close(self) -> None:
        pass


class FakeJob:
    """Converts each message into a SinkRecord at once (the Spark job is not the subject)."""

    job_group = "group"

    def run(self, messages: list[Any], tolerate_errors: bool = False) -> SinkBatchResult:
        records = [
            SinkRecord(m.topic, m.partition, m.offset, None, m.value, None, None, None,
                       "NoTimestampType", Headers())
            for m in messages
        ]  # fmt: skip
        return SinkBatchResult(
            records=records,
            indices=list(range(len(messages))),
            inputs=messages,
        )

    def cancel(self) -> None:
        pass


class FlakySink(SinkTask):
    """put raises RetriableError for the first ``failures`` calls, asking a 1 ms backoff."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[list[tuple[int, int]]] = []

    def start(self, config: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        self.calls.append([(r.kafka_partition or 0, r.kafka_offset or 0) for r in records])
        if self.failures > 0:
            self.failures -= 1
            self.context.timeout(1)
            raise RetriableError("not now")

    def stop(self) -> None:
        pass


class RecordingStatus:
    """A status store that keeps each (state, trace) the task reports."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, str | None]] = []

    def task(self, connector: str, task: int, state: Any, trace: Any, *rest: Any) -> None:
        self.reports.append((str(state.value), trace))


def sink_task(plugin: SinkTask, consumer: FakeConsumer, status: Any = None) -> WorkerSinkTask:
    task = WorkerSinkTask(
        plugin=plugin,
        task_config={"topics": "t"},
        subscription=SinkSubscription.of_task({"topics": "t"}),
        job=FakeJob(),  # type: ignore[arg-type]
        consumer_factory=lambda: consumer,
        flush_interval_ms=60_000,
        batching=Batching(max_records=100, max_wait_ms=1000),
        connector="c",
        task=0,
        status=status or Status(),
        target=TargetState.RUNNING,
    )
    task.initialize()
    return task


def test_the_same_records_are_handed_over_again_and_nothing_overtakes_them() -> None:
    consumer, plugin = FakeConsumer(), FlakySink(failures=2)
    consumer.queue = [[message(TP0, 0), message(TP0, 1)], [message(TP0, 2)]]
    task = sink_task(plugin, consumer)
    task.iteration()  # batch 1 into the batch job
    task.iteration()  # batch 1 to put: refused; batch 2 now in flight behind it
    assert plugin.calls == [[(0, 0), (0, 1)]]
    assert consumer.paused == {TP0, TP1}  # nothing new is fetched while it waits
    assert task.offsets.current == {}  # no offset advances past records not handed over
    until(task, lambda: len(plugin.calls) >= 4)
    assert plugin.calls == [[(0, 0), (0, 1)]] * 3 + [[(0, 2)]]  # batch 2 only after batch 1
    assert consumer.paused == set()
    assert task.offsets.current == {TP0: 3}


def test_while_records_wait_the_task_is_running_with_the_trace_and_a_retry_counted() -> None:
    consumer, plugin, status = FakeConsumer(), FlakySink(failures=2), RecordingStatus()
    consumer.queue = [[message(TP0, 0)]]
    task = sink_task(plugin, consumer, status)
    task.iteration()
    task.iteration()  # refused once
    assert status.reports[-1][0] == "RUNNING"
    assert "RetriableError: not now" in (status.reports[-1][1] or "")
    assert task.errors.counters.snapshot()["total-retries"] == 1
    assert task.errors.counters.snapshot()["last-error-timestamp"] > 0
    until(task, lambda: task.offsets.current == {TP0: 1})
    assert task.errors.counters.snapshot()["total-retries"] == 2
    assert status.reports[-1] == ("RUNNING", None)  # taken: the trace is gone


def test_the_wait_polls_the_paused_consumer_and_rewinds_what_it_fetched() -> None:
    consumer, plugin = FakeConsumer(), FlakySink(failures=1)
    consumer.queue = [[message(TP0, 0)]]
    task = sink_task(plugin, consumer)
    task.iteration()
    task.iteration()  # refused
    plugin.context.timeout(60_000)  # (ignored: the backoff was already chosen)
    assert task.delivery.waiting is not None
    task.delivery.waiting.retry_at = float("inf")  # a long backoff: the loop keeps polling
    consumer.queue = [[message(TP1, 7)]]
    consumer.paused.discard(TP1)  # e.g. fetched just before the pause
    polls = consumer.polls
    task.iteration()
    assert consumer.polls == polls + 1 and plugin.calls == [[(0, 0)]]
    assert (TP1, 7) in consumer.seeks  # read again once the partitions resume


def test_a_revocation_during_the_wait_forgets_the_revoked_partitions_records() -> None:
    consumer, plugin = FakeConsumer(), FlakySink(failures=1)
    consumer.queue = [[message(TP0, 0), message(TP1, 0)], [message(TP0, 1)]]
    task = sink_task(plugin, consumer)
    task.iteration()
    task.iteration()  # refused; [TP0@1] in flight
    assert task.delivery.waiting is not None
    task.delivery.waiting.retry_at = float("inf")
    consumer.on_poll = lambda: consumer.on_revoke([TP1])
    task.iteration()  # the rebalance runs inside the poll
    assert task.consumer.assigned == {TP0}
    assert (TP0, 1) in consumer.seeks  # the batch in flight was dropped, to be read again
    task.delivery.waiting.retry_at = 0.0
    task.iteration()
    assert plugin.calls[-1] == [(0, 0)]  # TP1's record is its new owner's now
    assert task.offsets.current == {TP0: 1}


def test_a_pause_during_the_wait_keeps_the_batch_in_flight_behind_it() -> None:
    consumer, plugin = FakeConsumer(), FlakySink(failures=1)
    consumer.queue = [[message(TP0, 0)], [message(TP0, 1)]]
    task = sink_task(plugin, consumer)
    task.iteration()
    task.iteration()  # refused; batch 2 in flight
    task.on_paused()
    task.on_resumed()
    assert plugin.calls == [[(0, 0)]]  # the batch in flight did not overtake
    assert consumer.paused == {TP0, TP1}  # still waiting: resuming the target does not fetch
    until(task, lambda: len(plugin.calls) >= 3)
    assert plugin.calls == [[(0, 0)], [(0, 0)], [(0, 1)]]


def test_a_failure_other_than_retriable_fails_the_task() -> None:
    class Broken(FlakySink):
        def put(self, records: list[SinkRecord]) -> None:
            raise ValueError("bad")

    consumer = FakeConsumer()
    consumer.queue = [[message(TP0, 0)]]
    task = sink_task(Broken(0), consumer)
    task.iteration()
    with pytest.raises(Exception, match="Exiting WorkerSinkTask due to unrecoverable exception"):
        task.iteration()


def test_a_task_with_neither_put_nor_put_dataframe_is_refused() -> None:
    class Empty(SinkTask):
        def start(self, config: dict[str, str]) -> None:
            pass

        def stop(self) -> None:
            pass

    with pytest.raises(Exception, match="implements neither put nor put_dataframe"):
        sink_task(Empty(), FakeConsumer())
