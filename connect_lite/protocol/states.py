"""Target states (what the user asked for) and statuses (what is running), kept apart."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class TargetState(enum.Enum):
    """What the user asked a connector to be."""

    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class State(enum.Enum):
    """The observed state of a connector or task instance."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"


@dataclass(frozen=True)
class ConnectorStatus:
    """A connector's status as stored and shown by the REST API."""

    connector: str
    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class TaskStatus:
    """A task's status as stored and shown by the REST API."""

    connector: str
    task: int
    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None

    @property
    def task_id(self) -> str:
        return f"{self.connector}-{self.task}"
