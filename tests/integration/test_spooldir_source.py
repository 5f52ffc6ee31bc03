"""The SpoolDir sources against a real broker, Spark and worker, from jcustenborder's configs:
files dropped into a directory reach Kafka with his keys, values, offsets and headers; a file
is moved (or deleted) once its last offset is committed; a bad file goes to error.path; a
connector resumes after the last committed record."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import unique

pytestmark = pytest.mark.integration

CSV = "com.github.jcustenborder.kafka.connect.spooldir.SpoolDirCsvSourceConnector"
KEY_SCHEMA = {
    "name": "com.example.users.UserKey",
    "type": "STRUCT",
    "isOptional": False,
    "fieldSchemas": {"id": {"type": "INT64", "isOptional": False}},
}
VALUE_SCHEMA = {
    "name": "com.example.users.User",
    "type": "STRUCT",
    "isOptional": False,
    "fieldSchemas": {
        "id": {"type": "INT64", "isOptional": False},
        "first_name": {"type": "STRING", "isOptional": True},
        "active": {"type": "BOOLEAN", "isOptional": True},
        "last_login": {
            "name": "org.apache.kafka.connect.data.Timestamp",
            "type": "INT64",
            "version": 1,
            "isOptional": True,
        },
    },
}
JSON_CONVERTERS = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


def spool(tmp_path: Path) -> dict[str, Path]:
    dirs = {name: tmp_path / name for name in ("input", "finished", "error")}
    for path in dirs.values():
        path.mkdir()
    return dirs


def csv_config(topic: str, dirs: dict[str, Path], **extra: str) -> dict[str, str]:
    """A config as jcustenborder's CSVExample.properties writes it."""
    return {
        "connector.class": CSV,
        "tasks.max": "1",
        "topic": topic,
        "input.path": str(dirs["input"]),
        "finished.path": str(dirs["finished"]),
        "error.path": str(dirs["error"]),
        "input.file.pattern": r"^.*\.csv$",
        "csv.first.row.as.header": "true",
        "key.schema": json.dumps(KEY_SCHEMA),
        "value.schema": json.dumps(VALUE_SCHEMA),
        **JSON_CONVERTERS,
        **extra,
    }


def users(first: int, count: int) -> str:
    rows = ["id,first_name,last_login,active,ignored"]
    rows += [
        f'{n},"name {n}",2020-01-0{1 + n % 9}T10:00:0{n % 10},{n % 2 == 0},x'
        for n in range(first, first + count)
    ]
    return "\n".join(rows) + "\n"


def offsets(worker: EmbeddedConnect, name: str) -> list[dict[str, Any]]:
    return list(worker.client.offsets(name))


