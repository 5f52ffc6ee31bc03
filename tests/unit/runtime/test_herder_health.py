"""GET /health as Kafka: starting before ready, unhealthy when the herder lock is held too long."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from connect_lite.runtime.herder import StandaloneHerder
from connect_lite.runtime.herder_api import WorkerStoppingError
from tests.unit.runtime.real_herder import herder_parts


def herder_state(ready: bool) -> SimpleNamespace:
    """Only what ``health`` reads: stopping, readiness, the herder lock and its timeout."""
    return SimpleNamespace(
        _stopping=False, _ready=ready, _lock=threading.RLock(), health_timeout_s=0.2
    )


def test_starting_until_ready() -> None:
    health = StandaloneHerder.health(herder_state(False))  # type: ignore[arg-type]
    assert (health.status, health.message) == ("starting", "Worker is still starting up.")


def test_healthy_when_the_lock_is_free() -> None:
    health = StandaloneHerder.health(herder_state(True))  # type: ignore[arg-type]
    assert health.status == "healthy"
    assert health.message == "Worker has completed startup and is ready to handle requests."


def test_unhealthy_when_the_lock_is_held_past_the_timeout() -> None:
    state = herder_state(True)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with state._lock:
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    started = time.monotonic()
    health = StandaloneHerder.health(state)  # type: ignore[arg-type]
    waited = time.monotonic() - started
    release.set()
    holder.join()
    assert health.status == "unhealthy"
    assert health.message == (
        "Worker was unable to handle this request and may be unable to handle other requests."
    )
    assert 0.15 <= waited < 2
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
