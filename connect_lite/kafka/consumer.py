"""A thin group consumer: batches of ConsumedMessage, synchronous commits, pause/resume."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.kafka.native import from_native, new_client, to_connect_error, to_native

log = logging.getLogger(__name__)

AssignCallback = Callable[[list[TopicPartition]], Mapping[TopicPartition, int] | None]
"""Told the newly assigned partitions; may return start offsets for some of them."""

RevokeCallback = Callable[[list[TopicPartition]], None]
"""Told the partitions being revoked (or lost)."""

CONSUME_SLICE = 10_000
"""The most records one ``poll_batch`` returns. confluent-kafka builds the messages of one
``consume`` call holding the GIL: 200,000 of them kept every other thread of the worker (the
REST API's too) waiting for tens of milliseconds. A batch is built from several calls."""

DEFAULT_SESSION_TIMEOUT_MS = 45_000
"""librdkafka's ``session.timeout.ms`` when the config sets none."""
CLOSE_JOIN_WAIT_MAX_S = 15.0
"""The longest a closing consumer waits for its group to settle (see Consumer.close). Tansu
holds a join for 3 s; a member learns of a rebalance at its next heartbeat (3 s)."""

_membership_lock = threading.Lock()
_membership_changed: dict[str, float] = {}
"""Group id -> when a consumer of this process last subscribed to it or left it."""
_leaving: dict[str, threading.Lock] = {}
"""Group id -> held by the consumer of this process that is leaving it: one at a time."""


def _leave_lock(group: str) -> threading.Lock:
    with _membership_lock:
        return _leaving.setdefault(group, threading.Lock())


def _membership_change(group: str) -> None:
    with _membership_lock:
        _membership_changed[group] = time.monotonic()


def _last_membership_change(group: str) -> float:
    with _membership_lock:
        return _membership_changed.get(group, 0.0)


_TIMESTAMP_TYPES = {
    confluent_kafka.TIMESTAMP_CREATE_TIME: "CreateTime",
    confluent_kafka.TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime",
    confluent_kafka.TIMESTAMP_NOT_AVAILABLE: "NoTimestampType",
}


class ConsumedMessage(NamedTuple):
    """One record as read from Kafka, bytes untouched. A named tuple: a sink task reads
    millions, and a tuple is built in a fraction of a frozen dataclass's time."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int | None
    timestamp_type: str


def subscription_pattern(pattern: str) -> str:
    """A Java ``topics.regex`` (whole-name match) as a librdkafka regex subscription.

    librdkafka treats a subscribed name starting with ``^`` as a regex and searches with it;
    anchoring both ends gives Java's ``Matcher.matches()`` semantics.
    """
    body = pattern[1:] if pattern.startswith("^") else pattern
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    return f"^({body})$"


def to_messages(batch: list[Any]) -> list[ConsumedMessage]:
    """confluent-kafka's messages as ConsumedMessages; error events are logged (a fatal one
    raises) and left out."""
    out: list[ConsumedMessage] = []
    append = out.append
    types = _TIMESTAMP_TYPES
    new, cls = tuple.__new__, ConsumedMessage  # no Python __new__ call per message
    for msg in batch:
        if msg.error() is not None:
            _on_error(msg)
            continue
        ts_type, ts = msg.timestamp()
        fields = (msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value())
        append(new(cls, (*fields, msg.headers() or [], ts if ts_type else None, types[ts_type])))
    return out


def _on_error(msg: Any) -> None:
    err: KafkaError = msg.error()
    if err.code() == KafkaError._PARTITION_EOF:
        return
    if err.fatal():
        raise to_connect_error(err, "consumer failed")
    log.warning("consumer error on %s [%s]: %s", msg.topic(), msg.partition(), err.str())


class Consumer:
    """A confluent-kafka consumer in a group, with offsets committed only on request."""

    def __init__(self, config: Mapping[str, str]) -> None:
        self.config = dict(config)
        """The client's librdkafka config, as merged (executor-side readers start from it)."""
        self._consumer = new_client(confluent_kafka.Consumer, config, "consumer")
        strategy = str(config.get("partition.assignment.strategy", ""))
        self._incremental = "cooperative" in strategy
        self._closed = False
        self._joining = False
        """Subscribed and between a join's start (subscribe, a revocation) and its assignment."""
        self._group = str(config.get("group.id", ""))
        self._subscribed = False
        self._assigned_at = 0.0
        """When the group last handed this consumer its partitions (time.monotonic)."""
        self._closing = False
        session_ms = int(config.get("session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS))
        self._settle_wait_s = min(2 * session_ms / 1000, CLOSE_JOIN_WAIT_MAX_S)
        self.pause_assigned = False
        """Whether newly assigned partitions are paused at once: the group member then fetches
        nothing, and others read its partitions' records (executor-side readers)."""

    def subscribe(
        self,
        topics: list[str] | None = None,
        pattern: str | None = None,
        on_assign: AssignCallback | None = None,
        on_revoke: RevokeCallback | None = None,
    ) -> None:
        """Subscribe to a topic list or a regex (exactly one of them)."""
        if (topics is None) == (pattern is None):
            raise ConnectError("subscribe needs exactly one of topics or pattern")
        names = list(topics) if topics is not None else [subscription_pattern(str(pattern))]
        kwargs: dict[str, Any] = {"on_assign": self._assign_hook(on_assign)}
        kwargs["on_revoke"] = kwargs["on_lost"] = self._revoke_hook(on_revoke)
        try:
            self._consumer.subscribe(names, **kwargs)
        except (KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, f"cannot subscribe to {names}") from exc
        self._joining = self._subscribed = True
        _membership_change(self._group)

    def _assign_hook(self, on_assign: AssignCallback | None) -> Callable[[Any, list[Any]], None]:
        def hook(consumer: Any, partitions: list[Any]) -> None:
            self._joining = False
            self._assigned_at = time.monotonic()
            callback = None if self._closing else on_assign  # in close(): the task is gone
            starts = callback([from_native(p) for p in partitions]) if callback else None
            for p in partitions:
                offset = (starts or {}).get(from_native(p))
                if offset is not None:
                    p.offset = offset
            if self._incremental:
                consumer.incremental_assign(partitions)
            else:
                consumer.assign(partitions)
            if self.pause_assigned and partitions:
                consumer.pause(partitions)

        return hook

    def _revoke_hook(self, on_revoke: RevokeCallback | None) -> Callable[[Any, list[Any]], None]:
        """A revocation starts a rebalance (a join); the client unassigns after the hook."""

        def hook(consumer: Any, partitions: list[Any]) -> None:
            self._joining = True
            if on_revoke is not None and not self._closing:
                on_revoke([from_native(p) for p in partitions])

        return hook

    def poll_batch(self, max_records: int, timeout: float) -> list[ConsumedMessage]:
        """Up to ``max_records`` records (at most CONSUME_SLICE): those waiting now, or, when
        none is, the first to arrive within ``timeout`` seconds together with those that came
        with it.

        librdkafka's ``consume(n, timeout)`` waits for n records or the whole timeout, so a
        lone record would wait out the window; ``poll`` returns at the first one."""
        max_records = min(max_records, CONSUME_SLICE)
        try:
            # Any: the stubs type fields of error messages as optional; those are skipped.
            batch: list[Any] = self._consumer.consume(num_messages=max_records, timeout=0)
            if not batch and timeout > 0:
                first = self._consumer.poll(timeout)
                if first is not None:
                    batch = [first]
                    if max_records > 1:
                        batch += self._consumer.consume(num_messages=max_records - 1, timeout=0)
        except (KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, "consume failed") from exc
        return to_messages(batch)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit "next offset to read" per partition, waiting for the broker's answer."""
        if not offsets:
            return
        native = [to_native(tp, off) for tp, off in offsets.items()]
        try:
            result = self._consumer.commit(offsets=native, asynchronous=False)
        except (KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, "offset commit failed") from exc
        for p in result or []:
            if p.error is not None:
                raise to_connect_error(p.error, f"offset commit failed for {p.topic}-{p.partition}")

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Read ``tp`` from ``offset`` next (the partition must be assigned)."""
        try:
            self._consumer.seek(to_native(tp, offset))
        except (KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, f"cannot seek {tp.topic}-{tp.partition}") from exc

    def assign(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Read these partitions from these offsets, without joining the group (no rebalance)."""
        self._call("assign", [to_native(tp, offset) for tp, offset in offsets.items()])

    def pause(self, tps: Iterable[TopicPartition]) -> None:
        self._call("pause", [to_native(tp) for tp in tps])

    def resume(self, tps: Iterable[TopicPartition]) -> None:
        self._call("resume", [to_native(tp) for tp in tps])

    def assignment(self) -> list[TopicPartition]:
        return sorted(from_native(p) for p in self._call("assignment"))

    def position(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offset to read per partition (only those with a known position)."""
        positions = self._call("position", [to_native(tp) for tp in tps])
        return {from_native(p): p.offset for p in positions if p.offset >= 0}

    def committed(
        self, tps: Iterable[TopicPartition], timeout: float = 10.0
    ) -> dict[TopicPartition, int]:
        """The group's committed offset per partition (only those with one)."""
        native = [to_native(tp) for tp in tps]
        if not native:
            return {}
        found = self._call("committed", native, timeout)
        return {from_native(p): p.offset for p in found if p.error is None and p.offset >= 0}

    def watermarks(self, tp: TopicPartition, timeout: float = 5.0) -> tuple[int, int]:
        """The partition's low and high watermark offsets, asked of the broker now."""
        low, high = self._call("get_watermark_offsets", to_native(tp), timeout, False)
        return int(low), int(high)

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._consumer, method)(*args)
        except (KafkaException, RuntimeError) as exc:
            raise to_connect_error(exc, f"consumer {method} failed") from exc

    def close(self) -> None:
        """Leave the group and release the client. Safe to call twice.

        A subscribed consumer first lets its group settle: it polls (handing neither records
        nor partitions to anyone; nothing commits what it drops) until it holds an assignment
        newer than this process's last change to the group (another task's consumer joining
        or leaving it), at most 2 session timeouts (capped at CLOSE_JOIN_WAIT_MAX_S) from the
        moment the member before it in this process has left. Tansu,
        the embedded broker, never completes a rebalance once the group's leader left in the
        middle of one: a task stopped while its group was forming (soon after it started,
        or right after another task of the connector stopped) left its successors without
        partitions for good. The consumers of one group in this process leave one at a time.
        Stopping costs up to a heartbeat and a join more."""
        if self._closed:
            return
        self._closed = True
        self._closing = True
        if not self._subscribed:
            self._close_client()
            return
        with _leave_lock(self._group):  # the group's members of this process leave in turn
            deadline = time.monotonic() + self._settle_wait_s  # after the one before left
            with contextlib.suppress(KafkaException, RuntimeError):
                while time.monotonic() < deadline and (
                    self._joining or self._assigned_at <= _last_membership_change(self._group)
                ):
                    self._consumer.poll(0.1)
            try:
                self._close_client()
            finally:
                _membership_change(self._group)

    def _close_client(self) -> None:
        try:
            self._consumer.close()
        except (KafkaException, RuntimeError) as exc:
            log.warning("consumer close failed: %s", exc)


__all__ = [
    "AssignCallback",
    "ConsumedMessage",
    "Consumer",
    "RevokeCallback",
    "subscription_pattern",
    "to_messages",
]
