"""FileStreamSinkConnector and FileStreamSinkTask, driven directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import (
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    Struct,
    TopicPartition,
)


def record(value: Any, offset: int = 0) -> SinkRecord:
    return SinkRecord("lines", 0, offset, None, value)


@pytest.fixture
def make_sink_task(sink_module: Any) -> Any:
    tasks: list[Any] = []

    def make(path: Path | None) -> Any:
        task = sink_module.FileStreamSinkTask()
        task.start({} if path is None else {"file": str(path)})
        tasks.append(task)
        return task

    yield make
    for task in tasks:
        task.stop()


def test_connector_config_and_versions(sink_module: Any) -> None:
    connector = sink_module.FileStreamSinkConnector()
    key = connector.config().keys["file"]
    assert key.default is None and not key.required
    assert connector.version() == sink_module.FileStreamSinkTask().version() == "1.0.0"
    assert connector.task_class() is sink_module.FileStreamSinkTask
    java = "org.apache.kafka.connect.file.FileStreamSink"
    assert sink_module.FileStreamSinkConnector.__connect_class_name__ == java + "Connector"
    assert sink_module.FileStreamSinkTask.__connect_class_name__ == java + "Task"


def test_one_task_config_per_max_tasks(sink_module: Any) -> None:
    connector = sink_module.FileStreamSinkConnector()
    connector.start(
        {"name": "sink", "connector.class": "FileStreamSink", "file": "out.txt", "topics": "a,b"}
    )
    configs = connector.task_configs(3)
    assert configs == [{"file": "out.txt", "topics": "a,b"}] * 3
    configs[0]["file"] = "changed"
    assert configs[1]["file"] == "out.txt"  # separate dicts


def test_alter_offsets_is_always_accepted(sink_module: Any) -> None:
    connector = sink_module.FileStreamSinkConnector()
    assert connector.alter_offsets({}, {TopicPartition("t", 0): 5, TopicPartition("t", 1): None})


def test_put_writes_lines_at_once_and_flush_persists(make_sink_task: Any, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("existing\n")
    task = make_sink_task(path)
    task.put([record("first", 0), record("second", 1)])
    assert path.read_text() == "existing\nfirst\nsecond\n"  # readable after put, no flush
    task.put([])
    task.put([record("third", 2)])
    task.flush({TopicPartition("lines", 0): 3})
    assert path.read_text() == "existing\nfirst\nsecond\nthird\n"  # before stop: flush did it


def test_values_are_written_as_java_prints_them(make_sink_task: Any, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT32_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    values = [
        None,
        True,
        42,
        1.5,
        "héllo",
        "caf\u00e9".encode(),
        b"\xff",
        {"k": 1},
        ["a", None],
        Struct(schema, {"id": 7, "name": "x"}),
        Struct(schema, {"id": 8}),
    ]
    task = make_sink_task(path)
    task.put([record(v, i) for i, v in enumerate(values)])
    task.flush({})
    assert path.read_text(encoding="utf-8").split("\n") == [
        "null",
        "true",
        "42",
        "1.5",
        "héllo",
        "café",
        "\ufffd",
        "{k=1}",
        "[a, null]",
        "Struct{id=7,name=x}",
        "Struct{id=8}",
        "",
    ]
    assert schema.type is SchemaType.STRUCT


def test_stop_closes_and_keeps_data(make_sink_task: Any, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = make_sink_task(path)
    task.put([record(f"v{i}", i) for i in range(10_000)])
    task.stop()
    assert path.read_text().splitlines() == [f"v{i}" for i in range(10_000)]


def test_without_file_writes_to_stdout(make_sink_task: Any, capsys: Any) -> None:
    task = make_sink_task(None)
    task.put([record("to"), record("stdout")])
    task.flush({})
    assert capsys.readouterr().out.endswith("to\nstdout\n")
