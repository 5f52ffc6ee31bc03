"""Retries, tolerance, the error log, DLQ records and the errant record reporter (no broker)."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest

from connect_lite.api.data import Header, Headers
from connect_lite.api.errors import DataError, RetriableError
from connect_lite.api.records import SinkRecord
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.error_handling import ErrorHandling
from connect_lite.dataplane.error_handling import (
    DeadLetterQueueReporter,
    ErrorContext,
    ErrorHandler,
    LogReporter,
    ToleranceExceededError,
    WorkerErrantRecordReporter,
    build_handler,
)
from connect_lite.pipeline.plugin_calls import Failures, apply_transforms, convert_column, retry_of
from connect_lite.pipeline.record_errors import (
    HEADER_CONVERTER,
    PREDICATE,
    VALUE_CONVERTER,
    RecordError,
    Retry,
    capture,
)
from connect_lite.protocol.task_metrics import ERROR_METRICS, ErrorCounters
from tests.fakes import FakeClock

log = logging.getLogger("test.errors")


def retry(timeout_ms: int, delay_max_ms: int = 60000, rand: float = 0.5) -> tuple[Retry, FakeClock]:
    clock = FakeClock(100.0)
    return Retry(timeout_ms, delay_max_ms, clock, clock.sleep, lambda: rand), clock


class Flaky:
    """Raises RetriableError ``fails`` times, then returns its argument upper-cased."""

    def __init__(self, fails: int, error: type[Exception] = RetriableError) -> None:
        self.fails = fails
        self.error = error
        self.calls = 0

    def __call__(self, value: str) -> str:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.error(f"attempt {self.calls} failed")
        return value.upper()


# -- the retry loop (errors.retry.timeout / errors.retry.delay.max.ms) ---------------------


def test_retries_back_off_from_300_ms_doubling() -> None:
    r, clock = retry(10_000)
    flaky = Flaky(3)
    with pytest.raises(RetriableError) as first:
        flaky("a")
    assert r.recover(first.value, flaky, "a") == "A"
    assert clock.sleeps == [0.3, 0.6, 1.2]
    assert r.retries == 3


def test_retries_stop_at_the_timeout_with_the_last_error() -> None:
    r, clock = retry(1000)
    flaky = Flaky(100)
    with pytest.raises(RetriableError, match="attempt 3 failed"):  # its 3rd call
        r.recover(RetriableError("first call failed"), flaky, "a")
    # 300 + 600 ms, then only the 100 ms left before the deadline
    assert clock.sleeps == [0.3, 0.6, 0.1]
    assert r.retries == 3


def test_a_delay_past_the_cap_is_random_below_the_cap() -> None:
    r, clock = retry(-1, delay_max_ms=1000, rand=0.25)
    assert r.recover(RetriableError("x"), Flaky(2), "a") == "A"  # 3 retries
    assert clock.sleeps == [0.3, 0.6, 0.25]  # 1200 ms > cap: random (0.25) * 1000 ms


def test_minus_one_retries_forever() -> None:
    r, clock = retry(-1, delay_max_ms=1000)
    assert r.recover(RetriableError("x"), Flaky(49), "a") == "A"  # 50 retries
    assert r.retries == 50 and clock.now > 100 + 20


def test_no_retry_when_disabled_or_not_retriable() -> None:
    r, clock = retry(0)
    with pytest.raises(RetriableError):
        r.recover(RetriableError("x"), Flaky(0), "a")
    r, clock = retry(10_000)
    with pytest.raises(DataError):
        r.recover(DataError("bad"), Flaky(0), "a")
    assert clock.sleeps == [] and r.retries == 0


@dataclass
class Spec:
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000


@dataclass
class Comps:
    spec: Spec = field(default_factory=Spec)


def test_retry_of_reads_the_job_spec_and_is_none_by_default() -> None:
    assert retry_of(Comps()) is None
    assert retry_of(object()) is None
    policy = retry_of(Comps(Spec(5000, 2000)))
    assert policy is not None and (policy.timeout_ms, policy.delay_max_ms) == (5000, 2000)


class FlakyConverter:
    """to_connect_data raises RetriableError on its first call for value b'flaky'."""

    def __init__(self) -> None:
        self.failed_once = False

    def to_connect_data(self, topic: str, value: bytes) -> str:
        if value == b"flaky" and not self.failed_once:
            self.failed_once = True
            raise RetriableError("try again")
        if value == b"bad":
            raise DataError("not convertible")
        return value.decode()


def test_a_converter_call_is_retried_and_its_neighbours_are_untouched() -> None:
    r, clock = retry(5000)
    failures = Failures(r)
    values = [b"a", b"flaky", b"bad", b"b"]
    out = convert_column(FlakyConverter(), VALUE_CONVERTER, (["t"] * 4, values), range(4), failures)
    assert out[0] == "a" and out[1] == "flaky" and out[3] == "b"
    assert list(failures) == [2] and failures[2].stage == VALUE_CONVERTER
    assert failures.retries == 1 and clock.sleeps == [0.3]


def test_without_retries_a_retriable_error_fails_the_record() -> None:
    failures = Failures()
    out = convert_column(
        FlakyConverter(), VALUE_CONVERTER, (["t"] * 2, [b"flaky", b"a"]), range(2), failures
    )
    assert list(failures) == [0] and out[1] == "a"
    assert failures[0].error_class == "RetriableError" and failures.retries == 0


class FlakyPredicate:
    def __init__(self) -> None:
        self.calls = 0

    def test(self, record: Any) -> bool:
        self.calls += 1
        if self.calls == 1:
            raise RetriableError("predicate store busy")
        return True


class Upper:
    def apply(self, record: str) -> str:
        return record.upper()


def test_a_predicate_is_retried_then_its_transform_runs() -> None:
    r, _ = retry(5000)
    failures = Failures(r)
    assert apply_transforms([(Upper(), FlakyPredicate(), False)], "x", 0, failures) == "X"
    assert not failures and failures.retries == 1
    failures = Failures()
    apply_transforms([(Upper(), FlakyPredicate(), False)], "x", 0, failures)
    assert failures[0].stage == PREDICATE


# -- tolerance, reporters, metrics ----------------------------------------------------------


@dataclass
class Message:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int | None = 1700000000000
    timestamp_type: str = "CreateTime"


class FakeProducer:
    """Queues produce calls; poll/flush deliver them (or fail them with ``error``)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.sent: list[dict[str, Any]] = []
        self.pending: list[Any] = []

    def produce(self, topic: str, value: Any, **kwargs: Any) -> None:
        self.sent.append({"topic": topic, "value": value, **kwargs})
        self.pending.append(kwargs["on_delivery"])

    def poll(self, timeout: float = 0) -> int:
        pending, self.pending = self.pending, []
        for callback in pending:
            callback(self.error, None if self.error else object())
        return len(pending)

    def flush(self, timeout: float) -> int:
        self.poll()
        return 0

    def close(self) -> None:
        pass


