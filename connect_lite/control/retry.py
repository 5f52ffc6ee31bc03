"""Status-store retries: counters and the apscheduler-backed scheduler (policy: config)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler

from connect_lite.config.retry_policy import RetryPolicy


class StatusCounters:
    """status-backing-store-metrics: retries, failures (dropped or non-retriable), successes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.retry = 0
        self.failure = 0
        self.success = 0

    def add(self, *, retry: int = 0, failure: int = 0, success: int = 0) -> None:
        with self._lock:
            self.retry += retry
            self.failure += failure
            self.success += success

    def snapshot(self) -> Mapping[str, int]:
        with self._lock:
            return {"retry": self.retry, "failure": self.failure, "success": self.success}


class RetryScheduler(Protocol):
    """Runs a callable later on a thread of its own; a job id replaces an earlier one."""

    def call_later(self, delay_s: float, job_id: str, fn: Callable[[], None]) -> None: ...

    def shutdown(self) -> None: ...


class ApschedulerRetries:
    """A RetryScheduler on apscheduler's BackgroundScheduler (one daemon thread pool)."""

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        self._now = now or (lambda: datetime.now(UTC))
        self._scheduler = BackgroundScheduler(
            daemon=True,
            executors={"default": {"type": "threadpool", "max_workers": 1}},
            job_defaults={"misfire_grace_time": None, "coalesce": False},
            timezone=UTC,
        )
        self._scheduler.start()

    def call_later(self, delay_s: float, job_id: str, fn: Callable[[], None]) -> None:
        run_date = self._now() + timedelta(seconds=delay_s)
        self._scheduler.add_job(
            fn, "date", run_date=run_date, id=job_id, replace_existing=True, name="status retry"
        )

    def shutdown(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)


__all__ = ["ApschedulerRetries", "RetryPolicy", "RetryScheduler", "StatusCounters"]
