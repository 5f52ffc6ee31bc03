"""The task loops' batching: collect_batch's stops, and BatchPipeline's double buffering."""

from __future__ import annotations

import threading

import pytest

from connect_lite.config.batching import Batching
from connect_lite.dataplane.batch_pipeline import IN_FLIGHT_SLICE_S, BatchPipeline, collect_batch


def test_an_idle_task_waits_for_a_first_record_then_takes_only_what_is_waiting() -> None:
    polls = [[1, 2], [3], [], [4]]
    calls: list[tuple[int, float]] = []

    def fetch(room: int, wait: float) -> list[int]:
        calls.append((room, wait))
        return polls.pop(0)

    batch = collect_batch(fetch, Batching(max_records=10, max_wait_ms=500), lambda: False)
    assert batch == [1, 2, 3]  # it goes at the first fetch that finds nothing
    assert calls == [(10, 0.5), (8, 0.0), (7, 0.0)]  # only the first one may wait
    full = collect_batch(lambda room, _: [0] * room, Batching(3, 500), lambda: False)
    assert full == [0, 0, 0]


def test_a_batch_stops_growing_at_its_bytes_as_at_its_records() -> None:
    """Large records: the batch goes once it holds max_bytes, whatever its count."""
    fetched: list[int] = []

    def fetch(room: int, wait: float) -> list[bytes]:
        fetched.append(room)
        return [b"x" * 400] * 2

    batch = collect_batch(
        fetch,
        Batching(max_records=100, max_wait_ms=500, max_bytes=1000),
        lambda: False,
        weigh=lambda got: sum(map(len, got)),
    )
    assert len(batch) == 4, "800 bytes after the first fetch, 1,600 after the second: it goes"
    assert fetched == [100, 98]
    unweighed = collect_batch(
        lambda room, _: [b"x" * 400] * min(2, room),
        Batching(max_records=6, max_wait_ms=500, max_bytes=1000),
        lambda: False,
    )
    assert len(unweighed) == 6, "without weigh (records read by the executors): records only"


def test_message_and_record_bytes_weigh_keys_values_and_headers() -> None:
    from connect_lite.api.records import SourceRecord
    from connect_lite.config.batching import message_bytes, record_bytes
    from connect_lite.kafka.consumer import ConsumedMessage

    message = ConsumedMessage("t", 0, 5, b"key", b"value!", [("h", b"12"), ("n", None)], None, "")
    assert message_bytes([message, message._replace(key=None, headers=[])]) == 13 + 6
    records = [SourceRecord({}, {}, "t", "héllo", key=b"k"), SourceRecord({}, {}, "t", None)]
    assert record_bytes(records) == 6
    assert record_bytes([SourceRecord({}, {}, "t", {"a": 1})]) > 0, "a map counts its own size"


def test_a_lone_record_goes_at_once() -> None:
    polls: list[list[int]] = [[7]]
    batch = collect_batch(
        lambda _r, _w: polls.pop(0) if polls else [], Batching(10, 500), lambda: False
    )
    assert batch == [7]


def test_while_a_batch_is_in_its_job_the_next_grows_until_the_job_is_done() -> None:
    polls = [[1], [], [2, 3], [], [4], [9]]
    waits: list[float] = []
    busy_answers = iter([True, True, True, True, True, True, False])

    def fetch(_room: int, wait: float) -> list[int]:
        waits.append(wait)
        return polls.pop(0)

    batch = collect_batch(fetch, Batching(10, 500), lambda: False, lambda: next(busy_answers))
    assert batch == [1, 2, 3, 4, 9]  # empty fetches do not end it while the batch job runs
    assert waits == [IN_FLIGHT_SLICE_S] * 5 + [0.0]  # short waits; the last takes what waits


def test_a_finished_job_ends_the_batch_even_empty() -> None:
    busy_answers = iter([True, True, False])
    batch = collect_batch(
        lambda _r, _w: [], Batching(10, 500), lambda: False, lambda: next(busy_answers)
    )
    assert batch == []  # the loop goes round at once to hand the finished batch on


def test_a_stopping_task_fetches_nothing() -> None:
    calls: list[float] = []

    def fetch(_room: int, wait: float) -> list[int]:
        calls.append(wait)
        return [1]

    assert collect_batch(fetch, Batching(10, 500), lambda: True) == []
    assert calls == []


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


def test_a_failed_job_raises_when_its_batch_is_delivered() -> None:
    def run(batch: list[int]) -> int:
        raise ValueError("batch job failed")

    pipeline = BatchPipeline("test", run, lambda b, r: None)
    pipeline.advance([1])
    with pytest.raises(ValueError, match="batch job failed"):
        pipeline.advance([])
    pipeline.close()


def test_busy_is_true_only_while_a_batch_is_in_its_job() -> None:
    release = threading.Event()
    pipeline = BatchPipeline("test", lambda b: release.wait(5), lambda b, r: None)
    assert not pipeline.busy
    pipeline.advance([1])
    assert pipeline.busy
    release.set()
    pipeline._in_flight.result.result(5)  # type: ignore[union-attr]
    assert not pipeline.busy
    pipeline.close()
