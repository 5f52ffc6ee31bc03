"""Readers of offset ranges, for Spark's executors: assign-only consumers, no group, no commits.

A sink task's consumer owns the group on the driver (assignment, rebalances, commits) and plans
each batch as offset ranges; the executors read the ranges with these readers. A reader is built
from the task consumer's own merged config (overrides, security, everything the worker gave
it), less what only a group member uses, and is kept per Python worker process and config, so
a worker reads every batch with the same connections. It is closed when its process retires
(``executor_clients.close_all``).

A range's end comes from the broker's offsets, never from a count of records: a reader stops at
the end, or where the records stop arriving for ``idle`` seconds (Tansu's high watermark can
run ahead of what a fetch returns for a moment, and a compacted or transactional topic has
gaps). What it read is all it reports: a short range means "more later", never a loss.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping

import confluent_kafka

from connect_lite.api.records import TopicPartition
from connect_lite.kafka import executor_clients
from connect_lite.kafka.consumer import ConsumedMessage, to_messages
from connect_lite.kafka.native import new_client, to_connect_error, to_native

GROUP_ONLY_KEYS = (
    "group.instance.id",
    "partition.assignment.strategy",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "group.protocol",
    "group.remote.assignor",
    "auto.commit.interval.ms",
)
"""Consumer keys of a group member that an assign-only reader has no use for."""

READER_SETTINGS = {
    "enable.auto.commit": "false",
    "enable.auto.offset.store": "false",
    "enable.partition.eof": "false",
}


def reader_config(consumer_config: Mapping[str, str]) -> dict[str, str]:
    """An executor-side reader's config from a sink task consumer's merged config. It keeps
    ``group.id`` (confluent-kafka wants one), but never joins the group nor commits to it."""
    config = {k: v for k, v in consumer_config.items() if k not in GROUP_ONLY_KEYS}
    config.update(READER_SETTINGS)
    if "client.id" in config:
        config["client.id"] = f"{config['client.id']}-reader"
    return config


class RangeReader:
    """One assign-only consumer that reads ranges of one partition at a time."""

    def __init__(self, config: Mapping[str, str]) -> None:
        self._consumer = new_client(confluent_kafka.Consumer, config, "consumer")

    def read(
        self,
        tp: TopicPartition,
        start: int,
        end: int,
        most: int,
        idle: float,
        quiet: float | None = None,
    ) -> Iterator[list[ConsumedMessage]]:
        """The messages of ``[start, end)`` of ``tp`` in offset order, in lists of at most
        ``most``. It stops at ``end``, once nothing arrived for ``idle`` seconds, or, with
        ``quiet``, once nothing more arrived for that long after a first message (the end
        of a range whose end is not known: what the partition has now)."""
        if end <= start:
            return
        try:
            self._consumer.assign([to_native(tp, start)])
        except (confluent_kafka.KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, f"cannot read {tp.topic}-{tp.partition}") from exc
        try:
            position = start
            quiet_since = time.monotonic()
            while position < end:
                try:
                    most_now = min(most, end - position)
                    raw = self._consumer.consume(num_messages=most_now, timeout=0.1)
                except (confluent_kafka.KafkaException, RuntimeError) as exc:
                    raise to_connect_error(exc, "consume failed") from exc
                messages = to_messages(raw)
                inside = [m for m in messages if m.offset < end]
                if inside:
                    position = inside[-1].offset + 1
                    quiet_since = time.monotonic()
                    if quiet is not None:
                        idle = quiet
                    yield inside
                if len(inside) < len(messages):
                    return  # a message at or past the end: nothing more is inside
                if not messages and time.monotonic() - quiet_since >= idle:
                    return
        finally:
            with contextlib.suppress(confluent_kafka.KafkaException, RuntimeError):
                self._consumer.unassign()

    def close(self) -> None:
        with contextlib.suppress(confluent_kafka.KafkaException, RuntimeError):
            self._consumer.close()


def reader(config: Mapping[str, str]) -> RangeReader:
    """This process's reader for ``config``, built on first use (closed by
    ``executor_clients.close_all`` when the process retires)."""
    return executor_clients.cached("reader", config, RangeReader)


__all__ = ["RangeReader", "reader", "reader_config"]