class FakeAdmin:
    def __init__(self, topics: set[str]) -> None:
        self.topics = topics
        self.created: list[tuple[str, int, int]] = []
        self.closed = False

    def __enter__(self) -> FakeAdmin:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.closed = True

    def list_topics(self) -> set[str]:
        return self.topics

    def create_topic(self, name: str, partitions: int, replication_factor: int) -> bool:
        self.created.append((name, partitions, replication_factor))
        return True


def stage_error(index: int, stage: str = VALUE_CONVERTER) -> RecordError:
    try:
        raise DataError(f"cannot convert record {index}")
    except DataError as e:
        return capture(
            e, index, stage, "org.example.Conv", f"topic='in', partition=0, offset={index}"
        )


def handler(
    tolerance_all: bool, producer: FakeProducer | None = None, **settings: Any
) -> tuple[ErrorHandler, ErrorCounters]:
    handling = ErrorHandling(
        tolerance_all=tolerance_all,
        dlq_topic="dlq" if producer is not None else None,
        dlq_context_headers=True,
        **settings,
    )
    counters = ErrorCounters()
    admin = FakeAdmin(set())
    h = build_handler(handling, "conn", 2, counters, log, lambda: producer, lambda: admin)
    if h.dlq is not None:
        h.dlq.setup()
        assert admin.created == [("dlq", 1, 3)] and admin.closed  # released once set up
    return h, counters


MESSAGES = [
    Message("in", 0, i, f"k{i}".encode(), f"v{i}".encode(), [("h", b"x")]) for i in range(5)
]


