"""The lake sink on the real SparkSession: batches in the put_dataframe shape become files
that hold each record exactly once, through rotation, schema changes and crashes."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv
import pyarrow.dataset
import pyarrow.json
import pyarrow.orc
import pyarrow.parquet as pq
import pytest

from connect_lite.api import ConnectError, RetriableError, SinkTaskContext, TopicPartition
from connect_lite.connectors.lake import sink, spark_io
from connect_lite.connectors.lake.errors import is_retriable
from connect_lite.connectors.lake.sink import LakeSinkTask
from connect_lite.connectors.lake.store import HadoopStore, LocalStore
from connect_lite.pipeline import SparkEngine

pytestmark = pytest.mark.integration

HEADERS = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))
HOUR_MS = 3_600_000
T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


class Crash(BaseException):
    """The process dies here (kill -9): nothing after it runs."""


class Context(SinkTaskContext):
    def __init__(self) -> None:
        self.offsets: dict[TopicPartition, int] = {}
        self.timeouts: list[int] = []

    def offset(self, tp_or_offsets: Any, offset: int | None = None) -> None:
        assert isinstance(tp_or_offsets, TopicPartition) and offset is not None
        self.offsets[tp_or_offsets] = offset

    def timeout(self, timeout_ms: int) -> None:
        self.timeouts.append(timeout_ms)

    def request_commit(self) -> None:
        pass


def frame(
    session: Any,
    topic: str,
    partition: int,
    offsets: list[int] | range,
    values: list[Any] | None = None,
    times: list[int | None] | None = None,
    schemaless: bool = False,
) -> Any:
    """A batch in the contract's shape; values default to {"id": offset, "name": "n<offset>"}.

    Schemaless: ``value`` is the JSON text and ``value_struct`` the inferred struct. Rows
    are reversed and spread over several Spark partitions, so order is Spark's to keep."""
    offsets = list(offsets)
    values = values if values is not None else [{"id": o, "name": f"n{o}"} for o in offsets]
    times = times if times is not None else [T0 + o for o in offsets]
    n = len(offsets)
    columns: dict[str, pa.Array] = {
        "topic": pa.array([topic] * n, pa.string()),
        "partition": pa.array([partition] * n, pa.int32()),
        "offset": pa.array(offsets, pa.int64()),
        "timestamp": pa.array(times, pa.timestamp("ms", tz="UTC")),
        "key": pa.array([None] * n, pa.string()),
    }
    if schemaless:
        columns["value"] = pa.array([json.dumps(v) for v in values], pa.string())
    else:
        columns["value"] = pa.array(values)
    columns["headers"] = pa.array([[]] * n, HEADERS)
    if schemaless:
        columns["value_struct"] = pa.array(values)
    table = pa.table(columns).take(list(reversed(range(n))))
    return session.createDataFrame(table).repartition(4)


def crash(*args: Any) -> bool:
    raise Crash


def start_task(root: Path, **props: str) -> tuple[LakeSinkTask, Context]:
    task = LakeSinkTask()
    task.context = context = Context()
    task.start({"name": "lake-it", "store.url": f"file://{root}", "flush.size": "3", **props})
    return task, context


def visible(root: Path, topics_dir: str = "topics") -> dict[str, list[dict[str, Any]]]:
    """Each visible Parquet file (path under the topics dir) and its rows."""
    base = root / topics_dir
    return {
        str(p.relative_to(base)): pq.read_table(p).to_pylist()
        for p in sorted(base.rglob("*.parquet"))
    }


def ids(files: dict[str, list[dict[str, Any]]]) -> list[int]:
    return sorted(row["id"] for rows in files.values() for row in rows)


@pytest.fixture(scope="module")
def session(engine: SparkEngine) -> Iterator[Any]:
    yield engine.session()