def test_csv_files_reach_kafka_as_jcustenborders_records_and_are_moved_once_committed(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    dirs, topic = spool(tmp_path), unique("spool-csv")
    kafka.create_topic(topic, 1)
    (dirs["input"] / "a.csv").write_text(users(1, 5))
    (dirs["input"] / "b.csv").write_text(users(6, 3))
    (dirs["input"] / "skip.txt").write_text("not matched\n")
    name = unique("spool-csv")
    worker.create_running(name, csv_config(topic, dirs, **{"batch.size": "2"}), tasks=1)
    got = kafka.consume(topic, count=8, timeout=90)
    keys = [json.loads(m.key or b"") for m in got]
    values = [json.loads(m.value or b"") for m in got]
    ids = [v["payload"]["id"] for v in values]
    # Files are read as many at a time as Spark has cores: each keeps its order.
    assert [n for n in ids if n <= 5] == [1, 2, 3, 4, 5] and [n for n in ids if n > 5] == [6, 7, 8]
    by_id = {v["payload"]["id"]: (k, v, m) for k, v, m in zip(keys, values, got, strict=True)}
    keys, values, got = (list(x) for x in zip(*(by_id[n] for n in sorted(by_id)), strict=True))
    assert keys[0]["payload"] == {"id": 1}
    assert keys[0]["schema"]["name"] == "com.example.users.UserKey"
    assert keys[0]["schema"]["optional"] is False
    schema = values[0]["schema"]
    assert schema["name"] == "com.example.users.User" and schema["optional"] is False
    fields = {f["field"]: f for f in schema["fields"]}
    assert fields["id"]["optional"] is False and fields["first_name"]["optional"] is True
    assert fields["last_login"]["name"] == "org.apache.kafka.connect.data.Timestamp"
    assert values[1]["payload"] == {
        "id": 2,
        "first_name": "name 2",
        "active": True,
        "last_login": 1578045602000,  # 2020-01-03T10:00:02Z in milliseconds
    }
    headers = dict(got[1].headers)
    assert headers["file.name"] == b"a.csv"
    assert headers["file.name.without.extension"] == b"a"
    assert headers["file.offset"] == b"2"
    assert headers["file.relative.path"] == b"a.csv"
    assert headers["file.path"] == str(dirs["input"] / "a.csv").encode()
    assert headers["file.parent.dir.name"] == b"input"
    assert headers["file.length"] == str(len(users(1, 5))).encode()
    assert [k for k, _ in got[1].headers] == [
        "file.name",
        "file.name.without.extension",
        "file.path",
        "file.parent.dir.name",
        "file.length",
        "file.offset",
        "file.last.modified",
        "file.relative.path",
    ]
    wait_for(
        lambda: (
            sorted(
                (o["partition"]["fileName"], o["offset"]["offset"]) for o in offsets(worker, name)
            )
            == [("a.csv", 5), ("b.csv", 3)]
        ),
        timeout=60,
        what="each file's last offset, committed",
    )
    wait_for(
        lambda: sorted(p.name for p in dirs["finished"].iterdir()) == ["a.csv", "b.csv"],
        timeout=60,
        what="both files moved to finished.path",
    )
    assert sorted(p.name for p in dirs["input"].iterdir()) == ["skip.txt"]  # no flags left
    worker.client.delete(name)


def test_a_bad_file_goes_to_error_path_and_halts_only_with_halt_on_error(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    dirs, topic = spool(tmp_path), unique("spool-bad")
    kafka.create_topic(topic, 1)
    (dirs["input"] / "1-bad.csv").write_text(users(1, 2) + "abc,x,,true,y\n")
    (dirs["input"] / "2-good.csv").write_text(users(10, 2))
    (dirs["input"] / "3-short.csv").write_text(users(20, 1) + "21,x\n")  # a field short
    name = unique("spool-bad")
    config = csv_config(topic, dirs, **{"halt.on.error": "false"})
    worker.create_running(name, config, tasks=1)
    got = kafka.consume(topic, count=2, timeout=90)
    assert [json.loads(m.value or b"")["payload"]["id"] for m in got] == [10, 11]
    assert kafka.consume(topic, timeout=3) == got  # nothing of the bad file
    assert sorted(p.name for p in dirs["error"].iterdir()) == ["1-bad.csv", "3-short.csv"]
    log = worker.log_text()
    assert (
        "Exception thrown while parsing data for 'id'. linenumber=3: Could not parse 'abc'" in log
    )
    assert "Malformed CSV record: 21,x" in log
    worker.client.delete(name)

    (dirs["input"] / "4-bad.csv").write_text(users(1, 1) + "2,x,never,true,y\n")
    halting = unique("spool-halt")
    worker.client.create(halting, csv_config(unique("spool-halt"), dirs))
    status = worker.wait_task_state(halting, 0, "FAILED", timeout=90)
    assert "Could not read" in status["trace"] and "4-bad.csv" in status["trace"]
    assert "Could not parse 'never' to 'java.util.Date'" in status["trace"]
    assert (dirs["error"] / "4-bad.csv").exists()
    worker.client.delete(halting)


def test_a_connector_resumes_after_the_last_committed_record(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    dirs, topic = spool(tmp_path), unique("spool-resume")
    kafka.create_topic(topic, 1)
    (dirs["input"] / "big.csv").write_text(users(1, 10))
    name = unique("spool-resume")
    config = csv_config(topic, dirs, **{"cleanup.policy": "DELETE"})
    worker.client.create(name, config, initial_state="STOPPED")
    worker.wait_state(name, "STOPPED")
    worker.client.alter_offsets(
        name, [{"partition": {"fileName": "big.csv"}, "offset": {"offset": 6}}]
    )
    worker.client.resume(name)
    got = kafka.consume(topic, count=4, timeout=90)
    assert [json.loads(m.value or b"")["payload"]["id"] for m in got] == [7, 8, 9, 10]
    wait_for(lambda: not (dirs["input"] / "big.csv").exists(), timeout=60, what="deleted")
    assert not list(dirs["finished"].iterdir())
    assert kafka.consume(topic, timeout=3) == got  # each record once
    worker.client.delete(name)


def test_json_lines_and_parquet_files(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    dirs, topic = spool(tmp_path), unique("spool-json")
    kafka.create_topic(topic, 1)
    value_schema = {
        "name": "Event",
        "type": "STRUCT",
        "fieldSchemas": {
            "id": {"type": "INT32"},
            "at": {"name": "org.apache.kafka.connect.data.Timestamp", "type": "INT64"},
            "tags": {"type": "ARRAY", "valueSchema": {"type": "STRING"}, "isOptional": True},
        },
    }
    lines = [
        {"id": 1, "at": "2021-05-01T00:00:00", "tags": ["a", "b"]},
        {"id": "2", "at": 1620000000000},
    ]
    (dirs["input"] / "e.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    name = unique("spool-json")
    config = {
        "connector.class": "SpoolDirJsonSourceConnector",
        "topic": topic,
        "input.path": str(dirs["input"]),
        "error.path": str(dirs["error"]),
        "cleanup.policy": "NONE",
        "input.file.pattern": r".*\.json",
        "key.schema": json.dumps({"type": "STRUCT", "fieldSchemas": {"id": {"type": "INT32"}}}),
        "value.schema": json.dumps(value_schema),
        "timestamp.mode": "FIELD",
        "timestamp.field": "at",
        **JSON_CONVERTERS,
    }
    worker.create_running(name, config, tasks=1)
    got = kafka.consume(topic, count=2, timeout=90)
    values = [json.loads(m.value or b"")["payload"] for m in got]
    assert values == [
        {"id": 1, "at": 1619827200000, "tags": ["a", "b"]},
        {"id": 2, "at": 1620000000000, "tags": None},
    ]
    assert [m.timestamp for m in got] == [1619827200000, 1620000000000]  # timestamp.field
    assert [dict(m.headers)["file.offset"] for m in got] == [b"0", b"1"]  # from 0, as his
    wait_for(
        lambda: (
            offsets(worker, name)
            == [{"partition": {"fileName": "e.json"}, "offset": {"offset": 1}}]
        ),
        timeout=60,
        what="the last offset committed",
    )
    assert (dirs["input"] / "e.json").exists()  # NONE keeps it, and it is not read again
    assert kafka.consume(topic, timeout=3) == got
    worker.client.delete(name)


def test_lines_from_a_tree_are_deleted_and_a_stale_flag_does_not_block_a_file(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    dirs, topic = spool(tmp_path), unique("spool-lines")
    kafka.create_topic(topic, 1)
    (dirs["input"] / "day1").mkdir()
    (dirs["input"] / "day1" / "log.txt").write_text("first\r\nsecond\n\nfourth")
    (dirs["input"] / "stale.txt").write_text("again\n")
    (dirs["input"] / "stale.txt.PROCESSING").write_text("")  # left by a worker killed
    name = unique("spool-lines")
    config = {
        "connector.class": "SpoolDirLineDelimitedSource",
        "topic": topic,
        "input.path": str(dirs["input"]),
        "error.path": str(dirs["error"]),
        "cleanup.policy": "DELETE",
        "input.path.walk.recursively": "true",
        "input.file.pattern": r".*\.txt",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    worker.create_running(name, config, tasks=1)
    got = kafka.consume(topic, count=5, timeout=90)
    assert [m.value for m in got] == [b"first", b"second", b"", b"fourth", b"again"]
    assert [dict(m.headers)["file.offset"] for m in got] == [b"1", b"2", b"3", b"4", b"1"]
    assert dict(got[0].headers)["file.relative.path"] == b"day1/log.txt"
    assert dict(got[0].headers)["file.parent.dir.name"] == b"day1"
    wait_for(lambda: not list(dirs["input"].iterdir()), timeout=60, what="files deleted")
    worker.client.delete(name)


def test_parquet_files_are_a_record_a_row(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    dirs, topic = spool(tmp_path), unique("spool-parquet")
    kafka.create_topic(topic, 1)
    table = pa.table({"id": [1, 2, 3], "name": ["a", None, "c"]})
    pq.write_table(table, dirs["input"] / "rows.parquet")
    name = unique("spool-parquet")
    config = {
        "connector.class": "SpoolDirParquetSource",
        "topic": topic,
        "input.path": str(dirs["input"]),
        "finished.path": str(dirs["finished"]),
        "error.path": str(dirs["error"]),
        "input.file.pattern": r".*\.parquet",
        **JSON_CONVERTERS,
    }
    worker.create_running(name, config, tasks=1)
    got = kafka.consume(topic, count=3, timeout=90)
    values = [json.loads(m.value or b"") for m in got]
    assert [v["payload"] for v in values] == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
        {"id": 3, "name": "c"},
    ]
    assert values[0]["schema"]["optional"] is False
    assert [m.key for m in got] == [None] * 3  # no key, no schema
    wait_for(lambda: (dirs["finished"] / "rows.parquet").exists(), timeout=60, what="moved")
    worker.client.delete(name)


def test_validate_names_each_key_at_fault_and_paths_stay_inside_the_allowed_ones(
    worker: EmbeddedConnect, tmp_path: Path
) -> None:
    dirs = spool(tmp_path)
    config = csv_config(
        "t", dirs, **{"name": "v", "csv.skip.lines": "2", "finished.path": "/etc/spool"}
    )
    answer = worker.http.put(
        "/connector-plugins/SpoolDirCsvSourceConnector/config/validate", config
    )
    assert answer.status == 200
    errors = {
        c["value"]["name"]: c["value"]["errors"]
        for c in answer.body["configs"]
        if c["value"]["errors"]
    }
    assert set(errors) == {"csv.skip.lines", "finished.path"}
    assert "csv.skip.lines=2 is not supported" in errors["csv.skip.lines"][0]
    assert "connector.allowed.paths" in " ".join(errors["finished.path"])


def test_kill_9_in_the_middle_of_a_file_resumes_after_its_last_committed_record(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    rows = 40_000
    dirs, topic = spool(tmp_path), unique("spool-kill")
    (dirs["input"] / "big.csv").write_text(users(1, rows))
    worker = new_worker().start()
    worker.kafka.create_topic(topic, 1)
    name = unique("spool-kill")
    worker.create_running(name, csv_config(topic, dirs, **{"batch.size": "250"}), tasks=1)

    def committed() -> int:
        found = offsets(worker, name)
        return int(found[0]["offset"]["offset"]) if found else 0

    wait_for(lambda: committed() > 0, timeout=90, what="some records committed")
    before = committed()
    worker.kill_worker()
    assert (dirs["input"] / "big.csv.PROCESSING").exists()  # the flag of a task that died
    worker.start_worker()
    wait_for(lambda: (dirs["finished"] / "big.csv").exists(), timeout=180, what="file moved")
    resumed = re.findall(r"big\.csv: \d+ record\(s\), after offset (\d+)", worker.log_text())
    assert len(resumed) == 1 and before <= int(resumed[0]) < rows, resumed
    after = int(resumed[0])
    got = worker.kafka.consume(topic, timeout=60, idle=3)
    ids = [json.loads(m.value or b"")["payload"]["id"] for m in got]
    assert sorted(set(ids)) == list(range(1, rows + 1))  # every record
    assert ids[-(rows - after) :] == list(range(after + 1, rows + 1))  # resumed after it
    assert worker.log_text().count("Removed the stale flag file") == 1
