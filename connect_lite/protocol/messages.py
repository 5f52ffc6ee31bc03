"""The channel's messages between the worker process and its data-plane process, defined once.

Each message is a frozen dataclass; its type picks the handler on the other side
(protocol/channel.py). The worker's side is control/dataplane_process.py, the data plane's is
dataplane/main.py: both build their handler tables from these types.

The data plane tells the worker (notices, unless marked as a call):

- ``TaskStatusReport``, ``TopicsUsed``: a task's status and the topics it uses;
- ``ReadOffset`` (call: the offset, or None), ``CommitOffsets`` (call: returns once stored);
- ``LogLine``: a log record, logged by the worker's handlers;
- ``Snapshot``: its tasks' counters and Spark's state.

The worker asks the data plane (all calls): ``StartTask``, ``Transition``, ``StopTasks`` and
``Shutdown`` (handled one at a time, in order), and ``ReadViews``, ``ReadLoggers`` and
``SetLoggers`` (handled on a pool: a read may wait on Spark).

Messages from a task carry its ``generation`` (which start of the task it is): the worker takes
them only while it holds that generation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_lite.protocol.host import TaskKey, TaskView
from connect_lite.protocol.plan import TaskPlan
from connect_lite.protocol.states import State, TargetState

SNAPSHOT_INTERVAL_S = 0.5
"""How often the data plane sends its tasks' counters and Spark's state when they changed."""


@dataclass(frozen=True)
class DataPlaneSettings:
    """What the data plane needs before anything else: sent first, before its channel starts."""

    spark_conf: dict[str, str]
    shutdown_timeout_ms: int
    niceness: int = 0
    log_levels: dict[str, int] = field(default_factory=dict)
    """The worker's logger levels (its root logger as ``""``): the data plane's are the same."""
    sys_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineState:
    """Spark in the data-plane process, as the worker's health and start-up line show it."""

    unavailable: str | None = None
    start_error: str | None = None
    started_in: float | None = None

    @property
    def failure(self) -> str | None:
        return self.unavailable or self.start_error


# -- from the data plane to the worker ---------------------------------------------------------
@dataclass(frozen=True)
class TaskStatusReport:
    connector: str
    task: int
    generation: int
    state: State
    trace: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class TopicsUsed:
    connector: str
    task: int
    generation: int
    topics: frozenset[str]


@dataclass(frozen=True)
class ReadOffset:
    """Call: the source partition's committed offset, or None."""

    connector: str
    partition: dict[str, Any]


@dataclass(frozen=True)
class CommitOffsets:
    """Call: stored in one transaction (see ``SourceOffsets.put_many``), or it raises."""

    connector: str
    task: int
    generation: int
    offsets: Mapping[str, tuple[Mapping[str, Any], Any]]


@dataclass(frozen=True)
class LogLine:
    """A log record as plain values (``dataplane.main.portable_record``)."""

    record: dict[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """The data plane's tasks (counters, plugins, last batches) and Spark's state, at once."""

    views: tuple[TaskView, ...] = ()
    engine: EngineState = EngineState()


# -- from the worker to the data plane ---------------------------------------------------------
@dataclass(frozen=True)
class StartTask:
    """Call: True once the task is held (False: it could not be built, and is FAILED)."""

    plan: TaskPlan


@dataclass(frozen=True)
class Transition:
    connector: str
    target: TargetState


@dataclass(frozen=True)
class StopTasks:
    keys: tuple[TaskKey, ...]


@dataclass(frozen=True)
class Shutdown:
    """Stop what still runs, then Spark; the process exits once this is answered."""


@dataclass(frozen=True)
class ReadViews:
    """Call: every running task's ``TaskView``."""


@dataclass(frozen=True)
class ReadLoggers:
    """Call: the data plane's logger levels (``logs.loggers.LoggerLevel`` by name)."""


@dataclass(frozen=True)
class SetLoggers:
    """Call: the names of the loggers whose level changed."""

    namespace: str
    level: str


ORDERED = frozenset({StartTask, Transition, StopTasks, Shutdown})
"""Handled one at a time, in the order they came, off the channel's reader."""
THREADED = frozenset({ReadViews, ReadLoggers, SetLoggers})
"""Handled on a pool, in any order: a read may wait on Spark."""

__all__ = [
    "ORDERED",
    "SNAPSHOT_INTERVAL_S",
    "THREADED",
    "CommitOffsets",
    "DataPlaneSettings",
    "EngineState",
    "LogLine",
    "ReadLoggers",
    "ReadOffset",
    "ReadViews",
    "SetLoggers",
    "Shutdown",
    "Snapshot",
    "StartTask",
    "StopTasks",
    "TaskStatusReport",
    "TopicsUsed",
    "Transition",
]