def test_struct_values_in_files_of_flush_size_exactly_once(session: Any, tmp_path: Path) -> None:
    task, context = start_task(tmp_path)
    tp0, tp1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
    task.open([tp0, tp1])
    batch = frame(session, "orders", 0, range(5)).unionByName(frame(session, "orders", 1, [7, 8]))
    task.put_dataframe(batch)
    second = frame(session, "orders", 0, range(5, 8))
    task.put_dataframe(second)
    task.put_dataframe(second)  # handed over again: nothing changes
    assert visible(tmp_path) == {
        "orders/partition=0/orders+0+0000000000+0000000002.parquet": [
            {"id": i, "name": f"n{i}"} for i in range(3)
        ],
        "orders/partition=0/orders+0+0000000003+0000000005.parquet": [
            {"id": i, "name": f"n{i}"} for i in range(3, 6)
        ],
    }
    assert task.pre_commit({tp0: 8, tp1: 9}) == {tp0: 6, tp1: 7}
    # readers of the topics directory, or of the whole store, never see the buffer area
    # (on disk its directory is named "staging", part of the store's layout)
    dataset = pyarrow.dataset.dataset(tmp_path, format="parquet")
    assert sorted(dataset.to_table().column("id").to_pylist()) == list(range(6))
    assert (tmp_path / "_connect-lite" / "lake-it" / "task-0" / "staging").is_dir()
    spark_ids = session.read.parquet(f"file://{tmp_path}/topics/orders").select("id").collect()
    assert sorted(r.id for r in spark_ids) == list(range(6))
    assert context.timeouts == []


def test_a_big_shuffled_batch_is_written_in_offset_order(session: Any, tmp_path: Path) -> None:
    task, _ = start_task(tmp_path, **{"flush.size": "1000"})
    task.open([TopicPartition("big", 0)])
    task.put_dataframe(frame(session, "big", 0, range(2500)))
    files = visible(tmp_path)
    assert list(files) == [
        "big/partition=0/big+0+0000000000+0000000999.parquet",
        "big/partition=0/big+0+0000001000+0000001999.parquet",
    ]
    for rows in files.values():
        got = [row["id"] for row in rows]
        assert got == sorted(got) and len(got) == 1000


def test_schemaless_values_and_schema_changes(session: Any, tmp_path: Path) -> None:
    task, _ = start_task(tmp_path, **{"flush.size": "10"})
    tp = TopicPartition("events", 0)
    task.open([tp])
    task.put_dataframe(frame(session, "events", 0, range(2), schemaless=True))
    wider = [{"id": o, "name": f"n{o}", "size": o * 10} for o in range(2, 4)]
    task.put_dataframe(frame(session, "events", 0, range(2, 4), wider, schemaless=True))
    # a batch whose values share no type: only the JSON text, one column "value"
    mixed = [1, "two"]
    task.put_dataframe(
        session.createDataFrame(
            pa.table(
                {
                    "topic": pa.array(["events"] * 2),
                    "partition": pa.array([0, 0], pa.int32()),
                    "offset": pa.array([4, 5], pa.int64()),
                    "timestamp": pa.array([T0, T0], pa.timestamp("ms", tz="UTC")),
                    "key": pa.array([None, None], pa.string()),
                    "value": pa.array([json.dumps(v) for v in mixed]),
                    "headers": pa.array([[], []], HEADERS),
                }
            )
        )
    )
    assert task.pre_commit({tp: 6}) == {tp: 4}
    files = visible(tmp_path)
    assert files == {
        "events/partition=0/events+0+0000000000+0000000001.parquet": [
            {"id": 0, "name": "n0"},
            {"id": 1, "name": "n1"},
        ],
        "events/partition=0/events+0+0000000002+0000000003.parquet": [
            {"id": 2, "name": "n2", "size": 20},
            {"id": 3, "name": "n3", "size": 30},
        ],
    }
    task.put_dataframe(frame(session, "events", 0, [6], schemaless=True))
    text = pq.read_table(
        tmp_path / "topics/events/partition=0/events+0+0000000004+0000000005.parquet"
    )
    assert text.column_names == ["value"] and text.column("value").to_pylist() == ["1", '"two"']


