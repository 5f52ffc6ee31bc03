"""Writes connector and task statuses; a failed write is retried on a scheduler, never inline."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from connect_lite.api.errors import RetriableError
from connect_lite.config.resolution import Concealer
from connect_lite.config.retry_policy import RetryPolicy
from connect_lite.control.retry import RetryScheduler, StatusCounters
from connect_lite.protocol.reports import TaskStatusWriter, trace_of
from connect_lite.protocol.states import ConnectorStatus, State, TaskStatus
from connect_lite.storage.base import StatusStore

log = logging.getLogger(__name__)

_Key = tuple[str, int | None]
"""A status's key: (connector, None) for the connector, (connector, task) for a task."""


@dataclass
class _Pending:
    """The newest status of one key still to be written, and how often it was retried."""

    put: Callable[[], None]
    what: str
    state: State
    retries: int = 0


class StatusReporter:
    """Records the observed state of connectors and tasks in the status store.

    The first write of a status runs on the caller's thread. A retriable failure queues the
    status for its key (``connector`` or ``connector-task``); every retry runs on the
    scheduler's thread. A newer status of a queued key replaces the queued one, and while
    anything is queued new statuses are queued too (the store is known to be unavailable, so
    callers do not wait on it)."""

    def __init__(
        self,
        store: StatusStore,
        worker_id: str,
        policy: RetryPolicy | None = None,
        scheduler: RetryScheduler | None = None,
        rand: Callable[[], float] = random.random,
        redactor: Concealer | None = None,
    ) -> None:
        self._store = store
        self._redactor = redactor or Concealer()
        """Secrets (resolved provider values, passwords) are concealed in every trace."""
        self.worker_id = worker_id
        self.policy = policy or RetryPolicy()
        self._scheduler = scheduler
        self._rand = rand
        self.counters = StatusCounters()
        self._pending: dict[_Key, _Pending] = {}
        self._running: set[_Key] = set()  # keys whose retry is being attempted right now
        self._lock = threading.Lock()
        self._closed = False

    # -- the writes ------------------------------------------------------------------------
    def connector(
        self, name: str, state: State, trace: str | None = None, version: str | None = None
    ) -> None:
        trace = self._redactor.conceal(trace) if trace else trace
        status = ConnectorStatus(name, state, self.worker_id, trace, version)
        self._write(
            (name, None), lambda: self._store.put_connector(status), f"connector {name}", state
        )

    def task(
        self,
        connector: str,
        task: int,
        state: State,
        trace: str | None = None,
        version: str | None = None,
    ) -> None:
        trace = self._redactor.conceal(trace) if trace else trace
        status = TaskStatus(connector, task, state, self.worker_id, trace, version)
        self._write(
            (connector, task),
            lambda: self._store.put_task(status),
            f"task {connector}-{task}",
            state,
        )

    def _write(self, key: _Key, put: Callable[[], None], what: str, state: State) -> None:
        entry = _Pending(put, what, state)
        with self._lock:
            if self._pending or key in self._running:
                self._enqueue(key, entry)
                return
        try:
            put()
        except RetriableError as error:
            log.warning("Failed to write status %s of %s, will retry: %s", state.value, what, error)
            with self._lock:
                if key not in self._pending:  # else a newer status is already queued
                    self._enqueue(key, entry)
        except Exception:
            self.counters.add(failure=1)
            log.exception("Failed to write status %s of %s", state.value, what)
        else:
            self.counters.add(success=1)

    def _enqueue(self, key: _Key, entry: _Pending) -> None:
        """Queue ``entry`` as the newest status of ``key``; called with the lock held."""
        if self._closed:
            log.warning(
                "Worker is stopping: status %s of %s not written", entry.state.value, entry.what
            )
            return
        scheduled = key in self._pending or key in self._running
        self._pending[key] = entry
        if not scheduled:
            self._schedule(key, entry)

    def _schedule(self, key: _Key, entry: _Pending) -> None:
        if entry.retries >= self.policy.max_retries:
            self._pending.pop(key, None)
            self.counters.add(failure=1)
            log.error(
                "Dropped status %s of %s after %d retries: the status store stayed unavailable",
                entry.state.value,
                entry.what,
                entry.retries,
            )
            return
        delay = self.policy.delay_ms(entry.retries, self._rand()) / 1000
        self._retrier().call_later(delay, repr(key), lambda: self._retry(key))

    # -- the retries, on the scheduler's thread -------------------------------------------
    def _retry(self, key: _Key) -> None:
        with self._lock:
            entry = self._pending.pop(key, None)
            if entry is None or self._closed:
                return
            self._running.add(key)
        self.counters.add(retry=1)
        entry.retries += 1
        outcome = self._attempt(entry)
        with self._lock:
            self._running.discard(key)
            newer = self._pending.get(key)
            if newer is not None:  # a newer status arrived meanwhile: it goes next
                self._schedule(key, newer)
            elif outcome == "retry":
                self._pending[key] = entry
                self._schedule(key, entry)

    def _attempt(self, entry: _Pending) -> str:
        try:
            entry.put()
        except RetriableError as error:
            log.warning(
                "Retry %d of status %s of %s failed: %s",
                entry.retries,
                entry.state.value,
                entry.what,
                error,
            )
            return "retry"
        except Exception:
            self.counters.add(failure=1)
            log.exception("Failed to write status %s of %s", entry.state.value, entry.what)
            return "failed"
        self.counters.add(success=1)
        log.info(
            "Wrote status %s of %s after %d retries", entry.state.value, entry.what, entry.retries
        )
        return "done"

    def _retrier(self) -> RetryScheduler:
        if self._scheduler is None:
            from connect_lite.control.retry import ApschedulerRetries

            self._scheduler = ApschedulerRetries()
        return self._scheduler

    # -- housekeeping ----------------------------------------------------------------------
    def forget(self, connector: str) -> None:
        """Drop queued statuses of a deleted connector, so a retry cannot bring them back."""
        with self._lock:
            for key in [k for k in self._pending if k[0] == connector]:
                del self._pending[key]

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def close(self) -> None:
        """Stop retrying at once; queued statuses are dropped with a warning."""
        with self._lock:
            self._closed = True
            dropped, self._pending = self._pending, {}
        for entry in dropped.values():
            log.warning(
                "Worker stopped before status %s of %s was written", entry.state.value, entry.what
            )
        if self._scheduler is not None:
            self._scheduler.shutdown()


__all__ = ["StatusReporter", "TaskStatusWriter", "trace_of"]
