"""The state file has one owner, survives its owner's kill -9, and refuses newer or bad files."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite import __version__
from connect_lite.storage.base import (
    StateFileDamagedError,
    StateFileError,
    StateFileInUseError,
    StateFileTooNewError,
)
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import lines, sink_config, source_config, unique

pytestmark = pytest.mark.integration


def flowing_pair(worker: EmbeddedConnect, out: Path) -> tuple[str, str]:
    """A throttled ScriptedSource and a RecordingSink on its topic, records arriving."""
    topic, source, sink = unique("owned"), unique("src"), unique("sink")
    config = source_config(topic, **{"poll.interval.ms": "20"})
    assert worker.http.put(f"/connectors/{source}/config", config).status == 201
    assert worker.http.put(f"/connectors/{sink}/config", sink_config(topic, out)).status == 201
    worker.wait_running(source, tasks=1)
    worker.wait_running(sink, tasks=1)
    wait_for(lambda: len(lines(out)) > 0, 120, what="records reach the sink")
    return source, sink


def more_records(out: Path) -> None:
    seen = len(lines(out))
    wait_for(lambda: len(lines(out)) > seen, 60, what=f"more than {seen} records in the sink")


def refusal(worker: EmbeddedConnect, expected: StateFileError) -> None:
    """The worker exited 2 with the expected message as its one ERROR line, no traceback,
    and stopped before starting its embedded broker."""
    assert worker.wait_worker_exit(90) == 2, worker.log_text()
    log = worker.log_text()
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1, log
    assert re.search(
        rf"\] ERROR {re.escape(str(expected))} \(connect_lite\.cli:\d+\)$", errors[0]
    ), log
    assert "Traceback" not in log
    assert "Embedded broker listening" not in log, "it started a broker before the check"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lock_file(worker: EmbeddedConnect) -> Path:
    return worker.state_file.with_name(worker.state_file.name + ".lock")


def test_a_second_worker_on_an_owned_state_file_exits_2_and_the_first_runs_on(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    first = new_worker(workdir=tmp_path / "first").start()
    assert first.worker_pid is not None
    out = tmp_path / "first" / "sink.jsonl"
    source, sink = flowing_pair(first, out)
    state_file = first.state_file
    second = new_worker(
        workdir=tmp_path / "second",
        start_broker=False,
        worker_properties={"state.storage.file": str(state_file), "embedded.broker.enable": "true"},
    )
    second.start(wait_healthy=False)
    try:
        refusal(second, StateFileInUseError(str(state_file), first.worker_pid))
    finally:
        second.stop_worker()

    assert first.worker_exit_code is None
    assert first.http.get("/health").status == 200
    for name in (source, sink):
        first.wait_running(name, tasks=1)
    more_records(out)
    assert lock_file(first).read_text() == f"{first.worker_pid}\n"


def test_after_kill_9_the_next_worker_owns_the_file_and_restores_its_connectors(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    out = tmp_path / "sink.jsonl"
    worker = new_worker().start()
    lock = lock_file(worker)
    source, sink = flowing_pair(worker, out)
    parked = {"name": "parked", "config": source_config(unique("parked"))}
    parked["initial_state"] = "PAUSED"
    assert worker.http.post("/connectors", parked).status == 201

    def committed() -> int:
        offsets = worker.http.get(f"/connectors/{source}/offsets").body["offsets"]
        return int(offsets[0]["offset"]["next"]) if offsets else 0

    before = wait_for(committed, 60, what="a committed source offset")
    dead_pid = worker.worker_pid
    worker.kill_worker()
    assert lock.read_text() == f"{dead_pid}\n", "precondition: the dead worker's pid is left"

    worker.start_worker()  # the next worker, on the same state file
    assert worker.worker_pid != dead_pid
    assert sorted(worker.http.get("/connectors").body) == sorted([source, sink, "parked"])
    worker.wait_running(source, tasks=1)
    worker.wait_running(sink, tasks=1)
    assert worker.client.status("parked")["connector"]["state"] == "PAUSED"
    offsets = worker.http.get(f"/connectors/{source}/offsets").body["offsets"]
    assert int(offsets[0]["offset"]["next"]) >= before
    more_records(out)
    assert lock.read_text() == f"{worker.worker_pid}\n"
    assert worker.terminate_worker() == 0
    assert lock.read_text() == "", "a clean stop releases the lock and clears the pid"


@pytest.mark.parametrize("kind", ["newer", "damaged"])
def test_a_newer_or_damaged_state_file_stops_the_start_with_exit_2(
    kind: str, new_worker: Callable[..., EmbeddedConnect]
) -> None:
    worker = new_worker(start_broker=False, worker_properties={"embedded.broker.enable": "true"})
    state_file = worker.state_file
    expected: StateFileError
    if kind == "newer":
        open_sqlite_stores(str(state_file)).close()
        conn = sqlite3.connect(state_file)
        with conn:
            conn.execute(
                "INSERT INTO migrations (name, applied_at, app_version) VALUES (?, ?, ?)",
                ("0003_from_the_future", 1, "9.9.0"),
            )
        conn.close()
        expected = StateFileTooNewError(
            str(state_file), __version__, {"0003_from_the_future": "9.9.0"}
        )
    else:
        state_file.write_text("state.storage.file=this is not a database\n" * 200)
        expected = StateFileDamagedError(str(state_file), "file is not a database")
    before = digest(state_file)
    worker.start(wait_healthy=False)
    refusal(worker, expected)
    assert digest(state_file) == before
