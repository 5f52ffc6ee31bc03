"""The commit protocol, on a real local store with Spark's part faked (see conftest):
buffering, rotation, journals, crashes at every step, recovery and the offsets to commit."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import ConnectError, DataError, RetriableError, TopicPartition
from connect_lite.connectors.lake import spark_io
from connect_lite.connectors.lake.committer import Committer
from connect_lite.connectors.lake.config import LakeConfig
from connect_lite.connectors.lake.layout import Layout
from connect_lite.connectors.lake.rotation import BufferedPartition
from connect_lite.connectors.lake.store import LocalStore
from tests.fakes import FakeClock

from .conftest import FakeSpark, Row, plan, rows, visible_offsets

TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


class Crash(BaseException):
    """The process dies here (kill -9): nothing after it runs."""


def committer(
    tmp_path: Path, clock: FakeClock | None = None, task: int = 0, **props: str
) -> Committer:
    config = LakeConfig.parse({"store.url": f"file://{tmp_path}", "flush.size": "3", **props})
    layout = Layout(config.topics_dir, "lake", task)
    return Committer(config, layout, LocalStore(config.store_url), clock or FakeClock(1000.0))


def hidden_files(tmp_path: Path) -> list[str]:
    root = tmp_path / "_connect-lite"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def next_offsets(c: Committer) -> dict[TopicPartition, int]:
    """The next offset to accept of each partition that has one."""
    return {tp: s.next_offset for tp, s in c.partitions.items() if s.next_offset is not None}


def buffers(c: Committer) -> dict[TopicPartition, BufferedPartition]:
    """The buffer of each partition that has one (empty or not)."""
    return {tp: s.buffer for tp, s in c.partitions.items() if s.buffer is not None}


def buffered_pieces(tmp_path: Path) -> list[str]:
    """The partitions of the pieces in the buffer area, one entry per piece."""
    return [f.split("/")[-2] for f in hidden_files(tmp_path) if f.endswith("part-0.json")]


def test_files_of_flush_size_records_and_the_rest_stays_buffered(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    c = committer(tmp_path)
    ends = c.put(rows("orders", 0, range(5)) + rows("orders", 1, range(2)), plan(), None)
    assert ends == {TP0: 5, TP1: 2}
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2]
    }
    c.put(rows("orders", 0, range(5, 7)) + rows("orders", 1, range(2, 3)), plan(), None)
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2],
        "orders/partition=0/orders+0+0000000003+0000000005.parquet": [3, 4, 5],
        "orders/partition=1/orders+1+0000000000+0000000002.parquet": [0, 1, 2],
    }
    assert c.safe_offsets({TP0: 7, TP1: 3}) == {TP0: 6, TP1: 3}
    assert fake_spark.jobs == ["collect", "buffer", "write", "collect", "buffer", "write"]
    assert buffered_pieces(tmp_path) == ["_tp=orders+0"]  # the piece holding offset 6
    assert c.rounds == 2


def test_one_put_may_complete_several_files_and_directories(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    c = committer(
        tmp_path, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "a"}
    )
    batch = [Row("t", 0, o, dir=f"a={o % 2}") for o in range(7)]
    c.put(batch, plan(), None)
    assert visible_offsets(tmp_path) == {
        "t/a=0/t+0+0000000000+0000000002.parquet": [0, 2],
        "t/a=1/t+0+0000000001+0000000001.parquet": [1],
        "t/a=0/t+0+0000000004+0000000004.parquet": [4],
        "t/a=1/t+0+0000000003+0000000005.parquet": [3, 5],
    }
    assert fake_spark.jobs.count("write") == 1  # one job for every file of the round


def test_redelivered_and_rewound_records_are_skipped(tmp_path: Path, fake_spark: FakeSpark) -> None:
    c = committer(tmp_path)
    c.put(rows("orders", 0, range(4)), plan(), None)
    c.put(rows("orders", 0, range(4)), plan(), None)  # the same batch again
    c.put(rows("orders", 0, range(2, 6)), plan(), None)  # overlapping
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2],
        "orders/partition=0/orders+0+0000000003+0000000005.parquet": [3, 4, 5],
    }


def test_null_values_fail_by_default_and_can_be_ignored(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    strict = committer(tmp_path / "a")
    batch = [Row("t", 0, 0), Row("t", 0, 1, null=True), Row("t", 0, 2)]
    with pytest.raises(
        DataError,
        match=r"^The record at offset 1 of topic 't' partition 0 has a null value, and "
        r"behavior.on.null.values=fail: no record of the batch is written \(set behavior",
    ):
        strict.put(batch, plan(), None)
    assert fake_spark.jobs == ["collect"] and strict.safe_offsets({TP0: 3}) == {TP0: 3}
    lenient = committer(tmp_path / "b", **{"behavior.on.null.values": "ignore"})
    lenient.put([*batch, Row("t", 0, 3)], plan(), None)
    assert visible_offsets(tmp_path / "b") == {
        "t/partition=0/t+0+0000000000+0000000003.parquet": [0, 2, 3]
    }


def test_a_schema_change_commits_what_is_buffered_first(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    c = committer(tmp_path)
    c.put(rows("orders", 0, range(2)), plan("v1"), None)
    c.put(rows("orders", 0, range(2, 4)), plan("v2"), None)
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000001.parquet": [0, 1]
    }
    c.put(rows("orders", 0, range(4, 5)), plan("v2"), None)
    assert list(visible_offsets(tmp_path))[1] == (
        "orders/partition=0/orders+0+0000000002+0000000004.parquet"
    )


def test_scheduled_rotation_commits_what_waited(tmp_path: Path, fake_spark: FakeSpark) -> None:
    clock = FakeClock(100.0)
    c = committer(tmp_path, clock, **{"rotate.schedule.interval.ms": "5000"})
    c.put(rows("orders", 0, range(2)), plan(), None)
    clock.now = 104.9
    c.publish_scheduled(None)
    assert visible_offsets(tmp_path) == {}
    clock.now = 105.0
    c.put(rows("orders", 0, range(2, 3)), plan(), None)  # the new record starts a new file
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000001.parquet": [0, 1]
    }
    clock.now = 110.0
    c.publish_scheduled(None)
    assert len(visible_offsets(tmp_path)) == 2


def test_record_time_rotation(tmp_path: Path, fake_spark: FakeSpark) -> None:
    c = committer(tmp_path, **{"rotate.interval.ms": "1000", "flush.size": "100"})
    batch = [Row("t", 0, o, time=t) for o, t in enumerate([0, 400, 999, 1000, 1500, 2100])]
    c.put(batch, plan(), None)
    assert visible_offsets(tmp_path) == {
        "t/partition=0/t+0+0000000000+0000000002.parquet": [0, 1, 2],
        "t/partition=0/t+0+0000000003+0000000004.parquet": [3, 4],
    }


@pytest.mark.parametrize("crash_at_rename", [1, 2])
def test_a_crash_during_the_renames_is_rolled_forward_by_the_next_task(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch, crash_at_rename: int
) -> None:
    props = {"partitioner.class": "FieldPartitioner", "partition.field.name": "a"}
    dead = committer(tmp_path, **props)
    calls = []
    real_rename = dead.store.rename

    def rename(source: str, target: str) -> bool:
        calls.append(target)
        if len(calls) == crash_at_rename:
            raise Crash
        return real_rename(source, target)

    monkeypatch.setattr(dead.store, "rename", rename)
    with pytest.raises(Crash):
        dead.put([Row("t", 0, o, dir=f"a={o % 2}") for o in range(4)], plan(), None)
    assert len(visible_offsets(tmp_path)) == crash_at_rename - 1

    new = committer(tmp_path, **props)
    assert new.recover([TP0 := TopicPartition("t", 0)]) == {TP0: 3}
    assert visible_offsets(tmp_path) == {
        "t/a=0/t+0+0000000000+0000000002.parquet": [0, 2],
        "t/a=1/t+0+0000000001+0000000001.parquet": [1],
    }
    assert hidden_files(tmp_path) == []  # journal, temps and stale buffered pieces are gone
    new.put([Row("t", 0, o, dir=f"a={o % 2}") for o in range(3, 6)], plan(), None)
    everything = sorted(o for offsets in visible_offsets(tmp_path).values() for o in offsets)
    assert everything == [0, 1, 2, 3, 4, 5]


def test_buffered_records_of_a_dead_task_are_read_again(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    dead = committer(tmp_path)
    dead.put(rows("orders", 0, range(5)), plan(), None)  # 3 visible, 2 buffered
    new = committer(tmp_path)
    new.put(rows("orders", 1, range(1)), plan(), None)  # a partition this task keeps
    assert new.recover([TP0]) == {TP0: 3}
    assert buffered_pieces(tmp_path) == ["_tp=orders+1"]
    new.put(rows("orders", 0, range(3, 6)), plan(), None)
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2],
        "orders/partition=0/orders+0+0000000003+0000000005.parquet": [3, 4, 5],
    }


def test_recover_reads_last_offsets_of_every_directory_and_other_tasks_journals(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = committer(tmp_path, task=1)
    monkeypatch.setattr(other.store, "rename", _crash)
    with pytest.raises(Crash):
        other.put(rows("orders", 1, range(3)), plan(), None)
    topic = tmp_path / "topics" / "orders" / "x=1" / "y=2"
    topic.mkdir(parents=True)
    (topic / "orders+0+0000000010+0000000041.parquet").write_text("[]")
    (topic / "orders+0+0000000042+0000000049.json").write_text("[]")  # an older format.class
    (topic / "others+0+0000000000+0000000099.parquet").write_text("[]")
    (topic / "part-00000.parquet").write_text("[]")

    mine = committer(tmp_path, task=0)
    assert mine.recover([TP0, TP1, TopicPartition("orders", 2)]) == {TP0: 50, TP1: 3}
    assert "orders/partition=1/orders+1+0000000000+0000000002.parquet" in visible_offsets(tmp_path)


def _crash(source: str, target: str) -> bool:
    raise Crash


def test_a_failed_journal_write_leaves_the_round_undecided_until_settled(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path)
    real_write = c.store.write_atomically

    def fails_before(path: str, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "disk full")

    monkeypatch.setattr(c.store, "write_atomically", fails_before)
    with pytest.raises(OSError, match="disk full"):
        c.put(rows("orders", 0, range(3)), plan(), None)
    assert not c.settled and c.safe_offsets({TP0: 3}) == {TP0: 0}
    monkeypatch.setattr(c.store, "write_atomically", real_write)
    c.put(rows("orders", 0, range(3)), plan(), None)  # the worker hands the batch over again
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2]
    }
    assert c.settled and hidden_files(tmp_path) == []


def test_a_journal_written_despite_an_error_counts_as_committed(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path)
    real_write = c.store.write_atomically

    def fails_after(path: str, data: bytes) -> None:
        real_write(path, data)
        raise OSError(errno.ETIMEDOUT, "timeout")

    monkeypatch.setattr(c.store, "write_atomically", fails_after)
    with pytest.raises(OSError, match="timeout"):
        c.put(rows("orders", 0, range(3)), plan(), None)
    assert visible_offsets(tmp_path) == {}
    c.put(rows("orders", 0, range(3, 4)), plan(), None)  # settles first
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2]
    }
    assert c.safe_offsets({TP0: 4}) == {TP0: 3}


def test_a_failed_roll_forward_is_pending_until_the_store_works(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path)
    real_rename = c.store.rename
    failing = [True]

    def rename(source: str, target: str) -> bool:
        if failing[0]:
            raise OSError(errno.EHOSTUNREACH, "unreachable")
        return real_rename(source, target)

    monkeypatch.setattr(c.store, "rename", rename)
    c.put(rows("orders", 0, range(3)), plan(), None)  # committed: the journal was written
    assert not c.settled and c.safe_offsets({TP0: 3}) == {TP0: 3}
    with pytest.raises(RetriableError, match="finishing an earlier commit round failed"):
        c.put(rows("orders", 0, range(3, 4)), plan(), None)  # the round goes first
    with pytest.raises(OSError):
        c.settle()
    failing[0] = False
    c.settle()
    assert c.settled and list(visible_offsets(tmp_path)) == [
        "orders/partition=0/orders+0+0000000000+0000000002.parquet"
    ]


def test_forget_drops_buffered_records_and_their_pieces(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    c = committer(tmp_path)
    c.put(rows("orders", 0, range(2)) + rows("orders", 1, range(2)), plan(), None)
    c.forget([TP0])
    assert c.safe_offsets({TP0: 2, TP1: 2}) == {TP0: 2, TP1: 0}
    assert buffered_pieces(tmp_path) == ["_tp=orders+1"]
    c.forget([TP1])
    assert hidden_files(tmp_path) == []


def failing_writes(
    fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch, *errors: BaseException
) -> list[list[tuple[str, int, int, int]]]:
    """Make the next rounds' writes raise ``errors`` in turn (then write); returns the
    bounds each round asked for."""
    pending = list(errors)
    asked: list[list[tuple[str, int, int, int]]] = []
    real = fake_spark.write_files

    def write_files(session: Any, fmt: Any, pieces: Any, bounds: Any, *rest: Any) -> None:
        asked.append(list(bounds))
        if pending:
            raise pending.pop(0)
        real(session, fmt, pieces, bounds, *rest)

    monkeypatch.setattr(spark_io, "write_files", write_files)
    return asked


def test_a_put_that_fails_for_good_unbuffers_its_records(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker skips the records of a put that fails (errors.tolerance=all) or fails:
    they must not stay buffered, to be written later or to fail every later put."""
    c = committer(tmp_path)
    c.put(rows("orders", 0, range(2)), plan(), None)
    failing_writes(fake_spark, monkeypatch, PermissionError(errno.EACCES, "denied"))
    with pytest.raises(
        ConnectError,
        match=r"^Writing the files of orders-0 offsets 0..2 failed; no record of the batch is "
        r"written: \[Errno 13\] denied",
    ):
        c.put(rows("orders", 0, range(2, 5)), plan(), None)
    assert next_offsets(c) == {TP0: 2} and c.safe_offsets({TP0: 5}) == {TP0: 0}
    assert buffered_pieces(tmp_path) == ["_tp=orders+0"]  # the first put's piece only
    c.put(rows("orders", 0, range(5, 8)), plan(), None)  # the worker went on after 2..4
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000005.parquet": [0, 1, 5]
    }
    assert c.safe_offsets({TP0: 8}) == {TP0: 6} and c.settled


