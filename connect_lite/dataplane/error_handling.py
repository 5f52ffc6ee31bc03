"""Kafka's task error handling (KIP-298, KIP-610): tolerance, the error log, the dead letter queue.

Stages already isolate failing records and return them as RecordErrors (with retries done
in the Spark workers, see pipeline/plugin_calls.py). On the task's thread, :class:`ErrorHandler`
plays Kafka's RetryWithToleranceOperator: it counts each error in the task-error-metrics,
hands it to the reporters (:class:`LogReporter`, and for sinks
:class:`DeadLetterQueueReporter`), then either skips the record (``errors.tolerance=all``)
or fails the task with "Tolerance exceeded in error handler". :class:`WorkerErrantRecordReporter`
is the ErrantRecordReporter a sink task gets from its context.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from connect_lite.api.connector import ErrantRecordReporter
from connect_lite.api.errors import ConnectError
from connect_lite.api.records import SinkRecord, SourceRecord
from connect_lite.config.error_handling import ErrorHandling
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.record_errors import PREDICATE, TASK_PUT, TRANSFORMATION, RecordError
from connect_lite.protocol.task_metrics import ErrorCounters

HEADER_PREFIX = "__connect.errors."
"""Kafka's DLQ context header prefix (ConnectHeaders.HEADER_PREFIX + ".errors.")."""

DLQ_PARTITIONS = 1
"""Kafka creates a missing dead letter queue topic with one partition."""


class ToleranceExceededError(ConnectError):
    """An error the task may not tolerate (``errors.tolerance=none``): the task fails."""


@dataclass(frozen=True)
class ErrorContext:
    """One failed operation, as a reporter sees it (Kafka's ProcessingContext).

    ``original`` is the consumed message (sink; anything with topic, partition, offset, key,
    value, headers, timestamp, timestamp_type), ``source_record`` the polled record (source).
    """

    stage: str
    class_name: str
    exception_class: str
    message: str
    trace: str
    original: Any = None
    source_record: SourceRecord | None = None

    @classmethod
    def of(cls, error: RecordError, original: Any = None, source: Any = None) -> ErrorContext:
        stage = TRANSFORMATION if error.stage == PREDICATE else error.stage
        return cls(
            stage,
            error.component,
            error.exception_class,
            error.message,
            error.trace,
            original,
            source,
        )


def _qualified(obj: Any) -> str:
    klass = obj if isinstance(obj, type) else type(obj)
    return f"{klass.__module__}.{klass.__qualname__}"