def test_field_partitioner_directories(session: Any, tmp_path: Path) -> None:
    props = {"partitioner.class": "FieldPartitioner", "partition.field.name": "region,kind"}
    task, _ = start_task(tmp_path, **{**props, "flush.size": "6"})
    task.open([TopicPartition("sales", 2)])
    regions = ["eu", "us", "eu", None, "a/b%:", "eu"]
    values = [{"id": o, "region": r, "kind": o % 2} for o, r in enumerate(regions)]
    task.put_dataframe(frame(session, "sales", 2, range(6), values))
    files = visible(tmp_path)
    assert {path: ids({path: rows}) for path, rows in files.items()} == {
        "sales/region=__HIVE_DEFAULT_PARTITION__/kind=1/sales+2+0000000003+0000000003.parquet": [3],
        "sales/region=a%2Fb%25%3A/kind=0/sales+2+0000000004+0000000004.parquet": [4],
        "sales/region=eu/kind=0/sales+2+0000000000+0000000002.parquet": [0, 2],
        "sales/region=eu/kind=1/sales+2+0000000005+0000000005.parquet": [5],
        "sales/region=us/kind=1/sales+2+0000000001+0000000001.parquet": [1],
    }
    # Hive-style readers get the values back from the directories
    back = session.read.parquet(f"file://{tmp_path}/topics/sales").collect()
    assert sorted((r.id, r.region) for r in back) == [
        (0, "eu"), (1, "us"), (2, "eu"), (3, None), (4, "a/b%:"), (5, "eu"),
    ]  # fmt: skip


def test_time_based_directories_and_record_time_rotation(session: Any, tmp_path: Path) -> None:
    props = {
        "partitioner.class": "TimeBasedPartitioner",
        "path.format": "'dt'=YYYY-MM-dd/'hour'=HH",
        "partition.duration.ms": str(HOUR_MS),
        "timestamp.extractor": "Record",
        "timezone": "Asia/Kolkata",  # +05:30: buckets are local hours
        "rotate.interval.ms": str(HOUR_MS),
        "flush.size": "100",
    }
    task, _ = start_task(tmp_path, **props)
    task.open([TopicPartition("clicks", 0)])
    base = datetime(2024, 3, 1, 18, 40, tzinfo=UTC)  # 00:10 on March 2nd in Kolkata
    times = [int(base.timestamp() * 1000) + m * 60_000 for m in (0, 10, 30, 59, 60, 61)]
    task.put_dataframe(frame(session, "clicks", 0, range(6), times=times))
    files = visible(tmp_path)
    # the record 60 minutes after the file's first one starts a new file
    assert {path: ids({path: rows}) for path, rows in files.items()} == {
        "clicks/dt=2024-03-02/hour=00/clicks+0+0000000000+0000000002.parquet": [0, 1, 2],
        "clicks/dt=2024-03-02/hour=01/clicks+0+0000000003+0000000003.parquet": [3],
    }


def test_daily_partitioner_with_a_record_field_time(session: Any, tmp_path: Path) -> None:
    props = {
        "partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner",
        "timestamp.extractor": "RecordField",
        "timestamp.field": "at",
        "flush.size": "2",
    }
    task, _ = start_task(tmp_path, **props)
    task.open([TopicPartition("logs", 0)])
    day = 86_400_000
    values = [{"id": 0, "at": 0}, {"id": 1, "at": day + 5}]
    task.put_dataframe(frame(session, "logs", 0, range(2), values, times=[None, None]))
    assert list(visible(tmp_path)) == [
        "logs/year=1970/month=01/day=01/logs+0+0000000000+0000000000.parquet",
        "logs/year=1970/month=01/day=02/logs+0+0000000001+0000000001.parquet",
    ]


@pytest.mark.parametrize(
    ("format_class", "read"),
    [
        ("json", lambda p: pyarrow.json.read_json(p).to_pylist()),
        ("CSV", lambda p: pyarrow.csv.read_csv(p).to_pylist()),
        (
            "io.confluent.connect.hdfs.orc.OrcFormat",
            lambda p: pyarrow.orc.read_table(p).to_pylist(),
        ),
    ],
)
def test_other_formats(session: Any, tmp_path: Path, format_class: str, read: Any) -> None:
    task, _ = start_task(tmp_path, **{"format.class": format_class})
    task.open([TopicPartition("t", 0)])
    task.put_dataframe(frame(session, "t", 0, range(3)))
    files = sorted(p for p in (tmp_path / "topics").rglob("*") if p.is_file())
    extension = {"json": "json", "CSV": "csv"}.get(format_class, "orc")
    assert [p.name for p in files] == [f"t+0+0000000000+0000000002.{extension}"]
    assert read(files[0]) == [{"id": i, "name": f"n{i}"} for i in range(3)]


