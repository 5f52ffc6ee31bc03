"""Shutdown in order: REST stops first, so a request racing SIGTERM is answered or refused,
never run against a stopped herder; a stored config with a forbidden override cannot run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_lite.protocol.states import TargetState
from connect_lite.storage.sqlite import open_sqlite_stores
from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import source_config, unique

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
