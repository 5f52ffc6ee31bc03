"""Source offsets: only offsets of acknowledged records become committable, in order."""

from __future__ import annotations

from connect_lite.api.records import Partition, SourceRecord
from connect_lite.dataplane.source_offsets import StoreOffsetReader, SubmittedRecords, offsets_of
from connect_lite.storage.memory import open_memory_stores


def record(file: str, position: int) -> SourceRecord:
    return SourceRecord({"filename": file}, {"position": position}, "t", f"line {position}")


def test_offsets_of_keeps_the_last_offset_per_partition() -> None:
    batch = [record("a", 1), record("b", 7), record("a", 2), record("a", 3)]
    offsets = offsets_of(batch)
    assert {k: v[1] for k, v in offsets.items()} == {
        '{"filename":"a"}': {"position": 3},
        '{"filename":"b"}': {"position": 7},
    }
    assert offsets_of([SourceRecord(None, None, "t", "v")]) == {}


def test_a_batch_is_committable_only_when_all_its_records_were_acknowledged() -> None:
    submitted = SubmittedRecords()
    batch = submitted.submit(2, offsets_of([record("a", 1), record("a", 2)]))
    assert submitted.drain() == {}
    SubmittedRecords.ack(batch)
    assert submitted.drain() == {}
    SubmittedRecords.ack(batch)
    assert [o for _, o in submitted.drain().values()] == [{"position": 2}]
    assert submitted.drain() == {}


def test_a_later_batch_waits_for_an_earlier_one() -> None:
    submitted = SubmittedRecords()
    first = submitted.submit(1, offsets_of([record("a", 1)]))
    second = submitted.submit(1, offsets_of([record("a", 2)]))
    SubmittedRecords.ack(second)
    assert submitted.drain() == {}
    assert submitted.outstanding == 1
    SubmittedRecords.ack(first)
    assert [o for _, o in submitted.drain().values()] == [{"position": 2}]


def test_a_failed_batch_blocks_every_later_offset() -> None:
    submitted = SubmittedRecords()
    failed = submitted.submit(1, offsets_of([record("a", 1)]))
    failed.failed = True
    later = submitted.submit(1, offsets_of([record("a", 2)]))
    SubmittedRecords.ack(later)
    assert submitted.drain() == {}


def test_a_fully_filtered_batch_is_committable_at_once() -> None:
    submitted = SubmittedRecords()
    submitted.submit(0, offsets_of([record("a", 5)]))
    assert [o for _, o in submitted.drain().values()] == [{"position": 5}]


def test_reader_sees_committed_offsets_for_dict_or_partition() -> None:
    stores = open_memory_stores()
    stores.offsets.put_many("c", offsets_of([record("a", 9)]))
    reader = StoreOffsetReader(stores.offsets, "c")
    assert reader.offset({"filename": "a"}) == {"position": 9}
    assert reader.offset(Partition(filename="a")) == {"position": 9}
    assert reader.offset({"filename": "b"}) is None
    assert StoreOffsetReader(stores.offsets, "other").offset({"filename": "a"}) is None


def test_ack_all_completes_every_batch_that_did_not_fail() -> None:
    submitted = SubmittedRecords()
    submitted.submit(3, offsets_of([record("a", 1)]))
    submitted.submit(2, offsets_of([record("a", 2), record("b", 4)]))
    submitted.ack_all()
    assert {k: o for k, (_, o) in submitted.drain().items()} == {
        '{"filename":"a"}': {"position": 2},
        '{"filename":"b"}': {"position": 4},
    }
    failed = submitted.submit(1, offsets_of([record("a", 3)]))
    failed.failed = True
    submitted.ack_all()
    assert submitted.drain() == {}
