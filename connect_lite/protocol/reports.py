"""What a task reports to the worker, the one owner of the state file: its statuses, the topics
it uses (KIP-558) and its source offsets.

In the worker process the StatusReporter, the TopicTracker and the offset store take these
calls; in the data-plane process, stand-ins send them over the channel. Each is a narrow
protocol: a task needs no more of a store than this.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from connect_lite.protocol.states import State


def trace_of(error: BaseException) -> str:
    """The status ``trace``: the exception and its traceback, as Kafka shows a stack trace."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()


class TaskStatusWriter(Protocol):
    """What a task writes its status through."""

    def task(
        self,
        connector: str,
        task: int,
        state: State,
        trace: str | None = None,
        version: str | None = None,
    ) -> None: ...


class TopicRecorder(Protocol):
    """What a task records the topics it uses through."""

    def record(self, connector: str, topics: Iterable[str], task: int) -> None: ...


class SourceOffsets(Protocol):
    """What a source task reads and commits its offsets through."""

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None: ...

    def put_many(
        self, connector: str, offsets: Mapping[str, tuple[Mapping[str, Any], Any]]
    ) -> None:
        """Write in one transaction. ``offsets`` maps a partition's canonical key to
        ``(partition, offset)``; an offset of None deletes that partition (a tombstone)."""


__all__ = ["SourceOffsets", "TaskStatusWriter", "TopicRecorder", "trace_of"]