@pytest.mark.parametrize("crash_at_rename", [1, 2])
def test_a_crash_while_publishing_is_finished_by_the_next_task(
    session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at_rename: int
) -> None:
    """Crash after the journal is written: before the first rename, or between renames."""
    props = {"partitioner.class": "FieldPartitioner", "partition.field.name": "kind"}
    dead, _ = start_task(tmp_path, **props)
    tp = TopicPartition("jobs", 0)
    dead.open([tp])
    store = dead._committer.store  # type: ignore[union-attr]
    renames: list[str] = []
    real_rename = store.rename

    def rename(source: str, target: str) -> bool:
        renames.append(target)
        if len(renames) == crash_at_rename:
            raise Crash
        return real_rename(source, target)

    monkeypatch.setattr(store, "rename", rename)
    values = [{"id": o, "kind": "ab"[o % 2]} for o in range(4)]
    with pytest.raises(Crash):
        dead.put_dataframe(frame(session, "jobs", 0, range(4), values))
    assert len(visible(tmp_path)) == crash_at_rename - 1

    task, context = start_task(tmp_path, **props)
    task.open([tp])
    assert context.offsets == {tp: 3}
    assert {p: ids({p: r}) for p, r in visible(tmp_path).items()} == {
        "jobs/kind=a/jobs+0+0000000000+0000000002.parquet": [0, 2],
        "jobs/kind=b/jobs+0+0000000001+0000000001.parquet": [1],
    }
    assert not any((tmp_path / "_connect-lite").rglob("*.parquet"))  # buffer and temps gone
    values = [{"id": o, "kind": "ab"[o % 2]} for o in range(3, 6)]
    task.put_dataframe(frame(session, "jobs", 0, range(3, 6), values))
    assert ids(visible(tmp_path)) == list(range(6))


def test_a_task_that_dies_with_buffered_records(session: Any, tmp_path: Path) -> None:
    dead, _ = start_task(tmp_path)
    tp = TopicPartition("orders", 0)
    dead.open([tp])
    dead.put_dataframe(frame(session, "orders", 0, range(5)))  # 3 in a file, 2 buffered
    task, context = start_task(tmp_path)
    task.open([tp])
    assert context.offsets == {tp: 3}
    assert not any((tmp_path / "_connect-lite").rglob("*.parquet"))
    task.put_dataframe(frame(session, "orders", 0, range(3, 6)))
    assert list(visible(tmp_path)) == [
        "orders/partition=0/orders+0+0000000000+0000000002.parquet",
        "orders/partition=0/orders+0+0000000003+0000000005.parquet",
    ]
    assert ids(visible(tmp_path)) == list(range(6))


def test_hadoop_store_operations(session: Any, tmp_path: Path) -> None:
    store = HadoopStore(f"file://{tmp_path}/", session)
    store.write_atomically("a/journal.json", b'{"x": 1}')
    assert store.read("a/journal.json") == b'{"x": 1}'
    (tmp_path / "a" / "f=x%2Fy").mkdir()
    (tmp_path / "a" / "f=x%2Fy" / "part-0").write_text("p")
    assert store.list_dir("a") == [("f=x%2Fy", True), ("journal.json", False)]
    assert store.list_files("a") == ["a/f=x%2Fy/part-0", "a/journal.json"]
    assert store.rename("a/f=x%2Fy/part-0", "b/c/final") and store.exists("b/c/final")
    assert store.rename("a/f=x%2Fy/part-0", "b/c/again") is False
    store.delete("a")
    assert not store.exists("a") and store.list_dir("missing") == []
    assert (tmp_path / "b" / "c" / "final").read_text() == "p"
    # a batch of another session (after the JVM died, a new one) gets a store of its own
    assert store.for_session(session) is store
    other = session.newSession()
    rebound = store.for_session(other)
    assert isinstance(rebound, HadoopStore) and rebound.session is other
    assert rebound.exists("b/c/final")


