"""A sink task's stop: closing the consumer revokes every partition once more (librdkafka runs
the rebalance callback inside ``close``), after the task committed and stopped its plugin.
That last revocation must not deliver the batch dropped at stop, commit it, or call the
stopped plugin, as Kafka's listener skips a task already stopped."""

from __future__ import annotations

import time

from connect_lite.api import SinkRecord, SinkTask, TopicPartition
from tests.unit.dataplane.test_sink_redelivery import TP0, TP1, FakeConsumer, message, sink_task


class RevokingConsumer(FakeConsumer):
    """Closes as librdkafka does: the revoke callback runs for the assigned partitions."""

    def close(self) -> None:
        self.on_revoke([TP0, TP1])


class JournalSink(SinkTask):
    """Writes down every call, so a call after ``stop`` shows."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, config: dict[str, str]) -> None:
        self.calls.append("start")

    def open(self, partitions: list[TopicPartition]) -> None:
        self.calls.append("open")

    def put(self, records: list[SinkRecord]) -> None:
        self.calls.append(f"put {[r.kafka_offset for r in records]}")

    def pre_commit(self, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        self.calls.append("pre_commit")
        return dict(offsets)

    def close(self, partitions: list[TopicPartition]) -> None:
        self.calls.append(f"close {sorted(p.partition for p in partitions)}")

    def stop(self) -> None:
        self.calls.append("stop")


def test_the_consumers_last_revocation_at_stop_calls_nothing_of_the_stopped_plugin() -> None:
    consumer, plugin = RevokingConsumer(), JournalSink()
    consumer.queue = [[message(TP0, 0)], [message(TP0, 1), message(TP0, 2)]]
    task = sink_task(plugin, consumer)
    task.iteration()  # offset 0 into the batch job
    task.iteration()  # offset 0 put; offsets 1 and 2 in the batch job, done, not yet put
    assert plugin.calls[-1] == "put [0]"
    deadline = time.monotonic() + 10
    while task._pipeline.busy and time.monotonic() < deadline:  # its job done: deliverable
        time.sleep(0.001)
    task.stop()
    task.close()
    # The batch in flight at stop is dropped, not put: only offset 0 was handed over, and
    # the commit at close is the task's last word; the plugin is closed once, then stopped.
    assert plugin.calls == ["start", "open", "put [0]", "pre_commit", "close [0, 1]", "stop"]
    assert consumer.commits == [{TP0: 1}]
    assert task.consumer.assigned == set()


def test_a_revocation_while_running_still_delivers_commits_and_closes() -> None:
    consumer, plugin = RevokingConsumer(), JournalSink()
    consumer.queue = [[message(TP0, 0)]]
    task = sink_task(plugin, consumer)
    task.iteration()  # offset 0 into the batch job
    consumer.on_revoke([TP0])  # a rebalance takes TP0 away
    assert plugin.calls[-3:] == ["put [0]", "pre_commit", "close [0]"]
    assert consumer.commits == [{TP0: 1}]
    assert task.consumer.assigned == {TP1}
