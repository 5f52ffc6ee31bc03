"""RangeConsumer: a sink task's consumer that plans offset ranges instead of fetching records.

For a task whose plugin takes DataFrames, the executors read the records (pipeline/range_job.py).
The consumer still owns the group on the driver: the assignment, rebalances, the task's pauses
and rewinds, and the commits. Its partitions are paused in the client from the moment they are
assigned, so it fetches nothing; a poll only keeps it in the group and runs the rebalance
callbacks. It keeps a cursor per partition, where the next range starts: at assignment the
group's committed offset (else ``auto.offset.reset``), then the end of each range planned, or
where a rewind puts it.

A range ends at the broker's high watermark as asked now, capped by the batch's room. Tansu's
watermark is the first offset of the last batch produced, plus one, so records may follow it
(``../reference/broker.md``): when a partition's watermark changed but is not above its cursor,
it gets an *open* range, capped by the room only, whose reader takes what the partition holds
(range_job.py). Its end is known only once it is read, so nothing more of that partition is
planned until then (``settle``). A cursor below the partition's first offset (records deleted)
moves as ``auto.offset.reset`` says, as a consumer's fetch would.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane.sink_consumer import SinkConsumer
from connect_lite.kafka.consumer import Consumer
from connect_lite.pipeline.range_job import OffsetRange

OPEN_RETRY_S = 30.0
"""How long after an open range found nothing its partition is looked at again, though its
watermark did not move (the reader may have waited too little on a busy machine)."""

IDLE_POLL_S = 0.05
"""While no partition has records after its cursor, how long each poll waits before the
watermarks are asked again: a lone record is planned within about this."""


class NoOffsetError(ConnectError):
    """A partition has no committed offset and ``auto.offset.reset`` is none: the task fails,
    as Kafka's consumer does."""


