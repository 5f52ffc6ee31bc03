"""A thin admin client: topics and consumer-group offsets, every call bounded by a timeout."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.kafka.native import (
    LIBRDKAFKA_LOG,
    describe,
    from_native,
    new_client,
    to_connect_error,
    to_native,
)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
TOLERATED = object()
FIRST_ATTEMPT_S = 1.0
"""How long the first try to reach the cluster at start-up waits before saying why it fails."""
WAIT_SLICE_S = 0.5
"""The longest single wait for the cluster after the first: a signal is handled between them."""


@dataclass(frozen=True)
class TopicDescription:
    """A topic as the broker reports it. ``configs`` holds every config the broker returned."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)


class Admin:
    """Admin operations; failures raise RetriableError (transient) or ConnectError."""

    def __init__(self, config: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self._client: AdminClient | None = new_client(AdminClient, config, "admin client")
        self._timeout = timeout

    @property
    def _admin(self) -> AdminClient:
        if self._client is None:
            raise ConnectError("The admin client is closed")
        return self._client

    def close(self) -> None:
        """Release the client now: its connections and threads go with the last reference
        to it (confluent-kafka's AdminClient has no close), which this drops. Otherwise an
        Admin held in a reference cycle keeps its broker connection until the cyclic
        collector runs, and the embedded broker does not exit on SIGTERM while a client is
        connected. Safe to call twice; a closed Admin's calls raise ConnectError."""
        self._client = None

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _wait(
        self, future: Future[Any], what: str, timeout: float | None, tolerate: int | None = None
    ) -> Any:
        """The future's result; ``TOLERATED`` if it failed with error code ``tolerate``."""
        try:
            return future.result(timeout=timeout or self._timeout)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            if tolerate is not None and isinstance(err, KafkaError) and err.code() == tolerate:
                return TOLERATED
            raise to_connect_error(exc, what) from exc
        except TimeoutError as exc:
            raise to_connect_error(exc, what) from exc

    def _metadata(self, what: str, timeout: float | None) -> Any:
        # Always a full listing: Tansu auto-creates a topic asked for by name.
        try:
            return self._admin.list_topics(timeout=timeout or self._timeout)
        except KafkaException as exc:
            raise to_connect_error(exc, what) from exc

    def cluster_id(self, timeout: float | None = None) -> str:
        return str(self._metadata("cannot read the cluster id", timeout).cluster_id)

    def list_topics(self, timeout: float | None = None) -> set[str]:
        return set(self._metadata("cannot list topics", timeout).topics)

    def describe_topic(self, name: str, timeout: float | None = None) -> TopicDescription | None:
        """The topic's partitions, replication factor and configs; None if it does not exist."""
        topic = self._metadata(f"cannot describe topic {name}", timeout).topics.get(name)
        if topic is None:
            return None
        if topic.error is not None:
            raise to_connect_error(topic.error, f"cannot describe topic {name}")
        first = topic.partitions.get(0)
        resource = ConfigResource(ResourceType.TOPIC, name)
        futures = self._admin.describe_configs([resource], request_timeout=timeout or self._timeout)
        entries = self._wait(futures[resource], f"cannot describe configs of {name}", timeout)
        return TopicDescription(
            name=name,
            partitions=len(topic.partitions),
            replication_factor=len(first.replicas) if first is not None else 0,
            configs={k: e.value for k, e in entries.items() if e.value is not None},
        )

    def create_topic(
        self,
        name: str,
        partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Create a topic (-1 = broker default); False if it existed already."""
        new = NewTopic(
            name,
            num_partitions=partitions,
            replication_factor=replication_factor,
            config=dict(configs or {}),
        )
        futures = self._admin.create_topics([new], request_timeout=timeout or self._timeout)
        what = f"cannot create topic {name}"
        result = self._wait(futures[name], what, timeout, KafkaError.TOPIC_ALREADY_EXISTS)
        return result is not TOLERATED

    def list_group_offsets(
        self, group: str, timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """The committed offsets of a consumer group; empty if the group has none."""
        request = [ConsumerGroupTopicPartitions(group)]
        futures = self._admin.list_consumer_group_offsets(
            request, request_timeout=timeout or self._timeout
        )
        what = f"cannot list offsets of group {group}"
        result = self._wait(futures[group], what, timeout, KafkaError.GROUP_ID_NOT_FOUND)
        if result is TOLERATED:
            return {}
        return {
            from_native(p): p.offset
            for p in result.topic_partitions or []
            if p.error is None and p.offset >= 0
        }

    def alter_group_offsets(
        self, group: str, offsets: Mapping[TopicPartition, int], timeout: float | None = None
    ) -> None:
        """Set committed offsets of a group; it must have no active members."""
        if not offsets:
            return
        native = [to_native(tp, off) for tp, off in offsets.items()]
        request = [ConsumerGroupTopicPartitions(group, native)]
        what = f"cannot alter offsets of group {group}"
        futures = self._admin.alter_consumer_group_offsets(
            request, request_timeout=timeout or self._timeout
        )
        result = self._wait(futures[group], what, timeout)
        for p in result.topic_partitions or []:
            if p.error is None:
                continue
            if p.error.code() == KafkaError.UNKNOWN_MEMBER_ID:
                raise ConnectError(f"{what}: the group has active members; stop them first")
            raise to_connect_error(p.error, f"{what} ({p.topic}-{p.partition})")

    def delete_group(self, group: str, timeout: float | None = None) -> bool:
        """Delete a consumer group and its offsets.

        False if the broker says there was no such group (Kafka does; Tansu answers success).
        A group with active members raises ConnectError.
        """
        futures = self._admin.delete_consumer_groups(
            [group], request_timeout=timeout or self._timeout
        )
        what = f"cannot delete group {group}"
        result = self._wait(futures[group], what, timeout, KafkaError.GROUP_ID_NOT_FOUND)
        return result is not TOLERATED


def wait_for_cluster_id(
    config: Mapping[str, str],
    timeout: float,
    on_waiting: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """The id of the cluster that ``config`` names, waiting up to ``timeout`` seconds for it.

    A first try waits FIRST_ATTEMPT_S; if it fails, ``on_waiting`` hears why (librdkafka's
    own words, e.g. "Connection refused") and further tries of at most WAIT_SLICE_S each wait
    for the rest of the time, so a broker that is still starting is waited for. ConnectError
    with the last cause after.
    """
    errors: list[KafkaError] = []
    conf: dict[str, Any] = {**config, "error_cb": errors.append, "logger": _DEBUG_ONLY}
    admin = new_client(AdminClient, conf, "admin client")
    deadline = clock() + timeout
    attempt = min(FIRST_ATTEMPT_S, timeout)
    told = False
    while True:
        try:
            return str(admin.list_topics(timeout=attempt).cluster_id)
        except KafkaException as exc:
            admin.poll(0)  # serves error_cb: the reason a broker could not be reached
            cause = _connection_problem(errors, exc)
        # In slices: Python runs a signal handler (SIGTERM during start-up) only between
        # calls, never inside librdkafka's wait.
        attempt = min(deadline - clock(), WAIT_SLICE_S)
        if attempt <= 0:
            raise ConnectError(cause)
        if not told:
            on_waiting(cause)
            told = True


class _DebugOnly:
    """librdkafka's log lines at DEBUG: while waiting for a cluster it logs every failed
    connection (many a second); the one WARN and the final error say it once."""

    def log(self, level: int, msg: str, *args: Any) -> None:
        LIBRDKAFKA_LOG.debug(msg, *args)


_DEBUG_ONLY = _DebugOnly()


def _connection_problem(errors: list[KafkaError], exc: KafkaException) -> str:
    """The most telling error seen: the last broker-level one, else the metadata failure."""
    for err in reversed(errors):
        if err.code() != KafkaError._ALL_BROKERS_DOWN:
            return str(err.str())
    return describe(exc)


__all__ = ["Admin", "TopicDescription", "wait_for_cluster_id"]
