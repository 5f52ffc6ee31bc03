"""What the driver makes of a range batch's stage: gap-free ends, schema cuts, frames, errors."""

from __future__ import annotations

import pickle
from typing import Any

import pyarrow as pa

from connect_lite.api.records import TopicPartition
from connect_lite.kafka.consumer import ConsumedMessage
from connect_lite.pipeline.range_job import (
    ERRORS,
    READ,
    RECORDS,
    OffsetRange,
    RangeBatch,
    _read_facts,
    splits,
)
from connect_lite.pipeline.record_errors import RecordError

A, B, C = (TopicPartition("t", p) for p in range(3))


def read(tp: TopicPartition, split: int, start: int, last: int, count: int) -> dict[str, Any]:
    return {"kind": READ, "topic": tp.topic, "partition": tp.partition, "split": split,
            "first": start, "last": last, "count": count, "retries": 0}  # fmt: skip


def run(tp: TopicPartition, group: str, first: int, last: int, kind: type = int) -> dict[str, Any]:
    guessed = {"value": pa.int64() if kind is int else pa.string()}
    return {"kind": RECORDS, "topic": tp.topic, "partition": tp.partition, "split": 0,
            "first": first, "last": last, "count": last - first + 1, "group": group,
            "meta": pickle.dumps((None, None, guessed))}  # fmt: skip


def failed(tp: TopicPartition, offset: int) -> tuple[RecordError, ConsumedMessage]:
    message = ConsumedMessage(tp.topic, tp.partition, offset, None, b"x", [], None, "CreateTime")
    error = RecordError(0, "VALUE_CONVERTER", "c", "DataError", "bad", "trace")
    return error, message


def test_ends_stop_at_gaps_and_at_the_first_record_of_other_schemas() -> None:
    ranges = [OffsetRange("t", 0, 0, 40_000), OffsetRange("t", 1, 0, 10),
              OffsetRange("t", 2, 0, 10)]  # fmt: skip
    pieces = splits(ranges[:1], ordered=False) + splits(ranges[1:], ordered=True)
    facts = [
        read(A, 0, 0, 15_000, 15_000),  # the first piece stopped short: a gap after it
        read(A, 1, 20_000, 40_000, 20_000),
        run(A, "g1", 0, 14_999),
        run(A, "g1", 20_000, 39_999),  # after the gap: read again later
        read(B, 0, 0, 10, 10),
        run(B, "g1", 0, 4),
        run(B, "g2", 5, 9, str),  # other schemas: the batch ends there for B
        read(C, 0, 0, 10, 10),
        run(C, "g2", 0, 9, str),
        {"kind": ERRORS, "topic": "t", "partition": 1, "split": 0, "first": 7,
         "payload": pickle.dumps([failed(B, 7)])},
        {"kind": ERRORS, "topic": "t", "partition": 2, "split": 0, "first": 3,
         "payload": pickle.dumps([failed(C, 3)])},
    ]  # fmt: skip
    batch = RangeBatch(ranges)
    _read_facts(batch, None, {}, ranges, pieces, facts)  # type: ignore[arg-type]
    assert batch.next_offsets == {A: 15_000, B: 5, C: 10}
    assert batch.short == {A: 15_000, B: 5}
    assert batch.read == 15_000 + 20_000 + 10 + 10
    frames = {f.group: f for f in batch.frames}
    assert frames["g1"].limits == {A: 15_000, B: 5}
    assert frames["g1"].count == 15_000 + 5
    assert frames["g1"].struct_types == {"value": pa.int64()}
    assert frames["g2"].limits == {C: 10}
    assert frames["g2"].struct_types == {"value": pa.string()}
    # B's error at 7 is past B's end: it comes again with the next batch
    assert [(m.partition, m.offset) for m in batch.originals] == [(2, 3)]
    assert [e.index for e in batch.errors] == [0]
    batch.without({C})
    assert [f.group for f in batch.frames] == ["g1"]
    assert batch.originals == [] and batch.errors == []


def test_an_error_not_about_a_record_fails_the_batch() -> None:
    ranges = [OffsetRange("t", 0, 0, 10)]
    fatal = RecordError(None, "VALUE_CONVERTER", "c", "ConfigError", "cannot build", "trace")
    facts = [read(A, 0, 0, 10, 10),
             {"kind": ERRORS, "topic": "t", "partition": 0, "split": 0, "first": 0,
              "payload": pickle.dumps([(fatal, None)])}]  # fmt: skip
    try:
        _read_facts(RangeBatch(ranges), None, {}, ranges, splits(ranges, True), facts)  # type: ignore[arg-type]
    except Exception as error:
        assert "cannot build" in str(error)
    else:
        raise AssertionError("a component that cannot be built must fail the batch")


def test_open_ranges_say_whether_they_found_records() -> None:
    ranges = [OffsetRange("t", p, 0, 1000, open=True) for p in range(3)]
    facts = [read(A, 0, 0, 10, 10), run(A, "g1", 0, 4), run(A, "g2", 5, 9, str),
             read(B, 0, 0, 10, 10), run(B, "g1", 0, 9), read(C, 0, 0, 0, 0)]  # fmt: skip
    batch = RangeBatch(ranges)
    _read_facts(batch, None, {}, ranges, splits(ranges, True), facts)  # type: ignore[arg-type]
    assert batch.next_offsets == {A: 5, B: 10, C: 0}
    assert batch.opened == {A: True, B: True, C: False}  # found records: more may follow
    assert batch.short == {}
