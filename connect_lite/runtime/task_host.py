"""Task hosts: where a worker's task threads run, and what the control plane sees of them.

``LocalTasks`` (runtime/local_tasks.py) runs them as threads of its process. The worker
process hands them to the data-plane process (runtime/data_plane.py), which runs a
``LocalTasks`` of its own; both answer the same ``TaskHost`` calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from connect_lite.pipeline.placement import LastBatch
from connect_lite.runtime.task_metrics import TaskCounters
from connect_lite.runtime.task_plan import Component, TaskPlan
from connect_lite.storage.states import TargetState

TaskKey = tuple[str, int]
"""(connector, task)."""


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


__all__ = ["TaskHost", "TaskKey", "TaskView"]
