"""RangeConsumer: how a DataFrame sink's batches are planned as offset ranges (fake client)."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane import sink_ranges
from connect_lite.dataplane.sink_ranges import OPEN_RETRY_S, NoOffsetError, RangeConsumer
from connect_lite.pipeline.range_job import OffsetRange, merged, splits

TP = TopicPartition("t", 0)


class FakeClient:
    """A group consumer's surface: watermarks, committed offsets, a poll that returns nothing."""

    def __init__(self, committed: dict[TopicPartition, int], reset: str = "earliest") -> None:
        self.config = {"auto.offset.reset": reset}
        self.pause_assigned = False
        self.marks: dict[TopicPartition, tuple[int, int]] = {}
        self._committed = committed

    def committed(self, tps: Any) -> dict[TopicPartition, int]:
        return {tp: self._committed[tp] for tp in tps if tp in self._committed}

    def watermarks(self, tp: TopicPartition) -> tuple[int, int]:
        return self.marks.get(tp, (0, 0))

    def poll_batch(self, most: int, timeout: float) -> list[Any]:
        return []


def spans(ranges: list[OffsetRange]) -> list[tuple[int, int, bool]]:
    """Planned ranges as (start, end, open), of partition t-0."""
    assert all(r.tp == TP for r in ranges)
    return [(r.offset, r.end, r.open) for r in ranges]


def consumer(client: FakeClient) -> RangeConsumer:
    c = RangeConsumer(lambda: client, SinkSubscription(["t"], None), logging.getLogger("t"))  # type: ignore[arg-type,return-value]
    c.open()
    return c


def test_partitions_start_at_the_committed_offset_or_the_reset_policy() -> None:
    other = TopicPartition("t", 1)
    client = FakeClient({TP: 7})
    client.marks[other] = (3, 9)
    c = consumer(client)
    assert client.pause_assigned  # the group member itself fetches nothing
    c.assign([TP, other])
    assert c.starts([TP, other]) == {TP: 7, other: 3}
    latest = consumer(FakeClient({}, reset="latest"))
    latest.client.marks[TP] = (3, 9)  # type: ignore[union-attr]
    latest.assign([TP])
    assert latest.starts([TP]) == {TP: 9}


def test_ranges_run_from_the_cursor_to_the_watermark_capped_by_the_room() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 50)
    assert spans(c.fetch(20, 0)) == [(0, 20, False)]
    assert spans(c.fetch(100, 0)) == [(20, 50, False)]


def test_a_watermark_that_moved_but_is_not_past_the_cursor_gets_one_open_range() -> None:
    """Tansu's watermark is the last produce batch's first offset + 1: records may follow."""
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 1)
    assert spans(c.fetch(100, 0)) == [(0, 1, False)]
    assert spans(c.fetch(100, 0)) == [(1, 101, True)]
    assert spans(c.fetch(100, 0)) == []  # its end is not known yet: nothing more of it is planned
    c.settle(TP, 20, found=True)  # it held offsets 1..19: maybe more after them
    c.seek_rewinds()
    assert c.cursors[TP] == 20
    assert spans(c.fetch(100, 0)) == [(20, 120, True)]
    c.settle(TP, 20, found=False)  # nothing more: look again when the watermark moves
    c.seek_rewinds()
    assert spans(c.fetch(100, 0)) == []
    client.marks[TP] = (0, 21)  # a new batch at offset 20
    assert spans(c.fetch(100, 0)) == [(20, 21, False)]


def test_an_open_range_that_found_nothing_is_tried_again_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its reader may have waited too little on a busy machine."""
    client = FakeClient({TP: 5})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 5)
    assert spans(c.fetch(10, 0)) == [(5, 15, True)]
    c.settle(TP, 5, found=False)
    c.seek_rewinds()
    assert spans(c.fetch(10, 0)) == []
    later = time.monotonic() + OPEN_RETRY_S + 1
    monkeypatch.setattr(sink_ranges.time, "monotonic", lambda: later)
    assert spans(c.fetch(10, 0)) == [(5, 15, True)]


def test_paused_partitions_and_a_paused_task_plan_nothing_and_rewinds_move_the_cursor() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 10)
    c.pause([TP])
    assert spans(c.fetch(100, 0)) == []
    c.resume([TP])
    c.pause_all()
    assert spans(c.fetch(100, 0)) == []
    c.resume_all()
    assert spans(c.fetch(100, 0)) == [(0, 10, False)]
    c.read_again([OffsetRange("t", 0, 0, 10)])  # a dropped batch is read again
    assert c.seek_rewinds() == {TP: 0}
    assert spans(c.fetch(100, 0)) == [(0, 10, False)]


def test_a_cursor_below_the_log_start_follows_the_reset_policy() -> None:
    client = FakeClient({TP: 2})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (40, 60)
    assert spans(c.fetch(100, 0)) == [(40, 60, False)]


def test_revoked_partitions_are_forgotten() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 10)
    c.revoked([TP])
    assert spans(c.fetch(100, 0)) == []
    assert TP not in c.cursors


def test_a_batch_merges_its_ranges_and_splits_them_unless_order_matters() -> None:
    ranges = merged([OffsetRange("t", 0, 0, 30_000), OffsetRange("t", 0, 30_000, 50_000)])
    assert ranges == [OffsetRange("t", 0, 0, 50_000)]
    assert splits(ranges, ordered=True) == [(OffsetRange("t", 0, 0, 50_000), 0)]
    assert [(r.offset, r.end, n) for r, n in splits(ranges, ordered=False)] == [
        (0, 20_000, 0),
        (20_000, 40_000, 1),
        (40_000, 50_000, 2),
    ]
    open_range = merged([OffsetRange("t", 0, 0, 5), OffsetRange("t", 0, 5, 100, open=True)])
    assert open_range == [OffsetRange("t", 0, 0, 100, open=True)]
    assert splits(open_range, ordered=False) == [(open_range[0], 0)]


class AwayBroker(FakeClient):
    """A broker that does not answer until ``back`` is set."""

    back = False

    def committed(self, tps: Any) -> dict[TopicPartition, int]:
        if not self.back:
            raise ConnectError("timed out")
        return super().committed(tps)

    def watermarks(self, tp: TopicPartition) -> tuple[int, int]:
        if not self.back:
            raise ConnectError("timed out")
        return super().watermarks(tp)


def test_a_broker_away_plans_nothing_until_it_is_back() -> None:
    client = AwayBroker({TP: 4})
    c = consumer(client)
    c.assign([TP])  # inside the rebalance callback: no exception escapes
    assert c.starts([TP]) == {}
    client.marks[TP] = (0, 9)
    assert spans(c.fetch(100, 0)) == []
    client.back = True
    assert spans(c.fetch(100, 0)) == [(4, 9, False)]


def test_no_committed_offset_and_no_reset_policy_fails_as_kafka_does() -> None:
    c = consumer(FakeClient({}, reset="none"))
    with pytest.raises(NoOffsetError, match=r"auto\.offset\.reset=none"):
        c.assign([TP])


def test_a_range_planned_before_its_cursor_jumped_is_stale() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 50)
    (first,) = c.fetch(20, 0)
    (second,) = c.fetch(20, 0)  # planned behind the first, while the first is read
    assert c.is_current(first) and c.is_current(second)
    c.jump(TP, 12)  # the first was read up to 12 only
    assert not c.is_current(second)
    (again,) = c.fetch(20, 0)
    assert (again.offset, again.end) == (12, 32) and c.is_current(again)
    c.revoked([TP])
    assert not c.is_current(again)
