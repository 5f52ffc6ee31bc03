"""KIP-875 request bodies: Kafka's validation of source and sink partitions and offsets."""

from __future__ import annotations

import re
from typing import Any

from connect_lite.api.config import java_str
from connect_lite.api.errors import BadRequestError
from connect_lite.api.records import TopicPartition, canonical_json
from connect_lite.control.entities import ConnectorOffset, ConnectorOffsets

KAFKA_TOPIC = "kafka_topic"
KAFKA_PARTITION = "kafka_partition"
KAFKA_OFFSET = "kafka_offset"

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")

NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"

SourceOffsets = dict[str, tuple[dict[str, Any], dict[str, Any] | None]]
"""Source offsets by canonical partition key: (partition, offset or None for a tombstone)."""


def require_offsets(body: ConnectorOffsets | None) -> ConnectorOffsets:
    """An alter request must name at least one partition (checked before anything else)."""
    if body is None or not body.offsets:
        raise BadRequestError(NO_OFFSETS)
    return body


# -- sink connectors -------------------------------------------------------------------------
def sink_offsets(body: ConnectorOffsets) -> dict[TopicPartition, int | None]:
    """Kafka's ``SinkUtils.parseSinkConnectorOffsets``: later duplicates of a partition win."""
    return {_topic_partition(e.partition): _sink_offset(e.offset) for e in body.offsets}


def _topic_partition(partition: dict[str, Any] | None) -> TopicPartition:
    if partition is None:
        raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
    if KAFKA_TOPIC not in partition or KAFKA_PARTITION not in partition:
        raise BadRequestError(
            "The partition for a sink connector offset must contain the keys "
            f"'{KAFKA_TOPIC}' and '{KAFKA_PARTITION}'"
        )
    topic, number = partition[KAFKA_TOPIC], partition[KAFKA_PARTITION]
    if topic is None:
        raise BadRequestError("Kafka topic names must be valid strings and may not be null")
    if number is None:
        raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
    parsed = java_integer(number, INT_RANGE)
    if parsed is None:
        raise BadRequestError(
            "Failed to parse the following Kafka partition value in the provided offsets: "
            f"'{java_str(number)}'. Partition values for sink connectors need to be integers."
        )
    return TopicPartition(java_str(topic), parsed)


def _sink_offset(offset: dict[str, Any] | None) -> int | None:
    if offset is None:
        return None
    if KAFKA_OFFSET not in offset:
        raise BadRequestError(
            "The offset for a sink connector should either be null or contain the key "
            f"'{KAFKA_OFFSET}'"
        )
    value = offset[KAFKA_OFFSET]
    parsed = java_integer(value, LONG_RANGE)
    if parsed is None:
        raise BadRequestError(
            "Failed to parse the following Kafka offset value in the provided offsets: "
            f"'{java_str(value)}'. Offset values for sink connectors need to be integers."
        )
    return parsed


def java_integer(value: Any, bounds: tuple[int, int]) -> int | None:
    """``Integer.parseInt(String.valueOf(value))`` (or ``Long``): None where Java throws."""
    text = java_str(value)
    if not _JAVA_INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if bounds[0] <= number <= bounds[1] else None


def sink_entries(offsets: dict[TopicPartition, int]) -> ConnectorOffsets:
    """A consumer group's committed offsets in the KIP-875 shape, sorted by topic partition."""
    return ConnectorOffsets(
        [
            ConnectorOffset(
                {KAFKA_TOPIC: tp.topic, KAFKA_PARTITION: tp.partition}, {KAFKA_OFFSET: offset}
            )
            for tp, offset in sorted(offsets.items())
        ]
    )


# -- source connectors -----------------------------------------------------------------------
def source_offsets(body: ConnectorOffsets) -> SourceOffsets:
    """Partitions and offsets must be maps of primitive values; a None offset is a tombstone."""
    parsed: SourceOffsets = {}
    for entry in body.offsets:
        if entry.partition is None:
            raise BadRequestError(
                "The partition for a source connector offset cannot be null or missing"
            )
        _check_primitives(entry.partition)
        if entry.offset is not None:
            _check_primitives(entry.offset)
        partition = dict(entry.partition)
        offset = dict(entry.offset) if entry.offset is not None else None
        parsed[canonical_json(partition)] = (partition, offset)
    return parsed


def _check_primitives(data: dict[str, Any]) -> None:
    """Kafka's ``OffsetUtils.validateFormat``."""
    for field, value in data.items():
        kind = "MAP" if isinstance(value, dict) else "ARRAY" if isinstance(value, list) else None
        if kind is not None:
            raise BadRequestError(
                "Offsets may only contain primitive types as values, but field "
                f"{field} contains {kind}"
            )


# -- answers ---------------------------------------------------------------------------------
def success_message(handled: bool, reset: bool) -> str:
    """Kafka's two success texts: the connector handled external offsets too, or maybe not."""
    done = "reset" if reset else "altered"
    if handled:
        return f"The offsets for this connector have been {done} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {done} "
        "successfully. However, if this connector manages offsets externally, they will need "
        f"to be manually {done} in the system that the connector uses."
    )


def not_stopped_message(name: str) -> str:
    return (
        "Connectors must be in the STOPPED state before their offsets can be modified. This "
        "can be done for the specified connector by issuing a 'PUT' request to the "
        f"'/connectors/{name}/stop' endpoint"
    )


def zombie_message(name: str, reset: bool) -> str:
    """The group still has members: sink tasks that have not stopped yet (or came back)."""
    verb = "reset" if reset else "alter"
    return (
        f"Failed to {verb} consumer group offsets for connector {name} either because its "
        "tasks haven't stopped completely yet or the connector was resumed before the request "
        f"to {verb} its offsets could be successfully completed. If the connector is in a "
        "stopped state, this operation can be safely retried. If it doesn't eventually "
        "succeed, the Connect cluster may need to be restarted to get rid of the zombie sink "
        "tasks."
    )