def test_tolerance_all_skips_counts_and_sends_the_original_bytes_to_the_dlq() -> None:
    producer = FakeProducer()
    h, counters = handler(True, producer)
    h.job_errors([stage_error(3), stage_error(1)], retries=2, original=MESSAGES.__getitem__)
    assert [s["key"] for s in producer.sent] == [b"k1", b"k3"]  # input order
    sent = producer.sent[0]
    assert sent["value"] == b"v1" and sent["timestamp"] == 1700000000000
    headers = dict(sent["headers"])
    assert sent["headers"][0] == ("h", b"x")  # the original headers come first
    assert headers["__connect.errors.topic"] == b"in"
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.connector.name"] == b"conn"
    assert headers["__connect.errors.task.id"] == b"2"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"] == b"org.example.Conv"
    assert headers["__connect.errors.exception.class.name"] == b"connect_lite.api.errors.DataError"
    assert headers["__connect.errors.exception.message"] == b"cannot convert record 1"
    assert b"Traceback" in headers["__connect.errors.exception.stacktrace"]
    producer.poll()
    snap = counters.snapshot()
    assert list(snap) == list(ERROR_METRICS)
    assert snap["total-record-failures"] == 4  # 2 records + 2 failed attempts retried
    assert snap["total-retries"] == 2
    assert snap["total-record-errors"] == 2
    assert snap["total-records-skipped"] == 2
    assert snap["deadletterqueue-produce-requests"] == 2
    assert snap["deadletterqueue-produce-failures"] == 0
    assert snap["last-error-timestamp"] > 0


def test_tolerance_none_reports_the_first_error_then_fails_naming_stage_and_record() -> None:
    producer = FakeProducer()
    h, counters = handler(False, producer)
    with pytest.raises(ToleranceExceededError, match="Tolerance exceeded in error handler") as e:
        h.job_errors([stage_error(4), stage_error(2)], original=MESSAGES.__getitem__)
    cause = e.value.__cause__
    assert isinstance(cause, DataError)
    assert "VALUE_CONVERTER" in str(cause) and "topic='in', partition=0, offset=2" in str(cause)
    assert [s["key"] for s in producer.sent] == [b"k2"]  # Kafka reports it before failing
    snap = counters.snapshot()
    assert (snap["total-record-errors"], snap["total-records-skipped"]) == (1, 0)


def test_a_component_that_cannot_be_built_is_never_tolerated() -> None:
    h, _ = handler(True)
    fatal = RecordError(None, VALUE_CONVERTER, "C", "E", "factory broke", "trace", "ConnectError")
    with pytest.raises(Exception, match="factory broke"):
        h.job_errors([fatal])


def test_dlq_failures_and_missing_originals_are_counted() -> None:
    producer = FakeProducer(error=RuntimeError("broker down"))
    h, counters = handler(True, producer)
    h.job_errors([stage_error(0)], original=MESSAGES.__getitem__)
    h.job_errors([stage_error(1)])  # no original message known
    producer.poll()
    snap = counters.snapshot()
    assert snap["deadletterqueue-produce-requests"] == 2
    assert snap["deadletterqueue-produce-failures"] == 2


class RefusingProducer(FakeProducer):
    """Refuses at produce time, as confluent-kafka does for a message that is too large."""

    def produce(self, topic: str, value: Any, **kwargs: Any) -> None:
        raise ValueError("Broker: Message size too large")


def test_a_refused_dlq_produce_is_counted_and_the_task_goes_on() -> None:
    producer = RefusingProducer()
    h, counters = handler(True, producer)
    h.job_errors([stage_error(0), stage_error(1)], original=MESSAGES.__getitem__)
    snap = counters.snapshot()
    assert snap["deadletterqueue-produce-requests"] == 2
    assert snap["deadletterqueue-produce-failures"] == 2
    assert snap["total-records-skipped"] == 2


def test_the_dlq_topic_is_not_created_when_it_exists() -> None:
    admin = FakeAdmin({"dlq"})
    reporter = DeadLetterQueueReporter(
        ErrorHandling(tolerance_all=True, dlq_topic="dlq", dlq_replication_factor=1),
        "conn",
        0,
        ErrorCounters(),
        FakeProducer,
        lambda: admin,
        log,
    )
    reporter.setup()
    assert admin.created == [] and reporter.producer is not None and admin.closed


