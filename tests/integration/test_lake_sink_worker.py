"""LakeSink in a real worker: real broker, Spark and state file; files read back with pyarrow."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import create_running, unique

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "struct",
    "name": "Reading",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "place", "type": "string", "optional": True},
        {"field": "celsius", "type": "double", "optional": True},
        {"field": "ts", "type": "int64", "optional": False},
    ],
}
BASE_TS = int(dt.datetime(2026, 11, 24, 10, 0, tzinfo=dt.UTC).timestamp() * 1000)
FILE_NAME = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<first>\d{10})\+(?P<last>\d{10})\.")


def reading(i: int, schema: bool = True, ts_step_ms: int = 1000) -> str:
    payload = {"id": i, "place": f"p{i % 3}", "celsius": i / 10, "ts": BASE_TS + i * ts_step_ms}
    return json.dumps({"schema": SCHEMA, "payload": payload} if schema else payload)


def expected(i: int, ts_step_ms: int = 1000) -> dict[str, Any]:
    return {"id": i, "place": f"p{i % 3}", "celsius": i / 10, "ts": BASE_TS + i * ts_step_ms}


def lake_config(topic: str, store: Path, schemas: bool = True, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "LakeSink",
        "topics": topic,
        "tasks.max": "1",
        "store.url": store.as_uri(),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true" if schemas else "false",
        **extra,
    }


def start(worker: EmbeddedConnect, config: dict[str, str]) -> str:
    return create_running(worker, "lake", config)


def visible(root: Path) -> list[Path]:
    """Data files a reader sees: not hidden, not in a hidden directory."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    )


def rows_in(root: Path) -> list[dict[str, Any]]:
    files = [str(p) for p in visible(root) if p.suffix == ".parquet"]
    if not files:
        return []
    return ds.dataset(files, format="parquet").to_table().to_pylist()


def wait_rows(root: Path, count: int, timeout: float = 120) -> list[dict[str, Any]]:
    return wait_for(
        lambda: (rows := rows_in(root)) and len(rows) >= count and rows,
        timeout,
        interval=0.5,
        what=f"{count} rows in {root}",
    )


