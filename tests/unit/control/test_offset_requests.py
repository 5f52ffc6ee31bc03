"""KIP-875 body rules: sink and source offsets are validated with Kafka's messages."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api.errors import BadRequestError
from connect_lite.api.records import TopicPartition
from connect_lite.control.entities import ConnectorOffset, ConnectorOffsets
from connect_lite.control.offset_requests import (
    NO_OFFSETS,
    java_integer,
    require_offsets,
    sink_entries,
    sink_offsets,
    source_offsets,
    success_message,
)


def body(*entries: tuple[Any, Any]) -> ConnectorOffsets:
    return ConnectorOffsets([ConnectorOffset(p, o) for p, o in entries])


def tp(partition: Any, topic: Any = "t") -> dict[str, Any]:
    return {"kafka_topic": topic, "kafka_partition": partition}


@pytest.mark.parametrize("given", [None, ConnectorOffsets([])])
def test_an_alter_request_needs_offsets(given: ConnectorOffsets | None) -> None:
    with pytest.raises(BadRequestError, match=f"^{NO_OFFSETS}$"):
        require_offsets(given)


def test_sink_offsets_accept_numbers_and_numeric_strings_and_later_entries_win() -> None:
    parsed = sink_offsets(
        body(
            (tp(0), {"kafka_offset": 5}),
            (tp("1"), {"kafka_offset": "7"}),
            (tp("+2", topic=3), None),
            (tp(0), {"kafka_offset": 9}),
        )
    )
    assert parsed == {
        TopicPartition("t", 0): 9,
        TopicPartition("t", 1): 7,
        TopicPartition("3", 2): None,
    }


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        (None, None, "The partition for a sink connector offset cannot be null or missing"),
        ({"kafka_topic": "t"}, None, "must contain the keys 'kafka_topic' and 'kafka_partition'"),
        (tp(0, topic=None), None, "Kafka topic names must be valid strings and may not be null"),
        (tp(None), None, "Kafka partitions must be valid numbers and may not be null"),
        (tp(" 1"), None, "partition value in the provided offsets: ' 1'. Partition values"),
        (tp(1.0), None, "partition value in the provided offsets: '1.0'."),
        (tp(False), None, "partition value in the provided offsets: 'false'."),
        (tp(2**31), None, f"partition value in the provided offsets: '{2**31}'."),
        (tp(0), {}, "should either be null or contain the key 'kafka_offset'"),
        (tp(0), {"kafka_offset": None}, "offset value in the provided offsets: 'null'. Offset"),
        (tp(0), {"kafka_offset": "1e3"}, "offset value in the provided offsets: '1e3'."),
        (tp(0), {"kafka_offset": 2**63}, f"offset value in the provided offsets: '{2**63}'."),
    ],
)
def test_invalid_sink_offsets(partition: Any, offset: Any, message: str) -> None:
    with pytest.raises(BadRequestError) as raised:
        sink_offsets(body((partition, offset)))
    assert message in str(raised.value)


def test_java_integer_follows_parse_int() -> None:
    assert java_integer("-2147483648", (-(2**31), 2**31 - 1)) == -(2**31)
    assert java_integer(-(2**31) - 1, (-(2**31), 2**31 - 1)) is None
    assert java_integer("007", (0, 10)) == 7
    assert java_integer("", (0, 10)) is None


def test_source_offsets_keep_primitives_and_tombstones() -> None:
    parsed = source_offsets(
        body(({"b": 1, "a": "x"}, {"n": 1.5, "ok": True, "none": None}), ({"z": 0}, None))
    )
    assert parsed == {
        '{"a":"x","b":1}': ({"b": 1, "a": "x"}, {"n": 1.5, "ok": True, "none": None}),
        '{"z":0}': ({"z": 0}, None),
    }


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        ({"p": {"x": 1}}, {}, "but field p contains MAP"),
        ({}, {"o": [1]}, "but field o contains ARRAY"),
        (None, {}, "The partition for a source connector offset cannot be null or missing"),
    ],
)
def test_invalid_source_offsets(partition: Any, offset: Any, message: str) -> None:
    with pytest.raises(BadRequestError) as raised:
        source_offsets(body((partition, offset)))
    assert message in str(raised.value)


def test_sink_entries_are_sorted_in_the_kip_shape() -> None:
    entries = sink_entries({TopicPartition("b", 0): 3, TopicPartition("a", 1): 4})
    assert [(e.partition, e.offset) for e in entries.offsets] == [
        ({"kafka_topic": "a", "kafka_partition": 1}, {"kafka_offset": 4}),
        ({"kafka_topic": "b", "kafka_partition": 0}, {"kafka_offset": 3}),
    ]


def test_success_messages() -> None:
    assert success_message(True, reset=True) == (
        "The offsets for this connector have been reset successfully"
    )
    assert success_message(False, reset=False).startswith(
        "The Connect framework-managed offsets for this connector have been altered successfully."
    )
    assert success_message(False, reset=False).endswith(
        "they will need to be manually altered in the system that the connector uses."
    )
