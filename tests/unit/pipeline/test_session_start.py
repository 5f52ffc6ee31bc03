"""SparkEngine when the session cannot start: SparkStartError with the reason, logged at ERROR
with its cause, answered at once to every caller for a while, then tried again."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connect_lite.pipeline.session import SparkEngine, SparkStartError
from connect_lite.pipeline.session_start import RETRY_AFTER_S
from tests.fakes import FakeClock


class ScriptedRuntime(SparkEngine):
    """``_create`` raises the queued errors in turn, then returns a session object."""

    def __init__(self, errors: list[Exception], clock: FakeClock) -> None:
        super().__init__({"spark.master": "local[2]", "spark.driver.memory": "1"}, clock=clock)
        self.errors = errors
        self.creations = 0
        self.session_object: Any = object()
        self.fake_clock = clock

    def _create(self) -> Any:
        self.creations += 1
        self.fake_clock.now += 0.5  # a start takes time
        if self.errors:
            raise self.errors.pop(0)
        return self.session_object


GATEWAY = RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited.")
REASON = (
    "Spark failed to start: [JAVA_GATEWAY_EXITED] Java gateway process exited. Check the "
    "worker's spark.* keys (spark.driver.memory, spark.master); the JVM's own message, if it "
    "printed one, is in the worker's output just before."
)


def test_a_failed_start_raises_the_reason_and_logs_it_at_error_with_its_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = ScriptedRuntime([GATEWAY], FakeClock(100.0))
    session_log = caplog.at_level(logging.INFO, logger="connect_lite.pipeline.session")
    with session_log, pytest.raises(SparkStartError) as failed:
        engine.session()
    assert str(failed.value) == REASON
    assert failed.value.__cause__ is GATEWAY
    assert engine.start_error == REASON and not engine.is_started
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == [REASON]
    assert errors[0].exc_info is not None and errors[0].exc_info[1] is GATEWAY


def test_callers_get_the_failure_at_once_until_the_retry_delay_has_passed() -> None:
    clock = FakeClock(100.0)
    engine = ScriptedRuntime([GATEWAY], clock)
    with pytest.raises(SparkStartError):
        engine.session()
    clock.now += RETRY_AFTER_S - 1
    with pytest.raises(SparkStartError, match=r"^Spark failed to start") as again:
        engine.session()
    assert again.value.__cause__ is GATEWAY
    assert engine.creations == 1  # no second start: every task thread is answered at once
    clock.now += 1
    assert engine.session() is engine.session_object
    assert engine.creations == 2
    assert engine.start_error is None and engine.started_in == 0.5


def test_a_background_start_that_fails_is_kept_as_start_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = ScriptedRuntime([GATEWAY], FakeClock(100.0))
    engine.start_in_background().join(30)
    assert engine.start_error == REASON
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [REASON]


def test_the_reason_is_one_line_with_the_java_exception() -> None:
    java_trace = RuntimeError(
        "An error occurred while calling None.JavaSparkContext.\n"
        ": org.apache.spark.SparkException: Could not parse Master URL: 'bogus'\n"
        "\tat org.apache.spark.SparkContext$.createTaskScheduler(SparkContext.scala:3259)\n"
    )
    engine = ScriptedRuntime([java_trace], FakeClock(100.0))
    with pytest.raises(SparkStartError) as failed:
        engine.session()
    assert str(failed.value).startswith(
        "Spark failed to start: An error occurred while calling None.JavaSparkContext: "
        "org.apache.spark.SparkException: Could not parse Master URL: 'bogus'. Check "
    )


def test_a_successful_start_is_timed_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    engine = ScriptedRuntime([], FakeClock(100.0))
    with caplog.at_level(logging.INFO, logger="connect_lite.pipeline.session"):
        assert engine.session() is engine.session_object
    assert engine.started_in == 0.5 and engine.start_error is None
    assert "Spark session started in 0.5 s" in [r.getMessage() for r in caplog.records]