def test_a_task_on_a_hadoop_store_recovers_at_its_first_batch(
    session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hadoop FileSystem (here on file://) is reached only through a batch's session."""
    monkeypatch.setattr(
        sink, "open_store", lambda url, s: None if s is None else HadoopStore(url, s)
    )
    tp = TopicPartition("orders", 0)
    dead, _ = start_task(tmp_path)
    dead.open([tp])
    dead.put_dataframe(frame(session, "orders", 0, range(2)))
    store = dead._committer.store  # type: ignore[union-attr]
    assert isinstance(store, HadoopStore)
    monkeypatch.setattr(store, "rename", crash)
    with pytest.raises(Crash):  # the journal is written, no file is renamed yet
        dead.put_dataframe(frame(session, "orders", 0, range(2, 4)))
    assert visible(tmp_path) == {}

    task, context = start_task(tmp_path)
    task.open([tp])
    assert context.offsets == {} and task.pre_commit({tp: 0}) == {}
    task.put_dataframe(frame(session, "orders", 0, range(0, 5)))  # from the group's offset
    assert context.offsets == {}  # the consumer is past the visible files already
    assert ids(visible(tmp_path)) == [0, 1, 2]
    assert task.pre_commit({tp: 5}) == {tp: 3}
    task.put_dataframe(frame(session, "orders", 0, range(5, 6)))
    assert ids(visible(tmp_path)) == list(range(6))
    assert not isinstance(task._committer.store, LocalStore)  # type: ignore[union-attr]
    assert os.listdir(tmp_path / "_connect-lite" / "lake-it" / "task-0" / "tmp") == []


def test_which_spark_errors_are_retriable(session: Any, tmp_path: Path) -> None:
    """Real Spark errors: a cancelled job may pass (the worker cancels the task's jobs to
    stop it); a bad value, a bad setting or a missing path does not."""

    def error_of(action: Any) -> Exception:
        try:
            action()
        except Exception as error:
            return error
        raise AssertionError("no error")

    text = session.createDataFrame([("not a time",)], "v string")
    assert not is_retriable(error_of(lambda: text.selectExpr("CAST(v AS TIMESTAMP)").toArrow()))
    assert not is_retriable(
        error_of(
            lambda: text.selectExpr(
                "from_utc_timestamp(current_timestamp(), 'Nowhere/X')"
            ).toArrow()
        )
    )
    assert not is_retriable(error_of(lambda: HadoopStore("s3://bucket/lake", session)))
    assert not is_retriable(error_of(lambda: session.read.parquet(f"file://{tmp_path}/no").count()))

    context = session.sparkContext
    timer = threading.Timer(1.0, context.cancelJobGroup, ["lake-it-cancel"])
    context.setJobGroup("lake-it-cancel", "a job the test cancels", True)
    timer.start()
    try:
        sleep = "java_method('java.lang.Thread', 'sleep', 60000L)"
        assert is_retriable(error_of(lambda: session.range(1).selectExpr(sleep).collect()))
    finally:
        timer.cancel()
        context.setLocalProperty("spark.jobGroup.id", None)


def test_a_put_that_fails_for_good_leaves_nothing_buffered(
    session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task, context = start_task(tmp_path)
    tp = TopicPartition("orders", 0)
    task.open([tp])
    task.put_dataframe(frame(session, "orders", 0, range(2)))
    real_write = spark_io.write_files

    def denied(*args: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(spark_io, "write_files", denied)
    with pytest.raises(ConnectError, match=r"orders-0 offsets 0\.\.2 failed; no record") as raised:
        task.put_dataframe(frame(session, "orders", 0, range(2, 5)))
    assert not isinstance(raised.value, RetriableError) and context.timeouts == []
    buffered = sorted(p.name for p in (tmp_path / "_connect-lite").rglob("_tp=*"))
    assert buffered == ["_tp=orders+0"]  # the first put's records only
    monkeypatch.setattr(spark_io, "write_files", real_write)
    task.put_dataframe(frame(session, "orders", 0, range(5, 6)))  # the worker skipped 2..4
    assert ids(visible(tmp_path)) == [0, 1, 5]
    assert task.pre_commit({tp: 6}) == {tp: 6}
