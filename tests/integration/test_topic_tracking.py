"""KIP-558 against a real broker and worker: recorded topics, reset, settings, persistence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import sink_config, source_config, unique

pytestmark = pytest.mark.integration


def topics(worker: EmbeddedConnect, name: str) -> list[str]:
    response = worker.http.get(f"/connectors/{name}/topics")
    assert response.status == 200, response.body
    assert list(response.body) == [name]
    return sorted(response.body[name]["topics"])


def create(worker: EmbeddedConnect, config: dict[str, str], prefix: str = "c") -> str:
    name = unique(prefix)
    response = worker.http.post("/connectors", {"name": name, "config": config})
    assert response.status == 201, response.body
    return name


def wait_topics(worker: EmbeddedConnect, name: str, expected: list[str]) -> None:
    wait_for(
        lambda: topics(worker, name) == sorted(expected), 120, what=f"{name} topics {expected}"
    )


def test_sources_and_a_regex_sink_record_their_topics(worker: EmbeddedConnect) -> None:
    u = unique("tt")
    ta, tb = f"{u}-a", f"{u}-b"
    src_a = create(worker, source_config(ta, **{"max.records": "5"}), "src")
    src_b = create(worker, source_config(tb), "src")  # keeps producing
    sink = create(
        worker,
        {**sink_config("", worker.workdir / f"{u}.jsonl"), "topics": "", "topics.regex": f"{u}-.*"},
        "sink",
    )
    wait_topics(worker, src_a, [ta])
    wait_topics(worker, src_b, [tb])
    wait_topics(worker, sink, [ta, tb])  # separate sets per connector
    metrics = worker.http.request("GET", "/metrics")
    assert metrics.status == 200
    text = metrics.raw.decode()
    assert f'kafka_connect_connector_metrics_active_topic_count{{connector="{sink}"}} 2.0' in text

    reset = worker.http.put(f"/connectors/{sink}/topics/reset")
    assert reset.status == 202 and reset.raw == b""
    wait_topics(worker, sink, [tb])  # tb still has traffic; ta does not
    assert topics(worker, src_a) == [ta]

    narrower = {**sink_config("", worker.workdir / f"{u}.jsonl"), "topics": ta}
    assert worker.http.put(f"/connectors/{sink}/config", narrower).status == 200
    assert tb not in topics(worker, sink)  # no longer consumed: dropped at reconfiguration
    assert worker.http.put(f"/connectors/{src_b}/config", source_config(f"{u}-c")).status == 200
    wait_topics(worker, src_b, [tb, f"{u}-c"])  # a reconfigured source keeps its set

    assert worker.http.delete(f"/connectors/{src_a}").status == 204
    assert topics(worker, src_a) == []


def test_unknown_connector_and_reset_of_unknown(worker: EmbeddedConnect) -> None:
    assert topics(worker, "never-existed") == []
    assert worker.http.put("/connectors/never-existed/topics/reset").status == 202


def test_the_set_survives_a_worker_restart(new_worker: Callable[..., EmbeddedConnect]) -> None:
    worker = new_worker().start()
    topic = unique("durable-topic")
    name = create(worker, source_config(topic, **{"max.records": "5"}), "keep")
    wait_topics(worker, name, [topic])
    assert worker.terminate_worker() == 0
    worker.start_worker()  # again, on the same state file
    # All 5 records were committed before: no new traffic, so this comes from SQLite.
    assert topics(worker, name) == [topic]


@pytest.fixture
def restricted(
    request: pytest.FixtureRequest, new_worker: Callable[..., EmbeddedConnect]
) -> EmbeddedConnect:
    return new_worker(worker_properties=request.param).start()


@pytest.mark.parametrize("restricted", [{"topic.tracking.enable": "false"}], indirect=True)
def test_tracking_disabled_forbids_both_endpoints(restricted: EmbeddedConnect) -> None:
    name = create(restricted, source_config(unique("t"), **{"max.records": "3"}))
    for method, path in (
        ("GET", f"/connectors/{name}/topics"),
        ("PUT", f"/connectors/{name}/topics/reset"),
    ):
        response: Any = restricted.http.request(method, path)
        assert (response.status, response.body) == (
            403,
            {"error_code": 403, "message": "Topic tracking is disabled."},
        )


@pytest.mark.parametrize("restricted", [{"topic.tracking.allow.reset": "false"}], indirect=True)
def test_reset_disallowed_but_deletion_still_clears(restricted: EmbeddedConnect) -> None:
    topic = unique("t")
    name = create(restricted, source_config(topic, **{"max.records": "3"}))
    wait_topics(restricted, name, [topic])
    response = restricted.http.put(f"/connectors/{name}/topics/reset")
    assert (response.status, response.body["message"]) == (403, "Topic tracking reset is disabled.")
    assert topics(restricted, name) == [topic]
    assert restricted.http.delete(f"/connectors/{name}").status == 204
    assert topics(restricted, name) == []
