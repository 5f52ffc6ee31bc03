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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

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

    def __getstate__(self) -> dict[str, object]:
        """A snapshot crosses to the worker process (control/dataplane_process.py): no lock."""
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

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


ERROR_METRICS: dict[str, str] = {
    "total-record-failures": "Failed record operations, retried attempts included.",
    "total-record-errors": "Records that failed after retries (errors.tolerance then applies).",
    "total-records-skipped": "Records skipped because of errors (errors.tolerance=all).",
    "total-retries": "Retries of operations that raised a retriable error.",
    "total-errors-logged": "Errors written to the log (errors.log.enable).",
    "deadletterqueue-produce-requests": "Records sent to the dead letter queue.",
    "deadletterqueue-produce-failures": "Records the dead letter queue did not take.",
    "last-error-timestamp": "Epoch milliseconds of the last error (0: none yet).",
}
"""Kafka's task-error-metrics group, in Kafka's order, with what each metric counts."""


@dataclass
class ErrorCounters:
    """task-error-metrics of one task (Kafka's ErrorHandlingMetrics); thread-safe increments."""

    values: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_METRICS, 0))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **by_name: int) -> None:
        """Add to metrics named in Python style: ``add(total_retries=2)``."""
        with self._lock:
            for name, amount in by_name.items():
                self.values[name.replace("_", "-")] += amount

    def error_at(self, epoch_ms: int) -> None:
        with self._lock:
            self.values["last-error-timestamp"] = epoch_ms

    def snapshot(self) -> dict[str, int]:
        """Every metric by its Kafka name."""
        with self._lock:
            return dict(self.values)


__all__ = ["ERROR_METRICS", "BatchTimes", "ErrorCounters", "TaskCounters"]
