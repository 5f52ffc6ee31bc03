"""A poll_dataframe batch (SourceJob.run_frame) on a real local SparkSession and the session's
broker: typed keys and values through the converters, the executors produce every row, each
source partition's rows in order and its last offset, a missing column refused, a default
topic, headers as given, a transform, and a schema declared in a column's metadata."""

from __future__ import annotations

import functools
import json
import pickle
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import pytest
from pyspark.sql import types as T

from connect_lite.api import logical
from connect_lite.api.errors import ConnectError
from connect_lite.pipeline import SourceJob, SparkEngine
from connect_lite.pipeline.source_frames import plan_frame
from connect_lite.protocol.job_spec import TransformSpec
from connect_lite.testing.kafka_helpers import KafkaHelpers
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import new_topic, send_order, spec

pytestmark = pytest.mark.integration

ROW = T.StructType(
    [
        T.StructField("key", T.StringType()),
        T.StructField(
            "value",
            T.StructType(
                [T.StructField("id", T.LongType()), T.StructField("name", T.StringType())]
            ),
        ),
        T.StructField("topic", T.StringType()),
        T.StructField("source_partition", T.StringType()),
        T.StructField("source_offset", T.StringType()),
    ]
)


def _ids_by_file(messages: list[Any]) -> dict[str, list[int]]:
    """The ids of the consumed {id, name} values, in order, by the name's first letter."""
    ids: dict[str, list[int]] = defaultdict(list)
    for message in messages:
        value = json.loads(message.value or b"")
        ids[value["name"][0]].append(value["id"])
    return dict(ids)


