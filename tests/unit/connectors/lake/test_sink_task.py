"""LakeSinkTask's contract with the worker: seeks on open, offsets in pre_commit, errors."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from connect_lite.api import ConnectError, DataError, RetriableError, TopicPartition
from connect_lite.connectors.lake import sink, spark_io
from connect_lite.connectors.lake.sink import LakeSinkTask
from connect_lite.connectors.lake.store import LocalStore
from tests.fakes import FakeClock

from .conftest import FakeContext, FakeFrame, FakeSpark, Row, rows, visible_offsets

TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def task(
    tmp_path: Path, clock: FakeClock | None = None, **props: str
) -> tuple[LakeSinkTask, FakeContext]:
    plugin = LakeSinkTask(clock or FakeClock(1000.0))
    plugin.context = context = FakeContext()
    config = {"name": "lake", "store.url": f"file://{tmp_path}", "flush.size": "3", **props}
    plugin.start(config)
    return plugin, context


def test_open_seeks_after_the_visible_files(tmp_path: Path, fake_spark: FakeSpark) -> None:
    first, _ = task(tmp_path)
    first.open([TP0, TP1])
    first.put_dataframe(FakeFrame(rows("orders", 0, range(4))))
    second, context = task(tmp_path)
    second.open([TP0, TP1])
    assert context.offsets == {TP0: 3}  # TP1 has no files: the group's offset stands


def test_pre_commit_holds_back_buffered_records_only(tmp_path: Path, fake_spark: FakeSpark) -> None:
    plugin, context = task(tmp_path)
    plugin.open([TP0, TP1])
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(4)) + rows("orders", 1, range(3))))
    assert context.commit_requests == 1
    assert plugin.pre_commit({TP0: 4, TP1: 3}) == {TP0: 3, TP1: 3}
    # records a transform dropped (5..9) advance a partition with nothing buffered
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(4, 6))))
    assert plugin.pre_commit({TP0: 10, TP1: 10}) == {TP0: 10, TP1: 10}


def test_scheduled_rotation_runs_in_pre_commit(tmp_path: Path, fake_spark: FakeSpark) -> None:
    clock = FakeClock(0.0)
    plugin, _ = task(tmp_path, clock, **{"rotate.schedule.interval.ms": "60000"})
    plugin.open([TP0])
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))
    assert plugin.pre_commit({TP0: 2}) == {TP0: 0}
    clock.now = 60.0
    assert plugin.pre_commit({TP0: 2}) == {TP0: 2}
    assert list(visible_offsets(tmp_path)) == [
        "orders/partition=0/orders+0+0000000000+0000000001.parquet"
    ]


def test_store_errors_are_retriable_with_the_backoff(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin, context = task(tmp_path, **{"retry.backoff.ms": "250"})
    plugin.open([TP0])

    def broken(*args: object) -> None:
        raise OSError(errno.ENOSPC, "no space left")

    monkeypatch.setattr(spark_io, "buffer_batch", broken)
    with pytest.raises(RetriableError, match="no space left"):
        plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))
    assert context.timeouts == [250]
    assert plugin.pre_commit({TP0: 2}) == {TP0: 2}  # nothing was buffered


def test_data_errors_are_not_retriable(tmp_path: Path, fake_spark: FakeSpark) -> None:
    plugin, context = task(tmp_path)
    plugin.open([TP0])
    with pytest.raises(DataError, match="null value"):
        plugin.put_dataframe(FakeFrame([Row("orders", 0, 0, null=True)]))
    assert context.timeouts == []


def test_a_store_known_only_with_a_session_recovers_at_the_first_batch(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a Hadoop store: open cannot reach it, the first put_dataframe does."""
    writer, _ = task(tmp_path)
    writer.open([TP0, TP1])
    writer.put_dataframe(FakeFrame(rows("orders", 0, range(7)) + rows("orders", 1, range(3))))

    monkeypatch.setattr(
        sink, "open_store", lambda url, session: None if session is None else LocalStore(url)
    )
    plugin, context = task(tmp_path)
    plugin.open([TP0, TP1])
    assert context.offsets == {} and plugin.pre_commit({TP0: 0, TP1: 0}) == {}
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))  # from the group's offset 0
    # offsets 0..1 are in files: skipped; the consumer jumps to 6 and TP1 to 3
    assert context.offsets == {TP0: 6, TP1: 3}
    assert plugin.pre_commit({TP0: 2, TP1: 0}) == {TP0: 2, TP1: 0}
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(6, 9))))
    everything = sorted(
        o for f, offs in visible_offsets(tmp_path).items() if "+0+" in f for o in offs
    )
    assert everything == list(range(9))


