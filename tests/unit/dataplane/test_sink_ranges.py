"""RangeConsumer: how a DataFrame sink's batches are planned as offset ranges (fake client)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.dataplane.sink_ranges import NoOffsetError, RangeConsumer
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
    assert c.fetch(20, 0) == [OffsetRange("t", 0, 0, 20)]
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 20, 50)]


def test_a_watermark_that_moved_but_is_not_past_the_cursor_gets_one_open_range() -> None:
    """Tansu's watermark is the last produce batch's first offset + 1: records may follow."""
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 1)
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 0, 1)]
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 1, 101, open=True)]
    assert c.fetch(100, 0) == []  # its end is not known yet: nothing more of it is planned
    c.settle(TP, 20, full=False)  # it held offsets 1..19
    c.seek_rewinds()
    assert c.cursors[TP] == 20
    assert c.fetch(100, 0) == []  # the watermark has not moved since
    client.marks[TP] = (0, 21)  # a new batch at offset 20
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 20, 21)]


def test_an_open_range_read_to_its_cap_is_followed_by_another() -> None:
    client = FakeClient({TP: 5})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 5)
    assert c.fetch(10, 0) == [OffsetRange("t", 0, 5, 15, open=True)]
    c.settle(TP, 15, full=True)
    c.seek_rewinds()
    assert c.fetch(10, 0) == [OffsetRange("t", 0, 15, 25, open=True)]


def test_paused_partitions_and_a_paused_task_plan_nothing_and_rewinds_move_the_cursor() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 10)
    c.pause([TP])
    assert c.fetch(100, 0) == []
    c.resume([TP])
    c.pause_all()
    assert c.fetch(100, 0) == []
    c.resume_all()
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 0, 10)]
    c.read_again([OffsetRange("t", 0, 0, 10)])  # a dropped batch is read again
    assert c.seek_rewinds() == {TP: 0}
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 0, 10)]


def test_a_cursor_below_the_log_start_follows_the_reset_policy() -> None:
    client = FakeClient({TP: 2})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (40, 60)
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 40, 60)]


def test_revoked_partitions_are_forgotten() -> None:
    client = FakeClient({TP: 0})
    c = consumer(client)
    c.assign([TP])
    client.marks[TP] = (0, 10)
    c.revoked([TP])
    assert c.fetch(100, 0) == []
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
    assert c.fetch(100, 0) == []
    client.back = True
    assert c.fetch(100, 0) == [OffsetRange("t", 0, 4, 9)]


def test_no_committed_offset_and_no_reset_policy_fails_as_kafka_does() -> None:
    c = consumer(FakeClient({}, reset="none"))
    with pytest.raises(NoOffsetError, match=r"auto\.offset\.reset=none"):
        c.assign([TP])
