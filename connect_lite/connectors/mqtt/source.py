"""Confluent's MQTT source (``io.confluent.connect.mqtt.MqttSourceConnector``): the messages of
MQTT topic filters as records of one Kafka topic.

A record's key is the MQTT topic (a string), its value the payload's bytes, and it carries
Confluent's headers ``mqtt.message.id``, ``mqtt.qos``, ``mqtt.retained`` and
``mqtt.duplicate``. It has no source partition or offset: MQTT cannot replay, so the broker's
persistent session is the position.

**No loss at QoS 1 and 2.** A message is acknowledged to the MQTT broker only after Kafka
acknowledged its record (``commit_record``), in the order the messages came. With a
persistent session (``mqtt.clean.session.enabled=false``) the broker keeps every message not
yet acknowledged, across a ``kill -9`` of the worker, its own restart or a lost connection, and
delivers it again. At most ``records.buffer.queue.size`` messages wait for Kafka; at the bound
the task stops reading from the broker (which queues what comes meanwhile) until Kafka catches
up. Delivery is at least once: a message whose acknowledgement was lost comes twice."""

from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api import (
    ConfigDef,
    Header,
    Headers,
    RecordMetadata,
    RetriableError,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
)

from .config import CLIENT_ID, TOPICS, SourceSettings, source_def, task_client_ids
from .connection import Connection, paho

log = logging.getLogger(__name__)

VERSION = "1.7.6"
"""The Confluent MQTT connector version whose configs and behaviour this follows."""

_DEF = source_def()


class MqttSourceConnector(SourceConnector):
    """Subscribes to ``mqtt.topics`` and writes the messages to ``kafka.topic``; the topic
    filters are shared out among the tasks."""

    __connect_class_name__ = "io.confluent.connect.mqtt.MqttSourceConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        SourceSettings.parse(config)
        paho()

    def start(self, config: dict[str, str]) -> None:
        settings = SourceSettings.parse(config)
        from connect_lite.connectors.jdbc.config import warn_confluent_keys  # the connectors'

        warn_confluent_keys(config, config.get("name", "mqtt-source"))
        if settings.options.clean_session and settings.qos > 0:
            log.warning(
                "MQTT source %s: mqtt.qos=%d with mqtt.clean.session.enabled=true loses the "
                "messages sent while the task is away; set it to false for no loss",
                config.get("name"), settings.qos,
            )  # fmt: skip
        self._props = dict(config)

    def task_class(self) -> type[SourceTask]:
        return MqttSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        filters = [t.strip() for t in self._props.get(TOPICS, "").split(",") if t.strip()]
        count = max(1, min(max_tasks, len(filters)))
        ids = task_client_ids(self._props, count)
        return [
            {**self._props, TOPICS: ",".join(filters[i::count]), CLIENT_ID: ids[i]}
            for i in range(count)
        ]

    def stop(self) -> None:
        """Nothing runs in the connector itself."""


@dataclass
class _Received:
    """A message waiting for Kafka: acknowledged to its connection once ``done``."""

    client: Any
    mid: int
    qos: int
    done: bool = False


@dataclass
class _Pending:
    """The messages received and not yet acknowledged, in arrival order (per connection)."""

    bound: int
    by_record: dict[int, _Received] = field(default_factory=dict)
    order: collections.deque[_Received] = field(default_factory=collections.deque)
    changed: threading.Condition = field(default_factory=threading.Condition)


