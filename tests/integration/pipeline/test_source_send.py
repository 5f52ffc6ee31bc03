"""A source batch produced by Spark's executors (SendOrder): order per source partition, topics
not yet readied held back for the driver, per-record placements, and a chain of column
expressions, on a real local SparkSession and the session's broker."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict

import pytest

from connect_lite.api import SourceRecord, Struct
from connect_lite.kafka.batch_sender import sender_config
from connect_lite.pipeline import SourceJob, SparkEngine, transfer
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.testing.kafka_helpers import KafkaHelpers
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import new_topic, send_order, spec
from tests.integration.pipeline.test_job_columns import PERSON, _specs

pytestmark = pytest.mark.integration


def test_each_source_partition_reaches_kafka_in_order_over_several_chunks(
    engine: SparkEngine, bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three files' records, interleaved, in chunks of 500: every record lands once, and each
    file's records keep their order in the topic's one partition."""
    monkeypatch.setattr(transfer, "MAX_CHUNK_RECORDS", 500)
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "sent")
    files = ("a", "b", "c")
    records = [
        SourceRecord({"file": f}, {"line": i}, topic, f"{f}:{i}")
        for i in range(2000)
        for f in files
    ]
    job = SourceJob(engine, spec("send-order"), "task-send-order")
    result = job.run(records, send=send_order(bootstrap_servers))
    assert result.rows == [] and result.send_failure is None
    assert result.sent == list(range(len(records)))
    assert result.sent_topics == {topic}
    got = kafka.consume(topic, count=len(records), timeout=30)
    assert len(got) == len(records)
    lines: dict[str, list[int]] = defaultdict(list)
    for message in got:
        assert message.value is not None
        file, line = message.value.decode().split(":")
        lines[file].append(int(line))
    assert {f: lines[f] for f in files} == {f: list(range(2000)) for f in files}


def test_records_of_topics_not_ready_are_held_for_the_driver(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    ready = new_topic(kafka, "sent")
    new = f"new-{uuid.uuid4().hex[:8]}"
    records = [
        SourceRecord({"file": "f"}, {"line": i}, new if i % 3 == 0 else ready, f"v{i}", key=f"k{i}")
        for i in range(30)
    ]
    job = SourceJob(engine, spec("send-held"), "task-send-held")
    result = job.run(records, send=send_order(bootstrap_servers, known=frozenset({ready})))
    held = [i for i in range(30) if i % 3 == 0]
    assert result.sent == [i for i in range(30) if i % 3] and result.sent_topics == {ready}
    assert [(row[0], row[1], row[3], row[4]) for row in result.rows] == [
        (i, new, f"k{i}".encode(), f"v{i}".encode()) for i in held
    ]
    assert [m.value for m in kafka.consume(ready, count=20)] == [
        f"v{i}".encode() for i in range(30) if i % 3
    ]
    assert new not in kafka.list_topics()  # nothing was produced to it


def test_each_record_placement_comes_back_when_the_task_wants_commit_record(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    topic = new_topic(kafka, "sent")
    records = [
        SourceRecord({"file": "f"}, {"line": i}, topic, f"v{i}", timestamp=1_700_000_000_000 + i)
        for i in range(10)
    ]
    job = SourceJob(engine, spec("send-each"), "task-send-each")
    result = job.run(records, send=send_order(bootstrap_servers, each=True))
    assert result.sent == list(range(10))
    assert [result.placements[i] for i in range(10)] == [
        (topic, 0, i, 1_700_000_000_000 + i) for i in range(10)
    ]


def test_a_chain_of_column_expressions_is_produced_by_the_executors(
    engine: SparkEngine, bootstrap_servers: str
) -> None:
    """RegexRouter, InsertField, MaskField and a Filter, compiled to Spark columns: the
    records the chain keeps land in the routed topic, the audit record is dropped."""
    kafka = KafkaHelpers(bootstrap_servers)
    routed = f"people{uuid.uuid4().hex[:8]}"
    kafka.create_topic(routed, 1)
    job = SourceJob(
        engine, spec("send-cols", plugins.JsonStructConverter, _specs()), "task-send-cols"
    )
    records = [
        SourceRecord(
            {"f": 1},
            {"pos": i},
            "audit" if i == 2 else f"{routed}-raw",
            Struct(PERSON, {"id": i, "name": f"n{i}"}),
            value_schema=PERSON,
        )
        for i in range(5)
    ]
    result = job.run(records, send=send_order(bootstrap_servers))
    assert job.compiled_batches == 1
    assert result.dropped == [2] and result.sent == [0, 1, 3, 4] and result.rows == []
    assert result.sent_topics == {routed}
    values = [json.loads(m.value or b"") for m in kafka.consume(routed, count=4)]
    assert values == [{"id": i, "name": "", "origin": "lab"} for i in (0, 1, 3, 4)]


def test_a_failed_delivery_is_reported_not_raised(engine: SparkEngine) -> None:
    """A record over the producer's message size: the job returns the failure, which the
    task turns into its own failure (nothing of the batch is committed)."""
    order = SendOrder(
        sender_config({"bootstrap.servers": "127.0.0.1:9", "message.max.bytes": "1000"}),
        None,
        False,
    )
    job = SourceJob(engine, spec("send-fail"), "task-send-fail")
    result = job.run([SourceRecord({"f": 1}, {"pos": 0}, "t", "x" * 5000)], send=order)
    assert result.send_failure is not None and "cannot produce to t" in result.send_failure
