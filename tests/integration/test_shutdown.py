"""Shutdown in order: REST stops first, so a request racing SIGTERM is answered or refused,
never run against a stopped herder; a stored config with a forbidden override cannot run; a
clean stop after Spark retired its idle Python workers shows no traceback."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.protocol.states import TargetState
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.testing import EmbeddedConnect, wait_for
from connect_lite.testing.processes import descendants
from tests.integration.testkit import lines, sink_config, source_config, unique

pytestmark = pytest.mark.integration


def test_a_create_racing_sigterm_is_answered_or_refused(
    new_worker: Callable[..., EmbeddedConnect],
) -> None:
    worker = new_worker().start()
    running = unique("running")
    created = worker.http.post(
        "/connectors", {"name": running, "config": source_config(unique("t"))}
    )
    assert created.status == 201, created.body
    worker.wait_running(running, tasks=1)
    answers: dict[str, int | str] = {}
    stop = threading.Event()

    def keep_creating() -> None:
        while not stop.is_set():
            name = unique("racing")
            try:
                body = {"name": name, "config": source_config(unique("t"))}
                answers[name] = worker.http.post("/connectors", body).status
            except OSError as error:  # the listener is closed, or closed on us
                answers[name] = type(getattr(error, "reason", error)).__name__
                return

    racer = threading.Thread(target=keep_creating, daemon=True)
    racer.start()
    try:
        wait_for(lambda: len(answers) >= 2, 60, what="creates before SIGTERM")
        assert worker.terminate_worker() == 0
    finally:
        stop.set()
        racer.join(timeout=30)
    log = worker.log_text()
    assert "Cannot operate on a closed database" not in log
    assert "state store is closed" not in log
    assert "Uncaught exception" not in log
    met = [name for name, answer in answers.items() if answer != 201]
    assert met, "no request met the shutdown: the race was not tested"
    # 503 or a refused connection: never run. A connection closed mid-answer: either way.
    assert set(answers.values()) <= {
        201,
        503,
        "ConnectionRefusedError",
        "ConnectionResetError",
        "RemoteDisconnected",
        "BrokenPipeError",
    }, answers
    refused = {n for n, a in answers.items() if a in (503, "ConnectionRefusedError")}

    worker.start_worker()  # again, on the same state file
    stored = set(worker.http.get("/connectors").body)
    accepted = {name for name, answer in answers.items() if answer == 201}
    assert accepted | {running} <= stored
    assert not stored & refused, "a refused create was stored"


def test_a_stored_forbidden_override_fails_the_connector_instead_of_loading_code(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """A state file written before the deny-list may hold a forbidden override: the worker
    refuses to build the client, and says why, rather than loading the library."""
    name = unique("stored")
    worker = new_worker()
    stores = open_sqlite_stores(str(worker.state_file))
    try:
        config = {
            **source_config(unique("t")),
            "name": name,
            "producer.override.plugin.library.paths": str(tmp_path / "evil.so"),
        }
        stores.configs.put_connector_config(name, config, TargetState.RUNNING)
        stores.configs.put_task_configs(name, [{**config, "task.class": "x"}])
    finally:
        assert stores.close is not None
        stores.close()
    worker.start()

    def failed() -> dict[str, object] | None:
        status = worker.http.get(f"/connectors/{name}/status").body
        tasks = status.get("tasks", [])
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    task = wait_for(failed, 120, what="the task FAILED")
    assert "producer.override.plugin.library.paths" in str(task["trace"])
    assert "may not be overridden" in str(task["trace"])


def _spark_python_daemon(worker: EmbeddedConnect) -> int:
    """The pid of Spark's Python daemon, ``python -m <daemon module> pyspark.worker``; the
    Python workers it forks have its command line too, and it for a parent."""
    assert worker.worker_pid is not None

    def forks_python_workers(pid: int) -> bool:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        except OSError:
            return False
        return len(argv) >= 4 and argv[-3] == b"-m" and argv[-1] == b"pyspark.worker"

    def parent(pid: int) -> int | None:
        try:
            return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:  # gone meanwhile
            return None

    def found() -> list[int]:
        both = {p for p in descendants(worker.worker_pid or 0) if forks_python_workers(p)}
        return [p for p in both if parent(p) not in both]

    [daemon] = wait_for(found, 60, what="Spark's Python daemon")
    return daemon


def test_a_clean_stop_after_idle_python_workers_were_retired_shows_no_traceback(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """Spark closes the socket of a Python worker idle for a minute (and of every idle one
    at stop). PySpark's daemon then printed a BrokenPipeError traceback into the worker's log,
    which a user saw on a clean stop. This test waits that minute."""
    worker = new_worker().start()
    topic, out = unique("idle"), tmp_path / "out.jsonl"
    worker.create_running(unique("idle-src"), source_config(topic, **{"max.records": "3"}))
    worker.create_running(unique("idle-sink"), sink_config(topic, out))
    wait_for(lambda: len(lines(out)) >= 3, 120, what="the 3 records in the sink's file")
    daemon = _spark_python_daemon(worker)
    # Its children are the Python workers; with no record flowing, Spark retires them all.
    wait_for(lambda: not descendants(daemon), 180, what="Spark retiring its idle Python workers")
    assert worker.terminate_worker() == 0
    log = worker.log_text()
    assert "BrokenPipeError" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