class RangeConsumer(SinkConsumer):
    """A SinkConsumer whose ``fetch`` returns OffsetRanges (see the module's doc)."""

    def __init__(
        self,
        factory: Callable[[], Consumer],
        subscription: SinkSubscription,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        super().__init__(factory, subscription, log)
        self.cursors: dict[TopicPartition, int] = {}
        self._all_paused = False
        self._open: set[TopicPartition] = set()  # an open range is being read
        self.epochs: dict[TopicPartition, int] = {}
        """Per partition, how many times its cursor jumped (a rewind, a short read, the end of
        an open range): a range planned in an older epoch is stale."""
        self._probed: dict[TopicPartition, tuple[int, float]] = {}
        """Per partition, the watermark when an open range last found nothing, and when to look
        again anyway."""

    def open(self) -> None:
        super().open()
        assert self.client is not None
        self.client.pause_assigned = True

    @property
    def reader_config(self) -> dict[str, str]:
        """The consumer's merged config, from which the executors' readers are built."""
        assert self.client is not None
        return self.client.config

    # -- assignment and cursors ------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """New partitions start at the group's committed offsets (else the reset policy)."""
        tps = [tp for tp in partitions if tp not in self.assigned]
        super().assign(tps)
        self._start_cursors(tps)

    def _start_cursors(self, tps: list[TopicPartition]) -> None:
        """The cursors of partitions without one, from the group (a broker that does not
        answer leaves them unset: they are asked for again at the next plan)."""
        assert self.client is not None
        try:
            committed = self.client.committed(tps)
            for tp in tps:
                offset = committed.get(tp)
                self.jump(tp, offset if offset is not None else self._reset(tp))
        except NoOffsetError:
            raise
        except ConnectError as error:
            self._log.warning("Cannot read where %s start yet: %s", tps, error)

    def starts(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The cursors of these partitions: where the task's offsets begin."""
        return {tp: self.cursors[tp] for tp in partitions if tp in self.cursors}

    def _reset(self, tp: TopicPartition) -> int:
        assert self.client is not None
        policy = str(self.client.config.get("auto.offset.reset", "latest")).lower()
        if policy not in ("earliest", "smallest", "beginning", "latest", "largest", "end"):
            raise NoOffsetError(
                f"No committed offset for {tp.topic}-{tp.partition} and auto.offset.reset={policy}"
            )
        low, high = self.client.watermarks(tp)
        return low if policy in ("earliest", "smallest", "beginning") else high

    def take_rewinds(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        taken = super().take_rewinds(partitions)
        for tp, offset in taken.items():
            self.jump(tp, offset)
        return taken

    def jump(self, tp: TopicPartition, offset: int) -> None:
        """The next range of ``tp`` starts at ``offset``; ranges planned before are stale."""
        self.cursors[tp] = offset
        self.epochs[tp] = self.epochs.get(tp, 0) + 1
        self._open.discard(tp)

    def is_current(self, r: OffsetRange) -> bool:
        """Whether ``r`` was planned since its partition's cursor last jumped."""
        return r.tp in self.assigned and r.epoch == self.epochs.get(r.tp)

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        partitions = list(partitions)
        super().revoked(partitions)
        for tp in partitions:
            self.cursors.pop(tp, None)
            self._open.discard(tp)
            self._probed.pop(tp, None)
            self.epochs.pop(tp, None)

    def seek_rewinds(self) -> dict[TopicPartition, int]:
        """The pending rewinds of assigned partitions become their cursors."""
        rewinds, self.rewinds = self.rewinds, {}
        sought = {tp: offset for tp, offset in rewinds.items() if tp in self.assigned}
        for tp, offset in sought.items():
            self.jump(tp, offset)
        for tp, offset in sought.items():
            self._log.debug("Rewound %s to offset %d", tp, offset)
        return sought

    # -- pauses: the client's partitions stay paused; these say which to plan ------------
    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        self.paused_by_task.update(tp for tp in partitions if tp in self.assigned)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self.paused_by_task.difference_update(partitions)

    def pause_all(self) -> None:
        self._all_paused = True

    def resume_all(self) -> None:
        self._all_paused = False

    # -- planning ------------------------------------------------------------------------------
    def fetch(self, room: int, wait: float) -> list[Any]:
        """Ranges of up to ``room`` offsets in all from the cursors to the watermarks; when
        there are none yet, polled for within ``wait`` seconds."""
        deadline = time.monotonic() + max(wait, 0.0)
        while True:
            planned = self._plan(room)
            left = deadline - time.monotonic()
            if planned or left <= 0:
                return planned
            self._poll(min(IDLE_POLL_S, left))

    def _plan(self, room: int) -> list[OffsetRange]:
        assert self.client is not None
        if self._all_paused:
            return []
        planned: list[OffsetRange] = []
        candidates = sorted(self.assigned - self.paused_by_task - self._open)
        unstarted = [tp for tp in candidates if tp not in self.cursors]
        if unstarted:
            self._start_cursors(unstarted)
        for tp in candidates:
            if room <= 0:
                break
            cursor = self.cursors.get(tp)
            if cursor is None:
                continue
            try:
                low, high = self.client.watermarks(tp)
            except ConnectError as error:  # the broker is away: nothing is planned meanwhile
                self._log.debug("No watermarks for %s: %s", tp, error)
                continue
            if cursor < low:
                cursor = self._reset_below(tp, cursor, low)
                self.jump(tp, cursor)
            epoch = self.epochs[tp]
            if high > cursor:
                end = min(high, cursor + room)
                planned.append(OffsetRange(tp.topic, tp.partition, cursor, end, False, epoch))
                room -= end - cursor
            elif self._probe_due(tp, high):
                self._open.add(tp)
                end = cursor + room
                planned.append(OffsetRange(tp.topic, tp.partition, cursor, end, True, epoch))
            else:
                continue
            self.cursors[tp] = end
        return planned

    def _probe_due(self, tp: TopicPartition, high: int) -> bool:
        probed = self._probed.get(tp)
        return probed is None or probed[0] != high or time.monotonic() >= probed[1]

    def settle(self, tp: TopicPartition, end: int, found: bool) -> None:
        """An open range of ``tp`` was read up to ``end``. If it ``found`` records, more may
        follow, and the next plan looks again; if not, only once its watermark moves or
        OPEN_RETRY_S passed."""
        if tp in self._open:
            self.jump(tp, end)
            if found:
                self._probed.pop(tp, None)
            else:
                assert self.client is not None
                try:
                    high = self.client.watermarks(tp)[1]
                except ConnectError:
                    return
                self._probed[tp] = (high, time.monotonic() + OPEN_RETRY_S)

    def _reset_below(self, tp: TopicPartition, cursor: int, low: int) -> int:
        reset = self._reset(tp)
        self._log.warning(
            "Offset %d of %s is no longer in the log (it starts at %d): reading from %d, as "
            "auto.offset.reset says",
            cursor, tp, low, reset,
        )  # fmt: skip
        return reset

    def _poll(self, timeout: float) -> None:
        """Stay in the group and run rebalance callbacks (the partitions are paused)."""
        assert self.client is not None
        self.read_again(self.client.poll_batch(1, timeout))

    def poll_paused(self, timeout: float) -> dict[TopicPartition, int]:
        self._poll(timeout)
        return self.seek_rewinds()


__all__ = ["IDLE_POLL_S", "OPEN_RETRY_S", "NoOffsetError", "RangeConsumer"]
