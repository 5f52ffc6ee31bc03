"""SinkOffsets: a sink task's offsets, and their commit to its consumer group."""

from __future__ import annotations

import logging
import operator
import time
from collections.abc import Iterable
from typing import Any

from connect_lite.api.connector import SinkTask
from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.dataplane.error_handling import ErrorHandler
from connect_lite.dataplane.sink_consumer import SinkConsumer
from connect_lite.dataplane.sink_task_context import WorkerSinkTaskContext
from connect_lite.protocol.task_metrics import TaskCounters

DLQ_FLUSH_TIMEOUT_S = 30.0
"""How long a commit waits for the dead letter queue to acknowledge reported records."""


_PLACE = operator.attrgetter("topic", "partition")
_OFFSET = operator.attrgetter("offset")


class SinkOffsets:
    """The offsets of a sink task and their commit, Kafka's ``currentOffsets``,
    ``lastCommittedOffsets`` and ``commitOffsets``.

    It owns ``current``, the next offset of each assigned partition after the records handed
    to ``put`` (or where it was rewound to), ``last_committed``, what the consumer group holds,
    and ``next_commit``, when the next commit is due (every ``offset.flush.interval.ms``, or
    sooner when the task requests one). A commit waits for the dead letter queue to store the
    records reported to it, asks the task's ``pre_commit`` (``flush``) which offsets are safe,
    and commits those that changed. A commit the group refuses is logged and counted, and the
    task goes on, as in Kafka."""

    def __init__(
        self,
        plugin: SinkTask,
        consumer: SinkConsumer,
        context: WorkerSinkTaskContext,
        errors: ErrorHandler,
        flush_interval_ms: int,
        counters: TaskCounters,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        self._plugin = plugin
        self._consumer = consumer
        self._context = context
        self._errors = errors
        self._counters = counters
        self._log = log
        self.current: dict[TopicPartition, int] = {}
        self.last_committed: dict[TopicPartition, int] = {}
        self.flush_interval = flush_interval_ms / 1000
        self.next_commit = time.monotonic() + self.flush_interval

    @property
    def commit_due(self) -> bool:
        return self._context.commit_requested or time.monotonic() >= self.next_commit

    def advance(self, messages: list[Any]) -> None:
        """Past these messages, handed to ``put``, in the partitions still assigned."""
        # The last message of each partition (a batch holds each partition's in offset order).
        last = dict(zip(map(_PLACE, messages), map(_OFFSET, messages), strict=True))
        for (topic, partition), offset in last.items():
            tp = TopicPartition(topic, partition)
            if tp in self._consumer.assigned:
                self.current[tp] = offset + 1

    def rewound(self, sought: dict[TopicPartition, int]) -> None:
        """The consumer sought these offsets: they are read next."""
        self.current.update(sought)

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Revoked partitions: their offsets are their new owner's."""
        for tp in partitions:
            self.current.pop(tp, None)
            self.last_committed.pop(tp, None)

    def commit(self, scope: set[TopicPartition], *, plugin_started: bool) -> None:
        """pre_commit (flush), then commit what the task says is safe of the partitions in
        ``scope`` to the consumer group; the next commit is due an interval later."""
        self.next_commit = time.monotonic() + self.flush_interval
        self._context.commit_requested = False
        current = {tp: o for tp, o in self.current.items() if tp in scope}
        if not current or not plugin_started:
            return
        if not self._await_errant_records():
            return  # never commit past a record the dead letter queue has not stored
        safe = self._plugin.pre_commit(dict(current))
        to_commit = {tp: o for tp, o in (safe or {}).items() if self.last_committed.get(tp) != o}
        if to_commit and self._consumer.client is not None:
            try:
                self._consumer.client.commit(to_commit)
            except ConnectError as error:
                # As Kafka's WorkerSinkTask: logged and counted, the task goes on. A commit
                # refused in a rebalance (UNKNOWN_MEMBER_ID after the broker was away for a
                # session timeout) or timed out leaves the group's offsets where they were:
                # the partitions' next owner reads from there (at least once).
                self._counters.add(failure=1)
                self._log.error(
                    "Commit of offsets %s failed; records after the group's committed offsets "
                    "will be delivered again: %s",
                    to_commit,
                    error,
                )
                return
            self._counters.add(success=1)
            self.last_committed.update(to_commit)
            self._log.debug("Committed offsets %s", to_commit)

    def _await_errant_records(self) -> bool:
        """Whether every record sent to the DLQ is acknowledged (so offsets may commit)."""
        dlq = self._errors.dlq
        if dlq is None:
            return True
        remaining = dlq.flush(DLQ_FLUSH_TIMEOUT_S)
        if remaining:
            self._log.warning(
                "%d records not yet acknowledged by the dead letter queue; offsets are not "
                "committed until they are",
                remaining,
            )
            return False
        if self._context.errant_reporter is not None:
            self._context.errant_reporter.await_all(0)
        return True
