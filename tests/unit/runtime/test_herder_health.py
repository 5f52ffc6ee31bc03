"""GET /health as Kafka: starting before ready, unhealthy when the herder lock is held too long."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from connect_lite.runtime.herder import StandaloneHerder


def herder_state(ready: bool) -> SimpleNamespace:
    """Only what ``health`` reads: readiness, the herder lock and its timeout."""
    return SimpleNamespace(_ready=ready, _lock=threading.RLock(), health_timeout_s=0.2)


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
