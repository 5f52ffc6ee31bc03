"""The MQTT connectors' configuration: Confluent's MqttSourceConnector and MqttSinkConnector keys
(1.7), their defaults, and the checks that name the key at fault."""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Range, Type
from connect_lite.api.tls import TlsStores, client_context

from .connection import Options, Server

SERVER_URI = "mqtt.server.uri"
TOPICS = "mqtt.topics"
QOS = "mqtt.qos"
CLIENT_ID = "mqtt.client.id"
BUFFER_SIZE = "records.buffer.queue.size"
TRUST_STORE = "mqtt.ssl.trust.store.path"
KEY_STORE = "mqtt.ssl.key.store.path"
_STORE_NAMES = {
    "ssl.truststore.location": TRUST_STORE,
    "ssl.truststore.password": "mqtt.ssl.trust.store.password",
    "ssl.keystore.location": KEY_STORE,
    "ssl.keystore.password": "mqtt.ssl.key.store.password",
    "ssl.key.password": "mqtt.ssl.key.password",
}


def _connection_keys(d: ConfigDef) -> None:
    d.define(SERVER_URI, Type.LIST, importance=Importance.HIGH,
             doc="The MQTT brokers to connect to, tried in turn: tcp://host:1883, "
                 "ssl://host:8883.")  # fmt: skip
    d.define(QOS, Type.INT, 0, Range.between(0, 2), Importance.MEDIUM,
             "The MQTT QoS: 0 (at most once), 1 or 2 (at least once end to end).")  # fmt: skip
    d.define(CLIENT_ID, Type.STRING, None, None, Importance.LOW,
             "The MQTT client id (a task's number is added when there are several); by "
             "default the connector's name and the task's number.")  # fmt: skip
    d.define("mqtt.clean.session.enabled", Type.BOOLEAN, True, None, Importance.LOW,
             "Whether the broker forgets the client's session when it disconnects; false keeps "
             "a persistent session, which no-loss delivery needs.")  # fmt: skip
    d.define("mqtt.connect.timeout.seconds", Type.INT, 30, Range.at_least(1), Importance.LOW,
             "How long a connection may take.")  # fmt: skip
    d.define("mqtt.keepalive.interval.seconds", Type.INT, 60, Range.at_least(1),
             Importance.LOW, "The MQTT keep-alive interval.")  # fmt: skip
    d.define("mqtt.username", Type.PASSWORD, None, None, Importance.HIGH,
             "The user to connect as, or none.")  # fmt: skip
    d.define("mqtt.password", Type.PASSWORD, None, None, Importance.HIGH,
             "The user's password.")  # fmt: skip
    d.define("max.retry.time.ms", Type.LONG, 30000, Range.at_least(0), Importance.MEDIUM,
             "How long the broker may be unreachable before the task reports it (a source "
             "task keeps trying; a sink task has its records delivered again).")  # fmt: skip
    d.define(TRUST_STORE, Type.STRING, "", None, Importance.HIGH,
             "The certificates to trust for ssl:// servers (PEM or PKCS12); else the "
             "system's.")  # fmt: skip
    d.define("mqtt.ssl.trust.store.password", Type.PASSWORD, None, None, Importance.HIGH,
             "The PKCS12 truststore's password.")  # fmt: skip
    d.define(KEY_STORE, Type.STRING, "", None, Importance.HIGH,
             "The client's private key and certificate chain for ssl:// servers that ask "
             "for one (PEM or PKCS12).")  # fmt: skip
    d.define("mqtt.ssl.key.store.password", Type.PASSWORD, None, None, Importance.HIGH,
             "The keystore's password.")  # fmt: skip
    d.define("mqtt.ssl.key.password", Type.PASSWORD, None, None, Importance.HIGH,
             "The private key's password.")  # fmt: skip


