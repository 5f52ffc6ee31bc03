"""The sink batch job's view of consumed messages: rows as they are, chunks as columns."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from connect_lite.api.records import TopicPartition
from connect_lite.kafka import ConsumedMessage
from connect_lite.pipeline.chunks import MessageRow, SinkInput
from connect_lite.pipeline.sink_job import SinkBatchResult, _rows


@dataclass
class Plain:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    timestamp: int | None
    timestamp_type: str


def consumed(offset: int, headers: list[tuple[str, bytes | None]] | None = None) -> ConsumedMessage:
    return ConsumedMessage("t", 1, offset, b"k", b"v%d" % offset, headers or [], 5, "CreateTime")


def test_the_consumers_messages_are_rows_already():
    messages = [consumed(7), consumed(8, [("h", b"1")])]
    assert _rows(messages) is messages


def test_other_messages_are_read_by_attribute():
    plain = [Plain("t", 0, 3, None, b"v", None, None, "LogAppendTime")]
    assert _rows(plain) == [("t", 0, 3, None, b"v", None, None, "LogAppendTime")]


def test_a_mixed_batch_is_read_by_attribute():
    mixed = [consumed(1), Plain("u", 2, 9, b"k", None, [("h", None)], 4, "CreateTime")]
    assert _rows(mixed) == [
        tuple(consumed(1)),
        ("u", 2, 9, b"k", None, [("h", None)], 4, "CreateTime"),
    ]


def test_no_messages_no_rows():
    assert list(_rows([])) == []


def test_a_chunk_carries_columns_and_gives_back_whole_rows():
    rows = [MessageRow(*consumed(n)) for n in range(5)]
    chunk = SinkInput.of(rows[1:4], base=1)
    assert chunk.topics == ["t"] * 3
    assert chunk.values == [b"v1", b"v2", b"v3"]
    assert chunk.base == 1
    assert [chunk.row(i) for i in range(3)] == rows[1:4]


def test_a_chunk_without_meta_has_no_whole_rows():
    chunk = SinkInput.of([MessageRow(*consumed(1))], meta=False)
    assert chunk.meta is None and chunk.keys == [b"k"]
    with pytest.raises(AssertionError):
        chunk.row(0)


def test_offsets_of_every_input_are_made_on_demand():
    result = SinkBatchResult(inputs=[consumed(4), consumed(5)])
    assert result.offsets == [("t", 1, 4), ("t", 1, 5)]
    assert result.next_offsets() == {TopicPartition("t", 1): 6}