def test_json_with_and_without_schema_lands_as_exactly_the_records_sent(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    n = 10_000
    for schemas in (True, False):
        topic, store = unique("lake-json"), tmp_path / f"store-{schemas}"
        kafka.create_topic(topic, 1)
        kafka.produce(topic, [reading(i, schemas) for i in range(n)], partition=0)
        start(worker, lake_config(topic, store, schemas, **{"flush.size": "1000"}))
        root = store / "topics"
        rows = wait_rows(root, n)
        assert len(rows) == n
        assert sorted(rows, key=lambda r: r["id"]) == [expected(i) for i in range(n)]
        files = visible(root)
        assert len(files) == 10  # flush.size records per file
        for path in files:  # the name carries topic, partition, first and last offset
            found = FILE_NAME.match(path.name)
            assert found is not None, path
            assert found["topic"] == topic and found["partition"] == "0"
            assert path.parent == root / topic / "partition=0"
            ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
            assert ids == list(range(int(found["first"]), int(found["last"]) + 1))
            assert len(ids) == 1000


def test_each_partitioner_lays_out_its_directories(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    n = 30
    topic = unique("lake-parts")
    kafka.create_topic(topic, 2)
    kafka.produce(topic, [reading(i) for i in range(n // 2)], partition=0)
    kafka.produce(topic, [reading(i) for i in range(n // 2, n)], partition=1)
    schedule = {"flush.size": "1000", "rotate.schedule.interval.ms": "500"}
    layouts: dict[str, dict[str, str]] = {
        "default": {"partitioner.class": "DefaultPartitioner"},
        "field": {
            "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
            "partition.field.name": "place",
        },
        "time": {
            "partitioner.class": "TimeBasedPartitioner",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm",
            "partition.duration.ms": "60000",
            "timestamp.extractor": "RecordField",
            "timestamp.field": "ts",
            "locale": "en-GB",
            "timezone": "UTC",
        },
    }
    for kind, settings in layouts.items():
        start(worker, lake_config(topic, tmp_path / kind, **schedule, **settings))
    dirs = {}
    for kind in layouts:
        root = tmp_path / kind / "topics"
        rows = wait_rows(root, n)
        assert sorted(r["id"] for r in rows) == list(range(n))
        dirs[kind] = {str(p.parent.relative_to(root / topic)) for p in visible(root)}
    assert dirs["default"] == {"partition=0", "partition=1"}
    assert dirs["field"] == {"place=p0", "place=p1", "place=p2"}
    minutes = {(BASE_TS + i * 1000) // 60_000 * 60_000 for i in range(n)}
    assert dirs["time"] == {
        dt.datetime.fromtimestamp(m / 1000, dt.UTC).strftime(
            "year=%Y/month=%m/day=%d/hour=%H/minute=%M"
        )
        for m in minutes
    }
    for path in visible(tmp_path / "field" / "topics"):  # each file holds its directory's rows
        place = path.parent.name.split("=")[1]
        assert set(pq.read_table(path).column("place").to_pylist()) == {place}


def test_files_rotate_by_size_and_by_time(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    by_size, by_time, by_clock = unique("lake-size"), unique("lake-time"), unique("lake-clock")
    for topic in (by_size, by_time, by_clock):
        kafka.create_topic(topic, 1)
    kafka.produce(by_size, [reading(i) for i in range(250)], partition=0)
    # one record per 10 s of record time; a file spans at most a minute of it
    kafka.produce(by_time, [reading(i, ts_step_ms=10_000) for i in range(25)], partition=0)
    kafka.produce(by_clock, [reading(i) for i in range(5)], partition=0)
    start(worker, lake_config(by_size, tmp_path / "size", **{"flush.size": "100"}))
    start(
        worker,
        lake_config(
            by_time,
            tmp_path / "time",
            **{
                "flush.size": "1000",
                "rotate.interval.ms": "60000",
                "partitioner.class": "TimeBasedPartitioner",
                "path.format": "'day'=dd",
                "partition.duration.ms": "86400000",
                "timestamp.extractor": "RecordField",
                "timestamp.field": "ts",
            },
        ),
    )
    start(
        worker,
        lake_config(
            by_clock,
            tmp_path / "clock",
            **{"flush.size": "1000", "rotate.schedule.interval.ms": "1000"},
        ),
    )
    size_rows = wait_rows(tmp_path / "size" / "topics", 200)
    # 250 records, 100 per file: two files are complete; the last 50 wait for more
    sizes = [pq.ParquetFile(p).metadata.num_rows for p in visible(tmp_path / "size" / "topics")]
    assert sizes == [100, 100] and len(size_rows) == 200

    time_rows = wait_rows(tmp_path / "time" / "topics", 24)  # the last file is still open
    assert sorted(r["id"] for r in time_rows) == list(range(24))
    for path in visible(tmp_path / "time" / "topics"):
        stamps = pq.read_table(path).column("ts").to_pylist()
        assert max(stamps) - min(stamps) < 60_000 and len(stamps) == 6

    clock_rows = wait_rows(tmp_path / "clock" / "topics", 5)  # far below flush.size
    assert sorted(r["id"] for r in clock_rows) == list(range(5))


def test_a_kill_9_mid_stream_leaves_every_record_exactly_once(
    new_worker: Callable[..., EmbeddedConnect], kafka: KafkaHelpers, tmp_path: Path
) -> None:
    n = 40_000
    topic, store = unique("lake-kill"), tmp_path / "store"
    kafka.create_topic(topic, 2)
    kafka.produce(topic, [reading(i) for i in range(0, n, 2)], partition=0)
    kafka.produce(topic, [reading(i) for i in range(1, n, 2)], partition=1)
    config = lake_config(
        topic, store, **{"flush.size": "700", "rotate.schedule.interval.ms": "2000"}
    )
    config["consumer.override.max.poll.records"] = "3000"  # many batches, many files
    worker = new_worker().start()
    response = worker.http.post("/connectors", {"name": "lake", "config": config})
    assert response.status == 201, response.body
    root = store / "topics"
    wait_for(lambda: len(visible(root)) >= 3, 120, interval=0.05, what="the first files")
    worker.kill_worker()
    before = len(rows_in(root))
    assert before < n, "the stream finished before the kill; nothing was tested"
    worker.start_worker()  # again, on the same state file
    rows = wait_rows(root, n, timeout=300)
    worker.stop_worker()
    ids = Counter(r["id"] for r in rows)
    assert sorted(ids) == list(range(n))
    assert max(ids.values()) == 1, "a record is in the visible files twice"
