"""Records keep the frozen-dataclass contract of PLUGIN_API.md."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from connect_lite.api import Headers, Schema, SinkRecord, SourceRecord


def test_source_record_is_a_frozen_dataclass_with_defaults() -> None:
    record = SourceRecord({"f": "a"}, {"p": 1}, "t", "v")
    assert (record.key, record.kafka_partition, record.timestamp) == (None, None, None)
    assert record.headers == Headers()
    assert [f.name for f in dataclasses.fields(record)][:4] == [
        "source_partition",
        "source_offset",
        "topic",
        "value",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.value = "w"  # type: ignore[misc]  # the point of the test
    changed = dataclasses.replace(record, value="w", key_schema=Schema.STRING_SCHEMA)
    assert (changed.value, changed.topic, record.value) == ("w", "t", "v")
    assert changed.key_schema is Schema.STRING_SCHEMA
    assert record == SourceRecord({"f": "a"}, {"p": 1}, "t", "v")
    assert pickle.loads(pickle.dumps(record)) == record
    assert "SourceRecord(source_partition={'f': 'a'}" in repr(record)


def test_sink_record_keywords_equality_and_replace() -> None:
    record = SinkRecord(
        topic="t",
        kafka_partition=1,
        kafka_offset=5,
        key=b"k",
        value={"a": 1},
        timestamp=7,
        headers=Headers().add("h", "x"),
    )
    assert record.timestamp_type == "CreateTime"
    assert record.headers.last_with_name("h") is not None
    assert dataclasses.replace(record, kafka_offset=6).kafka_offset == 6
    assert record != dataclasses.replace(record, value={"a": 2})
    assert pickle.loads(pickle.dumps(record)) == record
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.topic = "u"  # type: ignore[misc]  # the point of the test
