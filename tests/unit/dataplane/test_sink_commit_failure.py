"""A refused offset commit (UNKNOWN_MEMBER_ID after the broker was away, a timeout) is
logged and counted, and the sink task goes on, as Kafka's WorkerSinkTask does; the next commit
commits the offsets again. WorkerSinkTask over fakes."""

from __future__ import annotations

import logging

import pytest

from connect_lite.api import ConnectError, SinkRecord, SinkTask, TopicPartition
from tests.unit.dataplane.sink_loop import until
from tests.unit.dataplane.test_sink_redelivery import TP0, FakeConsumer, message, sink_task


class RefusingConsumer(FakeConsumer):
    """Its group refuses the first ``refusals`` commits."""

    def __init__(self, refusals: int) -> None:
        super().__init__()
        self.refusals = refusals

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.refusals > 0:
            self.refusals -= 1
            raise ConnectError("offset commit failed: Broker: Unknown member (UNKNOWN_MEMBER_ID)")
        super().commit(offsets)


class Collecting(SinkTask):
    def __init__(self) -> None:
        self.offsets: list[int] = []

    def start(self, config: dict[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        self.offsets += [r.kafka_offset or 0 for r in records]

    def stop(self) -> None:
        pass


def test_a_refused_commit_is_logged_and_counted_and_the_next_one_commits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    consumer = RefusingConsumer(refusals=1)
    plugin = Collecting()
    task = sink_task(plugin, consumer)
    consumer.queue.append([message(TP0, 0), message(TP0, 1)])
    until(task, lambda: plugin.offsets == [0, 1])
    with caplog.at_level(logging.ERROR):
        task.commit_offsets()  # refused: no exception out of the task's loop
    assert consumer.commits == []
    assert "Commit of offsets" in caplog.text and "UNKNOWN_MEMBER_ID" in caplog.text
    assert task.counters.commit_failure == 1

    consumer.queue.append([message(TP0, 2)])
    until(task, lambda: plugin.offsets == [0, 1, 2])
    task.commit_offsets()
    assert consumer.commits == [{TP0: 3}]
    assert task.counters.commit_success == 1
