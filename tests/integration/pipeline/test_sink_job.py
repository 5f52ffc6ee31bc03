"""SinkJob on a real local SparkSession: bytes to SinkRecords, transforms, offsets."""

from __future__ import annotations

import functools
import json

import pytest

from connect_lite.api import Header, Headers, Schema, SinkRecord, Struct, TopicPartition
from connect_lite.kafka import ConsumedMessage
from connect_lite.pipeline import SinkJob, SparkEngine
from connect_lite.protocol.job_spec import TransformSpec
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import Message, spec

pytestmark = pytest.mark.integration

STR = Schema.OPTIONAL_STRING_SCHEMA


def test_bytes_become_sink_records_with_headers(engine: SparkEngine):
    job = SinkJob(engine, spec("sink-basic"), "task-sink-basic")
    messages = [
        Message("t", 0, 10, b"k", b"v", [("h", b"1"), ("n", None)], 5, 1),
        Message("t", 1, 3, None, None, None, 6, "LogAppendTime"),
    ]
    result = job.run(messages)
    assert result.records == [
        SinkRecord(
            "t",
            0,
            10,
            "k",
            "v",
            STR,
            STR,
            5,
            "CreateTime",
            Headers((Header("h", "1", STR), Header("n", None, STR))),
        ),
        SinkRecord("t", 1, 3, None, None, STR, STR, 6, "LogAppendTime", Headers()),
    ]
    assert result.indices == [0, 1]
    assert result.offsets == [("t", 0, 10), ("t", 1, 3)]


def test_the_consumers_messages_give_the_same_records(engine: SparkEngine):
    """ConsumedMessage rows travel as they are, in columns; the records are the same."""
    job = SinkJob(engine, spec("sink-consumed"), "task-sink-consumed")
    messages = [
        ConsumedMessage("t", 0, 10, b"k", b"v", [("h", b"1")], 5, "CreateTime"),
        ConsumedMessage("t", 1, 3, None, None, [], None, "NoTimestampType"),
    ]
    result = job.run(messages)
    assert result.records == [
        SinkRecord("t", 0, 10, "k", "v", STR, STR, 5, "CreateTime",
                   Headers((Header("h", "1", STR),))),
        SinkRecord("t", 1, 3, None, None, STR, STR, None, "NoTimestampType", Headers()),
    ]  # fmt: skip
    assert result.offsets == [("t", 0, 10), ("t", 1, 3)]


def test_struct_values_and_a_struct_transform(engine: SparkEngine):
    schema = plugins.person_schema()
    transforms = (TransformSpec(plugins.UpperValue),)
    job = SinkJob(
        engine,
        spec("sink-struct", plugins.JsonStructConverter, transforms, value_args=(schema,)),
        "task-sink-struct",
    )
    messages = [
        Message("p", 0, i, None, json.dumps({"id": i, "name": f"n{i}"}).encode()) for i in range(4)
    ]
    result = job.run(messages)
    assert [r.value for r in result.records] == [
        Struct(schema, {"id": i, "name": f"N{i}"}) for i in range(4)
    ]
    assert all(r.value_schema == schema for r in result.records)


def test_schemaless_json_values(engine: SparkEngine):
    job = SinkJob(engine, spec("sink-json", plugins.JsonStructConverter), "task-sink-json")
    result = job.run([Message("j", 0, 0, None, b'{"a":[1,2],"b":null}')])
    assert result.records[0].value == {"a": [1, 2], "b": None}
    assert result.records[0].value_schema is None


def test_drops_predicates_order_and_offsets_of_everything(engine: SparkEngine):
    transforms = (
        TransformSpec(
            functools.partial(plugins.DropIfContains, "x"), functools.partial(plugins.TopicIs, "a")
        ),
        TransformSpec(plugins.UpperValue, functools.partial(plugins.TopicIs, "a"), negate=True),
    )
    job = SinkJob(engine, spec("sink-tx", transforms=transforms), "task-sink-tx")
    messages = [
        Message(
            "a" if i % 2 else "b", i % 3, i, None, (f"x{i}" if i % 4 == 1 else f"v{i}").encode()
        )
        for i in range(1_001)
    ]
    result = job.run(messages)
    dropped = [i for i in range(1_001) if i % 4 == 1]  # topic "a" and contains "x"
    assert result.dropped == dropped
    assert result.indices == [i for i in range(1_001) if i not in set(dropped)]
    for index, record in zip(result.indices, result.records, strict=True):
        original = messages[index]
        assert (record.topic, record.kafka_partition, record.kafka_offset) == (
            original.topic,
            original.partition,
            original.offset,
        )
        expected = original.value.decode()
        assert record.value == (expected if original.topic == "a" else expected.upper())
    assert len(result.offsets) == 1_001
    assert result.next_offsets() == {
        TopicPartition("a", p): max(i for i in range(1_001) if i % 2 and i % 3 == p) + 1
        for p in range(3)
    } | {
        TopicPartition("b", p): max(i for i in range(1_001) if not i % 2 and i % 3 == p) + 1
        for p in range(3)
    }


def test_all_dropped_still_reports_offsets(engine: SparkEngine):
    transforms = (TransformSpec(functools.partial(plugins.DropIfContains, "")),)
    job = SinkJob(engine, spec("sink-none", transforms=transforms), "task-sink-none")
    result = job.run([Message("t", 0, i, None, b"v") for i in range(7)])
    assert result.records == [] and result.dropped == list(range(7))
    assert result.next_offsets() == {TopicPartition("t", 0): 7}


def test_vectorized_to_connect_batch(engine: SparkEngine):
    job = SinkJob(engine, spec("sink-vec", plugins.BatchUtf8Converter), "task-sink-vec")
    messages = [Message(f"t{i % 2}", 0, i, None, f"v{i}".encode()) for i in range(300)]
    assert [r.value for r in job.run(messages).records] == [f"v{i}" for i in range(300)]