class MqttSourceTask(SourceTask):
    """Its connection's thread puts each message in an inbox; ``poll`` turns them into
    records; ``commit_record`` acknowledges them to the broker."""

    def __init__(self) -> None:
        self._settings: SourceSettings | None = None
        self._connection: Connection | None = None
        self._inbox: collections.deque[tuple[SourceRecord, _Received]] = collections.deque()
        self._arrived = threading.Event()
        self._pending = _Pending(bound=1)
        self._disconnected_since: float | None = None

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        settings = self._settings = SourceSettings.parse(config)
        self._pending = _Pending(bound=settings.bound)
        self._connection = Connection(
            settings.options,
            config.get("name", "mqtt-source"),
            on_message=self._message,
            on_connected=self._connected,
            manual_ack=True,
        ).start()

    # -- the connection's thread ---------------------------------------------------------

    def _connected(self, client: Any, session_present: bool, first: bool) -> None:
        """Subscribe on this task's first connection (so that a changed ``mqtt.topics``
        applies) and whenever the broker kept no session; a kept session has them."""
        settings = self._settings
        assert settings is not None
        if first or not session_present:
            client.subscribe([(t, settings.qos) for t in settings.topics])
        log.info("MQTT source: connected as %s (session kept: %s)",
                 settings.options.client_id, session_present)  # fmt: skip

    def _message(self, client: Any, message: Any) -> None:
        settings = self._settings
        assert settings is not None
        pending = self._pending
        with pending.changed:
            waited_since = None
            while len(pending.by_record) >= pending.bound:  # stop reading until Kafka catches up
                assert self._connection is not None
                if self._connection.stopping:
                    return  # not acknowledged: the broker delivers it again
                now = time.monotonic()
                if waited_since is None:
                    waited_since = now
                elif now - waited_since >= settings.full_timeout_s > 0:
                    log.warning(
                        "MQTT source: %d messages wait for Kafka (records.buffer.queue.size); "
                        "reading stays stopped", len(pending.by_record),
                    )  # fmt: skip
                    waited_since = now
                pending.changed.wait(0.5)
            received = _Received(client, message.mid, message.qos)
            record = self._record(message)
            pending.by_record[id(record)] = received
            pending.order.append(received)
        self._inbox.append((record, received))
        self._arrived.set()

    def _record(self, message: Any) -> SourceRecord:
        settings = self._settings
        assert settings is not None
        headers = Headers((
            Header("mqtt.message.id", message.mid, Schema.INT32_SCHEMA),
            Header("mqtt.qos", message.qos, Schema.INT32_SCHEMA),
            Header("mqtt.retained", bool(message.retain), Schema.BOOLEAN_SCHEMA),
            Header("mqtt.duplicate", bool(message.dup), Schema.BOOLEAN_SCHEMA),
        ))  # fmt: skip
        return SourceRecord(
            None,
            None,
            settings.kafka_topic,
            bytes(message.payload),
            key=message.topic,
            key_schema=Schema.STRING_SCHEMA,
            value_schema=Schema.BYTES_SCHEMA,
            timestamp=int(time.time() * 1000),
            headers=headers,
        )

    # -- the task's thread -----------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        settings = self._settings
        assert settings is not None and self._connection is not None
        if not self._inbox:
            self._arrived.wait(settings.empty_timeout_s)
            self._arrived.clear()
        records: list[SourceRecord] = []
        while self._inbox and len(records) < settings.max_batch:
            records.append(self._inbox.popleft()[0])
        if not records:
            self._check_connection(settings)
        return records or None

    def _check_connection(self, settings: SourceSettings) -> None:
        """RetriableError (the task stays RUNNING, its trace says why) once the broker has
        been unreachable for ``max.retry.time.ms``; the connection keeps trying."""
        assert self._connection is not None
        if self._connection.client is not None:
            self._disconnected_since = None
            return
        now = time.monotonic()
        if self._disconnected_since is None:
            self._disconnected_since = now
        elif (now - self._disconnected_since) * 1000 >= settings.retry_ms:
            self._disconnected_since = now
            servers = ", ".join(s.uri for s in settings.options.servers)
            why = self._connection.last_error or "connecting"
            raise RetriableError(
                f"MQTT source: not connected to {servers} for {settings.retry_ms} ms: {why}"
            )

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Kafka has the record (or a transform dropped it): acknowledge, in arrival order,
        every message of the same connection up to the first one Kafka does not have yet."""
        pending = self._pending
        with pending.changed:
            received = pending.by_record.pop(id(record), None)
            if received is None:
                return
            received.done = True
            order = pending.order
            while order and order[0].done:
                head = order.popleft()
                if head.qos > 0 and head.client is self._live_client():
                    head.client.ack(head.mid, head.qos)
            # A dropped connection's messages are not acknowledged (the session has them);
            # they leave the count so that reading can go on.
            pending.changed.notify_all()

    def _live_client(self) -> Any:
        return self._connection.client if self._connection is not None else None

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.stop()
        with self._pending.changed:
            self._pending.changed.notify_all()
