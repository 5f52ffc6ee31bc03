"""Status writes while the SQLite file is locked by another process: retried, counted, stored."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import lines, sink_config, source_config, unique, worker_options

pytestmark = pytest.mark.integration

RETRY = {
    "status.storage.retry.max.retries": "4",
    "status.storage.retry.initial.backoff.ms": "500",
    "status.storage.retry.max.backoff.ms": "2000",
    "status.storage.retry.jitter.factor": "0.1",
}
STORE = "kafka_connect_status_backing_store_status_update_"


@pytest.fixture(scope="module")
def worker(
    bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmbeddedConnect]:
    options = worker_options(workdir=tmp_path_factory.mktemp("worker"), worker_properties=RETRY)
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as started:
        yield started


def metric(worker: EmbeddedConnect, name: str, labels: str = "") -> float:
    text = worker.http.request("GET", "/metrics").raw.decode()
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+]+)"
    found = re.search(pattern, text)
    assert found is not None, f"{name} {labels} not in /metrics"
    return float(found.group(1))


def counters(worker: EmbeddedConnect) -> dict[str, float]:
    return {k: metric(worker, f"{STORE}{k}_total") for k in ("retry", "failure", "success")}


def task_state(worker: EmbeddedConnect, name: str) -> str:
    return str(worker.http.get(f"/connectors/{name}/status").body["tasks"][0]["state"])


class Outage:
    """Another connection holding SQLite's exclusive lock on the worker's state file."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, timeout=10, isolation_level=None)

    def __enter__(self) -> Outage:
        self.conn.execute("BEGIN EXCLUSIVE")
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


def flowing_pair(worker: EmbeddedConnect, tmp_path: Path) -> tuple[str, Path]:
    """A throttled source and a sink recording its topic; both RUNNING."""
    topic, source, sink = unique("retry-topic"), unique("retry-src"), unique("retry-sink")
    out = tmp_path / "sink.jsonl"
    config = {"name": source, "config": source_config(topic, **{"poll.interval.ms": "20"})}
    assert worker.http.post("/connectors", config).status == 201
    assert (
        worker.http.post("/connectors", {"name": sink, "config": sink_config(topic, out)}).status
        == 201
    )
    for name in (source, sink):
        wait_for(lambda n=name: task_state(worker, n) == "RUNNING", 120, what=f"{name} RUNNING")
    wait_for(lambda: len(lines(out)) > 0, 120, what="records reach the sink")
    return source, out


def restart_in_background(worker: EmbeddedConnect, source: str) -> threading.Thread:
    """The REST call waits for the herder's first (inline) status write; run it aside."""
    thread = threading.Thread(
        target=lambda: worker.http.post(f"/connectors/{source}/tasks/0/restart"), daemon=True
    )
    thread.start()
    return thread


def test_status_writes_are_retried_after_the_lock_is_released(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    source, out = flowing_pair(worker, tmp_path)
    before = counters(worker)
    state_file = worker.state_file
    with Outage(state_file):
        seen = len(lines(out))
        restart = restart_in_background(worker, source)
        wait_for(lambda: counters(worker)["retry"] > before["retry"], 60, what="a retry")
        wait_for(lambda: len(lines(out)) > seen, 30, what="records flowing during the outage")
    restart.join(30)
    wait_for(lambda: task_state(worker, source) == "RUNNING", 60, what="RUNNING stored")
    after = wait_for(
        lambda: (c := counters(worker))["success"] > before["success"] and c, 30, what="success"
    )
    assert after["failure"] == before["failure"]
    assert after["retry"] > before["retry"]
    stored = (
        sqlite3.connect(state_file)
        .execute("SELECT state FROM task_statuses WHERE connector = ?", (source,))
        .fetchall()
    )
    assert stored == [("RUNNING",)]
    polled = metric(
        worker,
        "kafka_connect_source_task_metrics_source_record_poll_total",
        f'connector="{source}",task="0"',
    )
    assert polled > 0
    # Nothing lost: every value up to the highest one the sink got arrived (at least once).
    values = wait_for(lambda: {line for line in lines(out)}, 10, what="sink lines")
    numbers = {int(m.group(1)) for v in values if (m := re.search(r"value-(\d+)", v))}
    assert numbers == set(range(max(numbers) + 1))


def test_an_outage_longer_than_the_retries_drops_the_status_with_an_error(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    source, _ = flowing_pair(worker, tmp_path)
    before = counters(worker)
    with Outage(worker.state_file):
        restart = restart_in_background(worker, source)
        wait_for(
            lambda: counters(worker)["failure"] > before["failure"], 120, what="a dropped status"
        )
    restart.join(30)
    log = worker.log_text()
    assert re.search(
        rf"ERROR.*Dropped status \w+ of task {re.escape(source)}-0 after 4 retries", log
    )
    # The next status change after the release is stored.
    assert worker.http.put(f"/connectors/{source}/pause").status == 202
    wait_for(lambda: task_state(worker, source) == "PAUSED", 60, what="PAUSED stored")
    assert worker.http.put(f"/connectors/{source}/resume").status == 202
    wait_for(lambda: task_state(worker, source) == "RUNNING", 60, what="RUNNING stored")
