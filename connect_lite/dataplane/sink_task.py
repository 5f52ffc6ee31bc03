"""WorkerSinkTask: consume, one Spark job per batch, put, and commit the consumer group offsets."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from connect_lite.api.connector import SinkTask
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import SinkRecord, TopicPartition
from connect_lite.config.batching import DEFAULT_BATCHING, Batching
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.config.error_handling import NO_ERROR_HANDLING, ErrorHandling
from connect_lite.dataplane.batch_pipeline import BatchPipeline, collect_batch
from connect_lite.dataplane.error_handling import (
    ToleranceExceededError,
    WorkerErrantRecordReporter,
    build_handler,
)
from connect_lite.dataplane.sink_consumer import SinkConsumer
from connect_lite.dataplane.sink_offsets import SinkOffsets
from connect_lite.dataplane.sink_task_context import WorkerSinkTaskContext
from connect_lite.dataplane.task import WorkerTask
from connect_lite.pipeline.record_errors import TASK_PUT, capture
from connect_lite.pipeline.sink_frames import schema_runs, sink_frame
from connect_lite.pipeline.sink_job import SinkBatchResult, SinkJob
from connect_lite.plugins.distributions import version_of
from connect_lite.plugins.isolation import public_class_name
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.reports import TopicRecorder


@dataclass
class _HandOver:
    """A batch on its way to ``put``: its consumed messages (whose offsets advance once it
    is handed over), the records still to hand over with the message each came from, how
    many records it held, and when it is tried again after a RetriableError."""

    messages: list[Any]
    pairs: list[tuple[SinkRecord, Any]]
    count: int
    retry_at: float | None = None

    def drop(self, partitions: set[TopicPartition]) -> None:
        """Forget the records of revoked partitions: their new owner reads them again."""

        def kept(message: Any) -> bool:
            return TopicPartition(message.topic, message.partition) not in partitions

        self.messages = [m for m in self.messages if kept(m)]
        self.pairs = [(r, m) for r, m in self.pairs if kept(m)]


class WorkerSinkTask(WorkerTask):
    """Runs one SinkTask with its own consumer in group ``connect-<name>``."""

    kind = "sink"

    def __init__(
        self,
        *,
        plugin: SinkTask,
        task_config: dict[str, str],
        subscription: SinkSubscription,
        job: SinkJob,
        consumer_factory: Any,
        flush_interval_ms: int,
        batching: Batching = DEFAULT_BATCHING,
        topic_tracker: TopicRecorder | None = None,
        error_handling: ErrorHandling = NO_ERROR_HANDLING,
        dlq_producer_factory: Any = None,
        dlq_admin_factory: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.topic_tracker = topic_tracker
        self.plugin = plugin
        self.job = job
        self.consumer = SinkConsumer(consumer_factory, subscription, self.log)
        self.context = WorkerSinkTaskContext(self.consumer, task_config)
        self.batching = batching
        self._started = False
        self._pipeline: BatchPipeline[Any, SinkBatchResult] = BatchPipeline(
            f"job-{self.id}", self._run_job, self._deliver
        )
        self.errors = build_handler(
            error_handling,
            self.connector,
            self.task,
            self.error_counters,
            self.log,
            dlq_producer_factory,
            dlq_admin_factory,
        )
        self.offsets = SinkOffsets(
            plugin,
            self.consumer,
            self.context,
            self.errors,
            flush_interval_ms,
            self.counters,
            self.log,
        )
        if error_handling.errant_record_reporter_enabled:
            self.context.errant_reporter = WorkerErrantRecordReporter(
                self.errors, self._original_of, self._converters, public_class_name(type(plugin))
            )
        self._putting: list[tuple[SinkRecord, Any]] = []
        self._putting_index: dict[Any, Any] | None = None
        self._puts_dataframes = type(plugin).put_dataframe is not SinkTask.put_dataframe
        if type(plugin).put is SinkTask.put and not self._puts_dataframes:
            raise ConnectError(
                f"Sink task class {public_class_name(type(plugin))} implements neither put "
                "nor put_dataframe"
            )
        self._header_converter: Any = None
        self._job_run = self.spark_retrying(self._run_job_once)
        self._retry: _HandOver | None = None
        """The batch waiting to be handed over again after a RetriableError."""

    # -- lifecycle -------------------------------------------------------------------------
    def initialize(self) -> None:
        self.version = version_of(self.plugin)
        if self.errors.dlq is not None:
            self.errors.dlq.setup()
        self.consumer.open()
        self.plugin.context = self.context
        self.plugin.start(self.context.configs())
        self._started = True
        self.consumer.subscribe(self._on_assign, self._on_revoke)
        subscription = self.consumer.subscription
        self.log.info(
            "Sink task started, subscribed to %s", subscription.regex or subscription.topics
        )

    def iteration(self) -> None:
        """Consume the next batch while Spark runs the previous one, then put the previous.

        The consumer stays on this thread (rebalance callbacks run here). A revocation or a
        pause first delivers the batch in flight; a rewind asked for during ``put`` drops the
        batch in flight and seeks its partitions back, so no record is skipped. While a batch
        waits to be handed over again (a RetriableError), its partitions are paused and the
        consumer is only polled to stay in the group."""
        if self._retry is not None and not self._retry_now():
            self._after_batch()
            return
        revocations = self.consumer.revocations
        messages = self._collect()
        if self.consumer.revocations != revocations:  # fetched before a revocation: not ours now
            messages = [m for m in messages if self.consumer.owns(m)]
        self.counters.add(records_in=len(messages))
        if messages and self.topic_tracker is not None:  # as received, before transforms
            self.topic_tracker.record(self.connector, {m.topic for m in messages}, self.task)
        if self._pipeline.advance(messages) and self.consumer.rewinds:
            self._drop_in_flight()
        self._rewind()
        self._after_batch()

    def _after_batch(self) -> None:
        if self.errors.dlq is not None:
            self.errors.dlq.poll()
        if self.offsets.commit_due:
            self.commit_offsets()

    def _collect(self) -> list[Any]:
        return collect_batch(
            self.consumer.fetch, self.batching, lambda: self.stopping, lambda: self._pipeline.busy
        )

    def _run_job(self, messages: list[Any]) -> SinkBatchResult:
        """On the batch job thread; again, later, while Spark's cluster is unreachable."""
        return self._job_run(messages)

    def _run_job_once(self, messages: list[Any]) -> SinkBatchResult:
        return self.job.run(messages, tolerate_errors=True)

    def _deliver(self, messages: list[Any], done: SinkBatchResult) -> None:
        """Handle the batch's errors (skip, log, DLQ or fail), then hand the rest over.

        Offsets of skipped records advance too, as in Kafka."""
        self.errors.job_errors(done.errors, done.retries, messages.__getitem__)
        pairs = [(r, messages[i]) for r, i in zip(done.records, done.indices, strict=True)]
        self._hand_over(_HandOver(messages, pairs, len(pairs)))

    def _hand_over(self, batch: _HandOver) -> None:
        """``put`` (or ``put_dataframe``) the batch's records, then advance its offsets. After
        a RetriableError the batch is kept, its partitions paused, to be tried again after
        Kafka's backoff: ``context.timeout(ms)`` if the task set one, else the next commit."""
        self._retry = None
        # The consumed message of each record handed to put: a transform may have renamed
        # the topic, so the errant record reporter finds originals by the record itself.
        self._putting, self._putting_index = batch.pairs, None
        try:
            with self.counters.timed_batch():
                put = self._put_dataframes if self._puts_dataframes else self._put
                handed = put(batch)
        finally:
            self._putting, self._putting_index = [], None
        if not handed:
            self._retry = batch
            self.consumer.pause_all()
            return
        if self.errors.failed is not None:  # the task swallowed its reporter's exception
            raise ToleranceExceededError(
                "Tolerance exceeded in error handler"
            ) from self.errors.failed
        self.counters.add(records_out=batch.count)
        self.offsets.advance(batch.messages)
        if batch.retry_at is not None and self.consumer.is_open:
            self.log.info("The batch was handed over again; resuming its partitions")
            self.consumer.resume_all()

    def _put(self, batch: _HandOver) -> bool:
        try:
            self.plugin.put([record for record, _ in batch.pairs])
        except RetriableError as error:
            self._schedule_retry(batch, error)
            return False
        except Exception as error:
            raise self._put_failed(error) from error
        return True

    def _put_dataframes(self, batch: _HandOver) -> bool:
        """put_dataframe once per run of records with the same schemas, in order, each built
        anew (on a new SparkSession if Spark's JVM died). A run that raises a RetriableError
        is handed over again with the runs after it (not those before it); any other error
        fails the task, or with ``errors.tolerance=all`` skips the run's records."""
        if not batch.pairs:
            return True
        if self._header_converter is None:
            self._header_converter = self.job.spec.header_converter()
        records = [record for record, _ in batch.pairs]
        engine, group = self.job.engine, self.job.job_group
        for positions in schema_runs(records):
            if self.stopping:  # nothing more is handed over; its offsets are not committed
                raise ConnectError("The task stopped before its batch was handed over")
            run = [batch.pairs[p] for p in positions]
            try:
                description = f"connect-lite put_dataframe {self.id}: {len(run)} records"
                owner = self.job.spec.job_id
                with engine.job_group(group, description, owner):  # stop() cancels its jobs
                    frame = sink_frame(engine, [r for r, _ in run], self._header_converter)
                    self.plugin.put_dataframe(frame)
            except RetriableError as error:
                batch.pairs = batch.pairs[positions[0] :]
                self._schedule_retry(batch, error)
                return False
            except Exception as error:
                if self.stopping:
                    raise
                # Spark's JVM was gone, or its cluster is unreachable: the run goes again later
                if engine.unavailable is not None or engine.recover():
                    batch.pairs = batch.pairs[positions[0] :]
                    self._schedule_retry(batch, error)
                    return False
                if not self.errors.handling.tolerance_all:
                    raise self._put_failed(error) from error
                component = public_class_name(type(self.plugin))
                errors = [capture(error, i, TASK_PUT, component) for i in range(len(run))]
                originals = [message for _, message in run]
                self.errors.job_errors(errors, 0, originals.__getitem__)
        return True

    def _put_failed(self, error: Exception) -> ConnectError:
        return ConnectError(
            "Exiting WorkerSinkTask due to unrecoverable exception: error in stage "
            f"{TASK_PUT} ({public_class_name(type(self.plugin))}): "
            f"{type(error).__qualname__}: {error}"
        )

    def _schedule_retry(self, batch: _HandOver, error: Exception) -> None:
        timeout_ms, self.context.timeout_ms = self.context.timeout_ms, None
        now = time.monotonic()
        wait = max(self.offsets.next_commit - now, 0.0)
        if timeout_ms is not None and timeout_ms > 0:
            wait = min(wait, timeout_ms / 1000)
        batch.retry_at = now + wait
        self.log.warning(
            "RetriableException from SinkTask %s, the batch is handed over again in %.0f ms: %s",
            self.id, wait * 1000, error,
        )  # fmt: skip

    def _retry_now(self) -> bool:
        """Whether the batch waiting to be handed over again was tried now (and with which
        outcome in ``_retry``); if its time has not come, poll the paused consumer a while."""
        batch = self._retry
        assert batch is not None and batch.retry_at is not None
        left = batch.retry_at - time.monotonic()
        if left > 0:
            self._poll_paused(min(left, 0.5))
            return False
        self._hand_over(batch)
        if self._retry is not None:
            return False
        if self.consumer.rewinds:
            self._drop_in_flight()
        self._rewind()
        return True

    def _poll_paused(self, timeout: float) -> None:
        """The one loop of a paused consumer (a batch waits for redelivery, or the task is
        paused): poll to stay in the group, and read again what it fetched."""
        self.offsets.rewound(self.consumer.poll_paused(timeout))

    def _original_of(self, record: SinkRecord) -> Any:
        """The consumed message a SinkRecord of the batch being put came from, if any: the
        record itself, else (a copy the task made) its topic, partition and offset."""
        if self._putting_index is None:
            self._putting_index = {id(r): m for r, m in self._putting}
            for _, m in self._putting:
                self._putting_index.setdefault((m.topic, m.partition, m.offset), m)
        found = self._putting_index.get(id(record))
        if found is not None:
            return found
        return self._putting_index.get((record.topic, record.kafka_partition, record.kafka_offset))

    def _converters(self) -> tuple[Any, Any, Any]:
        spec = self.job.spec
        return spec.key_converter(), spec.value_converter(), spec.header_converter()

    def _drop_in_flight(self) -> None:
        """Forget the batch in flight; its partitions are read again from its first offsets."""
        self.consumer.read_again(self._pipeline.drop())

    def _rewind(self) -> None:
        """Seek the rewinds asked for (``context.offset``) or needed since the last one."""
        self.offsets.rewound(self.consumer.seek_rewinds())

    def commit_offsets(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """pre_commit (flush), then commit what the task says is safe to the consumer group.

        An abandoned task commits nothing: its replacement may already own the group."""
        if self.abandoned:
            self.log.warning("Not committing offsets: the task was abandoned")
            return
        scope = set(partitions) if partitions is not None else set(self.consumer.assigned)
        self.offsets.commit(scope, plugin_started=self._started)

    # -- rebalance callbacks (run inside consumer.poll, on this thread) ---------------------
    def _on_assign(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Open the partitions; rewinds asked for in ``open`` become their start offsets."""
        self.consumer.assign(partitions)
        self.plugin.open(list(partitions))
        starts = self.consumer.take_rewinds(partitions)
        self.offsets.rewound(starts)
        return starts

    def _on_revoke(self, partitions: list[TopicPartition]) -> None:
        """Deliver the batch in flight, commit, close. While a batch waits to be handed over
        again, the one in flight behind it is dropped instead (it must not overtake it) and
        the waiting batch forgets the revoked partitions' records, as Kafka's does."""
        try:
            if self._retry is None:
                self._pipeline.finish()
            else:
                self._drop_in_flight()
            if self._retry is not None:
                self._retry.drop(set(partitions))
            self.commit_offsets(partitions)
        finally:
            self.plugin.close(list(partitions))
            self.consumer.revoked(partitions)
            self.offsets.forget(partitions)

    # -- pause / resume --------------------------------------------------------------------
    def on_paused(self) -> None:
        if self._retry is None:  # else the batch in flight waits behind the one to retry
            self._pipeline.finish()
        self.consumer.pause_all()

    def on_resumed(self) -> None:
        if self.consumer.assigned and self._retry is None:
            self.consumer.resume_all()

    def on_idle(self) -> None:
        if self.consumer.is_open:
            self._poll_paused(0)

    def cancel(self) -> None:
        self.job.cancel()

    def last_batch(self) -> LastBatch | None:
        return self.job.last_batch()

    def close(self) -> None:
        # A batch still in the batch job when stopping is dropped: its offsets were not committed.
        self._pipeline.close()
        try:
            if self._started and not self.failed:
                self.commit_offsets()
        except Exception:
            self.log.exception("Failed to commit offsets on stop")
        finally:
            try:
                if self._started:
                    if self.consumer.assigned:
                        self.plugin.close(sorted(self.consumer.assigned))
                    self.plugin.stop()
            finally:
                self.consumer.close()
                if self.errors.dlq is not None:
                    self.errors.dlq.close()
