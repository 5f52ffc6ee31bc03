"""Kafka helpers for tests: create a topic, produce, consume from the beginning."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable, Mapping

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.kafka import Admin, ConsumedMessage, Consumer, Producer

Payload = str | bytes | None
"""A key or value: str is UTF-8 encoded, None is a null."""

Record = Payload | tuple[Payload, Payload]
"""A value, or a (key, value) pair."""


def _bytes(value: Payload) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


class KafkaHelpers:
    """Short-lived Kafka clients against ``bootstrap_servers``."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers

    def admin(self) -> Admin:
        return Admin({"bootstrap.servers": self.bootstrap_servers})

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
    ) -> bool:
        """Create a topic; False if it existed already."""
        return self.admin().create_topic(name, partitions, replication_factor, configs)

    def list_topics(self) -> set[str]:
        return self.admin().list_topics()

    def produce(
        self,
        topic: str,
        records: Iterable[Record],
        partition: int | None = None,
        timeout: float = 30.0,
    ) -> int:
        """Produce values or (key, value) pairs and wait until all are acknowledged."""
        errors: list[ConnectError] = []
        producer = Producer(
            {"bootstrap.servers": self.bootstrap_servers, "linger.ms": "5"},
            on_error=errors.append,
        )
        count = 0
        try:
            for record in records:
                key, value = record if isinstance(record, tuple) else (None, record)
                producer.produce(topic, _bytes(value), _bytes(key), partition=partition)
                count += 1
            pending = producer.flush(timeout)
        finally:
            producer.close(1.0)
        if errors:
            raise errors[0]
        if pending:
            raise ConnectError(f"{pending} of {count} records to {topic} not acknowledged")
        return count

    def partitions(self, topic: str) -> int | None:
        """How many partitions ``topic`` has; None if it does not exist (yet)."""
        admin = self.admin()
        if topic not in admin.list_topics():
            return None
        description = admin.describe_topic(topic)
        return description.partitions if description is not None else None

    def consume(
        self, topic: str, count: int | None = None, timeout: float = 10.0, idle: float = 1.0
    ) -> list[ConsumedMessage]:
        """Records of ``topic`` from the beginning of every partition, without a group.

        Waits for the topic to exist, then returns once ``count`` records are read, or
        (without ``count``) once nothing new arrived for ``idle`` seconds, or after
        ``timeout`` with what was read so far.
        """
        deadline = time.monotonic() + timeout
        partitions = self._wait_for_topic(topic, deadline)
        if partitions is None:
            return []
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": f"connect-lite-testing-{uuid.uuid4().hex[:12]}",
                "enable.auto.commit": "false",
                "auto.offset.reset": "earliest",
            }
        )
        got: list[ConsumedMessage] = []
        try:
            # Assigned, not subscribed: no group join, which costs seconds (rebalance delay).
            consumer.assign({TopicPartition(topic, p): 0 for p in range(partitions)})
            quiet_since = time.monotonic()
            while (now := time.monotonic()) < deadline and (count is None or len(got) < count):
                batch = consumer.poll_batch(10_000, min(0.1, deadline - now))
                if batch:
                    got.extend(batch)
                    quiet_since = time.monotonic()
                elif count is None and time.monotonic() - quiet_since >= idle:
                    break
        finally:
            consumer.close()
        return got

    def _wait_for_topic(self, topic: str, deadline: float) -> int | None:
        while True:
            with contextlib.suppress(ConnectError):
                partitions = self.partitions(topic)
                if partitions:
                    return partitions
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)


__all__ = ["KafkaHelpers", "Payload", "Record"]
