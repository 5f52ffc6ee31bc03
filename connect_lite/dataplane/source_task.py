"""WorkerSourceTask: poll, one Spark job per batch, produce, commit acknowledged offsets."""

from __future__ import annotations

import contextvars
import functools
import operator
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from connect_lite.api.connector import OffsetStorageReader, SourceTask, SourceTaskContext
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import RecordMetadata, SourceRecord
from connect_lite.config.batching import DEFAULT_BATCHING, Batching, record_bytes
from connect_lite.config.error_handling import NO_ERROR_HANDLING, ErrorHandling
from connect_lite.dataplane.batch_pipeline import BatchPipeline, collect_batch
from connect_lite.dataplane.error_handling import build_handler
from connect_lite.dataplane.source_offsets import (
    StoreOffsetReader,
    SubmittedBatch,
    SubmittedRecords,
    offsets_of,
)
from connect_lite.dataplane.task import WorkerTask
from connect_lite.dataplane.topic_creation import TopicCreator
from connect_lite.kafka.batch_sender import sender_config
from connect_lite.kafka.producer import Producer
from connect_lite.pipeline.record_errors import JobCancelledError
from connect_lite.pipeline.source_frames import FrameBatchResult
from connect_lite.pipeline.source_job import ProducedRow, SourceBatchResult, SourceJob
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.plugins.distributions import version_of
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.reports import SourceOffsets, TopicRecorder

FRAME_RETRY_S = 1.0
"""How long a task whose poll_dataframe raised RetriableError waits before it polls again."""
FRAME_IDLE_S = 0.05
"""How long a task whose poll_dataframe had nothing waits before it polls again."""

_INDEX = operator.itemgetter(0)
_TOPIC = operator.itemgetter(1)


class _Context(SourceTaskContext):
    def __init__(self, reader: OffsetStorageReader, config: dict[str, str]) -> None:
        self._reader = reader
        self._config = config

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def configs(self) -> dict[str, str]:
        return dict(self._config)


