"""A sink's batch size follows max.poll.records when the worker or the connector sets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.batching import DEFAULT_BATCHING, Batching
from connect_lite.control.worker import sink_batching
from connect_lite.protocol.plan import TaskPlan
from tests.unit.control.real_herder import herder_parts

WORKER = Batching(max_records=200_000, max_wait_ms=500)


def test_without_max_poll_records_the_worker_batch_size_holds() -> None:
    assert sink_batching(WORKER, {"group.id": "g"}) == WORKER


def test_max_poll_records_bounds_a_sink_batch() -> None:
    assert sink_batching(WORKER, {"max.poll.records": "500"}) == Batching(500, 500)


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_a_bad_max_poll_records_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ConnectError, match=f"Invalid value {bad} for configuration max.poll"):
        sink_batching(WORKER, {"max.poll.records": bad})


@pytest.mark.parametrize(
    ("worker_props", "override", "limit"),
    [
        ({}, {"consumer.override.max.poll.records": "5"}, 5),
        ({"consumer.max.poll.records": "7"}, {}, 7),
        ({"consumer.max.poll.records": "7"}, {"consumer.override.max.poll.records": "5"}, 5),
        ({}, {}, DEFAULT_BATCHING.max_records),
        ({"task.batch.max.records": "9"}, {}, 9),
        ({"task.batch.max.records": "9"}, {"consumer.override.max.poll.records": "5"}, 5),
    ],
)
def test_a_sink_tasks_plan_takes_max_poll_records_from_the_worker_or_the_connector(
    tmp_path: Path, worker_props: dict[str, str], override: dict[str, str], limit: int
) -> None:
    parts = herder_parts(worker_props)
    worker = parts.herder.worker
    del worker.start_task  # herder_parts records the calls: plan the task for real
    plans: list[TaskPlan] = []
    worker.tasks.start = plans.append  # type: ignore[method-assign]
    try:
        parts.herder.create_connector(
            "sink",
            {
                "connector.class": "RecordingSink",
                "topics": "t",
                "output.file": str(tmp_path / "out.jsonl"),
                **override,
            },
        )
    finally:
        parts.stop()
    [plan] = plans
    assert plan.batching.max_records == limit


def test_the_worker_bounds_every_tasks_batch_in_bytes() -> None:
    parts = herder_parts({"task.batch.max.bytes": "4096"})
    try:
        assert parts.herder.worker.batching == Batching(max_bytes=4096)
    finally:
        parts.stop()


@pytest.mark.parametrize("key", ["task.batch.max.records", "task.batch.max.bytes"])
def test_a_batch_bound_below_one_is_a_clear_error(key: str) -> None:
    from connect_lite.config.worker import WorkerConfig

    with pytest.raises(ConfigError, match=f"Invalid value 0 for configuration {key}"):
        WorkerConfig({"bootstrap.servers": "127.0.0.1:9092", key: "0"})
