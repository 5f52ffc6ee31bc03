"""The state file has one owner, survives its owner's kill -9, and refuses newer or bad files."""

from __future__ import annotations

import hashlib
import re
import sqlite3
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
from tests.integration.worker_process import (
    WorkerProcess,
    lines,
    sink_config,
    source_config,
    unique,
    wait_for,
)

pytestmark = pytest.mark.integration


def flowing_pair(worker: WorkerProcess, out: Path) -> tuple[str, str]:
    """A throttled ScriptedSource and a RecordingSink on its topic, records arriving."""
    topic, source, sink = unique("owned"), unique("src"), unique("sink")
    config = source_config(topic, **{"poll.interval.ms": "20"})
    assert worker.rest.put(f"/connectors/{source}/config", config).status == 201
    assert worker.rest.put(f"/connectors/{sink}/config", sink_config(topic, out)).status == 201
    worker.wait_running(source)
    worker.wait_running(sink)
    wait_for(lambda: len(lines(out)) > 0, 120, what="records reach the sink")
    return source, sink


def more_records(out: Path) -> None:
    seen = len(lines(out))
    wait_for(lambda: len(lines(out)) > seen, 60, what=f"more than {seen} records in the sink")


def refusal(worker: WorkerProcess, expected: StateFileError) -> None:
    """The worker exited 2 with the expected message as its one ERROR line, no traceback,
    and stopped before starting its embedded broker."""
    assert worker.proc is not None
    assert worker.proc.wait(90) == 2, worker.log()
    log = worker.log()
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1, log
    assert re.search(
        rf"\] ERROR {re.escape(str(expected))} \(connect_lite\.cli:\d+\)$", errors[0]
    ), log
    assert "Traceback" not in log
    assert "Embedded broker listening" not in log, "it started a broker before the check"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_second_worker_on_an_owned_state_file_exits_2_and_the_first_runs_on(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = WorkerProcess(tmp_path / "first", bootstrap_servers).start()
    try:
        assert first.proc is not None
        out = tmp_path / "first" / "sink.jsonl"
        source, sink = flowing_pair(first, out)
        state_file = tmp_path / "first" / "state.db"
        second = WorkerProcess(
            tmp_path / "second",
            None,
            extra={"state.storage.file": str(state_file), "embedded.broker.enable": "true"},
        )
        second.start(wait_healthy=False)
        try:
            refusal(second, StateFileInUseError(str(state_file), first.proc.pid))
        finally:
            second.stop()

        assert first.proc.poll() is None
        assert first.rest.get("/health").status == 200
        for name in (source, sink):
            first.wait_running(name)
        more_records(out)
        assert (tmp_path / "first" / "state.db.lock").read_text() == f"{first.proc.pid}\n"
    finally:
        first.stop()


def test_after_kill_9_the_next_worker_owns_the_file_and_restores_its_connectors(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    out = tmp_path / "sink.jsonl"
    lock = tmp_path / "state.db.lock"
    worker = WorkerProcess(tmp_path, bootstrap_servers).start()
    try:
        assert worker.proc is not None
        source, sink = flowing_pair(worker, out)
        parked = {"name": "parked", "config": source_config(unique("parked"))}
        parked["initial_state"] = "PAUSED"
        assert worker.rest.post("/connectors", parked).status == 201

        def committed() -> int:
            offsets = worker.rest.get(f"/connectors/{source}/offsets").body["offsets"]
            return int(offsets[0]["offset"]["next"]) if offsets else 0

        before = wait_for(committed, 60, what="a committed source offset")
        dead_pid = worker.proc.pid
        worker.kill()
    finally:
        worker.stop()
    assert lock.read_text() == f"{dead_pid}\n", "precondition: the dead worker's pid is left"

    restarted = WorkerProcess(tmp_path, bootstrap_servers, port=worker.port).start()
    try:
        assert restarted.proc is not None
        assert sorted(restarted.rest.get("/connectors").body) == sorted([source, sink, "parked"])
        restarted.wait_running(source)
        restarted.wait_running(sink)
        assert restarted.status("parked")["connector"]["state"] == "PAUSED"
        offsets = restarted.rest.get(f"/connectors/{source}/offsets").body["offsets"]
        assert int(offsets[0]["offset"]["next"]) >= before
        more_records(out)
        assert lock.read_text() == f"{restarted.proc.pid}\n"
        assert restarted.terminate() == 0
    finally:
        restarted.stop()
    assert lock.read_text() == "", "a clean stop releases the lock and clears the pid"


@pytest.mark.parametrize("kind", ["newer", "damaged"])
def test_a_newer_or_damaged_state_file_stops_the_start_with_exit_2(
    kind: str, tmp_path: Path
) -> None:
    state_file = tmp_path / "state.db"
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
    worker = WorkerProcess(tmp_path, None, extra={"embedded.broker.enable": "true"})
    worker.start(wait_healthy=False)
    try:
        refusal(worker, expected)
    finally:
        worker.stop()
    assert digest(state_file) == before
