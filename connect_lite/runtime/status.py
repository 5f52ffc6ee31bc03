"""Writes connector and task statuses; a failed status write never breaks a task thread."""

from __future__ import annotations

import logging
import traceback

from connect_lite.runtime.states import ConnectorStatus, State, TaskStatus
from connect_lite.storage.base import StatusStore

log = logging.getLogger(__name__)


def trace_of(error: BaseException) -> str:
    """The status ``trace``: the exception and its traceback, as Kafka shows a stack trace."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()


class StatusReporter:
    """Records the observed state of connectors and tasks in the status store."""

    def __init__(self, store: StatusStore, worker_id: str) -> None:
        self._store = store
        self.worker_id = worker_id

    def connector(
        self, name: str, state: State, trace: str | None = None, version: str | None = None
    ) -> None:
        self._write(
            lambda: self._store.put_connector(
                ConnectorStatus(name, state, self.worker_id, trace, version)
            ),
            f"connector {name}",
            state,
        )

    def task(
        self,
        connector: str,
        task: int,
        state: State,
        trace: str | None = None,
        version: str | None = None,
    ) -> None:
        self._write(
            lambda: self._store.put_task(
                TaskStatus(connector, task, state, self.worker_id, trace, version)
            ),
            f"task {connector}-{task}",
            state,
        )

    def _write(self, put: object, what: str, state: State) -> None:
        try:
            put()  # type: ignore[operator]  # a zero-argument callable
        except Exception:
            log.exception("Failed to write status %s of %s", state.value, what)