def source_def() -> ConfigDef:
    d = ConfigDef()
    _connection_keys(d)
    d.define(TOPICS, Type.LIST, importance=Importance.HIGH,
             doc="The MQTT topic filters to subscribe to (+ and # wildcards).")  # fmt: skip
    d.define("kafka.topic", Type.STRING, "mqtt", None, Importance.MEDIUM,
             "The Kafka topic every message goes to.")  # fmt: skip
    d.define(BUFFER_SIZE, Type.INT, 50000, Range.at_least(1), Importance.LOW,
             "The most messages received and not yet acknowledged by Kafka; at the bound the "
             "task stops reading from the broker until Kafka catches up.")  # fmt: skip
    d.define("records.buffer.queue.max.batch.size", Type.INT, 4096, Range.at_least(1),
             Importance.LOW, "The most records one poll returns.")  # fmt: skip
    d.define("records.buffer.queue.empty.timeout", Type.INT, 100, Range.at_least(0),
             Importance.LOW, "How long (ms) a poll waits for a first message.")  # fmt: skip
    d.define("records.buffer.queue.full.timeout", Type.INT, 60000, Range.at_least(0),
             Importance.LOW, "How long (ms) reading may stay stopped at the bound before a "
                             "WARN says so (it never drops a message).")  # fmt: skip
    return d


def sink_def() -> ConfigDef:
    d = ConfigDef()
    _connection_keys(d)
    d.define("mqtt.retained.enabled", Type.BOOLEAN, True, None, Importance.MEDIUM,
             "Whether each message is published as its topic's retained message.")  # fmt: skip
    d.define("mqtt.publish.timeout.ms", Type.INT, 30000, None, Importance.LOW,
             "How long a put waits for the broker to confirm its messages (0 or -1: as "
             "long as it takes).")  # fmt: skip
    return d


def _secret(value: Any) -> str | None:
    return getattr(value, "value", value) or None


