"""KafkaRecordWriter: the RecordWriter a sink task gets from its context, for records of its
own (the HTTP sink's result and error topics)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from connect_lite.api.connector import RecordWriter
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.kafka import Admin, Producer

_CLIENT_KEYS = ("client.id",)
"""What a writer to another cluster keeps of the worker's producer settings: nothing that
could carry the worker's credentials there."""


def client_configs(
    producer_config: Mapping[str, str],
    admin_config: Mapping[str, str],
    bootstrap_servers: str | None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The worker's settings for its own Kafka; for another cluster, only its address (and
    the client id): the worker's credentials are never sent to a cluster a connector names."""
    if bootstrap_servers and bootstrap_servers != producer_config.get("bootstrap.servers"):
        keep = {k: v for k, v in producer_config.items() if k in _CLIENT_KEYS}
        return {**keep, "bootstrap.servers": bootstrap_servers}, {
            "bootstrap.servers": bootstrap_servers
        }
    return dict(producer_config), dict(admin_config)


class KafkaRecordWriter(RecordWriter):
    """A producer (and, for ``ensure_topic``, an admin client) of the task's own."""

    def __init__(
        self,
        producer_config: Mapping[str, str],
        admin_config: Mapping[str, str],
        bootstrap_servers: str | None = None,
    ) -> None:
        producer_config, admin_config = client_configs(
            producer_config, admin_config, bootstrap_servers
        )
        self._admin_config = admin_config
        self._failures: list[ConnectError] = []
        self._lock = threading.Lock()
        self._producer = Producer(producer_config, on_error=self._failed)
        self._topics: set[str] = set()

    def _failed(self, error: ConnectError) -> None:
        with self._lock:
            self._failures.append(error)

    def ensure_topic(self, topic: str, partitions: int = 1, replication_factor: int = -1) -> None:
        if topic in self._topics:
            return
        with Admin(self._admin_config) as admin:
            if admin.describe_topic(topic) is None:
                admin.create_topic(topic, partitions, replication_factor)
        self._topics.add(topic)

    def write(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[tuple[str, bytes | None]] = (),
    ) -> None:
        self._producer.produce(topic, value, key, headers=list(headers) or None)

    def flush(self, timeout_s: float = 30.0) -> None:
        pending = self._producer.flush(timeout_s)
        with self._lock:
            failures, self._failures = self._failures, []
        if failures:
            raise RetriableError(f"{len(failures)} records not written: {failures[0]}")
        if pending:
            raise RetriableError(f"{pending} records not acknowledged in {timeout_s:g} s")

    def close(self) -> None:
        self._producer.close()


def factory(producer_config: Mapping[str, str], admin_config: Mapping[str, str]) -> Any:
    """What a task's context calls for a writer (``bootstrap_servers`` or None)."""

    def make(bootstrap_servers: str | None) -> KafkaRecordWriter:
        return KafkaRecordWriter(producer_config, admin_config, bootstrap_servers)

    return make
