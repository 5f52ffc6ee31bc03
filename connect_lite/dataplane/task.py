"""WorkerTask: the thread that runs one task and owns every state transition of it."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, MutableMapping
from typing import Any, TypeVar

from connect_lite.dataplane.spark_retry import SparkRetry
from connect_lite.logs.context import LogContext, logging_context
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.reports import TaskStatusWriter, trace_of
from connect_lite.protocol.states import State, TargetState
from connect_lite.protocol.task_metrics import ErrorCounters, TaskCounters

T = TypeVar("T")
Result = TypeVar("Result")


class TaskLogAdapter(logging.LoggerAdapter[logging.Logger]):
    """Gives every line the task's ``[connector|task-N]`` context, from whatever thread (the
    herder's, when it stops the task): ``extra={"connector_context": ...}``."""

    def __init__(self, logger: logging.Logger, context: LogContext) -> None:
        super().__init__(logger, {"connector_context": context})

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs["extra"] = {**(self.extra or {}), **kwargs.get("extra", {})}
        return msg, kwargs


class WorkerTask(ABC):
    """Template for source and sink tasks: ``run`` drives start, the loop, pause and stop."""

    kind = "task"
    """``source`` or ``sink``: the metric group of its counters."""

    def __init__(
        self,
        connector: str,
        task: int,
        status: TaskStatusWriter,
        target: TargetState,
    ) -> None:
        self.connector = connector
        self.task = task
        self.status = status
        self.log = TaskLogAdapter(
            logging.getLogger(f"connect_lite.task.{connector}"), LogContext(connector, task)
        )
        self._target = target
        self._stopping = threading.Event()
        self.abandoned = False
        """Set when the task missed the graceful stop deadline: it must write no more state
        (the store may be closed by now); what it did not commit is redelivered."""
        self.releasing = False
        """Set by ``close`` once all that is left is to let go of a client that takes its time
        (a sink's consumer waits for its group to settle before leaving it): the task has
        committed and stopped its plugin, so a stop that outlasts the graceful timeout from
        here is no failure, and the task is not abandoned."""
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self.failed = False
        self.version: str | None = None
        self.counters = TaskCounters()
        """Read by GET /metrics (source-task-metrics or sink-task-metrics)."""
        self.error_counters = ErrorCounters()
        """Read by GET /metrics (task-error-metrics)."""

    @property
    def id(self) -> str:
        return f"{self.connector}-{self.task}"

    # -- control, called by the worker ------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name=f"task-{self.id}", daemon=True)
        self._thread.start()

    def transition_to(self, target: TargetState) -> None:
        with self._cond:
            self._target = target
            self._cond.notify_all()

    def stop(self) -> None:
        """Ask the task to stop; returns at once. ``join`` waits for it."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        try:
            with logging_context(self.connector, self.task):  # cancel may call the plugin's stop
                self.cancel()
        except Exception as error:  # e.g. Spark already shut down: nothing left to cancel
            self.log.debug("Cancelling the task's work failed: %s", error)

    def abandon(self) -> None:
        """Give up on a task that did not stop in time (Kafka's ``cancel``)."""
        self.abandoned = True
        self.stop()

    def join(self, timeout: float | None) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def spark_retrying(self, run: Callable[[list[T]], Result]) -> SparkRetry[T, Result]:
        """``run`` (a batch's job) kept going while Spark's cluster is unreachable: the
        batch runs again with backoff, the task stays RUNNING, and its trace says why."""
        return SparkRetry(run, self.report_trouble, self._stopping.wait, self.log)

    def report_trouble(self, error: BaseException | None) -> None:
        """RUNNING with the trace of what the task keeps retrying (Spark's cluster away, a
        RetriableError of the plugin); None once it passed."""
        if not self.stopping:
            trace = None if error is None else trace_of(error)
            self.status.task(self.connector, self.task, State.RUNNING, trace, self.version)

    # -- the template ----------------------------------------------------------------------
    def run(self) -> None:
        """The task's thread: every line logged on it, the plugin's too, carries its context."""
        with logging_context(self.connector, self.task):
            self._run()

    def _run(self) -> None:
        try:
            self.initialize()
            if not self.stopping:
                self._execute()
        except Exception as error:
            if not self.stopping:
                self.failed = True
                self.log.exception("Task threw an uncaught and unrecoverable exception")
                self.status.task(
                    self.connector, self.task, State.FAILED, trace_of(error), self.version
                )
        finally:
            try:
                self.close()
            except Exception:
                self.log.exception("Error while closing the task")
            if not self.failed and self.stopping:
                self.log.info("Task stopped")

    def _execute(self) -> None:
        reported: State | None = None
        while not self.stopping:
            if self._await_unpaused(reported):
                reported = State.PAUSED
                continue
            if reported is not State.RUNNING:
                self.status.task(self.connector, self.task, State.RUNNING, None, self.version)
                self.on_resumed()
                reported = State.RUNNING
            self.iteration()

    def _await_unpaused(self, reported: State | None) -> bool:
        """True while paused: reports PAUSED once and waits for a change."""
        with self._cond:
            if self._target is TargetState.RUNNING:
                return False
            if reported is not State.PAUSED:
                self.on_paused()
                self.status.task(self.connector, self.task, State.PAUSED, None, self.version)
            self._cond.wait(0.5)
        self.on_idle()
        return True

    # -- hooks -----------------------------------------------------------------------------
    @abstractmethod
    def initialize(self) -> None:
        """Create the plugin task and its clients, call its ``start``."""

    @abstractmethod
    def iteration(self) -> None:
        """One poll/put cycle."""

    @abstractmethod
    def close(self) -> None:
        """Commit what is safe, call the plugin's ``stop``, release clients."""

    def on_paused(self) -> None:  # noqa: B027  # optional hook
        """Called once when the task becomes paused."""

    def on_resumed(self) -> None:  # noqa: B027  # optional hook
        """Called once when the task (re)starts running."""

    def on_idle(self) -> None:  # noqa: B027  # optional hook
        """Called about twice a second while paused (a sink keeps its consumer alive)."""

    def cancel(self) -> None:  # noqa: B027  # optional hook
        """Interrupt blocking work (for example cancel the task's Spark jobs)."""

    def last_batch(self) -> LastBatch | None:
        """Where the task's last batch ran on Spark (pool, executors); None if it has none."""
        return None
