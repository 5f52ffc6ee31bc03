"""SinkDelivery: hands a sink task's batches to put or put_dataframe, and redelivers them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connect_lite.api.connector import SinkTask
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import SinkRecord, TopicPartition
from connect_lite.dataplane.error_handling import ErrorHandler, ToleranceExceededError
from connect_lite.dataplane.sink_offsets import SinkOffsets
from connect_lite.dataplane.sink_task_context import WorkerSinkTaskContext
from connect_lite.pipeline.range_job import RangeBatch, RangeFrame
from connect_lite.pipeline.record_errors import TASK_PUT, capture
from connect_lite.pipeline.sink_frames import schema_runs, sink_frame
from connect_lite.pipeline.sink_job import SinkJob
from connect_lite.plugins.isolation import public_class_name
from connect_lite.protocol.task_metrics import TaskCounters


@dataclass
class HandOver:
    """A batch on its way to ``put``: its consumed messages (whose offsets advance once it
    is handed over), the records still to hand over with the message each came from, how
    many records it held, and when it is tried again after a RetriableError."""

    messages: list[Any]
    pairs: list[tuple[SinkRecord, Any]]
    count: int
    retry_at: float | None = None
    ranges: RangeBatch | None = None
    """A batch the executors read: its frames are handed over instead of ``pairs``, and
    ``messages`` holds one marker per partition, at its last offset in the batch."""

    def drop(self, partitions: set[TopicPartition]) -> None:
        """Forget the records of revoked partitions: their new owner reads them again."""

        def kept(message: Any) -> bool:
            return TopicPartition(message.topic, message.partition) not in partitions

        self.messages = [m for m in self.messages if kept(m)]
        self.pairs = [(r, m) for r, m in self.pairs if kept(m)]
        if self.ranges is not None:
            self.ranges.without(partitions)

    def release(self) -> None:
        """Free what the executors keep of the batch."""
        if self.ranges is not None:
            self.ranges.release()


class SinkDelivery:
    """The hand-over of a sink task's batches to the plugin, Kafka's ``deliverMessages``:
    ``put``, or ``put_dataframe`` once per run of records with the same schemas.

    It owns the batch being put (``original_of`` finds the consumed message of a record the
    task reports, for the errant record reporter) and ``waiting``, the batch a RetriableError
    refused, to be handed over again after Kafka's backoff (Kafka's ``pausedForRedelivery``):
    ``context.timeout(ms)`` if the task set one, else the next commit. Pausing the partitions
    meanwhile and advancing the offsets are its caller's, from what ``hand_over`` returns."""

    def __init__(
        self,
        plugin: SinkTask,
        job: SinkJob,
        errors: ErrorHandler,
        context: WorkerSinkTaskContext,
        offsets: SinkOffsets,
        counters: TaskCounters,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
        task_id: str,
        stopping: Callable[[], bool],
        report: Callable[[BaseException | None], None] = lambda error: None,
    ) -> None:
        self._plugin = plugin
        self._job = job
        self._errors = errors
        self._context = context
        self._offsets = offsets
        self._counters = counters
        self._log = log
        self._task_id = task_id
        self._stopping = stopping
        self._report = report
        """The task's status while a batch waits: RUNNING with the RetriableError's trace, then
        without once the batch is taken."""
        self._puts_dataframes = type(plugin).put_dataframe is not SinkTask.put_dataframe
        if type(plugin).put is SinkTask.put and not self._puts_dataframes:
            raise ConnectError(
                f"Sink task class {public_class_name(type(plugin))} implements neither put "
                "nor put_dataframe"
            )
        self._putting: list[tuple[SinkRecord, Any]] = []
        self._putting_index: dict[Any, Any] | None = None
        self._putting_frame: RangeFrame | None = None
        """The frame being handed to put_dataframe, whose records the executors read: a
        record it reports is found among the frame's messages, read again for it."""
        self._header_converter: Any = None
        self.waiting: HandOver | None = None
        """The batch waiting to be handed over again after a RetriableError."""

    def hand_over(self, batch: HandOver) -> bool:
        """``put`` (or ``put_dataframe``) the batch's records; whether they were all handed
        over. After a RetriableError the batch is kept in ``waiting`` with the time it goes
        again. Raises what fails the task."""
        self.waiting = None
        # The consumed message of each record handed to put: a transform may have renamed
        # the topic, so the errant record reporter finds originals by the record itself.
        self._putting, self._putting_index = batch.pairs, None
        try:
            with self._counters.timed_batch():
                if batch.ranges is not None:
                    handed = self._put_frames(batch, batch.ranges)
                else:
                    put = self._put_dataframes if self._puts_dataframes else self._put
                    handed = put(batch)
        finally:
            self._putting, self._putting_index, self._putting_frame = [], None, None
        if not handed:
            self.waiting = batch
            return False
        batch.release()
        if batch.retry_at is not None:  # taken after a RetriableError: the trace goes
            self._report(None)
        if self._errors.failed is not None:  # the task swallowed its reporter's exception
            raise ToleranceExceededError(
                "Tolerance exceeded in error handler"
            ) from self._errors.failed
        self._counters.add(records_out=batch.count)
        return True

    def forget(self, partitions: set[TopicPartition]) -> None:
        """The waiting batch forgets the records of revoked partitions, as Kafka's does."""
        if self.waiting is not None:
            self.waiting.drop(partitions)

    def drop_waiting(self) -> None:
        """Forget the waiting batch (the task stops)."""
        if self.waiting is not None:
            self.waiting.release()
            self.waiting = None

    def _put(self, batch: HandOver) -> bool:
        try:
            self._plugin.put([record for record, _ in batch.pairs])
        except RetriableError as error:
            self._schedule_retry(batch, error)
            return False
        except Exception as error:
            raise self._put_failed(error) from error
        return True

    def _put_dataframes(self, batch: HandOver) -> bool:
        """put_dataframe once per run of records with the same schemas, in order, each built
        anew (on a new SparkSession if Spark's JVM died). A run that raises a RetriableError
        is handed over again with the runs after it (not those before it); any other error
        fails the task, or with ``errors.tolerance=all`` skips the run's records."""
        if not batch.pairs:
            return True
        if self._header_converter is None:
            self._header_converter = self._job.spec.header_converter()
        records = [record for record, _ in batch.pairs]
        engine, group = self._job.engine, self._job.job_group
        for positions in schema_runs(records):
            if self._stopping():  # nothing more is handed over; its offsets are not committed
                raise ConnectError("The task stopped before its batch was handed over")
            run = [batch.pairs[p] for p in positions]
            session = None
            try:
                session = engine.current_session()
                description = f"connect-lite put_dataframe {self._task_id}: {len(run)} records"
                owner = self._job.spec.job_id
                with engine.job_group(group, description, owner):  # stop() cancels its jobs
                    frame = sink_frame(engine, [r for r, _ in run], self._header_converter)
                    self._plugin.put_dataframe(frame)
            except RetriableError as error:
                batch.pairs = batch.pairs[positions[0] :]
                self._schedule_retry(batch, error)
                return False
            except Exception as error:
                if self._stopping():
                    raise
                # Spark's JVM was gone, or its cluster is unreachable: the run goes again later
                if engine.unavailable is not None or engine.recover(session):
                    batch.pairs = batch.pairs[positions[0] :]
                    self._schedule_retry(batch, error)
                    return False
                if not self._errors.handling.tolerance_all:
                    raise self._put_failed(error) from error
                component = public_class_name(type(self._plugin))
                errors = [capture(error, i, TASK_PUT, component) for i in range(len(run))]
                originals = [message for _, message in run]
                self._errors.job_errors(errors, 0, originals.__getitem__)
        return True

    def _put_frames(self, batch: HandOver, ranges: RangeBatch) -> bool:
        """put_dataframe once per frame of a batch the executors read, as ``_put_dataframes``
        does per run of schemas: a RetriableError hands the frame over again with those after
        it; any other error fails the task, or with ``errors.tolerance=all`` skips the
        frame's records (each partition's part of the batch is in one frame, so what was
        handed over before stays handed over)."""
        engine, group = self._job.engine, self._job.job_group
        frames = list(ranges.frames)
        for n, frame in enumerate(frames):
            if self._stopping():
                raise ConnectError("The task stopped before its batch was handed over")
            session = None
            try:
                session = engine.current_session()
                description = f"connect-lite put_dataframe {self._task_id}: {frame.count} records"
                self._putting_frame, self._putting_index = frame, None
                with engine.job_group(group, description, self._job.spec.job_id):
                    self._plugin.put_dataframe(frame.frame())
            except RetriableError as error:
                ranges.frames = frames[n:]
                self._schedule_retry(batch, error)
                return False
            except Exception as error:
                if self._stopping():
                    raise
                if engine.unavailable is not None or engine.recover(session):
                    self._read_again(batch, frames[n:], error)
                    return True
                if not self._errors.handling.tolerance_all:
                    raise self._put_failed(error) from error
                self._skip_frame(frame, error)
        return True

    def _read_again(self, batch: HandOver, frames: list[RangeFrame], error: Exception) -> None:
        """Spark's JVM died, or its cluster is unreachable, and the executors' stage of these
        frames with it: their partitions leave the batch (their offsets do not advance) and
        are read again from where the batch began for them."""
        partitions = {tp for frame in frames for tp in frame.limits}
        self._log.warning(
            "Spark lost the batch before it was handed over; reading %s again: %s",
            sorted(partitions), error,
        )  # fmt: skip
        for tp in partitions:
            start = self._offsets.current.get(tp)
            if start is not None:
                self._context.offset(tp, start)
        batch.drop(partitions)

    def _skip_frame(self, frame: RangeFrame, error: Exception) -> None:
        """With ``errors.tolerance=all``: each record of the frame is reported (and sent to
        the dead letter queue) with its consumed message, read again for it."""
        component = public_class_name(type(self._plugin))
        originals = frame.originals()
        errors = [capture(error, i, TASK_PUT, component) for i in range(len(originals))]
        self._errors.job_errors(errors, 0, originals.__getitem__)

    def _put_failed(self, error: Exception) -> ConnectError:
        return ConnectError(
            "Exiting WorkerSinkTask due to unrecoverable exception: error in stage "
            f"{TASK_PUT} ({public_class_name(type(self._plugin))}): "
            f"{type(error).__qualname__}: {error}"
        )

    def _schedule_retry(self, batch: HandOver, error: Exception) -> None:
        timeout_ms, self._context.timeout_ms = self._context.timeout_ms, None
        now = time.monotonic()
        wait = max(self._offsets.next_commit - now, 0.0)
        if timeout_ms is not None and timeout_ms > 0:
            wait = min(wait, timeout_ms / 1000)
        batch.retry_at = now + wait
        self._errors.counters.add(total_retries=1)  # task-error-metrics show it
        self._errors.counters.error_at(int(time.time() * 1000))
        self._report(error)
        self._log.warning(
            "RetriableException from SinkTask %s, the batch is handed over again in %.0f ms: %s",
            self._task_id, wait * 1000, error,
        )  # fmt: skip

    def original_of(self, record: SinkRecord) -> Any:
        """The consumed message a SinkRecord of the batch being put came from, if any: the
        record itself, else (a copy the task made) its topic, partition and offset."""
        if self._putting_index is None:
            self._putting_index = {id(r): m for r, m in self._putting}
            messages = [m for _, m in self._putting]
            if self._putting_frame is not None:  # read from Kafka again, once per frame
                messages = self._putting_frame.originals()
            for m in messages:
                self._putting_index.setdefault((m.topic, m.partition, m.offset), m)
        found = self._putting_index.get(id(record))
        if found is not None:
            return found
        return self._putting_index.get((record.topic, record.kafka_partition, record.kafka_offset))
