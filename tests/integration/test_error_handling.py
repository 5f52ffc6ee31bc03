"""errors.* against a real broker and worker: tolerance, the dead letter queue, errant records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from connect_lite.kafka import ConsumedMessage
from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import lines, metric, sink_config, unique

pytestmark = pytest.mark.integration

# Good JSON and malformed JSON, the last one malformed: its offset must still be committed.
VALUES = ['{"n": 0}', "not json", '{"n": 2}', '{"n": 3', '{"n": 4}', "{oops}"]
GOOD = [0, 2, 4]
BAD = [1, 3, 5]

JSON_VALUES = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}


def dlq_settings(dlq: str) -> dict[str, str]:
    return {
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }


def start(worker: EmbeddedConnect, config: dict[str, str]) -> str:
    name = unique("eh")
    response = worker.http.post("/connectors", {"name": name, "config": config})
    assert response.status == 201, response.body
    return name


def fill(kafka: KafkaHelpers, topic: str, values: list[str]) -> None:
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [(f"k{i}", v) for i, v in enumerate(values)], partition=0)


def headers_of(message: ConsumedMessage) -> dict[str, str]:
    return {k: (v or b"").decode() for k, v in message.headers if k.startswith("__connect.")}


def committed(worker: EmbeddedConnect, name: str) -> Any:
    return worker.http.get(f"/connectors/{name}/offsets").body["offsets"]


def test_tolerance_all_puts_the_good_records_and_sends_the_bad_to_the_dlq(
    worker: EmbeddedConnect, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    u = unique("eh-all")
    topic, dlq, out = f"{u}-in", f"{u}-dlq", worker.workdir / f"{u}.jsonl"
    fill(kafka, topic, VALUES)
    config = {
        **sink_config(topic, out),
        **JSON_VALUES,
        **dlq_settings(dlq),
        "errors.tolerance": "all",
        "errors.log.enable": "true",
        "errors.log.include.messages": "true",
    }
    name = start(worker, config)

    wait_for(lambda: len(lines(out)) >= len(GOOD), 120, what="the good records")
    rows = [json.loads(line) for line in lines(out)]
    assert [(r["offset"], r["key"], r["value"]) for r in rows] == [
        (i, f"k{i}", {"n": i}) for i in GOOD
    ]

    dead = kafka.consume(dlq, count=len(BAD), timeout=60)
    assert [(m.offset, m.key, m.value) for m in dead] == [
        (j, f"k{i}".encode(), VALUES[i].encode()) for j, i in enumerate(BAD)
    ]
    for message, i in zip(dead, BAD, strict=True):
        headers = headers_of(message)
        assert {k: headers[k] for k in sorted(headers) if "exception" not in k} == {
            "__connect.errors.class.name": headers["__connect.errors.class.name"],
            "__connect.errors.connector.name": name,
            "__connect.errors.offset": str(i),
            "__connect.errors.partition": "0",
            "__connect.errors.stage": "VALUE_CONVERTER",
            "__connect.errors.task.id": "0",
            "__connect.errors.topic": topic,
        }
        assert headers["__connect.errors.class.name"].endswith("JsonConverter")
        assert headers["__connect.errors.exception.class.name"]
        assert headers["__connect.errors.exception.message"]
        assert "Traceback" in headers["__connect.errors.exception.stacktrace"]

    expected = {
        "total_record_failures": 3.0,
        "total_record_errors": 3.0,
        "total_records_skipped": 3.0,
        "total_retries": 0.0,
        "total_errors_logged": 3.0,
        "deadletterqueue_produce_requests": 3.0,
        "deadletterqueue_produce_failures": 0.0,
    }
    for key, value in expected.items():
        assert metric(worker, key, name) == value, key
    last_error = metric(worker, "last_error_timestamp", name)
    assert last_error is not None and last_error > 1.6e12

    # The skipped last record's offset is committed too: nothing is read again.
    entry = {
        "partition": {"kafka_topic": topic, "kafka_partition": 0},
        "offset": {"kafka_offset": len(VALUES)},
    }
    wait_for(lambda: committed(worker, name) == [entry], 60, what="offsets past the bad record")
    assert (
        f"Error encountered in task {name}-0. Executing stage 'VALUE_CONVERTER'"
        in worker.log_text()
    )
    assert f"where consumed record is {{topic='{topic}', partition=0, offset=5" in worker.log_text()
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_tolerance_none_fails_the_task_naming_stage_and_record(
    worker: EmbeddedConnect, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    u = unique("eh-none")
    topic, dlq, out = f"{u}-in", f"{u}-dlq", worker.workdir / f"{u}.jsonl"
    fill(kafka, topic, VALUES)
    name = start(worker, {**sink_config(topic, out), **JSON_VALUES, **dlq_settings(dlq)})

    def failed() -> Any:
        task = worker.client.status(name)["tasks"][0]
        return task if task["state"] == "FAILED" else None

    task = wait_for(failed, 120, what="the task FAILED")
    trace = task["trace"]
    assert "Tolerance exceeded in error handler" in trace
    assert "VALUE_CONVERTER" in trace
    assert f"topic='{topic}', partition=0, offset=1" in trace
    assert not lines(out)  # the batch with the bad record is not put
    # As in Kafka, the record that failed the task is still reported to the DLQ.
    dead = kafka.consume(dlq, count=1, timeout=60)
    assert [(m.key, m.value) for m in dead] == [(b"k1", b"not json")]
    assert headers_of(dead[0])["__connect.errors.offset"] == "1"
    assert metric(worker, "total_records_skipped", name) == 0.0
    assert metric(worker, "total_record_errors", name) == 1.0


def test_records_reported_by_the_task_go_to_the_dlq(
    worker: EmbeddedConnect, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    u = unique("eh-errant")
    topic, dlq, out = f"{u}-in", f"{u}-dlq", worker.workdir / f"{u}.jsonl"
    values = ["good-0", "bad", "good-2", "bad", "good-4"]
    fill(kafka, topic, values)
    config = {
        **sink_config(topic, out),
        **dlq_settings(dlq),
        "connector.class": "ErrantReportingSink",
        "errant.marker": "bad",
        "errors.tolerance": "all",
        # A renamed topic: the reporter must still find each record's consumed message.
        "transforms": "rename",
        "transforms.rename.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.rename.regex": "(.*)-in",
        "transforms.rename.replacement": "$1-renamed",
    }
    name = start(worker, config)

    wait_for(lambda: len(lines(out)) >= 3, 120, what="the good records")
    rows = [json.loads(line) for line in lines(out)]
    assert [(r["topic"], r["value"]) for r in rows] == [
        (f"{u}-renamed", v) for v in ("good-0", "good-2", "good-4")
    ]
    dead = kafka.consume(dlq, count=2, timeout=60)
    assert [(m.key, m.value) for m in dead] == [(b"k1", b"bad"), (b"k3", b"bad")]
    headers = headers_of(dead[1])
    assert headers["__connect.errors.topic"] == topic  # the consumed record's, as Kafka
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert headers["__connect.errors.offset"] == "3"
    assert headers["__connect.errors.class.name"].endswith("ErrantReportingSinkTask")
    assert headers["__connect.errors.exception.class.name"] == "builtins.ValueError"
    assert headers["__connect.errors.exception.message"] == "marked errant at offset 3"
    assert metric(worker, "deadletterqueue_produce_requests", name) == 2.0
    assert metric(worker, "total_record_failures", name) == 2.0
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_retriable_converter_errors_are_retried_until_they_pass(
    worker: EmbeddedConnect, bootstrap_servers: str
) -> None:
    kafka = KafkaHelpers(bootstrap_servers)
    u = unique("eh-retry")
    topic, out = f"{u}-in", worker.workdir / f"{u}.jsonl"
    values = [f"{u}-{i}" for i in range(4)]  # new to every worker process: each fails once
    fill(kafka, topic, values)
    config = {
        **sink_config(topic, out),
        "value.converter": "FlakyStringConverter",
        "errors.retry.timeout": "30000",
        "errors.retry.delay.max.ms": "1000",
    }
    name = start(worker, config)

    wait_for(lambda: len(lines(out)) >= len(values), 120, what="every record, after retries")
    assert [json.loads(line)["value"] for line in lines(out)] == values
    assert metric(worker, "total_retries", name) == len(values)
    assert metric(worker, "total_record_failures", name) == len(values)  # the failed attempts
    assert metric(worker, "total_record_errors", name) == 0.0
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"
