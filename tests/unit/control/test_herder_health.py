"""GET /health as Kafka: starting before ready, unhealthy when the herder lock is held too long;
and unavailable when Spark could not start (tasks cannot run)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from connect_lite.control.entities import WorkerHealth
from connect_lite.control.herder import StandaloneHerder
from connect_lite.control.herder_api import WorkerStoppingError
from tests.unit.control.real_herder import herder_parts


def herder_state(ready: bool, engine_failure: str | None = None) -> SimpleNamespace:
    """Only what ``health`` reads: stopping, readiness, the worker's Spark failure, the herder
    lock and its timeout."""
    return SimpleNamespace(
        _stopping=False,
        _ready=ready,
        worker=SimpleNamespace(engine_failure=lambda: engine_failure),
        _lock=threading.RLock(),
        health_timeout_s=0.2,
    )


def test_starting_until_ready() -> None:
    health = StandaloneHerder.health(herder_state(False))  # type: ignore[arg-type]
    assert (health.status, health.message) == ("starting", "Worker is still starting up.")


def test_healthy_when_the_lock_is_free() -> None:
    health = StandaloneHerder.health(herder_state(True))  # type: ignore[arg-type]
    assert health.status == "healthy"
    assert health.message == "Worker has completed startup and is ready to handle requests."


def test_unavailable_with_the_reason_when_spark_failed_to_start() -> None:
    reason = "Spark failed to start: [JAVA_GATEWAY_EXITED] Java gateway process exited"
    health = StandaloneHerder.health(herder_state(True, reason))  # type: ignore[arg-type]
    assert health == WorkerHealth("unhealthy", f"Worker cannot run tasks: {reason}", True)


def test_starting_comes_before_a_spark_failure() -> None:
    health = StandaloneHerder.health(herder_state(False, "Spark failed"))  # type: ignore[arg-type]
    assert (health.status, health.unavailable) == ("starting", False)


class SpyLock:
    """A real RLock that records the timeout of every acquire."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.timeouts: list[float] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self.timeouts.append(timeout)
        return self.lock.acquire(blocking, timeout)

    def release(self) -> None:
        self.lock.release()

    def __enter__(self) -> SpyLock:
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def test_unhealthy_when_the_lock_is_held_past_the_timeout() -> None:
    state = herder_state(True)
    state._lock = SpyLock()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with state._lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    try:
        health = StandaloneHerder.health(state)  # type: ignore[arg-type]
    finally:
        release.set()
        holder.join()
    assert health.status == "unhealthy"
    assert health.message == (
        "Worker was unable to handle this request and may be unable to handle other requests."
    )
    assert state._lock.timeouts == [0.2]  # it waited for the lock up to health_timeout_s
    assert StandaloneHerder.health(state).status == "healthy"  # type: ignore[arg-type]


def test_a_stopping_herder_refuses_new_work_and_reports_it() -> None:
    parts = herder_parts()
    herder = parts.herder
    herder.ready()
    herder.create_connector("before", {"connector.class": "FileStreamSource", "topic": "t"})
    parts.stop()
    with pytest.raises(WorkerStoppingError, match=r"^Worker is shutting down"):
        herder.create_connector("after", {"connector.class": "FileStreamSource", "topic": "t"})
    with pytest.raises(WorkerStoppingError):
        herder.pause_connector("before")
    assert herder.stores.configs.connector_names() == ["before"]
    health = herder.health()
    assert (health.status, health.message) == ("starting", "Worker is shutting down.")
