"""poll_dataframe against a real broker, Spark and worker: the frames' rows reach Kafka through
the converters, the offsets commit per source partition, a RetriableError polls again, and a
connector made again resumes where its offsets say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import create_running, source_config, unique

pytestmark = pytest.mark.integration

JSON_VALUES = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",
}


def frame_source(topic: str, **extra: str) -> dict[str, str]:
    return {**source_config(topic), "connector.class": "DataFrameSource", **JSON_VALUES, **extra}


def offsets(worker: EmbeddedConnect, name: str) -> list[dict[str, Any]]:
    body = worker.http.get(f"/connectors/{name}/offsets").body
    return list(body.get("offsets", []))


def test_frames_reach_kafka_converted_and_their_offsets_commit(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, log = unique("df-src"), tmp_path / "commits.log"
    kafka.create_topic(topic, 1)
    name = create_running(
        worker,
        "df-src",
        frame_source(topic, **{"max.records": "250", "commit.log": str(log)}),
    )
    got = kafka.consume(topic, count=250, timeout=60)
    assert [m.key for m in got] == [str(n).encode() for n in range(250)]
    values = [json.loads(m.value or b"") for m in got]
    assert values[0]["schema"]["type"] == "struct"
    assert [v["payload"] for v in values] == [{"id": n, "name": f"value-{n}"} for n in range(250)]
    wait_for(
        lambda: offsets(worker, name) == [{"partition": {"task": "0"}, "offset": {"next": 250}}],
        what="the last row's offset, committed",
    )
    wait_for(lambda: log.exists() and "commit" in log.read_text(), what="commit() called")
    assert worker.http.delete(f"/connectors/{name}").status == 204


def test_a_retriable_error_polls_again_and_a_new_connector_resumes(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic, log = unique("df-resume"), tmp_path / "commits.log"
    kafka.create_topic(topic, 1)
    name = unique("df-resume")
    config = frame_source(
        topic, **{"max.records": "150", "retriable.once": "true", "commit.log": str(log)}
    )
    worker.create_running(name, config, tasks=1)
    wait_for(
        lambda: offsets(worker, name) == [{"partition": {"task": "0"}, "offset": {"next": 150}}],
        timeout=60,
        what="150 rows committed",
    )
    assert "retriable" in log.read_text()
    assert worker.http.delete(f"/connectors/{name}").status == 204
    worker.create_running(name, {**config, "max.records": "300"}, tasks=1)
    got = kafka.consume(topic, count=300, timeout=60)
    assert [m.key for m in got] == [str(n).encode() for n in range(300)]  # each row once
    assert worker.http.delete(f"/connectors/{name}").status == 204