class WorkerSourceTask(WorkerTask):
    """Runs one SourceTask: records go through the batch job, then to Kafka."""

    kind = "source"

    def __init__(
        self,
        *,
        plugin: SourceTask,
        task_config: dict[str, str],
        job: SourceJob,
        producer_factory: Any,
        offsets: SourceOffsets,
        flush_interval_ms: int,
        flush_timeout_ms: int,
        batching: Batching = DEFAULT_BATCHING,
        topic_creator: TopicCreator | None = None,
        topic_tracker: TopicRecorder | None = None,
        error_handling: ErrorHandling = NO_ERROR_HANDLING,
        send_config: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """With ``send_config`` (the task producer's merged config), each batch's records are
        produced by the executors that convert them (pipeline/source_send.py); without it,
        by this task's producer."""
        super().__init__(**kwargs)
        self.topic_creator = topic_creator
        self.topic_tracker = topic_tracker
        self.plugin = plugin
        self.task_config = task_config
        self.job = job
        self._producer_factory = producer_factory
        self.producer: Producer | None = None
        self.offsets = offsets
        self.flush_interval = flush_interval_ms / 1000
        self.flush_timeout = flush_timeout_ms / 1000
        self.batching = batching
        self.submitted = SubmittedRecords()
        self._send_error: str | None = None
        self._next_commit = time.monotonic() + self.flush_interval
        self._plugin_stop_once = threading.Lock()
        """Taken, never given back, by the one call of the plugin's stop."""
        self._started = False
        self._frames = type(plugin).poll_dataframe is not SourceTask.poll_dataframe
        """The task implements poll_dataframe: its batches are DataFrames (_frame_iteration)."""
        self._wants_commit_record = (
            type(plugin).commit_record is not SourceTask.commit_record and not self._frames
        )
        # The batch job thread runs each batch's job and hands its records to the send thread,
        # which produces them while the next batch's job runs; the task thread only polls.
        # _send_lock keeps a commit from acknowledging a batch whose records are still being
        # handed to the producer.
        self._pipeline: BatchPipeline[SourceRecord, None] = BatchPipeline(
            f"job-{self.id}", self._run_and_send, lambda _batch, _none: None
        )
        self._sender = ThreadPoolExecutor(1, thread_name_prefix=f"send-{self.id}")
        self._sending: Future[None] | None = None
        """The batch last handed to the send thread (one at a time, in order)."""
        self._send_lock = threading.Lock()
        self._job_failed = False
        """Set on the batch job or send thread when a batch's job or send failed: the batches
        behind it are neither run nor produced (their offsets would be committed past it)."""
        self._job_run = self.spark_retrying(self._run_job_once)
        self._frame_run = self.spark_retrying(self._run_frame_once)
        self._send_config = None if send_config is None else sender_config(send_config)
        self._gated = topic_creator is not None or topic_tracker is not None
        """Whether a topic must be readied (created, recorded) before its first record."""
        self._ready_topics: set[str] = set()
        """The topics the executors may produce to: readied, and no record of theirs held
        back for this task's producer is still in flight."""
        self._holding = False
        """The batch last handed to the send thread holds records back for this task's
        producer: the next job waits for it (their topics' later records must not pass)."""
        self.errors = build_handler(
            error_handling, self.connector, self.task, self.error_counters, self.log
        )

    def initialize(self) -> None:
        self.version = version_of(self.plugin)
        if self._frames and self._send_config is None:
            raise ConnectError("poll_dataframe needs the executors to produce (a send config)")
        if not self._frames and type(self.plugin).poll is SourceTask.poll:
            raise ConnectError(
                f"{type(self.plugin).__name__} implements neither poll nor poll_dataframe"
            )
        # Per-record delivery callbacks only when the task wants commit_record; otherwise only
        # failures are reported and a flush at commit time acknowledges everything before it.
        if self._wants_commit_record:
            self.producer = self._producer_factory()
        else:
            self.producer = self._producer_factory(on_error=self._on_delivery_error)
        self.plugin.context = _Context(
            StoreOffsetReader(self.offsets, self.connector), self.task_config
        )
        self.plugin.start(dict(self.task_config))
        self._started = True
        self.log.info("Source task started")

    def iteration(self) -> None:
        """Poll the next batch while Spark runs the previous one, which is produced as soon
        as its job is done (on the send thread, in order, while the next batch's job runs).

        ``poll`` stays on this thread; the batch job waits on Spark's JVM and Python worker
        processes, so the two overlap for real. A batch starts as soon as the task has
        nothing more waiting and the batch job is free (see collect_batch)."""
        if self._frames:
            self._frame_iteration()
            return
        self._check_send_error()
        if self._sending is not None and self._sending.done():
            self._wait_for_send()  # the last batch's produce failed: so does the task
        with self.counters.timed_batch():
            batch = self._collect()
        self._pipeline.advance(batch)  # raises what failed the batch before, if anything
        assert self.producer is not None
        self.producer.poll(0)
        if time.monotonic() >= self._next_commit:
            self.commit_offsets()

    def _frame_iteration(self) -> None:
        """Poll a DataFrame, run its job (which produces it) and hand over what it held back;
        no poll overlaps the job: the frame's own work runs in the job."""
        self._check_send_error()
        try:
            frame = self.plugin.poll_dataframe(self.job.engine.session())
        except RetriableError as error:
            self.log.warning(
                "poll_dataframe failed, polling again in %.0f s: %s", FRAME_RETRY_S, error
            )
            self._stopping.wait(FRAME_RETRY_S)
            return
        if frame is None:
            self._stopping.wait(FRAME_IDLE_S)
        else:
            with self.counters.timed_batch():
                result = self._frame_run([frame])
            self.counters.add(records_in=result.size)
            if not self.stopping:  # else its offsets are never committed: polled again
                self.errors.job_errors(result.errors, result.retries)
                self._deliver(
                    result.rows,
                    result.sent,
                    result.sent_topics,
                    result.send_failure,
                    result.offsets,
                )
        assert self.producer is not None
        self.producer.poll(0)
        if time.monotonic() >= self._next_commit:
            self.commit_offsets()

    def _run_frame_once(self, frames: list[Any]) -> FrameBatchResult:
        order = self._send_order()
        assert order is not None  # initialize checked it
        topic = self.task_config.get("topic")
        return self.job.run_frame(frames[0], topic, order, tolerate_errors=True)

    def on_paused(self) -> None:
        self._pipeline.finish()
        self._wait_for_send()

    def _collect(self) -> list[SourceRecord]:
        batch = collect_batch(
            self._poll,
            self.batching,
            lambda: self.stopping,
            lambda: self._pipeline.busy,
            weigh=record_bytes,
        )
        self.counters.add(records_in=len(batch))
        return batch

    def _poll(self, _room: int, wait: float) -> list[SourceRecord] | None:
        """The plugin's poll (it decides how long it blocks); not called when the batch
        must go at once (no wait allowed): a poll might block. A RetriableError is logged and
        the task polls again, as Kafka's worker does (the plugin paces its own retries)."""
        if wait <= 0:
            return None
        try:
            return self.plugin.poll()
        except RetriableError as error:
            self.log.warning("Failed to poll records from the task; will retry: %s", error)
            return None

    def _run_and_send(self, batch: list[SourceRecord]) -> None:
        """On the batch job thread: the batch's Spark job (again, later, while Spark's cluster is
        unreachable), then its records to the send thread, once the batch before it is
        produced. Once a batch failed, the task fails with it: the batches behind it are not
        produced."""
        if self._job_failed:
            raise JobCancelledError("Not run: a batch before it failed")
        try:
            if self._holding:
                self._wait_for_send()  # its held records are out: their topics are ready now
                self._holding = False
            self._create_topics_early(batch)
            result = self._job_run(batch)
            self._wait_for_send()  # in order; a failed send fails the batches behind it
            self._holding = self._send_config is not None and bool(result.rows)
            run_in_context = contextvars.copy_context().run
            self._sending = self._sender.submit(run_in_context, self._send_locked, batch, result)
        except BaseException:
            self._job_failed = True
            raise

    def _create_topics_early(self, batch: list[SourceRecord]) -> None:
        """Without transforms, a record's topic is its destination: create the first batch's
        topics (KIP-158) before its job, not after. The topics and their settings are the
        same; a sink waiting for one joins it while this job runs (the first job waits for
        Spark's start). Once a topic is known (checked or created) later batches skip this:
        no pass over their records; a topic new then is created at its send, as before. A
        failure here is left to the send, which creates the topics again or fails the task."""
        creator = self.topic_creator
        if creator is None or creator.known or not self.job.keeps_topics:
            return
        topics = {record.topic for record in batch}
        if not all(isinstance(topic, str) and topic for topic in topics):
            return
        try:
            creator.ensure(sorted(topics))
        except ConnectError as error:
            self.log.debug("Topics not created before the batch's job: %s", error)

    def _send_locked(self, batch: list[SourceRecord], result: SourceBatchResult) -> None:
        """On the send thread, while the next batch's job runs."""
        try:
            with self._send_lock:
                self._send(batch, result)
        except BaseException:
            self._job_failed = True
            raise

    def _wait_for_send(self) -> None:
        """Wait until the batch on the send thread is produced; raise what failed it."""
        sending = self._sending
        if sending is not None:
            sending.result()

    def _run_job_once(self, batch: list[SourceRecord]) -> SourceBatchResult:
        return self.job.run(batch, tolerate_errors=True, send=self._send_order())

    def _send_order(self) -> SendOrder | None:
        """How this batch's executors produce, or None when this task's producer does."""
        if self._send_config is None:
            return None
        known = frozenset(self._ready_topics) if self._gated else None
        return SendOrder(self._send_config, known, self._wants_commit_record)

    def _send(self, batch: list[SourceRecord], result: SourceBatchResult) -> None:
        """Handle the batch's errors (skip or fail), then produce what the executors did not
        (all of it without a send config; else the records of topics not yet readied).

        A skipped record's offset is committed with the batch's, as in Kafka."""
        if self.stopping:
            return  # its offsets are never committed: it is polled again
        self.errors.job_errors(result.errors, result.retries, source=batch.__getitem__)
        if self._wants_commit_record:
            self._commit_sent(batch, result)
        self._deliver(
            result.rows,
            len(result.sent),
            result.sent_topics,
            result.send_failure,
            offsets_of(batch),
            batch,
        )

    def _deliver(
        self,
        rows: list[ProducedRow],
        sent: int,
        sent_topics: set[str],
        failure: str | None,
        offsets: dict[str, tuple[dict[str, Any], dict[str, Any]]],
        batch: list[SourceRecord] | None = None,
    ) -> None:
        """Ready the topics of the records held back (or of all, without a send config) and
        produce them; the batch's offsets are committable once they are all acknowledged
        (``sent`` ones already are, unless ``failure``)."""
        producer = self.producer
        assert producer is not None
        held_topics = set(map(_TOPIC, rows))  # after transforms: the real destinations
        if self.topic_creator is not None:  # before the producer's first send to a new topic
            self.topic_creator.ensure(held_topics)
        if self.topic_tracker is not None:
            self.topic_tracker.record(self.connector, held_topics | sent_topics, self.task)
        submitted = self.submitted.submit(len(rows), offsets)
        if failure is not None:
            submitted.failed = True
            self._send_error = failure
        self.counters.add(records_out=len(rows) + sent)
        try:
            self._produce(producer, rows, batch, submitted)
        except BaseException:
            submitted.failed = True  # not all of it reached the producer: never committed
            raise
        # The executors may produce to these topics once their held records are out.
        held_out = rows and self._send_config is not None
        if held_out and producer.flush(self.flush_timeout) == 0 and self._send_error is None:
            self._ready_topics.update(held_topics)

    def _commit_sent(self, batch: list[SourceRecord], result: SourceBatchResult) -> None:
        """``commit_record`` for the records dropped, then for those the executors sent,
        in order (the held ones get theirs from their delivery callbacks)."""
        produced = set(map(_INDEX, result.rows))
        produced.update(result.sent)
        for i, dropped in enumerate(batch):
            if i not in produced:
                self.plugin.commit_record(dropped, None)
        for i in result.sent:
            placement = result.placements.get(i)
            if placement is not None:
                self.plugin.commit_record(batch[i], RecordMetadata(*placement))

    def _produce(
        self,
        producer: Producer,
        rows: list[ProducedRow],
        batch: list[SourceRecord] | None,
        submitted: SubmittedBatch,
    ) -> None:
        if not self._wants_commit_record or batch is None:
            producer.produce_rows(rows)
            return
        for i, topic, partition, key, value, headers, timestamp in rows:
            producer.produce(
                topic,
                value,
                key=key,
                headers=headers,
                partition=partition,
                timestamp=timestamp,
                on_delivery=functools.partial(self._on_delivery, submitted, batch[i]),
            )

    def _on_delivery(
        self,
        submitted: SubmittedBatch,
        record: SourceRecord | None,
        error: Any,
        metadata: RecordMetadata | None,
    ) -> None:
        if error is not None:
            submitted.failed = True
            self._send_error = str(error)
            return
        SubmittedRecords.ack(submitted)
        if record is not None:
            self.plugin.commit_record(record, metadata)

    def _on_delivery_error(self, error: Any) -> None:
        self._send_error = str(error)

    def _check_send_error(self) -> None:
        if self._send_error is not None:
            raise ConnectError(
                f"Unrecoverable exception from producer send callback: {self._send_error}"
            )

    def commit_offsets(self) -> None:
        """Write the offsets of every acknowledged record to the offset store, then ``commit``."""
        self._next_commit = time.monotonic() + self.flush_interval
        with self._send_lock:  # no batch half handed to the producer
            if self.producer is not None:
                if self._wants_commit_record:
                    self.producer.poll(0)
                elif self.producer.flush(self.flush_timeout) == 0 and self._send_error is None:
                    self.submitted.ack_all()
            ready = self.submitted.drain()
        if ready and not self._write_offsets(ready):
            return
        if self._started:
            self.plugin.commit()

    def _write_offsets(self, ready: dict[Any, Any]) -> bool:
        """Store the offsets; when the store is busy, keep them pending for the next commit."""
        if self.abandoned:
            self.log.warning("Not committing offsets: the task was abandoned at shutdown")
            return False
        try:
            self.offsets.put_many(self.connector, ready)
        except RetriableError as error:
            self.counters.add(failure=1)
            self.submitted.restore(ready)
            self.log.warning("Offset commit failed, will retry at the next interval: %s", error)
            return False
        except Exception:
            self.counters.add(failure=1)
            raise
        self.counters.add(success=1)
        self.log.debug("Committed offsets of %d partitions", len(ready))
        return True

    def cancel(self) -> None:
        self.job.cancel()
        self._stop_plugin()

    def last_batch(self) -> LastBatch | None:
        return self.job.last_batch()

    def _stop_plugin(self) -> None:
        """The plugin's stop, once (from a stop's cancel, or the task's close)."""
        if self._started and self._plugin_stop_once.acquire(blocking=False):
            self.plugin.stop()

    def close(self) -> None:
        try:
            try:
                if not self.failed and not self.stopping:
                    self._pipeline.finish()
                    self._wait_for_send()
            finally:
                # A batch still in the batch job when stopping is dropped: its offsets were never
                # committed, so it is polled again after a restart.
                self._pipeline.close()
                self._sender.shutdown(wait=True)
            if self.producer is not None:
                remaining = self.producer.flush(self.flush_timeout)
                if remaining:
                    self.log.warning("%d records were not acknowledged before stop", remaining)
                self.commit_offsets()
        except Exception:
            self.log.exception("Failed to commit offsets on stop")
        finally:
            self._stop_plugin()
            if self.producer is not None:
                self.producer.close()
            if self.topic_creator is not None:
                self.topic_creator.close()


__all__ = ["WorkerSourceTask"]
