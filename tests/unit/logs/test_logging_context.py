"""The [connector|task-N] logging context: set where the worker runs plugin code, on any logger."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from connect_lite.api.connector import SourceConnector, SourceTask
from connect_lite.api.records import SourceRecord
from connect_lite.config.batching import Batching
from connect_lite.control.connector import WorkerConnector
from connect_lite.control.status import StatusReporter
from connect_lite.dataplane.source_task import WorkerSourceTask
from connect_lite.logs.context import (
    NO_CONTEXT,
    ContextFilter,
    LogContext,
    current,
    logging_context,
)
from connect_lite.logs.setup import KafkaFormatter
from connect_lite.pipeline.source_job import SourceBatchResult
from connect_lite.protocol.states import TargetState
from connect_lite.storage.memory import open_memory_stores
from connect_lite.testing import WaitTimeout, wait_for
from tests.unit.dataplane.fake_producer import RecordingProducer

plugin_log = logging.getLogger("my.plugin")


class Lines(logging.Handler):
    """Formats what reaches the root logger with Kafka's layout, through a ContextFilter."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.addFilter(ContextFilter())
        self.setFormatter(KafkaFormatter("%(levelname)s %(connector_context)s%(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def wait_logged(self, text: str, timeout: float = 10) -> str:
        """The first line holding ``text``, once one is logged."""
        try:
            return wait_for(
                lambda: next((line for line in list(self.lines) if text in line), None),
                timeout,
                0.01,
            )
        except WaitTimeout:
            raise AssertionError(f"{text!r} not logged: {self.lines}") from None


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_the_context_is_set_inside_the_block_only_and_shows_as_kafka_does() -> None:
    assert current() is NO_CONTEXT and str(NO_CONTEXT) == ""
    with logging_context("c"):
        assert str(current()) == "[c|worker] "
        with logging_context("c", 3) as task:
            assert current() is task and str(task) == "[c|task-3] "
        assert current() == LogContext("c")
    assert current() is NO_CONTEXT


def test_a_context_given_as_extra_wins_over_the_threads(lines: Lines) -> None:
    with logging_context("other", 1):
        plugin_log.info("mine", extra={"connector_context": LogContext("c", 0)})
    plugin_log.info("none")
    assert lines.lines == ["INFO [c|task-0] mine", "INFO none"]


class ChattySource(SourceTask):
    """Logs on its own logger in start, poll and stop; one record, then nothing."""

    def __init__(self) -> None:
        self.sent = False
        self.idle = threading.Event()

    def version(self) -> str:
        return "1.0"

    def start(self, config: dict[str, str]) -> None:
        plugin_log.info("starting with %s", sorted(config))

    def poll(self) -> list[SourceRecord] | None:
        if not self.sent:
            self.sent = True
            plugin_log.info("polled one")
            return [SourceRecord({"p": 0}, {"o": 1}, "t", "v")]
        self.idle.wait(0.01)
        return None

    def stop(self) -> None:
        plugin_log.warning("stopping")


class FakeJob:
    """Runs on the batch pipeline's own thread; logs there as a stage would."""

    def run(
        self, batch: list[SourceRecord], tolerate_errors: bool, send: object = None
    ) -> SourceBatchResult:
        logging.getLogger("my.stage").info("stage ran %d", len(batch))
        return SourceBatchResult(size=len(batch))

    def cancel(self) -> None:
        pass


def test_a_plugins_own_log_lines_carry_the_task_context_on_every_thread(lines: Lines) -> None:
    stores = open_memory_stores()
    status = StatusReporter(stores.statuses, "w")
    task = WorkerSourceTask(
        plugin=ChattySource(),
        task_config={"topic": "t"},
        job=FakeJob(),
        producer_factory=RecordingProducer,
        offsets=stores.offsets,
        flush_interval_ms=60_000,
        flush_timeout_ms=1_000,
        batching=Batching(max_records=10, max_wait_ms=10),
        connector="my-connector",
        task=0,
        status=status,
        target=TargetState.RUNNING,
    )
    try:
        task.start()  # its own thread, as the worker starts it
        lines.wait_logged("stage ran 1")  # on the batch pipeline's thread
        task.stop()  # from this thread, as the herder stops it: the plugin's stop runs here
        assert task.join(10)
        plugin_log.info("after")
    finally:
        status.close()
    assert lines.lines[:4] == [
        "INFO [my-connector|task-0] starting with ['topic']",
        "INFO [my-connector|task-0] Source task started",
        "INFO [my-connector|task-0] polled one",
        "INFO [my-connector|task-0] stage ran 1",
    ]
    assert "WARN [my-connector|task-0] stopping" in lines.lines
    assert "INFO [my-connector|task-0] Task stopped" in lines.lines
    assert lines.lines[-1] == "INFO after"
    assert not [line for line in lines.lines if line.count("[my-connector|") > 1]


class ChattyConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, config: dict[str, str]) -> None:
        plugin_log.info("connector starting")

    def task_class(self) -> type[Any]:
        return ChattySource

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        plugin_log.info("%d task configs", max_tasks)
        return [{}]

    def stop(self) -> None:
        raise RuntimeError("cannot stop")


class _Config:
    plugin_config: dict[str, str] = {}


def test_a_connectors_own_log_lines_carry_its_worker_context(lines: Lines) -> None:
    stores = open_memory_stores()
    status = StatusReporter(stores.statuses, "w")
    runner = WorkerConnector(
        "my-connector",
        ChattyConnector(),
        _Config(),  # type: ignore[arg-type]  # only plugin_config is read
        status,
        lambda _name: None,
    )
    try:
        runner.transition_to(TargetState.RUNNING)
        runner.task_configs(2)
        runner.shutdown()
    finally:
        status.close()
    assert [line.splitlines()[0] for line in lines.lines] == [
        "INFO [my-connector|worker] connector starting",
        "INFO [my-connector|worker] 2 task configs",
        "ERROR [my-connector|worker] Error while stopping connector",
    ]
    assert lines.lines[-1].endswith("RuntimeError: cannot stop")
