"""A task's batch while Spark's cluster is unreachable: kept, and run again with backoff.

The task stays RUNNING; its status trace says that Spark is unreachable (and why) until a
batch runs again, when it is RUNNING with no trace once more. Nothing is skipped: the batch
that met the lost cluster is the one that runs again, so its records reach Kafka (a source)
or ``put`` (a sink) in order, and no offset moves past them before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

from connect_lite.pipeline.cluster_watch import Backoff
from connect_lite.pipeline.record_errors import JobCancelledError
from connect_lite.pipeline.session import SparkUnavailableError

T = TypeVar("T")
Result = TypeVar("Result")


class SparkRetry(Generic[T, Result]):
    """Runs ``run(batch)`` until it does not raise SparkUnavailableError.

    ``report(error)`` tells the status store: an error while Spark is unreachable (called when
    the reason changes), None once the batch ran. ``wait(seconds)`` sleeps, and is True if
    the task is stopping, which ends the retries with JobCancelledError (the batch is not
    delivered, and its offsets are not committed)."""

    def __init__(
        self,
        run: Callable[[list[T]], Result],
        report: Callable[[BaseException | None], None],
        wait: Callable[[float], bool],
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
        backoff: Backoff | None = None,
    ) -> None:
        self._run = run
        self._report = report
        self._wait = wait
        self._log = log
        self._backoff = backoff or Backoff()
        self.unreachable: str | None = None
        """Why the last attempt found Spark unreachable; None once a batch ran."""

    def __call__(self, batch: list[T]) -> Result:
        while True:
            try:
                result = self._run(batch)
            except SparkUnavailableError as error:
                self._retry_later(batch, error)
                continue
            if self.unreachable is not None:
                self.unreachable = None
                self._backoff.reset()
                self._log.info("Spark is reachable again: the batch ran")
                self._report(None)
            return result

    def _retry_later(self, batch: list[T], error: SparkUnavailableError) -> None:
        if str(error) != self.unreachable:
            self.unreachable = str(error)
            self._report(error)
        delay = self._backoff.next()
        self._log.warning(
            "The batch of %d records runs again in %.0f s: %s", len(batch), delay, error
        )
        if self._wait(delay):
            raise JobCancelledError("The task stopped while Spark was unreachable") from error
