"""Building librdkafka clients and mapping their errors to connect_lite.api.errors."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, libversion
from confluent_kafka import TopicPartition as NativeTopicPartition

from connect_lite.api.errors import ConfigError, ConnectError, RetriableError
from connect_lite.api.records import TopicPartition

log = logging.getLogger(__name__)

LIBRDKAFKA_LOG = logging.getLogger("connect_lite.kafka.librdkafka")
"""librdkafka's own log lines (served on poll) go to this logger instead of stderr."""

_UNKNOWN_KEY = re.compile(r'No such configuration property: "([^"]+)"')

# Errors that pass: timeouts, transport failures, coordinator and leader moves.
_TRANSIENT = frozenset(
    {
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._WAIT_COORD,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.REBALANCE_IN_PROGRESS,
    }
)

C = TypeVar("C")


def client_versions() -> tuple[str, str]:
    """The versions of confluent-kafka and of the librdkafka it runs on."""
    return str(confluent_kafka.__version__), str(libversion()[0])


def new_client(factory: Callable[[dict[str, Any]], C], config: Mapping[str, str], what: str) -> C:
    """Build a client, dropping keys librdkafka does not know (logged once, at debug).

    Any other config problem (a bad value, a missing group.id) raises ConfigError.
    """
    conf: dict[str, Any] = dict(config)
    conf.setdefault("logger", LIBRDKAFKA_LOG)
    dropped: list[str] = []
    while True:
        try:
            client = factory(conf)
        except (KafkaException, ValueError, TypeError) as exc:
            key = unknown_key(exc)
            if key is not None and key not in conf and f"topic.{key}" in conf:
                key = f"topic.{key}"  # librdkafka names topic.* properties without the prefix
            if key is None or key not in conf:
                raise ConfigError(f"Invalid {what} configuration: {describe(exc)}") from exc
            dropped.append(key)
            del conf[key]
            continue
        if dropped:
            log.debug("%s: keys unknown to librdkafka, dropped: %s", what, sorted(dropped))
        return client


_PROBE = "connect.lite.config.probe"
"""A key librdkafka does not know, set after the keys under test: its refusal proves that
librdkafka took every key before it, and that no client was built."""


def config_refusal(config: Mapping[str, str]) -> str | None:
    """librdkafka's reason for refusing a value in ``config`` (its own key names), or None.

    The keys are set as a client's would be (confluent-kafka sets them in order, each checked
    by librdkafka's type, range and enum rules), then an unknown key stops the construction,
    so no client is ever built: this is safe on a REST thread. Unknown keys are no refusal
    (``new_client`` drops them), and checks that need a whole client (one key against
    another) are not made.
    """
    conf: dict[str, Any] = dict(config)
    while True:
        try:
            confluent_kafka.Producer({**conf, _PROBE: "-"})
        except (KafkaException, ValueError, TypeError) as exc:
            key = unknown_key(exc)
            if key == _PROBE:
                return None
            if key is not None and key not in conf and f"topic.{key}" in conf:
                key = f"topic.{key}"
            if key is None or key not in conf:
                err = exc.args[0] if exc.args else exc
                return str(err.str() if isinstance(err, KafkaError) else err).strip()
            del conf[key]
            continue
        return None  # not reached: the probe key is unknown


def unknown_key(exc: BaseException) -> str | None:
    """The key named by librdkafka's "No such configuration property" error, if that is it."""
    match = _UNKNOWN_KEY.search(describe(exc))
    return match.group(1) if match else None


def describe(exc: BaseException) -> str:
    """The readable message of a confluent-kafka exception or KafkaError."""
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else exc
    if isinstance(err, KafkaError):
        return f"{err.str()} ({err.name()})"
    return str(err)


def is_transient(err: KafkaError) -> bool:
    return bool(err.retriable()) or err.code() in _TRANSIENT


def to_connect_error(err: KafkaError | BaseException, context: str) -> ConnectError:
    """A RetriableError for transient failures, a ConnectError otherwise."""
    if isinstance(err, KafkaException) and err.args and isinstance(err.args[0], KafkaError):
        err = err.args[0]
    if isinstance(err, KafkaError):
        message = f"{context}: {err.str()} ({err.name()})"
        return RetriableError(message) if is_transient(err) else ConnectError(message)
    if isinstance(err, TimeoutError):
        return RetriableError(f"{context}: timed out")
    return ConnectError(f"{context}: {err}")


def to_native(tp: TopicPartition, offset: int | None = None) -> NativeTopicPartition:
    if offset is None:
        return NativeTopicPartition(tp.topic, tp.partition)
    return NativeTopicPartition(tp.topic, tp.partition, offset)


def from_native(tp: NativeTopicPartition) -> TopicPartition:
    return TopicPartition(tp.topic, tp.partition)


__all__ = [
    "LIBRDKAFKA_LOG",
    "config_refusal",
    "describe",
    "from_native",
    "is_transient",
    "new_client",
    "to_connect_error",
    "to_native",
    "unknown_key",
]
