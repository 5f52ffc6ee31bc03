"""Plain per-task counters the task thread updates and GET /metrics reads at scrape time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class BatchTimes:
    """Count, total and maximum duration of batches (poll or put), in milliseconds."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0

    @property
    def avg_ms(self) -> float:
        return self.total_ms / self.count if self.count else 0.0


@dataclass
class TaskCounters:
    """source-task-metrics / sink-task-metrics / task offset commits of one task.

    ``records_in`` is source-record-poll-total or sink-record-read-total; ``records_out`` is
    source-record-write-total or sink-record-send-total; ``batches`` times poll or put."""

    records_in: int = 0
    records_out: int = 0
    batches: BatchTimes = field(default_factory=BatchTimes)
    commit_success: int = 0
    commit_failure: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(
        self, *, records_in: int = 0, records_out: int = 0, success: int = 0, failure: int = 0
    ) -> None:
        with self._lock:
            self.records_in += records_in
            self.records_out += records_out
            self.commit_success += success
            self.commit_failure += failure

    @contextmanager
    def timed_batch(self) -> Iterator[None]:
        """Times one poll or put batch."""
        start = time.monotonic()
        try:
            yield
        finally:
            elapsed = (time.monotonic() - start) * 1000
            with self._lock:
                self.batches.count += 1
                self.batches.total_ms += elapsed
                self.batches.max_ms = max(self.batches.max_ms, elapsed)

    def snapshot(self) -> TaskCounters:
        with self._lock:
            b = self.batches
            return TaskCounters(
                self.records_in,
                self.records_out,
                BatchTimes(b.count, b.total_ms, b.max_ms),
                self.commit_success,
                self.commit_failure,
            )


__all__ = ["BatchTimes", "TaskCounters"]