def test_a_run_retried_then_failing_for_good_unbuffers_what_every_attempt_buffered(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path)
    failing_writes(
        fake_spark,
        monkeypatch,
        OSError(errno.EIO, "flaky"),
        PermissionError(errno.EACCES, "denied"),
    )
    with pytest.raises(OSError, match="flaky"):  # retriable: the run stays buffered
        c.put(rows("orders", 0, range(4)), plan(), None)
    assert c.safe_offsets({TP0: 4}) == {TP0: 0} and buffered_pieces(tmp_path)
    with pytest.raises(ConnectError, match="denied"):  # the same records again
        c.put(rows("orders", 0, range(4)), plan(), None)
    assert next_offsets(c) == {} and buffers(c) == {} and hidden_files(tmp_path) == []
    c.put(rows("orders", 0, range(4, 7)), plan(), None)
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000004+0000000006.parquet": [4, 5, 6]
    }


def test_a_run_is_not_unbuffered_once_a_round_committed_records_of_it(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path)
    real_write = c.store.write_atomically

    def fails_after(path: str, data: bytes) -> None:
        real_write(path, data)
        raise PermissionError(errno.EACCES, "denied after writing")

    monkeypatch.setattr(c.store, "write_atomically", fails_after)
    with pytest.raises(RetriableError, match="committed already"):
        c.put(rows("orders", 0, range(3)), plan(), None)
    monkeypatch.setattr(c.store, "write_atomically", real_write)
    c.put(rows("orders", 0, range(3)), plan(), None)  # handed over again: skipped
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2]
    }