def test_a_frame_of_several_partitions_is_produced_in_order_with_each_last_offset(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    files = ("a", "b", "c")
    rows = [
        (
            f"{f}{i}",
            (i, f"{f}-{i}"),
            topic,
            json.dumps({"file": f}),
            json.dumps({"line": i}),
        )
        for i in range(300)
        for f in files
    ]
    frame = engine.session().createDataFrame(rows, ROW).coalesce(1)
    job = SourceJob(engine, spec("frames", plugins.JsonStructConverter), "task-frames")
    result = job.run_frame(frame, None, send_order(bootstrap_servers))
    assert result.size == 900 and result.sent == 900 and result.rows == []
    assert result.send_failure is None and result.errors == []
    assert result.offsets == {
        json.dumps({"file": f}, separators=(",", ":")): ({"file": f}, {"line": 299}) for f in files
    }
    got = kafka.consume(topic, count=900, timeout=30)
    lines: dict[str, list[int]] = defaultdict(list)
    for message in got:
        value = json.loads(message.value or b"")
        assert message.key == f"{value['name'][0]}{value['id']}".encode()
        lines[value["name"][0]].append(value["id"])
    assert {f: lines[f] for f in files} == {f: list(range(300)) for f in files}


def test_a_frame_split_over_spark_partitions_keeps_each_source_partitions_order(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    """The frame's own partitions mix the source partitions: the job regroups them, in the
    frame's order."""
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    rows = [
        (None, (i, f"{f}-{i}"), topic, json.dumps({"file": f}), json.dumps({"line": i}))
        for i in range(400)
        for f in ("x", "y")
    ]
    frame = engine.session().createDataFrame(rows, ROW)  # slices of the list, in order
    assert frame.rdd.getNumPartitions() > 1
    job = SourceJob(engine, spec("frames-split", plugins.JsonStructConverter), "task-frames-s")
    result = job.run_frame(frame, None, send_order(bootstrap_servers))
    assert result.sent == 800
    assert {key: offset for key, (_, offset) in result.offsets.items()} == {
        '{"file":"x"}': {"line": 399},
        '{"file":"y"}': {"line": 399},
    }
    assert _ids_by_file(kafka.consume(topic, count=800, timeout=30)) == {
        "x": list(range(400)),
        "y": list(range(400)),
    }


def test_a_frame_is_spread_over_more_spark_partitions_unless_it_says_it_is_partitioned(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    """Two source partitions hashed into the engine's parallelism would often share a Spark
    task: a small frame gets four times its partitions. A frame whose source_partition says
    connect.partitioned (a Spark partition per source partition here) is not shuffled."""
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    session = engine.session()
    frame = session.range(0, 600, numPartitions=2).selectExpr(  # 0-299, then 300-599
        "CAST(NULL AS STRING) AS key",
        "named_struct('id', id % 300, 'name', concat(IF(id < 300, 'x', 'y'), '-', id % 300))"
        " AS value",
        f"'{topic}' AS topic",
        'IF(id < 300, \'{"file":"x"}\', \'{"file":"y"}\') AS source_partition',
        "concat('{\"line\":', id % 300, '}') AS source_offset",
    )
    assert frame.rdd.getNumPartitions() == 2
    spread = plan_frame(frame, None, engine.default_parallelism).frame
    assert spread.rdd.getNumPartitions() == max(
        engine.default_parallelism, min(8, 4 * engine.default_parallelism)
    )
    marked = frame.withMetadata("source_partition", {"connect.partitioned": True})
    kept = plan_frame(marked, None, engine.default_parallelism).frame
    assert kept.rdd.getNumPartitions() == 2
    assert "Exchange" not in kept._jdf.queryExecution().executedPlan().toString()
    job = SourceJob(engine, spec("frames-kept", plugins.JsonStructConverter), "task-frames-k")
    result = job.run_frame(marked, None, send_order(bootstrap_servers))
    assert result.sent == 600
    assert _ids_by_file(kafka.consume(topic, count=600, timeout=30)) == {
        "x": list(range(300)),
        "y": list(range(300)),
    }


def test_the_connectors_topic_headers_and_timestamps_and_a_transform(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    schema = T.StructType(
        [
            T.StructField("key", T.StringType()),
            T.StructField("value", T.StringType()),
            T.StructField("timestamp", T.TimestampType()),
            T.StructField(
                "headers",
                T.ArrayType(
                    T.StructType(
                        [
                            T.StructField("key", T.StringType()),
                            T.StructField("value", T.BinaryType()),
                        ]
                    )
                ),
            ),
            T.StructField("source_partition", T.StringType()),
            T.StructField("source_offset", T.StringType()),
        ]
    )
    stamp = datetime(2026, 11, 28, 1, 2, 3, tzinfo=UTC)
    rows = [
        ("k", "hello", stamp, [("h", b"raw")], '{"p":1}', '{"o":1}'),
        (None, "drop me", None, None, '{"p":1}', '{"o":2}'),
    ]
    frame = engine.session().createDataFrame(rows, schema)
    transforms = (
        TransformSpec(functools.partial(plugins.DropIfContains, "drop")),
        TransformSpec(plugins.UpperValue),
    )
    job = SourceJob(engine, spec("frames-tx", transforms=transforms), "task-frames-tx")
    result = job.run_frame(frame, topic, send_order(bootstrap_servers))
    assert result.size == 2 and result.sent == 1
    assert result.offsets == {'{"p":1}': ({"p": 1}, {"o": 2})}  # the dropped row counts too
    [message] = kafka.consume(topic, count=1)
    assert (message.key, message.value) == (b"k", b"HELLO")
    assert message.headers == [("h", b"raw")]
    assert message.timestamp == int(stamp.timestamp() * 1000)


def test_a_value_with_a_timestamp_takes_the_schema_its_metadata_declares(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    stamp = datetime(2026, 11, 28, 1, 2, 3, tzinfo=UTC)
    frame = engine.session().sql(
        "SELECT CAST(NULL AS STRING) AS key, named_struct('id', 7L, 'at', "
        "TIMESTAMP '2026-11-28 01:02:03') AS value, '{\"p\":1}' AS source_partition, "
        "'{\"o\":1}' AS source_offset"
    )
    declared = {
        "type": "struct",
        "name": "com.example.Event",
        "optional": False,
        "fields": [{"field": "id", "optional": False}],
    }
    frame = frame.withMetadata("value", {"connect.schema": declared})
    job = SourceJob(engine, spec("frames-declared", plugins.PickleConverter), "task-declared")
    result = job.run_frame(frame, topic, send_order(bootstrap_servers))
    assert result.sent == 1 and result.errors == []
    [message] = kafka.consume(topic, count=1)
    sent = pickle.loads(message.value or b"")
    schema = sent.schema
    assert (schema.name, schema.optional) == ("com.example.Event", False)
    fields = {f.name: f.schema for f in schema.fields}
    assert not fields["id"].optional and fields["at"].optional  # declared / inferred
    assert fields["at"].name == logical.TIMESTAMP and sent.value.get("at") == stamp
    with pytest.raises(ConnectError, match=r"Column value is of Connect type struct"):
        job.run_frame(
            frame.withMetadata("value", {"connect.schema": {"type": "string"}}),
            topic,
            send_order(bootstrap_servers),
        )


def test_a_frame_without_the_required_columns_is_refused(engine: SparkEngine) -> None:
    frame = engine.session().createDataFrame([("v",)], "value string")
    job = SourceJob(engine, spec("frames-bad"), "task-frames-bad")
    with pytest.raises(ConnectError, match="without the column\\(s\\) key, source_partition"):
        job.run_frame(frame, "t", send_order("127.0.0.1:9"))


def test_a_frame_without_a_topic_needs_the_connectors(engine: SparkEngine) -> None:
    frame = engine.session().createDataFrame(
        [("k", "v", "{}", "{}")],
        "key string, value string, source_partition string, source_offset string",
    )
    job = SourceJob(engine, spec("frames-notopic"), "task-frames-notopic")
    with pytest.raises(ConnectError, match="no 'topic' setting"):
        job.run_frame(frame, None, send_order("127.0.0.1:9"))


def test_rows_without_a_source_partition_or_offset_are_produced_and_commit_nothing(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "frames")
    rows = [
        ("a", (1, "one"), topic, None, None),
        ("b", (2, "two"), topic, '{"file":"f"}', None),
        ("c", (3, "three"), topic, '{"file":"f"}', '{"line":3}'),
    ]
    frame = engine.session().createDataFrame(rows, ROW)
    job = SourceJob(engine, spec("frames-null", plugins.JsonStructConverter), "task-frames-null")
    result = job.run_frame(frame, None, send_order(bootstrap_servers))
    assert result.sent == 3 and result.offsets == {'{"file":"f"}': ({"file": "f"}, {"line": 3})}
    assert [m.key for m in kafka.consume(topic, count=3)] == [b"a", b"b", b"c"]
