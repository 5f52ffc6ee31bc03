"""put_dataframe and RetriableError redelivery, against a real broker, Spark and worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import create_running, lines, sink_config, unique

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "struct",
    "name": "Reading",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "place", "type": "string", "optional": True},
    ],
}
JSON_VALUES = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",
}


def reading(i: int, schema: dict[str, Any] | None = SCHEMA) -> str:
    payload = {"id": i, "place": f"p{i}"}
    return json.dumps(payload if schema is None else {"schema": schema, "payload": payload})


def start(worker: EmbeddedConnect, config: dict[str, str]) -> str:
    return create_running(worker, "df", config)


def rows(path: Path, count: int) -> list[dict[str, Any]]:
    found = wait_for(lambda: len(lines(path)) >= count and lines(path), what=f"{count} rows")
    return [json.loads(line) for line in found]


def committed(worker: EmbeddedConnect, name: str) -> int | None:
    body = worker.http.get(f"/connectors/{name}/offsets").body
    offsets = [o["offset"]["kafka_offset"] for o in body["offsets"]]
    return max(offsets) if offsets else None


def test_put_dataframe_gets_typed_rows_and_offsets_commit_after_it(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, out = unique("df-typed"), tmp_path / "typed.jsonl"
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [(f"k{i}", reading(i)) for i in range(20)], partition=0)
    name = start(
        worker,
        {**sink_config(topic, out), "connector.class": "DataFrameSink", **JSON_VALUES},
    )
    got = rows(out, 20)
    assert [r["offset"] for r in got] == list(range(20))
    assert [r["value"] for r in got] == [{"id": i, "place": f"p{i}"} for i in range(20)]
    assert got[0]["types"] == {"key": "string", "value": "struct<id:bigint,place:string>"}
    assert got[3]["key"] == "k3" and got[3]["topic"] == topic and got[3]["timestamp"]
    wait_for(lambda: committed(worker, name) == 20, what="offsets committed")


def test_schemaless_rows_come_as_json_text_and_an_inferred_struct(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, out = unique("df-schemaless"), tmp_path / "schemaless.jsonl"
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [reading(i, None) for i in range(5)], partition=0)
    start(
        worker,
        {
            **sink_config(topic, out),
            "connector.class": "DataFrameSink",
            **JSON_VALUES,
            "value.converter.schemas.enable": "false",
        },
    )
    got = rows(out, 5)
    assert [json.loads(r["value"]) for r in got] == [{"id": i, "place": f"p{i}"} for i in range(5)]
    assert [r["value_struct"] for r in got] == [{"id": i, "place": f"p{i}"} for i in range(5)]
    assert got[0]["types"]["value"] == "string"


@pytest.mark.parametrize("connector_class", ["RecordingSink", "DataFrameSink"])
def test_a_retriable_error_redelivers_the_same_batch(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path, connector_class: str
) -> None:
    topic, out, log = unique("df-retry"), tmp_path / "retry.jsonl", tmp_path / "puts.jsonl"
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [reading(i, None) for i in range(10)], partition=0)
    name = start(
        worker,
        {
            **sink_config(topic, out),
            "connector.class": connector_class,
            **JSON_VALUES,
            "value.converter.schemas.enable": "false",
            "retriable.failures": "2",
            "retry.timeout.ms": "200",
            "put.log": str(log),
        },
    )
    rows(out, 10)
    wait_for(lambda: committed(worker, name) == 10, what="offsets committed")
    got = [json.loads(line) for line in lines(out)]  # read after the commit: no late extras
    assert sorted(r["offset"] for r in got) == list(range(10))  # each record exactly once
    calls = [json.loads(line) for line in lines(log)]
    assert calls[0] == calls[1] == calls[2]  # twice refused, then the same records again
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_a_failing_put_dataframe_follows_errors_tolerance(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, dlq = unique("df-fail"), unique("df-dlq")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [reading(i) for i in range(4)], partition=0)
    base = {
        **sink_config(topic, tmp_path / "never.jsonl"),
        "connector.class": "DataFrameSink",
        **JSON_VALUES,
        "fail.on.put": "true",
    }
    tolerant = start(
        worker,
        {
            **base,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    dead = kafka.consume(dlq, 4, timeout=60)
    assert [json.loads(m.value or b"")["payload"]["id"] for m in dead] == [0, 1, 2, 3]
    jobs = {dict(m.headers).get("__connect.errors.stage") for m in dead}
    assert jobs == {b"TASK_PUT"}
    wait_for(lambda: committed(worker, tolerant) == 4, what="skipped offsets committed")
    assert worker.client.status(tolerant)["tasks"][0]["state"] == "RUNNING"

    failing = unique("df-fails")
    response = worker.http.post("/connectors", {"name": failing, "config": base})
    assert response.status == 201, response.body
    task = wait_for(
        lambda: (
            (t := worker.client.status(failing)["tasks"]) and t[0]["state"] == "FAILED" and t[0]
        ),
        what="task FAILED",
    )
    assert "scripted put failure" in task["trace"]
    assert "Exiting WorkerSinkTask due to unrecoverable exception" in task["trace"]


LEVEL = {"field": "level", "type": "int32", "optional": True}
WIDER = {**SCHEMA, "name": "Reading2", "fields": [*SCHEMA["fields"], LEVEL]}


def test_partitions_read_by_the_executors_keep_order_schemas_and_errors(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    """Two partitions, a schema change and a bad record in one of them: every good record is
    handed over once, each put_dataframe holds one schema, the bad record goes to the dead
    letter queue, and the group's offsets reach the ends."""
    topic, dlq, out = unique("df-ranges"), unique("df-ranges-dlq"), tmp_path / "ranges.jsonl"
    kafka.create_topic(topic, 2)

    def wider(i: int) -> str:
        return json.dumps({"schema": WIDER, "payload": {"id": i, "place": f"p{i}", "level": i}})

    first = [(f"k{i}", reading(i)) for i in range(5)] + [("bad", "{not json")]
    kafka.produce(topic, first + [(f"k{i}", wider(i)) for i in range(6, 11)], partition=0)
    kafka.produce(topic, [(f"k{i}", reading(i)) for i in range(10)], partition=1)
    name = start(
        worker,
        {
            **sink_config(topic, out),
            "connector.class": "DataFrameSink",
            **JSON_VALUES,
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    )
    got = rows(out, 20)
    dead = kafka.consume(dlq, 1, timeout=60)
    assert [m.value for m in dead] == [b"{not json"]
    by_partition = {p: [r for r in got if r["partition"] == p] for p in (0, 1)}
    assert [r["offset"] for r in by_partition[0]] == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]
    assert sorted(r["offset"] for r in by_partition[1]) == list(range(10))
    narrow, wide = "struct<id:bigint,place:string>", "struct<id:bigint,place:string,level:int>"
    assert [r["types"]["value"] for r in by_partition[0]] == [narrow] * 5 + [wide] * 5
    assert {r["types"]["value"] for r in by_partition[1]} == {narrow}
    body = worker.http.get(f"/connectors/{name}/offsets").body
    wait_for(
        lambda: (
            sorted(
                (o["partition"]["kafka_partition"], o["offset"]["kafka_offset"])
                for o in worker.http.get(f"/connectors/{name}/offsets").body["offsets"]
            )
            == [(0, 11), (1, 10)]
        ),
        what=f"offsets at the ends (last seen {body})",
    )