def test_earlier_records_that_cannot_be_written_are_read_again(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema change commits what was buffered before; if that fails for good, those
    records (of puts that returned) are read again, and committed by the put that reads
    them, so a failure is theirs: nothing poisons later puts."""
    c = committer(tmp_path, **{"flush.size": "10"})
    c.put(rows("orders", 0, range(2)), plan("v1"), None)
    asked = failing_writes(fake_spark, monkeypatch, PermissionError(errno.EACCES, "once"))
    c.put(rows("orders", 0, range(2, 4)) + rows("orders", 1, range(2)), plan("v2"), None)
    assert asked == [[("orders", 0, 0, 1)]]  # the schema change's round, which failed
    assert c.rewinds == {TP0: 0}  # the task rewinds the consumer
    # this put's records of orders-0 come again too, after 0..1; orders-1 is buffered
    assert next_offsets(c) == {TP0: 0, TP1: 2}
    assert c.safe_offsets({TP0: 4, TP1: 2}) == {TP0: 0, TP1: 0}
    c.put(rows("orders", 0, range(4, 6)), plan("v2"), None)  # the batch's rest: ahead
    assert TP0 not in buffers(c) and c.safe_offsets({TP0: 6}) == {TP0: 0}
    c.rewinds.clear()
    c.put(rows("orders", 0, range(2)), plan("v1"), None)  # read again: committed at once
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000001.parquet": [0, 1]
    }
    c.put(rows("orders", 0, range(2, 6)), plan("v2"), None)  # then as usual
    assert c.safe_offsets({TP0: 6}) == {TP0: 2} and len(visible_offsets(tmp_path)) == 1


def test_earlier_records_failing_again_fail_their_own_put(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = committer(tmp_path, **{"flush.size": "10"})
    c.put(rows("orders", 0, range(2)), plan("v1"), None)
    denied = [PermissionError(errno.EACCES, "poison")] * 2
    failing_writes(fake_spark, monkeypatch, *denied)
    c.put(rows("orders", 0, range(2, 4)), plan("v2"), None)  # 0..1 fail: read again
    with pytest.raises(ConnectError, match=r"orders-0 offsets 0..1 failed; no record of"):
        c.put(rows("orders", 0, range(2)), plan("v1"), None)  # read again: theirs to fail
    c.put(rows("orders", 0, range(2, 4)), plan("v2"), None)  # the worker skipped 0..1
    c.put(rows("orders", 0, range(4, 12)), plan("v2"), None)
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000002+0000000011.parquet": list(range(2, 12))
    }


def test_a_partition_rewound_is_read_again_when_the_worker_is_there(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records read again may start later than the first one buffered (a transform drops
    it now): the worker's position tells that the rewind took place."""
    c = committer(tmp_path, **{"flush.size": "10"})
    c.put(rows("orders", 0, range(2)), plan("v1"), None)
    failing_writes(fake_spark, monkeypatch, PermissionError(errno.EACCES, "once"))
    c.put(rows("orders", 0, range(2, 4)), plan("v2"), None)
    c.seen_positions({TP0: 4})  # not rewound yet
    c.put(rows("orders", 0, [2, 3]), plan("v2"), None)
    assert TP0 not in buffers(c)
    c.seen_positions({TP0: 0})  # rewound
    c.put(rows("orders", 0, [2, 3]), plan("v2"), None)  # 0..1 are dropped now
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000002+0000000003.parquet": [2, 3]
    }


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        (
            [Row("t", 0, 0, null=True)],
            "The record at offset 0 of topic 't' partition 0 has a null value",
        ),
        (
            [Row("t", 0, 0), Row("t", 0, 1, dir=None)],  # type: ignore[arg-type]
            "The record at offset 1 of topic 't' partition 0 has no time for the time-based "
            "partitioner (timestamp.extractor=RecordField and the value's field 'at' is null "
            "or not a time): no record of the batch is written",
        ),
    ],
)
def test_a_bad_record_fails_the_put_before_anything_is_buffered(
    tmp_path: Path, fake_spark: FakeSpark, batch: list[Row], message: str
) -> None:
    c = committer(
        tmp_path,
        **{
            "partitioner.class": "DailyPartitioner",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "at",
        },
    )
    with pytest.raises(DataError) as raised:
        c.put(batch, plan(), None)
    assert str(raised.value).startswith(message)
    assert fake_spark.jobs == ["collect"] and buffers(c) == {} and next_offsets(c) == {}


def test_records_of_a_partition_not_assigned_are_refused_before_anything_is_buffered(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    """A transform renamed the topic: offsets would be tracked under a partition the
    worker never asks about, and the consumed one committed past buffered records."""
    c = committer(tmp_path)
    with pytest.raises(
        ConnectError,
        match=r"^LakeSink writes records under their consumed topic and partition; records of "
        r"topic 'lake_orders' partition 0 \(offsets 0..4\) are not of a partition this task "
        r"was assigned \(orders-0, orders-1\): a transform renamed the topic",
    ):
        c.put(rows("lake_orders", 0, range(5)), plan(), None, {TP0, TP1})
    with pytest.raises(ConnectError, match=r"partition 0 share offsets: a transform moved"):
        c.put(rows("orders", 0, [0, 1]) + rows("orders", 0, [1]), plan(), None, {TP0, TP1})
    assert fake_spark.jobs == ["collect", "collect"] and hidden_files(tmp_path) == []
    assert c.safe_offsets({TP0: 5}) == {TP0: 5}  # the worker skipped them, or failed
