"""The task loops' batching: collect_batch's stops, and BatchPipeline's double buffering."""

from __future__ import annotations

import threading

import pytest

from connect_lite.runtime.batch_pipeline import Batching, BatchPipeline, collect_batch


def test_collect_batch_stops_when_a_fetch_returns_nothing_or_the_batch_is_full() -> None:
    polls = [[1, 2], [3], [], [4]]
    rooms: list[int] = []

    def fetch(room: int, _seconds_left: float) -> list[int]:
        rooms.append(room)
        return polls.pop(0)

    batch = collect_batch(fetch, Batching(max_records=10, max_wait_ms=60_000), lambda: False)
    assert batch == [1, 2, 3]
    assert rooms == [10, 8, 7]
    full = collect_batch(lambda room, _: [0] * room, Batching(3, 60_000), lambda: False)
    assert full == [0, 0, 0]


def test_collect_batch_fetches_once_past_the_deadline_and_not_when_stopping() -> None:
    calls: list[float] = []

    def fetch(_room: int, seconds_left: float) -> list[int]:
        calls.append(seconds_left)
        return [1]

    assert collect_batch(fetch, Batching(10, 0), lambda: False) == [1]
    assert len(calls) == 1 and calls[0] <= 0
    assert collect_batch(fetch, Batching(10, 60_000), lambda: True) == []
    assert len(calls) == 1


def test_the_next_batch_starts_before_the_previous_one_is_delivered_in_order() -> None:
    second_started = threading.Event()
    overlapped: list[bool] = []
    delivered: list[tuple[list[int], int]] = []

    def run(batch: list[int]) -> int:
        if batch == [2]:
            second_started.set()
        return sum(batch)

    def deliver(batch: list[int], result: int) -> None:
        if batch == [1, 1]:
            overlapped.append(second_started.wait(5))
        delivered.append((batch, result))

    pipeline = BatchPipeline("test", run, deliver)
    assert pipeline.advance([1, 1]) is False
    assert pipeline.advance([2]) is True
    assert overlapped == [True]
    assert pipeline.advance([]) is True  # nothing new to start; [2] is delivered
    assert pipeline.advance([]) is False
    pipeline.close()
    assert delivered == [([1, 1], 2), ([2], 2)]


def test_finish_delivers_drop_forgets_and_close_waits() -> None:
    delivered: list[list[int]] = []
    pipeline = BatchPipeline("test", sum, lambda b, _: delivered.append(b))
    pipeline.advance([1])
    pipeline.finish()
    pipeline.finish()
    assert delivered == [[1]]
    pipeline.advance([2])
    assert pipeline.drop() == [2]
    assert pipeline.drop() == []
    assert pipeline.advance([3]) is False
    pipeline.close()
    assert delivered == [[1]]


def test_a_failed_stage_raises_when_its_batch_is_delivered() -> None:
    def run(batch: list[int]) -> int:
        raise ValueError("stage failed")

    pipeline = BatchPipeline("test", run, lambda b, r: None)
    pipeline.advance([1])
    with pytest.raises(ValueError, match="stage failed"):
        pipeline.advance([])
    pipeline.close()