def test_the_log_reporter_names_stage_task_and_with_messages_the_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counters = ErrorCounters()
    handling = ErrorHandling(log_enable=True, log_include_messages=True)
    reporter = LogReporter(handling, "conn-0", counters, log)
    ctx = ErrorContext.of(stage_error(1, HEADER_CONVERTER), MESSAGES[1])
    with caplog.at_level(logging.ERROR, "test.errors"):
        reporter.report(ctx)
    text = caplog.records[0].getMessage()
    assert text.startswith(
        "Error encountered in task conn-0. Executing stage 'HEADER_CONVERTER' with class "
        "'org.example.Conv', where consumed record is {topic='in', partition=0, offset=1, "
    )
    assert "key=b'k1', value=b'v1'" in text and "cannot convert record 1" in text
    assert caplog.records[0].levelno == logging.ERROR
    assert counters.snapshot()["total-errors-logged"] == 1
    quiet = LogReporter(ErrorHandling(log_enable=True), "conn-0", counters, log)
    assert "where" not in quiet.message(ctx)
    LogReporter(ErrorHandling(), "conn-0", counters, log).report(ctx)  # disabled: no line
    assert counters.snapshot()["total-errors-logged"] == 1


def test_predicate_errors_are_kafkas_transformation_stage() -> None:
    assert ErrorContext.of(stage_error(0, PREDICATE)).stage == "TRANSFORMATION"


class Converter:
    def from_connect_data(self, topic: str, schema: Any, value: Any) -> bytes:
        return f"<{value}>".encode()

    def from_connect_header(self, topic: str, key: str, schema: Any, value: Any) -> bytes:
        return f"[{value}]".encode()


def errant(tolerance_all: bool) -> tuple[WorkerErrantRecordReporter, FakeProducer, ErrorCounters]:
    producer = FakeProducer()
    h, counters = handler(tolerance_all, producer)
    known = {(m.topic, m.partition, m.offset): m for m in MESSAGES}

    def find(record: SinkRecord) -> Any:
        return known.get((record.topic, record.kafka_partition, record.kafka_offset))

    reporter = WorkerErrantRecordReporter(
        h, find, lambda: (Converter(), Converter(), Converter()), "acme.Sink"
    )
    return reporter, producer, counters


def test_errant_records_go_to_the_dlq_as_consumed_or_else_reconverted() -> None:
    reporter, producer, counters = errant(True)
    consumed = SinkRecord("in", 0, 3, "key", {"parsed": True})
    future = reporter.report(consumed, ValueError("no good"))
    assert isinstance(future, Future) and not future.done()
    made_up = SinkRecord("in", 0, 99, "k", "v", headers=Headers((Header("a", "b"),)))
    reporter.report(made_up, ValueError("also bad"))
    assert producer.sent[0]["value"] == b"v3" and producer.sent[0]["key"] == b"k3"
    assert producer.sent[1]["value"] == b"<v>" and producer.sent[1]["key"] == b"<k>"
    headers = dict(producer.sent[1]["headers"])
    assert headers["a"] == b"[b]"
    assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert headers["__connect.errors.class.name"] == b"acme.Sink"
    assert headers["__connect.errors.exception.class.name"] == b"builtins.ValueError"
    assert headers["__connect.errors.offset"] == b"99"
    producer.poll()
    reporter.await_all(1.0)
    assert future.done() and future.exception() is None
    snap = counters.snapshot()
    assert snap["total-record-failures"] == 2 and snap["deadletterqueue-produce-requests"] == 2


def test_an_errant_record_with_tolerance_none_fails_the_task_after_reporting() -> None:
    reporter, producer, _ = errant(False)
    with pytest.raises(ToleranceExceededError):
        reporter.report(SinkRecord("in", 0, 1, "k", "v"), ValueError("no good"))
    assert len(producer.sent) == 1
    assert reporter.handler.failed is not None


def test_the_errant_reporter_is_enabled_by_a_dlq_or_the_error_log() -> None:
    assert not ErrorHandling(tolerance_all=True).errant_record_reporter_enabled
    assert ErrorHandling(dlq_topic="dlq").errant_record_reporter_enabled
    assert ErrorHandling(log_enable=True).errant_record_reporter_enabled


def test_sources_never_get_a_dlq() -> None:
    config = {
        "name": "s",
        "connector.class": "X",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": "dlq",
    }
    assert ErrorHandling.from_config(ConnectorConfig(config, "source")).dlq_topic is None
    sink = ConnectorConfig({**config, "topics": "t"}, "sink")
    assert ErrorHandling.from_config(sink).dlq_topic == "dlq"
