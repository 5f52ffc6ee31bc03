"""WorkerSinkTask: consume, one Spark job per batch, put, and commit the consumer group offsets."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from connect_lite.api.connector import SinkTask
from connect_lite.api.records import TopicPartition
from connect_lite.config.batching import DEFAULT_BATCHING, Batching, message_bytes
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.config.error_handling import NO_ERROR_HANDLING, ErrorHandling
from connect_lite.dataplane.batch_pipeline import BatchPipeline, collect_batch
from connect_lite.dataplane.error_handling import WorkerErrantRecordReporter, build_handler
from connect_lite.dataplane.sink_consumer import SinkConsumer
from connect_lite.dataplane.sink_delivery import HandOver, SinkDelivery
from connect_lite.dataplane.sink_offsets import SinkOffsets
from connect_lite.dataplane.sink_ranges import RangeConsumer
from connect_lite.dataplane.sink_task_context import WorkerSinkTaskContext
from connect_lite.dataplane.task import WorkerTask
from connect_lite.pipeline.range_job import OffsetRange, RangeBatch
from connect_lite.pipeline.sink_job import SinkBatchResult, SinkJob
from connect_lite.plugins.distributions import version_of
from connect_lite.plugins.isolation import public_class_name
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.reports import TopicRecorder


class WorkerSinkTask(WorkerTask):
    """Runs one SinkTask with its own consumer in group ``connect-<name>``.

    It coordinates its parts on the task's thread: the ``consumer`` side (SinkConsumer: the
    assignment, pauses, rewinds), the ``context`` handed to the plugin
    (WorkerSinkTaskContext), the ``offsets`` and their commit (SinkOffsets), the ``delivery``
    of each batch to ``put`` (SinkDelivery), the batch job pipeline, and the rebalance
    callbacks that tie them together."""

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
        record_writer_factory: Any = None,
        reads_in_executors: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin
        self.job = job
        self.batching = batching
        self.topic_tracker = topic_tracker
        self.errors = build_handler(
            error_handling,
            self.connector,
            self.task,
            self.error_counters,
            self.log,
            dlq_producer_factory,
            dlq_admin_factory,
        )
        # A task that takes DataFrames has its records read by the executors, when its
        # consumer is Kafka's (``reads_in_executors``): its consumer plans offset ranges.
        puts_dataframes = type(plugin).put_dataframe is not SinkTask.put_dataframe
        self.reads_ranges = reads_in_executors and puts_dataframes
        consumer_kind = RangeConsumer if self.reads_ranges else SinkConsumer
        self.consumer = consumer_kind(consumer_factory, subscription, self.log)
        self.context = WorkerSinkTaskContext(self.consumer, task_config)
        self.context.writer_factory = record_writer_factory
        self.offsets = SinkOffsets(
            plugin, self.consumer, self.context, self.errors, flush_interval_ms, self.counters,
            self.log,
        )  # fmt: skip
        self.delivery = SinkDelivery(
            plugin, job, self.errors, self.context, self.offsets, self.counters, self.log,
            self.id, lambda: self.stopping, self.report_trouble,
        )  # fmt: skip
        if error_handling.errant_record_reporter_enabled:
            self.context.errant_reporter = WorkerErrantRecordReporter(
                self.errors, self.delivery.original_of, self._converters,
                public_class_name(type(plugin)),
            )  # fmt: skip
        # The batch's job runs on the batch job thread; again, later, while Spark's cluster is
        # unreachable.
        self._pipeline: BatchPipeline[Any, Any] = BatchPipeline(
            f"job-{self.id}",
            self.spark_retrying(self._run_job_once),
            self._deliver,
            discard=_release,
        )
        self._started = False
        self._closing = False  # set by close: the consumer's last revocation only forgets

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
        if self.delivery.waiting is not None and not self._redeliver():
            self._after_batch()
            return
        revocations = self.consumer.revocations
        messages = self._collect()
        if self.consumer.revocations != revocations:  # fetched before a revocation: not ours now
            messages = [m for m in messages if self.consumer.owns(m)]
        if not self.reads_ranges:  # a range batch counts what the executors read
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
            self.consumer.fetch,
            self.batching,
            lambda: self.stopping,
            lambda: self._pipeline.busy,
            _offsets_held if self.reads_ranges else len,
            None if self.reads_ranges else message_bytes,  # ranges: read by the executors
        )

    def _run_job_once(self, messages: list[Any]) -> SinkBatchResult | RangeBatch:
        if self.reads_ranges:
            assert isinstance(self.consumer, RangeConsumer)
            ordered = type(self.plugin).ordered_dataframes
            return self.job.run_ranges(messages, self.consumer.reader_config, ordered)
        return self.job.run(messages, tolerate_errors=True)

    def _deliver(self, messages: list[Any], done: SinkBatchResult | RangeBatch) -> None:
        """Handle the batch's errors (skip, log, DLQ or fail), then hand the rest over.

        Offsets of skipped records advance too, as in Kafka."""
        if isinstance(done, RangeBatch):
            self._deliver_ranges(done)
            return
        self.errors.job_errors(done.errors, done.retries, messages.__getitem__)
        pairs = [(r, messages[i]) for r, i in zip(done.records, done.indices, strict=True)]
        self._hand_over(HandOver(messages, pairs, len(pairs)))

    def _deliver_ranges(self, done: RangeBatch) -> None:
        """Hand over a batch the executors read. A partition's part counts only if it was
        planned since the partition's cursor last jumped, and starts where the task's
        offsets are; else it is left out (the cursor already points where reading goes on).
        Where a part ends short of its plan, or an open range ended, the cursor jumps there."""
        self.counters.add(records_in=done.read)
        assert isinstance(self.consumer, RangeConsumer)
        starts = {r.tp: r.offset for r in done.ranges}  # one range per partition
        stale = {
            r.tp
            for r in done.ranges
            if not self.consumer.is_current(r)
            or self.offsets.current.get(r.tp, r.offset) != r.offset
        }
        if stale:
            done.without(stale)
            for r in done.ranges:  # planned since the last jump, yet not where offsets are
                if r.tp in stale and self.consumer.is_current(r):
                    self.consumer.jump(r.tp, self.offsets.current[r.tp])
        for tp, found in done.opened.items():  # where an open range ended is known now
            self.consumer.settle(tp, done.next_offsets[tp], found)
        for tp, end in done.short.items():
            self.consumer.jump(tp, end)
        self.errors.job_errors(done.errors, done.retries, done.originals.__getitem__)
        markers = [
            OffsetRange(tp.topic, tp.partition, end - 1, end)
            for tp, end in done.next_offsets.items()
            if end > starts[tp]
        ]
        self._hand_over(HandOver(markers, [], done.count, ranges=done))

    def _hand_over(self, batch: HandOver) -> None:
        """Hand the batch over, then advance its offsets. A batch refused with a RetriableError
        waits in ``delivery``, every partition paused, to be tried again after Kafka's backoff."""
        if not self.delivery.hand_over(batch):
            self.consumer.pause_all()
            return
        self.offsets.advance(batch.messages)
        if batch.retry_at is not None and self.consumer.is_open:
            self.log.info("The batch was handed over again; resuming its partitions")
            self.consumer.resume_all()

    def _redeliver(self) -> bool:
        """Whether the batch waiting to be handed over again was tried now and taken (else it
        waits in ``delivery``); if its time has not come, poll the paused consumer a while."""
        batch = self.delivery.waiting
        assert batch is not None and batch.retry_at is not None
        left = batch.retry_at - time.monotonic()
        if left > 0:
            self._poll_paused(min(left, 0.5))
            return False
        self._hand_over(batch)
        if self.delivery.waiting is not None:
            return False
        if self.consumer.rewinds:
            self._drop_in_flight()
        self._rewind()
        return True

    def _poll_paused(self, timeout: float) -> None:
        """The one loop of a paused consumer (a batch waits for redelivery, or the task is
        paused): poll to stay in the group, and read again what it fetched."""
        self.offsets.rewound(self.consumer.poll_paused(timeout))

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
        if isinstance(self.consumer, RangeConsumer):  # the task's offsets start at the cursors
            self.offsets.rewound(self.consumer.starts(partitions))
        else:
            self.offsets.rewound(starts)
        return starts

    def _on_revoke(self, partitions: list[TopicPartition]) -> None:
        """Deliver the batch in flight, commit, close. While a batch waits to be handed over
        again, the one in flight behind it is dropped instead (it must not overtake it) and
        the waiting batch forgets the revoked partitions' records, as Kafka's does.

        Closing the consumer revokes every partition once more, after ``close`` has committed
        and stopped the plugin: then only the bookkeeping is done, as Kafka's listener skips a
        task already stopped (no put, pre_commit or close of a stopped plugin)."""
        if self._closing:
            self.log.debug(
                "Skipping partition revocation callback as task has already been stopped"
            )
            self.consumer.revoked(partitions)
            self.offsets.forget(partitions)
            return
        try:
            if self.delivery.waiting is None:
                self._pipeline.finish()
            else:
                self._drop_in_flight()
            self.delivery.forget(set(partitions))  # also a batch finish() just saw refused
            self.commit_offsets(partitions)
        finally:
            self.plugin.close(list(partitions))
            self.consumer.revoked(partitions)
            self.offsets.forget(partitions)

    # -- pause / resume --------------------------------------------------------------------
    def on_paused(self) -> None:
        if self.delivery.waiting is None:  # else the batch in flight waits behind the one to retry
            self._pipeline.finish()
        self.consumer.pause_all()

    def on_resumed(self) -> None:
        if self.consumer.assigned and self.delivery.waiting is None:
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
        self._closing = True
        self._pipeline.close()
        self.delivery.drop_waiting()
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
                try:
                    self.context.close_writers()
                    if self.errors.dlq is not None:
                        self.errors.dlq.close()
                finally:
                    self.releasing = True  # the consumer may wait for its group to settle
                    self.consumer.close()


def _offsets_held(ranges: Any) -> int:
    """How many offsets these ranges span (what a range batch's size counts)."""
    return sum(r.end - r.offset for r in ranges)


def _release(done: Any) -> None:
    """Free what the executors keep of a batch that is not handed over."""
    if isinstance(done, RangeBatch):
        done.release()