def _errors(d: ConfigDef, config: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    checked = d.validate(dict(config))
    values = {k: v.value for k, v in checked.items()}
    errors = {k: list(v.errors) for k, v in checked.items() if v.errors}

    def error(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    servers = values.get(SERVER_URI) or []
    if SERVER_URI not in errors and not servers:
        error(SERVER_URI, f"{SERVER_URI} needs at least one tcp:// or ssl:// URI")
    for uri in servers:
        try:
            Server.parse(uri)
        except ValueError as e:
            error(SERVER_URI, f"{SERVER_URI}: {e}")
    if values.get("mqtt.password") is not None and not _secret(values.get("mqtt.username")):
        error("mqtt.username", "mqtt.password needs mqtt.username")
    return values, errors


def _tls(
    values: Mapping[str, Any], errors: dict[str, list[str]]
) -> Callable[[], ssl.SSLContext] | None:
    stores = TlsStores(
        keystore_location=values.get(KEY_STORE) or None,
        keystore_password=_secret(values.get("mqtt.ssl.key.store.password")),
        key_password=_secret(values.get("mqtt.ssl.key.password")),
        truststore_location=values.get(TRUST_STORE) or None,
        truststore_password=_secret(values.get("mqtt.ssl.trust.store.password")),
        names=_STORE_NAMES,
    )
    if not stores.keystore_location and not stores.truststore_location:
        return None
    try:
        client_context(stores)  # the stores load: else a validate error naming the key
    except ConfigError as e:
        for key, messages in e.errors.items():
            errors.setdefault(key, []).extend(messages)
    return functools.partial(client_context, stores)


def _topic_filter_errors(filters: list[str]) -> list[str]:
    """MQTT's rules: ``#`` only as the last level, ``+`` only as a whole level."""
    problems = []
    for f in filters:
        levels = f.split("/")
        bad = (
            not f
            or "\x00" in f
            or any(
                ("#" in level and (level != "#" or i != len(levels) - 1))
                or ("+" in level and level != "+")
                for i, level in enumerate(levels)
            )
        )
        if bad:
            problems.append(f"Invalid MQTT topic filter {f!r} in {TOPICS}: + and # must be "
                            "whole levels, # only the last")  # fmt: skip
    return problems


def _options(values: Mapping[str, Any], tls: Callable[[], ssl.SSLContext] | None, client_id: str,
             max_inflight: int) -> Options:  # fmt: skip
    return Options(
        servers=tuple(Server.parse(u) for u in values[SERVER_URI]),
        client_id=client_id,
        clean_session=bool(values["mqtt.clean.session.enabled"]),
        connect_timeout_s=float(values["mqtt.connect.timeout.seconds"]),
        keepalive_s=int(values["mqtt.keepalive.interval.seconds"]),
        username=_secret(values.get("mqtt.username")),
        password=_secret(values.get("mqtt.password")),
        tls_context=tls,
        max_inflight=max_inflight,
    )


def client_id(values: Mapping[str, Any], config: Mapping[str, str]) -> str:
    """The task's client id: ``mqtt.client.id`` (the task config carries one per task), or
    the connector's name and the task's number."""
    return values.get(CLIENT_ID) or f"{config.get('name', 'connect-lite')}-0"


def _raise(errors: dict[str, list[str]]) -> None:
    from connect_lite.connectors.jdbc.config import raise_errors  # the connectors' one

    raise_errors(errors)


@dataclass(frozen=True)
class SourceSettings:
    options: Options
    topics: tuple[str, ...]
    qos: int
    kafka_topic: str
    bound: int
    max_batch: int
    empty_timeout_s: float
    full_timeout_s: float
    retry_ms: int

    @staticmethod
    def parse(config: Mapping[str, str]) -> SourceSettings:
        values, errors = _errors(source_def(), config)
        topics = [t for t in values.get(TOPICS) or [] if t]
        if TOPICS not in errors and not topics:
            errors.setdefault(TOPICS, []).append(f"{TOPICS} needs at least one topic filter")
        for problem in _topic_filter_errors(topics):
            errors.setdefault(TOPICS, []).append(problem)
        if "kafka.topic" not in errors and not values.get("kafka.topic"):
            errors.setdefault("kafka.topic", []).append("kafka.topic must name a Kafka topic")
        tls = _tls(values, errors)
        _raise(errors)
        bound = values[BUFFER_SIZE]
        return SourceSettings(
            options=_options(values, tls, client_id(values, config), max_inflight=bound),
            topics=tuple(topics),
            qos=values[QOS],
            kafka_topic=values["kafka.topic"],
            bound=bound,
            max_batch=values["records.buffer.queue.max.batch.size"],
            empty_timeout_s=values["records.buffer.queue.empty.timeout"] / 1000,
            full_timeout_s=values["records.buffer.queue.full.timeout"] / 1000,
            retry_ms=values["max.retry.time.ms"],
        )


@dataclass(frozen=True)
class SinkSettings:
    options: Options
    qos: int
    retained: bool
    publish_timeout_s: float | None
    retry_ms: int

    @staticmethod
    def parse(config: Mapping[str, str]) -> SinkSettings:
        values, errors = _errors(sink_def(), config)
        tls = _tls(values, errors)
        _raise(errors)
        timeout = values["mqtt.publish.timeout.ms"]
        return SinkSettings(
            options=_options(values, tls, client_id(values, config), max_inflight=65535),
            qos=values[QOS],
            retained=bool(values["mqtt.retained.enabled"]),
            publish_timeout_s=timeout / 1000 if timeout > 0 else None,
            retry_ms=values["max.retry.time.ms"],
        )


def task_client_ids(config: Mapping[str, str], count: int) -> list[str]:
    """One stable client id per task (two clients under one id would push each other off):
    ``mqtt.client.id``, else the connector's name, with ``-N`` for every task but a lone one's
    given id."""
    given = config.get(CLIENT_ID)
    base = given or config.get("name", "connect-lite")
    if given and count == 1:
        return [given]
    return [f"{base}-{i}" for i in range(count)]