def _trace(error: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


class LogReporter:
    """``errors.log.enable``: one ERROR line per failure, as Kafka's LogReporter writes it."""

    def __init__(
        self,
        handling: ErrorHandling,
        task_id: str,
        counters: ErrorCounters,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        self.handling = handling
        self.task_id = task_id
        self.counters = counters
        self.log = log

    def message(self, ctx: ErrorContext) -> str:
        text = (
            f"Error encountered in task {self.task_id}. Executing stage '{ctx.stage}' "
            f"with class '{ctx.class_name}'"
        )
        if self.handling.log_include_messages:
            if ctx.source_record is not None:
                text += f", where source record is = {ctx.source_record}"
            elif ctx.original is not None:
                m = ctx.original
                text += (
                    f", where consumed record is {{topic='{m.topic}', partition={m.partition}, "
                    f"offset={m.offset}, timestamp={m.timestamp}, "
                    f"timestampType={m.timestamp_type}, key={m.key!r}, value={m.value!r}}}"
                )
        return text + "."

    def report(self, ctx: ErrorContext) -> None:
        if not self.handling.log_enable:
            return
        # The trace is a traceback and keeps its lines; the message's parts are escaped.
        self.log.error("%s\n" + ctx.trace.rstrip().replace("%", "%%"), self.message(ctx))
        self.counters.add(total_errors_logged=1)


def context_headers(ctx: ErrorContext, connector: str, task: int) -> list[tuple[str, bytes]]:
    """Kafka's __connect.errors.* headers for a DLQ record, values as UTF-8 strings."""
    m = ctx.original
    values = [
        ("topic", m.topic if m is not None else ""),
        ("partition", str(m.partition if m is not None else -1)),
        ("offset", str(m.offset if m is not None else -1)),
        ("connector.name", connector),
        ("task.id", str(task)),
        ("stage", ctx.stage),
        ("class.name", ctx.class_name),
        ("exception.class.name", ctx.exception_class),
        ("exception.message", ctx.message),
        ("exception.stacktrace", ctx.trace),
    ]
    return [(HEADER_PREFIX + name, value.encode("utf-8")) for name, value in values]


class DeadLetterQueueReporter:
    """Writes the original consumed bytes of a failed record to the DLQ topic (sinks only).

    ``setup`` creates the topic when missing (one partition, the configured replication
    factor) and the producer; ``report`` returns a Future completed by the producer's
    delivery callback, served by ``poll`` and ``flush`` on the task's thread.
    """

    def __init__(
        self,
        handling: ErrorHandling,
        connector: str,
        task: int,
        counters: ErrorCounters,
        producer_factory: Callable[[], Any],
        admin_factory: Callable[[], Any],
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    ) -> None:
        assert handling.dlq_topic
        self.topic: str = handling.dlq_topic
        self.handling = handling
        self.connector = connector
        self.task = task
        self.counters = counters
        self._producer_factory = producer_factory
        self._admin_factory = admin_factory
        self.log = log
        self.producer: Any = None

    def setup(self) -> None:
        """Create the topic if it does not exist, then the producer (Kafka's createAndSetup)."""
        try:
            with self._admin_factory() as admin:  # released at once, even on an error
                if self.topic not in admin.list_topics():
                    self.log.error(
                        "Topic %s doesn't exist. Will attempt to create topic.", self.topic
                    )
                    admin.create_topic(
                        self.topic, DLQ_PARTITIONS, self.handling.dlq_replication_factor
                    )
        except Exception as error:
            raise ConnectError(
                f"Could not initialize dead letter queue with topic={self.topic}"
            ) from error
        self.producer = self._producer_factory()

    def report(self, ctx: ErrorContext) -> Future[None]:
        future: Future[None] = Future()
        self.counters.add(deadletterqueue_produce_requests=1)
        m = ctx.original
        if m is None or self.producer is None:
            self.counters.add(deadletterqueue_produce_failures=1)
            future.set_result(None)
            return future
        headers = list(m.headers or [])
        if self.handling.dlq_context_headers:
            present = {key for key, _ in headers}
            for key, value in context_headers(ctx, self.connector, self.task):
                if key in present:
                    self.log.error("Header already contains the '%s' key.", key)
                else:
                    headers.append((key, value))

        def delivered(error: Any, metadata: Any) -> None:
            if error is None:
                future.set_result(None)
                return
            self.log.error("Could not produce message to dead letter queue. topic=%s", self.topic)
            self.counters.add(deadletterqueue_produce_failures=1)
            future.set_exception(error)

        try:
            self.producer.produce(
                self.topic,
                m.value,
                key=m.key,
                headers=headers or None,
                timestamp=m.timestamp if m.timestamp and m.timestamp > 0 else None,
                on_delivery=delivered,
            )
        except Exception as error:  # e.g. too large, or the queue stayed full: as Kafka, a
            delivered(error, None)  # failed future, logged and counted; the task goes on
        return future

    def poll(self) -> None:
        if self.producer is not None:
            self.producer.poll(0)

    def flush(self, timeout: float) -> int:
        return int(self.producer.flush(timeout)) if self.producer is not None else 0

    def close(self) -> None:
        if self.producer is not None:
            self.producer.close()
            self.producer = None


Reporter = LogReporter | DeadLetterQueueReporter


class ErrorHandler:
    """The task-side half of Kafka's RetryWithToleranceOperator (retries run in the stage).

    Counts every error in ``counters``, reports it, and then skips it or raises
    ToleranceExceededError ("Tolerance exceeded in error handler", caused by the stage's
    exception, whose message names the stage, the class and the record's position)."""

    def __init__(
        self,
        handling: ErrorHandling,
        counters: ErrorCounters,
        reporters: Sequence[Reporter] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.handling = handling
        self.counters = counters
        self.reporters = list(reporters)
        self._clock = clock
        self._lock = threading.Lock()
        self.failed: BaseException | None = None
        """The error that exceeded the tolerance, once one did."""

    @property
    def dlq(self) -> DeadLetterQueueReporter | None:
        for reporter in self.reporters:
            if isinstance(reporter, DeadLetterQueueReporter):
                return reporter
        return None

    def _failure(self) -> None:
        self.counters.add(total_record_failures=1)
        self.counters.error_at(int(self._clock() * 1000))

    def _report(self, ctx: ErrorContext) -> Future[None]:
        done: Future[None] = Future()
        done.set_result(None)
        for reporter in self.reporters:
            result = reporter.report(ctx)
            if isinstance(result, Future):
                done = result
        return done

    def job_errors(
        self,
        errors: Sequence[RecordError],
        retries: int = 0,
        original: Callable[[int], Any] | None = None,
        source: Callable[[int], Any] | None = None,
    ) -> None:
        """Handle a stage's record errors (in input order); raises at the first intolerable.

        ``original(index)`` is the consumed message of a sink input, ``source(index)`` the
        polled record of a source input. An error not about one record (a component that
        could not be built) is never tolerated, as in Kafka, where it fails the task's start.
        """
        if retries:
            self.counters.add(total_retries=retries, total_record_failures=retries)
        for error in errors:
            if error.index is None:
                raise error.to_exception()
        for error in sorted(errors, key=lambda e: e.index or 0):
            assert error.index is not None
            with self._lock:
                self._failure()
                self.counters.add(total_record_errors=1)
                ctx = ErrorContext.of(
                    error,
                    original(error.index) if original is not None else None,
                    source(error.index) if source is not None else None,
                )
                self._report(ctx)
                if not self.handling.tolerance_all:
                    cause = error.to_exception()
                    cause.add_note(error.trace.rstrip())
                    self.failed = cause
                    raise ToleranceExceededError("Tolerance exceeded in error handler") from cause
                self.counters.add(total_records_skipped=1)

    def execute_failed(self, ctx: ErrorContext, error: BaseException) -> Future[None]:
        """A record a sink task reported (Kafka's executeFailed at stage TASK_PUT)."""
        with self._lock:
            self._failure()
            future = self._report(ctx)
            if not self.handling.tolerance_all:
                self.counters.add(total_record_errors=1)
                self.failed = error
                raise ToleranceExceededError("Tolerance exceeded in error handler") from error
            return future


class WorkerErrantRecordReporter(ErrantRecordReporter):
    """What ``SinkTaskContext.errant_record_reporter()`` returns (KIP-610).

    A reported record goes to the DLQ with its original consumed bytes when it is one of the
    batch being put (looked up by topic, partition and offset); otherwise, like Kafka, it is
    serialized again with the task's converters. ``await_all`` is called before offsets are
    committed, so a reported record is in the DLQ before its offset is.
    """

    def __init__(
        self,
        handler: ErrorHandler,
        find_original: Callable[[SinkRecord], Any],
        converters: Callable[[], tuple[Any, Any, Any]],
        task_class: str,
    ) -> None:
        self.handler = handler
        self._find_original = find_original
        self._converters = converters
        self._built: tuple[Any, Any, Any] | None = None
        self.task_class = task_class
        self._futures: list[Future[None]] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        original = self._find_original(record)
        if original is None:
            original = self._serialize(record)
        ctx = ErrorContext(
            TASK_PUT,
            self.task_class,
            _qualified(error),
            str(error),
            _trace(error),
            original,
        )
        future = self.handler.execute_failed(ctx, error)
        if not future.done():
            self._futures.append(future)
        return future

    def _serialize(self, record: SinkRecord) -> Any:
        """A consumed-message-like view of a record that is not one of the batch's."""
        if self._built is None:
            self._built = self._converters()
        key_conv, value_conv, header_conv = self._built
        topic = record.topic
        headers = [
            (h.key, header_conv.from_connect_header(topic, h.key, h.schema, h.value))
            for h in record.headers
        ]
        return ConsumedMessage(
            topic,
            record.kafka_partition,
            record.kafka_offset,
            key_conv.from_connect_data(topic, record.key_schema, record.key),
            value_conv.from_connect_data(topic, record.value_schema, record.value),
            headers,
            record.timestamp,
            record.timestamp_type,
        )

    def await_all(self, timeout: float) -> None:
        """Wait for every reported record's DLQ write; a failed one raises ConnectError."""
        futures, self._futures = self._futures, []
        for future in futures:
            try:
                future.result(timeout)
            except Exception as error:
                raise ConnectError(
                    "Encountered an error while awaiting an errant record future's completion."
                ) from error


def build_handler(
    handling: ErrorHandling,
    connector: str,
    task: int,
    counters: ErrorCounters,
    log: logging.Logger | logging.LoggerAdapter[logging.Logger],
    producer_factory: Callable[[], Any] | None = None,
    admin_factory: Callable[[], Any] | None = None,
) -> ErrorHandler:
    """The handler of one task: the log reporter, and a DLQ reporter when the sink has one."""
    reporters: list[Reporter] = [LogReporter(handling, f"{connector}-{task}", counters, log)]
    if handling.dlq_topic and producer_factory is not None and admin_factory is not None:
        reporters.append(
            DeadLetterQueueReporter(
                handling, connector, task, counters, producer_factory, admin_factory, log
            )
        )
    return ErrorHandler(handling, counters, reporters)


__all__ = [
    "DeadLetterQueueReporter",
    "ErrorContext",
    "ErrorHandler",
    "LogReporter",
    "ToleranceExceededError",
    "WorkerErrantRecordReporter",
    "build_handler",
    "context_headers",
]
