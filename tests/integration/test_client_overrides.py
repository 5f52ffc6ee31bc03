"""Client overrides on a real worker: a value its client would refuse is refused when the config
is written (an error of its key in /config/validate, a 400 at create and update), not when the
task is built; a valid one runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import lines, sink_config, source_config, unique

pytestmark = pytest.mark.integration

INVALID = "Connector configuration is invalid and contains the following 1 error(s):\n"
ENDPOINT = (
    "\nYou can also find the above list of errors at the endpoint "
    "`/connector-plugins/{connectorType}/config/validate`"
)


def key_errors(answer: dict[str, Any], key: str) -> list[str]:
    [value] = [c["value"] for c in answer["configs"] if c["value"] and c["value"]["name"] == key]
    return list(value["errors"])


def refused_everywhere(
    worker: EmbeddedConnect, plugin: str, config: dict[str, str], key: str, message: str
) -> None:
    """The key's one error in /config/validate, then 400 on POST and on PUT, nothing made."""
    name = unique("refused")
    answer = worker.client.validate(plugin, {"name": name, **config})
    assert answer["error_count"] == 1
    assert key_errors(answer, key) == [message]
    created = worker.http.post("/connectors", {"name": name, "config": config})
    assert (created.status, created.body) == (
        400,
        {"error_code": 400, "message": INVALID + message + ENDPOINT},
    )
    put = worker.http.put(f"/connectors/{name}/config", config)
    assert (put.status, put.body["message"]) == (400, INVALID + message + ENDPOINT)
    assert worker.http.get(f"/connectors/{name}").status == 404


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0", "Invalid value 0 for configuration max.poll.records: Value must be at least 1"),
        ("abc", "Invalid value abc for configuration max.poll.records: Not a number of type INT"),
    ],
)
def test_a_consumer_override_its_client_would_refuse(
    worker: EmbeddedConnect, tmp_path: Path, raw: str, message: str
) -> None:
    config = {
        **sink_config(unique("t"), tmp_path / "out.jsonl"),
        "consumer.override.max.poll.records": raw,
    }
    refused_everywhere(
        worker, "RecordingSink", config, "consumer.override.max.poll.records", message
    )


def test_a_producer_override_librdkafka_would_refuse(worker: EmbeddedConnect) -> None:
    # Kafka's Java rule takes it (a LONG of at least 0); librdkafka, connect-lite's client, not
    config = {**source_config(unique("t")), "producer.override.linger.ms": "1000000"}
    message = (
        "Invalid value 1000000 for configuration linger.ms: librdkafka refuses it: "
        'Configuration property "queue.buffering.max.ms" value 1e+06 is outside allowed range '
        "0..900000"
    )
    refused_everywhere(worker, "ScriptedSource", config, "producer.override.linger.ms", message)


def test_an_admin_override_its_client_would_refuse(worker: EmbeddedConnect) -> None:
    # topic creation makes the source use an admin client
    config = {
        **source_config(unique("t")),
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "1",
        "admin.override.retries": "-1",
    }
    message = "Invalid value -1 for configuration retries: Value must be at least 0"
    refused_everywhere(worker, "ScriptedSource", config, "admin.override.retries", message)


def test_a_secret_override_is_never_quoted(worker: EmbeddedConnect) -> None:
    config = {**source_config(unique("t")), "producer.override.sasl.jaas.config": "hunter2"}
    answer = worker.client.validate("ScriptedSource", {"name": unique("secret"), **config})
    assert answer["error_count"] == 0
    [value] = [
        c["value"]
        for c in answer["configs"]
        if c["value"] and c["value"]["name"] == "producer.override.sasl.jaas.config"
    ]
    assert value["value"] == "[hidden]"
    assert "hunter2" not in json.dumps(answer)


def test_valid_overrides_are_taken_and_run(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, out, puts = unique("overrides"), tmp_path / "out.jsonl", tmp_path / "puts.jsonl"
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [f"value-{i}" for i in range(12)], partition=0)
    config = {
        **sink_config(topic, out),
        "put.log": str(puts),
        "consumer.override.max.poll.records": "5",
        "consumer.override.auto.offset.reset": "earliest",
        "consumer.override.partition.assignment.strategy": (
            "org.apache.kafka.clients.consumer.RangeAssignor"
        ),
    }
    name = unique("overrides")
    assert worker.client.validate("RecordingSink", {"name": name, **config})["error_count"] == 0
    worker.create_running(name, config, tasks=1)
    wait_for(lambda: len(lines(out)) >= 12, 120, what="12 records in the sink file")
    assert sorted(json.loads(line)["value"] for line in lines(out)) == sorted(
        f"value-{i}" for i in range(12)
    )
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"
    calls = [json.loads(line) for line in lines(puts)]
    assert sorted(offset for call in calls for offset in call) == list(range(12))
    assert max(len(call) for call in calls) <= 5  # a put holds at most max.poll.records
