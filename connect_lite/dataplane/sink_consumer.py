"""SinkConsumer: a sink task's consumer, the partitions assigned to it, its pauses and rewinds."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from connect_lite.api.records import TopicPartition
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.kafka.consumer import AssignCallback, Consumer, RevokeCallback

PAUSED_POLL_RECORDS = 100
"""The most records one poll with every partition paused takes (fetched before the pause)."""


class SinkConsumer:
    """The consumer side of a sink task, what Kafka's WorkerSinkTask keeps in ``consumer``,
    ``context.pausedPartitions()`` and ``rewind()``.

    It owns the consumer (``client``, created by ``open``) and its ``subscription``, the
    partitions ``assigned`` to the task, those the task paused itself (``paused_by_task``,
    through its context), and ``rewinds``: where a partition is read from next, because the
    task asked (``context.offset``) or because the worker must read messages again. It pauses
    every partition (a batch waits for redelivery, or the task is paused) and resumes those the
    task did not pause, seeks the rewinds, and polls while every partition is paused, to stay in
    the group. ``revocations`` counts revocations, so that a batch fetched across one can drop
    what is no longer the task's."""

    def __init__(
        self,
        factory: Callable[[], Consumer],
        subscription: SinkSubscription,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        self._factory = factory
        self.subscription = subscription
        self._log = log
        self.client: Consumer | None = None
        self.assigned: set[TopicPartition] = set()
        self.paused_by_task: set[TopicPartition] = set()
        self.rewinds: dict[TopicPartition, int] = {}
        self.revocations = 0

    @property
    def is_open(self) -> bool:
        return self.client is not None

    def open(self) -> None:
        """Create the consumer (it joins the group at ``subscribe``)."""
        self.client = self._factory()

    def subscribe(self, on_assign: AssignCallback, on_revoke: RevokeCallback) -> None:
        """Subscribe to the topics or the pattern; the callbacks run inside a poll, and call
        ``assign`` and ``revoked``."""
        assert self.client is not None
        topics, pattern = self.subscription.topics, self.subscription.regex
        self.client.subscribe(topics or None, pattern, on_assign=on_assign, on_revoke=on_revoke)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        self.assigned.update(partitions)

    def take_rewinds(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The rewinds of these partitions, no longer pending (newly assigned partitions start
        there)."""
        return {tp: self.rewinds.pop(tp) for tp in partitions if tp in self.rewinds}

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        self.revocations += 1
        self.assigned.difference_update(partitions)

    def owns(self, message: Any) -> bool:
        return TopicPartition(message.topic, message.partition) in self.assigned

    def fetch(self, room: int, wait: float) -> list[Any]:
        """What the consumer has now, or (nothing yet) the first records within ``wait``."""
        assert self.client is not None
        return self.client.poll_batch(room, max(wait, 0.0))

    # -- pauses ----------------------------------------------------------------------------
    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """The task's pause (``context.pause``): it lasts until the task resumes them."""
        tps = [tp for tp in partitions if tp in self.assigned]
        self.paused_by_task.update(tps)
        if self.client is not None and tps:
            self.client.pause(tps)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """The task's resume (``context.resume``)."""
        tps = [tp for tp in partitions if tp in self.assigned]
        self.paused_by_task.difference_update(tps)
        if self.client is not None and tps:
            self.client.resume(tps)

    def pause_all(self) -> None:
        """Pause every assigned partition (a batch waits for redelivery, or the task is paused)."""
        if self.client is not None and self.assigned:
            self.client.pause(sorted(self.assigned))

    def resume_all(self) -> None:
        """Resume every assigned partition but those the task paused itself."""
        if self.client is not None:
            self.client.resume([tp for tp in self.assigned if tp not in self.paused_by_task])

    # -- rewinds ---------------------------------------------------------------------------
    def read_again(self, messages: Iterable[Any]) -> None:
        """Read these messages again: their partitions rewind to their first offsets (unless
        a rewind is pending there)."""
        for message in messages:
            tp = TopicPartition(message.topic, message.partition)
            self.rewinds.setdefault(tp, message.offset)

    def seek_rewinds(self) -> dict[TopicPartition, int]:
        """Seek the pending rewinds of assigned partitions (the others are dropped); the
        offsets sought, which are now the partitions' current offsets."""
        rewinds, self.rewinds = self.rewinds, {}
        assert self.client is not None
        sought: dict[TopicPartition, int] = {}
        for tp, offset in rewinds.items():
            if tp in self.assigned:
                self.client.seek(tp, offset)
                sought[tp] = offset
                self._log.debug("Rewound %s to offset %d", tp, offset)
        return sought

    def poll_paused(self, timeout: float) -> dict[TopicPartition, int]:
        """Poll with every partition paused, to stay in the group and run rebalance callbacks;
        a message fetched before the pause is read again later. The offsets sought."""
        assert self.client is not None
        self.read_again(self.client.poll_batch(PAUSED_POLL_RECORDS, timeout))
        return self.seek_rewinds()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
