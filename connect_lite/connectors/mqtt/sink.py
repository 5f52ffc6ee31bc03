"""Confluent's MQTT sink (``io.confluent.connect.mqtt.MqttSinkConnector``): each record's value
published to the MQTT topic named as the record's topic (so RegexRouter renames it).

Values are bytes or strings (UTF-8); a null value publishes an empty message, which with
``mqtt.retained.enabled`` (the default) clears the topic's retained message. Any other value
is the record's fault: with ``errors.tolerance=all`` it goes to the dead letter queue, else it
fails the task.

A put returns once the broker confirmed every publish of the batch (PUBACK at QoS 1, PUBCOMP
at QoS 2; at QoS 0, once written), so offsets are committed only after that. A broker that is
away, or that does not confirm in ``mqtt.publish.timeout.ms``, raises RetriableError: the
worker hands the same records again after a backoff (at least once)."""

from __future__ import annotations

import logging
import time
from typing import Any

from connect_lite.api import (
    ConfigDef,
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)

from .config import CLIENT_ID, SinkSettings, sink_def, task_client_ids
from .connection import Connection, paho
from .source import VERSION

log = logging.getLogger(__name__)

_DEF = sink_def()
_BACKOFF_MS = 1000


class MqttSinkConnector(SinkConnector):
    """Publishes the subscribed topics' records to MQTT."""

    __connect_class_name__ = "io.confluent.connect.mqtt.MqttSinkConnector"

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return _DEF

    def validate(self, config: dict[str, str]) -> None:
        SinkSettings.parse(config)
        paho()

    def start(self, config: dict[str, str]) -> None:
        SinkSettings.parse(config)
        from connect_lite.connectors.jdbc.config import warn_confluent_keys  # the connectors'

        warn_confluent_keys(config, config.get("name", "mqtt-sink"))
        self._props = dict(config)

    def task_class(self) -> type[SinkTask]:
        return MqttSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        ids = task_client_ids(self._props, max_tasks)
        return [{**self._props, CLIENT_ID: ids[i]} for i in range(max_tasks)]

    def stop(self) -> None:
        """Nothing runs in the connector itself."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """The offsets live in the consumer group only."""
        return True


def payload(record: SinkRecord) -> bytes:
    """The message of a record: its bytes, a string's UTF-8, or empty for a null value."""
    value = record.value
    if value is None:
        return b""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise DataError(
        f"The MQTT sink publishes only bytes and string values (use the ByteArrayConverter or "
        f"the StringConverter); the value of {record.topic}-{record.kafka_partition} at offset "
        f"{record.kafka_offset} is a {type(value).__name__}"
    )


class MqttSinkTask(SinkTask):
    """Publishes each put's records in order and waits for the broker's confirmations."""

    def __init__(self) -> None:
        self._settings: SinkSettings | None = None
        self._connection: Connection | None = None

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._settings = SinkSettings.parse(config)
        mqtt = paho()  # once, not per record
        self._ok, self._error_string = mqtt.MQTT_ERR_SUCCESS, mqtt.error_string
        self._connection = Connection(self._settings.options, config.get("name", "mqtt-sink"))
        self._connection.start()

    def put(self, records: list[SinkRecord]) -> None:
        settings, connection = self._settings, self._connection
        assert settings is not None and connection is not None
        if not records:
            return
        client = connection.wait_connected(settings.retry_ms / 1000)
        if client is None:
            self._retry(f"not connected: {connection.last_error or 'connecting'}")
        sent = []
        reporter = self.context.errant_record_reporter()
        for record in records:
            try:
                message = payload(record)
            except DataError as error:
                if reporter is None:
                    raise
                reporter.report(record, error)  # awaited before the offsets are committed
                continue
            info = client.publish(record.topic, message, settings.qos, settings.retained)
            if info.rc != self._ok:
                self._retry(f"publishing to {record.topic} failed: {self._error_string(info.rc)}")
            sent.append(info)
        self._confirmed(client, sent)

    def _confirmed(self, client: Any, sent: list[Any]) -> None:
        """Wait until the broker confirmed every publish, the connection dropped (its
        unconfirmed messages are sent again on redelivery) or the timeout passed."""
        settings, connection = self._settings, self._connection
        assert settings is not None and connection is not None
        timeout = settings.publish_timeout_s
        deadline = None if timeout is None else time.monotonic() + timeout
        for info in sent:
            while not info.is_published():
                if connection.client is not client:
                    self._retry(f"the connection dropped: {connection.last_error or 'lost'}")
                if deadline is not None and time.monotonic() >= deadline:
                    self._retry(f"the broker did not confirm in {timeout:g} s "
                                "(mqtt.publish.timeout.ms)")  # fmt: skip
                try:
                    info.wait_for_publish(0.2)
                except (RuntimeError, ValueError) as error:
                    self._retry(str(error))

    def _retry(self, why: str) -> None:
        self.context.timeout(_BACKOFF_MS)
        raise RetriableError(f"MQTT sink: {why}")

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.stop()
