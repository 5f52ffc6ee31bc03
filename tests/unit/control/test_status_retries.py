"""StatusReporter retries: backoff sequence, cap, jitter, per-key order, giving up, shutdown."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import pytest

from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.config.retry_policy import RetryPolicy
from connect_lite.control.retry import ApschedulerRetries
from connect_lite.control.status import StatusReporter
from connect_lite.protocol.states import ConnectorStatus, State, TaskStatus


class FakeScheduler:
    """A fake clock and job list: ``run_next`` advances the clock to the next job and runs it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.jobs: dict[str, tuple[float, Callable[[], None]]] = {}
        self.delays: list[float] = []
        self.stopped = False

    def call_later(self, delay_s: float, job_id: str, fn: Callable[[], None]) -> None:
        self.delays.append(delay_s)
        self.jobs[job_id] = (self.now + delay_s, fn)

    def run_next(self) -> None:
        job_id = min(self.jobs, key=lambda j: self.jobs[j][0])
        at, fn = self.jobs.pop(job_id)
        self.now = at
        fn()

    def run_all(self, limit: int = 100) -> None:
        while self.jobs and limit:
            self.run_next()
            limit -= 1

    def shutdown(self) -> None:
        self.stopped = True


class FlakyStore:
    """A status store whose writes fail while ``down`` (or ``failures`` more times)."""

    def __init__(self) -> None:
        self.down = False
        self.failures = 0
        self.error: Exception = RetriableError("database is locked")
        self.attempts: list[tuple[str, State, str]] = []  # what, state, thread name
        self.written: list[tuple[str, State]] = []
        self.during_put: Callable[[], None] | None = None

    def _put(self, what: str, state: State) -> None:
        self.attempts.append((what, state, threading.current_thread().name))
        hook, self.during_put = self.during_put, None
        if hook is not None:
            hook()
        if self.down or self.failures > 0:
            self.failures -= 1
            raise self.error
        self.written.append((what, state))

    def put_connector(self, status: ConnectorStatus) -> None:
        self._put(status.connector, status.state)

    def put_task(self, status: TaskStatus) -> None:
        self._put(f"{status.connector}-{status.task}", status.state)


def reporter(
    store: FlakyStore, scheduler: FakeScheduler, policy: RetryPolicy, rand: float = 0.0
) -> StatusReporter:
    return StatusReporter(store, "w:8083", policy, scheduler, rand=lambda: rand)  # type: ignore[arg-type]


NO_JITTER = RetryPolicy(max_retries=6, initial_backoff_ms=100, max_backoff_ms=1000, jitter=0.0)


def test_backoff_sequence_exactly_and_capped() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.down = True
    status = reporter(store, scheduler, NO_JITTER)
    status.task("c", 0, State.RUNNING)
    scheduler.run_all()
    assert scheduler.delays == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert scheduler.now == pytest.approx(3.5)
    assert len(store.attempts) == 7  # the first write and six retries


def test_delay_formula_with_jitter_bounds() -> None:
    policy = RetryPolicy(initial_backoff_ms=300, max_backoff_ms=10000, multiplier=2.0, jitter=0.25)
    assert policy.delay_ms(0, 0.0) == 300
    assert policy.delay_ms(2, 0.5) == 1200 + 1200 * 0.25 * 0.5
    assert policy.delay_ms(10, 0.0) == 10000  # 300 * 1024 capped
    assert policy.delay_ms(10, 0.999999) < 10000 * 1.25
    assert policy.delay_ms(10_000, 0.0) == 10000  # no overflow
    for rand in (0.0, 0.3, 0.7, 0.9999):
        assert 300 <= policy.delay_ms(0, rand) < 375


def test_jitter_comes_from_the_random_source() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    policy = RetryPolicy(initial_backoff_ms=200, max_backoff_ms=1000, jitter=0.5)
    reporter(store, scheduler, policy, rand=0.5).connector("c", State.RUNNING)
    assert scheduler.delays == [pytest.approx(0.25)]


def test_retried_write_succeeds_and_is_counted() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 3
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    assert store.written == [] and status.pending() == 1
    scheduler.run_all()
    assert store.written == [("c", State.RUNNING)]
    assert status.counters.snapshot() == {"retry": 3, "failure": 0, "success": 1}
    assert status.pending() == 0