def test_close_forgets_and_a_reopen_recovers(tmp_path: Path, fake_spark: FakeSpark) -> None:
    plugin, context = task(tmp_path)
    plugin.open([TP0])
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(5))))
    plugin.close([TP0])
    assert plugin.pre_commit({TP0: 5}) == {}  # no longer this task's: it knows nothing of it
    plugin.open([TP0])
    assert context.offsets == {TP0: 3}
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(3, 6))))
    assert visible_offsets(tmp_path)[
        "orders/partition=0/orders+0+0000000003+0000000005.parquet"
    ] == [
        3,
        4,
        5,
    ]
    plugin.stop()


def test_records_renamed_by_a_transform_are_refused_and_never_buffered(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    """Buffered under lake_orders-0, the records were held back for no partition the worker
    commits: pre_commit({orders-0: 5}) returned 5 while no file held them."""
    plugin, context = task(tmp_path)
    context.assigned = {TP0}
    plugin.open([TP0])
    with pytest.raises(ConnectError, match=r"topic 'lake_orders' partition 0 \(offsets 0..4\)"):
        plugin.put_dataframe(FakeFrame(rows("lake_orders", 0, range(5))))
    assert context.timeouts == []  # not retriable: skipped with errors.tolerance=all, or fails
    assert fake_spark.jobs == ["collect"] and visible_offsets(tmp_path) == {}
    assert plugin.pre_commit({TP0: 5}) == {TP0: 5}  # nothing of orders-0 was written or held


def test_pre_commit_answers_only_for_partitions_opened(
    tmp_path: Path, fake_spark: FakeSpark
) -> None:
    plugin, _ = task(tmp_path)
    plugin.open([TP0])
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))
    assert plugin.pre_commit({TP0: 2, TP1: 7}) == {TP0: 0}  # TP1: nothing committed


def test_a_store_failure_for_good_is_not_retriable(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin, context = task(tmp_path)
    plugin.open([TP0])

    def denied(*args: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(spark_io, "buffer_batch", denied)
    with pytest.raises(PermissionError):
        plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))
    assert context.timeouts == []


def test_the_task_rewinds_partitions_whose_buffered_records_must_be_read_again(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin, context = task(tmp_path, **{"flush.size": "10"})
    plugin.open([TP0])
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2))))
    real = fake_spark.write_files
    calls = []

    def fails_once(*args: object) -> None:
        calls.append(args)
        if len(calls) == 1:
            raise PermissionError(errno.EACCES, "denied")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(spark_io, "write_files", fails_once)
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2, 4)), value_type="long"))
    assert context.offsets == {TP0: 0}
    assert plugin.pre_commit({TP0: 4}) == {TP0: 0}
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(4))))  # read again from 0
    assert visible_offsets(tmp_path) == {  # committed by the put that read them again
        "orders/partition=0/orders+0+0000000000+0000000003.parquet": [0, 1, 2, 3]
    }


class SessionStore(LocalStore):
    """A local store that, like a Hadoop store, belongs to one session."""

    def __init__(self, url: str, session: object) -> None:
        super().__init__(url)
        self.session = session

    def for_session(self, session: object) -> SessionStore:
        return self if session is self.session else SessionStore(self.root_url, session)


def test_a_new_session_gets_its_own_store(
    tmp_path: Path, fake_spark: FakeSpark, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM died and the worker rebuilt the batch on a new session: the store's
    FileSystem handle belonged to the old JVM."""
    monkeypatch.setattr(
        sink,
        "open_store",
        lambda url, session: None if session is None else SessionStore(url, session),
    )
    plugin, _ = task(tmp_path)
    plugin.open([TP0])
    first = FakeFrame(rows("orders", 0, range(2)))
    plugin.put_dataframe(first)
    store = plugin._committer.store  # type: ignore[union-attr]
    assert isinstance(store, SessionStore) and store.session is first.sparkSession
    plugin.put_dataframe(FakeFrame(rows("orders", 0, range(2, 3))))  # another session
    rebound = plugin._committer.store  # type: ignore[union-attr]
    assert isinstance(rebound, SessionStore) and rebound is not store
    assert visible_offsets(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [0, 1, 2]
    }
