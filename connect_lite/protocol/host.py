"""Task hosts: where a worker's task threads run, and what the control plane sees of them.

``LocalTasks`` (dataplane/local_tasks.py) runs them as threads of its process. The worker
process hands them to the data-plane process (control/dataplane_process.py), which runs a
``LocalTasks`` of its own; both answer the same ``TaskHost`` calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from connect_lite.protocol.plan import Component, TaskPlan
from connect_lite.protocol.states import TargetState
from connect_lite.protocol.task_metrics import TaskCounters

TaskKey = tuple[str, int]
"""(connector, task)."""


@dataclass(frozen=True)
class LastBatch:
    """A task's last finished batch: the scheduler pool its jobs ran in, and the ids of the
    executors its Spark tasks ran on (None while Spark's status store has not caught up)."""

    pool: str
    executor_ids: tuple[str, ...] | None

    @property
    def executors(self) -> int | None:
        return None if self.executor_ids is None else len(self.executor_ids)


@dataclass(frozen=True)
class TaskView:
    """What GET /metrics and a connector's status show of one running task, read at once."""

    connector: str
    task: int
    kind: str
    task_class: str
    version: str | None
    components: tuple[Component, ...]
    counters: TaskCounters
    errors: dict[str, int]
    last_batch: LastBatch | None

    @property
    def key(self) -> TaskKey:
        return self.connector, self.task


class TaskHost(Protocol):
    """Runs task threads from their plans. Not thread-safe: the herder serialises calls."""

    def start(self, plan: TaskPlan) -> bool:
        """Build and start the task, held (``held``) until it is stopped; False if it could
        not be built (it is FAILED then, and not held)."""

    def transition(self, connector: str, target: TargetState) -> None:
        """Every held task of the connector to ``target`` (RUNNING or PAUSED)."""

    def stop(self, keys: Sequence[TaskKey]) -> None:
        """Stop the tasks and wait for them, within the graceful timeout in all; a task that
        misses it is abandoned (it commits nothing more). Keys not held are ignored."""

    def held(self) -> list[TaskKey]:
        """The tasks held now, sorted."""

    def last_batches(self, connector: str) -> dict[int, LastBatch]:
        """Where the last batch of each of the connector's tasks ran on Spark."""

    def views(self) -> list[TaskView]:
        """Every running task's counters and plugins, sorted."""

    def engine_failure(self) -> str | None:
        """Why Spark cannot run tasks now (None when it can, or is still starting)."""


__all__ = ["LastBatch", "TaskHost", "TaskKey", "TaskView"]