def test_newer_status_supersedes_a_queued_one_without_blocking_the_caller() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    status = reporter(store, scheduler, NO_JITTER)
    status.task("c", 0, State.RUNNING)
    status.task("c", 0, State.PAUSED)  # queued behind the failed one: not attempted inline
    status.task("c", 1, State.RUNNING)  # another key, also queued while the store is down
    assert len(store.attempts) == 1
    scheduler.run_all()
    assert store.written == [("c-0", State.PAUSED), ("c-1", State.RUNNING)]
    assert status.counters.snapshot() == {"retry": 2, "failure": 0, "success": 2}


def test_status_arriving_during_a_retry_is_written_after_it() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    store.during_put = lambda: status.connector("c", State.PAUSED)
    scheduler.run_next()  # the retry of RUNNING succeeds, PAUSED arrived while it ran
    assert store.written == [("c", State.RUNNING)]
    assert [a[:2] for a in store.attempts] == [("c", State.RUNNING), ("c", State.RUNNING)]
    scheduler.run_all()
    assert store.written == [("c", State.RUNNING), ("c", State.PAUSED)]


def test_older_failed_retry_never_overwrites_a_newer_status() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 2
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    store.during_put = lambda: status.connector("c", State.FAILED, "boom")
    scheduler.run_all()  # RUNNING's retry fails; FAILED replaces it
    assert store.written == [("c", State.FAILED)]
    assert ("c", State.RUNNING) not in store.written


def test_gives_up_after_max_retries_with_an_error_log(caplog: pytest.LogCaptureFixture) -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.down = True
    policy = RetryPolicy(max_retries=2, initial_backoff_ms=10, max_backoff_ms=10, jitter=0.0)
    status = reporter(store, scheduler, policy)
    with caplog.at_level(logging.ERROR, logger="connect_lite.control.status"):
        status.task("orders", 3, State.PAUSED)
        scheduler.run_all()
    assert status.counters.snapshot() == {"retry": 2, "failure": 1, "success": 0}
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "task orders-3" in errors[0] and "PAUSED" in errors[0]
    store.down = False
    status.task("orders", 3, State.RUNNING)  # the next change is written at once
    assert store.written == [("orders-3", State.RUNNING)]


def test_zero_retries_drops_at_once() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    status = reporter(store, scheduler, RetryPolicy(max_retries=0))
    status.connector("c", State.RUNNING)
    assert scheduler.jobs == {} and status.counters.snapshot()["failure"] == 1


def test_non_retriable_error_is_counted_not_retried() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    store.error = ConnectError("state store error: no such table")
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    assert scheduler.jobs == {}
    assert status.counters.snapshot() == {"retry": 0, "failure": 1, "success": 0}


def test_forget_drops_queued_statuses_of_a_deleted_connector() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.failures = 1
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    status.task("c", 0, State.RUNNING)
    status.task("c-x", 0, State.RUNNING)  # a connector whose name starts like c's tasks
    status.forget("c")
    scheduler.run_all()
    assert store.written == [("c-x-0", State.RUNNING)]


def test_close_drops_pending_and_stops_the_scheduler() -> None:
    store, scheduler = FlakyStore(), FakeScheduler()
    store.down = True
    status = reporter(store, scheduler, NO_JITTER)
    status.connector("c", State.RUNNING)
    status.close()
    assert scheduler.stopped and status.pending() == 0
    scheduler.run_all()  # a job that still fires does nothing
    assert len(store.attempts) == 1
    status.connector("c", State.STOPPED)  # after close: one inline attempt, nothing queued
    assert status.pending() == 0 and scheduler.jobs == {}


def test_retries_run_on_the_scheduler_thread_and_close_does_not_wait_for_them() -> None:
    store = FlakyStore()
    store.failures = 2
    policy = RetryPolicy(max_retries=5, initial_backoff_ms=20, max_backoff_ms=50, jitter=0.1)
    status = StatusReporter(store, "w", policy, ApschedulerRetries())  # type: ignore[arg-type]
    status.task("c", 0, State.RUNNING)
    deadline = time.monotonic() + 10
    while not store.written and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.written == [("c-0", State.RUNNING)]
    caller = threading.current_thread().name
    threads = [name for _, _, name in store.attempts]
    assert threads[0] == caller and all(name != caller for name in threads[1:])
    store.down = True
    hour = 3_600_000
    status.policy = RetryPolicy(max_retries=5, initial_backoff_ms=hour, max_backoff_ms=hour)
    status.task("c", 0, State.PAUSED)  # its retry is due in an hour
    assert status.pending() == 1
    closing = threading.Thread(target=status.close)
    closing.start()
    closing.join(30)  # the hang guard: close() must not wait for the queued retry
    assert not closing.is_alive()
    assert status.pending() == 0
