"""WorkerSinkTask: consume, one Spark job per batch, put, and commit the consumer group offsets."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any

from connect_lite.api.connector import ErrantRecordReporter, SinkTask, SinkTaskContext
from connect_lite.api.errors import ConnectError, RetriableError
from connect_lite.api.records import SinkRecord, TopicPartition
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.kafka.consumer import Consumer
from connect_lite.pipeline.record_errors import TASK_PUT, capture
from connect_lite.pipeline.sink_frames import sink_frames
from connect_lite.pipeline.sink_stage import SinkBatchResult, SinkStage
from connect_lite.plugins.isolation import public_class_name
from connect_lite.runtime.batch_pipeline import (
    DEFAULT_BATCHING,
    Batching,
    BatchPipeline,
    collect_batch,
)
from connect_lite.runtime.error_handling import (
    NO_ERROR_HANDLING,
    ErrorHandling,
    ToleranceExceededError,
    WorkerErrantRecordReporter,
    build_handler,
)
from connect_lite.runtime.task import WorkerTask, version_of
from connect_lite.runtime.topic_tracking import TopicTracker

DLQ_FLUSH_TIMEOUT_S = 30.0
"""How long a commit waits for the dead letter queue to acknowledge reported records."""


class _PutFailed(Exception):
    """put_dataframe raised an error that errors.tolerance=all skips."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _Context(SinkTaskContext):
    """The SinkTaskContext handed to the plugin; rewinds are applied after each put."""

    def __init__(self, owner: WorkerSinkTask, config: dict[str, str]) -> None:
        self._owner = owner
        self._config = config
        self.rewinds: dict[TopicPartition, int] = {}
        self.commit_requested = False
        self.timeout_ms: int | None = None

    def assignment(self) -> set[TopicPartition]:
        return set(self._owner.assigned)

    def offset(self, tp_or_offsets: Any, offset: int | None = None) -> None:
        if isinstance(tp_or_offsets, TopicPartition):
            if offset is None:
                raise ValueError("offset() needs an offset for the topic partition")
            self.rewinds[tp_or_offsets] = int(offset)
        else:
            self.rewinds.update({tp: int(o) for tp, o in dict(tp_or_offsets).items()})

    def pause(self, *partitions: TopicPartition) -> None:
        self._owner.pause_partitions(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self._owner.resume_partitions(partitions)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self._owner.errant_reporter

    def configs(self) -> dict[str, str]:
        return dict(self._config)


class WorkerSinkTask(WorkerTask):
    """Runs one SinkTask with its own consumer in group ``connect-<name>``."""

    kind = "sink"

    def __init__(
        self,
        *,
        plugin: SinkTask,
        task_config: dict[str, str],
        subscription: SinkSubscription,
        stage: SinkStage,
        consumer_factory: Any,
        flush_interval_ms: int,
        batching: Batching = DEFAULT_BATCHING,
        topic_tracker: TopicTracker | None = None,
        error_handling: ErrorHandling = NO_ERROR_HANDLING,
        dlq_producer_factory: Any = None,
        dlq_admin_factory: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.topic_tracker = topic_tracker
        self.plugin = plugin
        self.task_config = task_config
        self.subscription = subscription
        self.stage = stage
        self._consumer_factory = consumer_factory
        self.consumer: Consumer | None = None
        self.flush_interval = flush_interval_ms / 1000
        self.batching = batching
        self.assigned: set[TopicPartition] = set()
        self.current: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, int] = {}
        self._paused_by_task: set[TopicPartition] = set()
        self._next_commit = time.monotonic() + self.flush_interval
        self._started = False
        self._context = _Context(self, task_config)
        self._pipeline: BatchPipeline[Any, SinkBatchResult] = BatchPipeline(
            f"stage-{self.id}", self._run_stage, self._deliver
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
        self.errant_reporter: WorkerErrantRecordReporter | None = None
        if error_handling.errant_record_reporter_enabled:
            self.errant_reporter = WorkerErrantRecordReporter(
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

    # -- lifecycle -------------------------------------------------------------------------
    def initialize(self) -> None:
        self.version = version_of(self.plugin)
        if self.errors.dlq is not None:
            self.errors.dlq.setup()
        self.consumer = self._consumer_factory()
        self.plugin.context = self._context
        self.plugin.start(dict(self.task_config))
        self._started = True
        topics, pattern = self.subscription.topics, self.subscription.regex
        self.consumer.subscribe(
            topics or None, pattern, on_assign=self._on_assign, on_revoke=self._on_revoke
        )
        self.log.info("Sink task started, subscribed to %s", pattern or topics)

    def iteration(self) -> None:
        """Consume the next batch while Spark runs the previous one, then put the previous.

        The consumer stays on this thread (rebalance callbacks run here). A revocation or a
        pause first delivers the batch in flight; a rewind asked for during ``put`` drops the
        batch in flight and seeks its partitions back, so no record is skipped."""
        assert self.consumer is not None
        messages = self._collect()
        self.counters.add(records_in=len(messages))
        if messages and self.topic_tracker is not None:  # as received, before transforms
            self.topic_tracker.record(self.connector, {m.topic for m in messages}, self.task)
        if self._pipeline.advance(messages) and self._context.rewinds:
            self._drop_in_flight()
        self._apply_rewinds()
        if self.errors.dlq is not None:
            self.errors.dlq.poll()
        if self._context.commit_requested or time.monotonic() >= self._next_commit:
            self.commit_offsets()

    def _collect(self) -> list[Any]:
        return collect_batch(self._fetch, self.batching, lambda: self.stopping)

    def _fetch(self, room: int, seconds_left: float) -> list[Any]:
        assert self.consumer is not None
        if seconds_left <= 0:
            return []
        return self.consumer.poll_batch(room, min(seconds_left, 0.5))

    def _run_stage(self, messages: list[Any]) -> SinkBatchResult:
        return self.stage.run(messages, tolerate_errors=True)

    def _deliver(self, messages: list[Any], done: SinkBatchResult) -> None:
        """Handle the batch's errors (skip, log, DLQ or fail), put the rest, advance offsets.

        Offsets of skipped records advance too, as in Kafka. A RetriableError from ``put``
        (or ``put_dataframe``) hands the same records to it again after Kafka's backoff."""
        self.errors.stage_errors(done.errors, done.retries, messages.__getitem__)
        records = list(done.records)
        # The consumed message of each record handed to put: a transform may have renamed
        # the topic, so the errant record reporter finds originals by the record itself.
        self._putting = [(r, messages[i]) for r, i in zip(records, done.indices, strict=True)]
        self._putting_index = None
        try:
            with self.counters.timed_batch():
                if self._puts_dataframes:
                    self._put_dataframes(records, done.indices, messages)
                else:
                    self._redelivering(lambda: self.plugin.put(records))
        finally:
            self._putting, self._putting_index = [], None
        if self.errors.failed is not None:  # the task swallowed its reporter's exception
            raise ToleranceExceededError(
                "Tolerance exceeded in error handler"
            ) from self.errors.failed
        self.counters.add(records_out=len(records))
        for message in messages:
            tp = TopicPartition(message.topic, message.partition)
            self.current[tp] = message.offset + 1

    def _put_dataframes(
        self, records: list[SinkRecord], indices: list[int], messages: list[Any]
    ) -> None:
        """put_dataframe once per run of records with the same schemas, in order. A run that
        raises a RetriableError is handed over again (the runs before it are not); any other
        error fails the task, or with ``errors.tolerance=all`` skips the run's records."""
        if not records:
            return
        if self._header_converter is None:
            self._header_converter = self.stage.spec.header_converter()
        for run in sink_frames(self.stage.runtime, records, self._header_converter):
            try:
                self._redelivering(functools.partial(self.plugin.put_dataframe, run.frame), True)
            except _PutFailed as failed:
                errors = [
                    capture(
                        failed.error, indices[p], TASK_PUT, public_class_name(type(self.plugin))
                    )
                    for p in run.positions
                ]
                self.errors.stage_errors(errors, 0, messages.__getitem__)

    def _redelivering(self, put: Callable[[], None], tolerable: bool = False) -> None:
        """Call ``put`` until it does not raise a RetriableError, waiting Kafka's backoff in
        between: the task's ``context.timeout(ms)`` if it set one, else until the next offset
        commit. Another error fails the task (or, ``tolerable`` with ``errors.tolerance=all``,
        is raised as _PutFailed for the caller to report)."""
        while True:
            try:
                put()
                return
            except RetriableError as error:
                self._await_redelivery(error)
            except Exception as error:
                if tolerable and self.errors.handling.tolerance_all:
                    raise _PutFailed(error) from error
                raise ConnectError(
                    "Exiting WorkerSinkTask due to unrecoverable exception: error in stage "
                    f"{TASK_PUT} ({public_class_name(type(self.plugin))}): "
                    f"{type(error).__qualname__}: {error}"
                ) from error

    def _await_redelivery(self, error: RetriableError) -> None:
        timeout_ms, self._context.timeout_ms = self._context.timeout_ms, None
        if time.monotonic() >= self._next_commit:  # Kafka's loop commits between attempts
            self.commit_offsets()
        wait = max(self._next_commit - time.monotonic(), 0.0)
        if timeout_ms is not None and timeout_ms > 0:
            wait = min(wait, timeout_ms / 1000)
        self.log.warning(
            "RetriableException from SinkTask %s, the batch is handed over again in %.0f ms: %s",
            self.id, wait * 1000, error,
        )  # fmt: skip
        if self._stopping.wait(wait):
            raise ConnectError("The task stopped before the batch was handed over again")

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
        spec = self.stage.spec
        return spec.key_converter(), spec.value_converter(), spec.header_converter()

    def _drop_in_flight(self) -> None:
        """Forget the batch in flight; its partitions are read again from its first offsets."""
        for message in self._pipeline.drop():
            tp = TopicPartition(message.topic, message.partition)
            self._context.rewinds.setdefault(tp, message.offset)

    def _apply_rewinds(self) -> None:
        rewinds, self._context.rewinds = self._context.rewinds, {}
        assert self.consumer is not None
        for tp, offset in rewinds.items():
            if tp in self.assigned:
                self.consumer.seek(tp, offset)
                self.current[tp] = offset
                self.log.debug("Rewound %s to offset %d", tp, offset)

    def commit_offsets(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """pre_commit (flush), then commit what the task says is safe to the consumer group.

        An abandoned task commits nothing: its replacement may already own the group."""
        if self.abandoned:
            self.log.warning("Not committing offsets: the task was abandoned")
            return
        self._next_commit = time.monotonic() + self.flush_interval
        self._context.commit_requested = False
        scope = set(partitions) if partitions is not None else set(self.assigned)
        current = {tp: o for tp, o in self.current.items() if tp in scope}
        if not current or not self._started:
            return
        if not self._await_errant_records():
            return  # never commit past a record the dead letter queue has not stored
        safe = self.plugin.pre_commit(dict(current))
        to_commit = {tp: o for tp, o in (safe or {}).items() if self.committed.get(tp) != o}
        if to_commit and self.consumer is not None:
            try:
                self.consumer.commit(to_commit)
            except Exception:
                self.counters.add(failure=1)
                raise
            self.counters.add(success=1)
            self.committed.update(to_commit)
            self.log.debug("Committed offsets %s", to_commit)

    def _await_errant_records(self) -> bool:
        """Whether every record sent to the DLQ is acknowledged (so offsets may commit)."""
        dlq = self.errors.dlq
        if dlq is None:
            return True
        remaining = dlq.flush(DLQ_FLUSH_TIMEOUT_S)
        if remaining:
            self.log.warning(
                "%d records not yet acknowledged by the dead letter queue; offsets are not "
                "committed until they are",
                remaining,
            )
            return False
        if self.errant_reporter is not None:
            self.errant_reporter.await_all(0)
        return True

    # -- rebalance callbacks (run inside consumer.poll, on this thread) ---------------------
    def _on_assign(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Open the partitions; rewinds asked for in ``open`` become their start offsets."""
        self.assigned.update(partitions)
        self.plugin.open(list(partitions))
        starts = {
            tp: self._context.rewinds.pop(tp) for tp in partitions if tp in self._context.rewinds
        }
        for tp, offset in starts.items():
            self.current[tp] = offset
        return starts

    def _on_revoke(self, partitions: list[TopicPartition]) -> None:
        try:
            self._pipeline.finish()
            self.commit_offsets(partitions)
        finally:
            self.plugin.close(list(partitions))
            for tp in partitions:
                self.assigned.discard(tp)
                self.current.pop(tp, None)
                self.committed.pop(tp, None)

    # -- pause / resume --------------------------------------------------------------------
    def pause_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        tps = [tp for tp in partitions if tp in self.assigned]
        self._paused_by_task.update(tps)
        if self.consumer is not None and tps:
            self.consumer.pause(tps)

    def resume_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        tps = [tp for tp in partitions if tp in self.assigned]
        self._paused_by_task.difference_update(tps)
        if self.consumer is not None and tps:
            self.consumer.resume(tps)

    def on_paused(self) -> None:
        self._pipeline.finish()
        if self.consumer is not None and self.assigned:
            self.consumer.pause(list(self.assigned))

    def on_resumed(self) -> None:
        if self.consumer is not None and self.assigned:
            self.consumer.resume([tp for tp in self.assigned if tp not in self._paused_by_task])

    def on_idle(self) -> None:
        if self.consumer is None:
            return
        # Polling keeps the group membership alive; partitions are paused, but a message
        # fetched before the pause must not be skipped, so rewind to it.
        for message in self.consumer.poll_batch(100, 0):
            tp = TopicPartition(message.topic, message.partition)
            self._context.rewinds.setdefault(tp, message.offset)
        self._apply_rewinds()

    def cancel(self) -> None:
        self.stage.cancel()

    def close(self) -> None:
        # A batch still in the stage when stopping is dropped: its offsets were not committed.
        self._pipeline.close()
        try:
            if self._started and not self.failed:
                self.commit_offsets()
        except Exception:
            self.log.exception("Failed to commit offsets on stop")
        finally:
            try:
                if self._started:
                    if self.assigned:
                        self.plugin.close(sorted(self.assigned))
                    self.plugin.stop()
            finally:
                if self.consumer is not None:
                    self.consumer.close()
                if self.errors.dlq is not None:
                    self.errors.dlq.close()
